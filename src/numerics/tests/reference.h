// Test oracle for the float formats, written from the format definitions and independently
// of the implementation: values come from sign * 2^(e - bias) * (1 + m / 2^M) (or the
// subnormal formula) evaluated in double, and rounding is a nearest-value search over the
// sorted table of every finite value with ties broken towards the even code.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "numerics/dtype.h"
#include "numerics/numerics.h"

namespace trnsim::numerics::testing {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline const float kNaN = std::numeric_limits<float>::quiet_NaN();

enum class Specials { kIeee, kNanOnlyAllOnes, kNone };

struct RefFormat {
  DType dtype;
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
  int code_shift = 0;  // TF32 codes are stored shifted left by 13

  int total_bits() const { return 1 + exponent_bits + mantissa_bits; }
  std::uint32_t code_count() const { return 1u << total_bits(); }
};

inline const std::vector<RefFormat>& small_float_formats() {
  static const std::vector<RefFormat> formats = {
      {DType::kBFloat16, 8, 7, 127, Specials::kIeee},
      {DType::kFloat16, 5, 10, 15, Specials::kIeee},
      {DType::kFloat8E4M3, 4, 3, 7, Specials::kNanOnlyAllOnes},
      {DType::kFloat8E5M2, 5, 2, 15, Specials::kIeee},
      {DType::kFloat8E4M3Ieee, 4, 3, 7, Specials::kIeee},
      {DType::kFloat6E3M2, 3, 2, 3, Specials::kNone},
      {DType::kFloat6E2M3, 2, 3, 1, Specials::kNone},
      {DType::kFloat4E2M1, 2, 1, 1, Specials::kNone},
  };
  return formats;
}

inline RefFormat tf32_format() {
  return {DType::kTFloat32, 8, 10, 127, Specials::kIeee, 13};
}

inline bool ref_is_nan(const RefFormat& f, std::uint32_t field) {
  const std::uint32_t e = (field >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  const std::uint32_t m = field & ((1u << f.mantissa_bits) - 1);
  const std::uint32_t e_max = (1u << f.exponent_bits) - 1;
  switch (f.specials) {
    case Specials::kIeee:
      return e == e_max && m != 0;
    case Specials::kNanOnlyAllOnes:
      return e == e_max && m == (1u << f.mantissa_bits) - 1;
    case Specials::kNone:
      return false;
  }
  return false;
}

// Value of a code field (no storage shift) by the definition; NaN for NaN codes.
inline double ref_value(const RefFormat& f, std::uint32_t field) {
  const bool negative = (field >> (f.exponent_bits + f.mantissa_bits)) & 1u;
  const std::uint32_t e = (field >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  const std::uint32_t m = field & ((1u << f.mantissa_bits) - 1);
  const double sign = negative ? -1.0 : 1.0;
  if (ref_is_nan(f, field)) return std::numeric_limits<double>::quiet_NaN();
  if (f.specials == Specials::kIeee && e == (1u << f.exponent_bits) - 1) {
    return sign * std::numeric_limits<double>::infinity();
  }
  const double fraction = static_cast<double>(m) / std::ldexp(1.0, f.mantissa_bits);
  if (e == 0) return sign * std::ldexp(fraction, 1 - f.bias);
  return sign * std::ldexp(1.0 + fraction, static_cast<int>(e) - f.bias);
}

// Nearest-value rounding by search over all finite non-negative values.
class RefRounder {
 public:
  explicit RefRounder(const RefFormat& f) : format_(f) {
    const std::uint32_t positive_codes = f.code_count() / 2;
    for (std::uint32_t c = 0; c < positive_codes; ++c) {
      const double v = ref_value(f, c);
      if (std::isfinite(v)) entries_.push_back({v, c});
    }
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.value < b.value; });
    // One more grid point above max: the value the next code would have. Rounding to it
    // means overflow; its code parity decides the tie exactly as for any other neighbours.
    const Entry top = entries_.back();  // a copy: push_back below may reallocate
    const double ulp_at_top = top.value - entries_[entries_.size() - 2].value;
    entries_.push_back({top.value + ulp_at_top, top.code + 1});
    overflow_code_ = top.code + 1;
    max_code_ = top.code;
  }

  std::uint32_t max_code() const { return max_code_; }
  double max_value() const { return entries_[entries_.size() - 2].value; }

  // Index into the value table of the nearest value to |x| (ties to even code).
  std::size_t nearest_index(double magnitude) const {
    auto upper = std::lower_bound(entries_.begin(), entries_.end(), magnitude,
                                  [](const Entry& e, double v) { return e.value < v; });
    if (upper == entries_.end()) return entries_.size() - 1;
    if (upper->value == magnitude || upper == entries_.begin()) {
      return static_cast<std::size_t>(upper - entries_.begin());
    }
    return pick(static_cast<std::size_t>(upper - entries_.begin()) - 1, magnitude);
  }

  // Given lower index i with value[i] <= magnitude < value[i + 1], the nearest of the two.
  std::size_t pick(std::size_t i, double magnitude) const {
    const double below = magnitude - entries_[i].value;
    const double above = entries_[i + 1].value - magnitude;
    if (below < above) return i;
    if (above < below) return i + 1;
    return (entries_[i].code % 2 == 0) ? i : i + 1;
  }

  // RNE encode of x (finite, Inf or NaN) following docs/numerics.md; returns the code field.
  std::uint32_t encode(double x, OverflowMode overflow) const {
    const RefFormat& f = format_;
    const std::uint32_t sign_bit = 1u << (f.exponent_bits + f.mantissa_bits);
    const std::uint32_t e_max = (1u << f.exponent_bits) - 1;
    if (std::isnan(x)) {
      switch (f.specials) {
        case Specials::kIeee:  // quiet NaN with the input's sign (payload checked elsewhere)
          return (std::signbit(x) ? sign_bit : 0u) | (e_max << f.mantissa_bits) |
                 (1u << (f.mantissa_bits - 1));
        case Specials::kNanOnlyAllOnes:
          return (std::signbit(x) ? sign_bit : 0u) | (sign_bit - 1);
        case Specials::kNone:
          return max_code_;  // documented choice: NaN -> +max
      }
    }
    const std::uint32_t sign = std::signbit(x) ? sign_bit : 0u;
    const double magnitude = std::fabs(x);
    std::uint32_t code;
    if (std::isinf(x)) {
      code = overflow_code_;
    } else {
      code = entries_[nearest_index(magnitude)].code;
    }
    if (code == overflow_code_) {
      if (overflow == OverflowMode::kSaturate || f.specials == Specials::kNone) {
        code = max_code_;
      } else if (f.specials == Specials::kIeee) {
        code = e_max << f.mantissa_bits;  // Inf
      } else {
        code = sign_bit - 1;  // the NaN of E4M3
      }
    }
    return sign | code;
  }

  struct Entry {
    double value;
    std::uint32_t code;
  };
  const std::vector<Entry>& entries() const { return entries_; }
  std::uint32_t overflow_code() const { return overflow_code_; }

 private:
  RefFormat format_;
  std::vector<Entry> entries_;
  std::uint32_t overflow_code_ = 0;
  std::uint32_t max_code_ = 0;
};

inline std::string format_name(const RefFormat& f) {
  return std::string(name(f.dtype));
}

}  // namespace trnsim::numerics::testing
