// Stochastic rounding: reproducible, independent of how an array is split, only ever one of
// the two neighbours, unbiased, and exactly the documented rule floor(|x|/ulp + r/2^32).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "numerics/numerics.h"
#include "reference.h"

namespace trnsim::numerics {
namespace {

ConvertOptions stochastic(std::uint64_t seed) {
  ConvertOptions options;
  options.rounding = RoundingMode::kStochastic;
  options.overflow = OverflowMode::kSaturate;
  options.seed = seed;
  return options;
}

std::vector<float> random_values(std::size_t n, float scale, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  return values;
}

TEST(StochasticTest, SameSeedSameCodesDifferentSeedDifferentCodes) {
  const std::vector<float> in = random_values(4096, 3.0f, 1);
  std::vector<std::uint16_t> a(in.size()), b(in.size()), c(in.size());
  encode_array(DType::kBFloat16, in, a, stochastic(42));
  encode_array(DType::kBFloat16, in, b, stochastic(42));
  encode_array(DType::kBFloat16, in, c, stochastic(43));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(StochasticTest, SplittingTheArrayDoesNotChangeTheCodes) {
  const std::vector<float> in = random_values(10007, 100.0f, 2);
  for (DType type : {DType::kFloat8E4M3, DType::kFloat8E5M2, DType::kFloat4E2M1}) {
    std::vector<std::uint8_t> whole(in.size()), pieces(in.size());
    encode_array(type, in, whole, stochastic(7));
    // Uneven pieces, converted in reverse order, as separate threads might.
    const std::size_t cuts[] = {0, 1, 33, 4096, 9000, in.size()};
    for (int p = 4; p >= 0; --p) {
      ConvertOptions options = stochastic(7);
      options.first_index = cuts[p];
      const std::size_t n = cuts[p + 1] - cuts[p];
      encode_array(type, std::span<const float>(in).subspan(cuts[p], n),
                   std::span<std::uint8_t>(pieces).subspan(cuts[p], n), options);
    }
    EXPECT_EQ(whole, pieces) << name(type);
    // The scalar API with the element's index agrees too.
    for (std::size_t i = 0; i < 200; ++i) {
      ASSERT_EQ(encode(type, in[i], stochastic(7), i), whole[i]);
    }
  }
}

// The two representable neighbours of |x| (equal when |x| is representable).
struct Neighbours {
  double lower, upper;
};

Neighbours neighbours(const testing::RefRounder& reference, double magnitude) {
  const auto& entries = reference.entries();
  std::size_t i = 0;
  while (i + 1 < entries.size() && entries[i + 1].value <= magnitude) ++i;
  if (entries[i].value == magnitude) return {magnitude, magnitude};
  return {entries[i].value, entries[i + 1].value};
}

TEST(StochasticTest, ResultIsAlwaysOneOfTheTwoNeighbours) {
  for (const testing::RefFormat& f : testing::small_float_formats()) {
    if (storage_bytes(f.dtype) != 1) continue;  // a linear neighbour scan: keep to 8 bits
    const testing::RefRounder reference(f);
    const float range = static_cast<float>(reference.max_value());
    const std::vector<float> in = random_values(20000, range, 3);
    std::vector<std::uint8_t> codes(in.size());
    encode_array(f.dtype, in, codes, stochastic(11));
    for (std::size_t i = 0; i < in.size(); ++i) {
      const Neighbours n = neighbours(reference, std::fabs(in[i]));
      const double got = std::fabs(static_cast<double>(decode(f.dtype, codes[i])));
      ASSERT_TRUE(got == n.lower || got == n.upper)
          << name(f.dtype) << " x=" << in[i] << " got " << got;
      ASSERT_EQ(std::signbit(decode(f.dtype, codes[i])), std::signbit(in[i]));
    }
  }
}

// The documented rule, evaluated independently: round up iff floor(frac(|x|/ulp) * 2^32) + r
// carries out of 32 bits.
TEST(StochasticTest, FollowsTheDocumentedRuleExactly) {
  struct Probe {
    DType type;
    float x;
    double ulp;
  };
  const Probe probes[] = {
      {DType::kBFloat16, 1.00390625f + 0.001f, std::ldexp(1.0, -7)},
      {DType::kFloat8E4M3, 0.3f, std::ldexp(1.0, -5)},     // normal: [0.25, 0.5), ulp 2^-5
      {DType::kFloat8E4M3, 0.0041f, std::ldexp(1.0, -9)},  // subnormal
      {DType::kFloat16, 3.0e-7f, std::ldexp(1.0, -24)},    // subnormal
      {DType::kFloat4E2M1, 0.3f, 0.5},                     // subnormal of FP4
      {DType::kFloat6E3M2, 13.7f, 2.0},                    // [8, 16) ulp 2
  };
  for (const Probe& p : probes) {
    const double q = std::fabs(static_cast<double>(p.x)) / p.ulp;
    const double whole = std::floor(q);
    const auto frac32 = static_cast<std::uint64_t>(std::floor((q - whole) * 4294967296.0));
    for (std::uint64_t index = 0; index < 2000; ++index) {
      const std::uint32_t r = stochastic_bits(5, index);
      const bool up = frac32 + r >= (1ull << 32);
      const double expected = (whole + (up ? 1.0 : 0.0)) * p.ulp;
      const float got = decode(p.type, encode(p.type, p.x, stochastic(5), index));
      ASSERT_EQ(static_cast<double>(got), expected) << name(p.type) << " index " << index;
    }
  }
}

// Over N samples the count of round-ups is Binomial(N, p): bound it by 6 standard deviations
// (a false alarm has probability ~2e-9 per check).
TEST(StochasticTest, UnbiasedOnAverage) {
  struct Probe {
    DType type;
    float x;
    double lower, upper;
  };
  const Probe probes[] = {
      {DType::kBFloat16, 1.0f + 0.3f * 0.0078125f, 1.0, 1.0078125},
      {DType::kFloat8E4M3, 1.0f + 0.9f * 0.125f, 1.0, 1.125},
      {DType::kFloat8E5M2, -(2.0f + 0.01f * 0.5f), 2.0, 2.5},
      {DType::kFloat16, 5.0f * std::ldexp(1.0f, -26), std::ldexp(1.0, -24), std::ldexp(1.0, -23)},
      {DType::kFloat4E2M1, 4.5f, 4.0, 6.0},
      {DType::kFloat6E2M3, 0.01f, 0.0, 0.125},
  };
  constexpr std::size_t kSamples = 200000;
  for (const Probe& p : probes) {
    const std::vector<float> in(kSamples, p.x);
    std::vector<float> out(kSamples);
    std::vector<std::byte> storage(kSamples * storage_bytes(p.type));
    encode_bytes(p.type, in, storage, stochastic(2024));
    decode_bytes(p.type, storage, out);
    const double magnitude = std::fabs(static_cast<double>(p.x));
    const double prob_up = (magnitude - p.lower) / (p.upper - p.lower);
    std::size_t ups = 0;
    double error_sum = 0.0;
    for (float v : out) {
      const double m = std::fabs(static_cast<double>(v));
      ASSERT_TRUE(m == p.lower || m == p.upper) << name(p.type) << " got " << v;
      ups += m == p.upper;
      error_sum += m - magnitude;
    }
    const double n = kSamples;
    const double sigma = std::sqrt(n * prob_up * (1.0 - prob_up));
    EXPECT_NEAR(static_cast<double>(ups), n * prob_up, 6.0 * sigma + 1.0) << name(p.type);
    // Mean error in ulps: |mean| <= 6 * sqrt(p(1-p)/N).
    const double mean_error_ulps = error_sum / n / (p.upper - p.lower);
    EXPECT_LE(std::fabs(mean_error_ulps), 6.0 * sigma / n + 1e-12) << name(p.type);
  }
}

TEST(StochasticTest, MeanErrorOverRandomInputsIsZero) {
  // Many different inputs (one sample each): the mean error in ulps has standard deviation
  // <= 0.5 / sqrt(N).
  constexpr std::size_t kSamples = 1 << 20;
  const std::vector<float> in = random_values(kSamples, 1.0f, 9);
  std::vector<std::uint16_t> codes(kSamples);
  encode_array(DType::kBFloat16, in, codes, stochastic(77));
  double error_ulps = 0.0;
  for (std::size_t i = 0; i < kSamples; ++i) {
    const double x = in[i];
    if (x == 0.0) continue;
    const double ulp = std::ldexp(1.0, std::ilogb(x) - 7);
    error_ulps += (static_cast<double>(decode(DType::kBFloat16, codes[i])) - x) / ulp;
  }
  EXPECT_LE(std::fabs(error_ulps / kSamples), 6.0 * 0.5 / std::sqrt(double{kSamples}));
}

TEST(StochasticTest, RandomBitsAreRoughlyUniform) {
  // Each of the 32 bits is set about half the time over consecutive indices.
  constexpr int kSamples = 1 << 16;
  int ones[32] = {};
  for (int i = 0; i < kSamples; ++i) {
    const std::uint32_t r = stochastic_bits(123, static_cast<std::uint64_t>(i));
    for (int b = 0; b < 32; ++b) ones[b] += (r >> b) & 1u;
  }
  const double sigma = std::sqrt(kSamples * 0.25);
  for (int b = 0; b < 32; ++b) EXPECT_NEAR(ones[b], kSamples / 2, 6 * sigma) << "bit " << b;
  EXPECT_NE(stochastic_bits(1, 1ull << 32), stochastic_bits(1, 0)) << "high index bits matter";
}

}  // namespace
}  // namespace trnsim::numerics
