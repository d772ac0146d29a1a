// `trnsim run KERNEL`: build a library kernel for a shape and dtype, run it on a simulated
// chip, check it against its reference and print where the time went.
//
// Exit codes: 0 correct, 1 error, 3 ran but the result is outside the tolerance.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <fstream>
#include <sstream>

#include "arch/arch.h"
#include "cli/commands.h"
#include "isa/asm.h"
#include "kernels/registry.h"
#include "kernels/runner.h"
#include "profile/profile.h"
#include "sim/timing_model.h"

namespace trnsim::cli {

namespace {

struct RunArgs {
  std::string kernel;
  std::string shape;
  std::string dtype;
  std::string chip = "trn3";
  std::string emit;  // ir | asm
  std::string emit_file;
  std::string json;
  std::string profile;  // explorer report (HTML)
  std::string trace;    // Chrome trace (JSON)
  int lnc = 0;  // 0 = the problem's own
  bool timing_only = false, no_schedule = false, no_power_ramp = false, list = false;
};

std::vector<std::int64_t> parse_shape(const std::string& text) {
  std::vector<std::int64_t> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, 'x')) {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != part.size() || part.empty() || v <= 0)
      throw std::invalid_argument(fmt::format("--shape '{}': expected positive integers joined by 'x' "
                                              "(e.g. 4096x4096x4096)",
                                              text));
    out.push_back(v);
  }
  return out;
}

void list_kernels() {
  fmt::print("library kernels (trnsim run NAME --shape ... --dtype ...):\n");
  for (const auto& k : kernels::library()) {
    std::vector<std::string> dtypes;
    for (auto d : k.dtypes) dtypes.emplace_back(numerics::name(d));
    const std::string shape = fmt::format("{}", fmt::join(k.default_shape, "x"));
    fmt::print("  {:<16} {}\n  {:<16} shape {} (default {}), dtypes {}\n", k.name, k.summary, "",
               k.shape_help, shape, fmt::join(dtypes, ", "));
  }
}

void write_text(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    fmt::print("{}", text);
    return;
  }
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", path));
}

int run_command(const RunArgs& args) {
  if (args.list || args.kernel.empty()) {
    list_kernels();
    return args.kernel.empty() && !args.list ? 1 : 0;
  }
  const kernels::KernelInfo* info = kernels::find_kernel(args.kernel);
  if (info == nullptr) {
    list_kernels();
    throw std::invalid_argument(fmt::format("no library kernel is called '{}'", args.kernel));
  }
  const arch::ChipConfig chip = arch::load(args.chip);
  const std::vector<std::int64_t> shape = args.shape.empty() ? info->default_shape : parse_shape(args.shape);
  numerics::DType dtype = info->default_dtype;
  if (!args.dtype.empty()) {
    const auto parsed = numerics::parse_dtype(args.dtype);
    if (!parsed) throw std::invalid_argument(fmt::format("--dtype '{}' is not a data type", args.dtype));
    if (std::find(info->dtypes.begin(), info->dtypes.end(), *parsed) == info->dtypes.end())
      throw std::invalid_argument(fmt::format("{} does not take {} inputs", info->name, numerics::name(*parsed)));
    dtype = *parsed;
  }
  kernels::Problem problem = info->make(shape, dtype, chip);
  if (args.lnc > 0) problem.lnc = args.lnc;

  kernels::RunProblemOptions options;
  options.functional = !args.timing_only;
  options.compile.schedule = !args.no_schedule;
  if (args.no_power_ramp) options.power_ramp = false;
  const kernels::ProblemReport report = kernels::run_problem(problem, chip, options);

  if (args.emit == "ir") {
    std::string text;
    for (const auto& ir : report.built.ir) text += kernel::format_ir(ir);
    write_text(args.emit_file, text);
  } else if (args.emit == "asm") {
    std::string text;
    for (const auto& p : report.built.compiled.programs) text += isa::print_program(p);
    write_text(args.emit_file, text);
  }
  fmt::print("{}", kernels::format_report(report));
  for (const auto& t : report.launch.timing) fmt::print("{}", sim::format_timing_report(t));
  if (!args.json.empty()) {
    std::vector<std::string> parts;
    for (const auto& t : report.launch.timing) parts.push_back(sim::timing_report_json(t));
    write_text(args.json, fmt::format("[\n{}\n]\n", fmt::join(parts, ",\n")));
  }
  if (!args.profile.empty() || !args.trace.empty()) {
    profile::ProfileInput input;
    input.chip = &chip;
    input.title = report.label;
    for (std::size_t p = 0; p < report.launch.runs.size(); ++p)
      input.cores.push_back({static_cast<int>(p), &report.built.compiled.programs[p], &report.launch.runs[p],
                             p < report.launch.timing.size() ? &report.launch.timing[p] : nullptr});
    const profile::Analysis analysis = profile::write_profile(input, {args.profile, args.trace});
    if (!args.profile.empty()) fmt::print("explorer report: {}\n", args.profile);
    if (!args.trace.empty()) fmt::print("trace (Perfetto / chrome://tracing): {}\n", args.trace);
    for (std::size_t i = 0; i < analysis.suggestions.size() && i < 5; ++i)
      fmt::print("suggestion: {}: {}{}\n", analysis.suggestions[i].title, analysis.suggestions[i].detail,
                 analysis.suggestions[i].source.empty() ? "" : " (" + analysis.suggestions[i].source + ")");
  }
  return report.ok() ? 0 : 3;
}

void add_run_options(CLI::App* cmd, const std::shared_ptr<RunArgs>& args) {
  cmd->add_option("kernel", args->kernel, "Library kernel (see --list)");
  cmd->add_option("--shape", args->shape, "Problem shape, e.g. 4096x4096x4096 (see --list)");
  cmd->add_option("--dtype", args->dtype, "Input data type (bf16, fp32, fp8_e4m3, mxfp8, ...)");
  cmd->add_option("--chip", args->chip, "Chip preset (trn1, trn2, trn3) or JSON config file")
      ->capture_default_str();
  cmd->add_option("--emit", args->emit, "Also print a compiler stage: ir or asm")
      ->check(CLI::IsMember({"ir", "asm"}));
  cmd->add_option("--emit-file", args->emit_file, "Write the --emit output to FILE instead of stdout");
  cmd->add_option("--json", args->json, "Write the timing reports as JSON to FILE");
  cmd->add_option("--lnc", args->lnc,
                  "Logical core size: run the kernel on this many physical cores (NKI kernel[n])");
  cmd->add_option("--trace", args->trace, "Write a Chrome trace (Perfetto, chrome://tracing) to FILE");
  cmd->add_flag("--timing-only", args->timing_only, "Time the run without computing data (no check)");
  cmd->add_flag("--no-schedule", args->no_schedule, "Keep the kernel's program order on each queue");
  cmd->add_flag("--no-power-ramp", args->no_power_ramp, "Time without the TensorE power ramp");
  cmd->add_flag("--list", args->list, "List the library kernels");
}

void run_callback(const std::shared_ptr<RunArgs>& args, const char* name) {
  int code = 0;
  try {
    code = run_command(*args);
  } catch (const std::exception& e) {
    fmt::print(stderr, "trnsim {}: error: {}\n", name, e.what());
    throw CLI::RuntimeError(1);
  }
  if (code != 0) throw CLI::RuntimeError(code);
}

}  // namespace

void register_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Build, run and check a library kernel on a simulated chip");
  add_run_options(cmd, args);
  cmd->add_option("--profile", args->profile, "Write the explorer report (self-contained HTML) to FILE");
  cmd->callback([args] { run_callback(args, "run"); });

  auto pargs = std::make_shared<RunArgs>();
  CLI::App* prof = app.add_subcommand(
      "profile", "Run a library kernel and write the explorer report (docs/profiler.md)");
  add_run_options(prof, pargs);
  prof->add_option("-o,--output", pargs->profile, "Explorer report (HTML)")->required();
  prof->callback([pargs] { run_callback(pargs, "profile"); });
}

}  // namespace trnsim::cli
