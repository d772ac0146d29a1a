// The shared dtype table: one row per enumerator with consistent sizes, and name parsing.
#include "numerics/dtype.h"

#include <gtest/gtest.h>

namespace trnsim::numerics {
namespace {

TEST(DTypeTest, TableHasOneRowPerEnumeratorInOrder) {
  ASSERT_EQ(all_dtypes().size(), static_cast<std::size_t>(kNumDTypes));
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto t = static_cast<DType>(i);
    EXPECT_EQ(info(t).dtype, t);
    EXPECT_FALSE(name(t).empty());
    // Every element fits its word, and the word holds exactly elements_per_word elements
    // (x4 types) or one element.
    EXPECT_LE(info(t).element_bits * info(t).elements_per_word, 8 * storage_bytes(t));
  }
}

TEST(DTypeTest, SizesOfTheTypesOtherLayersRelyOn) {
  EXPECT_EQ(storage_bytes(DType::kFloat32), 4u);
  EXPECT_EQ(storage_bytes(DType::kTFloat32), 4u);
  EXPECT_EQ(storage_bytes(DType::kBFloat16), 2u);
  EXPECT_EQ(storage_bytes(DType::kFloat8E4M3), 1u);
  EXPECT_EQ(storage_bytes(DType::kFloat4E2M1), 1u);
  EXPECT_EQ(storage_bytes(DType::kFloat8E4M3x4), 4u);
  EXPECT_EQ(storage_bytes(DType::kFloat4E2M1x4), 2u);
  EXPECT_EQ(info(DType::kFloat4E2M1x4).elements_per_word, 4);
  EXPECT_TRUE(is_mx_packed(DType::kFloat8E5M2x4));
  EXPECT_FALSE(is_mx_packed(DType::kFloat8E5M2));
  EXPECT_EQ(unpacked_element(DType::kFloat8E5M2x4), DType::kFloat8E5M2);
  EXPECT_EQ(unpacked_element(DType::kBFloat16), DType::kBFloat16);
  EXPECT_TRUE(is_integer(DType::kUInt16));
  EXPECT_FALSE(info(DType::kFloat8E8M0).is_signed);
}

TEST(DTypeTest, ParsesNkiNamesAndAliases) {
  for (const DTypeInfo& row : all_dtypes()) EXPECT_EQ(parse_dtype(row.name), row.dtype);
  EXPECT_EQ(parse_dtype("bf16"), DType::kBFloat16);
  // The legacy E4M3 and the OCP one: each short alias names what its NKI name does.
  EXPECT_EQ(parse_dtype("float8_e4m3"), DType::kFloat8E4M3Ieee);
  EXPECT_EQ(parse_dtype("fp8_e4m3"), DType::kFloat8E4M3Ieee);
  EXPECT_EQ(parse_dtype("fp8_exp4"), DType::kFloat8E4M3Ieee);
  EXPECT_EQ(parse_dtype("float8_e4m3fn"), DType::kFloat8E4M3);
  EXPECT_EQ(parse_dtype("fp8_e4m3fn"), DType::kFloat8E4M3);
  EXPECT_EQ(parse_dtype("e4m3"), DType::kFloat8E4M3);
  EXPECT_EQ(parse_dtype("fp4_e2m1"), DType::kFloat4E2M1);
  EXPECT_EQ(parse_dtype("mxfp8"), DType::kFloat8E4M3x4);
  EXPECT_EQ(parse_dtype("e8m0"), DType::kFloat8E8M0);
  EXPECT_FALSE(parse_dtype("float64").has_value());
  EXPECT_FALSE(parse_dtype("").has_value());
}

}  // namespace
}  // namespace trnsim::numerics
