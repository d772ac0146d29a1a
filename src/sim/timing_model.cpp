// The timing model on the event loop (docs/timing-model.md).
#include "sim/timing_model.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace trnsim::sim {
namespace {

using isa::Engine;
using isa::Memory;

// plan_dma hands 8 consecutive on-chip partitions to each engine (dma-overview).
constexpr std::uint32_t kPartitionsPerDmaEngine = 8;

bool is_dma_transfer(const isa::Instruction& inst) {
  return std::holds_alternative<isa::DmaCopy>(inst.op) ||
         std::holds_alternative<isa::DmaTranspose>(inst.op) ||
         std::holds_alternative<isa::DmaIndirect>(inst.op);
}

// The dtype mode that sets a matmul's peak: an index into kTensorModes.
std::size_t tensor_mode(const isa::Instruction& inst) {
  if (std::holds_alternative<isa::NcMatmulMx>(inst.op)) return 3;
  if (const auto* mm = std::get_if<isa::NcMatmul>(&inst.op)) {
    if (mm->stationary.dtype == numerics::DType::kFloat32 ||
        mm->moving.dtype == numerics::DType::kFloat32)
      return 1;
    if (mm->perf_mode == isa::MatmulPerfMode::kDoubleRow) return 2;
  }
  return 0;
}

// The on-chip side of a transfer picks the first engine: partitions [8e, 8e + 8) are served
// by engine e, so transfers on disjoint partitions use disjoint engines. HBM<->HBM starts
// at engine 0.
std::uint32_t first_dma_engine(const isa::Instruction& inst, std::uint32_t engines) {
  std::uint32_t first = 0;
  std::visit(
      [&](const auto& op) {
        using Op = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<Op, isa::DmaCopy> || std::is_same_v<Op, isa::DmaTranspose> ||
                      std::is_same_v<Op, isa::DmaIndirect>) {
          const isa::AccessPattern& onchip = op.dst.memory != Memory::kHbm ? op.dst : op.src;
          if (onchip.memory != Memory::kHbm)
            first = onchip.start_partition / kPartitionsPerDmaEngine;
        }
      },
      inst.op);
  return first % engines;
}

std::string queue_label(const isa::QueueId& q) {
  if (q.engine == Engine::kDma) return fmt::format("dma.{}", q.index);
  return std::string(isa::engine_name(q.engine));
}

double percent(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

}  // namespace

TimingModel::TimingModel(const arch::ChipConfig& chip, TimingOptions options)
    : formulas_(chip), power_ramp_(options.power_ramp.value_or(chip.tensor.power_ramp)) {
  const auto engines = static_cast<std::uint32_t>(chip.dma.engines_per_core.value);
  dma_engine_free_at_.assign(engines, 0.0);
  for (std::uint32_t e = 0; e < engines; ++e) dma_engines_.push_back({e, 0.0, 0});
}

double TimingModel::hbm_bytes_per_ns_per_engine() const {
  const arch::ChipConfig& chip = formulas_.chip();
  return chip.hbm.bandwidth_gbps / chip.cores_per_chip / chip.dma.engines_per_core;
}

InstructionCost TimingModel::cost(const isa::Instruction& inst, std::size_t, Duration start) {
  if (is_dma_transfer(inst)) return dma_cost(inst, start);
  const timing::ComputeCost c = formulas_.compute(inst, tensor_state_);
  InstructionCost cost{c.occupancy_ns, c.latency_ns};
  if (inst.queue.engine == Engine::kTensor) {
    if (c.flops > 0) flops_by_mode_[tensor_mode(inst)] += c.flops;
    if (c.occupancy_ns > 0) {
      const Duration occupancy =
          power_ramp_ ? ramped_duration(start, c.occupancy_ns) : c.occupancy_ns;
      throttled_ns_ += occupancy - c.occupancy_ns;
      // The pipeline drain after the last cycle (latency - occupancy) is not throttled.
      cost = {occupancy, occupancy + (c.latency_ns - c.occupancy_ns)};
      tensor_busy_until_ = start + occupancy;
    }
  }
  return cost;
}

Duration TimingModel::ramped_duration(Duration start, Duration work_ns) {
  const auto& t = formulas_.chip().tensor;
  const double s = t.power_ramp_start_fraction;
  const double ramp = t.power_ramp_us * 1e3;
  const double window = t.power_ramp_window_us * 1e3;
  // An idle gap longer than the window lets the limit re-engage: a new ramp begins.
  if (!tensor_has_worked_ || start - tensor_busy_until_ > window) ramp_origin_ = start;
  tensor_has_worked_ = true;
  if (s >= 1.0 || ramp <= 0.0) return work_ns;

  // The utilisation limit is f(tau) = s + (1 - s) tau / ramp for tau < ramp, 1 after, tau
  // being the time since the ramp began. Find the duration D with integral_{tau0}^{tau0+D} f
  // = work: the instruction does its work at the limited rate.
  const double tau0 = start - ramp_origin_;
  if (tau0 >= ramp) return work_ns;
  const double a = (1.0 - s) / (2.0 * ramp);  // integral of f = s tau + a tau^2
  auto area = [&](double tau) { return s * tau + a * tau * tau; };
  const double left_in_ramp = area(ramp) - area(tau0);
  if (work_ns >= left_in_ramp) return (ramp - tau0) + (work_ns - left_in_ramp);
  const double target = area(tau0) + work_ns;
  const double tau1 = (-s + std::sqrt(s * s + 4.0 * a * target)) / (2.0 * a);
  return tau1 - tau0;
}

InstructionCost TimingModel::dma_cost(const isa::Instruction& inst, Duration start) {
  const timing::DmaPlan plan = formulas_.plan_dma(inst);
  const auto engines = static_cast<std::uint32_t>(dma_engine_free_at_.size());
  const std::uint32_t first = first_dma_engine(inst, engines);
  const double hbm_rate = hbm_bytes_per_ns_per_engine();
  // The descriptors are ready fixed_latency_ns after the queue starts the transfer; each
  // engine then moves its share after the shares queued on it before (all queues).
  const Duration ready = start + plan.fixed_latency_ns;
  Duration done = ready;
  for (const timing::DmaEngineWork& work : plan.engines) {
    if (work.bytes == 0) continue;
    const std::uint32_t engine = (first + work.engine) % engines;
    // The engine moves data at its own rate unless its share of HBM bandwidth is lower.
    const double data_ns = std::max(static_cast<double>(work.bytes) / plan.engine_bytes_per_ns,
                                    static_cast<double>(work.hbm_bytes) / hbm_rate);
    const double share_ns =
        data_ns + static_cast<double>(work.descriptors) * plan.per_descriptor_ns;
    const Duration begin = std::max(ready, dma_engine_free_at_[engine]);
    dma_engine_free_at_[engine] = begin + share_ns;
    dma_engines_[engine].busy_ns += share_ns;
    dma_engines_[engine].bytes += work.bytes;
    hbm_bytes_ += work.hbm_bytes;
    done = std::max(done, begin + share_ns);
  }
  dma_bytes_ += plan.total_bytes;
  // A queue has one transfer in flight: it starts the next when this one completed, so
  // overlapping the fixed latency takes several queues (as the bandwidth guide advises).
  const Duration latency = done - start;
  return {latency, latency};
}

TimingReport TimingModel::report(const isa::Program& program, const RunResult& result) const {
  const arch::ChipConfig& chip = formulas_.chip();
  TimingReport r;
  r.chip = chip.name;
  r.total_ns = result.end_time;
  for (const QueueCount& q : result.queues) r.queues.push_back({q.queue, q.instructions, 0, 0, 0});
  // Walk each queue's instructions in program order (= its start order): the gap between
  // the queue becoming free and the next start is time stalled on semaphore waits.
  std::vector<Duration> free_at(r.queues.size(), 0.0);
  for (std::size_t i = 0; i < program.instructions.size() && i < result.times.size(); ++i) {
    const isa::QueueId& id = program.instructions[i].queue;
    const auto it = std::find_if(r.queues.begin(), r.queues.end(),
                                 [&](const QueueTiming& q) { return q.queue == id; });
    if (it == r.queues.end()) continue;
    const auto q = static_cast<std::size_t>(it - r.queues.begin());
    const InstructionTime& t = result.times[i];
    it->stalled_ns += std::max(0.0, t.start - free_at[q]);
    it->busy_ns += t.occupied_until - t.start;
    free_at[q] = t.occupied_until;
  }
  for (auto& q : r.queues) q.idle_ns = std::max(0.0, r.total_ns - q.busy_ns - q.stalled_ns);
  r.dma_engines = dma_engines_;

  for (const double flops : flops_by_mode_) r.flops += flops;
  // The first of equals wins, so a run without matmuls reports the bf16 peak.
  const auto top = std::max_element(flops_by_mode_.begin(), flops_by_mode_.end());
  r.tensor_mode = kTensorModes[static_cast<std::size_t>(top - flops_by_mode_.begin())];
  r.tensor_peak_flops_per_s = formulas_.tensor_peak_flops(r.tensor_mode);
  r.power_ramp = power_ramp_;
  r.throttled_ns = throttled_ns_;
  r.dma_bytes = dma_bytes_;
  r.hbm_bytes = hbm_bytes_;
  r.dma_peak_bytes_per_s = chip.dma.engines_per_core * chip.dma.engine_bandwidth_gbps * 1e9;
  r.hbm_core_share_bytes_per_s = chip.hbm.bandwidth_gbps * 1e9 / chip.cores_per_chip;
  if (r.total_ns > 0) {
    const double seconds = r.total_ns * 1e-9;
    r.achieved_flops_per_s = r.flops / seconds;
    r.achieved_dma_bytes_per_s = static_cast<double>(r.dma_bytes) / seconds;
    r.achieved_hbm_bytes_per_s = static_cast<double>(r.hbm_bytes) / seconds;
  }
  return r;
}

std::string format_timing_report(const TimingReport& r) {
  std::string out = fmt::format("timing ({}): total {:.3f} us\n", r.chip, r.total_ns * 1e-3);
  for (const QueueTiming& q : r.queues)
    out += fmt::format("  {:<8} busy {:5.1f}%  stalled {:5.1f}%  idle {:5.1f}%\n",
                       queue_label(q.queue), percent(q.busy_ns, r.total_ns),
                       percent(q.stalled_ns, r.total_ns), percent(q.idle_ns, r.total_ns));
  double engine_busy = 0;
  for (const DmaEngineTiming& e : r.dma_engines) engine_busy += e.busy_ns;
  if (!r.dma_engines.empty())
    out += fmt::format("  dma engines busy {:5.1f}% on average over {}\n",
                       percent(engine_busy / static_cast<double>(r.dma_engines.size()), r.total_ns),
                       r.dma_engines.size());
  out += fmt::format("  tensor: {:.2f} TFLOP/s achieved, {:.1f}% of the {} peak {:.2f} TFLOP/s",
                     r.achieved_flops_per_s * 1e-12,
                     percent(r.achieved_flops_per_s, r.tensor_peak_flops_per_s), r.tensor_mode,
                     r.tensor_peak_flops_per_s * 1e-12);
  out += r.power_ramp
             ? fmt::format(" (power ramp on, {:.3f} us throttled)\n", r.throttled_ns * 1e-3)
             : std::string(" (power ramp off)\n");
  out += fmt::format(
      "  dma: {:.1f} GB/s moved ({:.1f}% of the engines' {:.1f} GB/s), HBM {:.1f} GB/s ({:.1f}% "
      "of the core's {:.1f} GB/s share)\n",
      r.achieved_dma_bytes_per_s * 1e-9,
      percent(r.achieved_dma_bytes_per_s, r.dma_peak_bytes_per_s), r.dma_peak_bytes_per_s * 1e-9,
      r.achieved_hbm_bytes_per_s * 1e-9,
      percent(r.achieved_hbm_bytes_per_s, r.hbm_core_share_bytes_per_s),
      r.hbm_core_share_bytes_per_s * 1e-9);
  return out;
}

std::string timing_report_json(const TimingReport& r) {
  nlohmann::json j;
  j["chip"] = r.chip;
  j["total_ns"] = r.total_ns;
  j["queues"] = nlohmann::json::array();
  for (const QueueTiming& q : r.queues)
    j["queues"].push_back({{"queue", queue_label(q.queue)},
                           {"instructions", q.instructions},
                           {"busy_ns", q.busy_ns},
                           {"stalled_ns", q.stalled_ns},
                           {"idle_ns", q.idle_ns}});
  j["dma_engines"] = nlohmann::json::array();
  for (const DmaEngineTiming& e : r.dma_engines)
    j["dma_engines"].push_back({{"engine", e.engine}, {"busy_ns", e.busy_ns}, {"bytes", e.bytes}});
  j["tensor"] = {{"flops", r.flops},
                 {"mode", r.tensor_mode},
                 {"peak_flops_per_s", r.tensor_peak_flops_per_s},
                 {"achieved_flops_per_s", r.achieved_flops_per_s},
                 {"power_ramp", r.power_ramp},
                 {"throttled_ns", r.throttled_ns}};
  j["dma"] = {{"bytes", r.dma_bytes},
              {"hbm_bytes", r.hbm_bytes},
              {"peak_bytes_per_s", r.dma_peak_bytes_per_s},
              {"hbm_core_share_bytes_per_s", r.hbm_core_share_bytes_per_s},
              {"achieved_bytes_per_s", r.achieved_dma_bytes_per_s},
              {"achieved_hbm_bytes_per_s", r.achieved_hbm_bytes_per_s}};
  return j.dump(2);
}

}  // namespace trnsim::sim
