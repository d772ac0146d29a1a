// Scalar building blocks of the Vector/Scalar/GpSimd semantics (internal to sim).
//
// Everything here is a small inline function of fp32 values or storage words, selected at
// compile time (templates over the operator), so the loops in ops_elementwise.cpp dispatch
// once per instruction and then run without branches on the operator.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "isa/isa.h"
#include "numerics/numerics.h"

namespace trnsim::sim::math {

using isa::ActivationFunc;
using isa::AluOp;
using numerics::DType;

// ---------------------------------------------------------------------------------------
// Data-type facts needed by the semantics. Kept local (a switch, no table lookup) so the
// semantics do not depend on the numerics library's run-time tables.

constexpr bool is_integer_dtype(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
      return true;
    default:
      return false;
  }
}

constexpr bool is_x4_packed(DType t) {
  return t == DType::kFloat8E4M3x4 || t == DType::kFloat8E5M2x4 || t == DType::kFloat4E2M1x4;
}

// Bits of one storage word.
inline unsigned storage_bits(DType t) {
  return 8u * static_cast<unsigned>(numerics::storage_bytes(t));
}

// ---------------------------------------------------------------------------------------
// ALU operators on fp32 values

constexpr bool is_comparison(AluOp op) {
  return op == AluOp::kEqual || op == AluOp::kNotEqual || op == AluOp::kGreater ||
         op == AluOp::kGreaterEqual || op == AluOp::kLess || op == AluOp::kLessEqual;
}

inline bool is_nan(float x) {
  return x != x;
}

// IEEE 754-2019 maximum/minimum (numerics.h: the collectives reduce with them too).
using numerics::ieee_max;
using numerics::ieee_min;

// fp32 -> int32 for bit-vector operators that end up on fp32 operands (mixed op classes):
// truncate toward zero, saturate, NaN -> 0.
inline std::int32_t saturating_int32(float x) {
  if (is_nan(x)) return 0;
  if (x >= 2147483648.0f) return std::numeric_limits<std::int32_t>::max();
  if (x < -2147483648.0f) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(x);
}

// Bit-vector operators on storage words. `width` is the bit width of the left operand's
// storage, needed because right_shift is logical (it shifts in zeros above that width).
// Shift counts outside [0, width) give 0: the shifted-out word is all zeros.
template <AluOp kOp>
inline std::int64_t word_op(std::int64_t a, std::int64_t b, unsigned width) {
  const std::uint64_t mask = width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
  const std::uint64_t ua = static_cast<std::uint64_t>(a) & mask;
  if constexpr (kOp == AluOp::kBitwiseAnd) {
    return a & b;
  } else if constexpr (kOp == AluOp::kBitwiseOr) {
    return a | b;
  } else if constexpr (kOp == AluOp::kBitwiseXor) {
    return a ^ b;
  } else if constexpr (kOp == AluOp::kLeftShift) {
    if (b < 0 || b >= static_cast<std::int64_t>(width)) return 0;
    return static_cast<std::int64_t>((ua << b) & mask);
  } else if constexpr (kOp == AluOp::kRightShift) {
    if (b < 0 || b >= static_cast<std::int64_t>(width)) return 0;
    return static_cast<std::int64_t>(ua >> b);
  } else if constexpr (kOp == AluOp::kInvert) {
    // The word's bits flipped: XOR with all ones, as NKI implements nl.invert. Like the other
    // operators it works on the sign- or zero-extended word; dst keeps its low bits.
    return ~a;
  } else if constexpr (kOp == AluOp::kBypass) {
    return a;
  } else {
    static_assert(isa::is_bitvec_op(kOp), "word_op is only defined for bit-vector operators");
    return 0;
  }
}

// fmod(a, b): the remainder of a / b truncated toward zero, with a's sign. It is always exact
// (representable in fp32), so the C library's result is the engine's. NaN when a is infinite
// or b is 0; a itself when b is infinite and a finite.
inline float fp_fmod(float a, float b) {
  return std::fmod(a, b);
}

// mod(a, b): the remainder of a / b floored, with b's sign (NumPy's mod, Python's %): the
// fmod, plus b when the signs differ (that one addition rounds to fp32, as NumPy's float32
// mod does), a zero result taking b's sign. NaN where fmod is; mod(-1, inf) is inf.
inline float fp_mod(float a, float b) {
  float r = std::fmod(a, b);
  if (b == 0.0f) return r;
  if (r != 0.0f) {
    if ((b < 0.0f) != (r < 0.0f)) r += b;  // false for a NaN r or b: NaN stays
  } else {
    r = std::copysign(0.0f, b);
  }
  return r;
}

// One ALU operator on fp32 operands, as the engines compute it: every result is the fp32
// rounding of the exact result (power and the bit-vector fallbacks excepted, see docs).
template <AluOp kOp>
inline float alu(float a, float b) {
  if constexpr (kOp == AluOp::kBypass) {
    return a;
  } else if constexpr (kOp == AluOp::kAdd) {
    return a + b;
  } else if constexpr (kOp == AluOp::kSubtract) {
    return a - b;
  } else if constexpr (kOp == AluOp::kMultiply) {
    return a * b;
  } else if constexpr (kOp == AluOp::kDivide) {
    return a / b;
  } else if constexpr (kOp == AluOp::kMaximum) {
    return ieee_max(a, b);
  } else if constexpr (kOp == AluOp::kMinimum) {
    return ieee_min(a, b);
  } else if constexpr (kOp == AluOp::kAbsMax) {
    return ieee_max(std::fabs(a), std::fabs(b));
  } else if constexpr (kOp == AluOp::kAbsMin) {
    return ieee_min(std::fabs(a), std::fabs(b));
  } else if constexpr (kOp == AluOp::kPower) {
    return static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  } else if constexpr (kOp == AluOp::kEqual) {
    return a == b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kNotEqual) {
    return a != b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kGreater) {
    return a > b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kGreaterEqual) {
    return a >= b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kLess) {
    return a < b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kLessEqual) {
    return a <= b ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kLogicalAnd) {
    return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kLogicalOr) {
    return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kLogicalXor) {
    return ((a != 0.0f) != (b != 0.0f)) ? 1.0f : 0.0f;
  } else if constexpr (kOp == AluOp::kAverage) {
    return (a + b) * 0.5f;
  } else if constexpr (kOp == AluOp::kMod) {
    return fp_mod(a, b);
  } else if constexpr (kOp == AluOp::kFmod) {
    return fp_fmod(a, b);
  } else {
    static_assert(isa::is_bitvec_op(kOp));
    // Bit-vector operator met on fp32 operands (only when an instruction mixes operator
    // classes): run it on the int32 values and convert back.
    const std::int64_t result = word_op<kOp>(saturating_int32(a), saturating_int32(b), 32);
    return static_cast<float>(static_cast<std::int32_t>(static_cast<std::uint32_t>(result)));
  }
}

// Calls f(std::integral_constant<decltype(value), v>{}) for the v among kValues that equals
// `value`, so callers write one generic loop body; throws std::invalid_argument(`unknown`)
// when none does.
template <auto kFirst, auto... kRest, class F>
decltype(auto) with_constant(decltype(kFirst) value, F&& f, const char* unknown) {
  if constexpr (sizeof...(kRest) == 0) {
    if (value != kFirst) throw std::invalid_argument(unknown);
  } else {
    if (value != kFirst) return with_constant<kRest...>(value, std::forward<F>(f), unknown);
  }
  return f(std::integral_constant<decltype(kFirst), kFirst>{});
}

// The same over every enumerator of E, an enum of kCount enumerators numbered from 0.
template <class E, int kCount, class F>
decltype(auto) with_enumerator(E value, F&& f, const char* unknown) {
  return [&]<int... kIndex>(std::integer_sequence<int, kIndex...>)->decltype(auto) {
    return with_constant<static_cast<E>(kIndex)...>(value, std::forward<F>(f), unknown);
  }
  (std::make_integer_sequence<int, kCount>{});
}

template <class F>
decltype(auto) with_alu_op(AluOp op, F&& f) {
  return with_enumerator<AluOp, isa::kNumAluOps>(op, std::forward<F>(f), "unknown ALU operator");
}

// Same for the bit-vector operators (plus bypass) on storage words.
template <class F>
decltype(auto) with_word_op(AluOp op, F&& f) {
  using enum AluOp;
  return with_constant<kBypass, kBitwiseAnd, kBitwiseOr, kBitwiseXor, kLeftShift, kRightShift,
                       kInvert>(op, std::forward<F>(f), "operator is not a bit-vector operator");
}

// ---------------------------------------------------------------------------------------
// Activation functions. Evaluated in double with the C library and rounded once to fp32;
// the Scalar engine uses piecewise polynomials, so hardware may differ in the last bits.

inline double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
// log(1 + e^x) without overflow for large x.
inline double softplus(double x) {
  return std::fmax(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}

// Largest fp32 values still inside the documented input ranges of the functions that the
// hardware evaluates without range reduction (fp32(pi) and fp32(pi/2) round up, so the
// rounded constants themselves are accepted).
inline constexpr float kSinInputLimit = 3.14159274f;
inline constexpr float kArctanInputLimit = 1.57079637f;

inline constexpr double kInvSqrtPi = 0.56418958354775628695;   // 1 / sqrt(pi)
inline constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
inline constexpr double kGeluSigmoidSlope = 1.702;             // gelu_apprx_sigmoid's

// d/dx of x sigmoid(k x): sigmoid(k x) (1 + k x sigmoid(-k x)), written with sigmoid(-k x)
// for 1 - sigmoid(k x) so that it does not cancel. At +-inf the limits 1 and -0 (the product
// would be inf * 0): the derivative approaches 0 from below as x goes to -inf.
inline double x_sigmoid_dx(double x, double k) {
  if (std::isinf(x)) return x > 0 ? 1.0 : -0.0;
  return sigmoid(k * x) * (1.0 + k * x * sigmoid(-k * x));
}

// `alpha` is prelu's slope for x <= 0 (activate2's relu_param); the other functions ignore it.
template <ActivationFunc kFunc>
inline float activate(float x, float alpha = 0.0f) {
  using enum ActivationFunc;
  const double d = x;
  if constexpr (kFunc == kCopy) {
    return x;
  } else if constexpr (kFunc == kExp) {
    return static_cast<float>(std::exp(d));
  } else if constexpr (kFunc == kLog) {
    return static_cast<float>(std::log(d));
  } else if constexpr (kFunc == kTanh) {
    return static_cast<float>(std::tanh(d));
  } else if constexpr (kFunc == kSigmoid) {
    return static_cast<float>(sigmoid(d));
  } else if constexpr (kFunc == kRelu) {
    return x > 0.0f ? x : (is_nan(x) ? x : 0.0f);
  } else if constexpr (kFunc == kGelu) {
    // 0.5 x (1 + erf(x / sqrt 2)) written with erfc: 1 + erf cancels for negative x.
    return static_cast<float>(0.5 * d * std::erfc(-d / std::sqrt(2.0)));
  } else if constexpr (kFunc == kGeluApprxTanh) {
    // 0.5 x (1 + tanh(u)) = x sigmoid(2u), which does not cancel for negative x.
    const double inner = std::sqrt(2.0 / 3.14159265358979323846) * (d + 0.044715 * d * d * d);
    return static_cast<float>(d * sigmoid(2.0 * inner));
  } else if constexpr (kFunc == kGeluApprxSigmoid) {
    return static_cast<float>(d * sigmoid(kGeluSigmoidSlope * d));
  } else if constexpr (kFunc == kSilu) {
    return static_cast<float>(d * sigmoid(d));
  } else if constexpr (kFunc == kSoftplus) {
    return static_cast<float>(softplus(d));
  } else if constexpr (kFunc == kMish) {
    return static_cast<float>(d * std::tanh(softplus(d)));
  } else if constexpr (kFunc == kErf) {
    return static_cast<float>(std::erf(d));
  } else if constexpr (kFunc == kSqrt) {
    return static_cast<float>(std::sqrt(d));
  } else if constexpr (kFunc == kRsqrt) {
    return static_cast<float>(1.0 / std::sqrt(d));
  } else if constexpr (kFunc == kSquare) {
    return x * x;
  } else if constexpr (kFunc == kReciprocal) {
    return 1.0f / x;
  } else if constexpr (kFunc == kSin) {
    // No range reduction on hardware: outside [-pi, pi] its result is meaningless, so trnsim
    // returns NaN there to make such use visible instead of silently correct.
    if (!(std::fabs(x) <= kSinInputLimit)) return std::numeric_limits<float>::quiet_NaN();
    return static_cast<float>(std::sin(d));
  } else if constexpr (kFunc == kCos) {
    return static_cast<float>(std::cos(d));
  } else if constexpr (kFunc == kArctan) {
    if (!(std::fabs(x) <= kArctanInputLimit)) return std::numeric_limits<float>::quiet_NaN();
    return static_cast<float>(std::atan(d));
  } else if constexpr (kFunc == kAbs) {
    return std::fabs(x);
  } else if constexpr (kFunc == kPrelu) {
    // The textbook x > 0 ? x : alpha x, in fp32: NaN stays NaN; with alpha = 0 a negative x
    // gives -0 (relu gives +0).
    return x > 0.0f ? x : alpha * x;
  } else if constexpr (kFunc == kGeluDx) {
    // Phi(x) + x phi(x); the second term is 0 at +-inf (not inf * 0).
    const double density = std::isinf(d) ? 0.0 : d * std::exp(-0.5 * d * d) * kInvSqrt2Pi;
    return static_cast<float>(0.5 * std::erfc(-d / std::sqrt(2.0)) + density);
  } else if constexpr (kFunc == kGeluApprxSigmoidDx) {
    return static_cast<float>(x_sigmoid_dx(d, kGeluSigmoidSlope));
  } else if constexpr (kFunc == kSiluDx) {
    return static_cast<float>(x_sigmoid_dx(d, 1.0));
  } else if constexpr (kFunc == kErfDx) {
    return static_cast<float>(2.0 * kInvSqrtPi * std::exp(-d * d));
  } else {
    static_assert(kFunc == kSign);
    // sign keeps a zero's sign and propagates NaN.
    if (x > 0.0f) return 1.0f;
    if (x < 0.0f) return -1.0f;
    return x;
  }
}

template <class F>
decltype(auto) with_activation(ActivationFunc func, F&& f) {
  return with_enumerator<ActivationFunc, isa::kNumActivationFuncs>(func, std::forward<F>(f),
                                                                   "unknown activation function");
}

// The start value of an accumulator reset for op (NKI's reset_reduce): 0 for add and
// subtract, 1 for multiply, -inf for max, +inf for min (0 for anything else).
constexpr float reduction_identity(AluOp op) {
  switch (op) {
    case AluOp::kMultiply:
      return 1.0f;
    case AluOp::kMaximum:
      return -std::numeric_limits<float>::infinity();
    case AluOp::kMinimum:
      return std::numeric_limits<float>::infinity();
    default:
      return 0.0f;
  }
}

// ---------------------------------------------------------------------------------------
// XORWOW (Marsaglia 2003, "Xorshift RNGs", the generator cuRAND's default uses): five
// xorshift words x, y, z, w, v plus a Weyl counter d, stored in that order (6 words).

inline constexpr int kXorwowWords = 6;
inline constexpr std::uint32_t kXorwowWeylIncrement = 362437;

inline std::uint32_t xorwow_next(std::span<std::uint32_t> state) {
  const std::uint32_t t = state[0] ^ (state[0] >> 2);
  state[0] = state[1];
  state[1] = state[2];
  state[2] = state[3];
  state[3] = state[4];
  state[4] = (state[4] ^ (state[4] << 4)) ^ (t ^ (t << 1));
  state[5] += kXorwowWeylIncrement;
  return state[5] + state[4];
}

// Seeds every generator of one engine (a run of 6-word states, lane-major) from a 32-bit
// seed: generator g gets its own splitmix64 stream of (seed, engine, g), so lanes are
// decorrelated and the state depends on nothing but the seed. The program seed seeds both
// engines this way at run start, and nisa.set_rng_seed re-seeds the Vector engine.
inline void seed_xorwow(std::span<std::uint32_t> states, std::uint32_t seed, isa::Engine engine) {
  const auto splitmix64 = [](std::uint64_t& s) {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  const std::uint64_t engine_tag = engine == isa::Engine::kVector ? 1 : 2;
  for (std::size_t g = 0; g < states.size() / kXorwowWords; ++g) {
    std::uint64_t stream = (std::uint64_t{seed} << 32) ^ (engine_tag << 24) ^ g;
    std::uint32_t* s = states.data() + g * kXorwowWords;
    do {
      for (int w = 0; w < kXorwowWords; ++w) s[w] = static_cast<std::uint32_t>(splitmix64(stream));
    } while ((s[0] | s[1] | s[2] | s[3] | s[4]) == 0);  // xorshift needs a non-zero state
  }
}

// Uniform fp32 in [lo, hi) from 32 random bits: the top 24 bits give u = k * 2^-24 in
// [0, 1), exact in fp32; lo + (hi - lo) * u is rounded in fp32 and, where that rounding
// reaches hi, replaced by the largest fp32 below hi.
inline float uniform_from_bits(std::uint32_t bits, float lo, float hi) {
  const float unit = static_cast<float>(bits >> 8) * 0x1.0p-24f;
  const float value = lo + (hi - lo) * unit;
  if (lo < hi && value >= hi) return std::nextafter(hi, lo);
  return value;
}

}  // namespace trnsim::sim::math
