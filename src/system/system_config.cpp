// Decoding, encoding and validating system configs; the embedded presets and user files that
// patch one ("base"). The JSON machinery (text, files, parameters with provenance, ranges,
// messages) is the chip config's (arch/config_json.h).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "arch/config_json.h"
#include "system/embedded_presets.h"
#include "system/system.h"

namespace trnsim::system {

using namespace arch::config_detail;
using arch::detail::check_range;
using arch::detail::integers;
using arch::detail::Range;
using arch::detail::reals;

namespace {

constexpr Range kBandwidthGbps = reals(1e-3, 1e9);  // 1 MB/s .. 1 EB/s
constexpr Range kLatencyNs = reals(0, 1e9);         // up to one second
constexpr Range kDimensionSize = integers(1, 65536);
constexpr Range kInstances = integers(1, 65536);
constexpr Range kLevel = integers(1, 16);
constexpr const char* kNeuronlinkFigure = "neuronlink_gbps_per_chip";

const std::vector<std::string>& top_level_keys() {
  static const std::vector<std::string> keys = {
      "name", "description", "chip", "instances", "shape", "links", "switches", "efa", "published"};
  return keys;
}

void check_keys(const json& object, const std::string& path,
                const std::vector<std::string>& allowed) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    const std::string where = path.empty() ? shorten(key) : path + "." + shorten(key);
    std::string hint = did_you_mean(key, allowed);
    if (hint.empty())
      hint = "; the fields " + (path.empty() ? "at the top level" : "of " + path) +
             " are: " + join(allowed);
    throw ConfigError(where, "unknown field" + hint);
  }
}

const json& require(const json& object, const std::string& path, const std::string& key) {
  const auto it = object.find(key);
  const std::string where = path.empty() ? key : path + "." + key;
  if (it == object.end()) {
    throw ConfigError(where, "missing (required field, see docs/system-config.md)");
  }
  return *it;
}

const json& require_object(const json& object, const std::string& path, const std::string& key) {
  const json& v = require(object, path, key);
  if (!v.is_object()) throw type_error(path.empty() ? key : path + "." + key, "an object", v);
  return v;
}

std::string require_text(const json& object, const std::string& path, const std::string& key) {
  const json& v = require(object, path, key);
  if (!v.is_string()) throw type_error(path.empty() ? key : path + "." + key, "a string", v);
  return v.get<std::string>();
}

int to_int(const std::string& path, const json& v, const Range& range) {
  if (!v.is_number()) throw type_error(path, "an integer", v);
  const double x = v.get<double>();
  check_range(path, x, range, "");
  return static_cast<int>(x);
}

// A name a config gives to a dimension, link or switch: it appears in messages and drawings.
void check_name(const std::string& path, const std::string& name) {
  const bool ok =
      !name.empty() && name.size() <= 32 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
      });
  if (!ok) {
    throw ConfigError(path, fmt::format("\"{}\" is not a name (1 to 32 letters, digits, _ or -)",
                                        escape_control(shorten(name))));
  }
}

class Decoder {
 public:
  Decoder(std::string default_source, bool require_provenance, std::string chip_base_dir)
      : default_source_(std::move(default_source)),
        require_provenance_(require_provenance),
        chip_base_dir_(std::move(chip_base_dir)) {}

  SystemConfig decode(const json& root) {
    if (!root.is_object()) {
      throw ConfigError("", "a system config must be a JSON object, got " + describe_value(root));
    }
    check_keys(root, "", top_level_keys());
    SystemConfig c;
    c.name = require_text(root, "", "name");
    c.description = require_text(root, "", "description");
    c.chip = require_text(root, "", "chip");
    c.chip_config = load_chip(c.chip);
    const Unwrapped instances = unwrap_field("instances", require(root, "", "instances"), {},
                                             default_source_, require_provenance_);
    c.instances = to_int("instances", *instances.value, kInstances);
    record(c, "instances", instances.provenance);
    decode_shape(root, c);
    decode_links(require_object(root, "", "links"), c);
    decode_switches(require_object(root, "", "switches"), c);
    decode_efa(require_object(root, "", "efa"), c);
    if (const auto it = root.find("published"); it != root.end()) decode_published(*it, c);
    validate(c);
    return c;
  }

 private:
  arch::ChipConfig load_chip(const std::string& chip) const {
    const auto presets = arch::preset_names();
    const bool is_preset = std::find(presets.begin(), presets.end(), chip) != presets.end();
    std::string where = chip;
    if (!is_preset && !chip_base_dir_.empty() && !std::filesystem::path(chip).is_absolute()) {
      where = (std::filesystem::path(chip_base_dir_) / chip).string();
    }
    try {
      return arch::load(where);
    } catch (const ConfigError& e) {
      const std::string inner = e.field().empty() ? e.why() : e.field() + ": " + e.why();
      throw ConfigError("chip", is_preset ? inner : fmt::format("in {}: {}", where, inner));
    }
  }

  void record(SystemConfig& c, const std::string& path, const arch::Provenance& p) const {
    if (!p.source.empty() || p.estimate) c.provenance[path] = p;
  }

  Param param(const json& object, const std::string& path, const std::string& key,
              const Range& range, const char* unit) const {
    return read_param(path + "." + key, require(object, path, key), range, unit, default_source_,
                      require_provenance_);
  }

  // A link rule's or switch tier's own "source" and "estimate": where its topology comes from.
  arch::Provenance rule_provenance(const json& object, const std::string& path) const {
    arch::Provenance p;
    if (const auto it = object.find("source"); it != object.end()) {
      if (!it->is_string()) throw type_error(path + ".source", "a string", *it);
      p.source = it->get<std::string>();
    }
    if (const auto it = object.find("estimate"); it != object.end()) {
      if (!it->is_boolean()) throw type_error(path + ".estimate", "true or false", *it);
      p.estimate = it->get<bool>();
    }
    if (p.source.empty() && !p.estimate) {
      if (require_provenance_) {
        throw ConfigError(path, "a preset rule needs a \"source\" or \"estimate\": true");
      }
      p.source = default_source_;
    }
    return p;
  }

  void decode_shape(const json& root, SystemConfig& c) const {
    const Unwrapped u =
        unwrap_field("shape", require(root, "", "shape"), {}, default_source_, require_provenance_);
    const json& list = *u.value;
    if (!list.is_array() || list.empty()) {
      throw type_error("shape", "a non-empty list of [\"name\", size] pairs", list);
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = fmt::format("shape[{}]", i);
      const json& pair = list[i];
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string()) {
        throw type_error(path, "a [\"name\", size] pair", pair);
      }
      Dimension d{pair[0].get<std::string>(), to_int(path + "[1]", pair[1], kDimensionSize)};
      check_name(path + "[0]", d.name);
      c.shape.push_back(std::move(d));
    }
    record(c, "shape", u.provenance);
  }

  void decode_links(const json& links, SystemConfig& c) const {
    static const std::vector<std::string> keys = {"along",      "pattern", "bandwidth_gbps",
                                                  "latency_ns", "source",  "estimate"};
    for (const auto& [name, v] : links.items()) {
      const std::string path = "links." + shorten(name);
      check_name(path, name);
      if (!v.is_object()) throw type_error(path, "an object", v);
      check_keys(v, path, keys);
      LinkRule rule;
      rule.along = require_text(v, path, "along");
      const std::string pattern = require_text(v, path, "pattern");
      static const std::vector<std::string> patterns = {"ring", "line", "halves"};
      const auto at = std::find(patterns.begin(), patterns.end(), pattern);
      if (at == patterns.end()) {
        throw ConfigError(path + ".pattern",
                          fmt::format("unknown pattern \"{}\"; the patterns are {}{}",
                                      escape_control(shorten(pattern)), join(patterns),
                                      did_you_mean(pattern, patterns)));
      }
      rule.pattern = static_cast<LinkPattern>(at - patterns.begin());
      rule.bandwidth_gbps = param(v, path, "bandwidth_gbps", kBandwidthGbps, "GB/s");
      rule.latency_ns = param(v, path, "latency_ns", kLatencyNs, "ns");
      rule.topology = rule_provenance(v, path);
      c.links.emplace(name, std::move(rule));
    }
  }

  void decode_switches(const json& switches, SystemConfig& c) const {
    static const std::vector<std::string> keys = {
        "level",  "block",   "port_gbps", "link_latency_ns", "switch_latency_ns",
        "source", "estimate"};
    for (const auto& [name, v] : switches.items()) {
      const std::string path = "switches." + shorten(name);
      check_name(path, name);
      if (!v.is_object()) throw type_error(path, "an object", v);
      check_keys(v, path, keys);
      SwitchTier tier;
      tier.level = to_int(path + ".level", require(v, path, "level"), kLevel);
      for (const auto& [dim, extent] : require_object(v, path, "block").items()) {
        const std::string block_path = path + ".block." + shorten(dim);
        tier.block[dim] = to_int(block_path, extent, kDimensionSize);
      }
      tier.port_gbps = param(v, path, "port_gbps", kBandwidthGbps, "GB/s");
      tier.link_latency_ns = param(v, path, "link_latency_ns", kLatencyNs, "ns");
      tier.switch_latency_ns = param(v, path, "switch_latency_ns", kLatencyNs, "ns");
      tier.topology = rule_provenance(v, path);
      c.switches.emplace(name, std::move(tier));
    }
  }

  void decode_efa(const json& efa, SystemConfig& c) const {
    check_keys(efa, "efa", {"gbit_per_chip", "latency_ns"});
    c.efa.gbit_per_chip = param(efa, "efa", "gbit_per_chip", kBandwidthGbps, "Gbit/s");
    c.efa.latency_ns = param(efa, "efa", "latency_ns", kLatencyNs, "ns");
  }

  void decode_published(const json& published, SystemConfig& c) const {
    if (!published.is_object()) throw type_error("published", "an object", published);
    check_keys(published, "published", {kNeuronlinkFigure});
    for (const auto& [key, v] : published.items()) {
      const std::string path = "published." + key;
      const Unwrapped u =
          unwrap_field(path, v, {"tolerance", "discrepancy"}, default_source_, require_provenance_);
      if (!u.value->is_number()) throw type_error(path, "a number", *u.value);
      PublishedFigure f;
      f.value = u.value->get<double>();
      f.source = u.provenance.source;
      f.estimate = u.provenance.estimate;
      if (u.wrapper != nullptr) {
        if (const auto it = u.wrapper->find("tolerance"); it != u.wrapper->end()) {
          if (!it->is_number()) throw type_error(path + ".tolerance", "a number", *it);
          f.tolerance = it->get<double>();
        }
        if (const auto it = u.wrapper->find("discrepancy"); it != u.wrapper->end()) {
          if (!it->is_string()) throw type_error(path + ".discrepancy", "a string", *it);
          f.discrepancy = it->get<std::string>();
        }
      }
      c.published.emplace(key, std::move(f));
    }
  }

  std::string default_source_;
  bool require_provenance_;
  std::string chip_base_dir_;
};

// ---- validation -------------------------------------------------------------------------

const Dimension* find_dimension(const SystemConfig& c, const std::string& name) {
  for (const auto& d : c.shape) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::vector<std::string> dimension_names(const SystemConfig& c) {
  std::vector<std::string> names;
  for (const auto& d : c.shape) names.push_back(d.name);
  return names;
}

[[noreturn]] void throw_unknown_dimension(const SystemConfig& c, const std::string& path,
                                          const std::string& name) {
  const auto names = dimension_names(c);
  throw ConfigError(
      path, fmt::format("\"{}\" is not a dimension of shape ({}){}", escape_control(shorten(name)),
                        join(names), did_you_mean(name, names)));
}

void validate_shape(const SystemConfig& c) {
  check_range("instances", c.instances, kInstances, "");
  if (c.shape.empty()) throw ConfigError("shape", "a system needs at least one dimension");
  std::set<std::string> seen;
  double chips = c.instances;
  for (std::size_t i = 0; i < c.shape.size(); ++i) {
    const auto& d = c.shape[i];
    const std::string path = fmt::format("shape[{}]", i);
    check_name(path + "[0]", d.name);
    check_range(path + "[1]", d.size, kDimensionSize, "");
    if (d.name == kInstanceDimension) {
      throw ConfigError(path + "[0]",
                        "\"instance\" numbers the instances (set \"instances\" instead)");
    }
    if (!seen.insert(d.name).second) {
      throw ConfigError(path + "[0]", fmt::format("dimension \"{}\" appears twice", d.name));
    }
    chips *= d.size;
  }
  if (chips > static_cast<double>(kMaxChips)) {
    throw ConfigError("shape", fmt::format("{} chips (instances x shape) is more than the {} a "
                                           "system may have",
                                           format_number(chips), kMaxChips));
  }
}

void validate_rules(const SystemConfig& c) {
  for (const auto& [name, rule] : c.links) {
    const std::string path = "links." + name;
    check_name(path, name);
    const Dimension* d = find_dimension(c, rule.along);
    if (d == nullptr) throw_unknown_dimension(c, path + ".along", rule.along);
    if (rule.pattern == LinkPattern::kHalves && d->size % 2 != 0) {
      throw ConfigError(path + ".pattern",
                        fmt::format("\"halves\" pairs the two halves of \"{}\", whose size {} "
                                    "is odd",
                                    d->name, d->size));
    }
    check_range(path + ".bandwidth_gbps", rule.bandwidth_gbps, kBandwidthGbps, "GB/s");
    check_range(path + ".latency_ns", rule.latency_ns, kLatencyNs, "ns");
  }
  for (const auto& [name, tier] : c.switches) {
    const std::string path = "switches." + name;
    check_name(path, name);
    check_range(path + ".level", tier.level, kLevel, "");
    for (const auto& [dim, extent] : tier.block) {
      const std::string block_path = path + ".block." + dim;
      const Dimension* d = find_dimension(c, dim);
      if (d == nullptr) throw_unknown_dimension(c, block_path, dim);
      check_range(block_path, extent, kDimensionSize, "");
      if (d->size % extent != 0) {
        throw ConfigError(block_path, fmt::format("a block of {} does not divide \"{}\" (size {})",
                                                  extent, dim, d->size));
      }
    }
    check_range(path + ".port_gbps", tier.port_gbps, kBandwidthGbps, "GB/s");
    check_range(path + ".link_latency_ns", tier.link_latency_ns, kLatencyNs, "ns");
    check_range(path + ".switch_latency_ns", tier.switch_latency_ns, kLatencyNs, "ns");
  }
  check_range("efa.gbit_per_chip", c.efa.gbit_per_chip, kBandwidthGbps, "Gbit/s");
  check_range("efa.latency_ns", c.efa.latency_ns, kLatencyNs, "ns");
}

// Every chip's NeuronLink total must match the published per-chip figure.
void validate_published(const SystemConfig& c, const Topology& topology) {
  for (const auto& [key, figure] : c.published) {
    const std::string path = "published." + key;
    if (key != kNeuronlinkFigure) throw ConfigError(path, "unknown figure");
    if (!std::isfinite(figure.value) || figure.value <= 0) {
      throw ConfigError(path, "must be a positive number, got " + format_number(figure.value));
    }
    if (!std::isfinite(figure.tolerance) || figure.tolerance < 0) {
      throw ConfigError(path + ".tolerance", "must be 0 or more");
    }
    if (figure.tolerance != arch::kDefaultPublishedTolerance && figure.discrepancy.empty()) {
      throw ConfigError(path, "a wider tolerance needs a \"discrepancy\" saying why");
    }
    for (int chip = 0; chip < topology.chips(); ++chip) {
      const double derived = topology.neuronlink_bytes_per_ns(chip);
      const double gap = derived > 0 ? std::fabs(figure.value - derived) / derived : INFINITY;
      if (gap <= figure.tolerance * (1 + 1e-12)) continue;
      throw ConfigError(path,
                        fmt::format("published {} GB/s, but the links and switch ports of "
                                    "{} add up to {} GB/s per direction ({:.1f}% apart, "
                                    "tolerance {:g}%)",
                                    format_number(figure.value), topology.describe(chip),
                                    format_number(derived), gap * 100, figure.tolerance * 100));
    }
  }
}

// ---- encoding ---------------------------------------------------------------------------

json provenance_json(json value, const arch::Provenance* p) {
  if (p == nullptr) return value;
  json out = {{"value", std::move(value)}};
  if (!p->source.empty()) out["source"] = p->source;
  if (p->estimate) out["estimate"] = true;
  return out;
}

void add_rule_provenance(json& out, const arch::Provenance& p) {
  if (!p.source.empty()) out["source"] = p.source;
  if (p.estimate) out["estimate"] = true;
}

// ---- presets ----------------------------------------------------------------------------

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
  throw ConfigError(field, fmt::format("unknown system preset \"{}\"; the presets are {}{}",
                                       escape_control(shorten(name)), join(presets().names),
                                       did_you_mean(name, presets().names)));
}

SystemConfig load_json_in(const json& j, const std::string& origin, const std::string& base_dir) {
  check_nesting(j);
  if (!j.is_object()) {
    throw ConfigError("", "a system config must be a JSON object, got " + describe_value(j));
  }
  const std::string printable_origin = escape_control(origin);
  Decoder decoder("set in " + printable_origin, false, base_dir);
  const auto base = j.find("base");
  if (base == j.end()) return decoder.decode(j);
  if (!base->is_string()) {
    throw ConfigError("base", "expected a system preset name, got " + describe_value(*base));
  }
  const auto base_name = base->get<std::string>();
  if (presets().texts.count(base_name) == 0) throw_unknown_preset("base", base_name);
  json patch = j;
  patch.erase("base");
  check_keys(patch, "", top_level_keys());
  json merged = parse_json_text(presets().texts.at(base_name));
  const std::string base_description = merged.value("description", base_name);
  merge_patch(merged, patch);
  if (!patch.contains("name")) merged["name"] = printable_origin;
  if (!patch.contains("description")) {
    merged["description"] = fmt::format("{} (preset {} with overrides from {})", base_description,
                                        base_name, printable_origin);
  }
  // A chip path in the preset is the preset's; only one the user wrote is relative to the file.
  return Decoder("set in " + printable_origin, false, patch.contains("chip") ? base_dir : "")
      .decode(merged);
}

}  // namespace

std::string link_pattern_name(LinkPattern p) {
  switch (p) {
    case LinkPattern::kRing:
      return "ring";
    case LinkPattern::kLine:
      return "line";
    case LinkPattern::kHalves:
      return "halves";
  }
  return "?";
}

std::vector<Dimension> SystemConfig::dimensions() const {
  std::vector<Dimension> out = {{kInstanceDimension, instances}};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

std::int64_t SystemConfig::chips() const {
  std::int64_t n = instances;
  for (const auto& d : shape) n *= d.size;
  return n;
}

void validate(const SystemConfig& c) {
  validate_shape(c);
  validate_rules(c);
  const Topology topology(c);  // throws if a chip cannot be reached
  validate_published(c, topology);
}

json to_json(const SystemConfig& c) {
  json out = json::object();
  out["name"] = c.name;
  out["description"] = c.description;
  out["chip"] = c.chip;
  const auto prov = [&](const std::string& key) -> const arch::Provenance* {
    const auto it = c.provenance.find(key);
    return it == c.provenance.end() ? nullptr : &it->second;
  };
  out["instances"] = provenance_json(c.instances, prov("instances"));
  json shape = json::array();
  for (const auto& d : c.shape) shape.push_back(json::array({d.name, d.size}));
  out["shape"] = provenance_json(std::move(shape), prov("shape"));
  out["links"] = json::object();
  for (const auto& [name, rule] : c.links) {
    json r = {{"along", rule.along},
              {"pattern", link_pattern_name(rule.pattern)},
              {"bandwidth_gbps", param_json(rule.bandwidth_gbps, false)},
              {"latency_ns", param_json(rule.latency_ns, false)}};
    add_rule_provenance(r, rule.topology);
    out["links"][name] = std::move(r);
  }
  out["switches"] = json::object();
  for (const auto& [name, tier] : c.switches) {
    json t = {{"level", tier.level},
              {"block", tier.block},
              {"port_gbps", param_json(tier.port_gbps, false)},
              {"link_latency_ns", param_json(tier.link_latency_ns, false)},
              {"switch_latency_ns", param_json(tier.switch_latency_ns, false)}};
    add_rule_provenance(t, tier.topology);
    out["switches"][name] = std::move(t);
  }
  out["efa"] = {{"gbit_per_chip", param_json(c.efa.gbit_per_chip, false)},
                {"latency_ns", param_json(c.efa.latency_ns, false)}};
  if (!c.published.empty()) {
    out["published"] = json::object();
    for (const auto& [key, f] : c.published) {
      json figure = param_json(f, false);
      if (f.tolerance != arch::kDefaultPublishedTolerance) figure["tolerance"] = f.tolerance;
      if (!f.discrepancy.empty()) figure["discrepancy"] = f.discrepancy;
      out["published"][key] = std::move(figure);
    }
  }
  return out;
}

std::vector<std::string> preset_names() {
  return presets().names;
}

const std::string& preset_json_text(const std::string& name) {
  const auto it = presets().texts.find(name);
  if (it == presets().texts.end()) throw_unknown_preset("", name);
  return it->second;
}

SystemConfig load_preset(const std::string& name) {
  const std::string& text = preset_json_text(name);
  try {
    return Decoder("", /*require_provenance=*/true, "").decode(parse_json_text(text));
  } catch (const ConfigError& e) {
    throw ConfigError(e.field(), fmt::format("{} (in system preset {})", e.why(), name));
  }
}

SystemConfig load_json_text(const std::string& text, const std::string& origin) {
  const auto parent = std::filesystem::path(origin).parent_path();
  const std::string base_dir = parent.empty() ? "." : parent.string();
  try {
    return load_json_in(parse_json_text(text), origin, base_dir);
  } catch (const ConfigError& e) {
    if (!e.where().file.empty()) throw;
    util::SourceLocation where = e.where();
    where.file = origin;  // the errors name the file the text came from
    throw ConfigError(e.field(), e.why(), std::move(where));
  }
}

SystemConfig load_file(const std::string& path) {
  return load_json_text(read_config_file(path, "system config"), path);
}

SystemConfig load(const std::string& preset_or_path) {
  if (presets().texts.count(preset_or_path) != 0) return load_preset(preset_or_path);
  std::error_code ec;
  if (std::filesystem::exists(preset_or_path, ec)) return load_file(preset_or_path);
  throw ConfigError("", fmt::format("\"{}\" is neither a system preset ({}) nor an existing file{}",
                                    escape_control(shorten(preset_or_path)), join(presets().names),
                                    did_you_mean(preset_or_path, presets().names)));
}

}  // namespace trnsim::system
