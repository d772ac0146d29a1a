// Every code of every float format of <= 16 bits (and all 2^19 TF32 codes) decodes to the
// value its definition gives; FP16 also matches numpy bit for bit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "numerics/numerics.h"
#include "reference.h"

namespace trnsim::numerics {
namespace {

using testing::RefFormat;

void expect_decodes_by_definition(const RefFormat& f) {
  std::vector<std::uint32_t> codes(f.code_count());
  for (std::uint32_t c = 0; c < f.code_count(); ++c) codes[c] = c << f.code_shift;
  for (std::uint32_t c = 0; c < f.code_count(); ++c) {
    const double expected = testing::ref_value(f, c);
    const float got = decode(f.dtype, codes[c]);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(got)) << testing::format_name(f) << " code " << c;
      // The sign of a NaN code survives decoding.
      ASSERT_EQ(std::signbit(got), ((c >> (f.total_bits() - 1)) & 1u) != 0);
    } else {
      ASSERT_EQ(static_cast<double>(got), expected) << testing::format_name(f) << " code " << c;
      ASSERT_EQ(std::signbit(got), std::signbit(expected)) << "sign of code " << c;
    }
  }
}

TEST(DecodeTest, EverySmallFloatCodeMatchesTheDefinition) {
  for (const RefFormat& f : testing::small_float_formats()) expect_decodes_by_definition(f);
}

TEST(DecodeTest, EveryTf32CodeMatchesTheDefinition) {
  expect_decodes_by_definition(testing::tf32_format());
}

TEST(DecodeTest, BulkDecodeMatchesScalarForEverySmallCode) {
  for (const RefFormat& f : testing::small_float_formats()) {
    std::vector<float> bulk(f.code_count());
    if (storage_bytes(f.dtype) == 1) {
      std::vector<std::uint8_t> codes(f.code_count());
      for (std::uint32_t c = 0; c < f.code_count(); ++c) codes[c] = static_cast<std::uint8_t>(c);
      decode_array(f.dtype, codes, bulk);
    } else {
      std::vector<std::uint16_t> codes(f.code_count());
      for (std::uint32_t c = 0; c < f.code_count(); ++c) codes[c] = static_cast<std::uint16_t>(c);
      decode_array(f.dtype, codes, bulk);
    }
    for (std::uint32_t c = 0; c < f.code_count(); ++c) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(bulk[c]),
                std::bit_cast<std::uint32_t>(decode(f.dtype, c)))
          << testing::format_name(f) << " code " << c;
    }
  }
}

TEST(DecodeTest, Fp16MatchesNumpyBitForBit) {
  const std::string path = ::testing::TempDir() + "trnsim_numpy_fp16.bin";
  const std::string command =
      "/usr/bin/python3 -c \"import numpy as np; "
      "np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)"
      ".astype(np.float32).tofile('" +
      path + "')\"";
  ASSERT_EQ(std::system(command.c_str()), 0) << "needs python3-numpy (scripts/deps.sh)";
  std::ifstream file(path, std::ios::binary);
  std::vector<std::uint32_t> numpy_bits(65536);
  file.read(reinterpret_cast<char*>(numpy_bits.data()), 65536 * 4);
  ASSERT_EQ(file.gcount(), 65536 * 4);
  std::remove(path.c_str());
  for (std::uint32_t c = 0; c < 65536; ++c) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(decode(DType::kFloat16, c)), numpy_bits[c])
        << "fp16 code " << c;
  }
}

TEST(DecodeTest, E8M0IsAPowerOfTwoWithNanAtTheTop) {
  for (std::uint32_t c = 0; c < 255; ++c) {
    ASSERT_EQ(static_cast<double>(decode(DType::kFloat8E8M0, c)),
              std::ldexp(1.0, static_cast<int>(c) - 127));
    ASSERT_EQ(e8m0_to_float(static_cast<std::uint8_t>(c)), decode(DType::kFloat8E8M0, c));
  }
  EXPECT_TRUE(std::isnan(decode(DType::kFloat8E8M0, 0xFF)));
}

TEST(DecodeTest, IntegersSignExtend) {
  EXPECT_EQ(decode(DType::kInt8, 0xFF), -1.0f);
  EXPECT_EQ(decode(DType::kInt8, 0x80), -128.0f);
  EXPECT_EQ(decode(DType::kUInt8, 0xFF), 255.0f);
  EXPECT_EQ(decode(DType::kInt16, 0x8000), -32768.0f);
  EXPECT_EQ(decode(DType::kUInt16, 0xFFFF), 65535.0f);
  EXPECT_EQ(decode(DType::kInt32, 0x80000000u), -2147483648.0f);
  EXPECT_EQ(decode(DType::kUInt32, 0xFFFFFFFFu), 4294967296.0f);  // nearest fp32
}

TEST(DecodeTest, MaxFiniteValues) {
  const std::pair<DType, float> cases[] = {{DType::kFloat8E4M3, 448.0f},
                                           {DType::kFloat8E5M2, 57344.0f},
                                           {DType::kFloat8E4M3Ieee, 240.0f},
                                           {DType::kFloat6E3M2, 28.0f},
                                           {DType::kFloat6E2M3, 7.5f},
                                           {DType::kFloat4E2M1, 6.0f},
                                           {DType::kFloat16, 65504.0f},
                                           {DType::kBFloat16, std::bit_cast<float>(0x7F7F0000u)},
                                           {DType::kTFloat32, std::bit_cast<float>(0x7F7FE000u)},
                                           {DType::kFloat8E8M0, std::ldexp(1.0f, 127)}};
  for (const auto& [type, max] : cases) EXPECT_EQ(max_finite(type), max) << name(type);
}

TEST(DecodeTest, MantissaBits) {
  const std::pair<DType, std::optional<int>> cases[] = {
      {DType::kFloat32, 23},
      {DType::kTFloat32, 10},
      {DType::kBFloat16, 7},
      {DType::kFloat16, 10},
      {DType::kFloat8E4M3, 3},
      {DType::kFloat4E2M1, 1},
      {DType::kFloat8E5M2x4, 2},  // an x4-packed type: its element's
      {DType::kFloat8E8M0, std::nullopt},
      {DType::kInt8, std::nullopt}};
  for (const auto& [type, bits] : cases) EXPECT_EQ(mantissa_bits(type), bits) << name(type);
}

}  // namespace
}  // namespace trnsim::numerics
