// Loading chip configs: JSON text (line/column errors, duplicate keys), files, the embedded
// presets and user files that patch a preset ("base").
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "arch/arch_detail.h"
#include "arch/embedded_presets.h"
#include "util/read_file.h"

namespace trnsim::arch {

using namespace config_detail;

namespace {

// User files are small; refuse to read something that is clearly not a config.
constexpr std::uintmax_t kMaxFileBytes = 16u << 20;

// Deepest nesting of arrays and objects accepted. A config needs 4 levels (the object of a
// published figure in tensor.published_peak_tflops); anything much deeper is not a config,
// and copying, merging or printing it would recurse once per level.
constexpr std::size_t kMaxNesting = 64;

// ---- JSON text, files, presets ----------------------------------------------------------

// Line and column (1-based, columns in bytes) of byte `index` of `text`.
util::SourceLocation location_of(const std::string& text, std::size_t index) {
  index = std::min(index, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < index; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  constexpr std::size_t kMax = std::numeric_limits<std::uint32_t>::max();
  return {"", static_cast<std::uint32_t>(std::min(line, kMax)),
          static_cast<std::uint32_t>(std::min(index - line_start + 1, kMax))};
}

// nlohmann reports the byte offset of a parse error; users want line and column.
[[noreturn]] void throw_parse_error(const std::string& text, const json::parse_error& e) {
  const std::size_t error_index = e.byte == 0 ? 0 : e.byte - 1;
  // Keep nlohmann's explanation, without its own "[json.exception...] parse error at ..." prefix.
  std::string reason = e.what();
  if (const auto at = reason.find("parse error"); at != std::string::npos) {
    if (const auto colon = reason.find(": ", at); colon != std::string::npos) {
      reason = reason.substr(colon + 2);
    }
  }
  throw ConfigError("", "invalid JSON: " + reason, location_of(text, error_index));
}

// How deeply the arrays and objects of JSON text nest, found by a scan that skips strings
// and comments; `first_too_deep` is the offset of the first bracket that opens level
// kMaxNesting + 1 (npos if none). Malformed text is measured as far as it goes: the parser
// reports what is wrong with it.
struct Nesting {
  std::size_t deepest = 0;
  std::size_t first_too_deep = std::string::npos;
};

Nesting measure_nesting(const std::string& text) {
  Nesting n;
  std::size_t depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = std::min(text.find('\n', i), text.size());
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const auto end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 1;
    } else if (c == '[' || c == '{') {
      ++depth;
      n.deepest = std::max(n.deepest, depth);
      if (depth > kMaxNesting && n.first_too_deep == std::string::npos) n.first_too_deep = i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return n;
}

std::string too_deep(std::size_t depth) {
  return fmt::format(
      "nested {} levels deep; a trnsim config nests at most {} (the deepest "
      "field of a chip config, a published figure, is at level 4)",
      depth, kMaxNesting);
}

}  // namespace

namespace config_detail {

// The same bound on a value built in memory (load_json), measured without recursion: copying
// or printing a deeper value would recurse once per level. The error names the top-level field
// that holds the deep value.
void check_nesting(const json& root) {
  struct Open {
    const json* node;
    std::size_t depth;
    std::string top_field;
  };
  std::vector<Open> stack = {{&root, 1, ""}};
  while (!stack.empty()) {
    const Open open = std::move(stack.back());
    stack.pop_back();
    if (!open.node->is_structured()) continue;
    if (open.depth > kMaxNesting) {
      std::size_t deepest = open.depth;
      std::vector<std::pair<const json*, std::size_t>> rest = {{open.node, open.depth}};
      while (!rest.empty()) {
        const auto [node, depth] = rest.back();
        rest.pop_back();
        deepest = std::max(deepest, depth);
        for (const auto& child : *node) {
          if (child.is_structured()) rest.emplace_back(&child, depth + 1);
        }
      }
      throw ConfigError(open.top_field, too_deep(deepest));
    }
    for (auto it = open.node->begin(); it != open.node->end(); ++it) {
      if (!it->is_structured()) continue;
      std::string top = open.top_field;
      if (open.depth == 1 && open.node->is_object()) top = it.key();
      stack.push_back({&*it, open.depth + 1, std::move(top)});
    }
  }
}

json parse_json_text(const std::string& text) {
  // Duplicate keys are legal JSON but almost always a mistake in a config: the parser would
  // silently keep the last one. Track the keys seen in each open object.
  struct Frame {
    bool is_object = false;
    std::set<std::string> keys;
    std::string current_key;
  };
  std::vector<Frame> frames;
  const json::parser_callback_t on_event = [&frames](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        frames.push_back(Frame{true, {}, {}});
        break;
      case json::parse_event_t::array_start:
        frames.push_back(Frame{false, {}, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames.empty()) frames.pop_back();
        break;
      case json::parse_event_t::key: {
        if (frames.empty() || !parsed.is_string()) break;
        const auto key = parsed.get<std::string>();
        if (!frames.back().keys.insert(key).second) {
          std::string path;
          for (std::size_t i = 0; i + 1 < frames.size(); ++i) {
            if (frames[i].is_object) path += frames[i].current_key + ".";
          }
          throw ConfigError(path + shorten(key), "duplicate key");
        }
        frames.back().current_key = shorten(key);  // for messages only
        break;
      }
      case json::parse_event_t::value:
        break;
    }
    return true;
  };
  if (const Nesting n = measure_nesting(text); n.first_too_deep != std::string::npos) {
    throw ConfigError("", too_deep(n.deepest), location_of(text, n.first_too_deep));
  }
  try {
    return json::parse(text, on_event, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    throw_parse_error(text, e);
  } catch (const json::exception& e) {
    // e.g. a number too large for a double
    throw ConfigError("", fmt::format("invalid JSON: {}", e.what()));
  }
}

std::string read_config_file(const std::string& path, const char* what) {
  try {
    return util::read_file(path, kMaxFileBytes, what);
  } catch (const util::Error& e) {
    util::Diagnostic d = e.diagnostics().front();
    throw ConfigError("", d.message, std::move(d.where));
  }
}

}  // namespace config_detail

namespace {

struct PresetStore {
  std::vector<std::string> names;
  std::map<std::string, std::string> texts;
};

const PresetStore& presets() {
  static const PresetStore store = [] {
    PresetStore s;
    for (std::size_t i = 0; i < detail::kEmbeddedPresetCount; ++i) {
      s.names.emplace_back(detail::kEmbeddedPresets[i].name);
      s.texts.emplace(detail::kEmbeddedPresets[i].name, detail::kEmbeddedPresets[i].json);
    }
    return s;
  }();
  return store;
}

[[noreturn]] void throw_unknown_preset(const std::string& field, const std::string& name) {
  const auto near = closest(name, presets().names);
  throw ConfigError(field, fmt::format("unknown preset \"{}\"; the presets are {}{}", shorten(name),
                                       join(presets().names),
                                       near.empty() ? "" : "; did you mean \"" + near + "\"?"));
}

// The fields a patch sets or deletes, as JSON paths; a parameter object or a figure counts as
// one field. The structure check has run: the patch nests only as deep as the format.
void overridden_fields(const json& patch, const std::string& prefix,
                       std::vector<std::string>& out) {
  for (const auto& [key, value] : patch.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (prefix.empty() && (key == "name" || key == "description")) continue;
    if (value.is_object() && !value.empty() && !value.contains("value")) {
      overridden_fields(value, path, out);
    } else {
      out.push_back(path);
    }
  }
}

// The preset's description says what the file changed: "8 NeuronCore-v4" stays in it, so a
// file with 16 cores must say so.
std::string overridden_description(const std::string& base_description,
                                   const std::string& base_name, const std::string& origin,
                                   const json& patch) {
  std::vector<std::string> fields;
  overridden_fields(patch, "", fields);
  if (fields.empty()) {
    return fmt::format("{} (preset {}, from {} without overrides)", base_description, base_name,
                       origin);
  }
  constexpr std::size_t kListed = 4;
  std::string listed = join(std::vector<std::string>(
      fields.begin(),
      fields.begin() + static_cast<std::ptrdiff_t>(std::min(kListed, fields.size()))));
  if (fields.size() > kListed) listed += fmt::format(" and {} more", fields.size() - kListed);
  return fmt::format("{} (preset {} with overrides from {}: {})", base_description, base_name,
                     origin, listed);
}

}  // namespace

namespace config_detail {

void merge_patch(json& target, const json& patch) {
  for (const auto& [key, value] : patch.items()) {
    if (value.is_null()) {
      target.erase(key);
      continue;
    }
    const auto it = target.find(key);
    const bool merge_into =
        it != target.end() && it->is_object() && !it->contains("value") && value.is_object();
    if (merge_into) {
      merge_patch(*it, value);
    } else {
      target[key] = value;
    }
  }
}

}  // namespace config_detail

std::vector<std::string> preset_names() {
  return presets().names;
}

const std::string& preset_json_text(const std::string& name) {
  const auto it = presets().texts.find(name);
  if (it == presets().texts.end()) throw_unknown_preset("", name);
  return it->second;
}

ChipConfig load_preset(const std::string& name) {
  const std::string& text = preset_json_text(name);
  try {
    return decode(parse_json_text(text), "", /*require_provenance=*/true);
  } catch (const ConfigError& e) {
    // A broken preset is a build defect, but say which preset instead of crashing.
    throw ConfigError(e.field(), fmt::format("{} (in preset {})", e.why(), name));
  }
}

ChipConfig load_json(const json& j, const std::string& origin) {
  check_nesting(j);
  if (!j.is_object()) {
    throw ConfigError("", "a chip config must be a JSON object, got " + describe_value(j));
  }
  // The origin (a path) becomes text of the config: name, description, sources.
  const std::string printable_origin = escape_control(origin);
  const std::string default_source = "set in " + printable_origin;
  const auto base = j.find("base");
  if (base == j.end()) return decode(j, default_source, false);

  if (!base->is_string())
    throw ConfigError("base", "expected a preset name, got " + describe_value(*base));
  const auto base_name = base->get<std::string>();
  if (presets().texts.count(base_name) == 0) throw_unknown_preset("base", base_name);
  // Name unknown fields against the user's file before merging, so the paths are theirs.
  check_structure(j, "", /*is_patch=*/true);

  json merged = parse_json_text(presets().texts.at(base_name));
  json patch = j;
  patch.erase("base");
  const std::string base_description = merged.value("description", base_name);
  merge_patch(merged, patch);
  if (!patch.contains("name")) merged["name"] = printable_origin;
  if (!patch.contains("description")) {
    merged["description"] =
        overridden_description(base_description, base_name, printable_origin, patch);
  }
  return decode(merged, default_source, false);
}

ChipConfig load_json_text(const std::string& text, const std::string& origin) {
  try {
    return load_json(parse_json_text(text), origin);
  } catch (const ConfigError& e) {
    if (!e.where().file.empty()) throw;
    util::SourceLocation where = e.where();
    where.file = origin;  // the errors name the file the text came from
    throw ConfigError(e.field(), e.why(), std::move(where));
  }
}

ChipConfig load_file(const std::string& path) {
  return load_json_text(read_config_file(path, "chip config"), path);
}

ChipConfig load(const std::string& preset_or_path) {
  if (presets().texts.count(preset_or_path) != 0) return load_preset(preset_or_path);
  std::error_code ec;
  if (std::filesystem::exists(preset_or_path, ec)) return load_file(preset_or_path);
  const auto near = closest(preset_or_path, presets().names);
  throw ConfigError("", fmt::format("\"{}\" is neither a preset ({}) nor an existing file{}",
                                    preset_or_path, join(presets().names),
                                    near.empty() ? "" : "; did you mean \"" + near + "\"?"));
}

}  // namespace trnsim::arch
