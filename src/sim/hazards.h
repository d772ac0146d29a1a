// Race detection across queues (internal to sim).
//
// Happens-before is program order within a queue plus signal -> wait edges, tracked with a
// vector clock per queue: clock[q] = number of q's instructions known to have happened.
// Each access of an operand is remembered with its footprint; a new access conflicting with
// a remembered one (a common byte, at least one write, different queues) that is not ordered
// after it is a hazard. Footprints are exact for strided patterns (util/strided_overlap.h):
// two column blocks of one row-major tensor do not conflict. Remembered accesses are dropped once
// no future access can race with them.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/access.h"
#include "sim/sim.h"
#include "util/strided_overlap.h"

namespace trnsim::sim {

using VectorClock = std::vector<std::uint32_t>;

// Joins `other` into `clock` (element-wise maximum).
void join_into(VectorClock& clock, const VectorClock& other);

// One operand access of an instruction: its rectangle (partitions x bounding byte range)
// and, exactly, the bytes it touches in each partition (HBM: absolute bytes, the partition
// dim a stride) as a strided set; two accesses conflict when both meet.
struct Access {
  Footprint where;
  util::ByteSet bytes;
  bool write = false;
  std::string operand;  // field name, e.g. "moving", "outputs[1]"
};

// The bytes of an operand whose rectangle is `f` (per partition on SBUF/PSUM; in HBM the
// partition dim included).
util::ByteSet operand_bytes(const isa::AccessPattern& ap, const Footprint& f);

// Every memory operand of an instruction with its role, from the fields() visitor (a
// readwrite operand is one write access: it conflicts with everything a write does).
std::vector<Access> instruction_accesses(const isa::Instruction& inst);

// One launched core as the detector sees it: its program (for messages) and physical index.
struct HazardCore {
  const isa::Program* program = nullptr;
  int physical = 0;
};

class HazardDetector {
 public:
  // Queues are numbered over all cores of the run; SBUF/PSUM accesses conflict only within
  // a core, HBM accesses across cores too. `label_cores` prefixes instructions with their
  // core in messages (multi-core runs).
  HazardDetector(std::vector<HazardCore> cores, bool label_cores)
      : cores_(std::move(cores)), label_cores_(label_cores) {}

  // Records the accesses of instruction `index` of launch `core`, the `seq`-th (1-based) of
  // queue `queue`, whose vector clock at start is `clock` (clock[queue] == seq), and appends
  // the hazards it forms with earlier unordered accesses to `out`.
  void record(const std::vector<Access>& accesses, std::uint32_t core, std::uint32_t queue,
              std::uint32_t seq, std::size_t index, const VectorClock& clock, RunResult& out);

  // Drops accesses ordered before every future instruction: `lower_bound[q]` is the least
  // clock entry for queue q that any instruction still to start can have.
  void prune(const VectorClock& lower_bound);

  std::size_t remembered() const;

 private:
  struct Record {
    Footprint where;
    util::ByteSet bytes;
    bool write;
    std::uint32_t core, queue, seq;
    std::size_t index;
    std::string operand;
    std::uint64_t order;  // when it was recorded (reports keep this order)
  };
  // Records in recording order, with what the scans test first kept apart (rectangle,
  // queue and sequence number: 40 bytes per record, a few hundred remembered in a long
  // kernel): a new access looks at a full record only where they leave a possible race.
  class RecordList {
   public:
    std::size_t size() const { return records_.size(); }
    void push_back(Record r) {
      keys_.push_back({r.where, r.queue, r.seq});
      records_.push_back(std::move(r));
    }
    // Calls f(record) for each record whose rectangle overlaps `w` and that is not ordered
    // before an instruction of queue `queue` with vector clock `clock`, in order.
    template <class F>
    void for_each_unordered_overlapping(const Footprint& w, std::uint32_t queue,
                                        const VectorClock& clock, F&& f) const {
      for (std::size_t i = 0; i < keys_.size(); ++i) {
        const Key& k = keys_[i];
        if (k.where.overlaps(w) && k.queue != queue && clock[k.queue] < k.seq) f(records_[i]);
      }
    }
    // Erases the records whose rectangle `w` contains, that are ordered before an
    // instruction with vector clock `clock`, and for which pred(record) holds.
    template <class Pred>
    void erase_within(const Footprint& w, const VectorClock& clock, Pred pred) {
      const auto erased = [&](std::size_t i) {
        const Key& k = keys_[i];
        return w.contains(k.where) && clock[k.queue] >= k.seq && pred(records_[i]);
      };
      std::size_t i = 0;
      while (i < records_.size() && !erased(i)) ++i;
      if (i == records_.size()) return;  // the usual case: nothing to move
      std::size_t kept = i;
      for (++i; i < records_.size(); ++i) {
        if (erased(i)) continue;
        records_[kept] = std::move(records_[i]);
        keys_[kept] = keys_[i];
        ++kept;
      }
      records_.resize(kept);
      keys_.resize(kept);
    }
    // Erases the records ordered before everything still to start (see prune).
    void erase_ordered(const VectorClock& lower_bound) {
      std::size_t kept = 0;
      for (std::size_t i = 0; i < records_.size(); ++i) {
        if (lower_bound[keys_[i].queue] >= keys_[i].seq) continue;
        if (kept != i) {
          records_[kept] = std::move(records_[i]);
          keys_[kept] = keys_[i];
        }
        ++kept;
      }
      records_.resize(kept);
      keys_.resize(kept);
    }

   private:
    struct Key {
      Footprint where;
      std::uint32_t queue, seq;
    };
    std::vector<Key> keys_;
    std::vector<Record> records_;
  };
  // Remembered accesses of one memory, reads and writes apart: a read can only race with a
  // write, so it scans only the writes. Each list is in recording order.
  struct Remembered {
    RecordList reads, writes;
  };
  Remembered& records_for(isa::Memory m) { return records_[static_cast<int>(m)]; }
  // Reports the hazards `access` forms with remembered accesses `a` it conflicts with.
  void check(const Access& access, const Record& a, std::uint32_t core, std::uint32_t queue,
             std::size_t index, const VectorClock& clock, RunResult& out);

  std::string describe(std::uint32_t core, std::size_t index) const;

  std::vector<HazardCore> cores_;
  bool label_cores_ = false;
  Remembered records_[3];  // HBM, SBUF, PSUM
  std::uint64_t recorded_ = 0;
  // Reported pairs: (core << 48 | index) of both instructions.
  std::set<std::pair<std::uint64_t, std::uint64_t>> reported_;
};

}  // namespace trnsim::sim
