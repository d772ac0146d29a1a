// Internals of the chip configuration shared by its files (not part of arch/arch.h): the
// message helpers, the structure check and decoder that loading needs, and the TensorE rate
// of a peak mode. arch.cpp: names, helpers and derived figures; arch_decode.cpp: JSON to
// ChipConfig; arch_encode.cpp: ChipConfig to JSON; arch_validate.cpp: validate();
// arch_load.cpp: JSON text, files and presets.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/arch.h"

namespace trnsim::arch::config_detail {

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
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");

// The TensorE rate parameter of a peak mode (peak_modes()), or nullptr for another name.
const Param* rate_for_mode(const ChipConfig& c, const std::string& mode);

// arch_decode.cpp
// Rejects unknown fields and non-object sections before anything is decoded. A patch (a
// user file with "base") may also hold nulls, which delete what the preset had.
void check_structure(const json& object, const std::string& prefix, bool is_patch);
// Decodes a whole config (structure check, fields, validate()). Values without provenance get
// `default_source`; with `require_provenance` (presets) they are an error instead.
ChipConfig decode(const json& root, const std::string& default_source, bool require_provenance);

}  // namespace trnsim::arch::config_detail
