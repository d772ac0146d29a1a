// Internal: one tag type per storage format, giving the bulk loops a uniform
// encode/decode interface, and visit_type(), the single place a run-time DType becomes a
// compile-time tag (the "dispatch once per array" point).
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "numerics/kernels.h"

namespace trnsim::numerics::detail {

// A narrow float format; kCodeShift places the code in its storage word (13 for TF32).
template <FloatFormat F, int kCodeShift = 0>
struct FloatTag {
  static constexpr bool kUsesOptions = true;
  static constexpr int kMantissaBits = F.man_bits;
  template <RoundingMode R, OverflowMode O>
  static std::uint32_t encode(std::uint32_t bits, std::uint32_t random) {
    return encode_float<F, R, O>(bits, random) << kCodeShift;
  }
  static float decode(std::uint32_t code) { return decode_float<F>(code >> kCodeShift); }
};

struct Fp32Tag {
  static constexpr bool kUsesOptions = false;  // fp32 -> fp32 is the identity
  static constexpr int kMantissaBits = 23;
  template <RoundingMode, OverflowMode>
  static std::uint32_t encode(std::uint32_t bits, std::uint32_t) {
    return bits;
  }
  static float decode(std::uint32_t code) { return bits_float(code); }
};

struct E8M0Tag {
  static constexpr bool kUsesOptions = true;
  template <RoundingMode R, OverflowMode O>
  static std::uint32_t encode(std::uint32_t bits, std::uint32_t random) {
    return encode_e8m0<R, O>(bits, random);
  }
  static float decode(std::uint32_t code) { return decode_e8m0(code); }
};

template <class Int>
struct IntTag {
  using Unsigned = std::make_unsigned_t<Int>;
  static constexpr bool kUsesOptions = false;  // always nearest-even and saturating
  template <RoundingMode, OverflowMode>
  static std::uint32_t encode(std::uint32_t bits, std::uint32_t) {
    return static_cast<Unsigned>(encode_int<Int>(bits_float(bits)));
  }
  static Int value(std::uint32_t code) { return static_cast<Int>(static_cast<Unsigned>(code)); }
  static float decode(std::uint32_t code) { return static_cast<float>(value(code)); }
};

template <class T>
struct IsIntTag : std::false_type {};
template <class Int>
struct IsIntTag<IntTag<Int>> : std::true_type {};

[[noreturn]] inline void throw_unsupported(DType type, const char* what) {
  throw std::invalid_argument(std::string(what) + ": unsupported type " + std::string(name(type)));
}

// Calls fn(FloatTag<F>{}) for the FP8/FP6/FP4 element formats (those of the MX types); throws
// naming `what` for any other type.
template <class Fn>
decltype(auto) visit_small_float(DType type, Fn&& fn, const char* what) {
  switch (type) {
    case DType::kFloat8E4M3:
      return fn(FloatTag<kE4M3>{});
    case DType::kFloat8E5M2:
      return fn(FloatTag<kE5M2>{});
    case DType::kFloat6E3M2:
      return fn(FloatTag<kE3M2>{});
    case DType::kFloat6E2M3:
      return fn(FloatTag<kE2M3>{});
    case DType::kFloat4E2M1:
      return fn(FloatTag<kE2M1>{});
    default:
      throw_unsupported(type, what);
  }
}

// Calls fn(Tag{}) for every scalar (non-x4) type; throws for the x4-packed ones.
template <class Fn>
decltype(auto) visit_type(DType type, Fn&& fn) {
  switch (type) {
    case DType::kFloat32:
      return fn(Fp32Tag{});
    case DType::kTFloat32:
      return fn(FloatTag<kTF32Field, 13>{});
    case DType::kBFloat16:
      return fn(FloatTag<kBF16>{});
    case DType::kFloat16:
      return fn(FloatTag<kFP16>{});
    case DType::kFloat8E4M3:
    case DType::kFloat8E5M2:
    case DType::kFloat6E3M2:
    case DType::kFloat6E2M3:
    case DType::kFloat4E2M1:
      return visit_small_float(type, std::forward<Fn>(fn), "scalar conversion");
    case DType::kFloat8E4M3Ieee:  // not an MX element type, so not in visit_small_float
      return fn(FloatTag<kE4M3Ieee>{});
    case DType::kFloat8E8M0:
      return fn(E8M0Tag{});
    case DType::kInt8:
      return fn(IntTag<std::int8_t>{});
    case DType::kInt16:
      return fn(IntTag<std::int16_t>{});
    case DType::kInt32:
      return fn(IntTag<std::int32_t>{});
    case DType::kUInt8:
      return fn(IntTag<std::uint8_t>{});
    case DType::kUInt16:
      return fn(IntTag<std::uint16_t>{});
    case DType::kUInt32:
      return fn(IntTag<std::uint32_t>{});
    case DType::kFloat8E4M3x4:
    case DType::kFloat8E5M2x4:
    case DType::kFloat4E2M1x4:
      break;
  }
  throw_unsupported(type, "scalar conversion (x4-packed types need pack_x4 or MX)");
}

// Calls fn.template operator()<R, O>() with the options' modes as template arguments.
template <class Fn>
decltype(auto) with_modes(RoundingMode rounding, OverflowMode overflow, Fn&& fn) {
  const bool saturate = overflow == OverflowMode::kSaturate;
  if (rounding == RoundingMode::kNearestEven) {
    return saturate ? fn.template operator()<RoundingMode::kNearestEven, OverflowMode::kSaturate>()
                    : fn.template operator()<RoundingMode::kNearestEven, OverflowMode::kInfNan>();
  }
  return saturate ? fn.template operator()<RoundingMode::kStochastic, OverflowMode::kSaturate>()
                  : fn.template operator()<RoundingMode::kStochastic, OverflowMode::kInfNan>();
}

}  // namespace trnsim::numerics::detail
