// fp32 -> each format with round-to-nearest-even: hand-written boundary cases, then random
// inputs against the nearest-value search of reference.h.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "numerics/numerics.h"
#include "reference.h"

namespace trnsim::numerics {
namespace {

using testing::kInf;
using testing::kNaN;

float from_bits(std::uint32_t bits) {
  return std::bit_cast<float>(bits);
}
float next_up(float x) {
  return std::nextafter(x, kInf);
}
float next_down(float x) {
  return std::nextafter(x, -kInf);
}

struct Case {
  float input;
  std::uint32_t inf_nan_code;   // expected with OverflowMode::kInfNan
  std::uint32_t saturate_code;  // expected with OverflowMode::kSaturate
  const char* what;
};

void expect_cases(DType type, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    ConvertOptions inf_nan;
    inf_nan.overflow = OverflowMode::kInfNan;
    ConvertOptions saturate;
    saturate.overflow = OverflowMode::kSaturate;
    EXPECT_EQ(encode(type, c.input, inf_nan), c.inf_nan_code)
        << name(type) << ": " << c.what << " (" << c.input << ", inf/nan mode)";
    EXPECT_EQ(encode(type, c.input, saturate), c.saturate_code)
        << name(type) << ": " << c.what << " (" << c.input << ", saturate mode)";
  }
}

TEST(EncodeBoundaryTest, Float8E4M3) {
  expect_cases(DType::kFloat8E4M3,
               {{448.0f, 0x7E, 0x7E, "max"},
                {464.0f, 0x7E, 0x7E, "tie between max and the would-be next: to even max"},
                {next_up(464.0f), 0x7F, 0x7E, "just above the overflow threshold"},
                {next_down(464.0f), 0x7E, 0x7E, "just below the threshold"},
                {1.0e6f, 0x7F, 0x7E, "far overflow"},
                {-1.0e6f, 0xFF, 0xFE, "far negative overflow"},
                {kInf, 0x7F, 0x7E, "Inf (no Inf in E4M3)"},
                {-kInf, 0xFF, 0xFE, "-Inf"},
                {kNaN, 0x7F, 0x7F, "NaN"},
                {-kNaN, 0xFF, 0xFF, "-NaN keeps its sign"},
                {-0.0f, 0x80, 0x80, "-0"},
                {std::ldexp(1.0f, -9), 0x01, 0x01, "min subnormal"},
                {std::ldexp(1.0f, -10), 0x00, 0x00, "half min subnormal: tie to zero"},
                {next_up(std::ldexp(1.0f, -10)), 0x01, 0x01, "just above half min subnormal"},
                {-std::ldexp(1.0f, -10), 0x80, 0x80, "negative half min subnormal -> -0"},
                {3.0f * std::ldexp(1.0f, -10), 0x02, 0x02, "1.5 subnormal ulps: tie up to even"},
                {5.0f * std::ldexp(1.0f, -10), 0x02, 0x02, "2.5 subnormal ulps: tie down"},
                {std::ldexp(1.0f, -6) - std::ldexp(1.0f, -10), 0x08, 0x08,
                 "tie between max subnormal and min normal"},
                {std::ldexp(1.0f, -6), 0x08, 0x08, "min normal"},
                {1.0f, 0x38, 0x38, "one"},
                {1.0625f, 0x38, 0x38, "1 + ulp/2: tie down to even"},
                {1.1875f, 0x3A, 0x3A, "1 + 3ulp/2: tie up to even"},
                {next_up(1.0625f), 0x39, 0x39, "just above a tie"},
                {-1.5f, 0xBC, 0xBC, "negative normal"}});
}

TEST(EncodeBoundaryTest, Float8E5M2) {
  expect_cases(DType::kFloat8E5M2,
               {{57344.0f, 0x7B, 0x7B, "max"},
                {61440.0f, 0x7C, 0x7B, "tie above max: rounds to the even Inf code"},
                {next_down(61440.0f), 0x7B, 0x7B, "just below the overflow threshold"},
                {kInf, 0x7C, 0x7B, "Inf"},
                {-kInf, 0xFC, 0xFB, "-Inf"},
                {kNaN, 0x7E, 0x7E, "NaN"},
                {-0.0f, 0x80, 0x80, "-0"},
                {std::ldexp(1.0f, -16), 0x01, 0x01, "min subnormal"},
                {std::ldexp(1.0f, -17), 0x00, 0x00, "half min subnormal"},
                {next_up(std::ldexp(1.0f, -17)), 0x01, 0x01, "just above half min subnormal"},
                {std::ldexp(1.0f, -14), 0x04, 0x04, "min normal"},
                {1.0f, 0x3C, 0x3C, "one"},
                {1.125f, 0x3C, 0x3C, "tie down"},
                {1.375f, 0x3E, 0x3E, "tie up"}});
}

// NKI's legacy float8_e4m3 (Neuron's FP8_EXP4): E4M3's bias and subnormals, IEEE specials.
TEST(EncodeBoundaryTest, Float8E4M3Legacy) {
  expect_cases(DType::kFloat8E4M3Ieee,
               {{240.0f, 0x77, 0x77, "max"},
                {248.0f, 0x78, 0x77, "tie above max: rounds to the even Inf code"},
                {next_down(248.0f), 0x77, 0x77, "just below the overflow threshold"},
                {448.0f, 0x78, 0x77, "the OCP type's max overflows here"},
                {kInf, 0x78, 0x77, "Inf"},
                {-kInf, 0xF8, 0xF7, "-Inf"},
                {kNaN, 0x7C, 0x7C, "NaN: quiet, payload kept"},
                {-kNaN, 0xFC, 0xFC, "-NaN keeps its sign"},
                {-0.0f, 0x80, 0x80, "-0"},
                {std::ldexp(1.0f, -9), 0x01, 0x01, "min subnormal"},
                {std::ldexp(1.0f, -10), 0x00, 0x00, "half min subnormal: tie to zero"},
                {std::ldexp(1.0f, -6), 0x08, 0x08, "min normal"},
                {1.0f, 0x38, 0x38, "one"},
                {1.1875f, 0x3A, 0x3A, "1 + 3ulp/2: tie up to even"},
                {-1.5f, 0xBC, 0xBC, "negative normal"}});
}

TEST(EncodeBoundaryTest, Float16) {
  expect_cases(DType::kFloat16,
               {{65504.0f, 0x7BFF, 0x7BFF, "max"},
                {65520.0f, 0x7C00, 0x7BFF, "overflow threshold (tie to the even Inf code)"},
                {next_down(65520.0f), 0x7BFF, 0x7BFF, "just below the threshold"},
                {kInf, 0x7C00, 0x7BFF, "Inf"},
                {-kInf, 0xFC00, 0xFBFF, "-Inf"},
                {kNaN, 0x7E00, 0x7E00, "NaN"},
                {-0.0f, 0x8000, 0x8000, "-0"},
                {std::ldexp(1.0f, -24), 0x0001, 0x0001, "min subnormal"},
                {std::ldexp(1.0f, -25), 0x0000, 0x0000, "half min subnormal"},
                {next_up(std::ldexp(1.0f, -25)), 0x0001, 0x0001, "above half min subnormal"},
                {3.0f * std::ldexp(1.0f, -25), 0x0002, 0x0002, "subnormal tie up"},
                {std::ldexp(1.0f, -14), 0x0400, 0x0400, "min normal"},
                {1.0f + std::ldexp(1.0f, -11), 0x3C00, 0x3C00, "tie down"},
                {1.0f + 3.0f * std::ldexp(1.0f, -11), 0x3C02, 0x3C02, "tie up"}});
}

TEST(EncodeBoundaryTest, BFloat16) {
  expect_cases(DType::kBFloat16,
               {{from_bits(0x7F7F0000), 0x7F7F, 0x7F7F, "max"},
                {from_bits(0x7F7F8000), 0x7F80, 0x7F7F, "tie above max -> Inf"},
                {from_bits(0x7F7F7FFF), 0x7F7F, 0x7F7F, "just below the threshold"},
                {kInf, 0x7F80, 0x7F7F, "Inf"},
                {-kInf, 0xFF80, 0xFF7F, "-Inf"},
                {from_bits(0x7FC00000), 0x7FC0, 0x7FC0, "quiet NaN"},
                {from_bits(0xFFC00000), 0xFFC0, 0xFFC0, "negative NaN keeps its sign"},
                {from_bits(0x7F800001), 0x7FC0, 0x7FC0, "signalling NaN, low payload: quieted"},
                {from_bits(0x7FA00000), 0x7FE0, 0x7FE0, "payload top bits kept"},
                {-0.0f, 0x8000, 0x8000, "-0"},
                {from_bits(0x00010000), 0x0001, 0x0001, "min subnormal 2^-133"},
                {from_bits(0x00008000), 0x0000, 0x0000, "half min subnormal"},
                {from_bits(0x00008001), 0x0001, 0x0001, "just above half min subnormal"},
                {from_bits(0x00018000), 0x0002, 0x0002, "subnormal tie up"},
                {from_bits(0x007F8000), 0x0080, 0x0080, "max subnormal rounds to min normal"},
                {from_bits(0x3F808000), 0x3F80, 0x3F80, "tie down"},
                {from_bits(0x3F818000), 0x3F82, 0x3F82, "tie up"}});
}

TEST(EncodeBoundaryTest, TFloat32) {
  expect_cases(DType::kTFloat32,
               {{1.0f + std::ldexp(1.0f, -11), 0x3F800000, 0x3F800000, "tie down (RNE)"},
                {1.0f + 3.0f * std::ldexp(1.0f, -11), 0x3F804000, 0x3F804000, "tie up"},
                {from_bits(0x7F7FF000), 0x7F800000, 0x7F7FE000, "tie above max"},
                {kNaN, 0x7FC00000, 0x7FC00000, "NaN"},
                {from_bits(0x00001000), 0x00000000, 0x00000000, "half min subnormal"},
                {from_bits(0x00003000), 0x00004000, 0x00004000, "subnormal tie up"}});
}

TEST(EncodeBoundaryTest, Float6E3M2) {
  expect_cases(DType::kFloat6E3M2,
               {{28.0f, 0x1F, 0x1F, "max"},
                {30.0f, 0x1F, 0x1F, "tie above max: no Inf, saturates in both modes"},
                {1.0e30f, 0x1F, 0x1F, "far overflow"},
                {-1.0e30f, 0x3F, 0x3F, "far negative overflow"},
                {kInf, 0x1F, 0x1F, "Inf saturates"},
                {kNaN, 0x1F, 0x1F, "NaN -> +max (documented choice)"},
                {-kNaN, 0x1F, 0x1F, "-NaN -> +max too"},
                {-0.0f, 0x20, 0x20, "-0"},
                {0.0625f, 0x01, 0x01, "min subnormal"},
                {0.03125f, 0x00, 0x00, "half min subnormal"},
                {1.0f, 0x0C, 0x0C, "one"},
                {1.125f, 0x0C, 0x0C, "tie down"},
                {1.375f, 0x0E, 0x0E, "tie up"}});
}

TEST(EncodeBoundaryTest, Float6E2M3) {
  expect_cases(DType::kFloat6E2M3, {{7.5f, 0x1F, 0x1F, "max"},
                                    {7.75f, 0x1F, 0x1F, "tie above max saturates"},
                                    {kNaN, 0x1F, 0x1F, "NaN -> +max"},
                                    {0.125f, 0x01, 0x01, "min subnormal"},
                                    {0.0625f, 0x00, 0x00, "half min subnormal"},
                                    {0.1875f, 0x02, 0x02, "subnormal tie up"},
                                    {1.0f, 0x08, 0x08, "one (min normal)"},
                                    {1.0625f, 0x08, 0x08, "tie down"},
                                    {1.1875f, 0x0A, 0x0A, "tie up"}});
}

TEST(EncodeBoundaryTest, Float4E2M1) {
  expect_cases(DType::kFloat4E2M1, {{6.0f, 0x7, 0x7, "max"},
                                    {7.0f, 0x7, 0x7, "tie above max saturates"},
                                    {kInf, 0x7, 0x7, "Inf"},
                                    {-kInf, 0xF, 0xF, "-Inf"},
                                    {kNaN, 0x7, 0x7, "NaN -> +max"},
                                    {-0.0f, 0x8, 0x8, "-0"},
                                    {0.5f, 0x1, 0x1, "min subnormal"},
                                    {0.25f, 0x0, 0x0, "half min subnormal"},
                                    {next_up(0.25f), 0x1, 0x1, "just above half min subnormal"},
                                    {0.75f, 0x2, 0x2, "0.5|1.0 tie to even 1.0"},
                                    {1.25f, 0x2, 0x2, "1.0|1.5 tie to even 1.0"},
                                    {1.75f, 0x4, 0x4, "1.5|2.0 tie to even 2.0"},
                                    {2.5f, 0x4, 0x4, "2|3 tie to even 2"},
                                    {3.5f, 0x6, 0x6, "3|4 tie to even 4"},
                                    {5.0f, 0x6, 0x6, "4|6 tie to even 4"},
                                    {-5.5f, 0xF, 0xF, "negative, nearer 6"}});
}

TEST(EncodeBoundaryTest, E8M0) {
  expect_cases(DType::kFloat8E8M0,
               {{1.0f, 127, 127, "one"},
                {1.4f, 127, 127, "nearer 1"},
                {1.5f, 128, 128, "1|2 tie to the even code 128"},
                {3.0f, 128, 128, "2|4 tie to the even code 128"},
                {std::ldexp(1.0f, 127), 254, 254, "max"},
                {std::ldexp(1.5f, 127), 254, 254, "tie above max to even 254"},
                {std::ldexp(1.75f, 127), 255, 254, "overflow"},
                {kInf, 255, 254, "Inf"},
                {std::ldexp(1.0f, -126), 1, 1, "2^-126"},
                {std::ldexp(1.0f, -127), 0, 0, "2^-127, the smallest"},
                {std::ldexp(1.5f, -127), 0, 0, "tie between 2^-127 and 2^-126 to even 0"},
                {std::ldexp(1.0f, -140), 0, 0, "below the range clamps"},
                {0.0f, 0, 0, "zero clamps to the smallest scale"},
                {-1.0f, 255, 255, "negative -> NaN"},
                {kNaN, 255, 255, "NaN"}});
}

TEST(EncodeBoundaryTest, IntegersRoundToNearestEvenAndSaturate) {
  struct IntCase {
    DType type;
    float input;
    std::uint32_t code;
  };
  const std::vector<IntCase> cases = {
      {DType::kInt8, 2.5f, 2},
      {DType::kInt8, 3.5f, 4},
      {DType::kInt8, -2.5f, 0xFE},
      {DType::kInt8, -0.5f, 0},
      {DType::kInt8, 127.5f, 127},
      {DType::kInt8, -128.5f, 0x80},
      {DType::kInt8, 1.0e10f, 127},
      {DType::kInt8, -kInf, 0x80},
      {DType::kInt8, kNaN, 0},
      {DType::kUInt8, -1.0f, 0},
      {DType::kUInt8, 255.5f, 255},
      {DType::kUInt8, 254.5f, 254},
      {DType::kInt16, -32768.4f, 0x8000},
      {DType::kInt16, 32767.5f, 0x7FFF},
      {DType::kUInt16, 65535.0f, 0xFFFF},
      {DType::kUInt16, kInf, 0xFFFF},
      {DType::kInt32, 2147483520.0f, 2147483520u},
      {DType::kInt32, 2147483648.0f, 0x7FFFFFFFu},
      {DType::kInt32, -2147483648.0f, 0x80000000u},
      {DType::kInt32, -1.0e20f, 0x80000000u},
      {DType::kInt32, 8388609.0f, 8388609u},
      {DType::kInt32, 4194304.5f, 4194304u},
      {DType::kInt32, kNaN, 0},
      {DType::kUInt32, 4294967040.0f, 4294967040u},
      {DType::kUInt32, 4294967296.0f, 0xFFFFFFFFu},
      {DType::kUInt32, -3.0f, 0},
  };
  for (const IntCase& c : cases) {
    EXPECT_EQ(encode(c.type, c.input), c.code) << name(c.type) << " " << c.input;
  }
}

// Inputs that exercise every region of a format: uniform fp32 bit patterns, and values whose
// exponent lies in (or just around) the format's range with uniformly random mantissa bits.
std::vector<float> random_inputs(const testing::RefFormat& f, std::size_t count,
                                 std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> inputs(count);
  const int min_exp = 1 - f.bias - f.mantissa_bits - 3;
  const int max_exp = (1 << f.exponent_bits) - f.bias + 2;
  std::uniform_int_distribution<int> exponent(std::max(min_exp, -149), std::min(max_exp, 127));
  for (std::size_t i = 0; i < count; ++i) {
    const auto bits = static_cast<std::uint32_t>(rng());
    if (i % 4 == 0) {
      inputs[i] = std::bit_cast<float>(bits);
    } else {
      const float mantissa = std::bit_cast<float>(0x3F800000u | (bits & 0x007FFFFFu));
      const float value = std::ldexp(mantissa, exponent(rng));
      inputs[i] = (bits >> 31) ? -value : value;
    }
  }
  return inputs;
}

void expect_matches_reference(const testing::RefFormat& f, std::size_t count, std::uint32_t seed) {
  const testing::RefRounder reference(f);
  const std::vector<float> inputs = random_inputs(f, count, seed);
  for (OverflowMode mode : {OverflowMode::kInfNan, OverflowMode::kSaturate}) {
    ConvertOptions options;
    options.overflow = mode;
    std::vector<std::uint32_t> got(count);
    if (storage_bytes(f.dtype) == 1) {
      std::vector<std::uint8_t> codes(count);
      encode_array(f.dtype, inputs, codes, options);
      std::copy(codes.begin(), codes.end(), got.begin());
    } else if (storage_bytes(f.dtype) == 2) {
      std::vector<std::uint16_t> codes(count);
      encode_array(f.dtype, inputs, codes, options);
      std::copy(codes.begin(), codes.end(), got.begin());
    } else {
      encode_array(f.dtype, inputs, std::span<std::uint32_t>(got), options);
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (std::isnan(inputs[i])) continue;  // NaN payloads are covered by the boundary tests
      const std::uint32_t expected = reference.encode(inputs[i], mode) << f.code_shift;
      ASSERT_EQ(got[i], expected) << testing::format_name(f) << " input bits 0x" << std::hex
                                  << std::bit_cast<std::uint32_t>(inputs[i]);
    }
  }
}

TEST(EncodeRandomTest, EveryFormatMatchesNearestValueSearch) {
  std::uint32_t seed = 1;
  for (const testing::RefFormat& f : testing::small_float_formats()) {
    expect_matches_reference(f, 200000, seed++);
  }
  expect_matches_reference(testing::tf32_format(), 200000, seed++);
}

TEST(EncodeRandomTest, ScalarEncodeEqualsBulkEncode) {
  const testing::RefFormat f = testing::small_float_formats()[2];  // E4M3
  const std::vector<float> inputs = random_inputs(f, 10000, 99);
  std::vector<std::uint8_t> bulk(inputs.size());
  encode_array(DType::kFloat8E4M3, inputs, bulk);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(encode(DType::kFloat8E4M3, inputs[i]), bulk[i]);
  }
}

TEST(EncodeRandomTest, RoundTripOfEveryFiniteCodeIsExact) {
  for (const testing::RefFormat& f : testing::small_float_formats()) {
    for (std::uint32_t c = 0; c < f.code_count(); ++c) {
      const float v = decode(f.dtype, c);
      if (std::isnan(v)) continue;
      if (f.specials == testing::Specials::kIeee && std::isinf(v)) {
        EXPECT_EQ(encode(f.dtype, v), c);
        continue;
      }
      ASSERT_EQ(encode(f.dtype, v), c) << testing::format_name(f) << " code " << c;
    }
  }
}

}  // namespace
}  // namespace trnsim::numerics
