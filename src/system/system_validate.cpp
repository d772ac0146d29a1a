// Validation of a system config (validate()): names, text, ranges, dimensions and blocks, the
// number of links the graph would hold, then the published figures against the graph.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "system/system_detail.h"

namespace trnsim::system {

using namespace arch::config_detail;
using arch::detail::check_range;
using namespace detail;

namespace {

const Dimension* find_dimension(const SystemConfig& c, const std::string& name) {
  for (const auto& d : c.shape) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

[[noreturn]] void throw_unknown_dimension(const SystemConfig& c, const std::string& path,
                                          const std::string& name) {
  std::vector<std::string> names;
  for (const auto& d : c.shape) names.push_back(d.name);
  throw ConfigError(
      path, fmt::format("\"{}\" is not a dimension of shape ({}){}", escape_control(shorten(name)),
                        join(names), did_you_mean(name, names)));
}

// A link rule or switch tier name: a valid name, and not the one EFA's channels carry.
void check_kind_name(const std::string& path, const std::string& name) {
  check_name(path, name);
  if (name == kEfaKind) {
    throw ConfigError(path, fmt::format("\"{}\" is reserved for the EFA network that joins the "
                                        "instances; choose another name",
                                        kEfaKind));
  }
}

void check_param_text(const std::string& path, const Param& p) {
  require_printable(path + ".source", p.source);
}

// Everything a config says in words is printed by `system show`: no control characters.
void validate_text(const SystemConfig& c) {
  if (c.name.empty()) throw ConfigError("name", "must not be empty");
  require_printable("name", c.name);
  require_printable("description", c.description);
  require_printable("chip", c.chip);
  for (const auto& [path, p] : c.provenance) {
    require_printable(escape_control(shorten(path)) + ".source", p.source);
  }
  for (const auto& [name, rule] : c.links) {
    const std::string path = "links." + name;
    require_printable(path + ".source", rule.topology.source);
    check_param_text(path + ".bandwidth_gbps", rule.bandwidth_gbps);
    check_param_text(path + ".latency_ns", rule.latency_ns);
  }
  for (const auto& [name, tier] : c.switches) {
    const std::string path = "switches." + name;
    require_printable(path + ".source", tier.topology.source);
    check_param_text(path + ".port_gbps", tier.port_gbps);
    check_param_text(path + ".link_latency_ns", tier.link_latency_ns);
    check_param_text(path + ".switch_latency_ns", tier.switch_latency_ns);
  }
  check_param_text("efa.gbit_per_chip", c.efa.gbit_per_chip);
  check_param_text("efa.latency_ns", c.efa.latency_ns);
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

void validate_links(const SystemConfig& c) {
  for (const auto& [name, rule] : c.links) {
    const std::string path = "links." + escape_control(shorten(name));
    check_kind_name(path, name);
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
}

void validate_switches(const SystemConfig& c) {
  for (const auto& [name, tier] : c.switches) {
    const std::string path = "switches." + escape_control(shorten(name));
    check_kind_name(path, name);
    // Channels and routes name their kind: a rule and a tier of one name could not be told apart.
    if (c.links.count(name) != 0) {
      throw ConfigError(path, fmt::format("\"{}\" also names a link rule; a link rule and a "
                                          "switch tier need different names (routes are "
                                          "reported by them)",
                                          name));
    }
    check_range(path + ".level", tier.level, kLevel, "");
    if (tier.block.empty()) {
      throw ConfigError(path + ".block",
                        "names no dimension: give the chips per switch along at least one "
                        "(\"block\": {} would give every chip a switch of its own)");
    }
    for (const auto& [dim, extent] : tier.block) {
      const std::string block_path = path + ".block." + escape_control(shorten(dim));
      check_name(block_path, dim);
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

// The graph holds every link: count them from the rules (shape and rules are valid) before any
// is made, so that a small file cannot ask for gigabytes.
void validate_link_count(const SystemConfig& c) {
  const std::int64_t chips = c.chips();
  std::int64_t links = c.instances > 1 ? chips : 0;               // EFA attachments
  links += chips * static_cast<std::int64_t>(c.switches.size());  // one port per chip per tier
  for (const auto& [name, rule] : c.links) {
    const int n = find_dimension(c, rule.along)->size;
    int per_line = 0;  // links among the n chips of one line along the dimension
    switch (rule.pattern) {
      case LinkPattern::kRing:
        per_line = n > 2 ? n : n - 1;
        break;
      case LinkPattern::kLine:
        per_line = n - 1;
        break;
      case LinkPattern::kHalves:
        per_line = n / 2;
        break;
    }
    links += chips / n * per_line;
  }
  if (links > kMaxLinks) {
    throw ConfigError("links", fmt::format("the system would have {} links (link rules, switch "
                                           "ports and EFA attachments of its {} chips), more "
                                           "than the {} a system may have",
                                           links, chips, kMaxLinks));
  }
}

// The published figures' own fields; the comparison with the graph is validate_published's.
void validate_figures(const SystemConfig& c) {
  for (const auto& [key, figure] : c.published) {
    const std::string path = "published." + escape_control(shorten(key));
    if (key != kNeuronlinkFigure) {
      throw ConfigError(path, fmt::format("unknown figure; the figures are {}", kNeuronlinkFigure));
    }
    if (!std::isfinite(figure.value) || figure.value <= 0) {
      throw ConfigError(path, "must be a positive number, got " + format_number(figure.value));
    }
    require_printable(path + ".source", figure.source);
    require_printable(path + ".discrepancy", figure.discrepancy);
    // Measured against the derived figure, a tolerance of 1 or more would accept anything down
    // to zero: a figure that far off is not the one the links model.
    if (!(figure.tolerance >= 0 && figure.tolerance < 1)) {
      throw ConfigError(path + ".tolerance",
                        "must be a fraction in [0, 1), got " + format_number(figure.tolerance));
    }
    if (figure.tolerance > arch::kDefaultPublishedTolerance && figure.discrepancy.empty()) {
      throw ConfigError(path + ".discrepancy",
                        fmt::format("required: a tolerance above the default {:g}% must say why "
                                    "the published figure does not follow from the links",
                                    arch::kDefaultPublishedTolerance * 100));
    }
  }
}

// Every chip's NeuronLink total must match the published per-chip figure.
void validate_published(const SystemConfig& c, const Topology& topology) {
  for (const auto& [key, figure] : c.published) {
    const std::string path = "published." + key;
    for (int chip = 0; chip < topology.chips(); ++chip) {
      const double derived = topology.neuronlink_bytes_per_ns(chip);
      if (derived <= 0) {
        throw ConfigError(path, fmt::format("published {} GB/s, but {} has no NeuronLink link or "
                                            "switch port",
                                            format_number(figure.value), topology.describe(chip)));
      }
      const double gap = std::fabs(figure.value - derived) / derived;
      // Tolerances are written with two digits; a hair of slack keeps 0.03 from failing at
      // 2.999...%, as in the chip config's check.
      if (!(gap > figure.tolerance + 1e-9)) continue;
      throw ConfigError(path,
                        fmt::format("published {} GB/s, but the links and switch ports of "
                                    "{} add up to {} GB/s per direction ({:.1f}% apart, "
                                    "tolerance {:g}%)",
                                    format_number(figure.value), topology.describe(chip),
                                    format_number(derived), gap * 100, figure.tolerance * 100));
    }
  }
}

}  // namespace

namespace detail {

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

void validate_structure(const SystemConfig& c) {
  validate_shape(c);
  validate_links(c);
  validate_switches(c);
  validate_text(c);  // after the names: its paths hold them
  validate_figures(c);
  validate_link_count(c);
}

}  // namespace detail

void validate(const SystemConfig& c) {
  const Topology topology(c);  // the structure first, then that every chip can be reached
  validate_published(c, topology);
}

}  // namespace trnsim::system
