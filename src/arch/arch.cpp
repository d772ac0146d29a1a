#include "arch/arch.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>

#include "arch/embedded_presets.h"
#include "arch/schema.h"
#include "util/edit_distance.h"

namespace trnsim::arch {

using detail::Kind;
using nlohmann::json;

ConfigError::ConfigError(std::string field, std::string why)
    : std::runtime_error(field.empty() ? why : field + ": " + why),
      field_(std::move(field)),
      why_(std::move(why)) {}

std::string generation_name(Generation g) {
  return fmt::format("gen{}", static_cast<int>(g));
}

std::string core_name(Generation g) {
  return fmt::format("NeuronCore-v{}", static_cast<int>(g));
}

namespace {

// Exact integers in a double stop at 2^53; larger "integers" are not meaningful counts.
constexpr double kMaxExactInteger = 9007199254740992.0;
// User files are small; refuse to read something that is clearly not a config.
constexpr std::uintmax_t kMaxFileBytes = 16u << 20;
// The ISA's partition rules (start partitions 0/32/64/96, quadrants) assume 128 partitions.
constexpr double kIsaPartitions = 128;
constexpr double kFp32Bytes = 4;
constexpr double kBf16Bytes = 2;

// ---- small helpers ----------------------------------------------------------------------

std::string describe_value(const json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return fmt::format("{} {}", v.type_name(), text);
}

std::string format_number(double v) {
  // Integers without a trailing ".0"; otherwise the shortest form that reads back the same.
  if (std::isfinite(v) && std::floor(v) == v && std::fabs(v) < 1e15) {
    return std::to_string(static_cast<std::int64_t>(v));
  }
  return json(v).dump();
}

using util::edit_distance;

// The candidate a misspelt name most likely meant, or "" when none is close.
std::string closest(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& candidate : candidates) {
    std::size_t distance = edit_distance(name, candidate);
    // A prefix ("clock" for "clock_ghz") counts as close whatever its length.
    if (!name.empty() && (candidate.rfind(name, 0) == 0 || name.rfind(candidate, 0) == 0)) {
      distance = std::min<std::size_t>(distance, 1);
    }
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  return best_distance <= limit ? best : std::string();
}

std::string join(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

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

json& make_path(json& root, const std::string& path) {
  json* node = &root;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    node = &(*node)[path.substr(start, dot == std::string::npos ? dot : dot - start)];
    if (dot == std::string::npos) return *node;
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
  void count(const std::string& path, T& x, const char*) {
    add_leaf(path, x);
  }
  template <class T>
  void count_list(const std::string& path, T& x, const char*) {
    add_leaf(path, x);
  }
  template <class T>
  void flag(const std::string& path, T& x, const char*) {
    add_leaf(path, x);
  }
  template <class T>
  void param(const std::string& path, T& x, Kind, const char*, const char*) {
    add_leaf(path, x);
  }
  template <class T>
  void optional_param(const std::string& path, T& x, Kind, const char*, const char*) {
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

// Rejects unknown fields and non-object sections before anything is decoded. A patch (a
// user file with "base") may also hold nulls, which delete what the preset had.
void check_structure(const json& object, const std::string& prefix, bool is_patch) {
  const Shape& s = shape();
  for (const auto& [key, value] : object.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
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

// ---- decoding ---------------------------------------------------------------------------

// A field written either as a plain value or as {"value": v, "source": ..., "estimate": ...}.
struct Unwrapped {
  const json* value = nullptr;
  Provenance provenance;
  const json* wrapper = nullptr;  // the object form, for the figure-only keys
};

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
          path, fmt::format("unknown generation \"{}\"; expected gen2, gen3 or gen4{}", name,
                            near.empty() ? "" : "; did you mean \"" + near + "\"?"));
    }
  }

  void count(const std::string& path, int& out, const char*) {
    const Unwrapped u = unwrap(path, require(path), false);
    out = to_int(path, *u.value);
    record(path, u.provenance);
  }

  void count_list(const std::string& path, std::vector<int>& out, const char*) {
    const Unwrapped u = unwrap(path, require(path), false);
    if (!u.value->is_array()) throw type_error(path, "a list of integers", *u.value);
    out.clear();
    for (std::size_t i = 0; i < u.value->size(); ++i) {
      out.push_back(to_int(fmt::format("{}[{}]", path, i), (*u.value)[i]));
    }
    record(path, u.provenance);
  }

  void flag(const std::string& path, bool& out, const char*) {
    const Unwrapped u = unwrap(path, require(path), false);
    if (!u.value->is_boolean()) throw type_error(path, "true or false", *u.value);
    out = u.value->get<bool>();
    record(path, u.provenance);
  }

  void param(const std::string& path, Param& out, Kind, const char*, const char*) {
    decode_param(path, require(path), out, false);
  }

  void optional_param(const std::string& path, std::optional<Param>& out, Kind, const char*,
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
      const std::string figure_path = path + "." + mode;
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

  static ConfigError type_error(const std::string& path, const std::string& expected,
                                const json& got) {
    return ConfigError(path, fmt::format("expected {}, got {}", expected, describe_value(got)));
  }

  Unwrapped unwrap(const std::string& path, const json& v, bool is_figure) const {
    Unwrapped u;
    if (!v.is_object()) {
      u.value = &v;
      u.provenance.source = default_source_;
    } else {
      std::vector<std::string> allowed = {"value", "source", "estimate"};
      if (is_figure) {
        allowed.emplace_back("tolerance");
        allowed.emplace_back("discrepancy");
      }
      for (const auto& [key, item] : v.items()) {
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
          const auto near = closest(key, allowed);
          throw ConfigError(path + "." + key,
                            fmt::format("unknown key; a parameter object has {}{}", join(allowed),
                                        near.empty() ? "" : "; did you mean \"" + near + "\"?"));
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
        u.provenance.source = default_source_;
      }
    }
    if (require_provenance_ && u.provenance.source.empty() && !u.provenance.estimate) {
      throw ConfigError(path, "a preset value needs a \"source\" or \"estimate\": true");
    }
    return u;
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

  static int to_int(const std::string& path, const json& v) {
    if (!v.is_number()) throw type_error(path, "an integer", v);
    const double x = v.get<double>();
    if (std::floor(x) != x) throw ConfigError(path, "must be an integer, got " + v.dump());
    if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) {
      throw ConfigError(path, "integer out of range: " + v.dump());
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

// ---- encoding ---------------------------------------------------------------------------

json param_json(const Param& p, Kind kind) {
  json out = json::object();
  const bool exact_integer = std::isfinite(p.value) && std::floor(p.value) == p.value &&
                             std::fabs(p.value) <= kMaxExactInteger;
  if (detail::kind_is_integral(kind) && exact_integer) {
    out["value"] = static_cast<std::int64_t>(p.value);
  } else {
    out["value"] = p.value;
  }
  if (!p.source.empty()) out["source"] = p.source;
  if (p.estimate) out["estimate"] = true;
  return out;
}

class Encoder {
 public:
  Encoder(json& root, const ChipConfig& config) : root_(root), config_(config) {}

  void text(const std::string& path, const std::string& s, const char*) {
    make_path(root_, path) = s;
  }
  void generation(const std::string& path, Generation g, const char*) {
    make_path(root_, path) = generation_name(g);
  }
  void count(const std::string& path, int n, const char*) { with_provenance(path, json(n)); }
  void count_list(const std::string& path, const std::vector<int>& list, const char*) {
    with_provenance(path, json(list));
  }
  void flag(const std::string& path, bool b, const char*) { with_provenance(path, json(b)); }
  void param(const std::string& path, const Param& p, Kind kind, const char*, const char*) {
    make_path(root_, path) = param_json(p, kind);
  }
  void optional_param(const std::string& path, const std::optional<Param>& p, Kind kind,
                      const char*, const char*) {
    if (p) make_path(root_, path) = param_json(*p, kind);
  }
  void figures(const std::string& path, const std::map<std::string, PublishedFigure>& figures,
               const char*) {
    if (figures.empty()) return;
    json& out = make_path(root_, path);
    for (const auto& [mode, figure] : figures) {
      json entry = param_json(figure, Kind::kPositive);
      if (figure.tolerance != kDefaultPublishedTolerance) entry["tolerance"] = figure.tolerance;
      if (!figure.discrepancy.empty()) entry["discrepancy"] = figure.discrepancy;
      out[mode] = std::move(entry);
    }
  }

 private:
  void with_provenance(const std::string& path, json value) {
    const auto it = config_.provenance.find(path);
    if (it == config_.provenance.end()) {
      make_path(root_, path) = std::move(value);
      return;
    }
    json out = {{"value", std::move(value)}};
    if (!it->second.source.empty()) out["source"] = it->second.source;
    if (it->second.estimate) out["estimate"] = true;
    make_path(root_, path) = std::move(out);
  }

  json& root_;
  const ChipConfig& config_;
};

// ---- validation -------------------------------------------------------------------------

// Per-field range and integrality checks, driven by each field's Kind.
class RangeChecker {
 public:
  void text(const std::string& path, const std::string& s, const char*) const {
    if (path == "name" && s.empty()) throw ConfigError(path, "must not be empty");
  }
  void generation(const std::string&, Generation, const char*) const {}
  void count(const std::string& path, int n, const char*) const {
    if (n < 1) throw ConfigError(path, fmt::format("must be a positive integer, got {}", n));
  }
  void count_list(const std::string& path, const std::vector<int>& list, const char*) const {
    if (list.empty()) throw ConfigError(path, "must list at least one value");
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (list[i] < 1) {
        throw ConfigError(fmt::format("{}[{}]", path, i),
                          fmt::format("must be a positive integer, got {}", list[i]));
      }
    }
  }
  void flag(const std::string&, bool, const char*) const {}
  void param(const std::string& path, const Param& p, Kind kind, const char*, const char*) const {
    check(path, p.value, kind);
  }
  void optional_param(const std::string& path, const std::optional<Param>& p, Kind kind,
                      const char*, const char*) const {
    if (p) check(path, p->value, kind);
  }
  void figures(const std::string& path, const std::map<std::string, PublishedFigure>& figures,
               const char*) const {
    const auto& modes = peak_modes();
    for (const auto& [mode, figure] : figures) {
      const std::string figure_path = path + "." + mode;
      if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
        throw ConfigError(figure_path, "unknown mode; the modes are " + join(modes));
      }
      check(figure_path, figure.value, Kind::kPositive);
      if (!(figure.tolerance >= 0 && figure.tolerance < 1)) {
        throw ConfigError(figure_path + ".tolerance",
                          "must be a fraction in [0, 1), got " + format_number(figure.tolerance));
      }
      if (figure.tolerance > kDefaultPublishedTolerance && figure.discrepancy.empty()) {
        throw ConfigError(figure_path + ".discrepancy",
                          fmt::format("required: a tolerance above the default {:g}% must say why "
                                      "the published figure does not follow from the parameters",
                                      kDefaultPublishedTolerance * 100));
      }
    }
  }

 private:
  static void check(const std::string& path, double v, Kind kind) {
    const std::string got = format_number(v);
    if (!std::isfinite(v)) throw ConfigError(path, "must be a finite number, got " + got);
    if (detail::kind_is_integral(kind)) {
      if (std::floor(v) != v) throw ConfigError(path, "must be an integer, got " + got);
      if (std::fabs(v) > kMaxExactInteger) throw ConfigError(path, "integer too large: " + got);
    }
    switch (kind) {
      case Kind::kPositiveInteger:
        if (v < 1) throw ConfigError(path, "must be a positive integer, got " + got);
        break;
      case Kind::kNonNegativeInteger:
        if (v < 0) throw ConfigError(path, "must be an integer >= 0, got " + got);
        break;
      case Kind::kPositive:
        if (v <= 0) throw ConfigError(path, "must be > 0, got " + got);
        break;
      case Kind::kNonNegative:
        if (v < 0) throw ConfigError(path, "must be >= 0, got " + got);
        break;
      case Kind::kFraction:
        if (v <= 0 || v > 1) throw ConfigError(path, "must be in (0, 1], got " + got);
        break;
    }
  }
};

void require_isa_partitions(const std::string& path, const Param& p) {
  if (p.value != kIsaPartitions) {
    throw ConfigError(path, fmt::format("must be 128, got {}: the ISA's partition rules (start "
                                        "partitions 0/32/64/96, 32-partition quadrants) assume 128",
                                        format_number(p.value)));
  }
}

const Param* rate_for_mode(const ChipConfig& c, const std::string& mode) {
  if (mode == "fp32") return &c.tensor.rate_fp32;
  if (mode == "bf16") return &c.tensor.rate_bf16;
  if (mode == "fp8") return &c.tensor.rate_fp8;
  if (mode == "mx") return &c.tensor.rate_mx;
  return nullptr;
}

std::string core_peak_formula(const ChipConfig& c, const std::string& mode) {
  const Param* rate = rate_for_mode(c, mode);
  return fmt::format("2 x {} rows x {} cols x {} GHz x rate {}", format_number(c.tensor.rows),
                     format_number(c.tensor.cols), format_number(c.tensor.clock_ghz),
                     format_number(rate->value));
}

void check_published(const std::string& path, const PublishedFigure& figure, double derived,
                     const std::string& formula, const std::string& mode) {
  if (derived <= 0) {
    throw ConfigError(path, fmt::format("a published {} figure is given but the config has no {} "
                                        "matmul (tensor.rate_{} = 0)",
                                        mode, mode, mode));
  }
  const double gap = std::fabs(figure.value - derived) / derived;
  // Tolerances are written with two digits; a hair of slack keeps 0.07 from failing at 6.999%.
  if (!(gap <= figure.tolerance + 1e-9)) {
    throw ConfigError(
        path, fmt::format("published {} TFLOPS contradicts the {:.1f} TFLOPS derived from {} "
                          "({:.1f}% apart, tolerance {:g}%); after changing those parameters, "
                          "update the figure or delete it with \"{}\": null",
                          format_number(figure.value), derived, formula, gap * 100,
                          figure.tolerance * 100, mode));
  }
}

void check_consistency(const ChipConfig& c) {
  for (std::size_t i = 1; i < c.lnc_options.size(); ++i) {
    if (c.lnc_options[i] <= c.lnc_options[i - 1]) {
      throw ConfigError("lnc_options", "must be strictly increasing, without repeats");
    }
  }
  if (c.lnc_options.front() != 1) {
    throw ConfigError("lnc_options", "must include 1 (one physical core per logical core)");
  }
  for (const int lnc : c.lnc_options) {
    if (c.cores_per_chip % lnc != 0) {
      throw ConfigError("lnc_options", fmt::format("{} does not divide cores_per_chip = {}", lnc,
                                                   c.cores_per_chip));
    }
  }
  if (!lnc_allowed(c, c.default_lnc)) {
    throw ConfigError("default_lnc", fmt::format("{} is not one of lnc_options", c.default_lnc));
  }

  require_isa_partitions("sbuf.partitions", c.sbuf.partitions);
  require_isa_partitions("psum.partitions", c.psum.partitions);
  require_isa_partitions("tensor.rows", c.tensor.rows);
  require_isa_partitions("vector.lanes", c.vector.lanes);
  require_isa_partitions("scalar.lanes", c.scalar.lanes);
  if (c.tensor.cols > c.psum.partitions || std::fmod(c.tensor.cols, 32) != 0) {
    throw ConfigError("tensor.cols",
                      fmt::format("must be a multiple of 32 up to psum.partitions = {} (columns "
                                  "become output partitions), got {}",
                                  format_number(c.psum.partitions), format_number(c.tensor.cols)));
  }
  if (c.gpsimd.cores * c.gpsimd.partitions_per_core != c.sbuf.partitions) {
    throw ConfigError(
        "gpsimd.partitions_per_core",
        fmt::format("gpsimd.cores x partitions_per_core = {} x {} must cover the {} "
                    "SBUF partitions exactly",
                    format_number(c.gpsimd.cores), format_number(c.gpsimd.partitions_per_core),
                    format_number(c.sbuf.partitions)));
  }

  if (c.sbuf.total_bytes && c.sbuf.total_bytes->value != sbuf_bytes_per_core(c)) {
    throw ConfigError(
        "sbuf.total_bytes",
        fmt::format("{} but partitions x bytes_per_partition = {} x {} = {}",
                    format_number(c.sbuf.total_bytes->value), format_number(c.sbuf.partitions),
                    format_number(c.sbuf.bytes_per_partition),
                    format_number(sbuf_bytes_per_core(c))));
  }
  if (std::fmod(c.sbuf.bytes_per_partition, c.sbuf.min_alignment_bytes) != 0) {
    throw ConfigError("sbuf.bytes_per_partition",
                      fmt::format("{} is not a multiple of sbuf.min_alignment_bytes = {}",
                                  format_number(c.sbuf.bytes_per_partition),
                                  format_number(c.sbuf.min_alignment_bytes)));
  }
  if (std::fmod(c.psum.bytes_per_partition, c.psum.banks) != 0) {
    throw ConfigError(
        "psum.bytes_per_partition",
        fmt::format("{} is not divisible into psum.banks = {} equal banks",
                    format_number(c.psum.bytes_per_partition), format_number(c.psum.banks)));
  }

  const auto& t = c.tensor;
  if (t.moving_free_max * kFp32Bytes > c.psum.bytes_per_partition) {
    throw ConfigError(
        "tensor.moving_free_max",
        fmt::format("{} fp32 results per partition need {} bytes, more than the {} "
                    "bytes of PSUM per partition",
                    format_number(t.moving_free_max), format_number(t.moving_free_max * kFp32Bytes),
                    format_number(c.psum.bytes_per_partition)));
  }
  if (t.moving_free_max_bf16 * kBf16Bytes > c.psum.bytes_per_partition) {
    throw ConfigError("tensor.moving_free_max_bf16",
                      fmt::format("{} bf16 results per partition need {} bytes, more than the {} "
                                  "bytes of PSUM per partition",
                                  format_number(t.moving_free_max_bf16),
                                  format_number(t.moving_free_max_bf16 * kBf16Bytes),
                                  format_number(c.psum.bytes_per_partition)));
  }
  if (t.has_bf16_psum != (t.moving_free_max_bf16 > 0)) {
    throw ConfigError("tensor.moving_free_max_bf16",
                      t.has_bf16_psum ? "must be > 0 when tensor.has_bf16_psum is true"
                                      : "must be 0 when tensor.has_bf16_psum is false");
  }
  if (t.has_mx != (t.rate_mx > 0)) {
    throw ConfigError("tensor.rate_mx", t.has_mx ? "must be > 0 when tensor.has_mx is true"
                                                 : "must be 0 when tensor.has_mx is false");
  }
  if (t.power_ramp && t.power_ramp_us <= 0) {
    throw ConfigError("tensor.power_ramp_us", "must be > 0 when tensor.power_ramp is true");
  }

  if (c.dma.engine_peak_bytes_per_ns > c.dma.engine_bandwidth_gbps) {
    throw ConfigError("dma.engine_peak_bytes_per_ns",
                      fmt::format("achievable {} bytes/ns exceeds the theoretical {} GB/s of "
                                  "dma.engine_bandwidth_gbps",
                                  format_number(c.dma.engine_peak_bytes_per_ns),
                                  format_number(c.dma.engine_bandwidth_gbps)));
  }
  if (c.dma.small_transfer_bytes > c.dma.saturating_transfer_bytes) {
    throw ConfigError("dma.small_transfer_bytes", "must not exceed dma.saturating_transfer_bytes");
  }

  for (const auto& [mode, figure] : t.published_peak_tflops) {
    check_published("tensor.published_peak_tflops." + mode, figure, core_peak_tflops(c, mode),
                    core_peak_formula(c, mode), mode);
  }
  for (const auto& [mode, figure] : c.published_chip) {
    check_published("published_chip." + mode, figure, chip_peak_tflops(c, mode),
                    fmt::format("{} cores x {}", c.cores_per_chip, core_peak_formula(c, mode)),
                    mode);
  }
}

// ---- JSON text, files, presets ----------------------------------------------------------

// nlohmann reports the byte offset of a parse error; users want line and column.
[[noreturn]] void throw_parse_error(const std::string& text, const json::parse_error& e) {
  const std::size_t error_index = e.byte == 0 ? 0 : std::min<std::size_t>(e.byte - 1, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < error_index; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  const std::size_t column = error_index - line_start + 1;
  // Keep nlohmann's explanation, without its own "[json.exception...] parse error at ..." prefix.
  std::string reason = e.what();
  if (const auto at = reason.find("parse error"); at != std::string::npos) {
    if (const auto colon = reason.find(": ", at); colon != std::string::npos) {
      reason = reason.substr(colon + 2);
    }
  }
  throw ConfigError("",
                    fmt::format("invalid JSON at line {}, column {}: {}", line, column, reason));
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
          throw ConfigError(path + key, "duplicate key");
        }
        frames.back().current_key = key;
        break;
      }
      case json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    return json::parse(text, on_event, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    throw_parse_error(text, e);
  } catch (const json::exception& e) {
    // e.g. a number too large for a double
    throw ConfigError("", fmt::format("invalid JSON: {}", e.what()));
  }
}

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
  throw ConfigError(
      field, fmt::format("unknown preset \"{}\"; the presets are {}{}", name, join(presets().names),
                         near.empty() ? "" : "; did you mean \"" + near + "\"?"));
}

// RFC 7386 merge patch, except that a parameter object ({"value": ...}) is replaced as a
// whole: a new value must not inherit the old value's source.
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

}  // namespace

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
  if (!j.is_object()) {
    throw ConfigError("", "a chip config must be a JSON object, got " + describe_value(j));
  }
  const std::string default_source = "set in " + origin;
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
  if (!patch.contains("name")) merged["name"] = origin;
  if (!patch.contains("description")) {
    merged["description"] =
        fmt::format("{} (preset {} with overrides from {})", base_description, base_name, origin);
  }
  return decode(merged, default_source, false);
}

ChipConfig load_json_text(const std::string& text, const std::string& origin) {
  return load_json(parse_json_text(text), origin);
}

ChipConfig load_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError("", fmt::format("cannot read \"{}\": it is a directory", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError("", fmt::format("cannot read \"{}\": {}", path, std::strerror(errno)));
  }
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) {
      throw ConfigError("", fmt::format("\"{}\" is larger than {} MiB; not a chip config", path,
                                        kMaxFileBytes >> 20));
    }
  }
  return load_json_text(text, path);
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

json to_json(const ChipConfig& c) {
  json root = json::object();
  Encoder encoder(root, c);
  detail::visit_fields(c, encoder);
  return root;
}

void validate(const ChipConfig& c) {
  RangeChecker ranges;
  detail::visit_fields(c, ranges);
  check_consistency(c);
}

const std::vector<std::string>& peak_modes() {
  static const std::vector<std::string> modes = {"fp32", "bf16", "fp8", "mx"};
  return modes;
}

double core_peak_tflops(const ChipConfig& c, const std::string& mode) {
  const Param* rate = rate_for_mode(c, mode);
  if (rate == nullptr) {
    throw std::invalid_argument(
        fmt::format("unknown TensorE mode \"{}\"; the modes are {}", mode, join(peak_modes())));
  }
  // 2 FLOP (multiply + add) per PE per moving row; GHz x 1e9 / 1e12 = / 1000.
  return 2.0 * c.tensor.rows * c.tensor.cols * c.tensor.clock_ghz * rate->value / 1000.0;
}

double chip_peak_tflops(const ChipConfig& c, const std::string& mode) {
  return c.cores_per_chip * core_peak_tflops(c, mode);
}

double sbuf_bytes_per_core(const ChipConfig& c) {
  return c.sbuf.partitions * c.sbuf.bytes_per_partition;
}

double psum_bytes_per_core(const ChipConfig& c) {
  return c.psum.partitions * c.psum.bytes_per_partition;
}

double psum_bank_bytes(const ChipConfig& c) {
  return c.psum.bytes_per_partition / c.psum.banks;
}

double hbm_bytes_per_ns_per_core(const ChipConfig& c) {
  return c.hbm.bandwidth_gbps / c.cores_per_chip;  // GB/s is bytes/ns
}

double dma_bytes_per_ns_per_core(const ChipConfig& c) {
  return c.dma.engines_per_core * c.dma.engine_peak_bytes_per_ns;
}

bool lnc_allowed(const ChipConfig& c, int lnc) {
  return std::find(c.lnc_options.begin(), c.lnc_options.end(), lnc) != c.lnc_options.end();
}

}  // namespace trnsim::arch
