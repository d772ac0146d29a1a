// `trnsim profile-asm FILE -o report.html`: time an assembly program exactly as run-asm does
// (sim::run_asm), then write the profile explorer, optionally a Chrome trace, and optionally
// a comparison with a second program (docs/profiler.md).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "cli/asm_run_options.h"
#include "cli/cli_output.h"
#include "cli/progress_line.h"
#include "profile/profile.h"
#include "sim/asm_runner.h"
#include "util/diagnostic.h"

namespace trnsim::cli {

namespace {

// profile-asm's own options on top of the shared ones: the files it writes.
struct ProfileAsmArgs : AsmRunArgs {
  std::string compare, html, trace, title, json;
};

sim::AsmRunRequest make_request(const ProfileAsmArgs& args, const std::string& path) {
  sim::AsmRunRequest request = make_asm_request(args, path);
  request.timed = true;
  return request;
}

profile::ProfileInput make_input(const arch::ChipConfig& chip, const sim::AsmRunOutcome& outcome,
                                 const std::string& title) {
  profile::ProfileInput input;
  input.chip = &chip;
  input.title = title;
  input.cores.push_back(
      {0, &outcome.program, &outcome.result, outcome.timing ? &*outcome.timing : nullptr});
  return input;
}

arch::ChipConfig load_chip(const std::string& name) {
  for (const auto& preset : arch::preset_names())
    if (preset == name) return arch::load_preset(name);
  return arch::load_file(name);
}

// run_asm with a progress line on a terminal (erased when it returns).
sim::AsmRunOutcome run_with_progress(sim::AsmRunRequest request) {
  util::Progress progress;
  request.options.progress = &progress;
  const ProgressLine line(progress);
  return sim::run_asm(request);
}

// One program's result as JSON (`--json`): its figures, the profiler's metrics and
// suggestions, and the timing report.
nlohmann::json run_json(const std::string& file, const sim::AsmRunOutcome& outcome,
                        const profile::Analysis& a) {
  const profile::Metrics& m = a.cores.front().metrics;
  nlohmann::json j;
  j["file"] = file;
  j["instructions"] = outcome.program.instructions.size();
  j["simulated_ns"] = m.total_ns;
  j["metrics"] = {{"mfu_percent", m.mfu_percent},
                  {"hfu_percent", m.hfu_percent},
                  {"mbu_percent", m.mbu_percent},
                  {"achieved_flops_per_s", m.achieved_flops_per_s},
                  {"peak_flops_per_s", m.peak_flops_per_s},
                  {"tensor_mode", m.tensor_mode},
                  {"achieved_hbm_bytes_per_s", m.achieved_hbm_bytes_per_s},
                  {"hbm_bandwidth_bytes_per_s", m.hbm_bandwidth_bytes_per_s},
                  {"dma_active_time_percent", m.dma_active_time_percent},
                  {"average_dma_size", m.average_dma_size},
                  {"mm_arithmetic_intensity", m.mm_arithmetic_intensity}};
  j["bound_by"] = {{"queue", m.bounding_engine}, {"active_percent", m.bounding_active_percent}};
  j["suggestions"] = nlohmann::json::array();
  for (const profile::Suggestion& s : a.suggestions)
    j["suggestions"].push_back(
        {{"rule", s.rule}, {"title", s.title}, {"detail", s.detail}, {"source", s.source}});
  j["timing"] = outcome.timing ? nlohmann::json::parse(sim::timing_report_json(*outcome.timing))
                               : nlohmann::json();
  return j;
}

int profile_asm_command(const ProfileAsmArgs& args) {
  const arch::ChipConfig chip = load_chip(args.chip);
  const sim::AsmRunOutcome outcome = run_with_progress(make_request(args, args.file));
  const profile::ProfileInput input =
      make_input(chip, outcome, args.title.empty() ? args.file : args.title);

  std::unique_ptr<sim::AsmRunOutcome> other;
  profile::ProfileInput other_input;
  profile::ReportFiles files{args.html, args.trace, nullptr};
  if (!args.compare.empty()) {
    other =
        std::make_unique<sim::AsmRunOutcome>(run_with_progress(make_request(args, args.compare)));
    other_input = make_input(chip, *other, args.compare);
    files.compare = &other_input;
  }
  const profile::Analysis a = profile::write_profile(input, files);
  const profile::Metrics& m = a.cores.front().metrics;
  const std::size_t starts = outcome.result.executions.size();  // a program with loops
  fmt::print(
      "{}: {} instructions{}, {:.1f} ns on {}\n", args.file, outcome.program.instructions.size(),
      starts != 0 ? fmt::format(" ({} started)", starts) : std::string(), m.total_ns, chip.name);
  fmt::print("  MFU {:.2f}%  HFU {:.2f}%  MBU {:.2f}%  bounding engine {} ({:.1f}% active)\n",
             m.mfu_percent, m.hfu_percent, m.mbu_percent, m.bounding_engine,
             m.bounding_active_percent);
  fmt::print(
      "  dma_active_time_percent {:.1f}%  average_dma_size {:.0f} B  mm_arithmetic_intensity "
      "{:.1f}\n",
      m.dma_active_time_percent, m.average_dma_size, m.mm_arithmetic_intensity);
  for (const auto& s : a.suggestions)
    fmt::print("  suggestion: {}{}\n", s.title, s.source.empty() ? "" : " (" + s.source + ")");
  std::optional<profile::Analysis> other_analysis;
  if (other) {
    other_analysis = profile::analyze(other_input);
    const profile::Metrics& o = other_analysis->cores.front().metrics;
    fmt::print("comparison: {} -> {}\n", args.file, args.compare);
    fmt::print("  simulated: {:.3f} us -> {:.3f} us ({}); bound by {} -> {}\n", m.total_ns * 1e-3,
               o.total_ns * 1e-3, percent_change(m.total_ns, o.total_ns),
               m.bounding_engine.empty() ? "-" : m.bounding_engine,
               o.bounding_engine.empty() ? "-" : o.bounding_engine);
    fmt::print("  MFU {:.2f}% -> {:.2f}%  MBU {:.2f}% -> {:.2f}%\n", m.mfu_percent, o.mfu_percent,
               m.mbu_percent, o.mbu_percent);
  }
  if (!args.json.empty()) {
    nlohmann::json j;
    j["trnsim"] = version_json();
    j["run"] = run_json(args.file, outcome, a);
    if (other) j["compare"] = run_json(args.compare, *other, *other_analysis);
    write_text_file(args.json, j.dump(2) + "\n");
    fmt::print("  JSON written to {}\n", args.json);
  }
  if (!args.html.empty())
    fmt::print("  {} written to {}\n", files.compare ? "comparison" : "report", args.html);
  if (!args.trace.empty()) fmt::print("  Chrome trace written to {}\n", args.trace);
  for (const auto& d : outcome.result.diagnostics) fmt::print(stderr, "{}\n", d);
  return 0;
}

}  // namespace

void register_profile_command(CLI::App& app) {
  auto args = std::make_shared<ProfileAsmArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile-asm",
      "Time an assembly program and write the profile explorer (HTML) and a Chrome trace "
      "(docs/profiler.md)");
  cmd->add_option("file", args->file, "Assembly file (.s)")->required();
  cmd->add_option("-o,--output", args->html, "Explorer report to write (HTML)")->required();
  cmd->add_option("--trace", args->trace, "Chrome trace-event JSON to write (Perfetto)")
      ->type_name("FILE");
  cmd->add_option("--compare", args->compare,
                  "A second assembly file run with the same options: the report compares them")
      ->type_name("OTHER.s");
  cmd->add_option("--title", args->title, "Report title (default: the file name)");
  cmd->add_option("--json", args->json,
                  "Write the result as JSON to FILE: figures, MFU/MBU, bound, suggestions, the "
                  "timing report (and the compared run's), trnsim version")
      ->type_name("FILE");
  add_program_options(cmd, *args);
  cmd->add_flag("--timing-only", args->timing_only, "Time the run without computing data");
  cmd->add_flag("--no-power-ramp", args->no_power_ramp, "Time without the TensorE power ramp");
  add_limit_options(cmd, *args);
  cmd->callback([args] {
    try {
      profile_asm_command(*args);
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}\n", util::format_exception(e, "trnsim profile-asm"));
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace trnsim::cli
