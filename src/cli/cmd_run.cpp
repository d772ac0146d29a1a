// `trnsim run KERNEL`: build a library kernel for a shape, dtype and tuning options
// (`--set key=value`), run it on a simulated chip, check it against its reference and print
// where the time went. `trnsim profile KERNEL` does the same and writes the explorer report;
// with --compare it runs a second variant (another kernel, shape, dtype, option value, chip
// or setting) and writes a comparison.
//
// Exit codes: 0 correct, 1 error, 3 ran but the result is outside the tolerance.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "arch/arch.h"
#include "cli/cli_output.h"
#include "cli/commands.h"
#include "cli/progress_line.h"
#include "isa/asm.h"
#include "kernels/library_loader.h"
#include "kernels/registry.h"
#include "kernels/runner.h"
#include "profile/profile.h"
#include "sim/timing_model.h"
#include "util/diagnostic.h"
#include "util/edit_distance.h"

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
  std::string profile;            // explorer report (HTML)
  std::string trace;              // Chrome trace (JSON)
  std::vector<std::string> set;   // --set key=value[,key=value]...: the kernel's tuning options
  std::vector<std::string> load;  // kernel libraries of the user's (kernels/plugin.h)
  std::string compare;            // trnsim profile: the second run, as overrides of the first
  bool compare_given = false;     // --compare was on the command line (even if empty)
  int lnc = 0;                    // 0 = the problem's own
  int ranks = 1;                  // SPMD ranks on the chip at once
  bool timing_only = false, no_schedule = false, no_power_ramp = false, list = false;
  bool no_hazards = false;
};

// One run of a library kernel, fully resolved: what a comparison varies.
struct RunSpec {
  const kernels::KernelInfo* info = nullptr;
  std::vector<std::int64_t> shape;
  numerics::DType dtype = numerics::DType::kBFloat16;
  bool shape_given = false, dtype_given = false;  // on the command line (else the default)
  kernels::OptionValues options;  // the tuning options set (the others keep their defaults)
  std::string chip = "trn3";
  int lnc = 0;  // 0 = the problem's own
  int ranks = 1;
  bool schedule = true;
  std::optional<bool> power_ramp;  // unset = the chip's default
  bool check_hazards = true;       // the race detector (--no-hazards: off)
};

// The keys of a --compare spec (docs/profiler.md); any other key is a tuning option of the
// compared kernel.
constexpr const char* kCompareKeys = "kernel, shape, dtype, chip, lnc, schedule, power-ramp";

std::vector<std::int64_t> parse_shape(const std::string& text,
                                      std::string_view option = "--shape") {
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
      throw std::invalid_argument(
          fmt::format("{} '{}': expected positive integers joined by 'x' "
                      "(e.g. 4096x4096x4096)",
                      option, text));
    out.push_back(v);
  }
  if (out.empty() || text.back() == 'x')
    throw std::invalid_argument(
        fmt::format("{} '{}': expected positive integers joined by 'x' "
                    "(e.g. 4096x4096x4096)",
                    option, text));
  return out;
}

std::string dtype_list(const kernels::KernelInfo& info) {
  std::vector<std::string> names;
  for (auto d : info.dtypes) names.emplace_back(numerics::name(d));
  return fmt::format("{}", fmt::join(names, ", "));
}

bool takes(const kernels::KernelInfo& info, numerics::DType dtype) {
  return std::find(info.dtypes.begin(), info.dtypes.end(), dtype) != info.dtypes.end();
}

numerics::DType parse_kernel_dtype(const kernels::KernelInfo& info, const std::string& text,
                                   std::string_view option) {
  const auto parsed = numerics::parse_dtype(text);
  if (!parsed) throw std::invalid_argument(fmt::format("{} '{}' is not a data type", option, text));
  if (!takes(info, *parsed))
    throw std::invalid_argument(fmt::format("{}: {} does not take {} inputs (it takes {})", option,
                                            info.name, numerics::name(*parsed), dtype_list(info)));
  return *parsed;
}

void list_kernel(const kernels::KernelInfo& k) {
  const std::string shape = fmt::format("{}", fmt::join(k.default_shape, "x"));
  fmt::print("  {:<16} {}\n  {:<16} shape {} (default {}), dtypes {}\n", k.name, k.summary, "",
             k.shape_help, shape, dtype_list(k));
  for (const auto& o : k.options)
    fmt::print("  {:<16} --set {:<26} {}: {}\n", "", kernels::format_option(o, o.default_value),
               o.type_text(), o.help);
}

// Every library kernel, or only `only`, with its shapes, dtypes and tuning options.
void list_kernels(const kernels::KernelInfo* only = nullptr) {
  fmt::print(
      "library kernels (trnsim run NAME --shape ... --dtype ... --set option=value,...; "
      "options shown at their defaults):\n");
  if (only != nullptr) {
    list_kernel(*only);
    return;
  }
  for (const auto& k : kernels::library()) list_kernel(k);
}

// The kernel options of --set (each occurrence KEY=VALUE[,KEY=VALUE]...), typed and checked
// against the kernel's declarations.
kernels::OptionValues parse_sets(const kernels::KernelInfo& info,
                                 const std::vector<std::string>& sets) {
  std::vector<std::pair<std::string, std::string>> settings;
  for (const auto& text : sets) {
    auto items = kernels::split_settings(text, "--set");
    settings.insert(settings.end(), items.begin(), items.end());
  }
  try {
    return kernels::parse_option_settings(info.name, info.options, settings);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("--set: {}", e.what()));
  }
}

// "block_m=2, block_n=4" for the options set in a spec ("" when none).
std::string options_text(const RunSpec& spec) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : spec.options.entries()) {
    const kernels::KernelOption* o = kernels::find_option(spec.info->options, name);
    parts.push_back(o != nullptr ? kernels::format_option(*o, value) : name);
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

const kernels::KernelInfo& find_or_list(const std::string& name, std::string_view context) {
  const kernels::KernelInfo* info = kernels::find_kernel(name);
  if (info == nullptr) {
    std::vector<std::string_view> names;
    for (const auto& k : kernels::library()) names.push_back(k.name);
    const std::string best = util::closest(name, names);
    throw std::invalid_argument(
        fmt::format("{}no library kernel is called '{}'{}; `trnsim run --list` lists them", context,
                    name, best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best)));
  }
  return *info;
}

RunSpec first_spec(const RunArgs& args) {
  RunSpec s;
  s.info = &find_or_list(args.kernel, "");
  s.shape_given = !args.shape.empty();
  s.shape = s.shape_given ? parse_shape(args.shape) : s.info->default_shape;
  s.dtype_given = !args.dtype.empty();
  s.dtype =
      s.dtype_given ? parse_kernel_dtype(*s.info, args.dtype, "--dtype") : s.info->default_dtype;
  s.options = parse_sets(*s.info, args.set);
  s.chip = args.chip;
  s.lnc = args.lnc;
  s.ranks = args.ranks;
  s.schedule = !args.no_schedule;
  if (args.no_power_ramp) s.power_ramp = false;
  s.check_hazards = !args.no_hazards;
  return s;
}

bool parse_switch(const std::string& key, const std::string& value, const std::string& spec) {
  if (value == "on" || value == "true" || value == "1" || value == "yes") return true;
  if (value == "off" || value == "false" || value == "0" || value == "no") return false;
  throw std::invalid_argument(
      fmt::format("--compare '{}': {}={} is neither on nor off", spec, key, value));
}

std::string compare_help(const kernels::KernelInfo& info) {
  std::vector<std::string_view> names;
  for (const auto& o : info.options) names.push_back(o.name);
  return fmt::format(
      "expected [KERNEL][,key=value]... with keys {} or {} (e.g. --compare "
      "tutorial_matmul_blocked, --compare dtype=fp32,lnc=2 or --compare block_n=4)",
      kCompareKeys,
      names.empty()
          ? fmt::format("the tuning options of the kernel ({} has none)", info.name)
          : fmt::format("the tuning options of {}: {}", info.name, fmt::join(names, ", ")));
}

// The second run of `trnsim profile --compare SPEC`: SPEC is a comma-separated list of
// changes to the first run, `[KERNEL][,key=value]...` with the keys of kCompareKeys and the
// tuning options of the compared kernel. What SPEC leaves out is the first run's: its shape
// when the other kernel takes shapes of the same form, its dtype when the other kernel takes
// it, the options it set that the other kernel declares, its chip, LNC and settings.
RunSpec compare_spec(const std::string& spec, const RunSpec& first) {
  const std::string help = compare_help(*first.info);
  if (spec.find_first_not_of(' ') == std::string::npos)
    throw std::invalid_argument(fmt::format("--compare is empty: {}", help));
  std::optional<std::string> kernel, shape, dtype, chip, lnc, schedule, power_ramp;
  std::vector<std::pair<std::string, std::string>> option_items;  // the other keys
  std::stringstream in(spec);
  std::string item;
  bool first_item = true;
  while (std::getline(in, item, ',')) {
    const bool leading = first_item;
    first_item = false;
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      if (!leading || item.empty())
        throw std::invalid_argument(
            fmt::format("--compare '{}': '{}' is not key=value; {}", spec, item, help));
      kernel = item;
      continue;
    }
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (value.empty())
      throw std::invalid_argument(
          fmt::format("--compare '{}': {} has no value; {}", spec, key, help));
    std::optional<std::string>* slot = key == "kernel"       ? &kernel
                                       : key == "shape"      ? &shape
                                       : key == "dtype"      ? &dtype
                                       : key == "chip"       ? &chip
                                       : key == "lnc"        ? &lnc
                                       : key == "schedule"   ? &schedule
                                       : key == "power-ramp" ? &power_ramp
                                                             : nullptr;
    if (slot == nullptr) {
      option_items.emplace_back(key, value);  // a tuning option, once the kernel is known
      continue;
    }
    if (slot->has_value())
      throw std::invalid_argument(fmt::format("--compare '{}': {} is given twice", spec, key));
    *slot = value;
  }

  RunSpec s = first;
  if (kernel) s.info = &find_or_list(*kernel, fmt::format("--compare '{}': ", spec));
  const bool same_kernel = s.info == first.info;
  // Options: those of the first run the compared kernel declares, then the spec's.
  s.options = {};
  for (const auto& [name, value] : first.options.entries())
    if (kernels::find_option(s.info->options, name) != nullptr) s.options.set(name, value);
  for (const auto& [key, value] : option_items)
    if (kernels::find_option(s.info->options, key) == nullptr)
      throw std::invalid_argument(
          fmt::format("--compare '{}': unknown key '{}'; {}", spec, key, compare_help(*s.info)));
  try {
    const kernels::OptionValues given =
        kernels::parse_option_settings(s.info->name, s.info->options, option_items);
    for (const auto& [name, value] : given.entries()) s.options.set(name, value);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("--compare '{}': {}", spec, e.what()));
  }
  if (shape) {
    s.shape = parse_shape(*shape, "--compare shape");
    s.shape_given = true;
  } else if (!same_kernel && s.info->shape_help != first.info->shape_help) {
    s.shape = s.info->default_shape;  // shapes of another form: the other kernel's default
    s.shape_given = false;
  }
  if (dtype) {
    s.dtype = parse_kernel_dtype(*s.info, *dtype, "--compare dtype");
    s.dtype_given = true;
  } else if (!takes(*s.info, first.dtype)) {
    if (first.dtype_given)
      throw std::invalid_argument(fmt::format(
          "--compare '{}': {} does not take the first run's {} inputs (it takes {}); add "
          "dtype=... to the spec",
          spec, s.info->name, numerics::name(first.dtype), dtype_list(*s.info)));
    s.dtype = s.info->default_dtype;
    s.dtype_given = false;
  }
  if (chip) s.chip = *chip;
  if (lnc) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(*lnc, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != lnc->size() || v < 1)
      throw std::invalid_argument(
          fmt::format("--compare '{}': lnc={} is not a positive integer", spec, *lnc));
    s.lnc = v;
  }
  if (schedule) s.schedule = parse_switch("schedule", *schedule, spec);
  if (power_ramp) s.power_ramp = parse_switch("power-ramp", *power_ramp, spec);
  return s;
}

// A problem with the chip it runs on, then its report (the profile keeps pointers to both).
struct Run {
  arch::ChipConfig chip;
  kernels::Problem problem;
  kernels::ProblemReport report;
};

kernels::RunProblemOptions run_options(const RunSpec& spec, bool timing_only,
                                       util::Progress* progress) {
  kernels::RunProblemOptions options;
  options.progress = progress;
  options.functional = !timing_only;
  options.compile.schedule = spec.schedule;
  options.power_ramp = spec.power_ramp;
  options.check_hazards = spec.check_hazards;
  options.ranks = spec.ranks;
  return options;
}

// Loads the chip, makes the problem (shape, dtype and option checks) and traces and compiles
// it (the kernel's own checks and the compiler's, e.g. tiles that do not fit SBUF): so both
// runs of a comparison are checked before either is simulated.
std::unique_ptr<Run> prepare(const RunSpec& spec, bool timing_only, util::Progress* progress) {
  auto run = std::make_unique<Run>();
  run->chip = arch::load(spec.chip);
  run->problem = spec.info->make(spec.shape, spec.dtype, run->chip, spec.options);
  if (spec.lnc > 0) run->problem.lnc = spec.lnc;
  if (spec.ranks * run->problem.lnc > run->chip.cores_per_chip)
    throw std::invalid_argument(fmt::format(
        "--ranks {} of {} core{} each needs {} cores; {} has {} (fewer ranks{})", spec.ranks,
        run->problem.lnc, run->problem.lnc == 1 ? "" : "s", spec.ranks * run->problem.lnc,
        run->chip.name, run->chip.cores_per_chip, run->problem.lnc > 1 ? ", or --lnc 1" : ""));
  run->report =
      kernels::build_problem(run->problem, run->chip, run_options(spec, timing_only, progress));
  return run;
}

// Simulates a prepared run, checks it and completes its report.
void execute(Run& run, const RunSpec& spec, bool timing_only, util::Progress* progress) {
  kernels::launch_problem(run.report, run.problem, run.chip,
                          run_options(spec, timing_only, progress));
}

std::string spec_text(const RunSpec& spec) {
  const std::string options = options_text(spec);
  return fmt::format("{} {} {}{}", spec.info->name, fmt::join(spec.shape, "x"),
                     numerics::name(spec.dtype), options.empty() ? "" : " " + options);
}

// What differs between two runs beyond the problem label (kernel, shape, dtype).
std::string settings_text(const Run& run, const RunSpec& spec, const Run& other,
                          const RunSpec& other_spec) {
  std::vector<std::string> parts;
  if (run.chip.name != other.chip.name || spec.chip != other_spec.chip)
    parts.push_back(run.chip.name == other.chip.name ? spec.chip : run.chip.name);
  if (run.problem.lnc != other.problem.lnc) parts.push_back(fmt::format("lnc {}", run.problem.lnc));
  if (spec.schedule != other_spec.schedule)
    parts.emplace_back(spec.schedule ? "scheduled" : "no schedule");
  if (spec.power_ramp != other_spec.power_ramp)
    parts.emplace_back(!spec.power_ramp ? "default power ramp"
                                        : (*spec.power_ramp ? "power ramp" : "no power ramp"));
  return parts.empty() ? "" : fmt::format(" [{}]", fmt::join(parts, ", "));
}

profile::ProfileInput profile_input(const Run& run, std::string title) {
  profile::ProfileInput input;
  input.chip = &run.chip;
  input.title = std::move(title);
  const auto& r = run.report;
  // Every core of every rank (rank k's cores follow rank k - 1's); all ranks run the same
  // instructions, so rank 0's programs describe them.
  int core = 0;
  const auto add_rank = [&](const runtime::LaunchResult& rank) {
    for (std::size_t p = 0; p < rank.runs.size(); ++p)
      input.cores.push_back({core++, &r.built.compiled.programs[p], &rank.runs[p],
                             p < rank.timing.size() ? &rank.timing[p] : nullptr});
  };
  add_rank(r.launch);
  for (const runtime::LaunchResult& rank : r.other_ranks) add_rank(rank);
  return input;
}

// The whole result of a run as JSON (`--json`): the problem, the check, the simulated time
// and rates, what bounded it, the profiler's suggestions and every core's timing report.
nlohmann::json result_json(const Run& run, const RunSpec& spec, bool timing_only) {
  const kernels::ProblemReport& r = run.report;
  nlohmann::json j;
  j["label"] = r.label;
  j["kernel"] = spec.info->name;
  j["shape"] = spec.shape;
  j["dtype"] = numerics::name(spec.dtype);
  j["chip"] = r.chip;
  j["lnc"] = r.cores;
  j["ranks"] = r.ranks;
  nlohmann::json options = nlohmann::json::object();
  for (const kernels::KernelOption& o : spec.info->options) {
    const kernels::OptionValue* set = spec.options.find(o.name);
    const std::string text = kernels::format_option(o, set != nullptr ? *set : o.default_value);
    options[o.name] = text.substr(text.find('=') + 1);
  }
  j["options"] = options;
  j["schedule"] = spec.schedule;
  j["timing_only"] = timing_only;
  const auto check_json = [&](const kernels::CheckResult& c) {
    return nlohmann::json{{"ok", c.ok},
                          {"checked", c.checked},
                          {"max_abs_error", c.max_abs_error},
                          {"max_rel_error", c.max_rel_error},
                          {"worst", c.worst},
                          {"tolerance", r.tolerance}};
  };
  // With several ranks: the worst rank's check, then every rank's.
  j["check"] = r.check ? check_json(*r.check) : nlohmann::json(nullptr);
  if (!r.rank_checks.empty()) {
    j["rank_checks"] = nlohmann::json::array();
    for (const kernels::CheckResult& c : r.rank_checks) j["rank_checks"].push_back(check_json(c));
  }
  j["simulated_ns"] = r.simulated_ns;
  j["flops"] = r.flops;
  j["achieved_flops_per_s"] = r.achieved_flops_per_s;
  j["peak_flops_per_s"] = r.peak_flops_per_s;
  j["peak_mode"] = r.peak_mode;
  j["mfu_percent"] = r.percent_of_peak();
  j["hbm_bytes"] = r.hbm_bytes;
  j["achieved_hbm_bytes_per_s"] = r.achieved_hbm_bytes_per_s;
  j["hbm_share_bytes_per_s"] = r.hbm_share_bytes_per_s;
  j["mbu_percent"] = r.percent_of_hbm();
  j["bound_by"] = {{"queue", r.bound_queue}, {"busy_fraction", r.bound_busy_fraction}};
  j["compiled"] = {{"instructions", r.instructions},
                   {"waits", r.waits},
                   {"sbuf_peak_bytes_per_partition", r.sbuf_peak_bytes},
                   {"psum_peak_bytes_per_partition", r.psum_peak_bytes}};
  j["suggestions"] = nlohmann::json::array();
  if (!r.launch.timing.empty())
    for (const profile::Suggestion& s : profile::analyze(profile_input(run, r.label)).suggestions)
      j["suggestions"].push_back(
          {{"rule", s.rule}, {"title", s.title}, {"detail", s.detail}, {"source", s.source}});
  j["host_seconds"] = {{"trace", r.trace_ms * 1e-3},
                       {"compile", r.compile_ms * 1e-3},
                       {"simulation", r.host_seconds},
                       {"check", r.check_seconds}};
  if (r.chip_timing)
    j["chip_timing"] = nlohmann::json::parse(sim::chip_timing_report_json(*r.chip_timing));
  j["cores"] = nlohmann::json::array();
  for (const sim::TimingReport& t : r.launch.timing)
    j["cores"].push_back(nlohmann::json::parse(sim::timing_report_json(t)));
  return j;
}

void print_report(const kernels::ProblemReport& report) {
  fmt::print("{}", kernels::format_report(report));
  // Several cores (a logical core): the launch's totals, then each core's report labelled.
  if (report.chip_timing)
    fmt::print("{}", sim::format_chip_timing_report(*report.chip_timing));
  else
    for (const auto& t : report.launch.timing) fmt::print("{}", sim::format_timing_report(t));
}

int run_command(const RunArgs& args) {
  for (const std::string& file : args.load) kernels::load_kernel_library(file);
  if (args.list || args.kernel.empty()) {
    list_kernels(args.kernel.empty() ? nullptr : &find_or_list(args.kernel, ""));
    return args.kernel.empty() && !args.list ? 1 : 0;
  }
  const RunSpec spec = first_spec(args);
  // Both specs are parsed first (cheap), then both runs are made, traced and compiled, then
  // simulated: a mistake in either stops the command before anything is simulated.
  std::optional<RunSpec> other_spec;
  if (args.compare_given) other_spec = compare_spec(args.compare, spec);
  util::Progress progress;
  std::unique_ptr<Run> run, other;
  {
    const ProgressLine line(progress);  // erased before anything is printed
    run = prepare(spec, args.timing_only, &progress);
    if (other_spec) {
      try {
        other = prepare(*other_spec, args.timing_only, &progress);
      } catch (const std::exception& e) {
        throw util::with_context(
            e, fmt::format("--compare '{}' ({})", args.compare, spec_text(*other_spec)));
      }
    }
    execute(*run, spec, args.timing_only, &progress);
  }
  const kernels::ProblemReport& report = run->report;
  if (args.emit == "ir") {
    std::string text;
    for (const auto& ir : report.built.ir) text += kernel::format_ir(ir);
    write_text_file(args.emit_file, text);
  } else if (args.emit == "asm") {
    // Each program declares its HBM tensors (.hbm), so one core's runs with run-asm as is.
    const std::vector<isa::Program>& programs = report.built.compiled.programs;
    std::string text;
    for (std::size_t p = 0; p < programs.size(); ++p) {
      if (programs.size() > 1)
        text += fmt::format(
            "# core {} of {} (trnsim run-asm runs one core's program: copy "
            "this part to a file of its own)\n",
            p, programs.size());
      text += isa::print_program(programs[p]);
    }
    write_text_file(args.emit_file, text);
  }
  if (other) {
    fmt::print("before: ");
    print_report(report);
    try {
      const ProgressLine line(progress);
      execute(*other, *other_spec, args.timing_only, &progress);
    } catch (const std::exception& e) {
      throw util::with_context(
          e, fmt::format("--compare '{}' ({})", args.compare, spec_text(*other_spec)));
    }
    fmt::print("after: ");
    print_report(other->report);
  } else {
    print_report(report);
  }
  if (!args.json.empty()) {
    nlohmann::json j;
    j["trnsim"] = version_json();
    j["run"] = result_json(*run, spec, args.timing_only);
    if (other) j["compare"] = result_json(*other, *other_spec, args.timing_only);
    write_text_file(args.json, j.dump(2) + "\n");
  }
  if (!args.profile.empty() || !args.trace.empty()) {
    std::string title = report.label, other_title;
    if (other) {
      title += settings_text(*run, spec, *other, *other_spec);
      other_title = other->report.label + settings_text(*other, *other_spec, *run, spec);
    }
    const profile::ProfileInput input = profile_input(*run, title);
    profile::ProfileInput other_input;
    profile::ReportFiles files{args.profile, args.trace, nullptr};
    if (other) {
      other_input = profile_input(*other, other_title);
      files.compare = &other_input;
    }
    const profile::Analysis analysis = profile::write_profile(input, files);
    if (other) {
      const double before = report.simulated_ns, after = other->report.simulated_ns;
      fmt::print("comparison: {} -> {}\n", title, other_title);
      fmt::print("  simulated: {:.3f} us -> {:.3f} us ({}); bound by {} -> {}\n", before * 1e-3,
                 after * 1e-3, percent_change(before, after),
                 report.bound_queue.empty() ? "-" : report.bound_queue,
                 other->report.bound_queue.empty() ? "-" : other->report.bound_queue);
      if (!args.profile.empty())
        fmt::print("explorer comparison (per engine and per source line): {}\n", args.profile);
    } else if (!args.profile.empty()) {
      fmt::print("explorer report: {}\n", args.profile);
    }
    if (!args.trace.empty()) fmt::print("trace (Perfetto / chrome://tracing): {}\n", args.trace);
    for (std::size_t i = 0; i < analysis.suggestions.size() && i < 5; ++i)
      fmt::print("suggestion{}: {}: {}{}\n", other ? " (before)" : "",
                 analysis.suggestions[i].title, analysis.suggestions[i].detail,
                 analysis.suggestions[i].source.empty()
                     ? ""
                     : " (" + analysis.suggestions[i].source + ")");
  }
  const bool ok = report.ok() && (!other || other->report.ok());
  return ok ? 0 : 3;
}

void add_run_options(CLI::App* cmd, const std::shared_ptr<RunArgs>& args) {
  cmd->add_option("kernel", args->kernel, "Library kernel (see --list)");
  cmd->add_option("--shape", args->shape, "Problem shape, e.g. 4096x4096x4096 (see --list)");
  cmd->add_option("--dtype", args->dtype, "Input data type (bf16, fp32, fp8_e4m3fn, mxfp8, ...)");
  cmd->add_option("--set", args->set,
                  "Set tuning options of the kernel (repeatable, or comma-separated), e.g. "
                  "--set block_m=2,block_n=4; trnsim run KERNEL --list shows them")
      ->type_name("KEY=VALUE[,...]")
      ->allow_extra_args(false)  // one value per --set: a kernel name after it stays positional
      ->take_all();
  cmd->add_option("--chip", args->chip, "Chip preset (trn1, trn2, trn3) or JSON config file")
      ->capture_default_str();
  cmd->add_option("--load", args->load,
                  "Load a kernel library of your own (a shared library built against trnsim's "
                  "package, docs/user-guide.md): its kernels run, list and profile as the "
                  "library's (repeatable)")
      ->type_name("FILE.so")
      ->allow_extra_args(false);
  cmd->add_option("--emit", args->emit, "Also print a compiler stage: ir or asm")
      ->check(CLI::IsMember({"ir", "asm"}));
  cmd->add_option("--emit-file", args->emit_file,
                  "Write the --emit output to FILE instead of stdout");
  cmd->add_option("--json", args->json,
                  "Write the whole result as JSON to FILE: problem, check, time, rates, MFU/MBU, "
                  "bound, suggestions, each core's timing, trnsim version");
  cmd->add_option("--lnc", args->lnc,
                  "Logical core size: run the kernel on this many physical cores (NKI kernel[n])")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--ranks", args->ranks,
                  "Run this many ranks of the kernel at once on the chip (SPMD), each a logical "
                  "core with inputs of its own, all sharing the chip's HBM; the summary gives "
                  "the chip's total against its peak")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--trace", args->trace,
                  "Write a Chrome trace (Perfetto, chrome://tracing) to FILE");
  cmd->add_flag("--timing-only", args->timing_only,
                "Time the run without computing data (no check)");
  cmd->add_flag("--no-schedule", args->no_schedule,
                "Keep the kernel's program order on each queue");
  cmd->add_flag("--no-power-ramp", args->no_power_ramp, "Time without the TensorE power ramp");
  cmd->add_flag("--no-hazards", args->no_hazards,
                "Do not check for races between queues (faster timing of large kernels)");
  cmd->add_flag("--list", args->list,
                "List the library kernels with their shapes, dtypes and tuning options (only "
                "KERNEL's when one is named)");
}

void run_callback(const std::shared_ptr<RunArgs>& args, const char* name) {
  int code = 0;
  try {
    code = run_command(*args);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", util::format_exception(e, fmt::format("trnsim {}", name)));
    throw CLI::RuntimeError(1);
  }
  if (code != 0) throw CLI::RuntimeError(code);
}

}  // namespace

void register_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd =
      app.add_subcommand("run", "Build, run and check a library kernel on a simulated chip");
  add_run_options(cmd, args);
  cmd->add_option("--profile", args->profile,
                  "Write the explorer report (self-contained HTML) to FILE");
  cmd->callback([args] { run_callback(args, "run"); });

  auto pargs = std::make_shared<RunArgs>();
  CLI::App* prof = app.add_subcommand(
      "profile", "Run a library kernel and write the explorer report (docs/profiler.md)");
  add_run_options(prof, pargs);
  // Required to profile, not to list (`trnsim profile --list`): checked in the callback.
  prof->add_option("-o,--output", pargs->profile, "Explorer report to write (HTML; required)");
  CLI::Option* compare =
      prof->add_option(
              "--compare", pargs->compare,
              fmt::format("Also run a second variant and write a comparison (before = this run, "
                          "after = the variant): KERNEL and/or key=value changes, comma-separated; "
                          "keys {} and the kernel's tuning options (--list). Unset keys keep this "
                          "run's values",
                          kCompareKeys))
          ->type_name("[KERNEL][,key=value]...");
  prof->callback([pargs, compare] {
    pargs->compare_given = compare->count() > 0;
    if (!pargs->list && !pargs->kernel.empty() && pargs->profile.empty()) {
      fmt::print(stderr,
                 "trnsim profile: error: -o/--output is required (the explorer report to write, "
                 "e.g. -o {}.html)\n",
                 pargs->kernel);
      throw CLI::RuntimeError(1);
    }
    run_callback(pargs, "profile");
  });
}

}  // namespace trnsim::cli
