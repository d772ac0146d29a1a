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
  HazardDetector(std::size_t num_queues, std::vector<HazardCore> cores, bool label_cores)
      : num_queues_(num_queues), cores_(std::move(cores)), label_cores_(label_cores) {}

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
  };
  std::vector<Record>& records_for(isa::Memory m) { return records_[static_cast<int>(m)]; }

  std::string describe(std::uint32_t core, std::size_t index) const;

  std::size_t num_queues_;
  std::vector<HazardCore> cores_;
  bool label_cores_ = false;
  std::vector<Record> records_[3];  // HBM, SBUF, PSUM
  // Reported pairs: (core << 48 | index) of both instructions.
  std::set<std::pair<std::uint64_t, std::uint64_t>> reported_;
};

}  // namespace trnsim::sim
