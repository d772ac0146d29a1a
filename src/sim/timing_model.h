// The timing model: a sim::CostModel that turns the per-instruction formulas of
// timing::CostModel into nanoseconds on the event loop, adds the shared DMA engines, the
// core's share of HBM bandwidth and the TensorE power ramp, and summarises a run.
//
// Every formula and constant is described in docs/timing-model.md. One TimingModel holds
// the state of one run (engine busy-until times, the loaded stationary, the ramp): create a
// fresh one per sim::run.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/arch.h"
#include "isa/isa.h"
#include "sim/sim.h"
#include "timing/timing.h"

namespace trnsim::sim {

struct TimingOptions {
  // TensorE dI/dt throttling; unset = the chip config's tensor.power_ramp.
  std::optional<bool> power_ramp;
};

// One queue over a run. busy + stalled + idle = the run's total time.
struct QueueTiming {
  isa::QueueId queue;
  std::uint64_t instructions = 0;
  Duration busy_ns = 0;     // occupied by an instruction (DMA: until its transfer completed)
  Duration stalled_ns = 0;  // free, with an instruction to start whose waits were unmet
  Duration idle_ns = 0;     // free with nothing left to start
};

struct DmaEngineTiming {
  std::uint32_t engine = 0;
  Duration busy_ns = 0;  // moving data (descriptor costs included; fixed latency excluded)
  std::uint64_t bytes = 0;
};

struct TimingReport {
  std::string chip;
  Duration total_ns = 0;
  std::vector<QueueTiming> queues;           // in order of first appearance in the program
  std::vector<DmaEngineTiming> dma_engines;  // every DMA engine of the core
  // TensorE.
  double flops = 0;
  std::string tensor_mode;             // dtype mode with the most FLOPs: bf16, fp32, fp8, mx
  double tensor_peak_flops_per_s = 0;  // peak of that mode (one core, no throttling)
  double achieved_flops_per_s = 0;     // flops / total time
  bool power_ramp = false;
  Duration throttled_ns = 0;  // TensorE time added by the power ramp
  // DMA.
  std::uint64_t dma_bytes = 0;            // bytes moved by DMA instructions
  std::uint64_t hbm_bytes = 0;            // bytes read from plus written to HBM by them
  double dma_peak_bytes_per_s = 0;        // engines_per_core x engine bandwidth
  double hbm_core_share_bytes_per_s = 0;  // hbm.bandwidth_gbps / cores_per_chip
  double achieved_dma_bytes_per_s = 0;    // dma_bytes / total time
  double achieved_hbm_bytes_per_s = 0;    // hbm_bytes / total time
};

// The tensor-engine dtype modes of timing::CostModel::tensor_peak_flops.
inline constexpr std::array<std::string_view, 4> kTensorModes = {"bf16", "fp32", "fp8", "mx"};

class TimingModel final : public CostModel {
 public:
  explicit TimingModel(const arch::ChipConfig& chip, TimingOptions options = {});

  InstructionCost cost(const isa::Instruction& inst, std::size_t index, Duration start) override;

  // Summary of the run this model timed (`result` and `program` of that run).
  TimingReport report(const isa::Program& program, const RunResult& result) const;

  bool power_ramp() const { return power_ramp_; }
  // Rate at which one DMA engine moves bytes that cross HBM: the core's HBM share split
  // evenly over its engines (bytes/ns).
  double hbm_bytes_per_ns_per_engine() const;

 private:
  InstructionCost dma_cost(const isa::Instruction& inst, Duration start);
  // Duration of `work_ns` of full-rate TensorE work starting at `start` under the ramp.
  Duration ramped_duration(Duration start, Duration work_ns);

  timing::CostModel formulas_;
  bool power_ramp_ = false;
  timing::TensorEngineState tensor_state_;
  // Power ramp: when the current stretch of continuous TensorE work began, and when the
  // engine's last instruction stops occupying it.
  bool tensor_has_worked_ = false;
  Duration ramp_origin_ = 0;
  Duration tensor_busy_until_ = 0;
  // DMA engines are shared by all DMA queues of the core.
  std::vector<Duration> dma_engine_free_at_;
  std::vector<DmaEngineTiming> dma_engines_;
  // Statistics.
  std::array<double, kTensorModes.size()> flops_by_mode_{};  // indexed like kTensorModes
  Duration throttled_ns_ = 0;
  std::uint64_t dma_bytes_ = 0, hbm_bytes_ = 0;
};

// Human-readable summary (several lines) and the same as JSON text (docs/timing-model.md).
std::string format_timing_report(const TimingReport& report);
std::string timing_report_json(const TimingReport& report);

}  // namespace trnsim::sim
