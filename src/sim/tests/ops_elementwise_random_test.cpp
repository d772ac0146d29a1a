// Tests of the random numbers (rand2, rand_set_state, rand_get_state) against Marsaglia's
// xorwow, and of quantize_mx against codes found by enumeration.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/tests/ops_test_util.h"

namespace trnsim::sim {
namespace {

using namespace ops_testing;

// Marsaglia's xorwow, written as in the paper.
struct ReferenceXorwow {
  std::uint32_t x, y, z, w, v, d;
  std::uint32_t next() {
    const std::uint32_t t = x ^ (x >> 2);
    x = y;
    y = z;
    z = w;
    w = v;
    v = (v ^ (v << 4)) ^ (t ^ (t << 1));
    d += 362437;
    return d + v;
  }
};

TEST(Rand2, XorwowUniformAndStateRoundTrip) {
  for (std::size_t generators : {std::size_t{1}, std::size_t{4}}) {
    HostIO io(isa::Engine::kVector, generators);
    constexpr std::uint32_t P = 3, F = 10;
    const std::uint32_t words = static_cast<std::uint32_t>(6 * generators);
    const auto seeds_ap = dense(DType::kUInt32, 5, P, words, 0);
    std::vector<std::int64_t> seeds(P * words);
    for (std::size_t i = 0; i < seeds.size(); ++i)
      seeds[i] = static_cast<std::int64_t>(123456789u * (i + 3));
    io.write_words(seeds_ap, seeds);
    ASSERT_TRUE(run_op(isa::RandSetState{seeds_ap}, io));
    const auto dst_ap = dense(DType::kFloat32, 5, P, F, 1024);
    ASSERT_TRUE(run_op(isa::Rand2{dst_ap, -2.0f, 3.0f}, io));
    const auto got = io.read(dst_ap);
    std::vector<ReferenceXorwow> reference;
    for (std::uint32_t p = 0; p < P; ++p)
      for (std::size_t g = 0; g < generators; ++g) {
        auto s = [&](std::size_t k) {
          return static_cast<std::uint32_t>(seeds[p * words + g * 6 + k]);
        };
        reference.push_back({s(0), s(1), s(2), s(3), s(4), s(5)});
      }
    for (std::uint32_t p = 0; p < P; ++p)
      for (std::uint32_t i = 0; i < F; ++i) {
        const std::uint32_t bits = reference[p * generators + i % generators].next();
        const float unit = static_cast<float>(bits / 256u) / 16777216.0f;
        const float want = -2.0f + 5.0f * unit;
        EXPECT_EQ(got[p * F + i], want);
        EXPECT_GE(got[p * F + i], -2.0f);
        EXPECT_LT(got[p * F + i], 3.0f);
      }
    const auto state_ap = dense(DType::kUInt32, 5, P, words, 2048);
    ASSERT_TRUE(run_op(isa::RandGetState{state_ap}, io));
    const auto state = io.read_raw(state_ap);
    for (std::uint32_t p = 0; p < P; ++p)
      for (std::size_t g = 0; g < generators; ++g) {
        const auto& r = reference[p * generators + g];
        const std::array<std::uint32_t, 6> want = {r.x, r.y, r.z, r.w, r.v, r.d};
        for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(state[p * words + g * 6 + k], want[k]);
      }
    // Lanes outside the instruction's partitions were not touched.
    EXPECT_EQ(io.rng(isa::Engine::kVector)[0],
              0x9E3779B9u * 1 + static_cast<unsigned>(isa::Engine::kVector));
  }
}

// E4M3/E5M2 nearest code by enumerating every code (ties to even code), saturating.
std::uint8_t nearest_code(DType element, float x) {
  std::uint8_t best = 0;
  double best_error = std::numeric_limits<double>::infinity();
  for (int code = 0; code < 256; ++code) {
    const float value = numerics::decode(element, static_cast<std::uint32_t>(code));
    if (!std::isfinite(value)) continue;
    const double error = std::fabs(static_cast<double>(value) - x);
    if (error < best_error ||
        (error == best_error && (code & 1) == 0 && std::signbit(value) == std::signbit(x))) {
      best_error = error;
      best = static_cast<std::uint8_t>(code);
    }
  }
  return best;
}

TEST(QuantizeMx, TrainiumScaleAndHardwareLayout) {
  for (DType packed : {DType::kFloat8E4M3x4, DType::kFloat8E5M2x4}) {
    const DType element = packed == DType::kFloat8E4M3x4 ? DType::kFloat8E4M3 : DType::kFloat8E5M2;
    const int emax = element == DType::kFloat8E4M3 ? 8 : 15;
    HostIO io;
    constexpr std::uint32_t P = 64, F = 8, W = F / 4;
    const auto src_ap = dense(DType::kBFloat16, 0, P, F);
    const auto dst_ap = dense(packed, 0, P, W, 1024);
    const auto scale_ap = dense(DType::kUInt8, 0, P, W, 2048);
    auto values = test_values(P * F, 101, false);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] *= static_cast<float>(1 << (i % 7));
    // Block (quadrant 1, s = 2, word 1) is all zeros.
    for (std::uint32_t r = 0; r < 8; ++r)
      for (std::uint32_t e = 0; e < 4; ++e) values[(32 + 16 + r) * F + 4 + e] = 0.0f;
    io.write(src_ap, values);
    const auto src = io.read(src_ap);
    ASSERT_TRUE(run_op(isa::QuantizeMx{dst_ap, src_ap, scale_ap}, io));
    const auto words = io.read_raw(dst_ap);
    for (std::uint32_t q = 0; q < 2; ++q)
      for (std::uint32_t s = 0; s < 4; ++s)
        for (std::uint32_t j = 0; j < W; ++j) {
          float amax = 0;
          for (std::uint32_t r = 0; r < 8; ++r)
            for (std::uint32_t e = 0; e < 4; ++e)
              amax = std::max(amax, std::fabs(src[(q * 32 + s * 8 + r) * F + 4 * j + e]));
          int exponent = -127;
          if (amax > 0) exponent = std::ilogb(amax) - (emax - 1);
          const auto scale_code = static_cast<std::uint8_t>(exponent + 127);
          EXPECT_EQ(io.byte_at(Memory::kSbuf, q * 32 + s, 2048 + j), scale_code) << q << s << j;
          const double scale = std::ldexp(1.0, exponent);
          for (std::uint32_t r = 0; r < 8; ++r)
            for (std::uint32_t e = 0; e < 4; ++e) {
              const std::uint32_t p = q * 32 + s * 8 + r;
              const float scaled = static_cast<float>(src[p * F + 4 * j + e] / scale);
              const std::uint32_t lane = (words[p * W + j] >> (8 * e)) & 0xFF;
              EXPECT_EQ(numerics::decode(element, lane),
                        numerics::decode(element, nearest_code(element, scaled)))
                  << "partition " << p << " element " << 4 * j + e;
            }
        }
    // Scale partitions 4..31 of each quadrant are left alone.
    for (std::uint32_t p : {4u, 20u, 31u, 36u, 63u})
      EXPECT_EQ(io.byte_at(Memory::kSbuf, p, 2048), kSentinel);
  }
}

}  // namespace
}  // namespace trnsim::sim
