// Pass 2: allocate (docs/compiler.md, "Allocate"): liveness, then SBUF/PSUM placement of every
// tile in first-use order (preferring memory freed longest ago), then every operand rebased to
// its placement.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "compiler/passes.h"

namespace trnsim::compiler::detail {

namespace {

std::vector<Lifetime> liveness(const KernelIr& ir) {
  std::vector<Lifetime> life(ir.storages.size());
  for (std::size_t i = 0; i < ir.instructions.size(); ++i) {
    isa::for_each_operand(ir.instructions[i].inst.op,
                          [&](const AccessPattern& ap, const isa::OperandRef&) {
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

[[noreturn]] void fail_fit(const KernelIr& ir, const Storage& s, std::uint64_t cap,
                           std::uint64_t largest, const std::vector<StorageId>& live,
                           std::uint64_t live_bytes, std::size_t at) {
  std::vector<StorageId> sorted = live;
  std::sort(sorted.begin(), sorted.end(), [&](StorageId a, StorageId b) {
    if (ir.storages[a].bytes != ir.storages[b].bytes)
      return ir.storages[a].bytes > ir.storages[b].bytes;
    return a < b;
  });
  // The live tiles, largest first, each a note at its declaration.
  std::vector<util::Note> notes;
  for (StorageId id : sorted) {
    const Storage& t = ir.storages[id];
    notes.push_back({t.origin, fmt::format("live tile '{}' ({} B per partition) declared here",
                                           t.name, t.bytes)});
  }
  throw KernelError(
      s.origin,
      fmt::format("{} tile '{}' does not fit: it needs {} bytes per partition at instruction {}, "
                  "the {} bytes per partition of {} hold {} B of {} live tile{} (largest free "
                  "range {} B)",
                  memory_upper(s.buffer), s.name, s.bytes, at, cap, memory_upper(s.buffer),
                  live_bytes, sorted.size(), sorted.size() == 1 ? "" : "s", largest),
      std::move(notes));
}

}  // namespace

Allocation allocate(const KernelIr& ir, const arch::ChipConfig& chip) {
  Allocation a;
  a.life = liveness(ir);
  extend_lifetimes_over_loops(ir, a.life);
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
        std::vector<util::Note> overlapped;
        for (StorageId o : live) {
          const TilePlace& q = a.places[o];
          if (q.offset < p.offset + p.size && p.offset < q.offset + q.size)
            overlapped.push_back({ir.storages[o].origin, fmt::format("live tile '{}' declared here",
                                                                     ir.storages[o].name)});
        }
        throw KernelError(s.origin,
                          fmt::format("{} tile '{}' placed at byte {} ({} B per partition) {}",
                                      memory_upper(s.buffer), s.name, p.offset, s.bytes,
                                      overlapped.empty() ? "overlaps live tiles or lies outside "
                                                           "the memory"
                                                         : "overlaps live tiles"),
                          std::move(overlapped));
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

std::vector<isa::Instruction> rebase(const KernelIr& ir, const Allocation& alloc,
                                     const std::vector<std::uint64_t>& hbm_addr) {
  std::vector<isa::Instruction> phys;
  phys.reserve(ir.instructions.size());
  for (const IrInstruction& in : ir.instructions) {
    isa::Instruction inst = in.inst;
    inst.waits.clear();
    inst.signals.clear();
    isa::for_each_operand(inst.op, [&](AccessPattern& ap, const isa::OperandRef&) {
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

}  // namespace trnsim::compiler::detail
