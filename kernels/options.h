// Tuning options of library kernels: each registered kernel declares the knobs of its
// options struct (name, type, default, allowed values, one line of help), and whoever makes
// a problem (the CLI's `--set key=value`, `--compare key=value`, tests, benchmarks) sets them
// by name. Values are checked against the declaration before anything is traced: an unknown
// name lists the valid ones, a value of the wrong type or outside its range names the
// option, its type and its range.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace trnsim::kernels {

// The value of one option: an integer, a real number, a switch or one of named choices.
using OptionValue = std::variant<std::int64_t, double, bool, std::string>;

struct KernelOption {
  enum class Type { kInt, kNumber, kBool, kChoice };

  std::string name;  // lower case, digits and '_' (e.g. "block_n")
  Type type = Type::kInt;
  OptionValue default_value = std::int64_t{0};
  std::string help;  // one line: what the option changes in the generated code
  // kInt: the inclusive range and a step (the value must be a multiple of it; 1 = any).
  std::int64_t int_min = 0, int_max = 0, multiple_of = 1;
  // kNumber: the inclusive range.
  double number_min = 0, number_max = 0;
  // kChoice: the accepted words.
  std::vector<std::string> choices;

  static KernelOption integer(std::string name, std::int64_t default_value, std::int64_t min,
                              std::int64_t max, std::string help, std::int64_t multiple_of = 1);
  static KernelOption number(std::string name, double default_value, double min, double max,
                             std::string help);
  static KernelOption flag(std::string name, bool default_value, std::string help);
  static KernelOption choice(std::string name, std::string default_value,
                             std::vector<std::string> choices, std::string help);

  // "int 1..8", "int 128..2048, a multiple of 128", "number 0..1", "on|off", "bfloat16|float32".
  std::string type_text() const;
};

// Option values by name, in the order they were set. A default-constructed OptionValues sets
// nothing. resolve_options turns it into the complete set of a kernel (every declared option,
// set or default) which is what a kernel's problem maker reads with integer(), number(),
// flag() and choice(); those throw std::logic_error for an option that is not there or has
// another type (a programming error of the kernel's registration).
class OptionValues {
 public:
  OptionValues() = default;
  OptionValues(std::initializer_list<std::pair<std::string, OptionValue>> values);

  // Sets (or replaces) one value. Integers of any width become std::int64_t, C strings
  // std::string.
  OptionValues& set(std::string name, OptionValue value);
  template <class T>
  requires std::is_integral_v<T> &&
      (!std::is_same_v<T, bool>)OptionValues& set(std::string name, T value) {
    return set(std::move(name), OptionValue(static_cast<std::int64_t>(value)));
  }
  OptionValues& set(std::string name, const char* value) {
    return set(std::move(name), OptionValue(std::string(value)));
  }
  // Removes a value; returns whether it was there.
  bool erase(std::string_view name);

  bool has(std::string_view name) const { return find(name) != nullptr; }
  const OptionValue* find(std::string_view name) const;
  bool empty() const { return values_.empty(); }
  const std::vector<std::pair<std::string, OptionValue>>& entries() const { return values_; }

  std::int64_t integer(std::string_view name) const;
  double number(std::string_view name) const;
  bool flag(std::string_view name) const;
  const std::string& choice(std::string_view name) const;

  bool operator==(const OptionValues&) const = default;

 private:
  std::vector<std::pair<std::string, OptionValue>> values_;
};

// `key=value` items of a comma-separated list ("block_m=2,block_n=4"), in order. Throws
// std::invalid_argument naming `what` (e.g. "--set") for an item without '=', an empty key
// or an empty value.
std::vector<std::pair<std::string, std::string>> split_settings(std::string_view text,
                                                                std::string_view what);

// The value of `text` for `option` (integers in decimal, numbers as strtod reads them,
// switches on/off/true/false/yes/no/1/0, choices by their word), range-checked. Throws
// std::invalid_argument "block_n=abc: expected an integer (block_n is int 1..8)".
OptionValue parse_option_value(const KernelOption& option, std::string_view text);

// Checks `value` against `option` (type, range, step, choices) and returns it in the
// option's type (an integer given for a number option becomes a double). Throws
// std::invalid_argument naming the option.
OptionValue check_option_value(const KernelOption& option, const OptionValue& value);

// The declaration called `name`, or nullptr.
const KernelOption* find_option(std::span<const KernelOption> options, std::string_view name);

// "block_n=4", "hoist_a_scales=off", "eps=1e-05".
std::string format_option(const KernelOption& option, const OptionValue& value);
std::string format_value(const KernelOption& option, const OptionValue& value);

// "block_m (int 1..8, default 4), block_n (int 1..8, default 2)", or "none".
std::string option_list(std::span<const KernelOption> options);

// Every option of `options`: its value in `set` (checked) or its default. Throws
// std::invalid_argument for a name `options` does not declare ("matmul has no option
// 'block_k'; its options are ..., did you mean 'block_m'?"; `kernel` names the kernel).
OptionValues resolve_options(std::string_view kernel, std::span<const KernelOption> options,
                             const OptionValues& set);

// The text settings `key=value` of a command line, typed by the declarations: each key must
// be declared (an error lists the declared ones) and given once; each value must parse and
// be in range. Returns only the settings given (resolve_options adds the defaults).
OptionValues parse_option_settings(std::string_view kernel, std::span<const KernelOption> options,
                                   std::span<const std::pair<std::string, std::string>> settings);

// The options of a complete set whose value differs from the default, as
// "block_n=4, hoist_a_scales=off"; "" when all are at their defaults. With `defaults`,
// each is followed by its default: "block_n=4 (default 2)".
std::string changed_options_text(std::span<const KernelOption> options, const OptionValues& values,
                                 bool defaults = false);

}  // namespace trnsim::kernels
