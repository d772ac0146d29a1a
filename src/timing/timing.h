// Cost model: how long each instruction keeps its engine busy, when its results are
// visible, and how a DMA splits over the core's DMA engines.
//
// These are the per-instruction formulas of docs/timing-model.md, computed from the chip
// config (every constant there has a source or is flagged as an estimate). The event loop
// in sim combines them with queue order, semaphores and shared-bandwidth contention; this
// layer has no notion of time passing, so each formula can be tested on its own.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "arch/arch.h"
#include "isa/isa.h"

namespace trnsim::timing {

// What limited an instruction's occupancy of its engine.
enum class Bound : std::uint8_t {
  kMinInitiationInterval,  // tiny instruction: the engine's minimum II dominates
  kMovingStream,           // matmul: streaming the moving tensor through the array
  kStationaryLoad,         // matmul: loading a new stationary tensor (not hidden)
  kElements,               // vector/scalar/gpsimd: elements per lane at the engine's rate
  kGpSimdStartup,          // GpSimd start-up cost
  kUserCost,               // custom operator with a user-given cost
  kNone,                   // sync-only instruction
};
std::string_view bound_name(Bound b);

struct ComputeCost {
  double occupancy_ns = 0;       // engine busy from start (the instruction's initiation interval)
  double latency_ns = 0;         // start until results are visible and signals fire (>= occupancy)
  double cycles = 0;             // occupancy in the engine's own cycles
  double flops = 0;              // useful floating-point operations (matmul: 2*K*M*N)
  std::uint64_t bytes_read = 0;  // on-chip bytes read (SBUF/PSUM)
  std::uint64_t bytes_written = 0;  // on-chip bytes written
  Bound bound = Bound::kNone;
};

// Tensor-engine state that changes a matmul's cost: the stationary tensor currently loaded
// in the array (a matmul reusing it needs no LoadStationary).
struct TensorEngineState {
  bool has_stationary = false;
  isa::AccessPattern stationary;
};

// One DMA engine's share of a DMA instruction.
struct DmaEngineWork {
  std::uint32_t engine = 0;  // engine index within the core, 0..engines_per_core-1
  std::uint64_t bytes = 0;
  std::uint64_t descriptors = 0;  // contiguous buffers (each costs per_descriptor_ns)
  std::uint64_t hbm_bytes = 0;    // bytes of this share that cross HBM (read + write)
};

// A transfer of `bytes` in `descriptors` buffers split evenly over `used` engines, the
// remainders to the first engines; each byte crosses HBM `hbm_sides` times (a fraction for
// dma_compute, whose engine bytes count every source). The divisions are done once, so
// share(e) is cheap.
struct DmaSplit {
  DmaSplit(std::uint64_t bytes, std::uint64_t descriptors, double hbm_sides, std::uint32_t used)
      : bytes_base(bytes / used),
        bytes_rem(bytes % used),
        descriptors_base(descriptors / used),
        descriptors_rem(descriptors % used),
        sides(hbm_sides) {}
  DmaEngineWork share(std::uint32_t engine) const {
    DmaEngineWork w;
    w.engine = engine;
    w.bytes = bytes_base + (engine < bytes_rem ? 1 : 0);
    w.descriptors = descriptors_base + (engine < descriptors_rem ? 1 : 0);
    w.hbm_bytes = static_cast<std::uint64_t>(std::llround(static_cast<double>(w.bytes) * sides));
    return w;
  }
  std::uint64_t bytes_base, bytes_rem, descriptors_base, descriptors_rem;
  double sides;
  friend bool operator==(const DmaSplit&, const DmaSplit&) = default;
};

// A DMA engine serves 8 consecutive partitions of the on-chip side of a transfer
// (ARCH-v2, dma-overview): partitions [8e, 8e + 8) go to engine e.
inline constexpr std::uint32_t kPartitionsPerDmaEngine = 8;

// The engine a DMA transfer's first share runs on, of `engines` (0 when there are none or
// for any other operation): the engine of its on-chip side's first partition, so transfers
// on disjoint partitions use disjoint engines; HBM<->HBM starts at engine 0.
std::uint32_t first_dma_engine(const isa::Operation& op, std::uint32_t engines);

struct DmaPlan {
  std::vector<DmaEngineWork> engines;  // one share per engine used (unless not asked for)
  std::uint32_t engines_used = 0;      // engines.size() when the shares were asked for
  double fixed_latency_ns = 0;         // descriptor setup + semaphore-to-start, once per transfer
  double min_contiguous_bytes = 0;     // smallest contiguous run (efficiency indicator)
  std::uint64_t total_bytes = 0;
  // Time one engine needs for its share when it has the whole per-engine bandwidth.
  double engine_time_ns(const DmaEngineWork& w) const;
  double engine_bytes_per_ns = 0;
  double per_descriptor_ns = 0;
  // The split's inputs: engines[e] == DmaSplit(total_bytes, descriptors, hbm_sides,
  // engines.size()).share(e).
  std::uint64_t descriptors = 0;
  double hbm_sides = 0;
};

class CostModel {
 public:
  explicit CostModel(const arch::ChipConfig& chip);

  // Cost of a compute-engine instruction (Tensor, Vector, Scalar, GpSimd, Sync).
  // `tensor_state` is read and updated for matmuls.
  ComputeCost compute(const isa::Instruction& inst, TensorEngineState& tensor_state) const;
  // How a DMA instruction (dma_copy, dma_transpose, dma_indirect) splits over DMA engines.
  DmaPlan plan_dma(const isa::Instruction& inst) const;
  // The same into `plan`, reusing its storage (no allocation once its capacity suffices).
  // `shares` = false leaves plan.engines empty (engines_used and the split's inputs are
  // still set): for callers that split again themselves.
  void plan_dma(const isa::Instruction& inst, DmaPlan& plan, bool shares = true) const;

  // Peak useful FLOP/s of the tensor engine of one core for a dtype mode (for reports).
  double tensor_peak_flops(std::string_view mode) const;
  const arch::ChipConfig& chip() const { return chip_; }

 private:
  ComputeCost matmul_cost(const isa::NcMatmul& mm, TensorEngineState& state) const;
  ComputeCost matmul_mx_cost(const isa::NcMatmulMx& mm, TensorEngineState& state) const;
  ComputeCost tensor_transpose_cost(const isa::NcTranspose& tr, TensorEngineState& state) const;
  ComputeCost elementwise_cost(const isa::Instruction& inst) const;

  arch::ChipConfig chip_;
};

}  // namespace trnsim::timing
