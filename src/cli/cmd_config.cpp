// `trnsim config`: list, show, validate and export chip configurations.
#include <fmt/core.h>

#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "cli/chip_summary.h"
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "util/diagnostic.h"

namespace trnsim::cli {

namespace {

using arch::ChipConfig;

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

std::string join_ints(const std::vector<int>& values) {
  std::string out;
  for (const int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

// "79 (published 79)" or, for a figure with a recorded discrepancy, its gap and tolerance.
std::string with_published(double derived, const arch::PublishedFigure* figure) {
  if (figure == nullptr) return fmt::format("{:.1f}", derived);
  const double gap = derived > 0 ? (figure->value - derived) / derived * 100 : 0;
  std::string out = fmt::format("{:.1f} (published {:g}", derived, figure->value);
  if (!figure->discrepancy.empty()) out += fmt::format(", {:+.1f}%: known discrepancy", gap);
  return out + ")";
}

const arch::PublishedFigure* find_figure(const std::map<std::string, arch::PublishedFigure>& m,
                                         const std::string& mode) {
  const auto it = m.find(mode);
  return it == m.end() ? nullptr : &it->second;
}

// Paths of the parameters marked as estimates, from the exported form.
std::vector<std::string> estimated_fields(const ChipConfig& chip) {
  std::vector<std::string> paths;
  std::function<void(const nlohmann::json&, const std::string&)> walk =
      [&](const nlohmann::json& node, const std::string& path) {
        if (!node.is_object()) return;
        if (node.contains("value")) {
          if (node.value("estimate", false)) paths.push_back(path);
          return;
        }
        for (const auto& [key, child] : node.items()) {
          walk(child, path.empty() ? key : path + "." + key);
        }
      };
  walk(arch::to_json(chip), "");
  return paths;
}

// Runs one subcommand body; a bad config or file becomes a message and exit code 1.
void run_reporting_errors(const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", util::format_exception(e, "trnsim config"));
    throw CLI::RuntimeError(1);
  }
}

void print_list() {
  for (const auto& name : arch::preset_names()) {
    const ChipConfig chip = arch::load_preset(name);
    fmt::print("{:<6} {:<14} {}\n", name, arch::core_name(chip.generation), chip.description);
  }
}

void write_export(const std::string& what, const std::string& output) {
  write_text_file_announced(output, arch::to_json(arch::load(what)).dump(2) + "\n");
}

}  // namespace

void print_chip_summary(const ChipConfig& chip) {
  const auto& t = chip.tensor;
  fmt::print("{}: {}\n", chip.name, chip.description);
  fmt::print("  generation   {} ({})\n", arch::generation_name(chip.generation),
             arch::core_name(chip.generation));
  fmt::print("  cores        {} per chip; logical core sizes (LNC) {{{}}}, default {}\n",
             chip.cores_per_chip, join_ints(chip.lnc_options), chip.default_lnc);
  fmt::print(
      "  clocks       TensorE {:g} GHz, VectorE {:g} GHz, ScalarE {:g} GHz, GpSimd {:g} GHz\n",
      t.clock_ghz.value, chip.vector.clock_ghz.value, chip.scalar.clock_ghz.value,
      chip.gpsimd.clock_ghz.value);
  fmt::print("  SBUF         {:g} partitions x {:g} KiB = {:g} MiB per core ({:g} MiB per chip)\n",
             chip.sbuf.partitions.value, chip.sbuf.bytes_per_partition / kKiB,
             arch::sbuf_bytes_per_core(chip) / kMiB,
             chip.cores_per_chip * arch::sbuf_bytes_per_core(chip) / kMiB);
  fmt::print(
      "  PSUM         {:g} partitions x {:g} KiB = {:g} MiB per core, {:g} banks of {:g} KiB\n",
      chip.psum.partitions.value, chip.psum.bytes_per_partition / kKiB,
      arch::psum_bytes_per_core(chip) / kMiB, chip.psum.banks.value,
      arch::psum_bank_bytes(chip) / kKiB);
  fmt::print("  TensorE      {:g} x {:g} PEs; moving free <= {:g} (fp32 PSUM){}\n", t.rows.value,
             t.cols.value, t.moving_free_max.value,
             t.has_bf16_psum ? fmt::format(", <= {:g} (bf16 PSUM)", t.moving_free_max_bf16.value)
                             : std::string());
  fmt::print("  peak TFLOPS  {:<6} {:<44} {}\n", "mode", "per core", "per chip");
  for (const auto& mode : arch::peak_modes()) {
    const double core = arch::core_peak_tflops(chip, mode);
    if (core <= 0) {
      fmt::print("               {:<6} not supported\n", mode);
      continue;
    }
    fmt::print(
        "               {:<6} {:<44} {}\n", mode,
        with_published(core, find_figure(t.published_peak_tflops, mode)),
        with_published(arch::chip_peak_tflops(chip, mode), find_figure(chip.published_chip, mode)));
  }
  for (const auto& [mode, figure] : chip.published_chip) {
    if (!figure.discrepancy.empty()) fmt::print("    note {}: {}\n", mode, figure.discrepancy);
  }
  fmt::print("  VectorE      {:g} lanes; {:g} elem/cycle (16-bit), {:g} (32-bit)\n",
             chip.vector.lanes.value, chip.vector.elems_per_cycle_16bit.value,
             chip.vector.elems_per_cycle_other.value);
  fmt::print("  ScalarE      {:g} lanes; {:g} elem/cycle (16-bit), {:g} (32-bit)\n",
             chip.scalar.lanes.value, chip.scalar.elems_per_cycle_16bit.value,
             chip.scalar.elems_per_cycle_other.value);
  fmt::print("  GpSimd       {:g} cores x {:g}-bit, {:g} partitions each\n",
             chip.gpsimd.cores.value, chip.gpsimd.lane_bits.value,
             chip.gpsimd.partitions_per_core.value);
  fmt::print(
      "  HBM          {:g} GiB in {:g} stacks, {:g} GB/s per chip ({:g} bytes/ns per core)\n",
      chip.hbm.capacity_gib.value, chip.hbm.stacks.value, chip.hbm.bandwidth_gbps.value,
      arch::hbm_bytes_per_ns_per_core(chip));
  fmt::print(
      "  DMA          {:g} engines per core x {:g} queues; {:g} GB/s theoretical, {:g} bytes/ns "
      "achievable per engine = {:g} bytes/ns per core; fixed latency {:g} ns\n",
      chip.dma.engines_per_core.value, chip.dma.queues_per_engine.value,
      chip.dma.engine_bandwidth_gbps.value, chip.dma.engine_peak_bytes_per_ns.value,
      arch::dma_bytes_per_ns_per_core(chip), chip.dma.fixed_latency_ns.value);
  fmt::print("  NeuronLink   {:g} GB/s per chip over {:g} ports\n",
             chip.link.neuronlink_gbps_per_chip.value, chip.link.ports.value);
  if (t.power_ramp) {
    fmt::print(
        "  power        TensorE dI/dt ramp: starts at {:g}% utilisation, full after {:g} us\n",
        t.power_ramp_start_fraction * 100, t.power_ramp_us.value);
  } else {
    fmt::print("  power        no TensorE ramp modelled\n");
  }
  const auto estimates = estimated_fields(chip);
  fmt::print("  estimates    {} parameters have no public figure:\n", estimates.size());
  for (const auto& path : estimates) fmt::print("                 {}\n", path);
}

void register_config_command(CLI::App& app) {
  auto* config = app.add_subcommand(
      "config",
      "Chip presets and config files: list the presets, show or export one, validate a file. "
      "A config file is JSON; {\"base\": \"trn3\", ...} overrides fields of a preset "
      "(see docs/arch-config.md)");
  config->require_subcommand(1);

  auto* list = config->add_subcommand("list", "List the built-in presets (trn1, trn2, trn3)");
  list->callback([] { run_reporting_errors(print_list); });

  auto* show = config->add_subcommand(
      "show",
      "Print a summary of a preset or config file: cores, clocks, SBUF/PSUM, TensorE peaks per "
      "mode per core and per chip (derived, with the published figure beside it), HBM, DMA, "
      "links, LNC and the estimated parameters");
  auto show_target = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  show->add_option("config", *show_target, "Preset name (trn1, trn2, trn3) or path to a JSON file")
      ->required();
  show->add_flag("--json", *show_json,
                 "Print the complete configuration as JSON (every parameter with its source)");
  show->callback([show_target, show_json] {
    run_reporting_errors([&] {
      const ChipConfig chip = arch::load(*show_target);
      if (*show_json) {
        fmt::print("{}\n", arch::to_json(chip).dump(2));
      } else {
        print_chip_summary(chip);
      }
    });
  });

  auto* validate = config->add_subcommand(
      "validate",
      "Check config files: JSON syntax, field names, types, ranges, size consistency and "
      "published peaks. Prints \"ok\" or the error per file; exit code 1 if any file is bad");
  auto validate_files = std::make_shared<std::vector<std::string>>();
  validate->add_option("files", *validate_files, "JSON config files (or preset names)")->required();
  validate->callback([validate_files] {
    bool all_ok = true;
    for (const auto& file : *validate_files) {
      try {
        const ChipConfig chip = arch::load(file);
        fmt::print("{}: ok ({}, {} cores)\n", file, arch::core_name(chip.generation),
                   chip.cores_per_chip);
      } catch (const std::exception& e) {
        fmt::print(stderr, "{}\n", util::format_exception(e, file));
        all_ok = false;
      }
    }
    if (!all_ok) throw CLI::RuntimeError(1);
  });

  auto* export_command = config->add_subcommand(
      "export",
      "Write the complete configuration of a preset or file as JSON (every parameter as "
      "{\"value\", \"source\"/\"estimate\"}); the output loads back identically");
  auto export_target = std::make_shared<std::string>();
  auto export_output = std::make_shared<std::string>();
  export_command
      ->add_option("config", *export_target,
                   "Preset name (trn1, trn2, trn3) or path to a JSON file")
      ->required();
  export_command->add_option("-o,--output", *export_output,
                             "Output file (default: standard output)");
  export_command->callback([export_target, export_output] {
    run_reporting_errors([&] { write_export(*export_target, *export_output); });
  });
}

}  // namespace trnsim::cli
