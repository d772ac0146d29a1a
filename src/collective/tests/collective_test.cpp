// Collectives on host buffers: each algorithm reduces in its documented order (checked
// against a reference that adds in that order with the same rounding), results are the same
// on every rank and on every run, and bad buffers are clear errors.
#include "collective/collective.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "numerics/numerics.h"

namespace trnsim::collective {
namespace {

Buffer encode(DType dtype, const std::vector<float>& values) {
  Buffer b(values.size() * numerics::storage_bytes(dtype));
  numerics::encode_bytes(dtype, values, b);
  return b;
}

std::vector<float> decode(DType dtype, const Buffer& b) {
  std::vector<float> v(b.size() / numerics::storage_bytes(dtype));
  numerics::decode_bytes(dtype, b, v);
  return v;
}

float round_to(DType dtype, float x) {
  return numerics::decode(dtype, numerics::encode(dtype, x));
}

// x[r][i]: rank r's value of element i, spread over magnitudes so that the order of the
// additions changes the bf16 result.
std::vector<std::vector<float>> values(std::size_t ranks, std::size_t count) {
  std::vector<std::vector<float>> x(ranks, std::vector<float>(count));
  for (std::size_t r = 0; r < ranks; ++r)
    for (std::size_t i = 0; i < count; ++i)
      x[r][i] = std::ldexp(1.0f + 0.0078125f * static_cast<float>((r * 37 + i * 11) % 97),
                           static_cast<int>((r * 5 + i) % 9) - 4) *
                ((r + i) % 3 == 0 ? -1.0f : 1.0f);
  return x;
}

std::vector<Buffer> buffers(DType dtype, const std::vector<std::vector<float>>& x) {
  std::vector<Buffer> b;
  for (const auto& v : x) b.push_back(encode(dtype, v));
  return b;
}

TEST(Collective, RingAddsFromTheRankAfterTheOwnerRoundToTheOwner) {
  EXPECT_EQ(reduction_order(Algorithm::kRing, 4, 0), "((r1 + r2) + r3) + r0");
  EXPECT_EQ(reduction_order(Algorithm::kRing, 4, 2), "((r3 + r0) + r1) + r2");
  EXPECT_EQ(reduction_order(Algorithm::kMesh, 4, 2), "((r0 + r1) + r2) + r3");
  EXPECT_EQ(reduction_order(Algorithm::kRdh, 8, 5),
            "((r0 + r4) + (r2 + r6)) + ((r1 + r5) + (r3 + r7))");
  EXPECT_EQ(reduction_order(Algorithm::kRing, 1, 0), "r0");
}

// The reference: element i of chunk c folded in the algorithm's order with a bf16 rounding
// after every addition.
float reference(Algorithm algorithm, const std::vector<std::vector<float>>& x, std::size_t chunk,
                std::size_t i) {
  const std::size_t n = x.size();
  const auto add = [](float a, float b) { return round_to(DType::kBFloat16, a + b); };
  if (algorithm == Algorithm::kMesh) {
    float acc = x[0][i];
    for (std::size_t r = 1; r < n; ++r) acc = add(acc, x[r][i]);
    return acc;
  }
  if (algorithm == Algorithm::kRing) {
    float acc = x[(chunk + 1) % n][i];
    for (std::size_t k = 2; k <= n; ++k) acc = add(acc, x[(chunk + k) % n][i]);
    return acc;
  }
  std::vector<float> v(n);
  for (std::size_t r = 0; r < n; ++r) v[r] = x[r][i];
  for (std::size_t d = n / 2; d >= 1; d /= 2)
    for (std::size_t r = 0; r < d; ++r) v[r] = add(v[r], v[r + d]);
  return v[0];
}

TEST(Collective, EachAlgorithmMatchesAReferenceThatAddsInItsOrder) {
  constexpr std::size_t kRanks = 8, kCount = 203;  // chunks of 25 and 26 elements
  const auto x = values(kRanks, kCount);
  const std::vector<Buffer> in = buffers(DType::kBFloat16, x);
  std::vector<std::vector<float>> results;
  for (const Algorithm a : {Algorithm::kRing, Algorithm::kMesh, Algorithm::kRdh}) {
    SCOPED_TRACE(std::string(name(a)));
    const std::vector<Buffer> out = all_reduce(in, DType::kBFloat16, Reduce::kSum, a);
    ASSERT_EQ(out.size(), kRanks);
    for (const Buffer& b : out) EXPECT_EQ(b, out[0]);  // every rank the same bits
    const std::vector<float> got = decode(DType::kBFloat16, out[0]);
    for (std::size_t c = 0; c < kRanks; ++c)
      for (std::size_t i = c * kCount / kRanks; i < (c + 1) * kCount / kRanks; ++i)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]),
                  std::bit_cast<std::uint32_t>(reference(a, x, c, i)))
            << "element " << i << " of chunk " << c;
    results.push_back(got);
    // The same bits on another run, on one host thread and on several.
    EXPECT_EQ(all_reduce(in, DType::kBFloat16, Reduce::kSum, a), out);
    EXPECT_EQ(all_reduce(in, DType::kBFloat16, Reduce::kSum, a, 1, 1), out);
    EXPECT_EQ(all_reduce(in, DType::kBFloat16, Reduce::kSum, a, 1, 5), out);
  }
  // The orders matter for this data: ring and mesh disagree somewhere.
  EXPECT_NE(results[0], results[1]);
}

TEST(Collective, HierarchicalReducesWithinEachNodeThenAcrossTheNodes) {
  // 2 nodes of 2 ranks: piece 0 of local chunk 0 is ring-reduced in each node from local
  // rank 1, then across the nodes from node 1.
  EXPECT_EQ(reduction_order(Algorithm::kHierarchical, 4, 0, 2), "(r3 + r2) + (r1 + r0)");
  EXPECT_EQ(reduction_order(Algorithm::kHierarchical, 4, 3, 2), "(r0 + r1) + (r2 + r3)");
  constexpr std::size_t kRanks = 8, kNodes = 2, kLocal = 4, kCount = 203;
  const auto x = values(kRanks, kCount);
  const std::vector<Buffer> in = buffers(DType::kBFloat16, x);
  const std::vector<float> got =
      decode(DType::kBFloat16,
             all_reduce(in, DType::kBFloat16, Reduce::kSum, Algorithm::kHierarchical, kNodes)[0]);
  const auto add = [](float a, float b) { return round_to(DType::kBFloat16, a + b); };
  for (std::size_t j = 0; j < kLocal; ++j) {
    const std::size_t begin = j * kCount / kLocal, length = (j + 1) * kCount / kLocal - begin;
    for (std::size_t s = 0; s < kNodes; ++s)
      for (std::size_t i = begin + s * length / kNodes; i < begin + (s + 1) * length / kNodes;
           ++i) {
        std::vector<float> node_sum(kNodes);
        for (std::size_t node = 0; node < kNodes; ++node) {
          float acc = x[node * kLocal + (j + 1) % kLocal][i];
          for (std::size_t k = 2; k <= kLocal; ++k)
            acc = add(acc, x[node * kLocal + (j + k) % kLocal][i]);
          node_sum[node] = acc;
        }
        float acc = node_sum[(s + 1) % kNodes];
        for (std::size_t k = 2; k <= kNodes; ++k) acc = add(acc, node_sum[(s + k) % kNodes]);
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(acc))
            << "element " << i;
      }
  }
  EXPECT_THROW(all_reduce(in, DType::kBFloat16, Reduce::kSum, Algorithm::kHierarchical, 3),
               std::invalid_argument);
}

TEST(Collective, ReduceScatterGivesEachRankItsChunkAndAllGatherJoinsThem) {
  constexpr std::size_t kRanks = 4, kCount = 10;  // chunks of 2, 3, 2 and 3 elements
  const std::vector<Buffer> in = buffers(DType::kFloat32, values(kRanks, kCount));
  const std::vector<Buffer> whole = all_reduce(in, DType::kFloat32, Reduce::kSum, Algorithm::kRing);
  const std::vector<Buffer> parts =
      reduce_scatter(in, DType::kFloat32, Reduce::kSum, Algorithm::kRing);
  ASSERT_EQ(parts.size(), kRanks);
  EXPECT_EQ(parts[0].size(), 2 * 4u);
  EXPECT_EQ(parts[1].size(), 3 * 4u);
  const std::vector<Buffer> gathered = all_gather(parts);
  for (const Buffer& b : gathered) EXPECT_EQ(b, whole[0]);
}

TEST(Collective, MaxAndMinPropagateNanAndOrderSignedZeros) {
  const std::vector<Buffer> in = {
      encode(DType::kFloat32, {1.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(), -3.0f}),
      encode(DType::kFloat32, {2.0f, 0.0f, 5.0f, -7.0f})};
  const std::vector<float> hi =
      decode(DType::kFloat32, all_reduce(in, DType::kFloat32, Reduce::kMax, Algorithm::kMesh)[0]);
  const std::vector<float> lo =
      decode(DType::kFloat32, all_reduce(in, DType::kFloat32, Reduce::kMin, Algorithm::kRing)[0]);
  EXPECT_EQ(hi[0], 2.0f);
  EXPECT_FALSE(std::signbit(hi[1]));
  EXPECT_TRUE(std::isnan(hi[2]));
  EXPECT_EQ(hi[3], -3.0f);
  EXPECT_TRUE(std::signbit(lo[1]));
  EXPECT_TRUE(std::isnan(lo[2]));
  EXPECT_EQ(lo[3], -7.0f);
}

TEST(Collective, IntegersAreExactAndWrapToTheirWidth) {
  const auto int32 = [](std::vector<std::int32_t> v) {
    Buffer b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  const std::vector<Buffer> in = {int32({16777217, 2147483647, -5}), int32({1, 1, 3}),
                                  int32({2, 0, -9})};
  const Buffer sum = all_reduce(in, DType::kInt32, Reduce::kSum, Algorithm::kRing)[0];
  std::vector<std::int32_t> got(3);
  std::memcpy(got.data(), sum.data(), sum.size());
  EXPECT_EQ(got[0], 16777220);                                  // beyond fp32's exact integers
  EXPECT_EQ(got[1], std::numeric_limits<std::int32_t>::min());  // wrapped
  EXPECT_EQ(got[2], -11);
  const Buffer u8 = all_reduce(std::vector<Buffer>{Buffer{std::byte{200}}, Buffer{std::byte{100}}},
                               DType::kUInt8, Reduce::kSum, Algorithm::kMesh)[0];
  EXPECT_EQ(std::to_integer<int>(u8[0]), 44);  // 300 mod 256
}

TEST(Collective, BadBuffersAreClearErrors) {
  const auto message = [](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::vector<Buffer> uneven = {Buffer(8), Buffer(12)};
  EXPECT_EQ(message([&] { all_reduce(uneven, DType::kFloat32, Reduce::kSum, Algorithm::kRing); }),
            "rank 1's buffer holds 12 bytes, rank 0's 8: a reduction takes buffers of one size");
  const std::vector<Buffer> three(3, Buffer(8));
  EXPECT_EQ(message([&] { all_reduce(three, DType::kFloat32, Reduce::kSum, Algorithm::kRdh); }),
            "rdh (recursive halving-doubling) needs a power-of-two number of ranks, not 3");
  EXPECT_NE(message([&] {
              all_reduce(three, DType::kFloat8E4M3x4, Reduce::kSum, Algorithm::kRing);
            }).find("cannot be reduced"),
            std::string::npos);
  EXPECT_EQ(message([&] { all_reduce({}, DType::kFloat32, Reduce::kSum, Algorithm::kRing); }),
            "a collective needs at least one rank");
  const std::vector<Buffer> ragged = {Buffer(6), Buffer(6)};
  EXPECT_NE(message([&] {
              all_reduce(ragged, DType::kFloat32, Reduce::kSum, Algorithm::kMesh);
            }).find("not whole float32 elements"),
            std::string::npos);
}

}  // namespace
}  // namespace trnsim::collective
