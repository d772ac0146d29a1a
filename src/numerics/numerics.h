// Conversions between fp32 and every trnsim data type, and OCP Microscaling (MX) blocks.
//
// Every type converts to and from fp32: all formats of 16 bits or less decode to fp32
// exactly, so a conversion between two such types through fp32 rounds only once.
// Rounding, overflow and special values are described in docs/numerics.md; the short form:
//  - kNearestEven is IEEE round-to-nearest-even on the code grid of the target format.
//  - kStochastic adds 32 uniform random bits below the target's last kept bit and truncates
//    (result = floor(|x| / ulp + r / 2^32) * ulp, r = stochastic_bits(seed, index)), so
//    results depend only on (seed, element index), never on threads or how an array is split.
//  - OverflowMode picks what a finite value too large for the format becomes: the largest
//    finite value (kSaturate) or Inf/NaN (kInfNan, on formats that have them).
//  - Integer targets always round to nearest even and saturate; NaN becomes 0.
//
// Codes are returned as the format's storage word zero-extended to 32 bits (int8 -1 is 0xFF;
// FP6/FP4 occupy the low bits of a byte; TF32 is the 32-bit word with 13 zero low bits).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "numerics/dtype.h"

namespace trnsim::numerics {

enum class RoundingMode : std::uint8_t { kNearestEven, kStochastic };
enum class OverflowMode : std::uint8_t { kSaturate, kInfNan };

struct ConvertOptions {
  RoundingMode rounding = RoundingMode::kNearestEven;
  OverflowMode overflow = OverflowMode::kInfNan;
  std::uint64_t seed = 0;  // stochastic rounding only
  // Index of element 0 of a bulk call within the whole logical array: converting an array in
  // pieces with first_index = piece offset gives the same codes as converting it at once.
  std::uint64_t first_index = 0;
};

// The 32 random bits stochastic rounding uses for element `index` (counter-based hash).
std::uint32_t stochastic_bits(std::uint64_t seed, std::uint64_t index);

namespace detail {
inline bool is_nan(float x) {  // without std::isnan's call, so loops over it vectorise
  return x != x;
}
}  // namespace detail

// IEEE 754-2019 maximum/minimum: a NaN operand gives NaN, and +0 is larger than -0. Written
// with selects only so loops over it vectorise. For equal operands the bitwise AND (max) or
// OR (min) of the encodings picks +0 or -0 and is the identity otherwise.
inline float ieee_max(float a, float b) {
  const float larger = a > b ? a : b;
  const float tie =
      std::bit_cast<float>(std::bit_cast<std::uint32_t>(a) & std::bit_cast<std::uint32_t>(b));
  const float ordered = a == b ? tie : larger;
  return (detail::is_nan(a) || detail::is_nan(b)) ? a + b : ordered;
}
inline float ieee_min(float a, float b) {
  const float smaller = a < b ? a : b;
  const float tie =
      std::bit_cast<float>(std::bit_cast<std::uint32_t>(a) | std::bit_cast<std::uint32_t>(b));
  const float ordered = a == b ? tie : smaller;
  return (detail::is_nan(a) || detail::is_nan(b)) ? a + b : ordered;
}

// ---- Scalar conversions (any type except the x4-packed ones) ---------------------------
// `index` is the element index fed to stochastic rounding (options.first_index is ignored).
std::uint32_t encode(DType type, float value, const ConvertOptions& options = {},
                     std::uint64_t index = 0);
// Exact for every float type of <= 16 bits; integers round to nearest fp32.
float decode(DType type, std::uint32_t code);

// Largest finite value of a float type (for E8M0: 2^127); the maximum for integer types.
float max_finite(DType type);

// Stored mantissa bits of a float type (23 for fp32, 7 for bf16; an x4-packed type's element's);
// nullopt for the integer types and E8M0, which have none.
std::optional<int> mantissa_bits(DType type);

// ---- Bulk conversions -------------------------------------------------------------------
// `out` holds storage words of `type` and the span's element size must equal
// storage_bytes(type). For x4-packed types four consecutive inputs go into one word (element
// i in the i-th lane, no scale applied), so in.size() == 4 * out.size(); otherwise the sizes
// are equal. Throws std::invalid_argument on mismatch. Element k uses the stochastic index
// options.first_index + k.
void encode_array(DType type, std::span<const float> in, std::span<std::uint8_t> out,
                  const ConvertOptions& options = {});
void encode_array(DType type, std::span<const float> in, std::span<std::uint16_t> out,
                  const ConvertOptions& options = {});
void encode_array(DType type, std::span<const float> in, std::span<std::uint32_t> out,
                  const ConvertOptions& options = {});
void decode_array(DType type, std::span<const std::uint8_t> in, std::span<float> out);
void decode_array(DType type, std::span<const std::uint16_t> in, std::span<float> out);
void decode_array(DType type, std::span<const std::uint32_t> in, std::span<float> out);

// Untyped storage (little-endian words of storage_bytes(type) bytes each), for memories.
void encode_bytes(DType type, std::span<const float> in, std::span<std::byte> out,
                  const ConvertOptions& options = {});
void decode_bytes(DType type, std::span<const std::byte> in, std::span<float> out);
// Storage of `from` to storage of `to`: through fp32 (one rounding), except integer to
// integer, which saturates directly so 32-bit values above 2^24 stay exact.
void convert_bytes(DType from, std::span<const std::byte> in, DType to, std::span<std::byte> out,
                   const ConvertOptions& options = {});

// ---- MX block formats (OCP Microscaling v1.0) ------------------------------------------
inline constexpr std::size_t kMxBlockSize = 32;

// How the shared scale X = 2^s is chosen from the block's largest magnitude amax:
//  kOcp:      s = floor(log2 amax) - emax_elem        (OCP v1.0 section 6.3)
//  kTrainium: s = floor(log2 amax) - (emax_elem - 1)  (NKI quantize_mx: 2x the OCP scale, so
//             the largest values never clamp, at the cost of one bit at the bottom)
enum class MxScaleRule : std::uint8_t { kOcp, kTrainium };

struct MxOptions {
  DType element = DType::kFloat8E4M3;  // E4M3, E5M2, E3M2, E2M3 or E2M1
  MxScaleRule scale_rule = MxScaleRule::kOcp;
  RoundingMode rounding = RoundingMode::kNearestEven;  // elements always saturate
  std::uint64_t seed = 0;
  std::uint64_t first_index = 0;  // stochastic index of in[0], as in ConvertOptions
};

// E8M0 scale of one block: 0xFF if it holds a NaN or Inf, 0x00 if it is all zero or the
// exponent underflows, else 127 + s clamped to [0, 254].
std::uint8_t mx_scale_code(std::span<const float> block, DType element, MxScaleRule rule);
// E8M0 code to its value (0xFF -> NaN, 0x00 -> 2^-127).
float e8m0_to_float(std::uint8_t scale_code);
// Largest unbiased exponent of a normal element value (8 for E4M3, 15 for E5M2, ...).
int mx_element_emax(DType element);

// Quantises one block of at most 32 values into element codes (one per byte); returns the
// scale code. A block with NaN/Inf gets scale 0xFF and codes set to the element's NaN code
// (0 for FP6/FP4, which have none).
std::uint8_t quantize_mx_block(std::span<const float> block, std::span<std::uint8_t> codes,
                               const MxOptions& options);
// Whole arrays: blocks are runs of 32 consecutive elements (the last may be shorter);
// codes.size() == in.size(), scales.size() == ceil(in.size() / 32).
void quantize_mx(std::span<const float> in, std::span<std::uint8_t> codes,
                 std::span<std::uint8_t> scales, const MxOptions& options);
void dequantize_mx(DType element, std::span<const std::uint8_t> codes,
                   std::span<const std::uint8_t> scales, std::span<float> out);

// x4-packed layouts: `packed` is kFloat8E4M3x4, kFloat8E5M2x4 (32-bit words, element i in bits
// [8i, 8i+8)) or kFloat4E2M1x4 (16-bit words, element i in bits [4i, 4i+4)); words are stored
// little-endian, storage_bytes(packed) bytes each; codes.size() == 4 * number of words.
void pack_x4(DType packed, std::span<const std::uint8_t> codes, std::span<std::byte> words);
void unpack_x4(DType packed, std::span<const std::byte> words, std::span<std::uint8_t> codes);
// MX quantisation straight into the packed layout (options.element is ignored: the element
// type is unpacked_element(packed)); in.size() must be a multiple of 4.
void quantize_mx_packed(DType packed, std::span<const float> in, std::span<std::byte> words,
                        std::span<std::uint8_t> scales, const MxOptions& options);
void dequantize_mx_packed(DType packed, std::span<const std::byte> words,
                          std::span<const std::uint8_t> scales, std::span<float> out);

}  // namespace trnsim::numerics
