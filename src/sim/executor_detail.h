// Internals of the executor shared by the event loop (executor.cpp) and the preparation
// pass before it (executor_prepare.cpp); not part of sim/sim.h.
#pragma once

#include <cstdint>
#include <exception>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "isa/isa.h"
#include "isa/validate.h"
#include "sim/hazards.h"
#include "sim/sim.h"

namespace trnsim::sim::executor_detail {

// One signal's effect on a semaphore, for the hazard detector: the value it produced and
// the join of the clocks of every signal up to and including it.
struct SignalRecord {
  std::uint32_t value;
  VectorClock clock;
};

// One launched core: its program, cost model and run state.
struct CoreRun {
  int physical = 0;
  Core* core = nullptr;
  const isa::Program* program = nullptr;
  CostModel* cost = nullptr;
  std::uint32_t seed = 0;
  std::uint32_t first_queue = 0, end_queue = 0;  // its queues in the run's numbering
  // Queues (bit q - first_queue) that are free with a head instruction whose waits did not
  // hold when last tried: the only ones a completion can let start. Used when the core has
  // at most 64 queues; otherwise every queue of the core is tried.
  std::uint64_t waiting = 0;
  bool few_queues = true;
  RunResult result;
  std::vector<VectorClock> in_flight_clock;
  std::vector<std::vector<SignalRecord>> signals;  // per semaphore (hazard checking)
  // What the event loop needs of each instruction, packed (the Instructions themselves are
  // large: touching them for every readiness check would miss the cache every time). Waits
  // and signals live in the arrays of the instruction's chunk (CostModel::kPrepareChunk
  // instructions, built by one thread of the preparation pass).
  struct Info {
    std::uint32_t first_wait = 0, first_signal = 0;  // in the chunk's arrays
    std::uint16_t waits = 0, signals = 0;
    bool barrier = false;  // a core_barrier among more than one core
  };
  // Each chunk on cache lines of its own: threads packing neighbouring chunks write their
  // vectors' ends on every instruction, and sharing a line made them wait on each other.
  struct alignas(64) Chunk {
    std::vector<isa::SemWait> waits;
    std::vector<isa::SemSignal> signals;
    // The chunk's instructions by queue, queues in order of first appearance in the chunk.
    std::vector<std::pair<isa::QueueId, std::vector<std::uint32_t>>> queues;
    std::vector<isa::Violation> violations;
    // The first error preparing an instruction that passed validation (what a serial pass
    // would have thrown there); later instructions of the chunk are only validated.
    std::exception_ptr error;
  };
  std::vector<Info> info;
  std::vector<Chunk> chunks;
  const Chunk& chunk_of(std::size_t index) const {
    return chunks[index >> CostModel::kPrepareChunkShift];
  }
  std::map<std::uint32_t, std::uint32_t> barrier_arrivals;  // barrier id -> arrivals so far
};

// One queue of the run (queues are numbered core by core).
struct Queue {
  isa::QueueId id;
  std::uint32_t core = 0;                   // launch
  std::vector<std::uint32_t> instructions;  // program indices, in order
  std::size_t next = 0;                     // position of the next instruction to start
  bool busy = false;                        // occupied by its last started instruction
  VectorClock clock;                        // happens-before knowledge of this queue
  bool finished() const { return next == instructions.size() && !busy; }
};

// Throws `why` as the error of instruction `index` of core `c` (attributed to the core in
// multi-core runs).
[[noreturn]] void fail_at(const CoreRun& c, std::size_t index, std::string why, bool multi_core,
                          std::vector<util::Note> notes = {});

// Runs `f`, attributing a SimError to the core in multi-core runs.
template <class F>
void attributed(const CoreRun& c, bool multi_core, F&& f) {
  if (!multi_core) return f();
  try {
    f();
  } catch (const SimError& e) {
    if (e.has_core()) throw;
    throw SimError(c.physical, e);
  }
}

// One pass over each program: validation, queues, the packed waits and signals, and the
// cost model's preparation, so that each (large) instruction is read from memory once and
// the run itself touches the instructions only to execute them. The pass works chunk by
// chunk (CostModel::kPrepareChunk instructions) on several threads, then joins the chunks
// in program order: queue numbering, the error reported and the cost model's tables come
// out as from one serial pass, whatever the thread count.
// It fills `queues` (appended core by core) and each core's packed instructions; `unit_cost` is
// the model of the cores that have none (it needs no operands).
void prepare_queues(std::vector<CoreRun>& cores, std::vector<Queue>& queues, const Device& device,
                    const RunOptions& options, bool multi_core, const CostModel* unit_cost);

}  // namespace trnsim::sim::executor_detail
