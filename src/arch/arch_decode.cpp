// Decoding a chip config from JSON: the structure check against the schema (unknown fields
// with a "did you mean"), then every field through the schema's visitor, with provenance.
#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <set>

#include "arch/arch_detail.h"
#include "arch/schema.h"

namespace trnsim::arch {

using detail::Range;
using namespace config_detail;

namespace {

std::string parent_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

std::string leaf_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// The value at a dotted path, or nullptr if some level is missing. Levels are known objects:
// the structure check has run before anyone looks up a path.
const json* find_path(const json& root, const std::string& path) {
  const json* node = &root;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!node->is_object()) return nullptr;
    const auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string::npos) return node;
    start = dot + 1;
  }
}

// ---- the shape of the format, collected from the schema ---------------------------------

struct Shape {
  std::set<std::string> leaves;       // fields with a value
  std::set<std::string> figure_maps;  // objects keyed by mode
  std::set<std::string> sections;     // objects that group fields

  template <class T>
  void add_leaf(const std::string& path, const T&) {
    leaves.insert(path);
    add_sections(path);
  }
  void add_sections(const std::string& path) {
    for (std::string p = parent_of(path); !p.empty(); p = parent_of(p)) sections.insert(p);
  }
  template <class T>
  void text(const std::string& path, T& x, const char*) {
    add_leaf(path, x);
  }
  template <class T>
  void generation(const std::string& path, T& x, const char*) {
    add_leaf(path, x);
  }
  template <class T>
  void count(const std::string& path, T& x, const Range&, const char*) {
    add_leaf(path, x);
  }
  template <class T>
  void count_list(const std::string& path, T& x, const Range&, const char*) {
    add_leaf(path, x);
  }
  template <class T>
  void flag(const std::string& path, T& x, const char*) {
    add_leaf(path, x);
  }
  template <class T>
  void param(const std::string& path, T& x, const Range&, const char*, const char*) {
    add_leaf(path, x);
  }
  template <class T>
  void optional_param(const std::string& path, T& x, const Range&, const char*, const char*) {
    add_leaf(path, x);
  }
  template <class T>
  void figures(const std::string& path, T&, const char*) {
    figure_maps.insert(path);
    add_sections(path);
  }

  std::vector<std::string> children_of(const std::string& parent) const {
    std::vector<std::string> names;
    for (const auto* set : {&leaves, &figure_maps, &sections}) {
      for (const auto& path : *set) {
        if (parent_of(path) == parent) names.push_back(leaf_of(path));
      }
    }
    return names;
  }
};

const Shape& shape() {
  static const Shape instance = [] {
    Shape s;
    ChipConfig scratch;
    detail::visit_fields(scratch, s);
    return s;
  }();
  return instance;
}

[[noreturn]] void throw_unknown_field(const std::string& path, const std::string& parent) {
  const Shape& s = shape();
  const std::string name = leaf_of(path);
  const auto siblings = s.children_of(parent);
  std::string hint;
  if (const auto near = closest(name, siblings); !near.empty()) {
    hint = fmt::format("; did you mean \"{}\"?", parent.empty() ? near : parent + "." + near);
  } else {
    // The right name in the wrong section ("sbuf.banks" for "psum.banks").
    for (const auto& leaf : s.leaves) {
      if (leaf_of(leaf) == name) {
        hint = fmt::format("; did you mean \"{}\"?", leaf);
        break;
      }
    }
    if (hint.empty()) {
      hint = fmt::format("; the fields {} are: {}",
                         parent.empty() ? "at the top level" : "of " + parent, join(siblings));
    }
  }
  throw ConfigError(path, "unknown field" + hint);
}

}  // namespace

namespace config_detail {

void check_structure(const json& object, const std::string& prefix, bool is_patch) {
  const Shape& s = shape();
  for (const auto& [key, value] : object.items()) {
    // No field name is long: a shortened key (for the messages) is as unknown as the key.
    const std::string name = shorten(key);
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    if (prefix.empty() && key == "base" && is_patch) continue;
    if (key.find('.') != std::string::npos) {
      throw ConfigError(path, "unknown field (nest sections as objects instead of dotted keys)");
    }
    if (s.leaves.count(path) != 0) continue;  // decoded (and type-checked) field by field
    const bool is_object_field = s.figure_maps.count(path) != 0 || s.sections.count(path) != 0;
    if (is_object_field && is_patch && value.is_null()) continue;
    if (is_object_field) {
      if (!value.is_object()) {
        throw ConfigError(path, "expected an object, got " + describe_value(value));
      }
      if (s.sections.count(path) != 0) check_structure(value, path, is_patch);
      continue;
    }
    throw_unknown_field(path, prefix);
  }
}

}  // namespace config_detail

namespace {

// ---- decoding ---------------------------------------------------------------------------

class Decoder {
 public:
  // `default_source` is given to values without provenance; when `require_provenance` is
  // set (presets) such values are an error instead.
  Decoder(const json& root, ChipConfig& config, std::string default_source, bool require_provenance)
      : root_(root),
        config_(config),
        default_source_(std::move(default_source)),
        require_provenance_(require_provenance) {}

  void text(const std::string& path, std::string& out, const char*) {
    const json& v = require(path);
    if (!v.is_string()) throw type_error(path, "a string", v);
    out = v.get<std::string>();
  }

  void generation(const std::string& path, Generation& out, const char*) {
    const json& v = require(path);
    static const std::vector<std::string> names = {"gen2", "gen3", "gen4"};
    if (!v.is_string()) throw type_error(path, "one of \"gen2\", \"gen3\", \"gen4\"", v);
    const auto name = v.get<std::string>();
    if (name == "gen2") {
      out = Generation::kGen2;
    } else if (name == "gen3") {
      out = Generation::kGen3;
    } else if (name == "gen4") {
      out = Generation::kGen4;
    } else {
      const auto near = closest(name, names);
      throw ConfigError(
          path, fmt::format("unknown generation \"{}\"; expected gen2, gen3 or gen4{}",
                            shorten(name), near.empty() ? "" : "; did you mean \"" + near + "\"?"));
    }
  }

  void count(const std::string& path, int& out, const Range& range, const char*) {
    const Unwrapped u = unwrap(path, require(path), false);
    out = to_int(path, *u.value, range);
    record(path, u.provenance);
  }

  void count_list(const std::string& path, std::vector<int>& out, const Range& range, const char*) {
    const Unwrapped u = unwrap(path, require(path), false);
    if (!u.value->is_array()) throw type_error(path, "a list of integers", *u.value);
    out.clear();
    for (std::size_t i = 0; i < u.value->size(); ++i) {
      out.push_back(to_int(fmt::format("{}[{}]", path, i), (*u.value)[i], range));
    }
    record(path, u.provenance);
  }

  void flag(const std::string& path, bool& out, const char*) {
    const Unwrapped u = unwrap(path, require(path), false);
    if (!u.value->is_boolean()) throw type_error(path, "true or false", *u.value);
    out = u.value->get<bool>();
    record(path, u.provenance);
  }

  void param(const std::string& path, Param& out, const Range&, const char*, const char*) {
    decode_param(path, require(path), out, false);
  }

  void optional_param(const std::string& path, std::optional<Param>& out, const Range&, const char*,
                      const char*) {
    const json* v = find_path(root_, path);
    if (v == nullptr) {
      out.reset();
      return;
    }
    out.emplace();
    decode_param(path, *v, *out, false);
  }

  void figures(const std::string& path, std::map<std::string, PublishedFigure>& out, const char*) {
    out.clear();
    const json* v = find_path(root_, path);
    if (v == nullptr) return;  // published figures are optional
    for (const auto& [mode, figure_json] : v->items()) {
      const std::string figure_path = path + "." + shorten(mode);
      const auto& modes = peak_modes();
      if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
        const auto near = closest(mode, modes);
        throw ConfigError(figure_path,
                          fmt::format("unknown mode; the modes are {}{}", join(modes),
                                      near.empty() ? "" : "; did you mean \"" + near + "\"?"));
      }
      PublishedFigure figure;
      const Unwrapped u = decode_param(figure_path, figure_json, figure, true);
      if (u.wrapper != nullptr) {
        if (const auto it = u.wrapper->find("tolerance"); it != u.wrapper->end()) {
          if (!it->is_number()) throw type_error(figure_path + ".tolerance", "a number", *it);
          figure.tolerance = it->get<double>();
        }
        if (const auto it = u.wrapper->find("discrepancy"); it != u.wrapper->end()) {
          if (!it->is_string()) throw type_error(figure_path + ".discrepancy", "a string", *it);
          figure.discrepancy = it->get<std::string>();
        }
      }
      out.emplace(mode, std::move(figure));
    }
  }

 private:
  const json& require(const std::string& path) const {
    const json* v = find_path(root_, path);
    if (v == nullptr) throw ConfigError(path, "missing (required field, see docs/arch-config.md)");
    return *v;
  }

  Unwrapped unwrap(const std::string& path, const json& v, bool is_figure) const {
    static const std::vector<std::string> kFigureKeys = {"tolerance", "discrepancy"};
    return unwrap_field(path, v, is_figure ? kFigureKeys : std::vector<std::string>{},
                        default_source_, require_provenance_);
  }

  Unwrapped decode_param(const std::string& path, const json& v, Param& out, bool is_figure) {
    Unwrapped u = unwrap(path, v, is_figure);
    if (!u.value->is_number()) {
      throw type_error(path, "a number or {\"value\": number, \"source\": ...}", *u.value);
    }
    out.value = u.value->get<double>();
    out.source = u.provenance.source;
    out.estimate = u.provenance.estimate;
    return u;
  }

  // The field's range (integers within int) is checked before the cast.
  static int to_int(const std::string& path, const json& v, const Range& range) {
    if (!v.is_number()) throw type_error(path, "an integer", v);
    const double x = v.get<double>();
    detail::check_range(path, x, range, "");
    if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) {
      throw ConfigError(path, "integer out of range: " + v.dump());  // a schema range too wide
    }
    return static_cast<int>(x);
  }

  void record(const std::string& path, const Provenance& provenance) {
    if (provenance.source.empty() && !provenance.estimate) return;
    config_.provenance[path] = provenance;
  }

  const json& root_;
  ChipConfig& config_;
  std::string default_source_;
  bool require_provenance_;
};

}  // namespace

namespace config_detail {

ConfigError type_error(const std::string& path, const std::string& expected, const json& got) {
  return ConfigError(path, fmt::format("expected {}, got {}", expected, describe_value(got)));
}

Unwrapped unwrap_field(const std::string& path, const json& v,
                       const std::vector<std::string>& extra_keys,
                       const std::string& default_source, bool require_provenance) {
  Unwrapped u;
  if (!v.is_object()) {
    u.value = &v;
    u.provenance.source = default_source;
  } else {
    std::vector<std::string> allowed = {"value", "source", "estimate"};
    allowed.insert(allowed.end(), extra_keys.begin(), extra_keys.end());
    for (const auto& [key, item] : v.items()) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        throw ConfigError(path + "." + shorten(key),
                          fmt::format("unknown key; a parameter object has {}{}", join(allowed),
                                      did_you_mean(key, allowed)));
      }
    }
    const auto value = v.find("value");
    if (value == v.end()) throw ConfigError(path + ".value", "missing");
    u.value = &*value;
    u.wrapper = &v;
    if (const auto it = v.find("source"); it != v.end()) {
      if (!it->is_string()) throw type_error(path + ".source", "a string", *it);
      u.provenance.source = it->get<std::string>();
    }
    if (const auto it = v.find("estimate"); it != v.end()) {
      if (!it->is_boolean()) throw type_error(path + ".estimate", "true or false", *it);
      u.provenance.estimate = it->get<bool>();
    }
    if (u.provenance.source.empty() && !u.provenance.estimate) {
      u.provenance.source = default_source;
    }
  }
  if (require_provenance && u.provenance.source.empty() && !u.provenance.estimate) {
    throw ConfigError(path, "a preset value needs a \"source\" or \"estimate\": true");
  }
  return u;
}

Param read_param(const std::string& path, const json& v, const detail::Range& range,
                 const char* unit, const std::string& default_source, bool require_provenance) {
  const Unwrapped u = unwrap_field(path, v, {}, default_source, require_provenance);
  if (!u.value->is_number()) {
    throw type_error(path, "a number or {\"value\": number, \"source\": ...}", *u.value);
  }
  Param out{u.value->get<double>(), u.provenance.source, u.provenance.estimate};
  detail::check_range(path, out.value, range, unit);
  return out;
}

ChipConfig decode(const json& root, const std::string& default_source, bool require_provenance) {
  if (!root.is_object()) {
    throw ConfigError("", "a chip config must be a JSON object, got " + describe_value(root));
  }
  check_structure(root, "", false);
  ChipConfig config;
  Decoder decoder(root, config, default_source, require_provenance);
  detail::visit_fields(config, decoder);
  validate(config);
  return config;
}

}  // namespace config_detail

}  // namespace trnsim::arch
