// The timing model on the event loop (docs/timing-model.md).
#include "sim/timing_model.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "util/huge_pages.h"

namespace trnsim::sim {
namespace {

using isa::Engine;
using isa::Memory;

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

std::string queue_label(const isa::QueueId& q) {
  if (q.engine == Engine::kDma) return fmt::format("dma.{}", q.index);
  return std::string(isa::engine_name(q.engine));
}

double percent(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// HBM bandwidth timeline

namespace {
// Most HBM bytes/ns the DMA engines of `cores` cores can ask for: every engine at its rate,
// each byte crossing HBM twice (HBM -> HBM copies).
double max_hbm_demand(const arch::ChipConfig& chip, int cores) {
  return 2.0 * cores * chip.dma.engines_per_core * chip.dma.engine_bandwidth_gbps;
}
}  // namespace

HbmBandwidth::HbmBandwidth(double bytes_per_ns, double max_demand_bytes_per_ns)
    : capacity_(bytes_per_ns), limited_(max_demand_bytes_per_ns > bytes_per_ns) {
  steps_.push_back({0.0, 0.0});
}

std::size_t HbmBandwidth::split_at(Duration time) {
  // The step containing `time`: the last one starting at or before it.
  auto it = std::upper_bound(steps_.begin(), steps_.end(), time,
                             [](Duration t, const Step& s) { return t < s.time; });
  if (it == steps_.begin()) {  // before the first step (forgotten past): nothing reserved
    steps_.insert(it, {time, 0.0});
    return 0;
  }
  const auto i = static_cast<std::size_t>(it - steps_.begin()) - 1;
  if (steps_[i].time == time) return i;
  steps_.insert(it, {time, steps_[i].used});
  return i + 1;
}

Duration HbmBandwidth::reserve_limited(Duration begin, double bytes, double max_rate,
                                       double sides) {
  // Below this much free bandwidth an interval counts as full (keeps the timeline small).
  const double epsilon = 1e-9 * capacity_;
  std::size_t i = split_at(begin);
  double remaining = bytes;
  Duration t = begin;
  for (;; ++i) {
    const bool last = i + 1 == steps_.size();
    const Duration end = last ? std::numeric_limits<double>::infinity() : steps_[i + 1].time;
    const double free = capacity_ - steps_[i].used;
    const double rate = free > epsilon ? std::min(max_rate, free / sides) : 0.0;
    if (rate > 0.0) {
      const Duration done = t + remaining / rate;
      if (done <= end) {
        if (done < end) {
          // The rest of this interval keeps its old use.
          steps_.insert(steps_.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                        {done, steps_[i].used});
        }
        steps_[i].used += rate * sides;
        return done;
      }
      remaining -= rate * (end - t);
      steps_[i].used += rate * sides;
    }
    t = end;
  }
}

void HbmBandwidth::forget_before(Duration time) {
  // Keep the step containing `time` and everything after it.
  auto it = std::upper_bound(steps_.begin(), steps_.end(), time,
                             [](Duration t, const Step& s) { return t < s.time; });
  if (it - steps_.begin() > 1) steps_.erase(steps_.begin(), std::prev(it));
}

// ---------------------------------------------------------------------------------------
// One core

TimingModel::TimingModel(const arch::ChipConfig& chip, TimingOptions options)
    : TimingModel(
          chip, options,
          std::make_shared<HbmBandwidth>(chip.hbm.bandwidth_gbps, max_hbm_demand(chip, 1))) {}

TimingModel::TimingModel(const arch::ChipConfig& chip, TimingOptions options,
                         std::shared_ptr<HbmBandwidth> hbm)
    : formulas_(chip),
      hbm_(std::move(hbm)),
      power_ramp_(options.power_ramp.value_or(chip.tensor.power_ramp)) {
  const auto engines = static_cast<std::uint32_t>(chip.dma.engines_per_core.value);
  dma_engine_free_at_.assign(engines, 0.0);
  dma_engine_busy_ns_.assign(engines, 0.0);
  dma_engine_bytes_.assign(engines, 0);
}

double TimingModel::hbm_bytes_per_ns_per_engine() const {
  const arch::ChipConfig& chip = formulas_.chip();
  return chip.hbm.bandwidth_gbps / chip.cores_per_chip / chip.dma.engines_per_core;
}

InstructionCost TimingModel::tensor_cost(const isa::Instruction& inst, double flops,
                                         std::size_t mode, double occupancy, double latency,
                                         Duration start) {
  (void)inst;
  if (flops > 0) flops_by_mode_[mode] += flops;
  if (occupancy <= 0) return {occupancy, latency};
  const Duration ramped = power_ramp_ ? ramped_duration(start, occupancy) : occupancy;
  throttled_ns_ += ramped - occupancy;
  // The pipeline drain after the last cycle (latency - occupancy) is not throttled.
  tensor_busy_until_ = start + ramped;
  return {ramped, ramped + (latency - occupancy)};
}

InstructionCost TimingModel::cost(const isa::Instruction& inst, std::size_t index, Duration start) {
  if (index < prepared_.size()) {
    // Prepared: the instruction itself is not read again.
    const Prepared& p = prepared_[index];
    const ChunkTables& tables = chunks_[index >> kPrepareChunkShift];
    switch (p.kind) {
      case Kind::kDma:
        return dma_cost(tables.dma_jobs.values[p.cost], start);
      case Kind::kMatmul: {
        const PreparedCost& c = tables.costs.values[p.cost];
        const std::uint32_t stationary = tables.stationary_ids[p.stationary];
        const bool reused = loaded_stationary_ == stationary;
        loaded_stationary_ = stationary;
        return tensor_cost(inst, c.flops, p.mode, reused ? c.occupancy : c.load_occupancy,
                           reused ? c.latency : c.load_latency, start);
      }
      case Kind::kTensorTranspose: {
        const PreparedCost& c = tables.costs.values[p.cost];
        loaded_stationary_ = 0;  // the data was loaded as the stationary
        return tensor_cost(inst, 0, 0, c.occupancy, c.latency, start);
      }
      case Kind::kFixed: {
        const PreparedCost& c = tables.costs.values[p.cost];
        if (p.tensor_queue) return tensor_cost(inst, 0, 0, c.occupancy, c.latency, start);
        return {c.occupancy, c.latency};
      }
    }
  }
  if (isa::is_dma_transfer(inst.op)) return dma_cost(dma_job(inst, plan_), start);
  // In a prepared run, only resolved copies (a loop's register-relative operands) come here,
  // and tensor_state_ knows only the stationary the last of them loaded: if a prepared
  // matmul ran since, the array holds another one.
  const bool tensor = inst.queue.engine == Engine::kTensor;
  if (tensor && !prepared_.empty()) {
    if (loaded_stationary_ != kResolvedStationary) tensor_state_ = {};
    loaded_stationary_ = kResolvedStationary;
  }
  const timing::ComputeCost c = formulas_.compute(inst, tensor_state_);
  if (tensor)
    return tensor_cost(inst, c.flops, tensor_mode(inst), c.occupancy_ns, c.latency_ns, start);
  return {c.occupancy_ns, c.latency_ns};
}

void TimingModel::begin_program(std::size_t instructions) {
  util::assign_huge(prepared_, instructions);
  chunks_.clear();
  chunks_.resize((instructions + kPrepareChunk - 1) / kPrepareChunk);
  stationaries_ = {};
  loaded_stationary_ = 0;
}

namespace {
// FNV-1a over the 8-byte words of a record without padding. Equal records have equal bytes
// (up to -0.0 == 0.0, which at worst interns the same cost twice).
template <class T>
std::uint64_t hash_words(const T& value) {
  static_assert(sizeof(T) % sizeof(std::uint64_t) == 0 && std::is_trivially_copyable_v<T>);
  std::array<std::uint64_t, sizeof(T) / sizeof(std::uint64_t)> words;
  std::memcpy(words.data(), &value, sizeof(T));
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const std::uint64_t w : words) h = (h ^ w) * 0x100000001b3ull;
  return h;
}
}  // namespace

template <class T, class Hash>
std::uint32_t TimingModel::intern(InternTable<T>& table, const T& value, Hash hash) {
  // Programs repeat a few shapes over and over: try the ones found last first.
  for (const std::uint32_t id : table.recent)
    if (id < table.values.size() && table.values[id] == value) return id;
  const auto remember = [&](std::uint32_t id) {
    table.recent[table.oldest] = id;
    table.oldest = (table.oldest + 1) % static_cast<std::uint32_t>(table.recent.size());
    return id;
  };
  if (2 * (table.values.size() + 1) > table.slots.size()) {
    // Grow (and rehash) so that the table stays at most half full.
    table.slots.assign(std::max<std::size_t>(64, 2 * table.slots.size()), 0);
    const std::size_t mask = table.slots.size() - 1;
    for (std::uint32_t id = 0; id < table.values.size(); ++id) {
      std::size_t i = hash(table.values[id]) & mask;
      while (table.slots[i] != 0) i = (i + 1) & mask;
      table.slots[i] = id + 1;
    }
  }
  const std::size_t mask = table.slots.size() - 1;
  std::size_t i = hash(value) & mask;
  for (; table.slots[i] != 0; i = (i + 1) & mask)
    if (table.values[table.slots[i] - 1] == value) return remember(table.slots[i] - 1);
  const auto id = static_cast<std::uint32_t>(table.values.size());
  table.values.push_back(value);
  table.slots[i] = id + 1;
  return remember(id);
}

std::uint32_t TimingModel::intern_stationary(InternTable<isa::AccessPattern>& table,
                                             const isa::AccessPattern& ap) {
  return intern(table, ap, [](const isa::AccessPattern& x) {
    // A coarse hash of fields operator== always compares: equal operands hash
    // equally.
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const std::uint64_t v :
         {static_cast<std::uint64_t>(x.memory), static_cast<std::uint64_t>(x.dtype), x.offset,
          static_cast<std::uint64_t>(x.start_partition), static_cast<std::uint64_t>(x.partitions)})
      h = (h ^ v) * 0x100000001b3ull;
    return h;
  });
}

namespace {

// Equal up to where the operand starts in its memory (AccessPattern::offset): shape,
// strides, dtype, memory and partitions compare. Other members compare with ==.
bool equal_but_offset(const isa::AccessPattern& a, const isa::AccessPattern& b) {
  if (a.memory != b.memory || a.dtype != b.dtype || a.start_partition != b.start_partition ||
      a.partitions != b.partitions || a.partition_step != b.partition_step ||
      a.num_dims != b.num_dims)
    return false;
  for (std::size_t d = 0; d < a.num_dims && d < a.dims.size(); ++d)
    if (!(a.dims[d] == b.dims[d])) return false;
  return true;
}
bool equal_but_offset(const std::optional<isa::AccessPattern>& a,
                      const std::optional<isa::AccessPattern>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || equal_but_offset(*a, *b);
}
bool equal_but_offset(const isa::ScalarOperand& a, const isa::ScalarOperand& b) {
  const auto* ap = std::get_if<isa::AccessPattern>(&a);
  const auto* bp = std::get_if<isa::AccessPattern>(&b);
  if (ap != nullptr && bp != nullptr) return equal_but_offset(*ap, *bp);
  return a == b;
}
template <class T>
bool equal_but_offset(const T& a, const T& b) {
  return a == b;
}

// True when two operations differ at most in their operands' offsets. No cost formula reads
// an offset (src/timing uses shapes, strides, dtypes, memories and partitions; the first DMA
// engine comes from the start partition), so such operations on one engine cost the same.
// Only trivially copyable operations are compared (the others hold names and lists).
bool same_cost_shape(const isa::Operation& a, const isa::Operation& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& op) {
        using Op = std::decay_t<decltype(op)>;
        if constexpr (!std::is_trivially_copyable_v<Op>) {
          return false;
        } else {
          // fields() lists every member (the assembly round trip relies on it) in a fixed
          // order: walk the other operation's first, then compare member by member.
          const Op& other = std::get<Op>(b);
          std::array<const void*, 32> theirs{};
          std::size_t n = 0;
          isa::for_each_field(other, [&](std::string_view, const auto& member, isa::Role) {
            if (n < theirs.size()) theirs[n] = &member;
            ++n;
          });
          if (n > theirs.size()) return false;
          bool same = true;
          std::size_t i = 0;
          isa::for_each_field(op, [&](std::string_view, const auto& member, isa::Role) {
            using M = std::decay_t<decltype(member)>;
            if (same) same = equal_but_offset(member, *static_cast<const M*>(theirs[i]));
            ++i;
          });
          return same;
        }
      },
      a);
}

}  // namespace

void TimingModel::prepare(const isa::Instruction& inst, std::size_t index) {
  if (index >= prepared_.size()) return;
  Prepared& p = prepared_[index];
  ChunkTables& tables = chunks_[index >> kPrepareChunkShift];
  // Kernels repeat a few operation shapes at moving addresses: an instruction shaped like
  // one prepared recently in this chunk takes its record (the matmul's stationary operand,
  // which is compared with its address, is interned anew).
  for (const RecentShape& r : tables.recent_shapes) {
    if (r.inst == nullptr || r.inst->queue.engine != inst.queue.engine ||
        !same_cost_shape(r.inst->op, inst.op))
      continue;
    p = r.prepared;
    if (p.kind == Kind::kMatmul)
      p.stationary = intern_stationary(tables.stationaries, matmul_stationary(inst));
    return;
  }
  prepare_anew(inst, p, tables);
  tables.recent_shapes[tables.oldest_shape] = {&inst, p};
  tables.oldest_shape =
      (tables.oldest_shape + 1) % static_cast<std::uint32_t>(tables.recent_shapes.size());
}

const isa::AccessPattern& TimingModel::matmul_stationary(const isa::Instruction& inst) {
  if (const auto* mm = std::get_if<isa::NcMatmul>(&inst.op)) return mm->stationary;
  return std::get<isa::NcMatmulMx>(inst.op).stationary;
}

void TimingModel::prepare_anew(const isa::Instruction& inst, Prepared& p, ChunkTables& tables) {
  p.tensor_queue = inst.queue.engine == Engine::kTensor;
  if (isa::is_dma_transfer(inst.op)) {
    p.kind = Kind::kDma;
    p.cost = intern(tables.dma_jobs, dma_job(inst, tables.plan), hash_words<DmaJob>);
    return;
  }
  const isa::OpClass op_class = isa::op_class(inst.op);
  PreparedCost cost;
  if (op_class == isa::OpClass::kMatmul) {
    // Both outcomes of the stationary check: loaded already, or to be loaded.
    p.kind = Kind::kMatmul;
    p.mode = static_cast<std::uint8_t>(tensor_mode(inst));
    p.stationary = intern_stationary(tables.stationaries, matmul_stationary(inst));
    timing::TensorEngineState state;
    const timing::ComputeCost load = formulas_.compute(inst, state);   // state: none loaded
    const timing::ComputeCost reuse = formulas_.compute(inst, state);  // now it is loaded
    cost.flops = load.flops;
    cost.load_occupancy = load.occupancy_ns;
    cost.load_latency = load.latency_ns;
    cost.occupancy = reuse.occupancy_ns;
    cost.latency = reuse.latency_ns;
  } else {
    timing::TensorEngineState state;
    const timing::ComputeCost c = formulas_.compute(inst, state);
    cost.occupancy = c.occupancy_ns;
    cost.latency = c.latency_ns;
    if (p.tensor_queue && op_class == isa::OpClass::kTranspose) p.kind = Kind::kTensorTranspose;
  }
  p.cost = intern(tables.costs, cost, hash_words<PreparedCost>);
}

void TimingModel::end_program() {
  // Program-wide stationary ids, in order of first use: chunk by chunk, each chunk's in its
  // order of first use (the same ids as one serial pass would give). 0 = none loaded.
  for (ChunkTables& tables : chunks_) {
    tables.stationary_ids.resize(tables.stationaries.values.size());
    for (std::size_t i = 0; i < tables.stationaries.values.size(); ++i)
      tables.stationary_ids[i] =
          intern_stationary(stationaries_, tables.stationaries.values[i]) + 1;
  }
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

// An engine's own time for a share: its bytes at its rate plus its descriptors' overhead.
double TimingModel::share_time_ns(const DmaJob& job, std::uint64_t bytes,
                                  std::uint64_t descriptors) {
  return static_cast<double>(bytes) / job.engine_bytes_per_ns +
         static_cast<double>(descriptors) * job.per_descriptor_ns;
}

TimingModel::DmaJob TimingModel::dma_job(const isa::Instruction& inst,
                                         timing::DmaPlan& plan) const {
  formulas_.plan_dma(inst, plan, /*shares=*/false);  // dma_cost splits from job.split
  DmaJob job;
  job.bytes = plan.total_bytes;
  job.descriptors = plan.descriptors;
  job.hbm_sides = plan.hbm_sides;
  job.engines_used = plan.engines_used;
  job.first_engine =
      timing::first_dma_engine(inst.op, static_cast<std::uint32_t>(dma_engine_free_at_.size()));
  job.fixed_latency_ns = plan.fixed_latency_ns;
  job.engine_bytes_per_ns = plan.engine_bytes_per_ns;
  job.per_descriptor_ns = plan.per_descriptor_ns;
  if (job.engines_used > 0) {
    job.split = timing::DmaSplit(job.bytes, job.descriptors, job.hbm_sides, job.engines_used);
    job.base_share_ns = share_time_ns(job, job.split.bytes_base, job.split.descriptors_base);
  }
  return job;
}

InstructionCost TimingModel::dma_cost(const DmaJob& job, Duration start) {
  const auto engines = static_cast<std::uint32_t>(dma_engine_free_at_.size());
  // When no combination of engines can exceed the HBM bandwidth (one core's engines never
  // can), a share takes its own time and the timeline is not consulted at all.
  const bool hbm_can_limit = hbm_->can_limit();
  // Every later transfer of any core begins at or after `start` (cost hooks are called in
  // order of start time), so older HBM reservations no longer matter.
  if (hbm_can_limit) hbm_->forget_before(start);
  // The descriptors are ready fixed_latency_ns after the queue starts the transfer; each
  // engine then moves its share after the shares queued on it before (all queues).
  const Duration ready = start + job.fixed_latency_ns;
  dma_bytes_ += job.bytes;
  if (job.engines_used == 0) return {job.fixed_latency_ns, job.fixed_latency_ns};
  // Share s runs on engine first_engine + s, wrapping around (both are below `engines`, so
  // one subtraction replaces a division).
  const auto engine_of = [&](std::uint32_t s) {
    const std::uint32_t e = job.first_engine + s;
    return e >= engines ? e - engines : e;
  };
  // Engines [first, first + count) take a share of `bytes` lasting `share_ns` from `begin`.
  // While every engine is free at the same time (the usual state when transfers use all of
  // them) the per-engine arrays are not written: the common time and the totals added to
  // every engine stand for them.
  const auto occupy = [&](std::uint32_t first, std::uint32_t count, Duration begin, double share_ns,
                          std::uint64_t bytes) {
    const Duration end = begin + share_ns;
    if (count == engines) {
      dma_engines_free_by_ = end;  // begin is at or after every engine's free time
      dma_all_engines_busy_ns_ += share_ns;
      dma_all_engines_bytes_ += bytes;
      dma_engines_uniform_ = true;
      return;
    }
    if (dma_engines_uniform_) {
      std::fill(dma_engine_free_at_.begin(), dma_engine_free_at_.end(), dma_engines_free_by_);
      dma_engines_uniform_ = false;
    }
    dma_engines_free_by_ = std::max(dma_engines_free_by_, end);
    const std::uint32_t before_wrap = std::min(count, engines - first);
    for (const auto& [from, n] :
         {std::pair{first, before_wrap}, std::pair{0u, count - before_wrap}}) {
      for (std::uint32_t e = from; e < from + n; ++e) {
        dma_engine_free_at_[e] = end;
        dma_engine_busy_ns_[e] += share_ns;
        dma_engine_bytes_[e] += bytes;
      }
    }
  };
  // Every share is the same when bytes and descriptors divide evenly (the usual case).
  const bool even = job.split.bytes_rem == 0 && job.split.descriptors_rem == 0;
  if (even && job.split.bytes_base > 0 && !hbm_can_limit &&
      (dma_engines_free_by_ <= ready || dma_engines_uniform_)) {
    // The usual case, and what the general loop below computes for it: every engine is
    // free by `ready`, or all are free at the same time, so every share begins at the same
    // time and takes the common share's own time.
    const Duration begin = std::max(ready, dma_engines_free_by_);
    occupy(job.first_engine, job.engines_used, begin, job.base_share_ns, job.split.bytes_base);
    hbm_bytes_ += job.engines_used * job.split.share(0).hbm_bytes;  // every share alike
    const Duration latency = begin + job.base_share_ns - start;
    return {latency, latency};
  }
  const auto free_at = [&](std::uint32_t e) {
    return dma_engines_uniform_ ? dma_engines_free_by_ : dma_engine_free_at_[e];
  };
  Duration done = ready;
  for (std::uint32_t s = 0; s < job.engines_used;) {
    const timing::DmaEngineWork work = job.split.share(s);
    if (work.bytes == 0) {
      ++s;
      continue;
    }
    const Duration begin = std::max(ready, free_at(engine_of(s)));
    // Shares identical to this one that begin at the same time on the next engines move
    // together: one HBM reservation at their combined rate (and an even split between them).
    std::uint32_t group = 1;
    while (s + group < job.engines_used) {
      if (!even) {
        const timing::DmaEngineWork next = job.split.share(s + group);
        if (next.bytes != work.bytes || next.descriptors != work.descriptors) break;
      }
      if (std::max(ready, free_at(engine_of(s + group))) != begin) break;
      ++group;
    }
    // The engine's own time: its bytes at its rate plus its descriptors' overhead; HBM may
    // stretch it when other engines (of any core) have reserved the bandwidth.
    const double bytes = static_cast<double>(work.bytes);
    const double own_ns =
        work.bytes == job.split.bytes_base && work.descriptors == job.split.descriptors_base
            ? job.base_share_ns
            : share_time_ns(job, work.bytes, work.descriptors);
    double share_ns = own_ns;
    if (hbm_can_limit && work.hbm_bytes > 0) {
      const double n = static_cast<double>(group);
      share_ns = hbm_->reserve(begin, n * bytes, n * bytes / own_ns, job.hbm_sides) - begin;
      // Rounding in the timeline must not show as contention.
      if (share_ns < own_ns * (1.0 + 1e-12)) share_ns = own_ns;
    }
    occupy(engine_of(s), group, begin, share_ns, work.bytes);
    hbm_bytes_ += group * work.hbm_bytes;
    if (share_ns > own_ns) hbm_limited_ns_ += static_cast<double>(group) * (share_ns - own_ns);
    done = std::max(done, begin + share_ns);
    s += group;
  }
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
  // Walk each queue's starts in order (program order for a straight-line program; the
  // recorded executions for one with control flow): the gap between the queue becoming free
  // and the next start is time stalled on semaphore waits.
  std::vector<Duration> free_at(r.queues.size(), 0.0);
  const auto account = [&](std::size_t i, const InstructionTime& t) {
    const isa::QueueId& id = program.instructions[i].queue;
    const auto it = std::find_if(r.queues.begin(), r.queues.end(),
                                 [&](const QueueTiming& q) { return q.queue == id; });
    if (it == r.queues.end()) return;
    const auto q = static_cast<std::size_t>(it - r.queues.begin());
    it->stalled_ns += std::max(0.0, t.start - free_at[q]);
    if (std::holds_alternative<isa::CoreBarrier>(program.instructions[i].op)) {
      // Waiting at a barrier for the other cores is stall time (the barrier itself is free).
      it->stalled_ns += t.occupied_until - t.start;
    } else {
      it->busy_ns += t.occupied_until - t.start;
    }
    free_at[q] = t.occupied_until;
  };
  if (!result.executions.empty()) {
    for (const Execution& e : result.executions)
      if (e.index < program.instructions.size()) account(e.index, e.time);
  } else {
    for (std::size_t i = 0; i < program.instructions.size() && i < result.times.size(); ++i)
      account(i, result.times[i]);
  }
  for (auto& q : r.queues) q.idle_ns = std::max(0.0, r.total_ns - q.busy_ns - q.stalled_ns);
  for (std::uint32_t e = 0; e < dma_engine_busy_ns_.size(); ++e)
    r.dma_engines.push_back({e, dma_engine_busy_ns_[e] + dma_all_engines_busy_ns_,
                             dma_engine_bytes_[e] + dma_all_engines_bytes_});

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
  r.hbm_chip_bytes_per_s = chip.hbm.bandwidth_gbps * 1e9;
  r.hbm_limited_ns = hbm_limited_ns_;
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

namespace {

nlohmann::json report_json(const TimingReport& r) {
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
              {"achieved_hbm_bytes_per_s", r.achieved_hbm_bytes_per_s},
              {"hbm_chip_bytes_per_s", r.hbm_chip_bytes_per_s},
              {"hbm_limited_ns", r.hbm_limited_ns}};
  return j;
}

}  // namespace

std::string timing_report_json(const TimingReport& r) {
  return report_json(r).dump(2);
}

// ---------------------------------------------------------------------------------------
// The chip

ChipTimingModel::ChipTimingModel(const arch::ChipConfig& chip, int cores, TimingOptions options)
    : chip_(chip) {
  if (cores < 1 || cores > chip.cores_per_chip)
    throw std::invalid_argument(fmt::format("ChipTimingModel: {} cores on a {}-core {}", cores,
                                            chip.cores_per_chip, chip.name));
  hbm_ = std::make_shared<HbmBandwidth>(chip.hbm.bandwidth_gbps, max_hbm_demand(chip, cores));
  for (int i = 0; i < cores; ++i)
    models_.push_back(std::make_unique<TimingModel>(chip, options, hbm_));
}

TimingModel& ChipTimingModel::timing(int i) {
  return *models_.at(static_cast<std::size_t>(i));
}
const TimingModel& ChipTimingModel::timing(int i) const {
  return *models_.at(static_cast<std::size_t>(i));
}

TimingReport ChipTimingModel::report(int core, const isa::Program& program,
                                     const RunResult& result) const {
  return timing(core).report(program, result);
}

ChipTimingReport ChipTimingModel::chip_report(std::span<const CoreProgram> launches,
                                              const MultiRunResult& result) const {
  // The launch ends when its last core does.
  return chip_report(launches, std::span<const RunResult>(result.cores));
}

ChipTimingReport ChipTimingModel::chip_report(std::span<const CoreProgram> launches,
                                              std::span<const RunResult> results) const {
  if (launches.size() != results.size())
    throw std::invalid_argument(
        fmt::format("chip_report: {} launches but {} results", launches.size(), results.size()));
  ChipTimingReport r;
  r.chip = chip_.name;
  for (const RunResult& run : results) r.total_ns = std::max(r.total_ns, run.end_time);
  std::array<double, kTensorModes.size()> flops_by_mode{};
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const auto slot = std::find_if(models_.begin(), models_.end(), [&](const auto& m) {
      return static_cast<const CostModel*>(m.get()) == launches[i].cost_model;
    });
    if (slot == models_.end())
      throw std::invalid_argument(
          fmt::format("chip_report: launch {} (core {}) was not timed by this ChipTimingModel", i,
                      launches[i].core));
    TimingReport core = (*slot)->report(*launches[i].program, results[i]);
    for (std::size_t m = 0; m < kTensorModes.size(); ++m)
      flops_by_mode[m] += (*slot)->flops_by_mode_[m];
    r.flops += core.flops;
    r.dma_bytes += core.dma_bytes;
    r.hbm_bytes += core.hbm_bytes;
    r.hbm_limited_ns += core.hbm_limited_ns;
    r.core_ids.push_back(launches[i].core);
    r.cores.push_back(std::move(core));
  }
  const auto top = std::max_element(flops_by_mode.begin(), flops_by_mode.end());
  r.tensor_mode = kTensorModes[static_cast<std::size_t>(top - flops_by_mode.begin())];
  const timing::CostModel formulas(chip_);
  const double per_core = formulas.tensor_peak_flops(r.tensor_mode);
  r.chip_peak_flops_per_s = per_core * chip_.cores_per_chip;
  r.launched_peak_flops_per_s = per_core * static_cast<double>(launches.size());
  if (const auto it = chip_.published_chip.find(r.tensor_mode); it != chip_.published_chip.end())
    r.published_chip_peak_flops_per_s = it->second.value * 1e12;
  r.hbm_bytes_per_s = chip_.hbm.bandwidth_gbps * 1e9;
  if (r.total_ns > 0) {
    const double seconds = r.total_ns * 1e-9;
    r.achieved_flops_per_s = r.flops / seconds;
    r.achieved_hbm_bytes_per_s = static_cast<double>(r.hbm_bytes) / seconds;
  }
  return r;
}

std::string format_chip_timing_report(const ChipTimingReport& r) {
  std::string out = fmt::format("chip timing ({}, {} core{}): total {:.3f} us\n", r.chip,
                                r.cores.size(), r.cores.size() == 1 ? "" : "s", r.total_ns * 1e-3);
  out += fmt::format(
      "  tensor: {:.2f} TFLOP/s achieved, {:.1f}% of the chip's {} peak {:.2f} TFLOP/s "
      "({:.1f}% of the launched cores' {:.2f})\n",
      r.achieved_flops_per_s * 1e-12, percent(r.achieved_flops_per_s, r.chip_peak_flops_per_s),
      r.tensor_mode, r.chip_peak_flops_per_s * 1e-12,
      percent(r.achieved_flops_per_s, r.launched_peak_flops_per_s),
      r.launched_peak_flops_per_s * 1e-12);
  out += fmt::format(
      "  hbm: {:.1f} GB/s, {:.1f}% of the chip's {:.1f} GB/s ({:.3f} us of DMA "
      "engine time lost to contention)\n",
      r.achieved_hbm_bytes_per_s * 1e-9, percent(r.achieved_hbm_bytes_per_s, r.hbm_bytes_per_s),
      r.hbm_bytes_per_s * 1e-9, r.hbm_limited_ns * 1e-3);
  for (std::size_t i = 0; i < r.cores.size(); ++i) {
    out += fmt::format("core {}: ", r.core_ids[i]);
    out += format_timing_report(r.cores[i]);
  }
  return out;
}

std::string chip_timing_report_json(const ChipTimingReport& r) {
  nlohmann::json j;
  j["chip"] = r.chip;
  j["total_ns"] = r.total_ns;
  j["cores"] = nlohmann::json::array();
  for (std::size_t i = 0; i < r.cores.size(); ++i) {
    nlohmann::json c = report_json(r.cores[i]);
    c["core"] = r.core_ids[i];
    j["cores"].push_back(std::move(c));
  }
  j["tensor"] = {{"flops", r.flops},
                 {"mode", r.tensor_mode},
                 {"chip_peak_flops_per_s", r.chip_peak_flops_per_s},
                 {"launched_peak_flops_per_s", r.launched_peak_flops_per_s},
                 {"published_chip_peak_flops_per_s", r.published_chip_peak_flops_per_s},
                 {"achieved_flops_per_s", r.achieved_flops_per_s}};
  j["hbm"] = {{"dma_bytes", r.dma_bytes},
              {"bytes", r.hbm_bytes},
              {"chip_bytes_per_s", r.hbm_bytes_per_s},
              {"achieved_bytes_per_s", r.achieved_hbm_bytes_per_s},
              {"limited_ns", r.hbm_limited_ns}};
  return j.dump(2);
}

}  // namespace trnsim::sim
