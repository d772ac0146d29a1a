// Bulk API plumbing: typed and byte storage agree with the scalar functions, x4 packing
// without scale, conversions between types, and size checks.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "numerics/numerics.h"

namespace trnsim::numerics {
namespace {

std::vector<float> mixed_values(std::size_t n) {
  std::mt19937 rng(17);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto bits = static_cast<std::uint32_t>(rng());
    v[i] = i % 3 == 0 ? std::bit_cast<float>(bits)
                      : std::ldexp(static_cast<float>(static_cast<std::int32_t>(bits)) * 0x1p-31f,
                                   static_cast<int>(bits % 40) - 20);
  }
  v[0] = std::numeric_limits<float>::quiet_NaN();
  v[1] = -std::numeric_limits<float>::infinity();
  v[2] = -0.0f;
  return v;
}

std::uint32_t load_word(const std::vector<std::byte>& bytes, std::size_t i, std::size_t width) {
  std::uint32_t word = 0;
  std::memcpy(&word, bytes.data() + i * width, width);  // little-endian host
  return word;
}

TEST(BulkTest, ByteStorageMatchesScalarEncodeAndDecodeForEveryScalarType) {
  const std::vector<float> in = mixed_values(5000);  // several chunks
  for (const DTypeInfo& row : all_dtypes()) {
    if (is_mx_packed(row.dtype)) continue;
    for (RoundingMode rounding : {RoundingMode::kNearestEven, RoundingMode::kStochastic}) {
      ConvertOptions options;
      options.rounding = rounding;
      options.seed = 3;
      options.first_index = 1000;
      std::vector<std::byte> bytes(in.size() * row.storage_bytes);
      encode_bytes(row.dtype, in, bytes, options);
      std::vector<float> out(in.size());
      decode_bytes(row.dtype, bytes, out);
      for (std::size_t i = 0; i < in.size(); ++i) {
        const std::uint32_t code = load_word(bytes, i, row.storage_bytes);
        ASSERT_EQ(code, encode(row.dtype, in[i], options, 1000 + i)) << row.name << " #" << i;
        ASSERT_EQ(std::bit_cast<std::uint32_t>(out[i]),
                  std::bit_cast<std::uint32_t>(decode(row.dtype, code)))
            << row.name;
      }
    }
  }
}

TEST(BulkTest, X4TypesPackFourElementsWithoutScale) {
  const std::vector<float> in = {1.0f, -2.0f, 448.0f, 0.0f, 0.5f, 0.25f, 6.0f, -0.5f};
  std::vector<std::uint32_t> words(2);
  encode_array(DType::kFloat8E4M3x4, in, words);
  EXPECT_EQ(words[0], 0x007EC038u);  // 1.0 = 0x38, -2.0 = 0xC0, 448 = 0x7E, 0 = 0x00
  std::vector<std::uint16_t> fp4(2);
  encode_array(DType::kFloat4E2M1x4, in, fp4);
  EXPECT_EQ(fp4[0], 0x07C2u);  // 1.0 = 0x2, -2.0 = 0xC, 448 saturates to 6 = 0x7, 0
  EXPECT_EQ(fp4[1], 0x9701u);  // 0.5 = 0x1, 0.25 -> 0, 6 = 0x7, -0.5 = 0x9
  std::vector<float> back(8);
  decode_array(DType::kFloat4E2M1x4, std::span<const std::uint16_t>(fp4), back);
  EXPECT_EQ(back, (std::vector<float>{1.0f, -2.0f, 6.0f, 0.0f, 0.5f, 0.0f, 6.0f, -0.5f}));
}

TEST(BulkTest, ConvertBetweenTypesRoundsOnce) {
  const std::vector<float> in = mixed_values(3000);
  std::vector<std::byte> bf16(in.size() * 2), fp8_direct(in.size()), fp8_via(in.size());
  encode_bytes(DType::kBFloat16, in, bf16);
  std::vector<float> bf16_values(in.size());
  decode_bytes(DType::kBFloat16, bf16, bf16_values);
  encode_bytes(DType::kFloat8E4M3, bf16_values, fp8_direct);
  convert_bytes(DType::kBFloat16, bf16, DType::kFloat8E4M3, fp8_via);
  EXPECT_EQ(fp8_direct, fp8_via);
}

TEST(BulkTest, IntegerToIntegerConversionIsExactAndSaturates) {
  const std::vector<std::int32_t> values = {16777217, -5, 2147483647, 70000, -70000};
  std::vector<std::byte> in(values.size() * 4);
  std::memcpy(in.data(), values.data(), in.size());
  std::vector<std::byte> u32(in.size()), i16(values.size() * 2);
  convert_bytes(DType::kInt32, in, DType::kUInt32, u32);
  std::vector<std::uint32_t> u32_values(values.size());
  std::memcpy(u32_values.data(), u32.data(), u32.size());
  EXPECT_EQ(u32_values, (std::vector<std::uint32_t>{16777217u, 0u, 2147483647u, 70000u, 0u}));
  convert_bytes(DType::kInt32, in, DType::kInt16, i16);
  std::vector<std::int16_t> i16_values(values.size());
  std::memcpy(i16_values.data(), i16.data(), i16.size());
  EXPECT_EQ(i16_values, (std::vector<std::int16_t>{32767, -5, 32767, 32767, -32768}));
}

TEST(BulkTest, MismatchedSizesThrow) {
  std::vector<float> in(8);
  std::vector<std::uint8_t> small(7);
  std::vector<std::uint16_t> words16(8);
  EXPECT_THROW(encode_array(DType::kFloat8E4M3, in, small), std::invalid_argument);
  EXPECT_THROW(encode_array(DType::kFloat8E4M3, in, words16), std::invalid_argument);
  EXPECT_THROW(encode(DType::kFloat8E4M3x4, 1.0f), std::invalid_argument);
  std::vector<std::byte> bytes(3);
  EXPECT_THROW(encode_bytes(DType::kBFloat16, in, bytes), std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::numerics
