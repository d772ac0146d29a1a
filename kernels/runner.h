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
  // SPMD ranks run at once on the chip, each a logical core of problem.lnc physical cores
  // with inputs of its own (rank r > 0: rank 0's inputs rotated, see rank_inputs).
  int ranks = 1;
};

// Rank r's inputs of a problem run on `ranks` ranks: each input's storage words rotated by
// r x words / ranks, so that every rank computes on different data of the same kind (rank 0
// gets the problem's own inputs). Deferred: nothing is generated for a timing-only run.
std::vector<runtime::HostTensor> rank_inputs(const std::vector<runtime::HostTensor>& inputs,
                                             int rank, int ranks);

struct ProblemReport {
  std::string label;
  std::string chip;
  int cores = 1;  // per rank (the logical core size)
  int ranks = 1;
  double trace_ms = 0, compile_ms = 0;
  std::size_t instructions = 0, waits = 0;
  std::uint64_t sbuf_peak_bytes = 0, psum_peak_bytes = 0;  // per partition
  std::optional<CheckResult> check;      // functional runs; with ranks, the first failing or worst
  std::vector<CheckResult> rank_checks;  // per rank, when there are several
  std::string tolerance;                 // the tolerance and its reason
  double simulated_ns = 0;
  double flops = 0, achieved_flops_per_s = 0, peak_flops_per_s = 0;  // over every rank's cores
  double hbm_bytes = 0, achieved_hbm_bytes_per_s = 0, hbm_share_bytes_per_s = 0;
  std::string peak_mode;
  std::string bound_queue;  // busiest queue of core 0
  double bound_busy_fraction = 0;
  double host_seconds = 0;   // simulating (the launch)
  double check_seconds = 0;  // computing the reference and comparing (functional runs)
  runtime::BuiltKernel built;
  runtime::LaunchResult launch;  // rank 0's
  // Ranks 1 onwards: their runs and timing (not their outputs, which were checked). Their
  // programs are rank 0's (built.compiled) with HBM operands moved to the rank's tensors.
  std::vector<runtime::LaunchResult> other_ranks;
  // Every core of every rank against the chip's peaks: runs of more than one core.
  std::optional<sim::ChipTimingReport> chip_timing;

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
