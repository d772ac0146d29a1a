#include "kernels/options.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "util/edit_distance.h"

namespace trnsim::kernels {

namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t");
  return s.substr(first, last - first + 1);
}

std::string describe(const OptionValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return fmt::format("the integer {}", *i);
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("the number {:g}", *d);
  if (const auto* b = std::get_if<bool>(&v)) return fmt::format("the switch {}", *b ? "on" : "off");
  return fmt::format("the word '{}'", std::get<std::string>(v));
}

const char* type_word(KernelOption::Type t) {
  switch (t) {
    case KernelOption::Type::kInt:
      return "an integer";
    case KernelOption::Type::kNumber:
      return "a number";
    case KernelOption::Type::kBool:
      return "on or off";
    case KernelOption::Type::kChoice:
      return "one of its words";
  }
  return "";
}

[[noreturn]] void bad_value(const KernelOption& o, const std::string& value_text,
                            const std::string& why) {
  throw std::invalid_argument(
      fmt::format("{}={}: {} ({} is {})", o.name, value_text, why, o.name, o.type_text()));
}

[[noreturn]] void unknown_option(std::string_view kernel, std::span<const KernelOption> options,
                                 std::string_view name) {
  std::string text = fmt::format("{} has no option '{}'", kernel, name);
  if (options.empty()) throw std::invalid_argument(text + "; it has no tuning options");
  std::vector<std::string_view> names;
  for (const auto& o : options) names.push_back(o.name);
  if (const std::string best = util::closest(name, names); !best.empty())
    text += fmt::format(" (did you mean '{}'?)", best);
  throw std::invalid_argument(fmt::format("{}; its options are {}", text, option_list(options)));
}

}  // namespace

KernelOption KernelOption::integer(std::string name, std::int64_t default_value, std::int64_t min,
                                   std::int64_t max, std::string help, std::int64_t multiple_of) {
  return {.name = std::move(name),
          .type = Type::kInt,
          .default_value = default_value,
          .help = std::move(help),
          .int_min = min,
          .int_max = max,
          .multiple_of = multiple_of};
}

KernelOption KernelOption::number(std::string name, double default_value, double min, double max,
                                  std::string help) {
  return {.name = std::move(name),
          .type = Type::kNumber,
          .default_value = default_value,
          .help = std::move(help),
          .number_min = min,
          .number_max = max};
}

KernelOption KernelOption::flag(std::string name, bool default_value, std::string help) {
  return {.name = std::move(name),
          .type = Type::kBool,
          .default_value = default_value,
          .help = std::move(help)};
}

KernelOption KernelOption::choice(std::string name, std::string default_value,
                                  std::vector<std::string> choices, std::string help) {
  return {.name = std::move(name),
          .type = Type::kChoice,
          .default_value = std::move(default_value),
          .help = std::move(help),
          .choices = std::move(choices)};
}

std::string KernelOption::type_text() const {
  switch (type) {
    case Type::kInt:
      return multiple_of > 1
                 ? fmt::format("int {}..{}, a multiple of {}", int_min, int_max, multiple_of)
                 : fmt::format("int {}..{}", int_min, int_max);
    case Type::kNumber:
      return fmt::format("number {:g}..{:g}", number_min, number_max);
    case Type::kBool:
      return "on|off";
    case Type::kChoice:
      return fmt::format("{}", fmt::join(choices, "|"));
  }
  return "";
}

OptionValues::OptionValues(std::initializer_list<std::pair<std::string, OptionValue>> values) {
  for (const auto& [name, value] : values) set(name, value);
}

OptionValues& OptionValues::set(std::string name, OptionValue value) {
  for (auto& [n, v] : values_)
    if (n == name) {
      v = std::move(value);
      return *this;
    }
  values_.emplace_back(std::move(name), std::move(value));
  return *this;
}

bool OptionValues::erase(std::string_view name) {
  for (auto it = values_.begin(); it != values_.end(); ++it)
    if (it->first == name) {
      values_.erase(it);
      return true;
    }
  return false;
}

const OptionValue* OptionValues::find(std::string_view name) const {
  for (const auto& [n, v] : values_)
    if (n == name) return &v;
  return nullptr;
}

namespace {

template <class T>
const T& get_typed(const OptionValues& values, std::string_view name, const char* what) {
  const OptionValue* v = values.find(name);
  if (v == nullptr)
    throw std::logic_error(
        fmt::format("kernel option '{}' is not set (the problem maker reads an option "
                    "its registration does not declare, or values that were not resolved)",
                    name));
  const T* t = std::get_if<T>(v);
  if (t == nullptr)
    throw std::logic_error(
        fmt::format("kernel option '{}' is read as {} but holds {}", name, what, describe(*v)));
  return *t;
}

}  // namespace

std::int64_t OptionValues::integer(std::string_view name) const {
  return get_typed<std::int64_t>(*this, name, "an integer");
}
double OptionValues::number(std::string_view name) const {
  return get_typed<double>(*this, name, "a number");
}
bool OptionValues::flag(std::string_view name) const {
  return get_typed<bool>(*this, name, "a switch");
}
const std::string& OptionValues::choice(std::string_view name) const {
  return get_typed<std::string>(*this, name, "a word");
}

std::vector<std::pair<std::string, std::string>> split_settings(std::string_view text,
                                                                std::string_view what) {
  std::vector<std::pair<std::string, std::string>> out;
  if (trim(text).empty())
    throw std::invalid_argument(
        fmt::format("{} is empty: expected key=value[,key=value]...", what));
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view item = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument(fmt::format("{} '{}': '{}' is not key=value", what, text, item));
    const std::string_view key = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    if (key.empty())
      throw std::invalid_argument(fmt::format("{} '{}': '{}' has no key", what, text, item));
    if (value.empty())
      throw std::invalid_argument(fmt::format("{} '{}': {} has no value", what, text, key));
    out.emplace_back(std::string(key), std::string(value));
  }
  return out;
}

OptionValue parse_option_value(const KernelOption& o, std::string_view text_in) {
  const std::string text(trim(text_in));
  switch (o.type) {
    case KernelOption::Type::kInt: {
      std::string_view digits = text;
      if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (digits.empty() || end != digits.data() + digits.size() ||
          ec == std::errc::invalid_argument)
        bad_value(o, text, "expected an integer");
      if (ec == std::errc::result_out_of_range) bad_value(o, text, "out of range");
      return check_option_value(o, v);
    }
    case KernelOption::Type::kNumber: {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
        bad_value(o, text, "expected a finite number");
      return check_option_value(o, v);
    }
    case KernelOption::Type::kBool:
      if (text == "on" || text == "true" || text == "yes" || text == "1") return true;
      if (text == "off" || text == "false" || text == "no" || text == "0") return false;
      bad_value(o, text, "expected on or off");
    case KernelOption::Type::kChoice:
      return check_option_value(o, text);
  }
  throw std::logic_error("unknown option type");
}

namespace {

[[noreturn]] void wrong_type(const KernelOption& o, const OptionValue& value) {
  throw std::invalid_argument(fmt::format("{} takes {} ({}), not {}", o.name, type_word(o.type),
                                          o.type_text(), describe(value)));
}

}  // namespace

OptionValue check_option_value(const KernelOption& o, const OptionValue& value) {
  switch (o.type) {
    case KernelOption::Type::kInt: {
      const auto* v = std::get_if<std::int64_t>(&value);
      if (v == nullptr) wrong_type(o, value);
      if (*v < o.int_min || *v > o.int_max) bad_value(o, fmt::format("{}", *v), "out of range");
      if (o.multiple_of > 1 && *v % o.multiple_of != 0)
        bad_value(o, fmt::format("{}", *v), fmt::format("not a multiple of {}", o.multiple_of));
      return *v;
    }
    case KernelOption::Type::kNumber: {
      double v = 0;
      if (const auto* d = std::get_if<double>(&value)) {
        v = *d;
      } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
        v = static_cast<double>(*i);
      } else {
        wrong_type(o, value);
      }
      if (!std::isfinite(v)) bad_value(o, fmt::format("{}", v), "expected a finite number");
      if (v < o.number_min || v > o.number_max)
        bad_value(o, fmt::format("{:g}", v), "out of range");
      return v;
    }
    case KernelOption::Type::kBool:
      if (!std::holds_alternative<bool>(value)) wrong_type(o, value);
      return value;
    case KernelOption::Type::kChoice: {
      const auto* s = std::get_if<std::string>(&value);
      if (s == nullptr) wrong_type(o, value);
      for (const auto& c : o.choices)
        if (c == *s) return value;
      bad_value(o, *s, fmt::format("expected one of {}", fmt::join(o.choices, ", ")));
    }
  }
  throw std::logic_error("unknown option type");
}

const KernelOption* find_option(std::span<const KernelOption> options, std::string_view name) {
  for (const auto& o : options)
    if (o.name == name) return &o;
  return nullptr;
}

std::string format_value(const KernelOption& o, const OptionValue& v) {
  (void)o;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return fmt::format("{}", *i);
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{:g}", *d);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "on" : "off";
  return std::get<std::string>(v);
}

std::string format_option(const KernelOption& o, const OptionValue& v) {
  return fmt::format("{}={}", o.name, format_value(o, v));
}

std::string option_list(std::span<const KernelOption> options) {
  if (options.empty()) return "none";
  std::vector<std::string> parts;
  for (const auto& o : options)
    parts.push_back(fmt::format("{} ({}, default {})", o.name, o.type_text(),
                                format_value(o, o.default_value)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

OptionValues resolve_options(std::string_view kernel, std::span<const KernelOption> options,
                             const OptionValues& set) {
  for (const auto& [name, value] : set.entries())
    if (find_option(options, name) == nullptr) unknown_option(kernel, options, name);
  OptionValues out;
  for (const auto& o : options) {
    const OptionValue* v = set.find(o.name);
    out.set(o.name, v != nullptr ? check_option_value(o, *v) : o.default_value);
  }
  return out;
}

OptionValues parse_option_settings(std::string_view kernel, std::span<const KernelOption> options,
                                   std::span<const std::pair<std::string, std::string>> settings) {
  OptionValues out;
  for (const auto& [name, text] : settings) {
    const KernelOption* o = find_option(options, name);
    if (o == nullptr) unknown_option(kernel, options, name);
    if (out.has(name)) throw std::invalid_argument(fmt::format("option {} is given twice", name));
    out.set(name, parse_option_value(*o, text));
  }
  return out;
}

std::string changed_options_text(std::span<const KernelOption> options, const OptionValues& values,
                                 bool defaults) {
  std::vector<std::string> parts;
  for (const auto& o : options) {
    const OptionValue* v = values.find(o.name);
    if (v == nullptr || *v == o.default_value) continue;
    parts.push_back(defaults ? fmt::format("{} (default {})", format_option(o, *v),
                                           format_value(o, o.default_value))
                             : format_option(o, *v));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace trnsim::kernels
