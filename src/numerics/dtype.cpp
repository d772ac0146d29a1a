#include "numerics/dtype.h"

#include <array>
#include <string>

namespace trnsim::numerics {
namespace {

// One row per enumerator, in enumerator order (checked below), so info() is an index.
constexpr std::array<DTypeInfo, kNumDTypes> kDTypeTable{{
    {DType::kFloat32, "float32", 4, 1, 32, true, true},
    {DType::kTFloat32, "tfloat32", 4, 1, 19, true, true},
    {DType::kBFloat16, "bfloat16", 2, 1, 16, true, true},
    {DType::kFloat16, "float16", 2, 1, 16, true, true},
    {DType::kFloat8E4M3, "float8_e4m3fn", 1, 1, 8, true, true},
    {DType::kFloat8E5M2, "float8_e5m2", 1, 1, 8, true, true},
    {DType::kFloat6E3M2, "float6_e3m2fn", 1, 1, 6, true, true},
    {DType::kFloat6E2M3, "float6_e2m3fn", 1, 1, 6, true, true},
    {DType::kFloat4E2M1, "float4_e2m1fn", 1, 1, 4, true, true},
    {DType::kFloat8E8M0, "float8_e8m0fnu", 1, 1, 8, true, false},
    {DType::kInt8, "int8", 1, 1, 8, false, true},
    {DType::kInt16, "int16", 2, 1, 16, false, true},
    {DType::kInt32, "int32", 4, 1, 32, false, true},
    {DType::kUInt8, "uint8", 1, 1, 8, false, false},
    {DType::kUInt16, "uint16", 2, 1, 16, false, false},
    {DType::kUInt32, "uint32", 4, 1, 32, false, false},
    {DType::kFloat8E4M3x4, "float8_e4m3fn_x4", 4, 4, 8, true, true},
    {DType::kFloat8E5M2x4, "float8_e5m2_x4", 4, 4, 8, true, true},
    {DType::kFloat4E2M1x4, "float4_e2m1fn_x4", 2, 4, 4, true, true},
    {DType::kFloat8E4M3Ieee, "float8_e4m3", 1, 1, 8, true, true},
}};

constexpr bool table_is_in_enum_order() {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (static_cast<int>(kDTypeTable[i].dtype) != i) return false;
  }
  return true;
}
static_assert(table_is_in_enum_order(), "kDTypeTable rows must follow the DType order");

struct Alias {
  std::string_view text;
  DType dtype;
};

// Short spellings used on the command line and in tests. An "fp8_"/"fp6_"/"fp4_" alias names
// the same type as the NKI name it shortens, so "fp8_e4m3" is the legacy float8_e4m3 (also
// "fp8_exp4", the Neuron docs' name) and "fp8_e4m3fn" the OCP type; the bare element names
// of the OCP MX spec ("e4m3", "e5m2", "e2m1", ...) are the OCP types.
constexpr std::array<Alias, 34> kAliases{{
    {"fp32", DType::kFloat32},
    {"f32", DType::kFloat32},
    {"tf32", DType::kTFloat32},
    {"bf16", DType::kBFloat16},
    {"fp16", DType::kFloat16},
    {"f16", DType::kFloat16},
    {"half", DType::kFloat16},
    {"fp8_e4m3", DType::kFloat8E4M3Ieee},
    {"fp8_e4m3fn", DType::kFloat8E4M3},
    {"e4m3", DType::kFloat8E4M3},
    {"fp8_exp4", DType::kFloat8E4M3Ieee},
    {"fp8_e5m2", DType::kFloat8E5M2},
    {"e5m2", DType::kFloat8E5M2},
    {"fp6_e3m2", DType::kFloat6E3M2},
    {"e3m2", DType::kFloat6E3M2},
    {"fp6_e2m3", DType::kFloat6E2M3},
    {"e2m3", DType::kFloat6E2M3},
    {"fp4_e2m1", DType::kFloat4E2M1},
    {"e2m1", DType::kFloat4E2M1},
    {"fp4", DType::kFloat4E2M1},
    {"e8m0", DType::kFloat8E8M0},
    {"fp8_e8m0", DType::kFloat8E8M0},
    {"float8_e8m0", DType::kFloat8E8M0},
    {"i8", DType::kInt8},
    {"i16", DType::kInt16},
    {"i32", DType::kInt32},
    {"u8", DType::kUInt8},
    {"u16", DType::kUInt16},
    {"u32", DType::kUInt32},
    {"mxfp8", DType::kFloat8E4M3x4},
    {"fp8_e4m3_x4", DType::kFloat8E4M3x4},
    {"fp8_e5m2_x4", DType::kFloat8E5M2x4},
    {"mxfp4", DType::kFloat4E2M1x4},
    {"fp4_e2m1_x4", DType::kFloat4E2M1x4},
}};

}  // namespace

const DTypeInfo& info(DType t) {
  return kDTypeTable[static_cast<std::size_t>(t)];
}

DType unpacked_element(DType t) {
  switch (t) {
    case DType::kFloat8E4M3x4:
      return DType::kFloat8E4M3;
    case DType::kFloat8E5M2x4:
      return DType::kFloat8E5M2;
    case DType::kFloat4E2M1x4:
      return DType::kFloat4E2M1;
    default:
      return t;
  }
}

std::optional<DType> parse_dtype(std::string_view text) {
  for (const DTypeInfo& row : kDTypeTable) {
    if (row.name == text) return row.dtype;
  }
  for (const Alias& alias : kAliases) {
    if (alias.text == text) return alias.dtype;
  }
  return std::nullopt;
}

std::span<const DTypeInfo> all_dtypes() {
  return kDTypeTable;
}

}  // namespace trnsim::numerics
