// `trnsim run-asm FILE`: parse an assembly file, allocate its HBM tensors, fill the inputs,
// run it on one simulated core and report (docs/simulator.md, "Running assembly").
//
// Exit codes: 0 clean run, 1 error (parse, validation, simulation), 2 ran but hazards found.
#include <fmt/core.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli/asm_run_options.h"
#include "cli/progress_line.h"
#include "cli/run_asm.h"
#include "isa/asm.h"
#include "numerics/numerics.h"
#include "sim/asm_runner.h"
#include "util/diagnostic.h"

namespace trnsim::cli {

namespace {

// run-asm's own options on top of the shared ones: outputs and the timing summary.
struct RunAsmArgs : AsmRunArgs {
  std::vector<std::string> outputs, prints;
  bool timing = false;
  std::string json;  // timing summary as JSON to this file
};

void print_values(const sim::HbmTensor& t, const std::vector<std::uint8_t>& bytes) {
  constexpr std::uint64_t kShown = 16;
  if (numerics::is_mx_packed(t.dtype)) {
    fmt::print("{}: {} bytes of packed {} (not printed)\n", t.name, bytes.size(),
               numerics::name(t.dtype));
    return;
  }
  std::vector<float> values(t.elements());
  numerics::decode_bytes(t.dtype, std::as_bytes(std::span(bytes)), values);
  fmt::print("{} ({} elements):", t.to_string(), values.size());
  for (std::uint64_t i = 0; i < values.size() && i < kShown; ++i) fmt::print(" {:g}", values[i]);
  fmt::print("{}\n", values.size() > kShown ? " ..." : "");
}

// --output NAME=FILE and --print NAME, after a functional run.
void write_outputs(const RunAsmArgs& args, const sim::AsmRunOutcome& outcome) {
  for (const auto& text : args.outputs) {
    auto [name, path] = split_assignment(text, "--output", false);
    const auto it = outcome.contents.find(name);
    if (it == outcome.contents.end())
      throw sim::SimError(fmt::format("--output {}: no hbm tensor has that name", name));
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(it->second.data()),
              static_cast<std::streamsize>(it->second.size()));
    if (!out) throw sim::SimError(fmt::format("cannot write '{}'", path));
  }
  for (const auto& name : args.prints) {
    const auto it = outcome.contents.find(name);
    if (it == outcome.contents.end())
      throw sim::SimError(fmt::format("--print {}: no hbm tensor has that name", name));
    for (const auto& t : outcome.tensors)
      if (t.name == name) print_values(t, it->second);
  }
}

int run_asm_command(const RunAsmArgs& args) {
  sim::AsmRunRequest request = make_asm_request(args, args.file);
  // Asking for a timing output implies timing; --timing-only without the model would only
  // count instructions, so it times the run as well.
  request.timed = args.timing || args.timing_only || !args.json.empty() || args.no_power_ramp;

  util::Progress progress;
  request.options.progress = &progress;
  const sim::AsmRunOutcome outcome = [&] {
    const ProgressLine line(progress);  // erased before the report
    return sim::run_asm(request);
  }();
  const sim::RunResult& result = outcome.result;
  fmt::print("{}: {} instructions executed, end time {:g}{}\n", args.file,
             result.instructions_executed, result.end_time, outcome.timing ? " ns" : "");
  for (const auto& q : result.queues) {
    const std::string queue = q.queue.engine == isa::Engine::kDma
                                  ? fmt::format("dma.{}", q.queue.index)
                                  : std::string(isa::engine_name(q.queue.engine));
    fmt::print("  queue {:<8} {} instruction{}\n", queue, q.instructions,
               q.instructions == 1 ? "" : "s");
  }
  for (std::size_t s = 0; s < result.semaphores.size(); ++s)
    if (result.semaphores[s] != 0) fmt::print("  semaphore s{} = {}\n", s, result.semaphores[s]);
  if (outcome.timing) {
    fmt::print("{}", sim::format_timing_report(*outcome.timing));
    if (!args.json.empty()) {
      std::ofstream out(args.json);
      out << sim::timing_report_json(*outcome.timing) << '\n';
      if (!out) throw sim::SimError(fmt::format("cannot write '{}'", args.json));
    }
  }
  for (const auto& d : result.diagnostics) fmt::print(stderr, "{}\n", d);
  if (result.hazards_suppressed > 0)
    fmt::print(stderr, "({} further hazards not listed)\n", result.hazards_suppressed);

  if (args.timing_only && !(args.outputs.empty() && args.prints.empty())) {
    fmt::print(stderr, "--timing-only computes no data: --output and --print skipped\n");
  } else {
    write_outputs(args, outcome);
  }
  if (!result.hazards.empty()) {
    fmt::print(stderr, "{} hazard{} found\n", result.hazards.size() + result.hazards_suppressed,
               result.hazards.size() == 1 ? "" : "s");
    return 2;
  }
  return 0;
}

}  // namespace

void register_run_asm_command(CLI::App& app) {
  auto args = std::make_shared<RunAsmArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run-asm", "Run an assembly program on one simulated NeuronCore (docs/simulator.md)");
  cmd->add_option("file", args->file, "Assembly file (.s)")->required();
  add_program_options(cmd, *args);
  cmd->add_option("--output", args->outputs, "Write tensor NAME's bytes after the run to FILE")
      ->type_name("NAME=FILE");
  cmd->add_option("--print", args->prints, "Print the first values of tensor NAME after the run");
  cmd->add_flag("--timing-only", args->timing_only,
                "Time the run without computing data (implies --timing)");
  cmd->add_flag("--timing", args->timing,
                "Time the run with the timing model and print a summary (docs/timing-model.md)");
  cmd->add_option("--json", args->json,
                  "Write the timing summary as JSON to FILE (implies --timing)")
      ->type_name("FILE");
  cmd->add_flag("--no-power-ramp", args->no_power_ramp,
                "Time without the TensorE power ramp (implies --timing)");
  add_limit_options(cmd, *args);
  cmd->callback([args] {
    int code = 0;
    try {
      code = run_asm_command(*args);
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}\n", util::format_exception(e, "trnsim run-asm"));
      throw CLI::RuntimeError(1);
    }
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace trnsim::cli
