// Internals of the executor shared by the event loop (executor.cpp) and the preparation
// pass before it (executor_prepare.cpp); not part of sim/sim.h.
#pragma once

#include <array>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
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
  int group = 0;           // CoreProgram::group: the cores a barrier may join
  std::uint32_t rank = 0;  // its place among its group's cores (the program id)
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
    bool barrier = false;         // a core_barrier among more than one core
    bool exchange = false;        // a sendrecv (paired with its peers' by the executor)
    bool collective = false;      // a collective (matched with its peers' by the executor)
    bool control = false;         // a control operation (registers, branches)
    bool dynamic = false;         // register-relative operands: runs as a resolved copy
    bool relative_waits = false;  // a wait counts from a register
  };
  // Each chunk on cache lines of its own: threads packing neighbouring chunks write their
  // vectors' ends on every instruction, and sharing a line made them wait on each other.
  struct alignas(64) Chunk {
    std::vector<isa::SemWait> waits;
    std::vector<isa::SemSignal> signals;
    // The chunk's instructions by queue, queues in order of first appearance in the chunk.
    std::vector<std::pair<isa::QueueId, std::vector<std::uint32_t>>> queues;
    std::vector<isa::Violation> violations;
    bool control = false;  // holds a control operation
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

  // Programs with control flow (`looping`) may start an instruction again before its last
  // start completed, so their events and in-flight state are keyed by an execution slot,
  // recycled once both its completion and its queue's release have happened; straight-line
  // programs key them by the instruction index and pay for none of this.
  bool looping = false;
  struct Slot {
    std::uint32_t index = 0;   // the instruction
    std::uint32_t record = 0;  // its entry in result.executions
    std::uint8_t pending = 0;  // events still to come (completion, queue release)
  };
  std::vector<Slot> slots;
  std::vector<std::uint32_t> free_slots;
  std::vector<std::uint32_t> position;  // looping: each instruction's position in its queue
  std::vector<std::uint32_t> runs;      // looping: each instruction's starts so far
  std::size_t index_of(std::uint32_t id) const { return looping ? slots[id].index : id; }
};

// The registers of one queue's sequencer.
using Registers = std::array<std::int32_t, isa::kNumRegisters>;

// One queue of the run (queues are numbered core by core).
struct Queue {
  isa::QueueId id;
  std::uint32_t core = 0;                   // launch
  std::vector<std::uint32_t> instructions;  // program indices, in order
  std::size_t next = 0;       // program counter: position of the next instruction to start
  bool busy = false;          // occupied by its last started instruction
  std::uint32_t current = 0;  // the instruction started last
  std::uint64_t starts = 0;   // instructions started (more than its size when it loops)
  Registers regs{};
  VectorClock clock;  // happens-before knowledge of this queue
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

// Control flow (executor_control.cpp). Errors are thrown as std::runtime_error with the
// reason; the event loop attributes them to the instruction.

// The value a wait needs: its own, or its register's value, read as an unsigned 32-bit
// count (semaphores are unsigned), plus its (signed) offset.
std::int64_t wait_target(const isa::SemWait& wait, const Registers& regs);

// `inst` with every register-relative access pattern moved by its register's value and made
// static, checked against the chip's rules (an operand moved out of its memory is an error
// naming the register and its value). `out` is reused between calls. Returns what moved
// ("'src' by r5 = 3"), for the errors of the run that follows (with_moved_operands).
// The offsets the moved operands run at are appended to `offsets`, in operand order.
std::string resolve_operands(const isa::Instruction& inst, std::size_t index, const Registers& regs,
                             const arch::ChipConfig& chip, isa::Instruction& out,
                             std::vector<std::uint64_t>& offsets);

// `e` (an error of a resolved copy's run, such as an access outside every HBM allocation)
// saying which operands its registers moved.
SimError with_moved_operands(const SimError& e, const std::string& moved);

// "register r70 does not exist" when an instruction names a register past the queue's
// (a control operation's, or a register-relative operand's); "" when all exist.
std::string bad_register(const isa::Instruction& inst);

// Runs control operation `inst` on its queue's registers; `io` is null in timing-only runs
// (a reg_load is then an error: the value it would read is not computed); `rank` is what a
// rank_id reads (the core's launch group) among `ranks`. Returns the program index to
// continue at when a branch is taken.
std::optional<std::uint32_t> run_control(const isa::Instruction& inst, Registers& regs,
                                         OperandIO* io, std::int32_t rank, std::int32_t ranks);

}  // namespace trnsim::sim::executor_detail
