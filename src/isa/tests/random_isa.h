// Seeded generator of arbitrary (not necessarily valid) instructions for round-trip tests.
// Every field type of the ISA has a generator here; a new field type fails to compile until
// it gets one, and a new operation is covered automatically.
#pragma once

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <variant>

#include "isa/asm_detail.h"
#include "isa/isa.h"

namespace trnsim::isa::testing {

// Enumerator counts for the attribute enums (the generator picks among all of them), from
// the assembler's table of their spellings, so a new enum needs no entry here.
template <class E>
constexpr int enum_count() {
  return asm_detail::kEnumSpelling<E>.count;
}

class RandomIsa {
 public:
  // allow_nan: NaN immediates compare unequal to themselves, so tests that compare programs
  // with == leave them out; text-level round trips include them.
  explicit RandomIsa(std::uint32_t seed, bool allow_nan = false)
      : rng_(seed), allow_nan_(allow_nan) {}

  std::uint64_t below(std::uint64_t n) {
    return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_);
  }
  bool coin() { return below(2) == 1; }

  template <class T>
  requires std::is_integral_v<T> &&(!std::is_same_v<T, bool>)T integer() {
    // Mostly small values, sometimes the extremes (overflow and sign handling).
    switch (below(4)) {
      case 0:
        return std::numeric_limits<T>::max();
      case 1:
        return std::numeric_limits<T>::min();
      case 2:
        return static_cast<T>(below(100));
      default:
        return static_cast<T>(std::uniform_int_distribution<std::uint64_t>()(rng_));
    }
  }

  float real() {
    switch (below(8)) {
      case 0:
        return -0.0f;
      case 1:
        return coin() ? std::numeric_limits<float>::infinity()
                      : -std::numeric_limits<float>::infinity();
      case 2:
        return std::numeric_limits<float>::denorm_min() * static_cast<float>(below(1000) + 1);
      case 3:
        return coin() ? std::numeric_limits<float>::max() : std::numeric_limits<float>::lowest();
      case 4:
        if (allow_nan_) {
          return std::bit_cast<float>(0x7f800001u | static_cast<std::uint32_t>(below(0x7fffff)) |
                                      (coin() ? 0x80000000u : 0u));
        }
        return 0.1f;
      case 5:
        return static_cast<float>(below(2000)) / 8.0f - 100.0f;
      default: {
        // Any finite bit pattern.
        float value = 0.0f;
        do {
          value = std::bit_cast<float>(static_cast<std::uint32_t>(below(std::uint64_t{1} << 32)));
        } while (value != value || value - value != 0.0f);
        return value;
      }
    }
  }

  std::string text() {
    static constexpr std::string_view kPieces[] = {"a",  "mm_0", " ",    "\"",   "\\",
                                                   "\n", "\t",   "\x01", "\x7f", "\xc3\xa9",
                                                   "#",  "@",    ":",    "x=y,", "kernel.py"};
    std::string out;
    const std::uint64_t n = below(6) + 1;
    for (std::uint64_t i = 0; i < n; ++i) out += kPieces[below(std::size(kPieces))];
    return out;
  }

  Dim dim() {
    Dim d;
    d.step = coin() ? static_cast<std::int64_t>(below(1024)) - 512 : integer<std::int64_t>();
    d.count = coin() ? static_cast<std::uint32_t>(below(600) + 1) : integer<std::uint32_t>();
    return d;
  }

  AccessPattern access_pattern() {
    AccessPattern ap;
    do {
      ap = AccessPattern{};
      ap.memory = static_cast<Memory>(below(kNumMemories));
      ap.dtype = static_cast<numerics::DType>(below(numerics::kNumDTypes));
      ap.offset = coin() ? below(1 << 18) : integer<std::uint64_t>();
      ap.start_partition =
          coin() ? static_cast<std::uint32_t>(below(128)) : integer<std::uint32_t>();
      ap.partitions =
          coin() ? static_cast<std::uint32_t>(below(128) + 1) : integer<std::uint32_t>();
      ap.partition_step = coin() ? 0 : integer<std::int64_t>();
      ap.num_dims = static_cast<std::uint8_t>(below(kMaxFreeDims + 1));
      for (int k = 0; k < ap.num_dims; ++k) ap.dims[k] = dim();
      if (below(4) == 0) {  // register-relative
        ap.dyn_reg = reg();
        ap.dyn_scale = integer<std::int64_t>();
      }
    } while (ap == AccessPattern{});
    return ap;
  }

  // Any register index the syntax holds (r0..r254; validation allows r0..r63), or none.
  Reg reg() {
    return coin() ? Reg{} : Reg{static_cast<std::uint8_t>(coin() ? below(64) : below(255))};
  }

  AffinePattern affine_pattern() {
    AffinePattern pattern;
    do {
      pattern.num_dims = static_cast<std::uint8_t>(below(kMaxFreeDims + 1));
      for (int k = 0; k < pattern.num_dims; ++k) pattern.dims[k] = dim();
    } while (pattern == AffinePattern{});
    return pattern;
  }

  // A value of the field's type that differs from `default_value`.
  template <class T>
  T differing(const T& default_value) {
    for (int attempt = 0;; ++attempt) {
      T value = any<T>();
      if (!same(value, default_value)) return value;
      if (attempt > 1000) std::abort();  // a type with a single value cannot differ
    }
  }

  template <class T>
  T any() {
    if constexpr (std::is_same_v<T, AccessPattern>) {
      return access_pattern();
    } else if constexpr (std::is_same_v<T, std::optional<AccessPattern>>) {
      return coin() ? std::optional<AccessPattern>() : std::optional(access_pattern());
    } else if constexpr (std::is_same_v<T, ScalarOperand>) {
      return coin() ? ScalarOperand(real()) : ScalarOperand(access_pattern());
    } else if constexpr (std::is_same_v<T, float>) {
      return real();
    } else if constexpr (std::is_same_v<T, Reg>) {
      return reg();
    } else if constexpr (std::is_same_v<T, bool>) {
      return coin();
    } else if constexpr (std::is_enum_v<T>) {
      return static_cast<T>(below(enum_count<T>()));
    } else if constexpr (std::is_integral_v<T>) {
      return integer<T>();
    } else if constexpr (std::is_same_v<T, AffinePattern>) {
      return affine_pattern();
    } else if constexpr (std::is_same_v<T, std::array<std::uint8_t, 32>>) {
      std::array<std::uint8_t, 32> mask{};
      for (auto& entry : mask) entry = static_cast<std::uint8_t>(below(256));
      return mask;
    } else if constexpr (std::is_same_v<T, std::vector<AccessPattern>>) {
      std::vector<AccessPattern> aps(below(3));
      for (auto& ap : aps) ap = access_pattern();
      return aps;
    } else if constexpr (std::is_same_v<T, std::vector<float>>) {
      std::vector<float> values(below(4));
      for (auto& v : values) v = real();
      return values;
    } else if constexpr (std::is_same_v<T, std::vector<std::uint32_t>>) {
      std::vector<std::uint32_t> values(below(5));
      for (auto& v : values) v = integer<std::uint32_t>();
      return values;
    } else if constexpr (std::is_same_v<T, std::string>) {
      return coin() ? std::string() : text();
    } else {
      static_assert(!sizeof(T), "RandomIsa has no generator for this field type");
    }
  }

  // Every field set to a value different from its default.
  template <class Op>
  Op every_field_set() {
    Op op{};
    Op defaults{};
    std::vector<const void*> default_members;
    defaults.fields(
        [&](std::string_view, auto& member, Role) { default_members.push_back(&member); });
    std::size_t index = 0;
    op.fields([&](std::string_view, auto& member, Role) {
      using T = std::decay_t<decltype(member)>;
      member = differing(*static_cast<const T*>(default_members[index++]));
    });
    return op;
  }

  // Each field randomly either default or random.
  template <class Op>
  Op some_fields_set() {
    Op op{};
    op.fields([&](std::string_view, auto& member, Role) {
      using T = std::decay_t<decltype(member)>;
      if (coin() || std::is_same_v<T, AccessPattern>) member = any<T>();
    });
    return op;
  }

  Operation operation() {
    return any_alternative(below(std::variant_size_v<Operation>),
                           std::make_index_sequence<std::variant_size_v<Operation>>{});
  }

  Instruction instruction() {
    Instruction inst;
    inst.op = operation();
    inst.queue.engine = static_cast<Engine>(below(kNumEngines));
    inst.queue.index = coin() ? 0 : integer<std::uint8_t>();
    for (std::uint64_t i = below(3); i > 0; --i)
      inst.waits.push_back(
          {integer<std::uint16_t>(), integer<std::uint32_t>(), below(3) == 0 ? reg() : Reg{}});
    for (std::uint64_t i = below(3); i > 0; --i)
      inst.signals.push_back({integer<std::uint16_t>(), integer<std::uint32_t>()});
    inst.rounding = any<RoundingMode>();
    inst.name = any<std::string>();
    if (below(4) != 0) {
      inst.origin = Origin{coin() ? std::string("kernel.py") : text(), integer<std::uint32_t>(),
                           integer<std::uint32_t>()};
    }
    return inst;
  }

  Program program(std::size_t max_instructions) {
    Program p;
    p.seed = coin() ? 0 : integer<std::uint32_t>();
    for (std::uint64_t i = below(max_instructions + 1); i > 0; --i)
      p.instructions.push_back(instruction());
    return p;
  }

 private:
  template <std::size_t... I>
  Operation any_alternative(std::uint64_t which, std::index_sequence<I...>) {
    Operation result;
    (void)((which == I
                ? (result = some_fields_set<std::variant_alternative_t<I, Operation>>(), true)
                : false) ||
           ...);
    return result;
  }

  // Bit-level equality: -0.0 differs from 0.0 (the printer must keep it).
  static bool same(float a, float b) {
    return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
  }
  static bool same(const ScalarOperand& a, const ScalarOperand& b) {
    if (a.index() != b.index()) return false;
    if (a.index() == 0) return same(std::get<float>(a), std::get<float>(b));
    return a == b;
  }
  template <class T>
  static bool same(const T& a, const T& b) {
    return a == b;
  }

  std::mt19937_64 rng_;
  bool allow_nan_;
};

}  // namespace trnsim::isa::testing
