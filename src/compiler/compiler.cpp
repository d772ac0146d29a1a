// The kernel compiler's driver and its verify, allocate, dependency, synchronise and final
// validation passes (scheduling is in schedule.cpp). docs/compiler.md describes each pass.
#include "compiler/compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <map>
#include <stdexcept>

#include "compiler/passes.h"
#include "isa/footprint.h"
#include "isa/validate.h"
#include "util/strided_overlap.h"

namespace trnsim::compiler {

using detail::for_each_operand;
using isa::AccessPattern;
using isa::Role;
using kernel::Buffer;
using kernel::IrInstruction;
using kernel::KernelError;
using kernel::KernelIr;
using kernel::Storage;
using kernel::StorageId;

namespace {

constexpr std::uint64_t kHbmBase = std::uint64_t{1} << 20;  // first HBM placement (1 MiB)
constexpr std::uint64_t kHbmAlign = 64;
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

std::string operand_label(std::string_view field, int list_index) {
  if (list_index < 0) return std::string(field);
  return fmt::format("{}[{}]", field, list_index);
}

std::string line_of(const isa::Origin& o) {
  if (o.file.empty()) return "unknown line";
  return fmt::format("{}:{}", o.file, o.line);
}

std::string memory_upper(Buffer b) {
  return b == Buffer::kSbuf ? "SBUF" : "PSUM";
}

// ---------------------------------------------------------------------------------------
// Pass 1: verify

// Capacity (bytes per partition) of an on-chip buffer.
std::uint64_t capacity_of(Buffer b, const arch::ChipConfig& chip) {
  return b == Buffer::kSbuf ? static_cast<std::uint64_t>(chip.sbuf.bytes_per_partition.value)
                            : static_cast<std::uint64_t>(chip.psum.bytes_per_partition.value);
}

// Checks one operand against the storage it names; on success rebases `ap` to the storage's
// own coordinates (offset inside the storage), so that ISA checks see real sizes.
void check_operand(const KernelIr& ir, const IrInstruction& ir_inst, AccessPattern& ap,
                   const std::string& label) {
  const std::string op = std::string(isa::op_name(ir_inst.inst.op));
  auto fail = [&](const std::string& why) {
    throw KernelError(ir_inst.inst.origin, fmt::format("{}: operand '{}': {}", op, label, why));
  };
  if (ap.offset < kernel::storage_window(0)) fail("does not address any declared tensor or tile");
  const StorageId id = kernel::storage_of_offset(ap.offset);
  if (id >= ir.storages.size())
    fail(fmt::format("names storage {} but the kernel declared only {}", id, ir.storages.size()));
  const Storage& s = ir.storages[id];
  if (kernel::memory_of(s.buffer) != ap.memory)
    fail(fmt::format("'{}' lives in {} but the operand addresses {}", s.name,
                     kernel::buffer_name(s.buffer), isa::memory_name(ap.memory)));
  AccessPattern local = ap;
  local.offset = kernel::offset_in_storage(ap.offset);
  const auto [lo, hi] = local.byte_span();
  if (lo < 0 || hi > static_cast<std::int64_t>(s.bytes))
    fail(fmt::format("bytes [{}, {}) {} outside '{}' ({} bytes{}, declared at {})", lo, hi,
                     hi > lo ? "reach" : "lie", s.name, s.bytes,
                     kernel::is_on_chip(s.buffer) ? " per partition" : "", line_of(s.origin)));
  if (kernel::is_on_chip(s.buffer) &&
      std::uint64_t{ap.start_partition} + ap.partitions > s.partitions)
    fail(fmt::format("partitions [{}, {}) outside '{}' ({} partitions, declared at {})",
                     ap.start_partition, std::uint64_t{ap.start_partition} + ap.partitions, s.name,
                     s.partitions, line_of(s.origin)));
  ap = local;
}

std::string violations_text(const std::vector<isa::Violation>& vs) {
  std::string text;
  for (const isa::Violation& v : vs) {
    if (!text.empty()) text += "; ";
    text += v.operand.empty() ? v.message : fmt::format("operand '{}': {}", v.operand, v.message);
  }
  return text;
}

// Returns, per instruction, the engines (isa::engine_bit mask) that may run it on this chip.
std::vector<std::uint8_t> verify(const KernelIr& ir, const arch::ChipConfig& chip) {
  for (const Storage& s : ir.storages) {
    if (!kernel::is_on_chip(s.buffer)) continue;
    const std::uint64_t cap = capacity_of(s.buffer, chip);
    if (s.bytes > cap)
      throw KernelError(s.origin, fmt::format("{} tile '{}' needs {} bytes per partition, more "
                                              "than the {} bytes of a partition",
                                              memory_upper(s.buffer), s.name, s.bytes, cap));
    if (s.partitions == 0 || s.partitions > static_cast<std::uint32_t>(chip.sbuf.partitions.value))
      throw KernelError(s.origin, fmt::format("tile '{}' has {} partitions (1..{} allowed)", s.name,
                                              s.partitions, chip.sbuf.partitions.value));
  }
  std::vector<std::uint8_t> allowed(ir.instructions.size(), 0);
  for (std::size_t i = 0; i < ir.instructions.size(); ++i) {
    const IrInstruction& ir_inst = ir.instructions[i];
    isa::Instruction local = ir_inst.inst;
    local.waits.clear();
    local.signals.clear();
    for_each_operand(local, [&](AccessPattern& ap, Role, std::string_view field, int k) {
      check_operand(ir, ir_inst, ap, operand_label(field, k));
    });
    std::uint8_t mask = ir_inst.engines ? ir_inst.engines : isa::op_engines(local.op);
    mask &= isa::op_engines(local.op);
    if (mask == 0)
      throw KernelError(local.origin,
                        fmt::format("{}: no engine can run it", isa::op_name(local.op)));
    std::vector<isa::Violation> first_failure;
    isa::Engine first_engine = isa::Engine::kTensor;
    for (int e = 0; e < isa::kNumEngines; ++e) {
      const auto engine = static_cast<isa::Engine>(e);
      if (!(mask & isa::engine_bit(engine))) continue;
      local.queue = {engine,
                     engine == isa::Engine::kDma ? ir_inst.dma_queue.value_or(0) : std::uint8_t{0}};
      std::vector<isa::Violation> vs = isa::check_instruction(local, i, chip);
      if (vs.empty()) {
        allowed[i] |= isa::engine_bit(engine);
      } else if (first_failure.empty()) {
        first_failure = std::move(vs);
        first_engine = engine;
      }
    }
    if (allowed[i] == 0)
      throw KernelError(local.origin, fmt::format("{} on {}: {}", isa::op_name(local.op),
                                                  isa::engine_name(first_engine),
                                                  violations_text(first_failure)));
  }
  return allowed;
}

// ---------------------------------------------------------------------------------------
// Pass 2: allocate

struct Lifetime {
  std::size_t first = kNone, last = 0;
};

std::vector<Lifetime> liveness(const KernelIr& ir) {
  std::vector<Lifetime> life(ir.storages.size());
  for (std::size_t i = 0; i < ir.instructions.size(); ++i) {
    isa::Instruction copy = ir.instructions[i].inst;
    for_each_operand(copy, [&](AccessPattern& ap, Role, std::string_view, int) {
      Lifetime& l = life[kernel::storage_of_offset(ap.offset)];
      if (l.first == kNone) l.first = i;
      l.last = i;
    });
  }
  return life;
}

// A free byte range of one on-chip memory (the same range in every partition). Holes are kept
// sorted and disjoint; neighbours freed at different times stay separate, so that the policy
// "prefer memory freed longest ago" can tell them apart.
struct Hole {
  std::uint64_t lo = 0, hi = 0;
  std::int64_t freed_at = -1;   // IR index of the last use of what was there; -1: never used
  std::vector<StorageId> dead;  // dead tiles that last occupied (parts of) it
};

struct TilePlace {
  std::uint64_t offset = 0, size = 0;
  bool placed = false;
  std::vector<StorageId> inherits;  // dead tiles whose memory it reuses
};

class Arena {
 public:
  Arena(std::uint64_t capacity, std::uint64_t align, std::uint64_t bank)
      : capacity_(capacity), align_(align), bank_(bank) {
    holes_.push_back({0, capacity, -1, {}});
  }

  struct Fixed {
    std::uint64_t lo, hi;
    std::size_t first, last;
  };
  void add_future_fixed(Fixed f) { fixed_.push_back(f); }

  // Best placement for `size` bytes live over [first, last], or nullopt.
  std::optional<std::uint64_t> find(std::uint64_t size, std::size_t first, std::size_t last) const {
    std::optional<std::uint64_t> best;
    std::int64_t best_score = 0;
    for (std::size_t h = 0; h < holes_.size(); ++h) {
      std::uint64_t start = align_up(holes_[h].lo, align_);
      for (int guard = 0; guard < 64; ++guard) {
        const std::uint64_t before = start;
        if (bank_ > 0) {
          if (size <= bank_) {
            if (start / bank_ != (start + size - 1) / bank_) start = align_up(start, bank_);
          } else {
            start = align_up(start, bank_);
          }
        }
        for (const Fixed& f : fixed_) {
          if (f.first <= last && first <= f.last && start < f.hi && f.lo < start + size)
            start = align_up(f.hi, align_);
        }
        if (start == before) break;
      }
      if (start >= holes_[h].hi || start + size > capacity_) continue;
      std::size_t j = h;
      std::int64_t score = holes_[h].freed_at;
      bool fits = true;
      while (holes_[j].hi < start + size) {
        if (j + 1 < holes_.size() && holes_[j + 1].lo == holes_[j].hi) {
          ++j;
          score = std::max(score, holes_[j].freed_at);
        } else {
          fits = false;
          break;
        }
      }
      if (!fits) continue;
      if (!best || score < best_score || (score == best_score && start < *best)) {
        best = start;
        best_score = score;
      }
    }
    return best;
  }

  // Removes [lo, hi) from the free holes (it must be free); returns the dead tiles that
  // occupied it before. False if part of the range is not free.
  bool take(std::uint64_t lo, std::uint64_t hi, const std::vector<TilePlace>& places,
            std::vector<StorageId>& dead) {
    auto it = std::upper_bound(holes_.begin(), holes_.end(), lo,
                               [](std::uint64_t v, const Hole& x) { return v < x.lo; });
    if (it == holes_.begin()) return false;
    std::size_t h = static_cast<std::size_t>(it - holes_.begin()) - 1;
    if (holes_[h].hi <= lo) return false;
    std::size_t j = h;
    while (holes_[j].hi < hi) {
      if (j + 1 < holes_.size() && holes_[j + 1].lo == holes_[j].hi)
        ++j;
      else
        return false;
    }
    for (std::size_t k = h; k <= j; ++k)
      for (StorageId d : holes_[k].dead) {
        const TilePlace& p = places[d];
        if (p.offset < hi && lo < p.offset + p.size &&
            std::find(dead.begin(), dead.end(), d) == dead.end())
          dead.push_back(d);
      }
    std::vector<Hole> rest;
    if (holes_[h].lo < lo) {
      Hole left = holes_[h];
      left.hi = lo;
      rest.push_back(std::move(left));
    }
    if (hi < holes_[j].hi) {
      Hole right = holes_[j];
      right.lo = hi;
      rest.push_back(std::move(right));
    }
    for (Hole& r : rest) prune_dead(r, places);
    holes_.erase(holes_.begin() + static_cast<std::ptrdiff_t>(h),
                 holes_.begin() + static_cast<std::ptrdiff_t>(j + 1));
    holes_.insert(holes_.begin() + static_cast<std::ptrdiff_t>(h), rest.begin(), rest.end());
    return true;
  }

  void release(std::uint64_t lo, std::uint64_t hi, std::int64_t freed_at, StorageId id) {
    auto it = std::upper_bound(holes_.begin(), holes_.end(), lo,
                               [](std::uint64_t v, const Hole& x) { return v < x.lo; });
    it = holes_.insert(it, Hole{lo, hi, freed_at, {id}});
    std::size_t h = static_cast<std::size_t>(it - holes_.begin());
    // Merge with neighbours freed at the same moment (one loop iteration's tiles).
    if (h + 1 < holes_.size() && holes_[h + 1].lo == hi && holes_[h + 1].freed_at == freed_at) {
      holes_[h].hi = holes_[h + 1].hi;
      holes_[h].dead.insert(holes_[h].dead.end(), holes_[h + 1].dead.begin(),
                            holes_[h + 1].dead.end());
      holes_.erase(holes_.begin() + static_cast<std::ptrdiff_t>(h + 1));
    }
    if (h > 0 && holes_[h - 1].hi == lo && holes_[h - 1].freed_at == freed_at) {
      holes_[h - 1].hi = holes_[h].hi;
      holes_[h - 1].dead.insert(holes_[h - 1].dead.end(), holes_[h].dead.begin(),
                                holes_[h].dead.end());
      holes_.erase(holes_.begin() + static_cast<std::ptrdiff_t>(h));
    }
  }

  std::uint64_t largest_hole() const {
    std::uint64_t best = 0, run_lo = 0, run_hi = 0;
    for (std::size_t h = 0; h < holes_.size(); ++h) {
      if (h == 0 || holes_[h].lo != run_hi) run_lo = holes_[h].lo;
      run_hi = holes_[h].hi;
      best = std::max(best, run_hi - run_lo);
    }
    return best;
  }

 private:
  static void prune_dead(Hole& h, const std::vector<TilePlace>& places) {
    std::erase_if(h.dead, [&](StorageId d) {
      const TilePlace& p = places[d];
      return !(p.offset < h.hi && h.lo < p.offset + p.size);
    });
  }

  std::uint64_t capacity_, align_, bank_;
  std::vector<Hole> holes_;
  std::vector<Fixed> fixed_;
};

struct Allocation {
  std::vector<TilePlace> places;  // indexed by StorageId (on-chip only meaningful)
  std::vector<Lifetime> life;
  std::uint64_t sbuf_peak = 0, psum_peak = 0, sbuf_extent = 0, psum_extent = 0;
};

[[noreturn]] void fail_fit(const KernelIr& ir, const Storage& s, std::uint64_t cap,
                           std::uint64_t largest, const std::vector<StorageId>& live,
                           std::uint64_t live_bytes, std::size_t at) {
  std::vector<StorageId> sorted = live;
  std::sort(sorted.begin(), sorted.end(), [&](StorageId a, StorageId b) {
    if (ir.storages[a].bytes != ir.storages[b].bytes)
      return ir.storages[a].bytes > ir.storages[b].bytes;
    return a < b;
  });
  std::string list;
  for (StorageId id : sorted) {
    const Storage& t = ir.storages[id];
    list += fmt::format("\n  {} ({} B per partition, declared at {})", t.name, t.bytes,
                        line_of(t.origin));
  }
  throw KernelError(
      s.origin,
      fmt::format("{} tile '{}' does not fit: it needs {} bytes per partition at instruction {}, "
                  "the {} bytes per partition of {} hold {} B of live tiles (largest free range "
                  "{} B); live tiles, largest first:{}",
                  memory_upper(s.buffer), s.name, s.bytes, at, cap, memory_upper(s.buffer),
                  live_bytes, largest, list.empty() ? std::string("\n  (none)") : list));
}

Allocation allocate(const KernelIr& ir, const arch::ChipConfig& chip) {
  Allocation a;
  a.life = liveness(ir);
  a.places.resize(ir.storages.size());
  const std::uint64_t sbuf_align = std::max<std::uint64_t>(
      4, chip.sbuf.min_alignment_bytes.value > 0
             ? static_cast<std::uint64_t>(chip.sbuf.min_alignment_bytes.value)
             : 64);
  const auto bank = static_cast<std::uint64_t>(arch::psum_bank_bytes(chip));
  Arena sbuf(capacity_of(Buffer::kSbuf, chip), sbuf_align, 0);
  Arena psum(capacity_of(Buffer::kPsum, chip), sbuf_align, bank);

  std::vector<StorageId> tiles;
  for (const Storage& s : ir.storages) {
    if (!kernel::is_on_chip(s.buffer) || a.life[s.id].first == kNone) continue;
    tiles.push_back(s.id);
    if (s.fixed_offset) {
      Arena& arena = s.buffer == Buffer::kSbuf ? sbuf : psum;
      arena.add_future_fixed(
          {*s.fixed_offset, *s.fixed_offset + s.bytes, a.life[s.id].first, a.life[s.id].last});
    }
  }
  std::vector<StorageId> by_first = tiles, by_last = tiles;
  std::stable_sort(by_first.begin(), by_first.end(), [&](StorageId x, StorageId y) {
    if (a.life[x].first != a.life[y].first) return a.life[x].first < a.life[y].first;
    // Hand-placed tiles first, then in declaration order.
    return ir.storages[x].fixed_offset.has_value() > ir.storages[y].fixed_offset.has_value();
  });
  std::stable_sort(by_last.begin(), by_last.end(),
                   [&](StorageId x, StorageId y) { return a.life[x].last < a.life[y].last; });

  std::vector<StorageId> live_sbuf, live_psum;
  std::uint64_t bytes_sbuf = 0, bytes_psum = 0;
  std::size_t next_death = 0;
  for (std::size_t k = 0; k < by_first.size(); ++k) {
    const StorageId id = by_first[k];
    const Storage& s = ir.storages[id];
    const std::size_t now = a.life[id].first;
    while (next_death < by_last.size() && a.life[by_last[next_death]].last < now) {
      const StorageId d = by_last[next_death++];
      const Storage& ds = ir.storages[d];
      Arena& arena = ds.buffer == Buffer::kSbuf ? sbuf : psum;
      auto& live = ds.buffer == Buffer::kSbuf ? live_sbuf : live_psum;
      (ds.buffer == Buffer::kSbuf ? bytes_sbuf : bytes_psum) -= ds.bytes;
      std::erase(live, d);
      const TilePlace& p = a.places[d];
      arena.release(p.offset, p.offset + p.size, static_cast<std::int64_t>(a.life[d].last), d);
    }
    const bool is_sbuf = s.buffer == Buffer::kSbuf;
    Arena& arena = is_sbuf ? sbuf : psum;
    auto& live = is_sbuf ? live_sbuf : live_psum;
    std::uint64_t& live_bytes = is_sbuf ? bytes_sbuf : bytes_psum;
    TilePlace& p = a.places[id];
    p.size = std::max<std::uint64_t>(s.bytes, 1);
    if (s.fixed_offset) {
      p.offset = *s.fixed_offset;
      if (!arena.take(p.offset, p.offset + p.size, a.places, p.inherits)) {
        std::string who;
        for (StorageId o : live) {
          const TilePlace& q = a.places[o];
          if (q.offset < p.offset + p.size && p.offset < q.offset + q.size)
            who += fmt::format(" '{}' (declared at {})", ir.storages[o].name,
                               line_of(ir.storages[o].origin));
        }
        throw KernelError(s.origin,
                          fmt::format("{} tile '{}' placed at byte {} ({} B per partition) "
                                      "overlaps live tile{}{}",
                                      memory_upper(s.buffer), s.name, p.offset, s.bytes,
                                      who.empty() ? "s or lies outside the memory" : "", who));
      }
    } else {
      const auto where = arena.find(p.size, now, a.life[id].last);
      if (!where)
        fail_fit(ir, s, capacity_of(s.buffer, chip), arena.largest_hole(), live, live_bytes, now);
      p.offset = *where;
      const bool ok = arena.take(p.offset, p.offset + p.size, a.places, p.inherits);
      if (!ok) throw std::logic_error("compiler bug: allocator chose a range that is not free");
    }
    p.placed = true;
    live.push_back(id);
    live_bytes += s.bytes;
    if (is_sbuf) {
      a.sbuf_peak = std::max(a.sbuf_peak, live_bytes);
      a.sbuf_extent = std::max(a.sbuf_extent, p.offset + p.size);
    } else {
      a.psum_peak = std::max(a.psum_peak, live_bytes);
      a.psum_extent = std::max(a.psum_extent, p.offset + p.size);
    }
  }
  return a;
}

// ---------------------------------------------------------------------------------------
// Pass 3: dependencies

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
  isa::Instruction v = virt;
  for_each_operand(v, [&](AccessPattern& ap, Role role, std::string_view, int) {
    Footprint f;
    f.storage = kernel::storage_of_offset(ap.offset);
    f.reads = role == Role::kRead || role == Role::kReadWrite;
    f.writes = role == Role::kWrite || role == Role::kReadWrite;
    out.push_back(f);
  });
  std::size_t k = 0;
  isa::Instruction p = phys;
  for_each_operand(p, [&](AccessPattern& ap, Role, std::string_view, int) {
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

// Predecessors of every instruction (IR indices, sorted, unique); `flow` gets the subset
// that are read-after-write (the instruction reads what the predecessor wrote).
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
  for (std::size_t i = 0; i < n; ++i) {
    const auto idx = static_cast<std::uint32_t>(i);
    std::vector<std::uint32_t>& deps = preds[i];
    const bool is_barrier = std::holds_alternative<isa::CoreBarrier>(phys[i].op);
    if (is_barrier) {
      for (std::size_t j = since_barrier; j < i; ++j) deps.push_back(static_cast<std::uint32_t>(j));
    } else if (last_barrier) {
      deps.push_back(*last_barrier);
    }
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

// ---------------------------------------------------------------------------------------
// Pass 5: synchronise

struct SyncResult {
  std::vector<isa::Instruction> program;
  std::size_t waits = 0, signals = 0, cross_edges = 0;
};

// True for queues whose instructions read their operands when they start and publish their
// results only at completion, so a dependent instruction on the same queue must wait for
// the producer's completion: the Vector, Scalar and GpSimd engines (the NKI cost model's
// fixed overhead "on dependent chains"). The tensor engine accumulates into PSUM in its own
// pipeline (back-to-back accumulating matmuls do not wait), and a DMA queue is occupied until
// its transfer completes, so neither needs it.
bool waits_for_own_results(int queue_key) {
  const isa::Engine e = detail::queue_of_key(queue_key).engine;
  return e == isa::Engine::kVector || e == isa::Engine::kScalar || e == isa::Engine::kGpSimd;
}

SyncResult synchronise(std::vector<isa::Instruction>& phys, const detail::SchedResult& sched,
                       const std::vector<std::vector<std::uint32_t>>& preds,
                       const std::vector<std::vector<std::uint32_t>>& flow, int num_queues) {
  const std::size_t n = phys.size();
  const auto nq = static_cast<std::size_t>(num_queues);
  std::vector<std::uint32_t> pos(n, 0);                     // 1-based position in its queue
  std::vector<std::vector<std::uint32_t>> queue_insts(nq);  // queue -> instructions in order
  std::vector<std::uint32_t> clocks(n * nq, 0);             // known-completed positions at start
  std::vector<std::vector<std::uint32_t>> known(nq, std::vector<std::uint32_t>(nq, 0));
  std::vector<char> signals(n, 0);
  std::vector<std::vector<std::uint32_t>> wait_on(n);  // producers each instruction waits for
  SyncResult r;
  std::vector<std::uint32_t> needed(nq, 0);
  // Per queue: the last own position known *completed* (k[q] below is the own position
  // started, which is what other queues learn when they wait for this one).
  std::vector<std::uint32_t> own_done(nq, 0);
  for (std::uint32_t i : sched.order) {
    const auto q = static_cast<std::size_t>(sched.queue[i]);
    queue_insts[q].push_back(i);
    pos[i] = static_cast<std::uint32_t>(queue_insts[q].size());
    // A same-queue flow dependency: wait for the producer's own completion signal.
    std::uint32_t own_needed = 0;
    if (waits_for_own_results(sched.queue[i]))
      for (std::uint32_t j : flow[i])
        if (static_cast<std::size_t>(sched.queue[j]) == q)
          own_needed = std::max(own_needed, pos[j]);
    std::fill(needed.begin(), needed.end(), 0);
    for (std::uint32_t j : preds[i]) {
      const auto rq = static_cast<std::size_t>(sched.queue[j]);
      if (rq == q) continue;
      if (pos[j] == 0) throw std::logic_error("compiler bug: schedule is not topological");
      ++r.cross_edges;
      needed[rq] = std::max(needed[rq], pos[j]);
    }
    std::vector<std::uint32_t>& k = known[q];
    std::vector<std::uint32_t> targets;  // producer instructions not yet known complete
    for (std::size_t rq = 0; rq < nq; ++rq)
      if (needed[rq] > k[rq]) targets.push_back(queue_insts[rq][needed[rq] - 1]);
    for (std::uint32_t t : targets) {
      const auto tq = static_cast<std::size_t>(sched.queue[t]);
      bool implied = false;
      for (std::uint32_t o : targets)
        if (o != t && clocks[o * nq + tq] >= pos[t]) implied = true;
      if (implied) continue;
      wait_on[i].push_back(t);
      signals[t] = 1;
      for (std::size_t x = 0; x < nq; ++x) k[x] = std::max(k[x], clocks[t * nq + x]);
      own_done[q] = std::max(own_done[q], clocks[t * nq + q]);
    }
    if (own_needed > own_done[q]) {
      const std::uint32_t t = queue_insts[q][own_needed - 1];
      wait_on[i].push_back(t);
      signals[t] = 1;
      own_done[q] = own_needed;
    }
    k[q] = pos[i];
    std::copy(k.begin(), k.end(), clocks.begin() + static_cast<std::ptrdiff_t>(i * nq));
  }
  // Signal ordinals: the number of signalling instructions of a queue up to and including one.
  std::vector<std::uint32_t> ordinal(n, 0);
  for (std::size_t q = 0; q < nq; ++q) {
    std::uint32_t count = 0;
    for (std::uint32_t i : queue_insts[q])
      if (signals[i]) ordinal[i] = ++count;
  }
  r.program.reserve(n);
  for (std::uint32_t i : sched.order) {
    isa::Instruction inst = std::move(phys[i]);
    inst.queue = detail::queue_of_key(sched.queue[i]);
    inst.waits.clear();
    inst.signals.clear();
    std::sort(wait_on[i].begin(), wait_on[i].end(),
              [&](std::uint32_t a, std::uint32_t b) { return sched.queue[a] < sched.queue[b]; });
    for (std::uint32_t t : wait_on[i])
      inst.waits.push_back({static_cast<std::uint16_t>(sched.queue[t]), ordinal[t]});
    if (signals[i]) inst.signals.push_back({static_cast<std::uint16_t>(sched.queue[i]), 1});
    r.waits += inst.waits.size();
    r.signals += inst.signals.size();
    r.program.push_back(std::move(inst));
  }
  return r;
}

// ---------------------------------------------------------------------------------------
// Launch-level checks and HBM layout

bool same_hbm_tensor(const Storage& a, const Storage& b) {
  return a.buffer == b.buffer && a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes;
}

void check_launch(std::span<const KernelIr> programs) {
  if (programs.empty()) throw KernelError({}, "nothing to compile: no program");
  for (std::size_t p = 0; p < programs.size(); ++p) {
    if (programs[p].program_id != static_cast<int>(p))
      throw KernelError({}, fmt::format("program {} of the launch has program id {} (ids must "
                                        "be 0..{} in order)",
                                        p, programs[p].program_id, programs.size() - 1));
    for (const Storage& s : programs[p].storages)
      if (s.id != static_cast<StorageId>(&s - programs[p].storages.data()))
        throw KernelError(s.origin, fmt::format("storage '{}' has id {} at position {}", s.name,
                                                s.id, &s - programs[p].storages.data()));
  }
  const KernelIr& base = programs[0];
  for (std::size_t p = 1; p < programs.size(); ++p) {
    const KernelIr& other = programs[p];
    const std::size_t n = std::max(base.storages.size(), other.storages.size());
    for (std::size_t id = 0; id < n; ++id) {
      const Storage* a = id < base.storages.size() ? &base.storages[id] : nullptr;
      const Storage* b = id < other.storages.size() ? &other.storages[id] : nullptr;
      const bool a_shared = a && a->buffer == Buffer::kSharedHbm;
      const bool b_shared = b && b->buffer == Buffer::kSharedHbm;
      if (!a_shared && !b_shared) continue;
      if (!a || !b || !same_hbm_tensor(*a, *b)) {
        const Storage& s = a_shared ? *a : *b;
        throw KernelError(s.origin,
                          fmt::format("programs of one launch diverge: shared HBM tensor '{}' "
                                      "(storage {}) differs between program 0 and program {} "
                                      "(shape, dtype or buffer)",
                                      s.name, id, p));
      }
    }
  }
}

void add_placement(std::vector<HbmPlacement>& out, const Storage& s, int program,
                   std::uint64_t& next) {
  HbmPlacement h;
  h.storage = s.id;
  h.program = program;
  h.name = s.name;
  h.dtype = s.dtype;
  h.shape = s.shape;
  h.role = s.role;
  h.address = next;
  h.bytes = s.bytes;
  out.push_back(std::move(h));
  next = align_up(next + std::max<std::uint64_t>(s.bytes, 1), kHbmAlign);
}

// Returns address[program][storage] (0 for on-chip storages).
std::vector<std::vector<std::uint64_t>> layout_hbm(std::span<const KernelIr> programs,
                                                   std::vector<HbmPlacement>& out) {
  std::uint64_t next = kHbmBase;
  std::vector<std::vector<std::uint64_t>> addr(programs.size());
  for (std::size_t p = 0; p < programs.size(); ++p) addr[p].assign(programs[p].storages.size(), 0);
  for (const Storage& s : programs[0].storages) {
    if (s.buffer != Buffer::kSharedHbm) continue;
    for (auto& a : addr) a[s.id] = next;
    add_placement(out, s, -1, next);
  }
  for (std::size_t p = 0; p < programs.size(); ++p)
    for (const Storage& s : programs[p].storages) {
      if (s.buffer != Buffer::kPrivateHbm) continue;
      addr[p][s.id] = next;
      add_placement(out, s, static_cast<int>(p), next);
    }
  return addr;
}

// Physical instructions: every operand rebased to its storage's placement.
std::vector<isa::Instruction> rebase(const KernelIr& ir, const Allocation& alloc,
                                     const std::vector<std::uint64_t>& hbm_addr) {
  std::vector<isa::Instruction> phys;
  phys.reserve(ir.instructions.size());
  for (const IrInstruction& in : ir.instructions) {
    isa::Instruction inst = in.inst;
    inst.waits.clear();
    inst.signals.clear();
    for_each_operand(inst, [&](AccessPattern& ap, Role, std::string_view, int) {
      const StorageId id = kernel::storage_of_offset(ap.offset);
      const std::uint64_t local = kernel::offset_in_storage(ap.offset);
      ap.offset =
          (kernel::is_on_chip(ir.storages[id].buffer) ? alloc.places[id].offset : hbm_addr[id]) +
          local;
    });
    phys.push_back(std::move(inst));
  }
  return phys;
}

class PassTimer {
 public:
  explicit PassTimer(CompileStats& stats) : stats_(stats) {}
  void done(const std::string& pass) {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    auto it = std::find_if(stats_.pass_ms.begin(), stats_.pass_ms.end(),
                           [&](const auto& e) { return e.first == pass; });
    if (it == stats_.pass_ms.end())
      stats_.pass_ms.emplace_back(pass, ms);
    else
      it->second += ms;
    last_ = now;
  }

 private:
  CompileStats& stats_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

CompiledKernel compile(std::span<const KernelIr> programs, const arch::ChipConfig& chip,
                       const CompileOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  CompiledKernel out;
  PassTimer timer(out.stats);
  check_launch(programs);
  out.name = programs[0].name;
  if (options.dma_queues < 1 ||
      options.dma_queues > static_cast<int>(chip.dma.queues_per_engine.value))
    throw std::invalid_argument(fmt::format("CompileOptions::dma_queues = {} (1..{} allowed)",
                                            options.dma_queues, chip.dma.queues_per_engine.value));
  const int num_queues =
      detail::kFirstDmaQueueKey + static_cast<int>(chip.dma.queues_per_engine.value);

  std::vector<std::vector<std::uint8_t>> allowed;
  for (const KernelIr& ir : programs) allowed.push_back(verify(ir, chip));
  timer.done("verify");

  std::vector<std::vector<std::uint64_t>> hbm_addr = layout_hbm(programs, out.hbm);
  std::vector<Allocation> allocs;
  for (const KernelIr& ir : programs) allocs.push_back(allocate(ir, chip));
  timer.done("allocate");

  out.programs.resize(programs.size());
  out.onchip.resize(programs.size());
  for (std::size_t p = 0; p < programs.size(); ++p) {
    const KernelIr& ir = programs[p];
    const Allocation& alloc = allocs[p];
    for (const Storage& s : ir.storages) {
      if (!alloc.places[s.id].placed) continue;
      OnChipPlacement o;
      o.storage = s.id;
      o.memory = kernel::memory_of(s.buffer);
      o.offset = alloc.places[s.id].offset;
      o.bytes = s.bytes;
      o.partitions = s.partitions;
      o.first_use = alloc.life[s.id].first;
      o.last_use = alloc.life[s.id].last;
      out.onchip[p].push_back(o);
    }
    out.stats.sbuf_peak_bytes = std::max(out.stats.sbuf_peak_bytes, alloc.sbuf_peak);
    out.stats.psum_peak_bytes = std::max(out.stats.psum_peak_bytes, alloc.psum_peak);
    out.stats.sbuf_extent_bytes = std::max(out.stats.sbuf_extent_bytes, alloc.sbuf_extent);
    out.stats.psum_extent_bytes = std::max(out.stats.psum_extent_bytes, alloc.psum_extent);

    std::vector<isa::Instruction> phys = rebase(ir, alloc, hbm_addr[p]);
    timer.done("allocate");

    std::vector<std::vector<std::uint32_t>> flow;
    const auto preds = dependencies(ir, phys, alloc, flow);
    timer.done("dependencies");

    std::vector<int> fixed_queue(ir.instructions.size(), -1);
    std::vector<std::uint8_t> engines = allowed[p];
    for (std::size_t i = 0; i < ir.instructions.size(); ++i) {
      const IrInstruction& in = ir.instructions[i];
      if (in.dma_queue) fixed_queue[i] = *in.dma_queue;
      if (in.engine_fixed) {
        const std::uint8_t asked = in.engines & engines[i];
        if (asked == 0)
          throw KernelError(in.inst.origin,
                            fmt::format("{}: the engine the kernel asked for cannot run it",
                                        isa::op_name(in.inst.op)));
        // The lowest engine asked for (engine_fixed means one bit).
        engines[i] = static_cast<std::uint8_t>(asked & (~asked + 1));
      }
    }
    detail::SchedInput in{&phys, &engines, &fixed_queue, &preds};
    const detail::SchedResult sched = options.schedule
                                          ? detail::schedule_list(in, chip, options.dma_queues)
                                          : detail::schedule_in_order(in, options.dma_queues);
    out.stats.estimated_ns = std::max(out.stats.estimated_ns, sched.estimated_ns);
    timer.done("schedule");

    SyncResult sync = synchronise(phys, sched, preds, flow, num_queues);
    out.stats.waits += sync.waits;
    out.stats.signals += sync.signals;
    out.stats.dependencies += sync.cross_edges;
    isa::Program& prog = out.programs[p];
    prog.instructions = std::move(sync.program);
    out.stats.instructions += prog.instructions.size();
    timer.done("synchronise");

    try {
      isa::validate_program(prog, chip);
    } catch (const isa::ValidationError& e) {
      throw std::logic_error(
          fmt::format("trnsim compiler bug: program {} of kernel '{}' fails "
                      "ISA validation after compilation: {}",
                      p, ir.name, e.what()));
    }
    timer.done("validate");
  }
  out.validated_for = chip;
  out.stats.total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace trnsim::compiler
