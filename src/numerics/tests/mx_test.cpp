// MX block quantisation: scale selection (both rules), special blocks, golden blocks, packed
// layouts and round trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "numerics/numerics.h"
#include "reference.h"

namespace trnsim::numerics {
namespace {

using testing::kInf;

MxOptions mx(DType element, MxScaleRule rule = MxScaleRule::kOcp) {
  MxOptions options;
  options.element = element;
  options.scale_rule = rule;
  return options;
}

struct Quantised {
  std::uint8_t scale;
  std::vector<std::uint8_t> codes;
  std::vector<float> dequantised;
};

Quantised quantise(const std::vector<float>& block, const MxOptions& options) {
  Quantised q;
  q.codes.resize(block.size());
  q.scale = quantize_mx_block(block, q.codes, options);
  q.dequantised.resize(block.size());
  dequantize_mx(options.element, q.codes, std::span<const std::uint8_t>(&q.scale, 1),
                q.dequantised);
  return q;
}

TEST(MxTest, ElementEmax) {
  EXPECT_EQ(mx_element_emax(DType::kFloat8E4M3), 8);
  EXPECT_EQ(mx_element_emax(DType::kFloat8E5M2), 15);
  EXPECT_EQ(mx_element_emax(DType::kFloat6E3M2), 4);
  EXPECT_EQ(mx_element_emax(DType::kFloat6E2M3), 2);
  EXPECT_EQ(mx_element_emax(DType::kFloat4E2M1), 2);
  EXPECT_THROW(mx_element_emax(DType::kBFloat16), std::invalid_argument);
}

TEST(MxTest, AllZeroBlockGetsTheSmallestScale) {
  const Quantised q = quantise(std::vector<float>(32, 0.0f), mx(DType::kFloat8E4M3));
  EXPECT_EQ(q.scale, 0x00);
  for (std::size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(q.codes[i], 0);
    EXPECT_EQ(q.dequantised[i], 0.0f);
  }
}

TEST(MxTest, AllEqualValues) {
  // amax = 3, floor(log2 3) = 1. OCP: s = 1 - 8 = -7 (code 120), element 3 * 2^7 = 384 =
  // 1.5 * 2^8 -> E4M3 0x7C. Trainium: s = 1 - 7 = -6 (code 121), element 192 -> 0x74.
  const std::vector<float> block(32, 3.0f);
  const Quantised ocp = quantise(block, mx(DType::kFloat8E4M3));
  EXPECT_EQ(ocp.scale, 120);
  const Quantised trn = quantise(block, mx(DType::kFloat8E4M3, MxScaleRule::kTrainium));
  EXPECT_EQ(trn.scale, 121);
  for (std::size_t i = 0; i < 32; ++i) {
    EXPECT_EQ(ocp.codes[i], 0x7C);
    EXPECT_EQ(trn.codes[i], 0x74);
    EXPECT_EQ(ocp.dequantised[i], 3.0f);
    EXPECT_EQ(trn.dequantised[i], 3.0f);
  }
}

TEST(MxTest, OneOutlierClampsUnderOcpButNotUnderTrainium) {
  std::vector<float> block(32, 1.0f);
  block[17] = 1000.0f;
  // floor(log2 1000) = 9. OCP: s = 1, 1000 / 2 = 500 > 464 clamps to 448 -> 896.
  const Quantised ocp = quantise(block, mx(DType::kFloat8E4M3));
  EXPECT_EQ(ocp.scale, 128);
  EXPECT_EQ(ocp.codes[17], 0x7E);
  EXPECT_EQ(ocp.dequantised[17], 896.0f);
  EXPECT_EQ(ocp.codes[0], 0x30);  // 0.5
  EXPECT_EQ(ocp.dequantised[0], 1.0f);
  // Trainium: s = 2, 1000 / 4 = 250 rounds to 256 -> 1024; no clamping.
  const Quantised trn = quantise(block, mx(DType::kFloat8E4M3, MxScaleRule::kTrainium));
  EXPECT_EQ(trn.scale, 129);
  EXPECT_EQ(trn.codes[17], 0x78);
  EXPECT_EQ(trn.dequantised[17], 1024.0f);
  EXPECT_EQ(trn.dequantised[0], 1.0f);
}

TEST(MxTest, NanOrInfAnywhereMakesTheWholeBlockNan) {
  for (float special : {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf}) {
    for (DType element : {DType::kFloat8E4M3, DType::kFloat8E5M2, DType::kFloat4E2M1}) {
      std::vector<float> block(32, 0.5f);
      block[5] = special;
      const Quantised q = quantise(block, mx(element));
      EXPECT_EQ(q.scale, 0xFF);
      for (float v : q.dequantised) EXPECT_TRUE(std::isnan(v)) << name(element);
    }
  }
}

TEST(MxTest, SubnormalRangeAmaxClampsTheScaleToTheBottom) {
  // amax = 1e-40 (an fp32 subnormal): floor(log2) = -133, s = -141 underflows and clamps to
  // 2^-127 (code 0). Elements are then rounded at that clamped scale: amax * 2^127 ~ 0.017
  // lands well inside E4M3's range, the smallest values in its subnormals.
  std::vector<float> block(32);
  for (std::size_t i = 0; i < 32; ++i) block[i] = 1.0e-40f * static_cast<float>(i + 1) / 32.0f;
  const Quantised q = quantise(block, mx(DType::kFloat8E4M3));
  EXPECT_EQ(q.scale, 0x00);
  const float two_to_127 = std::ldexp(1.0f, 127);
  for (std::size_t i = 0; i < 32; ++i) {
    const float scaled = block[i] * two_to_127;  // exact: a power-of-two scale
    EXPECT_EQ(q.codes[i], encode(DType::kFloat8E4M3, scaled)) << i;
    EXPECT_EQ(q.dequantised[i], decode(DType::kFloat8E4M3, q.codes[i]) / two_to_127) << i;
  }
  EXPECT_NEAR(q.dequantised[31], 1.0e-40f, 1.0e-40f / 16.0f);  // the largest keeps 4 bits
  // floor(log2) of an fp32 subnormal comes from its leading bit: 2^-140 -> s = -148 -> 0.
  EXPECT_EQ(mx_scale_code(std::vector<float>{std::ldexp(1.0f, -140)}, DType::kFloat8E4M3,
                          MxScaleRule::kOcp),
            0x00);
  // Just inside the range: amax = 2^-119 -> s = -127 -> code 0 exactly; 2^-118 -> code 1.
  EXPECT_EQ(mx_scale_code(std::vector<float>{std::ldexp(1.0f, -119)}, DType::kFloat8E4M3,
                          MxScaleRule::kOcp),
            0x00);
  EXPECT_EQ(mx_scale_code(std::vector<float>{std::ldexp(1.0f, -118)}, DType::kFloat8E4M3,
                          MxScaleRule::kOcp),
            0x01);
}

TEST(MxTest, FloorLog2IsExactJustBelowAPowerOfTwo) {
  // log2f(nextafter(2, 0)) rounds to 1.0; the exponent bits say 0.
  const float just_below_two = std::nextafter(2.0f, 0.0f);
  EXPECT_EQ(
      mx_scale_code(std::vector<float>{just_below_two}, DType::kFloat8E4M3, MxScaleRule::kOcp),
      127 - 8);
  EXPECT_EQ(mx_scale_code(std::vector<float>{-2.0f}, DType::kFloat8E4M3, MxScaleRule::kOcp),
            127 + 1 - 8);
}

// Golden blocks, hand-checked. Only the first 8 values are listed; the other 24 are zero
// (code 0). `scale` is the E8M0 code, `codes` the element codes of the first 8 values.
struct Golden {
  const char* why;
  DType element;
  MxScaleRule rule;
  float values[8];
  std::uint8_t scale;
  std::uint8_t codes[8];
};

const Golden kGolden[] = {
    // amax 6 -> floor(log2) 2 -> s = 2 - 2 = 0 (code 127): elements unscaled. 0.75 and 0.25
    // are ties (0.5|1.0 and 0|0.5) and go to the even code; 0.3 is nearer 0.5.
    {"MXFP4 OCP, ties to even",
     DType::kFloat4E2M1,
     MxScaleRule::kOcp,
     {6.0f, 3.0f, 1.5f, 0.75f, 0.5f, 0.25f, -6.0f, 0.3f},
     127,
     {0x7, 0x5, 0x3, 0x2, 0x1, 0x0, 0xF, 0x1}},
    // Same values, Trainium rule: s = 2 - 1 = 1 (code 128), elements halved: 3, 1.5, 0.75
    // (tie -> 1.0), 0.375 (-> 0.5), 0.25 (tie -> 0), 0.125 (-> 0), -3, 0.15 (-> 0).
    {"MXFP4 Trainium rule",
     DType::kFloat4E2M1,
     MxScaleRule::kTrainium,
     {6.0f, 3.0f, 1.5f, 0.75f, 0.5f, 0.25f, -6.0f, 0.3f},
     128,
     {0x5, 0x3, 0x2, 0x1, 0x0, 0x0, 0xD, 0x0}},
    // amax 400 -> floor(log2) 8 -> s = 0. 400 is the tie 384|416: RNE gives 384 (0x7C; a
    // ties-away implementation gives 416). -0.001 / 2^-9 = 0.512 subnormal ulps -> 0x81.
    // 2^-20 underflows to +0.
    {"MXFP8 E4M3 OCP, tie at 400 and a subnormal element",
     DType::kFloat8E4M3,
     MxScaleRule::kOcp,
     {1.0f, 400.0f, -0.001f, 9.5367431640625e-07f, 448.0f, 0.0f, 0.0f, 0.0f},
     127,
     {0x38, 0x7C, 0x81, 0x00, 0x7E, 0x00, 0x00, 0x00}},
    // amax 1 -> s = 0 - 15 = -15 (code 112): elements * 2^15: 32768 = 2^15 -> exponent field
    // 30 -> 0x78; 0.75 -> 24576 = 1.5 * 2^14 -> 0x76; -2^-20 -> -2^-5 -> 0xA8.
    {"MXFP8 E5M2 OCP",
     DType::kFloat8E5M2,
     MxScaleRule::kOcp,
     {1.0f, 0.75f, -9.5367431640625e-07f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f},
     112,
     {0x78, 0x76, 0xA8, 0x00, 0x00, 0x00, 0x00, 0x00}},
    // amax 10 -> floor(log2) 3 -> s = 3 - 4 = -1 (code 126): elements * 2: 20 = 1.25 * 2^4 ->
    // exponent field 7, mantissa 01 -> 0x1D; 0.2 = 3.2 subnormal ulps (0.0625) -> 0x03.
    {"MXFP6 E3M2 OCP",
     DType::kFloat6E3M2,
     MxScaleRule::kOcp,
     {10.0f, 0.1f, -10.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f},
     126,
     {0x1D, 0x03, 0x3D, 0x00, 0x00, 0x00, 0x00, 0x00}},
    // amax 0.9 -> floor(log2) -1 -> s = -1 - 2 = -3 (code 124): elements * 8: 7.2 -> 7.0 =
    // 1.75 * 4 -> 0x1E; 0.4 = 3.2 subnormal ulps (0.125) -> 0x03.
    {"MXFP6 E2M3 OCP",
     DType::kFloat6E2M3,
     MxScaleRule::kOcp,
     {0.9f, 0.05f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f},
     124,
     {0x1E, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
};

TEST(MxTest, GoldenBlocks) {
  for (const Golden& g : kGolden) {
    std::vector<float> block(32, 0.0f);
    std::copy(std::begin(g.values), std::end(g.values), block.begin());
    const Quantised q = quantise(block, mx(g.element, g.rule));
    EXPECT_EQ(q.scale, g.scale) << g.why;
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(q.codes[i], g.codes[i]) << g.why << " #" << i;
    for (std::size_t i = 8; i < 32; ++i) EXPECT_EQ(q.codes[i], 0) << g.why;
  }
}

std::vector<float> random_block_data(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> data(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Blocks of very different magnitudes, so scales vary.
    data[i] = dist(rng) * std::ldexp(1.0f, static_cast<int>((i / 32) % 40) - 20);
  }
  return data;
}

TEST(MxTest, ArrayEqualsBlockByBlockAndDequantisesWithinHalfAnUlp) {
  const std::vector<float> data = random_block_data(32 * 50 + 7, 5);  // last block partial
  for (DType element : {DType::kFloat8E4M3, DType::kFloat8E5M2, DType::kFloat6E3M2,
                        DType::kFloat6E2M3, DType::kFloat4E2M1}) {
    for (MxScaleRule rule : {MxScaleRule::kOcp, MxScaleRule::kTrainium}) {
      std::vector<std::uint8_t> codes(data.size()), scales((data.size() + 31) / 32);
      quantize_mx(data, codes, scales, mx(element, rule));
      std::vector<float> out(data.size());
      dequantize_mx(element, codes, scales, out);
      for (std::size_t b = 0; b < scales.size(); ++b) {
        const std::size_t n = std::min<std::size_t>(32, data.size() - 32 * b);
        std::vector<std::uint8_t> block_codes(n);
        const std::uint8_t scale = quantize_mx_block(
            std::span<const float>(data).subspan(32 * b, n), block_codes, mx(element, rule));
        ASSERT_EQ(scale, scales[b]);
        // Each element is the nearest value of the element grid times the scale: the
        // error is at most half an element ulp at the element's magnitude, unless clamped.
        const float scale_value = e8m0_to_float(scale);
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(block_codes[i], codes[32 * b + i]);
          const float x = data[32 * b + i] / scale_value;
          const float max = max_finite(element);
          if (std::fabs(x) >= max) {
            ASSERT_EQ(std::fabs(out[32 * b + i]), max * scale_value);
            continue;
          }
          const float rne = decode(element, encode(element, x)) * scale_value;
          ASSERT_EQ(out[32 * b + i], rne) << name(element) << " block " << b;
        }
      }
    }
  }
}

TEST(MxTest, StochasticMxIsReproducibleAndSplitInvariant) {
  const std::vector<float> data = random_block_data(32 * 64, 6);
  MxOptions options = mx(DType::kFloat4E2M1);
  options.rounding = RoundingMode::kStochastic;
  options.seed = 99;
  std::vector<std::uint8_t> whole(data.size()), pieces(data.size());
  std::vector<std::uint8_t> scales(64), piece_scales(64);
  quantize_mx(data, whole, scales, options);
  for (std::size_t start = 0; start < data.size(); start += 32 * 16) {
    MxOptions piece = options;
    piece.first_index = start;
    quantize_mx(std::span<const float>(data).subspan(start, 32 * 16),
                std::span<std::uint8_t>(pieces).subspan(start, 32 * 16),
                std::span<std::uint8_t>(piece_scales).subspan(start / 32, 16), piece);
  }
  EXPECT_EQ(whole, pieces);
  EXPECT_EQ(scales, piece_scales);
  std::vector<std::uint8_t> nearest(data.size());
  quantize_mx(data, nearest, scales, mx(DType::kFloat4E2M1));
  EXPECT_NE(whole, nearest);
}

TEST(MxTest, PackedLayouts) {
  const std::vector<std::uint8_t> codes = {0x01, 0x02, 0x03, 0x04, 0xA1, 0xB2, 0xC3, 0xD4};
  std::vector<std::byte> fp8(8);
  pack_x4(DType::kFloat8E4M3x4, codes, fp8);
  std::uint32_t word0 = 0, word1 = 0;
  std::memcpy(&word0, fp8.data(), 4);
  std::memcpy(&word1, fp8.data() + 4, 4);
  EXPECT_EQ(word0, 0x04030201u);  // element i in bits [8i, 8i + 8)
  EXPECT_EQ(word1, 0xD4C3B2A1u);

  const std::vector<std::uint8_t> fp4_codes = {0x1, 0x2, 0x3, 0x4, 0xF, 0xE, 0x0, 0x9};
  std::vector<std::byte> fp4(4);
  pack_x4(DType::kFloat4E2M1x4, fp4_codes, fp4);
  std::uint16_t half0 = 0, half1 = 0;
  std::memcpy(&half0, fp4.data(), 2);
  std::memcpy(&half1, fp4.data() + 2, 2);
  EXPECT_EQ(half0, 0x4321u);  // element i in bits [4i, 4i + 4)
  EXPECT_EQ(half1, 0x90EFu);

  std::vector<std::uint8_t> back(8);
  unpack_x4(DType::kFloat4E2M1x4, fp4, back);
  EXPECT_EQ(back, fp4_codes);
  unpack_x4(DType::kFloat8E4M3x4, fp8, back);
  EXPECT_EQ(back, codes);
  EXPECT_THROW(pack_x4(DType::kFloat8E4M3, codes, fp8), std::invalid_argument);
}

TEST(MxTest, PackedQuantisationEqualsQuantiseThenPack) {
  const std::vector<float> data = random_block_data(32 * 200, 8);  // crosses a chunk boundary
  for (DType packed : {DType::kFloat8E4M3x4, DType::kFloat8E5M2x4, DType::kFloat4E2M1x4}) {
    const DType element = unpacked_element(packed);
    std::vector<std::uint8_t> codes(data.size()), scales(200), packed_scales(200);
    quantize_mx(data, codes, scales, mx(element, MxScaleRule::kTrainium));
    std::vector<std::byte> expected(data.size() / 4 * storage_bytes(packed));
    pack_x4(packed, codes, expected);
    std::vector<std::byte> words(expected.size());
    quantize_mx_packed(packed, data, words, packed_scales, mx(element, MxScaleRule::kTrainium));
    EXPECT_EQ(words, expected) << name(packed);
    EXPECT_EQ(packed_scales, scales);
    std::vector<float> via_codes(data.size()), via_words(data.size());
    dequantize_mx(element, codes, scales, via_codes);
    dequantize_mx_packed(packed, words, scales, via_words);
    EXPECT_EQ(via_codes, via_words);
  }
}

}  // namespace
}  // namespace trnsim::numerics
