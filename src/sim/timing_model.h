// The timing model: a sim::CostModel that turns the per-instruction formulas of
// timing::CostModel into nanoseconds on the event loop, adds the shared DMA engines, the
// core's share of HBM bandwidth and the TensorE power ramp, and summarises a run.
//
// Every formula and constant is described in docs/timing-model.md. One TimingModel holds
// the state of one run (engine busy-until times, the loaded stationary, the ramp): create a
// fresh one per sim::run. A ChipTimingModel holds one TimingModel per core of a
// sim::run_cores launch, all sharing the chip's HBM bandwidth.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
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
  double hbm_chip_bytes_per_s = 0;        // hbm.bandwidth_gbps: what all cores share
  Duration hbm_limited_ns = 0;            // DMA engine time added because HBM bandwidth was taken
};

// The chip's HBM bandwidth as one resource shared by every DMA engine of every core: a
// reservation timeline of the bandwidth in use. A DMA engine's share reserves, from the
// moment it begins, the lower of its own rate and the bandwidth not yet reserved, interval
// by interval, until its bytes are moved (first come, first served; deterministic because
// the event loop calls the cost hooks in order of start time). When every engine of every
// participating core together cannot exceed the bandwidth, it is never the limit and the
// timeline is skipped.
class HbmBandwidth {
 public:
  // `bytes_per_ns`: the chip's HBM bandwidth; `max_demand_bytes_per_ns`: the most all
  // participating engines can ask for at once (HBM bytes per ns).
  HbmBandwidth(double bytes_per_ns, double max_demand_bytes_per_ns);
  // Moves `bytes` (transfer bytes, each crossing HBM `sides` times, sides > 0) at up to
  // `max_rate` transfer bytes/ns from `begin`; returns when the last byte is moved.
  Duration reserve(Duration begin, double bytes, double max_rate, double sides) {
    // Inline: every DMA share of every transfer asks, and usually nothing can limit it.
    if (bytes <= 0.0) return begin;
    if (!limited_) return begin + bytes / max_rate;
    return reserve_limited(begin, bytes, max_rate, sides);
  }
  // Reservations before `time` can no longer matter (every later begin is >= time).
  void forget_before(Duration time);
  double bytes_per_ns() const { return capacity_; }
  bool can_limit() const { return limited_; }
  std::size_t steps() const { return steps_.size(); }  // size of the timeline (tests)

 private:
  struct Step {
    Duration time;
    double used;  // HBM bytes/ns reserved on [time, next step's time)
  };
  Duration reserve_limited(Duration begin, double bytes, double max_rate, double sides);
  std::size_t split_at(Duration time);  // index of the step starting exactly at `time`
  double capacity_;
  bool limited_;
  std::vector<Step> steps_;  // by time; the last one's `used` extends to infinity
};

// The tensor-engine dtype modes of timing::CostModel::tensor_peak_flops.
inline constexpr std::array<std::string_view, 4> kTensorModes = {"bf16", "fp32", "fp8", "mx"};

class ChipTimingModel;

class TimingModel final : public CostModel {
 public:
  // A core with the chip's HBM to itself (one core runs).
  explicit TimingModel(const arch::ChipConfig& chip, TimingOptions options = {});
  // A core sharing `hbm` with other cores (ChipTimingModel builds these).
  TimingModel(const arch::ChipConfig& chip, TimingOptions options,
              std::shared_ptr<HbmBandwidth> hbm);

  InstructionCost cost(const isa::Instruction& inst, std::size_t index, Duration start) override;
  // Precomputes each instruction's cost inputs in the event loop's preparation pass; cost()
  // then reads only them (the same results as without preparation, faster).
  void begin_program(std::size_t instructions) override;
  void prepare(const isa::Instruction& inst, std::size_t index) override;
  void end_program() override;

  // Summary of the run this model timed (`result` and `program` of that run).
  TimingReport report(const isa::Program& program, const RunResult& result) const;

  bool power_ramp() const { return power_ramp_; }
  // The core's fair share of HBM split evenly over its engines (bytes/ns): what each engine
  // gets when every engine of every core streams. Informational: the model itself shares
  // HBM through HbmBandwidth.
  double hbm_bytes_per_ns_per_engine() const;

 private:
  friend class ChipTimingModel;
  // A DMA transfer reduced to what its timing needs (timing::DmaPlan without the shares).
  struct DmaJob {
    std::uint64_t bytes = 0, descriptors = 0;
    double hbm_sides = 0;
    std::uint32_t engines_used = 0, first_engine = 0;
    double fixed_latency_ns = 0, engine_bytes_per_ns = 0, per_descriptor_ns = 0;
    // The split over engines_used engines (precomputed: it divides), and the time an engine
    // needs for the common share (bytes_base bytes, descriptors_base descriptors) on its own.
    timing::DmaSplit split{0, 0, 0, 1};
    double base_share_ns = 0;
    friend bool operator==(const DmaJob&, const DmaJob&) = default;
  };
  // An instruction's precomputed cost inputs: its kind and an index into its chunk's table
  // of distinct costs (programs repeat a few instruction shapes many times, so the
  // per-instruction record stays 12 bytes and the tables stay in cache).
  enum class Kind : std::uint8_t { kFixed, kMatmul, kTensorTranspose, kDma };
  struct Prepared {
    Kind kind = Kind::kFixed;
    bool tensor_queue = false;
    std::uint8_t mode = 0;         // matmul: index into kTensorModes
    std::uint32_t stationary = 0;  // matmul: the chunk's interned stationary operand
    std::uint32_t cost = 0;        // kDma: index into the chunk's dma_jobs; otherwise costs
  };
  struct PreparedCost {
    double occupancy = 0, latency = 0;            // fixed, or a matmul reusing the stationary
    double load_occupancy = 0, load_latency = 0;  // a matmul loading its stationary
    double flops = 0;
    friend bool operator==(const PreparedCost&, const PreparedCost&) = default;
  };
  // Distinct values by id: `slots` is an open-addressing hash table of id + 1 (0 = empty,
  // kept at most half full); `recent` the ids found last (a software pipeline interleaves
  // a few instruction shapes: load, matmul, eviction, store), the oldest replaced first.
  template <class T>
  struct InternTable {
    std::vector<T> values;
    std::vector<std::uint32_t> slots;
    std::array<std::uint32_t, 4> recent{};
    std::uint32_t oldest = 0;  // index into recent
  };
  template <class T, class Hash>
  static std::uint32_t intern(InternTable<T>& table, const T& value, Hash hash);  // by ==
  struct RecentShape {
    const isa::Instruction* inst = nullptr;  // in the program being prepared
    Prepared prepared;
  };
  // What one chunk of the program (CostModel::kPrepareChunk instructions) prepared: it is
  // filled by one thread; end_program() gives its stationaries program-wide ids. Aligned to
  // cache lines: threads preparing neighbouring chunks write their tables all the time.
  struct alignas(64) ChunkTables {
    InternTable<DmaJob> dma_jobs;
    InternTable<PreparedCost> costs;
    InternTable<isa::AccessPattern> stationaries;
    // The last instructions prepared from the formulas (TimingModel::prepare), the oldest
    // replaced first.
    std::array<RecentShape, 4> recent_shapes{};
    std::uint32_t oldest_shape = 0;
    std::vector<std::uint32_t> stationary_ids;  // program-wide id of each (> 0)
    timing::DmaPlan plan;                       // scratch of dma_job
  };
  void prepare_anew(const isa::Instruction& inst, Prepared& p, ChunkTables& tables);
  static const isa::AccessPattern& matmul_stationary(const isa::Instruction& inst);
  DmaJob dma_job(const isa::Instruction& inst, timing::DmaPlan& plan) const;
  static double share_time_ns(const DmaJob& job, std::uint64_t bytes, std::uint64_t descriptors);
  static std::uint32_t intern_stationary(InternTable<isa::AccessPattern>& table,
                                         const isa::AccessPattern& ap);
  InstructionCost tensor_cost(const isa::Instruction& inst, double flops, std::size_t mode,
                              double occupancy, double latency, Duration start);
  InstructionCost dma_cost(const DmaJob& job, Duration start);
  // Duration of `work_ns` of full-rate TensorE work starting at `start` under the ramp.
  Duration ramped_duration(Duration start, Duration work_ns);

  timing::CostModel formulas_;
  std::shared_ptr<HbmBandwidth> hbm_;
  timing::DmaPlan plan_;  // reused by every unprepared DMA instruction (no allocation)
  // Preparation (begin_program / prepare / end_program); empty when cost() is called
  // without it.
  std::vector<Prepared> prepared_;
  std::vector<ChunkTables> chunks_;
  InternTable<isa::AccessPattern> stationaries_;  // program-wide; an id is index + 1
  // Prepared runs: id of the stationary in the array; kResolvedStationary when a resolved
  // copy (CostModel::kResolved) loaded it, and tensor_state_ knows which.
  static constexpr std::uint32_t kResolvedStationary = 0xFFFFFFFF;
  std::uint32_t loaded_stationary_ = 0;
  bool power_ramp_ = false;
  timing::TensorEngineState tensor_state_;
  // Power ramp: when the current stretch of continuous TensorE work began, and when the
  // engine's last instruction stops occupying it.
  bool tensor_has_worked_ = false;
  Duration ramp_origin_ = 0;
  Duration tensor_busy_until_ = 0;
  // DMA engines are shared by all DMA queues of the core.
  std::vector<Duration> dma_engine_free_at_;
  // When every engine is free at the same time, dma_engines_free_by_, dma_engine_free_at_ is
  // stale and not read (TimingModel::dma_cost).
  Duration dma_engines_free_by_ = 0;  // the latest free time of any engine
  bool dma_engines_uniform_ = true;
  // Added to every engine's busy time and bytes (by transfers that used every engine).
  Duration dma_all_engines_busy_ns_ = 0;
  std::uint64_t dma_all_engines_bytes_ = 0;
  std::vector<Duration> dma_engine_busy_ns_;     // DmaEngineTiming::busy_ns by engine
  std::vector<std::uint64_t> dma_engine_bytes_;  // DmaEngineTiming::bytes by engine
  // Statistics.
  std::array<double, kTensorModes.size()> flops_by_mode_{};  // indexed like kTensorModes
  Duration throttled_ns_ = 0;
  std::uint64_t dma_bytes_ = 0, hbm_bytes_ = 0;
  Duration hbm_limited_ns_ = 0;
};

// A chip-level summary of a run_cores launch.
struct ChipTimingReport {
  std::string chip;
  Duration total_ns = 0;            // the launch's end time (max over cores)
  std::vector<int> core_ids;        // physical core of each entry of `cores`
  std::vector<TimingReport> cores;  // per core, in launch order (each with its own total)
  // TensorE over all cores.
  double flops = 0;
  std::string tensor_mode;                     // the mode with the most FLOPs over all cores
  double chip_peak_flops_per_s = 0;            // cores_per_chip x the per-core peak of that mode
  double launched_peak_flops_per_s = 0;        // launched cores x the per-core peak
  double published_chip_peak_flops_per_s = 0;  // published_chip figure of the mode, 0 if none
  double achieved_flops_per_s = 0;             // flops / total time
  // HBM over all cores.
  std::uint64_t dma_bytes = 0, hbm_bytes = 0;
  double hbm_bytes_per_s = 0;           // hbm.bandwidth_gbps (the chip)
  double achieved_hbm_bytes_per_s = 0;  // hbm_bytes / total time
  Duration hbm_limited_ns = 0;          // sum over cores of TimingReport::hbm_limited_ns
};

// Timing of a multi-core launch: one TimingModel per participating core, all sharing one
// HbmBandwidth of the whole chip, each capped by its own DMA engines.
//
//   sim::ChipTimingModel timing(chip, 8);
//   std::vector<sim::CoreProgram> launches;
//   for (int c = 0; c < 8; ++c) launches.push_back({c, &programs[c], timing.core(c)});
//   sim::MultiRunResult result = sim::run_cores(device, launches, options);
//   sim::ChipTimingReport report = timing.chip_report(launches, result);
//
// Slot i of the model may be given to any physical core; make a fresh model per launch.
class ChipTimingModel {
 public:
  ChipTimingModel(const arch::ChipConfig& chip, int cores, TimingOptions options = {});

  int cores() const { return static_cast<int>(models_.size()); }
  CostModel* core(int i) { return &timing(i); }  // slot i, 0 <= i < cores()
  TimingModel& timing(int i);
  const TimingModel& timing(int i) const;
  const HbmBandwidth& hbm() const { return *hbm_; }

  // The TimingReport of slot `core` for the program and result it ran.
  TimingReport report(int core, const isa::Program& program, const RunResult& result) const;
  // Every launch (matched to its slot by its cost_model) and the chip totals.
  ChipTimingReport chip_report(std::span<const CoreProgram> launches,
                               const MultiRunResult& result) const;
  // The same over some of a launch's cores (one rank of several): `results[i]` is what
  // `launches[i]` ran; the total is the latest end among them.
  ChipTimingReport chip_report(std::span<const CoreProgram> launches,
                               std::span<const RunResult> results) const;

 private:
  arch::ChipConfig chip_;
  std::shared_ptr<HbmBandwidth> hbm_;
  std::vector<std::unique_ptr<TimingModel>> models_;
};

// Human-readable summary (several lines) and the same as JSON text (docs/timing-model.md).
std::string format_timing_report(const TimingReport& report);
std::string timing_report_json(const TimingReport& report);
std::string format_chip_timing_report(const ChipTimingReport& report);
std::string chip_timing_report_json(const ChipTimingReport& report);

}  // namespace trnsim::sim
