// Decoding and encoding system configs; the embedded presets and user files that patch one
// ("base"). The JSON machinery (text, files, parameters with provenance, ranges, messages) is
// the chip config's (arch/config_json.h); validation is in system_validate.cpp.
#include <fmt/core.h>

#include <algorithm>
#include <filesystem>

#include "system/embedded_presets.h"
#include "system/system_detail.h"

namespace trnsim::system {

using namespace arch::config_detail;
using arch::detail::check_range;
using arch::detail::Range;
using detail::check_name;
using detail::kBandwidthGbps;
using detail::kDimensionSize;
using detail::kInstances;
using detail::kLatencyNs;
using detail::kLevel;
using detail::kNeuronlinkFigure;

namespace {

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
        const std::string block_path = path + ".block." + escape_control(shorten(dim));
        check_name(block_path, dim);
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

const PresetTexts& presets() {
  static const PresetTexts store =
      preset_texts(detail::kEmbeddedPresets, detail::kEmbeddedPresetCount);
  return store;
}

[[noreturn]] void throw_unknown_preset(const std::string& field, const std::string& name) {
  throw ConfigError(field, fmt::format("unknown system preset \"{}\"; the presets are {}{}",
                                       escape_control(shorten(name)), join(presets().names),
                                       did_you_mean(name, presets().names)));
}

// A patch that changes which chips a rule joins (a link's `along` or `pattern`, a tier's
// `block`) without saying where the new rule comes from makes the preset's "source" and
// "estimate" wrong: they are dropped, and the rule gets "set in <file>" as a new one would.
void forget_replaced_topology(const json& patch, json& merged) {
  const auto forget = [&](const char* section, std::initializer_list<const char*> keys) {
    const auto rules = patch.find(section);
    const auto target = merged.find(section);
    if (rules == patch.end() || !rules->is_object() || target == merged.end() ||
        !target->is_object()) {
      return;
    }
    for (const auto& item : rules->items()) {
      const json& rule = item.value();  // a plain reference: lambdas may capture it
      const auto it = target->find(item.key());
      if (!rule.is_object() || it == target->end() || !it->is_object()) continue;
      const bool changed = std::any_of(keys.begin(), keys.end(),
                                       [&](const char* key) { return rule.contains(key); });
      if (!changed) continue;
      if (!rule.contains("source")) it->erase("source");
      if (!rule.contains("estimate")) it->erase("estimate");
    }
  };
  forget("links", {"along", "pattern"});
  forget("switches", {"block"});
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
  forget_replaced_topology(patch, merged);
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
  for (const auto& d : shape) {
    n *= d.size;  // |n| <= 2^20 + 1 and |size| < 2^31: no overflow
    // Past the cap the count only says "too many": stop there rather than overflow.
    if (n > kMaxChips) n = kMaxChips + 1;
    if (n < -kMaxChips) n = -kMaxChips - 1;
  }
  return n;
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

std::vector<std::string> tiers_by_level(const SystemConfig& c) {
  std::vector<std::string> names;
  for (const auto& [name, tier] : c.switches) names.push_back(name);  // by name
  std::stable_sort(names.begin(), names.end(), [&](const auto& a, const auto& b) {
    return c.switches.at(a).level < c.switches.at(b).level;
  });
  return names;
}

std::vector<std::string> estimated_fields(const SystemConfig& c) {
  std::vector<std::string> paths;
  const auto add = [&](const std::string& path, bool estimate) {
    if (estimate) paths.push_back(path);
  };
  for (const char* key : {"instances", "shape"}) {
    const auto it = c.provenance.find(key);
    add(key, it != c.provenance.end() && it->second.estimate);
  }
  for (const auto& [name, rule] : c.links) {
    const std::string path = "links." + name;
    add(path, rule.topology.estimate);
    add(path + ".bandwidth_gbps", rule.bandwidth_gbps.estimate);
    add(path + ".latency_ns", rule.latency_ns.estimate);
  }
  for (const auto& name : tiers_by_level(c)) {
    const SwitchTier& tier = c.switches.at(name);
    const std::string path = "switches." + name;
    add(path, tier.topology.estimate);
    add(path + ".port_gbps", tier.port_gbps.estimate);
    add(path + ".link_latency_ns", tier.link_latency_ns.estimate);
    add(path + ".switch_latency_ns", tier.switch_latency_ns.estimate);
  }
  add("efa.gbit_per_chip", c.efa.gbit_per_chip.estimate);
  add("efa.latency_ns", c.efa.latency_ns.estimate);
  for (const auto& [key, figure] : c.published) add("published." + key, figure.estimate);
  return paths;
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
