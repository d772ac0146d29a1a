// Per-instruction cost formulas (docs/timing-model.md explains each one and its source).
#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <type_traits>

#include "timing/timing.h"
#include "util/enum_names.h"

namespace trnsim::timing {
namespace {

using isa::AccessPattern;
using isa::Engine;
using isa::Memory;
using numerics::DType;

bool is_16bit_or_narrower(DType t) {
  return numerics::storage_bytes(t) <= 2 && numerics::is_float(t);
}

std::uint64_t bytes_of(const AccessPattern& ap) {
  return ap.total_elements() * ap.element_bytes();
}

// Elements of the innermost contiguous run of an access pattern: the product of the
// innermost dims whose steps chain (step 1, then each outer step equals the span inside).
std::uint64_t contiguous_run_elements(const AccessPattern& ap) {
  std::uint64_t run = 1;
  std::int64_t expected_step = 1;
  for (int d = ap.num_dims - 1; d >= 0; --d) {
    const isa::Dim& dim = ap.dims[d];
    if (dim.count == 1) continue;
    if (dim.step != expected_step) break;
    run *= dim.count;
    expected_step = static_cast<std::int64_t>(run);
  }
  // In HBM consecutive partitions can continue the run as well.
  if (ap.memory == Memory::kHbm && run == ap.free_elements() &&
      ap.partition_step == static_cast<std::int64_t>(run)) {
    run *= ap.partitions;
  }
  return std::max<std::uint64_t>(run, 1);
}

const arch::ElementwiseEngineConfig& engine_config(const arch::ChipConfig& chip, Engine e) {
  return e == Engine::kScalar ? chip.scalar : chip.vector;
}

// How many times an operation streams its free elements through the engine's datapath,
// from the NKI cost formulas (OLD-ISA "Estimated instruction cost"; see the timing doc).
struct Passes {
  double passes = 1.0;
  bool may_use_wide_path = true;  // eligible for the 16-bit "performance mode" width
  double extra_cycles = 0.0;      // e.g. the accumulator read-out of activation_reduce
};

// The default: one pass, eligible for the wide path. Each operation whose formula differs
// has its own overload below (its cost formula lives there and nowhere else).
template <class Op>
Passes passes_of(const Op&, double) {
  return {};
}
Passes narrow(double passes) {
  return {passes, false, 0.0};
}
Passes passes_of(const isa::TensorTensor& op, double) {
  // One input from PSUM and one from SBUF stream in parallel; two SBUF inputs share the
  // read port unless both are 16-bit (v3+ perf mode), as the formula states.
  const bool split = (op.data1.memory == Memory::kPsum) != (op.data2.memory == Memory::kPsum);
  const bool all16 = is_16bit_or_narrower(op.data1.dtype) && is_16bit_or_narrower(op.data2.dtype) &&
                     is_16bit_or_narrower(op.dst.dtype);
  return narrow((split || all16) ? 1.0 : 2.0);
}
Passes passes_of(const isa::ScalarTensorTensor&, double) {
  return narrow(2.0);
}
Passes passes_of(const isa::TensorTensorScan&, double) {
  return narrow(2.0);
}
Passes passes_of(const isa::TensorReduce& op, double) {
  const bool fast = is_16bit_or_narrower(op.data.dtype) &&
                    (op.op == isa::AluOp::kAdd || op.op == isa::AluOp::kMaximum);
  return narrow(fast ? 0.5 : 1.0);
}
Passes passes_of(const isa::Reciprocal&, double) {
  return narrow(8.0);
}
Passes passes_of(const isa::BnAggr&, double) {
  return narrow(13.0 / 3.0);
}
Passes passes_of(const isa::Memset& op, double) {
  return {(op.value == 0.0f && is_16bit_or_narrower(op.dst.dtype)) ? 0.5 : 1.0, true, 0.0};
}
Passes passes_of(const isa::Exponential&, double) {
  return narrow(0.25);  // the gen4 fast exponent unit: 4x the ScalarE exp rate (ARCH-v4)
}
Passes passes_of(const isa::QuantizeMx&, double) {
  return narrow(0.25);  // 4 input elements per partition per cycle (ARCH-v4)
}
Passes passes_of(const isa::Activation& op, double min_ii) {
  Passes p;
  if (op.reduce_res) p.extra_cycles = min_ii;  // ActReadAccumulator
  return p;
}
Passes passes_of(const isa::Activate2& op, double min_ii) {
  Passes p;
  if (op.reduce_res) p.extra_cycles = min_ii;  // the accumulator read-out, as for activation
  return p;
}
Passes passes_of(const isa::TensorScalarReduce& op, double min_ii) {
  // max(MIN_II, N) + MIN_II (OLD-ISA); the 16-bit perf mode is documented for tensor_scalar
  // only. Estimate: the MIN_II read-out only when reduce_res is written.
  Passes p = narrow(1.0);
  if (op.reduce_res) p.extra_cycles = min_ii;
  return p;
}
Passes passes_of(const isa::TensorCopyPredicated& op, double) {
  // OLD-ISA: N when src and predicate stream from different memories (SBUF / PSUM), 2N when
  // both come from SBUF. Estimate: an immediate src streams the predicate alone (N).
  const bool split =
      op.src && (op.src->memory == Memory::kPsum) != (op.predicate.memory == Memory::kPsum);
  return narrow((!op.src || split) ? 1.0 : 2.0);
}
Passes passes_of(const isa::TensorScalarCumulative&, double) {
  // Estimate: one pass like tensor_scalar (max(MIN_II, N)); the running accumulator is the
  // same unit tensor_scalar_reduce uses, but the result streams out with the data, so no
  // separate read-out.
  return narrow(1.0);
}
template <class Op, class... Ops>
concept OneOf = (std::same_as<Op, Ops> || ...);

// One pass on the narrow path: selection, top-8 and statistics units.
// dropout: max(MIN_II, N) (OLD-ISA); rng: estimate, one random word per element.
template <OneOf<isa::Max8, isa::NcFindIndex8, isa::NcMatchReplace8, isa::BnStats, isa::Select,
                isa::RangeSelect, isa::NcStreamShuffle, isa::Dropout, isa::Rng>
              Op>
Passes passes_of(const Op&, double) {
  return narrow(1.0);
}

// The element count that drives an instruction's cost: its largest operand per partition.
struct Footprint {
  std::uint64_t free_elements = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  bool touches_psum = false;
  bool all_contiguous = true;
  bool all_16bit = true;
  std::uint32_t partitions = 0;
  std::uint32_t on_chip_accesses = 0;  // SBUF/PSUM operands, [P,1] scalars included
};

template <class Op>
Footprint footprint_of(const Op& op) {
  Footprint f;
  isa::for_each_operand(op, [&](const AccessPattern& ap, const isa::OperandRef& operand) {
    f.on_chip_accesses += ap.memory != Memory::kHbm;
    // [P,1] scale/bias vectors are broadcast, not streamed: they do not set the size, but
    // each is one more access request.
    if (operand.form == isa::OperandForm::kScalar) return;
    f.free_elements = std::max(f.free_elements, ap.free_elements());
    f.partitions = std::max(f.partitions, ap.partitions);
    const std::uint64_t b = bytes_of(ap);
    if (operand.reads()) f.bytes_read += b;
    if (operand.writes()) f.bytes_written += b;
    f.touches_psum |= ap.memory == Memory::kPsum;
    f.all_contiguous &= ap.is_contiguous();
    f.all_16bit &= is_16bit_or_narrower(ap.dtype);
  });
  return f;
}

}  // namespace

std::string_view bound_name(Bound b) {
  static constexpr std::array<std::string_view, 7> kNames = {"min_initiation_interval",
                                                             "moving_stream",
                                                             "stationary_load",
                                                             "elements",
                                                             "gpsimd_startup",
                                                             "user_cost",
                                                             "none"};
  return util::enum_name(kNames, b);
}

std::uint32_t first_dma_engine(const isa::Operation& op, std::uint32_t engines) {
  const std::optional<isa::DmaSides> sides = isa::dma_sides(op);
  if (!sides || engines == 0) return 0;
  const AccessPattern& onchip = sides->dst->memory != Memory::kHbm ? *sides->dst : *sides->src;
  if (onchip.memory == Memory::kHbm) return 0;
  return (onchip.start_partition / kPartitionsPerDmaEngine) % engines;
}

double DmaPlan::engine_time_ns(const DmaEngineWork& w) const {
  if (w.bytes == 0) return 0.0;
  return static_cast<double>(w.bytes) / engine_bytes_per_ns +
         static_cast<double>(w.descriptors) * per_descriptor_ns;
}

CostModel::CostModel(const arch::ChipConfig& chip) : chip_(chip) {}

double CostModel::tensor_peak_flops(std::string_view mode) const {
  const auto& t = chip_.tensor;
  double rate = t.rate_bf16;
  if (mode == "fp32") rate = t.rate_fp32;
  if (mode == "fp8") rate = t.rate_fp8;
  if (mode == "mx") rate = t.rate_mx;
  return 2.0 * t.rows * t.cols * rate * t.clock_ghz * 1e9;
}

namespace {

// One LoadStationary + MultiplyMoving pair on the PE array: the moving stream takes
// max(min(MIN_II, M), N) cycles times the mode's slowdown, a new stationary ~M / speedup
// (loaded in the background, so only the longer of the two counts). Fills in the cycle and
// time fields and reports whether the stationary already in the array was reused.
ComputeCost tensor_pass(const arch::TensorEngineConfig& t, double m, double n, double slowdown,
                        double stationary_slowdown, const AccessPattern& stationary,
                        TensorEngineState& state, bool& reused) {
  const double min_ii = t.min_initiation_interval;
  const double mm_cycles = std::max(std::min(min_ii, m), n) * slowdown;
  reused = state.has_stationary && state.stationary == stationary;
  const double ls_cycles = reused ? 0.0 : m / t.load_stationary_speedup * stationary_slowdown;
  state.has_stationary = true;
  state.stationary = stationary;

  ComputeCost c;
  c.cycles = std::max(mm_cycles, ls_cycles);
  c.bound = ls_cycles > mm_cycles
                ? Bound::kStationaryLoad
                : (n >= std::min(min_ii, m) ? Bound::kMovingStream : Bound::kMinInitiationInterval);
  c.occupancy_ns = c.cycles / t.clock_ghz;
  c.latency_ns = (c.cycles + t.fixed_overhead_cycles) / t.clock_ghz;
  return c;
}

}  // namespace

ComputeCost CostModel::matmul_cost(const isa::NcMatmul& mm, TensorEngineState& state) const {
  const auto& t = chip_.tensor;
  const double k = mm.stationary.partitions;
  const double m = static_cast<double>(mm.stationary.free_elements());
  const double n = static_cast<double>(mm.moving.free_elements());
  const bool fp32 = mm.stationary.dtype == DType::kFloat32 || mm.moving.dtype == DType::kFloat32;
  // Input mode -> rows of contraction per cycle relative to one 128-row pass. FP32 takes 4
  // passes (2 in transpose mode, ARCH-v3); double-row FP8 packs K=256 into one pass.
  double slowdown = 1.0;
  if (fp32) slowdown = mm.is_transpose ? 2.0 : 1.0 / t.rate_fp32;
  double contraction = k;
  if (mm.perf_mode == isa::MatmulPerfMode::kDoubleRow) {
    contraction = k * static_cast<double>(mm.stationary.dims[0].count == 2 ? 2 : 1);
  }
  bool reused = false;
  ComputeCost c = tensor_pass(t, m, n, slowdown, slowdown, mm.stationary, state, reused);
  c.flops = mm.is_transpose ? 0.0 : 2.0 * contraction * m * n;
  c.bytes_read = (reused ? 0 : bytes_of(mm.stationary)) + bytes_of(mm.moving) +
                 (mm.accumulate == isa::AccumulateMode::kAccumulate ? bytes_of(mm.dst) : 0);
  c.bytes_written = bytes_of(mm.dst);
  return c;
}

ComputeCost CostModel::matmul_mx_cost(const isa::NcMatmulMx& mm, TensorEngineState& state) const {
  const auto& t = chip_.tensor;
  // Each x4 word holds 4 values along K: K = 4 x partitions at the BF16 pass time, which is
  // where MX's 4x throughput comes from (ARCH-v4).
  const double k = 4.0 * mm.stationary.partitions;
  const double m = static_cast<double>(mm.stationary.free_elements());
  const double n = static_cast<double>(mm.moving.free_elements());
  bool reused = false;
  ComputeCost c = tensor_pass(t, m, n, 4.0 / t.rate_mx, 1.0, mm.stationary, state, reused);
  c.flops = 2.0 * k * m * n;
  c.bytes_read = (reused ? 0 : bytes_of(mm.stationary) + bytes_of(mm.stationary_scale)) +
                 bytes_of(mm.moving) + bytes_of(mm.moving_scale);
  c.bytes_written = bytes_of(mm.dst);
  return c;
}

ComputeCost CostModel::elementwise_cost(const isa::Instruction& inst) const {
  const Engine engine = inst.queue.engine;
  ComputeCost c;
  std::visit(
      [&](const auto& op) {
        const Footprint f = footprint_of(op);
        c.bytes_read = f.bytes_read;
        c.bytes_written = f.bytes_written;
        const double n = static_cast<double>(f.free_elements);
        if (engine == Engine::kGpSimd) {
          const auto& g = chip_.gpsimd;
          // 8 cores x 512 bits, each core serving 16 partitions: 32 bits per partition per
          // cycle, i.e. one element per partition per cycle for <= 32-bit types (ARCH-v4).
          const double lane_bytes = g.lane_bits / 8.0 / g.partitions_per_core;
          double work = 0.0;
          if constexpr (std::is_same_v<std::decay_t<decltype(op)>, isa::Topk>) {
            // 4 n + K GpSimd cycles per partition (ISA, nisa.topk's estimated cost); the
            // groups of 16 partitions run on their own cores in parallel.
            c.cycles = 4.0 * op.n + static_cast<double>(op.val_dst.free_elements());
            c.bound = Bound::kElements;
            c.occupancy_ns = c.cycles / g.clock_ghz;
            c.latency_ns = c.occupancy_ns;
            return;
          }
          if constexpr (std::is_same_v<std::decay_t<decltype(op)>, isa::CustomOp>) {
            if (op.cost_cycles > 0) {
              c.cycles = static_cast<double>(op.cost_cycles);
              c.bound = Bound::kUserCost;
            }
            // Estimate: every byte touched, spread over the 8 x 512-bit lanes.
            work =
                static_cast<double>(f.bytes_read + f.bytes_written) / (g.cores * g.lane_bits / 8.0);
          } else {
            work = n * std::max(1.0, static_cast<double>(f.all_16bit ? 2 : 4) / lane_bytes);
          }
          if (c.bound != Bound::kUserCost) {
            c.cycles = g.startup_cycles + work;
            c.bound = work > g.startup_cycles ? Bound::kElements : Bound::kGpSimdStartup;
          }
          c.occupancy_ns = c.cycles / g.clock_ghz;
          c.latency_ns = c.occupancy_ns;
          return;
        }
        const auto& e = engine_config(chip_, engine);
        const double min_ii = e.min_initiation_interval;
        const Passes p = passes_of(op, min_ii);
        // Datapath width in elements per lane per cycle: the wide (16-bit perf mode) path
        // needs 16-bit data, SBUF on both sides and contiguous innermost access.
        const bool wide = p.may_use_wide_path && f.all_16bit && !f.touches_psum && f.all_contiguous;
        const double width = (wide ? e.elems_per_cycle_16bit : e.elems_per_cycle_other) / e.lanes;
        const double work = n * p.passes / std::max(width, 1e-9);
        c.cycles = std::max(min_ii, work) + p.extra_cycles;
        c.bound = work >= min_ii ? Bound::kElements : Bound::kMinInitiationInterval;
        c.occupancy_ns = c.cycles / e.clock_ghz;
        // Results are visible the static instruction overhead (ARCH-v2: ~100 cycles) after
        // the stream ends; back-to-back independent instructions overlap it, a dependent one
        // waits for it. Each SBUF/PSUM access request costs ~60 cycles (ARCH-v2), which the
        // engine hides behind its data stream ("compute engines can typically hide some of
        // this latency"): it adds only when the stream is shorter than the requests, as for
        // the perf guide's one-element chain (264 cycles on NC-v2) but not for the Mamba
        // tutorial's 512-element VectorE chain (docs/validation.md).
        const double accesses = f.on_chip_accesses;
        const double access_cycles = min_ii + p.extra_cycles + accesses * e.access_overhead_cycles;
        c.latency_ns = (std::max(c.cycles, access_cycles) + e.fixed_overhead_cycles) / e.clock_ghz;
      },
      inst.op);
  return c;
}

ComputeCost CostModel::tensor_transpose_cost(const isa::NcTranspose& tr,
                                             TensorEngineState& state) const {
  // A transpose is a matmul of the data (as stationary) against an identity (moving):
  // max(P, min(64, F)) cycles back to back (OLD-ISA), 2x faster for fp32 from v3.
  const auto& t = chip_.tensor;
  const double p = tr.data.partitions;
  const double f = static_cast<double>(tr.data.free_elements());
  ComputeCost c;
  c.cycles = std::max(p, std::min(t.min_initiation_interval.value, f));
  if (tr.data.dtype == DType::kFloat32) c.cycles *= t.bit_accurate_transpose ? 2.0 : 4.0;
  c.bound = Bound::kMovingStream;
  c.occupancy_ns = c.cycles / t.clock_ghz;
  c.latency_ns = (c.cycles + t.fixed_overhead_cycles) / t.clock_ghz;
  c.bytes_read = bytes_of(tr.data);
  c.bytes_written = bytes_of(tr.dst);
  state.has_stationary = false;  // the data was loaded as the stationary
  return c;
}

ComputeCost CostModel::compute(const isa::Instruction& inst, TensorEngineState& state) const {
  switch (isa::op_class(inst.op)) {
    case isa::OpClass::kMatmul:
      if (const auto* mm = std::get_if<isa::NcMatmul>(&inst.op)) return matmul_cost(*mm, state);
      return matmul_mx_cost(std::get<isa::NcMatmulMx>(inst.op), state);
    case isa::OpClass::kSequencer:
    case isa::OpClass::kControl:
      return {};  // no datapath time
    case isa::OpClass::kTranspose:
      if (inst.queue.engine == Engine::kTensor)
        return tensor_transpose_cost(std::get<isa::NcTranspose>(inst.op), state);
      break;  // on the vector engine: an elementwise move
    case isa::OpClass::kElementwise:
    case isa::OpClass::kDmaTransfer:
      break;
  }
  if (inst.queue.engine == Engine::kSync) return {};  // sequencer-only queue
  return elementwise_cost(inst);
}

DmaPlan CostModel::plan_dma(const isa::Instruction& inst) const {
  DmaPlan plan;
  plan_dma(inst, plan);
  return plan;
}

void CostModel::plan_dma(const isa::Instruction& inst, DmaPlan& plan, bool shares) const {
  const auto& d = chip_.dma;
  plan.engines.clear();
  plan.engines_used = 0;
  plan.min_contiguous_bytes = 0;
  plan.total_bytes = 0;
  plan.fixed_latency_ns = d.fixed_latency_ns;
  plan.engine_bytes_per_ns = d.engine_bandwidth_gbps;
  plan.per_descriptor_ns = d.per_descriptor_ns;

  const std::optional<isa::DmaSides> sides = isa::dma_sides(inst.op);
  if (!sides) return;
  const AccessPattern* dst = sides->dst;
  const AccessPattern* src = sides->src;
  const auto* indirect_op = std::get_if<isa::DmaIndirect>(&inst.op);
  if (std::holds_alternative<isa::DmaTranspose>(inst.op) ||
      (indirect_op != nullptr && indirect_op->transpose)) {
    // DMA transpose reaches up to 90% of copy throughput from HBM, 50% SBUF->SBUF (ARCH-v3).
    plan.engine_bytes_per_ns *= src->memory == Memory::kHbm ? 0.9 : 0.5;
  }

  // Bytes moved: the wider side (casts go through fp32 inside the engine). A gather or
  // scatter moves only the indexed rows: as many as the non-indexed side holds.
  std::uint64_t bytes = std::max(bytes_of(*src), bytes_of(*dst));
  std::uint64_t elements = src->total_elements();
  if (const auto* g = std::get_if<isa::DmaIndirect>(&inst.op)) {
    const AccessPattern& moved = g->mode == isa::IndirectMode::kGather ? *dst : *src;
    bytes = bytes_of(moved);
    elements = moved.total_elements();
  }
  plan.total_bytes = bytes;
  const std::uint64_t run_elems = std::max<std::uint64_t>(
      1, std::min(contiguous_run_elements(*src), contiguous_run_elements(*dst)));
  // A contiguous buffer never spans two partitions of SBUF; in a gather or scatter every
  // indexed row is its own buffer too (consecutive rows of the table are not consecutive
  // in the transfer), so no run is longer than a row on either side.
  const bool indirect = std::holds_alternative<isa::DmaIndirect>(inst.op);
  std::uint64_t run = run_elems;
  for (const AccessPattern* ap : {src, dst}) {
    if (ap->memory != Memory::kHbm || indirect)
      run = std::min<std::uint64_t>(run, ap->free_elements());
  }
  std::uint64_t descriptors_total = (elements + run - 1) / run;
  plan.min_contiguous_bytes =
      static_cast<double>(run * std::max(src->element_bytes(), dst->element_bytes()));

  // Split over engines by partitions of the on-chip side, 8 partitions per engine
  // (ARCH-v2, dma-overview); HBM<->HBM splits evenly over all engines.
  const std::uint32_t engines_per_core = static_cast<std::uint32_t>(d.engines_per_core.value);
  std::uint32_t partitions = 0;
  for (const AccessPattern* ap : {src, dst}) {
    if (ap->memory != Memory::kHbm) partitions = std::max(partitions, ap->partitions);
  }
  const std::uint32_t used =
      partitions > 0 ? std::min(engines_per_core, (partitions + kPartitionsPerDmaEngine - 1) /
                                                      kPartitionsPerDmaEngine)
                     : engines_per_core;
  double hbm_sides = (src->memory == Memory::kHbm) + (dst->memory == Memory::kHbm);
  if (const auto* compute = std::get_if<isa::DmaCompute>(&inst.op)) {
    // Estimate: the engine streams each of the n sources as a copy would (n times the bytes
    // and descriptors of srcs[0] -> dst). Its HBM traffic is one pass of each operand in
    // HBM, n sources and dst: in_hbm passes over the n streams' bytes.
    const std::uint64_t n = std::max<std::size_t>(compute->srcs.size(), 1);
    std::uint64_t in_hbm = dst->memory == Memory::kHbm;
    for (const AccessPattern& s : compute->srcs) in_hbm += s.memory == Memory::kHbm;
    bytes *= n;
    plan.total_bytes = bytes;
    descriptors_total *= n;
    hbm_sides = static_cast<double>(in_hbm) / static_cast<double>(n);
  } else if (const auto* g = std::get_if<isa::DmaIndirect>(&inst.op);
             g != nullptr && g->accumulate == isa::DmaAccumulate::kAdd) {
    // A read-modify-write streams as a two-source dma_compute whose second source is dst.
    const std::uint64_t in_hbm = 2 * (dst->memory == Memory::kHbm) + (src->memory == Memory::kHbm);
    bytes *= 2;
    plan.total_bytes = bytes;
    descriptors_total *= 2;
    hbm_sides = static_cast<double>(in_hbm) / 2.0;
  }
  plan.descriptors = descriptors_total;
  plan.hbm_sides = hbm_sides;
  plan.engines_used = used;
  if (!shares) return;
  const DmaSplit split(bytes, descriptors_total, hbm_sides, used);
  for (std::uint32_t e = 0; e < used; ++e) plan.engines.push_back(split.share(e));
}

}  // namespace trnsim::timing
