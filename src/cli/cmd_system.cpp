// `trnsim system`: list, show, validate system presets and files; routes between chips.
#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "system/system.h"
#include "util/diagnostic.h"

namespace trnsim::cli {

namespace {

using system::SystemConfig;
using system::Topology;

// Above this many chips `show` measures routes from chip 0 only (all pairs cost chips^2).
constexpr int kAllPairsChips = 1024;

void report_system_errors(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", util::format_exception(e, "trnsim system"));
    throw CLI::RuntimeError(1);
  }
}

// "256 GB/s" or "256 GB/s (estimate)".
std::string figure(const arch::Param& p, const char* unit) {
  return fmt::format("{:g} {}{}", p.value, unit, p.estimate ? " (estimate)" : "");
}

std::string shape_text(const SystemConfig& c) {
  std::string out;
  for (const auto& d : c.shape)
    out += fmt::format("{}{} {}", out.empty() ? "" : " x ", d.name, d.size);
  return out;
}

// "server 18 x chip 4": a tier's block in the order of the shape.
std::string block_text(const SystemConfig& c, const system::SwitchTier& tier) {
  std::string out;
  for (const auto& d : c.shape) {
    const auto it = tier.block.find(d.name);
    if (it != tier.block.end())
      out += fmt::format("{}{} {}", out.empty() ? "" : " x ", d.name, it->second);
  }
  return out;
}

// The link rules, then the switch tiers by level: the order of Topology::kind_names().
void print_links(const SystemConfig& c, const Topology& t) {
  std::vector<int> counts(t.kind_names().size(), 0);
  std::vector<int> switch_counts(t.kind_names().size(), 0);
  for (std::size_t i = 0; i < t.channels().size(); i += 2)
    ++counts[static_cast<std::size_t>(t.channels()[i].kind)];
  for (int n = 0; n < t.nodes(); ++n) {
    if (t.node(n).kind == system::NodeKind::kSwitch)
      ++switch_counts[static_cast<std::size_t>(t.node(n).group)];
  }
  for (std::size_t kind = 0; kind < t.kind_names().size(); ++kind) {
    const std::string& name = t.kind_names()[kind];
    if (const auto rule = c.links.find(name); rule != c.links.end()) {
      const auto& r = rule->second;
      fmt::print("  link         {}: {} along {}, {} links; {} per direction, {}\n", name,
                 system::link_pattern_name(r.pattern), r.along, counts[kind],
                 figure(r.bandwidth_gbps, "GB/s"), figure(r.latency_ns, "ns"));
    } else if (const auto tier = c.switches.find(name); tier != c.switches.end()) {
      const auto& s = tier->second;
      fmt::print(
          "  switch       {} (level {}): {} switches, each joining {} chips ({}); {} per port "
          "per direction, {} to the switch, {} across it\n",
          name, s.level, switch_counts[kind], counts[kind] / std::max(1, switch_counts[kind]),
          block_text(c, s), figure(s.port_gbps, "GB/s"), figure(s.link_latency_ns, "ns"),
          figure(s.switch_latency_ns, "ns"));
    }
  }
}

// Statistics over route lengths only: the routes themselves (chips x hops each) are not built.
void print_routes(const Topology& t) {
  const int sources = t.chips() <= kAllPairsChips ? t.chips() : 1;
  int diameter = 0;
  double worst_ns = 0;
  double total_hops = 0;
  double pairs = 0;
  for (int from = 0; from < sources; ++from) {
    const system::RouteLengths lengths = t.route_lengths_from(from);
    for (int to = 0; to < t.chips(); ++to) {
      const int hops = lengths.hops[static_cast<std::size_t>(to)];
      if (hops == 0) continue;
      diameter = std::max(diameter, hops);
      worst_ns = std::max(worst_ns, lengths.latency_ns[static_cast<std::size_t>(to)]);
      total_hops += hops;
      pairs += 1;
    }
  }
  if (pairs == 0) {
    fmt::print("  routes       one chip: nothing to route\n");
    return;
  }
  // The most hops and the most latency need not be the same route: both are maxima.
  fmt::print(
      "  routes       {}: at most {} hops and {:g} ns (link and switch latency), {:.2f} hops on "
      "average\n",
      sources == 1 ? "from chip 0" : "between any two chips", diameter, worst_ns,
      total_hops / pairs);
}

void print_summary(const SystemConfig& c, const Topology& t) {
  const auto& chip = c.chip_config;
  fmt::print("{}: {}\n", c.name, c.description);
  fmt::print("  chip         {} ({}, {} cores, {} GiB HBM at {:g} GB/s)\n", c.chip,
             arch::core_name(chip.generation), chip.cores_per_chip, chip.hbm.capacity_gib.value,
             chip.hbm.bandwidth_gbps.value);
  if (c.instances == 1) {
    fmt::print("  chips        {} ({})\n", t.chips(), shape_text(c));
  } else {
    fmt::print("  chips        {} ({} instances of {})\n", t.chips(), c.instances, shape_text(c));
  }
  print_links(c, t);
  std::string published;
  if (const auto it = c.published.find("neuronlink_gbps_per_chip"); it != c.published.end()) {
    published = fmt::format("; published {}", figure(it->second, "GB/s"));
  }
  fmt::print("  NeuronLink   {:g} GB/s per chip per direction, over its links and switch ports{}\n",
             t.neuronlink_bytes_per_ns(0), published);
  for (const auto& [key, figure] : c.published) {
    if (!figure.discrepancy.empty()) fmt::print("    note: {}\n", figure.discrepancy);
  }
  fmt::print("  EFA          {} per chip, {} HBM to HBM ({})\n",
             figure(c.efa.gbit_per_chip, "Gbit/s"), figure(c.efa.latency_ns, "ns"),
             c.instances > 1 ? "joins the instances" : "unused with one instance");
  print_routes(t);
  const double bf16 = arch::chip_peak_tflops(chip, "bf16") * static_cast<double>(t.chips());
  const double mx = arch::chip_peak_tflops(chip, "mx") * static_cast<double>(t.chips());
  fmt::print("  peak         {:.1f} PFLOPS bf16{}, {:.1f} TB/s of HBM\n", bf16 / 1000,
             mx > 0 ? fmt::format(", {:.1f} PFLOPS mx", mx / 1000) : "",
             chip.hbm.bandwidth_gbps.value * static_cast<double>(t.chips()) / 1000);
  const auto estimates = system::estimated_fields(c);
  fmt::print(
      "  estimates    {} figures or rules are estimates (derived or assumed, not published){}\n",
      estimates.size(), estimates.empty() ? "" : ":");
  for (const auto& path : estimates) fmt::print("                 {}\n", path);
  fmt::print("\n{}", system::draw(c, t));
}

void print_route(const std::string& what, const std::string& from_spec,
                 const std::string& to_spec) {
  const SystemConfig c = system::load(what);
  const Topology t(c);
  const auto chip = [&](const std::string& spec) {
    try {
      return t.chip_named(spec);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(fmt::format("{}: {}", c.name, e.what()));
    }
  };
  const int from = chip(from_spec);
  const int to = chip(to_spec);
  const auto r = t.route(from, to);
  fmt::print("{} -> {}: {} hops, {:g} ns, narrowest channel {:g} GB/s\n", t.describe(from),
             t.describe(to), r.hops(), r.latency_ns, r.bytes_per_ns);
  for (const int ch : r.channels) {
    const auto& c2 = t.channels()[static_cast<std::size_t>(ch)];
    fmt::print("  {} -> {} over {} ({:g} GB/s, {:g} ns)\n", t.describe(c2.from), t.describe(c2.to),
               t.kind_names()[static_cast<std::size_t>(c2.kind)], c2.bytes_per_ns, c2.latency_ns);
  }
}

}  // namespace

void register_system_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "system",
      "Systems of many chips (instances, UltraServers): list the presets, show one with a "
      "drawing of its topology, validate files, print routes. A system file is JSON; "
      "{\"base\": \"trn2.48xlarge\", ...} overrides fields of a preset (docs/system-config.md)");
  cmd->require_subcommand(1);

  cmd->add_subcommand("list", "List the built-in system presets")->callback([] {
    report_system_errors([] {
      for (const auto& name : system::preset_names()) {
        const SystemConfig c = system::load_preset(name);
        fmt::print("{:<22} {:>4} x {:<5} {}\n", name, c.chips(), c.chip, c.description);
      }
    });
  });

  auto* show = cmd->add_subcommand(
      "show", "Summarise a system (chips, links, switches, EFA, routes, estimates) and draw it");
  auto target = std::make_shared<std::string>();
  auto as_json = std::make_shared<bool>(false);
  auto dot = std::make_shared<std::string>();
  show->add_option("system", *target, "System preset name or path to a JSON file")->required();
  show->add_flag("--json", *as_json, "Print the complete configuration as JSON instead");
  show->add_option("--dot", *dot, "Also write the topology as a Graphviz DOT file");
  show->callback([target, as_json, dot] {
    report_system_errors([&] {
      const SystemConfig c = system::load(*target);
      if (*as_json) {
        fmt::print("{}\n", system::to_json(c).dump(2));
        return;
      }
      const Topology t(c);
      print_summary(c, t);
      if (!dot->empty()) write_text_file_announced(*dot, system::to_dot(c, t));
    });
  });

  auto* validate = cmd->add_subcommand(
      "validate",
      "Check system files: JSON, field names, types, ranges, the chip, dimensions, published "
      "figures and that every chip is reachable. Exit code 1 if any file is bad");
  auto files = std::make_shared<std::vector<std::string>>();
  validate->add_option("files", *files, "JSON system files (or preset names)")->required();
  validate->callback([files] {
    bool all_ok = true;
    for (const auto& file : *files) {
      try {
        const SystemConfig c = system::load(file);
        fmt::print("{}: ok ({} chips of {})\n", file, c.chips(), c.chip);
      } catch (const std::exception& e) {
        fmt::print(stderr, "{}\n", util::format_exception(e, file));
        all_ok = false;
      }
    }
    if (!all_ok) throw CLI::RuntimeError(1);
  });

  auto* route = cmd->add_subcommand("route", "Print the route between two chips, hop by hop");
  auto route_system = std::make_shared<std::string>();
  auto from = std::make_shared<std::string>();
  auto to = std::make_shared<std::string>();
  route->add_option("system", *route_system, "System preset name or path")->required();
  route->add_option("from", *from, "Source chip: its number or coordinates (\"row=1,col=2\")")
      ->required();
  route->add_option("to", *to, "Destination chip: its number or coordinates")->required();
  route->callback([route_system, from, to] {
    report_system_errors([&] { print_route(*route_system, *from, *to); });
  });
}

}  // namespace trnsim::cli
