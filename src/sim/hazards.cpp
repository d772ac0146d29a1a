#include "sim/hazards.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <limits>
#include <type_traits>

#include "isa/footprint.h"
#include "sim/describe.h"

namespace trnsim::sim {

void join_into(VectorClock& clock, const VectorClock& other) {
  for (std::size_t q = 0; q < clock.size() && q < other.size(); ++q)
    clock[q] = std::max(clock[q], other[q]);
}

namespace {

HazardKind classify(bool earlier_writes, bool later_writes) {
  if (earlier_writes && later_writes) return HazardKind::kWriteAfterWrite;
  return earlier_writes ? HazardKind::kReadAfterWrite : HazardKind::kWriteAfterRead;
}

}  // namespace

util::ByteSet operand_bytes(const isa::AccessPattern& ap, const Footprint& f) {
  if (f.empty()) return util::ByteSet::interval(f.byte_lo, f.byte_lo);
  return isa::exact_byte_set(ap, f.byte_lo, f.byte_hi);
}

std::vector<Access> instruction_accesses(const isa::Instruction& inst) {
  std::vector<Access> accesses;
  isa::for_each_operand(inst.op, [&](const isa::AccessPattern& ap, const isa::OperandRef& operand) {
    Footprint where = footprint(ap);
    if (where.empty()) return;
    accesses.push_back({where, operand_bytes(ap, where), operand.writes(), operand.label()});
  });
  return accesses;
}

std::string HazardDetector::describe(std::uint32_t core, std::size_t index) const {
  const HazardCore& c = cores_[core];
  std::string text = describe_instruction(c.program->instructions[index], index);
  return label_cores_ ? fmt::format("core {}: {}", c.physical, text) : text;
}

void HazardDetector::check(const Access& access, const Record& a, std::uint32_t core,
                           std::uint32_t queue, std::size_t index, const VectorClock& clock,
                           RunResult& out) {
  const auto key = [](std::uint32_t c, std::size_t i) {
    return (static_cast<std::uint64_t>(c) << 48) | static_cast<std::uint64_t>(i);
  };
  // The cheap tests first: most remembered accesses a new one meets are ordered before it.
  if (!(a.write || access.write) || !a.where.overlaps(access.where)) return;
  // `a` happened before the new instruction iff its queue's entry in our clock reaches it.
  if (a.queue == queue || clock[a.queue] >= a.seq) return;
  // SBUF and PSUM are per core: only HBM is shared between cores.
  if (a.core != core && access.where.memory != isa::Memory::kHbm) return;
  if (!util::overlaps(a.bytes, access.bytes)) return;  // interleaved, no common byte
  if (!reported_.emplace(key(a.core, a.index), key(core, index)).second) return;
  if (out.hazards.size() >= RunResult::kMaxHazards) {
    ++out.hazards_suppressed;
    return;
  }
  Hazard h;
  h.kind = classify(a.write, access.write);
  h.first = a.index;
  h.second = index;
  h.first_core = cores_[a.core].physical;
  h.second_core = cores_[core].physical;
  h.first_operand = a.operand;
  h.second_operand = access.operand;
  h.memory = access.where.memory;
  h.partition_lo = std::max(a.where.partition_lo, access.where.partition_lo);
  h.partition_hi = std::min(a.where.partition_hi, access.where.partition_hi);
  h.byte_lo = std::max(a.where.byte_lo, access.where.byte_lo);
  h.byte_hi = std::min(a.where.byte_hi, access.where.byte_hi);
  const std::string region =
      h.memory == isa::Memory::kHbm
          ? fmt::format("hbm bytes [{:#x}, {:#x})", h.byte_lo, h.byte_hi)
          : fmt::format("{} partitions [{}, {}) bytes [{}, {})", isa::memory_name(h.memory),
                        h.partition_lo, h.partition_hi, h.byte_lo, h.byte_hi);
  // Located at the later access, with a note at the earlier one.
  util::Diagnostic d;
  d.where = cores_[core].program->instructions[index].origin;
  d.message = fmt::format("{} hazard: {} '{}' and {} '{}' touch {} with no semaphore ordering them",
                          hazard_kind_name(h.kind), describe(a.core, a.index), a.operand,
                          describe(core, index), access.operand, region);
  d.notes.push_back(
      {cores_[a.core].program->instructions[a.index].origin,
       fmt::format("the earlier access: {} '{}'", describe(a.core, a.index), a.operand)});
  h.message = util::format(d);
  h.diagnostic = std::move(d);
  out.diagnostics.push_back(h.message);
  out.hazards.push_back(std::move(h));
}

void HazardDetector::record(const std::vector<Access>& accesses, std::uint32_t core,
                            std::uint32_t queue, std::uint32_t seq, std::size_t index,
                            const VectorClock& clock, RunResult& out) {
  for (const Access& access : accesses) {
    const Remembered& r = records_for(access.where.memory);
    const auto check_one = [&](const Record& a) {
      check(access, a, core, queue, index, clock, out);
    };
    if (!access.write) {
      r.writes.for_each_unordered_overlapping(access.where, queue, clock, check_one);
      continue;
    }
    // Against reads and writes, in the order they were recorded (the order of the reports).
    std::vector<const Record*> found;
    const auto collect = [&](const Record& a) { found.push_back(&a); };
    r.reads.for_each_unordered_overlapping(access.where, queue, clock, collect);
    const std::size_t reads = found.size();
    r.writes.for_each_unordered_overlapping(access.where, queue, clock, collect);
    std::inplace_merge(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(reads),
                       found.end(),
                       [](const Record* x, const Record* y) { return x->order < y->order; });
    for (const Record* a : found) check_one(*a);
  }

  // A remembered access `a` is subsumed by a new one `b` that covers it, happens after it
  // and is at least as strong (b writes, or neither writes): any future access racing with
  // `a` then races with `b` too (if it were ordered after b it would be after a), so the
  // report is not lost, and the history stays small for long programs.
  for (const Access& b : accesses) {
    Remembered& r = records_for(b.where.memory);
    // (erase_within tests first, on its keys, that b's rectangle contains a's and that a
    // is ordered before us.)
    const auto subsumed = [&](const Record& a) {
      return (a.core == core || b.where.memory == isa::Memory::kHbm) &&
             util::covers(b.bytes, a.bytes);
    };
    r.reads.erase_within(b.where, clock, subsumed);
    if (b.write) r.writes.erase_within(b.where, clock, subsumed);
  }
  for (const Access& b : accesses) {
    Remembered& r = records_for(b.where.memory);
    (b.write ? r.writes : r.reads)
        .push_back({b.where, b.bytes, b.write, core, queue, seq, index, b.operand, recorded_++});
  }
}

void HazardDetector::prune(const VectorClock& lower_bound) {
  for (auto& r : records_) {
    r.reads.erase_ordered(lower_bound);
    r.writes.erase_ordered(lower_bound);
  }
}

std::size_t HazardDetector::remembered() const {
  std::size_t n = 0;
  for (const auto& r : records_) n += r.reads.size() + r.writes.size();
  return n;
}

}  // namespace trnsim::sim
