#include "kernels/runner.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>

#include "timing/timing.h"

namespace trnsim::kernels {

namespace {
std::string queue_label(const isa::QueueId& q) {
  return std::string(isa::engine_name(q.engine));
}
}  // namespace

ProblemReport run_problem(const Problem& problem, const arch::ChipConfig& chip,
                          const RunProblemOptions& options) {
  ProblemReport r = build_problem(problem, chip, options);
  launch_problem(r, problem, chip, options);
  return r;
}

ProblemReport build_problem(const Problem& problem, const arch::ChipConfig& chip,
                            const RunProblemOptions& options) {
  ProblemReport r;
  r.label = problem.label;
  r.chip = chip.name;
  r.cores = problem.lnc;
  r.tolerance = fmt::format("abs {:.3g} + rel {:.3g} ({})", problem.tolerance.abs,
                            problem.tolerance.rel, problem.tolerance.why);
  std::vector<kernel::TensorSpec> specs;
  for (const auto& t : problem.inputs) specs.push_back(t.spec());
  runtime::BuildOptions build;
  build.name = problem.label;
  build.lnc = problem.lnc;
  build.compile = options.compile;
  build.progress = options.progress;
  try {
    r.built = runtime::build(problem.fn, specs, chip, build);
  } catch (const kernel::KernelError& e) {
    // A block or tile size the chip cannot hold shows up here (the kernel's own checks at
    // trace time, the compiler's allocation): name the options that were changed.
    if (problem.options.empty()) throw;
    throw kernel::KernelError(
        e.where(), fmt::format("with the kernel options {}: {}", problem.options, e.why()),
        e.diagnostics().front().notes);
  }
  r.trace_ms = r.built.trace_ms;
  r.compile_ms = r.built.compile_ms;
  r.instructions = r.built.compiled.stats.instructions;
  r.waits = r.built.compiled.stats.waits;
  r.sbuf_peak_bytes = r.built.compiled.stats.sbuf_peak_bytes;
  r.psum_peak_bytes = r.built.compiled.stats.psum_peak_bytes;
  return r;
}

std::vector<runtime::HostTensor> rank_inputs(const std::vector<runtime::HostTensor>& inputs,
                                             int rank, int ranks) {
  if (rank == 0) return inputs;
  std::vector<runtime::HostTensor> out;
  for (const runtime::HostTensor& t : inputs) {
    const std::size_t word = numerics::storage_bytes(t.dtype);
    const auto words = static_cast<std::size_t>(t.words());
    const std::size_t shift =
        words / static_cast<std::size_t>(ranks) * static_cast<std::size_t>(rank);
    out.push_back(runtime::HostTensor::deferred(t.name, t.dtype, t.shape, [t, word, shift] {
      const std::vector<std::uint8_t>& bytes = t.bytes();
      std::vector<std::uint8_t> rotated(bytes.size());
      std::rotate_copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(shift * word),
                       bytes.end(), rotated.begin());
      return rotated;
    }));
  }
  return out;
}

namespace {

// The first race any core of any rank found, as the run's error.
void throw_first_hazard(const std::vector<sim::RunResult>& runs, const std::string& label,
                        const std::string& rank) {
  for (const auto& run : runs) {
    if (run.hazards.empty()) continue;
    util::Diagnostic first = run.hazards.front().diagnostic;
    first.message =
        fmt::format("{}{}: the compiled kernel has {} race(s) between queues; first: {}", label,
                    rank, run.hazards.size(), first.message);
    throw sim::SimError(std::move(first));
  }
}

// Checks every rank's outputs against the reference of its own inputs; the report's check is
// the first failing rank's, or the one with the largest error.
void check_ranks(ProblemReport& r, const Problem& problem,
                 const std::vector<std::vector<runtime::HostTensor>>& inputs,
                 const std::vector<runtime::LaunchResult>& ranks) {
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    Problem own;
    own.inputs = inputs[k];
    own.reference = problem.reference;
    own.tolerance = problem.tolerance;
    CheckResult c = check(own, ranks[k].outputs);
    if (!c.ok) c.worst = fmt::format("rank {}: {}", k, c.worst);
    const bool take =
        !r.check || (r.check->ok && (!c.ok || c.max_abs_error > r.check->max_abs_error));
    if (take) r.check = c;
    r.rank_checks.push_back(std::move(c));
  }
}

// Runs `check` as the checking phase and records its host time.
template <class Check>
void timed_check(ProblemReport& r, const RunProblemOptions& options, Check&& check) {
  util::enter(options.progress, util::Progress::Phase::kChecking);
  const auto start = std::chrono::steady_clock::now();
  check();
  r.check_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void launch_problem(ProblemReport& r, const Problem& problem, const arch::ChipConfig& chip,
                    const RunProblemOptions& options) {
  runtime::LaunchOptions launch;
  launch.functional = options.functional;
  launch.check_hazards = options.check_hazards;
  launch.power_ramp = options.power_ramp;
  launch.progress = options.progress;
  r.ranks = std::max(1, options.ranks);
  std::vector<std::vector<runtime::HostTensor>> inputs;
  if (r.ranks > 1) {
    for (int k = 0; k < r.ranks; ++k) inputs.push_back(rank_inputs(problem.inputs, k, r.ranks));
    runtime::RanksResult all = runtime::launch_ranks(r.built, chip, inputs, launch);
    for (std::size_t k = 0; k < all.ranks.size(); ++k)
      throw_first_hazard(all.ranks[k].runs, problem.label, fmt::format(" (rank {})", k));
    r.chip_timing = std::move(all.chip_timing);
    r.host_seconds = all.host_seconds;
    r.simulated_ns = all.simulated_ns;
    if (options.functional)
      timed_check(r, options, [&] { check_ranks(r, problem, inputs, all.ranks); });
    r.launch = std::move(all.ranks.front());
    for (std::size_t k = 1; k < all.ranks.size(); ++k) {
      runtime::LaunchResult& rank = r.other_ranks.emplace_back();
      rank.runs = std::move(all.ranks[k].runs);  // what the profile and trace show
      rank.timing = std::move(all.ranks[k].timing);
      rank.simulated_ns = all.ranks[k].simulated_ns;
    }
  } else {
    r.launch = runtime::launch(r.built, chip, problem.inputs, launch);
    throw_first_hazard(r.launch.runs, problem.label, "");
    r.chip_timing = r.launch.chip_timing;
    r.host_seconds = r.launch.host_seconds;
    r.simulated_ns = r.launch.simulated_ns;
    if (options.functional)
      timed_check(r, options, [&] { r.check = check(problem, r.launch.outputs); });
  }

  r.flops = problem.flops * r.ranks;
  r.hbm_bytes = problem.hbm_bytes * r.ranks;
  r.peak_mode = problem.peak_mode;
  const timing::CostModel formulas(chip);
  const double seconds = r.simulated_ns * 1e-9;
  if (seconds > 0) {
    r.achieved_flops_per_s = r.flops / seconds;
    r.achieved_hbm_bytes_per_s = r.hbm_bytes / seconds;
  }
  const int cores = r.cores * r.ranks;
  if (!r.peak_mode.empty()) r.peak_flops_per_s = formulas.tensor_peak_flops(r.peak_mode) * cores;
  r.hbm_share_bytes_per_s = chip.hbm.bandwidth_gbps.value * 1e9 / chip.cores_per_chip * cores;
  if (!r.launch.timing.empty() && r.launch.timing.front().total_ns > 0) {
    // The bounding engine of core 0: the compute engine busiest for the longest, or "dma"
    // when the DMA queues together are active longer (the union of their busy intervals,
    // as the profiler's DMA active time).
    const sim::TimingReport& t = r.launch.timing.front();
    for (const auto& q : t.queues) {
      if (q.queue.engine == isa::Engine::kDma) continue;
      const double f = q.busy_ns / t.total_ns;
      if (f > r.bound_busy_fraction) {
        r.bound_busy_fraction = f;
        r.bound_queue = queue_label(q.queue);
      }
    }
    const isa::Program& program = r.built.compiled.programs.front();
    const sim::RunResult& run = r.launch.runs.front();
    std::vector<std::pair<double, double>> dma;
    for (std::size_t i = 0; i < program.instructions.size(); ++i)
      if (program.instructions[i].queue.engine == isa::Engine::kDma)
        dma.emplace_back(run.times[i].start, run.times[i].occupied_until);
    std::sort(dma.begin(), dma.end());
    double active = 0, until = -1;
    for (const auto& [lo, hi] : dma) {
      if (hi <= until) continue;
      active += hi - std::max(lo, until);
      until = hi;
    }
    if (active / t.total_ns > r.bound_busy_fraction) {
      r.bound_busy_fraction = active / t.total_ns;
      r.bound_queue = "dma";
    }
  }
}

std::string format_report(const ProblemReport& r) {
  std::string out = r.ranks > 1 ? fmt::format("{} on {} ({} ranks of {} core{})\n", r.label, r.chip,
                                              r.ranks, r.cores, r.cores == 1 ? "" : "s")
                                : fmt::format("{} on {} ({} core{})\n", r.label, r.chip, r.cores,
                                              r.cores == 1 ? "" : "s");
  if (r.check) {
    std::string status = r.check->ok ? "correct" : "WRONG";
    if (r.ranks > 1) {
      const auto bad = std::count_if(r.rank_checks.begin(), r.rank_checks.end(),
                                     [](const CheckResult& c) { return !c.ok; });
      status = bad == 0 ? fmt::format("correct on all {} ranks", r.ranks)
                        : fmt::format("WRONG on {} of {} ranks", bad, r.ranks);
    }
    out += fmt::format(
        "  result:    {} (max abs error {:.3g}, max rel error {:.3g} over {} elements{}; "
        "tolerance {})\n",
        status, r.check->max_abs_error, r.check->max_rel_error, r.check->checked,
        r.ranks > 1 ? " of the worst rank" : "", r.tolerance);
    if (!r.check->ok) out += fmt::format("  first mismatch: {}\n", r.check->worst);
  } else {
    out += "  result:    not computed (timing only)\n";
  }
  out += fmt::format("  simulated: {:.3f} us\n", r.simulated_ns * 1e-3);
  if (r.peak_flops_per_s > 0)
    out += fmt::format("  compute:   {:.2f} TFLOP/s = {:.1f}% of the {} peak ({:.1f} TFLOP/s)\n",
                       r.achieved_flops_per_s * 1e-12, r.percent_of_peak(), r.peak_mode,
                       r.peak_flops_per_s * 1e-12);
  out += fmt::format(
      "  memory:    {:.1f} GB/s of minimum HBM traffic = {:.1f}% of the HBM share ({:.0f} GB/s)\n",
      r.achieved_hbm_bytes_per_s * 1e-9, r.percent_of_hbm(), r.hbm_share_bytes_per_s * 1e-9);
  if (!r.bound_queue.empty())
    out += fmt::format("  bound by:  {} (active {:.1f}% of the time)\n", r.bound_queue,
                       100 * r.bound_busy_fraction);
  out += fmt::format(
      "  compiled:  {} instructions, {} semaphore waits, SBUF peak {:.1f} KiB/partition, "
      "PSUM peak {:.1f} KiB/partition; trace {:.0f} ms + compile {:.0f} ms\n",
      r.instructions, r.waits, static_cast<double>(r.sbuf_peak_bytes) / 1024.0,
      static_cast<double>(r.psum_peak_bytes) / 1024.0, r.trace_ms, r.compile_ms);
  out += fmt::format("  host:      {:.2f} s of simulation", r.host_seconds);
  if (r.check) out += fmt::format(", {:.2f} s checking against the reference", r.check_seconds);
  out += "\n";
  return out;
}

}  // namespace trnsim::kernels
