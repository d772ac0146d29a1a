// Building, running and checking a library problem, and summarising the run: what the
// `trnsim run` command, the demo and the kernel benchmarks all print.
#pragma once

#include <optional>
#include <string>

#include "kernels/registry.h"
#include "runtime/runtime.h"

namespace trnsim::kernels {

struct RunProblemOptions {
  bool functional = true;  // false: timing only (no check)
  bool check_hazards = true;
  std::optional<bool> power_ramp;
  compiler::CompileOptions compile;
  util::Progress* progress = nullptr;  // optional: the phases and simulated instructions
};

struct ProblemReport {
  std::string label;
  std::string chip;
  int cores = 1;
  double trace_ms = 0, compile_ms = 0;
  std::size_t instructions = 0, waits = 0;
  std::uint64_t sbuf_peak_bytes = 0, psum_peak_bytes = 0;  // per partition
  std::optional<CheckResult> check;                        // functional runs
  std::string tolerance;                                   // the tolerance and its reason
  double simulated_ns = 0;
  double flops = 0, achieved_flops_per_s = 0, peak_flops_per_s = 0;  // over the cores used
  double hbm_bytes = 0, achieved_hbm_bytes_per_s = 0, hbm_share_bytes_per_s = 0;
  std::string peak_mode;
  std::string bound_queue;  // busiest queue of core 0
  double bound_busy_fraction = 0;
  double host_seconds = 0;   // simulating (the launch)
  double check_seconds = 0;  // computing the reference and comparing (functional runs)
  runtime::BuiltKernel built;
  runtime::LaunchResult launch;

  bool ok() const { return !check || check->ok; }
  double percent_of_peak() const {
    return peak_flops_per_s > 0 ? 100.0 * achieved_flops_per_s / peak_flops_per_s : 0;
  }
  double percent_of_hbm() const {
    return hbm_share_bytes_per_s > 0 ? 100.0 * achieved_hbm_bytes_per_s / hbm_share_bytes_per_s : 0;
  }
};

ProblemReport run_problem(const Problem& problem, const arch::ChipConfig& chip,
                          const RunProblemOptions& options = {});

// run_problem in two steps, so that a caller can trace and compile several problems (and see
// their errors) before it simulates any: build_problem traces and compiles (the report's
// label, chip, compile figures and `built`; a kernel or compiler error is a
// kernel::KernelError, which names the problem's changed options), launch_problem runs the
// built kernel, checks it and fills in the rest.
ProblemReport build_problem(const Problem& problem, const arch::ChipConfig& chip,
                            const RunProblemOptions& options = {});
void launch_problem(ProblemReport& report, const Problem& problem, const arch::ChipConfig& chip,
                    const RunProblemOptions& options = {});

// A few lines: correctness, simulated time, achieved vs peak, bounding engine, compile.
std::string format_report(const ProblemReport& report);

}  // namespace trnsim::kernels
