// Internal: the per-element conversion kernels, as inline templates over a format
// description known at compile time. The bulk loops in convert.cpp and mx.cpp instantiate
// them once per (format, rounding, overflow) and dispatch once per array, so the loop bodies
// are straight-line bit manipulation that g++ -O3 vectorises (SSE2 baseline: constant
// shifts, 32-bit adds/compares, float adds/multiplies and float<->int32 conversions only).
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

#include "numerics/numerics.h"

namespace trnsim::numerics::detail {

static_assert(std::endian::native == std::endian::little, "storage words are little-endian");
static_assert(std::numeric_limits<float>::is_iec559, "fp32 must be IEEE binary32");

// A binary floating-point format narrower than (or as wide as) fp32 in both fields.
struct FloatFormat {
  int exp_bits;
  int man_bits;
  int bias;
  bool has_inf;           // IEEE-style: exponent all ones is Inf (mantissa 0) or NaN
  bool has_nan;           // false for FP6/FP4
  std::uint32_t max_mag;  // code (without sign) of the largest finite magnitude
  std::uint32_t nan_mag;  // code (without sign) of the canonical NaN, when has_nan
};

inline constexpr FloatFormat kBF16{8, 7, 127, true, true, 0x7F7F, 0x7FC0};
inline constexpr FloatFormat kTF32Field{8, 10, 127, true, true, 0x3FBFF, 0x3FE00};  // 19-bit
inline constexpr FloatFormat kFP16{5, 10, 15, true, true, 0x7BFF, 0x7E00};
inline constexpr FloatFormat kE4M3{4, 3, 7, false, true, 0x7E, 0x7F};
inline constexpr FloatFormat kE5M2{5, 2, 15, true, true, 0x7B, 0x7E};
inline constexpr FloatFormat kE4M3Ieee{4, 3, 7, true, true, 0x77, 0x7C};  // legacy, max 240
inline constexpr FloatFormat kE3M2{3, 2, 3, false, false, 0x1F, 0};
inline constexpr FloatFormat kE2M3{2, 3, 1, false, false, 0x1F, 0};
inline constexpr FloatFormat kE2M1{2, 1, 1, false, false, 0x7, 0};

constexpr std::uint32_t float_bits(float f) {
  return std::bit_cast<std::uint32_t>(f);
}
constexpr float bits_float(std::uint32_t u) {
  return std::bit_cast<float>(u);
}

// 2^e as a float, for e in the normal fp32 range (compile-time constants only).
constexpr float pow2(int e) {
  return bits_float(static_cast<std::uint32_t>(e + 127) << 23);
}

constexpr std::uint32_t kAbsMask = 0x7FFFFFFFu;
constexpr std::uint32_t kFp32Inf = 0x7F800000u;

// ---- Counter-based random bits --------------------------------------------------------
// A 32-bit integer finaliser (the "lowbias32" constants published by C. Wellons): a
// bijection with full avalanche, made of 32-bit multiplies and shifts so it vectorises.
constexpr std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x21F0AAADu;
  x ^= x >> 15;
  x *= 0xD35A2D97u;
  x ^= x >> 15;
  return x;
}

struct StochasticKey {
  std::uint32_t k0, k1;
};

constexpr StochasticKey make_stochastic_key(std::uint64_t seed) {
  const std::uint32_t k0 = mix32(static_cast<std::uint32_t>(seed) ^ 0x9E3779B9u);
  const std::uint32_t k1 = mix32(static_cast<std::uint32_t>(seed >> 32) ^ k0 ^ 0x85EBCA6Bu);
  return {k0, k1};
}

// r(seed, i) = mix32(mix32(lo(i) ^ k0) ^ (hi(i) + k1)): two finaliser rounds so neighbouring
// indices (and the two halves of a 64-bit index) are decorrelated.
constexpr std::uint32_t stochastic_bits_keyed(StochasticKey key, std::uint64_t index) {
  const auto lo = static_cast<std::uint32_t>(index);
  const auto hi = static_cast<std::uint32_t>(index >> 32);
  return mix32(mix32(lo ^ key.k0) ^ (hi + key.k1));
}

// ---- fp32 -> narrow float --------------------------------------------------------------
// Returns the code (sign in bit exp_bits + man_bits). `random` is used only by kStochastic.
template <FloatFormat F, RoundingMode R, OverflowMode O>
inline std::uint32_t encode_float(std::uint32_t bits, std::uint32_t random) {
  constexpr int kShift = 23 - F.man_bits;  // fp32 mantissa bits the format drops
  constexpr int kSignPos = F.exp_bits + F.man_bits;
  constexpr std::uint32_t kRebias = static_cast<std::uint32_t>(127 - F.bias) << F.man_bits;
  // fp32 bits of the format's smallest normal; below it the format is subnormal.
  constexpr std::uint32_t kMinNormalBits = static_cast<std::uint32_t>(128 - F.bias) << 23;
  constexpr int kMinSubnormalExp = 1 - F.bias - F.man_bits;

  const std::uint32_t sign = (bits >> 31) << kSignPos;
  const std::uint32_t a = bits & kAbsMask;

  // Normal range: round the fp32 bit pattern at bit kShift, then move the exponent bias.
  // A carry out of the mantissa correctly bumps the exponent (and may reach Inf/overflow).
  std::uint32_t rounded;
  if constexpr (R == RoundingMode::kNearestEven) {
    rounded = a + ((1u << (kShift - 1)) - 1) + ((a >> kShift) & 1u);
  } else {
    rounded = a + (random >> (32 - kShift));
  }
  std::uint32_t code = (rounded >> kShift) - kRebias;

  if constexpr (kMinNormalBits > 0x00800000u) {
    // The format's subnormal range lies inside fp32's normal range: the ulp there is fixed,
    // 2^kMinSubnormalExp. Clamp first so the other lanes stay in range for the conversions.
    const std::uint32_t a_sub = a < kMinNormalBits ? a : kMinNormalBits;
    std::uint32_t sub_code;
    if constexpr (R == RoundingMode::kNearestEven) {
      // Adding 2^(kMinSubnormalExp + 23) makes the fp32 ulp equal the format's subnormal
      // ulp, so the fp32 adder performs the round-to-nearest-even for us.
      constexpr float kMagic = pow2(kMinSubnormalExp + 23);
      sub_code = float_bits(bits_float(a_sub) + kMagic) - float_bits(kMagic);
    } else {
      // q = |x| / ulp is exact (power-of-two scale); code = floor(q + r / 2^32). The
      // fraction of q is taken to 32 bits in two exact 16-bit steps (float -> int32 only).
      constexpr float kToUlps = pow2(-kMinSubnormalExp);
      const float q = bits_float(a_sub) * kToUlps;
      const auto whole = static_cast<std::int32_t>(q);
      const float frac_hi = (q - static_cast<float>(whole)) * 65536.0f;
      const auto hi = static_cast<std::int32_t>(frac_hi);
      const auto lo = static_cast<std::int32_t>((frac_hi - static_cast<float>(hi)) * 65536.0f);
      const std::uint32_t frac32 =
          (static_cast<std::uint32_t>(hi) << 16) | static_cast<std::uint32_t>(lo);
      const std::uint32_t carry = (frac32 + random) < frac32 ? 1u : 0u;
      sub_code = static_cast<std::uint32_t>(whole) + carry;
    }
    code = a < kMinNormalBits ? sub_code : code;
  }

  // Overflow (including an Inf input, whose code lands far above max_mag).
  constexpr bool kProduceInfNan = O == OverflowMode::kInfNan && (F.has_inf || F.has_nan);
  constexpr std::uint32_t kOverflowMag =
      !kProduceInfNan ? F.max_mag : (F.has_inf ? F.max_mag + 1 : F.nan_mag);
  code = code > F.max_mag ? kOverflowMag : code;

  // NaN: keep the sign, keep the top payload bits and force the quiet bit where the format
  // has IEEE NaNs; the single NaN of E4M3; +max for FP6/FP4 (they have no NaN).
  std::uint32_t result = sign | code;
  if constexpr (F.has_inf) {
    constexpr std::uint32_t kManMask = (1u << F.man_bits) - 1;
    constexpr std::uint32_t kQuiet = 1u << (F.man_bits - 1);
    const std::uint32_t nan_code = sign | (F.max_mag + 1) | ((a >> kShift) & kManMask) | kQuiet;
    result = a > kFp32Inf ? nan_code : result;
  } else if constexpr (F.has_nan) {
    result = a > kFp32Inf ? (sign | F.nan_mag) : result;
  } else {
    result = a > kFp32Inf ? F.max_mag : result;
  }
  return result;
}

// ---- narrow float -> fp32 (exact) --------------------------------------------------------
template <FloatFormat F>
inline float decode_float(std::uint32_t code) {
  constexpr int kSignPos = F.exp_bits + F.man_bits;
  constexpr std::uint32_t kMagMask = (1u << kSignPos) - 1;
  constexpr std::uint32_t kExpAllOnes = (1u << F.exp_bits) - 1;
  constexpr std::uint32_t kRebias = static_cast<std::uint32_t>(127 - F.bias) << 23;
  constexpr int kMinSubnormalExp = 1 - F.bias - F.man_bits;

  const std::uint32_t sign = ((code >> kSignPos) & 1u) << 31;
  const std::uint32_t mag = code & kMagMask;
  const std::uint32_t exp_field = mag >> F.man_bits;

  std::uint32_t bits = (mag << (23 - F.man_bits)) + kRebias;
  if constexpr (F.bias != 127) {
    // Subnormal: mag * 2^kMinSubnormalExp, exact (mag < 2^man_bits, power-of-two scale).
    const std::uint32_t sub_bits =
        float_bits(static_cast<float>(static_cast<std::int32_t>(mag)) * pow2(kMinSubnormalExp));
    bits = exp_field == 0 ? sub_bits : bits;
  }
  if constexpr (F.has_inf) {
    // Inf, or NaN with its payload moved to the top of the fp32 mantissa.
    const std::uint32_t special = kFp32Inf | (mag << (23 - F.man_bits));
    bits = exp_field == kExpAllOnes ? special : bits;
  } else if constexpr (F.has_nan) {
    bits = mag == F.nan_mag ? 0x7FC00000u : bits;
  }
  return bits_float(bits | sign);
}

// ---- E8M0 (unsigned power of two, no zero, 0xFF = NaN) ------------------------------------
// Round to nearest power of two by code (a tie 1.5 * 2^k goes to the even code). Values
// below 2^-127 (including zero) clamp to 0x00; negative values and NaN give 0xFF.
template <RoundingMode R, OverflowMode O>
inline std::uint32_t encode_e8m0(std::uint32_t bits, std::uint32_t random) {
  const std::uint32_t a = bits & kAbsMask;
  std::uint32_t rounded;
  if constexpr (R == RoundingMode::kNearestEven) {
    rounded = a + ((1u << 22) - 1) + ((a >> 23) & 1u);
  } else {
    rounded = a + (random >> 9);
  }
  std::uint32_t code = rounded >> 23;
  // Below 2^-126 (fp32 subnormal): the neighbours are 2^-127 (code 0) and 2^-126 (code 1).
  // 0x00400000 is 2^-127, so round relative to it in the same way.
  std::uint32_t sub_code;
  if constexpr (R == RoundingMode::kNearestEven) {
    sub_code = a > 0x00600000u ? 1u : 0u;  // the tie 1.5 * 2^-127 goes to the even code 0
  } else {
    // floor(q + r/2^32) with q = a / 2^22 - 1 for a in [2^22, 2^23), else clamp to 0.
    const std::uint32_t frac = (a << 10);  // (a - 2^22) / 2^22 in 32-bit fixed point
    sub_code = (a >= 0x00400000u && frac + random < frac) ? 1u : 0u;
  }
  code = a < 0x00800000u ? sub_code : code;
  constexpr std::uint32_t kOverflowCode = O == OverflowMode::kInfNan ? 0xFFu : 0xFEu;
  code = code > 0xFEu ? kOverflowCode : code;
  const bool negative_or_nan = (bits >> 31) != 0 || a > kFp32Inf;
  return (negative_or_nan && a != 0) ? 0xFFu : code;
}

inline float decode_e8m0(std::uint32_t code) {
  const std::uint32_t c = code & 0xFFu;
  std::uint32_t bits = c << 23;
  bits = c == 0 ? 0x00400000u : bits;
  bits = c == 0xFF ? 0x7FC00000u : bits;
  return bits_float(bits);
}

// ---- fp32 -> integer: round to nearest even, saturate, NaN -> 0 ----------------------------
// Rounds to an integral float first: below 2^23 the add/subtract of 2^23 lets the fp32 adder
// do the tie-to-even; from 2^23 up every float is already an integer.
inline float round_to_integral_even(float x) {
  const float magnitude = std::bit_cast<float>(float_bits(x) & kAbsMask);
  const float rounded = (magnitude + 8388608.0f) - 8388608.0f;
  const float result = magnitude < 8388608.0f ? rounded : magnitude;
  return std::bit_cast<float>(float_bits(result) | (float_bits(x) & 0x80000000u));
}

template <class Int>
inline Int encode_int(float x) {
  using Limits = std::numeric_limits<Int>;
  // Both bounds are powers of two (or zero), hence exact floats.
  constexpr float kLowest = static_cast<float>(Limits::min());
  // max / 2 + 1 is exact in integers: 2^(digits - 1).
  constexpr float kAboveMax =
      static_cast<float>(Limits::max() / 2 + 1) * 2.0f;  // NOLINT(bugprone-integer-division)
  const float r = round_to_integral_even(x);
  if (!(r == r)) return 0;
  if (r >= kAboveMax) return Limits::max();
  if (r <= kLowest) return Limits::min();
  return static_cast<Int>(r);
}

}  // namespace trnsim::numerics::detail
