// The event loop: queues, semaphores, time, hazard tracking and dispatch of semantics.
//
// Queues are the distinct QueueIds of the program, numbered in order of first appearance;
// each runs its instructions in program order, one at a time until the cost model's
// occupancy has passed. An instruction starts as soon as its queue is free and every wait
// holds (semaphore >= value); its signals fire when its latency has passed. Semantics run
// atomically at the start, so for a race-free program the data does not depend on the
// costs. Events are ordered by (time, queue number, instruction index), which makes runs
// reproducible bit for bit.
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <queue>

#include "isa/validate.h"
#include "sim/core_io.h"
#include "sim/describe.h"
#include "sim/hazards.h"
#include "sim/ops.h"
#include "sim/ops_executor.h"

namespace trnsim::sim {

static_assert(std::endian::native == std::endian::little,
              "the simulated memories are little-endian and are accessed with memcpy");

namespace {

struct QueueState {
  isa::QueueId id;
  std::vector<std::size_t> instructions;  // program indices, in order
  std::size_t next = 0;                   // position of the next instruction to start
  bool busy = false;                      // occupied by its last started instruction
  VectorClock clock;                      // happens-before knowledge of this queue
  bool finished() const { return next == instructions.size() && !busy; }
};

// One signal's effect on a semaphore, for the hazard detector: the value it produced and
// the join of the clocks of every signal up to and including it.
struct SignalRecord {
  std::uint32_t value;
  VectorClock clock;
};

enum class EventKind : std::uint8_t { kComplete, kQueueFree };

struct Event {
  Duration time;
  std::uint32_t queue;
  std::size_t index;
  EventKind kind;
  // std::priority_queue pops the largest, so "later" compares greater.
  friend bool operator<(const Event& a, const Event& b) {
    if (a.time != b.time) return a.time > b.time;
    if (a.queue != b.queue) return a.queue > b.queue;
    if (a.index != b.index) return a.index > b.index;
    return a.kind > b.kind;
  }
};

SimError instruction_error(const isa::Program& program, std::size_t index, std::string why) {
  const isa::Instruction& inst = program.instructions[index];
  return SimError(index, std::string(isa::op_name(inst.op)), inst.origin, std::move(why));
}

void validate(const isa::Program& program, const arch::ChipConfig& chip) {
  std::vector<isa::Violation> violations;
  for (std::size_t i = 0; i < program.instructions.size(); ++i) {
    auto found = isa::check_instruction(program.instructions[i], i, chip);
    violations.insert(violations.end(), std::make_move_iterator(found.begin()),
                      std::make_move_iterator(found.end()));
  }
  if (violations.empty()) return;
  std::string why = fmt::format("the program breaks {} ISA rule{}:", violations.size(),
                                violations.size() == 1 ? "" : "s");
  for (const auto& v : violations) why += "\n  " + v.to_string();
  throw SimError(violations.front().index, violations.front().op, violations.front().origin, why);
}

void run_custom_op(const isa::CustomOp& op, CoreOperandIO& io) {
  const std::optional<CustomOpEntry> entry = find_custom_op(op.op);
  if (!entry) io.fail(fmt::format("custom operator '{}' is not registered", op.op));
  std::vector<Tile> inputs;
  inputs.reserve(op.inputs.size());
  for (const auto& ap : op.inputs) inputs.push_back(io.load(ap));
  std::vector<Tile> outputs(op.outputs.size());
  for (std::size_t i = 0; i < op.outputs.size(); ++i) {
    outputs[i].partitions = op.outputs[i].partitions;
    outputs[i].free = free_element_count(op.outputs[i]);
    outputs[i].values.assign(outputs[i].partitions * outputs[i].free, 0.0f);
  }
  entry->fn(inputs, outputs, op.params);
  for (std::size_t i = 0; i < op.outputs.size(); ++i) {
    const Tile& t = outputs[i];
    if (t.partitions != op.outputs[i].partitions || t.free != free_element_count(op.outputs[i]) ||
        t.values.size() != t.partitions * t.free)
      io.fail(fmt::format("custom operator '{}' reshaped output {}", op.op, i));
    io.store(op.outputs[i], t);
  }
}

// Runs the data semantics of one instruction.
void execute(const isa::Instruction& inst, CoreOperandIO& io, const Device& device) {
  std::visit(
      [&](const auto& op) {
        using Op = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<Op, isa::NcMatmul>) {
          execute_matmul(op, io);
        } else if constexpr (std::is_same_v<Op, isa::NcMatmulMx>) {
          execute_matmul_mx(op, io);
        } else if constexpr (std::is_same_v<Op, isa::NcTranspose>) {
          if (inst.queue.engine == isa::Engine::kTensor) {
            execute_tensor_transpose(op, io);
          } else if (!execute_elementwise(inst.op, io)) {
            io.fail("not implemented on this engine");
          }
        } else if constexpr (std::is_same_v<Op, isa::DmaCopy>) {
          execute_dma_copy(op, io);
        } else if constexpr (std::is_same_v<Op, isa::DmaTranspose>) {
          execute_dma_transpose(op, io);
        } else if constexpr (std::is_same_v<Op, isa::DmaIndirect>) {
          execute_dma_indirect(op, io);
        } else if constexpr (std::is_same_v<Op, isa::SemaphoreOp>) {
          // Only its waits and signals matter.
        } else if constexpr (std::is_same_v<Op, isa::CoreBarrier>) {
          // One core per run: a barrier among 1 core is trivially passed; more cores need the
          // multi-core launch (logical cores), which this executor does not drive yet.
          if (op.num_cores > 1)
            io.fail(
                fmt::format("core_barrier among {} cores, but this run drives 1 core of a "
                            "{}-core device (multi-core launch is not supported yet)",
                            op.num_cores, device.num_cores()));
        } else if constexpr (std::is_same_v<Op, isa::CustomOp>) {
          run_custom_op(op, io);
        } else {
          if (!execute_elementwise(inst.op, io)) io.fail("not implemented in the simulator");
        }
      },
      inst.op);
}

class Executor {
 public:
  Executor(Device& device, const isa::Program& program, const RunOptions& options)
      : device_(device), program_(program), options_(options) {
    if (options.core < 0 || options.core >= device.num_cores())
      throw SimError(fmt::format("run: core {} requested on a {}-core device", options.core,
                                 device.num_cores()));
    core_ = &device.core(options.core);
    cost_ = options.cost_model != nullptr ? options.cost_model : &unit_cost_;
    seed_ = options.seed.value_or(program.seed);
  }

  RunResult run() {
    validate(program_, device_.chip());
    build_queues();
    core_->semaphores().fill(0);
    core_->seed_rng(seed_);
    result_.times.assign(program_.instructions.size(), {});
    if (options_.check_hazards) hazards_.emplace(queues_.size());

    start_ready(0);
    while (!events_.empty()) {
      const Event event = events_.top();
      events_.pop();
      now_ = event.time;
      if (event.kind == EventKind::kComplete) {
        complete(event.index);
      } else {
        queues_[event.queue].busy = false;
      }
      start_ready(now_);
    }
    for (const auto& q : queues_)
      if (!q.finished()) report_deadlock();

    result_.semaphores = core_->semaphores();
    result_.end_time = now_;
    for (const auto& q : queues_) result_.queues.push_back({q.id, q.next});
    return std::move(result_);
  }

 private:
  void build_queues() {
    for (std::size_t i = 0; i < program_.instructions.size(); ++i) {
      const isa::QueueId id = program_.instructions[i].queue;
      auto it = std::find_if(queues_.begin(), queues_.end(),
                             [&](const QueueState& q) { return q.id == id; });
      if (it == queues_.end()) {
        queues_.push_back(QueueState{id, {}, 0, false, {}});
        it = std::prev(queues_.end());
      }
      it->instructions.push_back(i);
    }
    for (auto& q : queues_) q.clock.assign(queues_.size(), 0);
    in_flight_clock_.resize(program_.instructions.size());
  }

  bool waits_hold(const isa::Instruction& inst) const {
    const auto& sems = core_->semaphores();
    return std::all_of(inst.waits.begin(), inst.waits.end(),
                       [&](const isa::SemWait& w) { return sems[w.sem] >= w.value; });
  }

  // Starts, in queue order, every queue head that may start at `time`.
  void start_ready(Duration time) {
    for (std::uint32_t q = 0; q < queues_.size(); ++q) {
      QueueState& queue = queues_[q];
      if (queue.busy || queue.next == queue.instructions.size()) continue;
      const std::size_t index = queue.instructions[queue.next];
      if (!waits_hold(program_.instructions[index])) continue;
      start(q, index, time);
    }
  }

  void start(std::uint32_t q, std::size_t index, Duration time) {
    if (options_.max_steps != 0 && result_.instructions_executed >= options_.max_steps)
      throw instruction_error(program_, index,
                              fmt::format("step limit of {} instructions reached before this "
                                          "instruction could start",
                                          options_.max_steps));
    const isa::Instruction& inst = program_.instructions[index];
    QueueState& queue = queues_[q];
    ++queue.next;
    queue.busy = true;
    ++result_.instructions_executed;

    if (hazards_) {
      // The waits order us after every signal that brought each semaphore to its value.
      for (const isa::SemWait& w : inst.waits) {
        if (w.value == 0) continue;
        const auto& history = signals_[w.sem];
        const auto reached =
            std::lower_bound(history.begin(), history.end(), w.value,
                             [](const SignalRecord& r, std::uint32_t v) { return r.value < v; });
        if (reached != history.end()) join_into(queue.clock, reached->clock);
      }
      queue.clock[q] = static_cast<std::uint32_t>(queue.next);
      in_flight_clock_[index] = queue.clock;
      hazards_->record(instruction_accesses(inst), q, queue.clock[q], index, queue.clock, result_,
                       program_);
      if (result_.instructions_executed % kPruneInterval == 0) prune_hazard_history();
    }

    if (options_.functional) {
      CoreOperandIO io(device_, *core_, inst, index, seed_, options_.uninitialized);
      try {
        execute(inst, io, device_);
      } catch (const SimError&) {
        throw;
      } catch (const std::exception& e) {
        throw instruction_error(program_, index, e.what());
      }
    }

    const InstructionCost cost = cost_->cost(inst, index, time);
    result_.times[index] = {time, time + cost.latency, time + cost.occupancy};
    events_.push({time + cost.latency, q, index, EventKind::kComplete});
    events_.push({time + cost.occupancy, q, index, EventKind::kQueueFree});
  }

  void complete(std::size_t index) {
    const isa::Instruction& inst = program_.instructions[index];
    auto& sems = core_->semaphores();
    for (const isa::SemSignal& s : inst.signals) {
      sems[s.sem] += s.increment;
      if (!hazards_) continue;
      auto& history = signals_[s.sem];
      VectorClock clock = history.empty() ? VectorClock(queues_.size(), 0) : history.back().clock;
      join_into(clock, in_flight_clock_[index]);
      history.push_back({sems[s.sem], std::move(clock)});
    }
    if (hazards_) in_flight_clock_[index] = {};
  }

  void prune_hazard_history() {
    VectorClock lower_bound(queues_.size(), std::numeric_limits<std::uint32_t>::max());
    for (const auto& q : queues_) {
      if (q.next == q.instructions.size()) continue;  // starts nothing more
      for (std::size_t i = 0; i < lower_bound.size(); ++i)
        lower_bound[i] = std::min(lower_bound[i], q.clock[i]);
    }
    hazards_->prune(lower_bound);
  }

  [[noreturn]] void report_deadlock() {
    std::string why = "deadlock: no queue can proceed; blocked instructions:";
    std::size_t first_blocked = 0;
    bool have_first = false;
    const auto& sems = core_->semaphores();
    for (const auto& q : queues_) {
      if (q.next == q.instructions.size()) continue;
      const std::size_t index = q.instructions[q.next];
      if (!have_first) first_blocked = index, have_first = true;
      const isa::Instruction& inst = program_.instructions[index];
      why += fmt::format("\n  {} on queue {}", describe_instruction(inst, index), queue_name(q.id));
      for (const isa::SemWait& w : inst.waits)
        if (sems[w.sem] < w.value)
          why +=
              fmt::format(" waits for semaphore {} >= {} (it is {})", w.sem, w.value, sems[w.sem]);
    }
    throw instruction_error(program_, first_blocked, why);
  }

  static constexpr std::uint64_t kPruneInterval = 256;

  Device& device_;
  const isa::Program& program_;
  const RunOptions& options_;
  Core* core_ = nullptr;
  UnitCostModel unit_cost_;
  CostModel* cost_ = nullptr;
  std::uint32_t seed_ = 0;
  std::vector<QueueState> queues_;
  std::priority_queue<Event> events_;
  Duration now_ = 0;
  RunResult result_;
  std::optional<HazardDetector> hazards_;
  std::vector<VectorClock> in_flight_clock_;
  std::map<std::uint16_t, std::vector<SignalRecord>> signals_;
};

}  // namespace

RunResult run(Device& device, const isa::Program& program, const RunOptions& options) {
  return Executor(device, program, options).run();
}

}  // namespace trnsim::sim
