// Data types of the NeuronCore, with NKI's names. This is the shared vocabulary of every
// layer (isa operands, sim memories, kernel tiles), so it has no dependencies.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace trnsim::numerics {

enum class DType : std::uint8_t {
  kFloat32,     // IEEE binary32
  kTFloat32,    // 1s 8e 10m, stored in 32 bits (low 13 mantissa bits zero)
  kBFloat16,    // 1s 8e 7m
  kFloat16,     // IEEE binary16
  kFloat8E4M3,  // OCP E4M3 "fn": no Inf, NaN = S.1111.111, max 448 (NKI float8_e4m3fn)
  kFloat8E5M2,  // OCP E5M2: IEEE-like, Inf and NaN, max 57344
  kFloat6E3M2,  // OCP FP6 E3M2: no Inf/NaN, max 28 (one element per byte, low 6 bits)
  kFloat6E2M3,  // OCP FP6 E2M3: no Inf/NaN, max 7.5 (one element per byte, low 6 bits)
  kFloat4E2M1,  // OCP FP4 E2M1: no Inf/NaN, max 6 (one element per byte, low 4 bits)
  kFloat8E8M0,  // OCP E8M0 MX scale: 2^(e-127), 0xFF = NaN, no zero, no sign
  kInt8,
  kInt16,
  kInt32,
  kUInt8,
  kUInt16,
  kUInt32,
  // Trainium3 x4-packed MX element types: four elements along the free dim in one word.
  kFloat8E4M3x4,  // 4 x E4M3 in 32 bits (element i in bits [8i, 8i+8))
  kFloat8E5M2x4,  // 4 x E5M2 in 32 bits
  kFloat4E2M1x4,  // 4 x E2M1 in 16 bits (element i in bits [4i, 4i+4))
  // NKI's legacy float8_e4m3, Neuron's "FP8_EXP4 (IEEE-754)": bias 7 like E4M3 "fn", but
  // exponent 1111 is Inf (S.1111.000) and NaN (S.1111.xxx), so the largest finite is 240.
  // NeuronCore-v2/v3's FP8 E4M3 is this type; v4 has both (docs/numerics.md).
  kFloat8E4M3Ieee,
};

inline constexpr int kNumDTypes = static_cast<int>(DType::kFloat8E4M3Ieee) + 1;

struct DTypeInfo {
  DType dtype;
  std::string_view name;           // NKI spelling, e.g. "bfloat16", "float8_e4m3fn_x4"
  std::uint8_t storage_bytes;      // bytes of one storage word
  std::uint8_t elements_per_word;  // 4 for the x4-packed types, else 1
  std::uint8_t element_bits;       // meaningful bits of one element
  bool is_float;
  bool is_signed;
};

const DTypeInfo& info(DType t);
inline std::string_view name(DType t) {
  return info(t).name;
}
inline std::size_t storage_bytes(DType t) {
  return info(t).storage_bytes;
}
inline bool is_float(DType t) {
  return info(t).is_float;
}
inline bool is_integer(DType t) {
  return !info(t).is_float;
}
inline bool is_mx_packed(DType t) {
  return t == DType::kFloat8E4M3x4 || t == DType::kFloat8E5M2x4 || t == DType::kFloat4E2M1x4;
}
// The element type held in each lane of an x4-packed type (identity for other types).
DType unpacked_element(DType t);

// Accepts NKI names ("float8_e4m3fn", "bfloat16", ...) and short aliases ("fp32", "bf16",
// "fp8_e4m3", "mxfp8", ...). Returns nullopt for anything else.
std::optional<DType> parse_dtype(std::string_view text);
std::span<const DTypeInfo> all_dtypes();

}  // namespace trnsim::numerics
