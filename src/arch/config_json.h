// Building blocks of trnsim's JSON config formats, shared by the chip config (arch) and the
// system config (system): JSON text with located errors, files, patching a preset, fields
// written as a value or as {"value", "source", "estimate"}, numeric ranges, and the wording of
// messages. Every error is an arch::ConfigError naming the field's JSON path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/arch.h"
#include "arch/embedded_presets.h"

namespace trnsim::arch {

namespace detail {

// The values a numeric field accepts: whole numbers or reals in [min, max], and 0 too when
// `or_zero` (0 = feature absent). A bound with min == max is the one value the model supports;
// `why` then says why. Every range is physically generous and keeps every figure the model
// derives from it finite; the format's docs list them all (a test keeps them in step).
struct Range {
  bool integral = false;
  double min = 0;
  double max = 0;
  bool or_zero = false;
  const char* why = nullptr;
};

constexpr Range integers(double min, double max) {
  return {true, min, max, false, nullptr};
}
constexpr Range reals(double min, double max) {
  return {false, min, max, false, nullptr};
}
constexpr Range reals_or_zero(double min, double max) {
  return {false, min, max, true, nullptr};
}

// "integer" or "number".
const char* kind_description(const Range& range);
// "1..1024", "0 or 0.001..64", "128".
std::string range_description(const Range& range);
// Throws ConfigError on `path` unless `value` is finite, whole when the range is integral, and
// in the range; the message names the value, the range and its `unit`. Every conversion of a
// field to an integer type comes after this check.
void check_range(const std::string& path, double value, const Range& range, const char* unit);

}  // namespace detail

namespace config_detail {

using nlohmann::json;

// Exact integers in a double stop at 2^53; larger "integers" are not meaningful counts.
constexpr double kMaxExactInteger = 9007199254740992.0;

// The first control character of `text` (U+0000..U+001F, U+007F, U+0080..U+009F) if any.
std::optional<char32_t> first_control_character(std::string_view text);
// `text` with every control character written as \uXXXX, safe to print.
std::string escape_control(std::string_view text);
// A name from a file (a key, a preset name) as a message quotes it: at most 64 bytes, a longer
// one cut with its length ("aaaa...(10000000 bytes)").
std::string shorten(std::string_view name);
// "<type> <value>" of a JSON value, shortened, for messages.
std::string describe_value(const json& v);
// Integers without a trailing ".0"; otherwise the shortest form that reads back the same.
std::string format_number(double v);
// The candidate a misspelt name most likely meant, or "" when none is close.
std::string closest(std::string_view name, const std::vector<std::string>& candidates);
// "; did you mean \"x\"?" for the closest candidate, or "".
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

// JSON text as a config file holds it: comments allowed, duplicate keys refused, nesting
// bounded; errors carry the line and column.
json parse_json_text(const std::string& text);
// The same nesting bound on a value built in memory.
void check_nesting(const json& root);
// A config file's text (at most 16 MiB); `what` names it in messages ("chip config").
std::string read_config_file(const std::string& path, const char* what);
// RFC 7386 merge patch, except that a parameter object ({"value": ...}) is replaced as a
// whole: a new value must not inherit the old value's source.
void merge_patch(json& target, const json& patch);

// A field written either as a plain value or as {"value": v, "source": ..., "estimate": ...}.
struct Unwrapped {
  const json* value = nullptr;
  Provenance provenance;
  const json* wrapper = nullptr;  // the object form, for the extra keys
};
// Splits a field into its value and provenance. The object form may also hold `extra_keys`;
// any other key is an error. A value without provenance gets `default_source`; with
// `require_provenance` (presets) it is an error instead.
Unwrapped unwrap_field(const std::string& path, const json& v,
                       const std::vector<std::string>& extra_keys,
                       const std::string& default_source, bool require_provenance);
// Text from a config (names, descriptions, sources) is printed as it is: a control character
// (NUL, an escape sequence, U+009B) would act on the terminal. Throws ConfigError on `path`.
inline void require_printable(const std::string& path, std::string_view text) {
  if (const auto c = first_control_character(text)) {
    std::string hex = "0000";  // U+XXXX, as arch's own check writes it
    auto v = static_cast<std::uint32_t>(*c);
    for (std::size_t i = hex.size(); i-- > 0; v >>= 4) hex[i] = "0123456789ABCDEF"[v & 15U];
    throw ConfigError(path, "contains control character U+" + hex +
                                " (text is printed as written; control characters are not "
                                "allowed)");
  }
}

// The presets a layer embeds (embedded_presets.h): their names in the build's order and their
// text by name, built once by the layer.
struct PresetTexts {
  std::vector<std::string> names;
  std::map<std::string, std::string> texts;
};
inline PresetTexts preset_texts(const detail::EmbeddedPreset* presets, std::size_t count) {
  PresetTexts out;
  for (std::size_t i = 0; i < count; ++i) {
    out.names.emplace_back(presets[i].name);
    out.texts.emplace(presets[i].name, presets[i].json);
  }
  return out;
}

// "expected <expected>, got <value>" on `path`.
ConfigError type_error(const std::string& path, const std::string& expected, const json& got);
// A numeric parameter (plain or object form) checked against `range`.
Param read_param(const std::string& path, const json& v, const detail::Range& range,
                 const char* unit, const std::string& default_source, bool require_provenance);
// {"value": v, "source": s} or {"value": v, "estimate": true, "source": s}; whole numbers as
// integers when `integral`.
json param_json(const Param& p, bool integral);

}  // namespace config_detail

}  // namespace trnsim::arch
