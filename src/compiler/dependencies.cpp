// Pass 3: dependencies (docs/compiler.md, "Dependencies"): flow, anti and output edges from
// the physical footprint of every operand, exact for strided patterns.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>

#include "compiler/passes.h"
#include "isa/footprint.h"
#include "util/strided_overlap.h"

namespace trnsim::compiler::detail {

namespace {

// One access to memory in physical coordinates: a partition range (on chip) and the bytes
// inside each partition (in HBM: the absolute bytes, the partition dim an ordinary stride),
// exactly as a strided set (util/strided_overlap.h), with its bounding range [lo, hi).
struct Access {
  std::uint32_t inst = 0;
  std::uint32_t p_lo = 0, p_hi = 1;
  std::int64_t lo = 0, hi = 0;
  // An entry a reused tile inherited from a dead one, clipped to the tile's range: its bytes
  // are `bytes` inside [lo, hi).
  bool clipped = false;
  util::ByteSet bytes;
};

// The bytes of an operand: runs of one element at the points of its dims (and, in HBM, of its
// partition dim); the bounding range when the strides overflow.
util::ByteSet byte_set(const AccessPattern& ap) {
  const auto [lo, hi] = ap.byte_span();
  return isa::exact_byte_set(ap, lo, hi);
}

bool ranges_overlap(const Access& a, const Access& b) {
  return a.lo < b.hi && b.lo < a.hi && a.p_lo < b.p_hi && b.p_lo < a.p_hi;
}
// Exact: some byte of one partition is touched by both (an inherited entry's bytes are
// clipped to [lo, hi), and the query lies inside the tile, so the ranges' test covers that).
bool overlaps(const Access& a, const Access& b) {
  return ranges_overlap(a, b) && util::overlaps(a.bytes, b.bytes);
}
// True only if `outer` certainly touches every byte `inner` does (then `inner` can be
// forgotten: whatever conflicts with it conflicts with `outer`, which is ordered after it).
bool covers(const Access& outer, const Access& inner) {
  if (!(outer.lo <= inner.lo && inner.hi <= outer.hi && outer.p_lo <= inner.p_lo &&
        inner.p_hi <= outer.p_hi))
    return false;
  return inner.clipped ? util::covers(outer.bytes, util::ByteSet::interval(inner.lo, inner.hi))
                       : util::covers(outer.bytes, inner.bytes);
}

// The accesses to one storage that later accesses may still have to wait for, keyed by
// their first byte (max_len bounds the search window of an overlap query).
struct AccessSet {
  std::multimap<std::int64_t, Access> by_lo;
  std::int64_t max_len = 0;

  void add(const Access& a) {
    by_lo.emplace(a.lo, a);
    max_len = std::max(max_len, a.hi - a.lo);
  }
  template <class F>
  void for_overlapping(const Access& q, F&& f) const {
    auto it = by_lo.lower_bound(q.lo - max_len);
    for (; it != by_lo.end() && it->first < q.hi; ++it)
      if (overlaps(it->second, q)) f(it->second);
  }
  void prune_covered(const Access& w) {
    auto it = by_lo.lower_bound(w.lo);
    while (it != by_lo.end() && it->first < w.hi) {
      if (covers(w, it->second))
        it = by_lo.erase(it);
      else
        ++it;
    }
  }
};

struct AccessLog {
  AccessSet reads, writes;
};

struct Footprint {
  StorageId storage = 0;
  Access access;
  bool reads = false, writes = false;
};

std::vector<Footprint> footprints(const isa::Instruction& phys, const isa::Instruction& virt,
                                  std::uint32_t index) {
  std::vector<Footprint> out;
  isa::for_each_operand(virt.op, [&](const AccessPattern& ap, const isa::OperandRef& operand) {
    Footprint f;
    f.storage = kernel::storage_of_offset(ap.offset);
    f.reads = operand.reads();
    f.writes = operand.writes();
    out.push_back(f);
  });
  std::size_t k = 0;
  isa::for_each_operand(phys.op, [&](const AccessPattern& ap, const isa::OperandRef&) {
    Footprint& f = out[k++];
    const auto [lo, hi] = ap.byte_span();
    f.access.inst = index;
    f.access.lo = lo;
    f.access.hi = hi;
    f.access.bytes = byte_set(ap);
    if (ap.memory != isa::Memory::kHbm) {
      f.access.p_lo = ap.start_partition;
      f.access.p_hi = ap.start_partition + ap.partitions;
    }
  });
  return out;
}

}  // namespace

std::vector<std::vector<std::uint32_t>> dependencies(
    const KernelIr& ir, const std::vector<isa::Instruction>& phys, const Allocation& alloc,
    std::vector<std::vector<std::uint32_t>>& flow) {
  const std::size_t n = ir.instructions.size();
  std::vector<std::vector<std::uint32_t>> preds(n);
  flow.assign(n, {});
  std::vector<AccessLog> logs(ir.storages.size());
  std::vector<char> seeded(ir.storages.size(), 0);
  std::optional<std::uint32_t> last_barrier;
  std::size_t since_barrier = 0;  // first instruction after the last barrier
  // The last instruction to use each engine-held state (random generators, accumulators):
  // uses of one state stay in program order, so the random stream and a carried
  // accumulator do not depend on how the scheduler orders the engines' queues.
  std::array<std::optional<std::uint32_t>, isa::kNumEngineStates> last_state_user;
  // The last sendrecv or collective: cores pair their k-th call with the peer's k-th, and a call
  // holds its DMA queue until its peer comes, so every core starts its calls in program order
  // (calls on different pipes too: two cores putting them on a queue in different orders
  // would wait for each other).
  std::optional<std::uint32_t> last_meeting;
  for (std::size_t i = 0; i < n; ++i) {
    const auto idx = static_cast<std::uint32_t>(i);
    std::vector<std::uint32_t>& deps = preds[i];
    const bool is_barrier = std::holds_alternative<isa::CoreBarrier>(phys[i].op);
    if (is_barrier) {
      for (std::size_t j = since_barrier; j < i; ++j) deps.push_back(static_cast<std::uint32_t>(j));
    } else if (last_barrier) {
      deps.push_back(*last_barrier);
    }
    if (const isa::EngineState state = isa::engine_state(phys[i].op);
        state != isa::EngineState::kNone) {
      auto& last = last_state_user.at(static_cast<std::size_t>(state));
      if (last) deps.push_back(*last);
      last = idx;
    }
    if (isa::meets_other_cores(phys[i].op)) {
      if (last_meeting) deps.push_back(*last_meeting);
      last_meeting = idx;
    }
    for (std::uint32_t p : ir.instructions[i].after) deps.push_back(p);  // NKI depends_on
    const std::vector<Footprint> fps = footprints(phys[i], ir.instructions[i].inst, idx);
    for (const Footprint& f : fps) {
      const Storage& s = ir.storages[f.storage];
      if (kernel::is_on_chip(s.buffer) && !seeded[f.storage]) {
        // First use of a tile: it must wait for the dead tiles whose memory it reuses.
        seeded[f.storage] = 1;
        const TilePlace& p = alloc.places[f.storage];
        Access range{idx, 0, std::numeric_limits<std::uint32_t>::max(),
                     static_cast<std::int64_t>(p.offset),
                     static_cast<std::int64_t>(p.offset + p.size)};
        range.bytes = util::ByteSet::interval(range.lo, range.hi);
        // Entries are clipped to the new tile's range: only that part can matter to it, and
        // its first full write then prunes them all.
        auto clip = [&](Access a) {
          a.clipped |= a.lo < range.lo || range.hi < a.hi;
          a.lo = std::max(a.lo, range.lo);
          a.hi = std::min(a.hi, range.hi);
          return a;
        };
        for (StorageId d : p.inherits) {
          logs[d].reads.for_overlapping(
              range, [&](const Access& a) { logs[f.storage].reads.add(clip(a)); });
          logs[d].writes.for_overlapping(
              range, [&](const Access& a) { logs[f.storage].writes.add(clip(a)); });
        }
      }
      AccessLog& log = logs[f.storage];
      auto add = [&](const Access& a) {
        if (a.inst != idx) deps.push_back(a.inst);
      };
      if (f.reads) {
        log.writes.for_overlapping(f.access, [&](const Access& a) {
          if (a.inst != idx) {
            deps.push_back(a.inst);
            flow[i].push_back(a.inst);
          }
        });
      } else if (f.writes) {
        log.writes.for_overlapping(f.access, add);
      }
      if (f.writes) log.reads.for_overlapping(f.access, add);
    }
    for (const Footprint& f : fps) {
      AccessLog& log = logs[f.storage];
      if (f.writes) {
        log.reads.prune_covered(f.access);
        log.writes.prune_covered(f.access);
        log.writes.add(f.access);
      } else {
        log.reads.add(f.access);
      }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    std::sort(flow[i].begin(), flow[i].end());
    flow[i].erase(std::unique(flow[i].begin(), flow[i].end()), flow[i].end());
    if (is_barrier) {
      last_barrier = idx;
      since_barrier = i + 1;
    }
  }
  return preds;
}

}  // namespace trnsim::compiler::detail
