// The event loop: queues, semaphores, time, hazard tracking and dispatch of semantics.
//
// Queues are the distinct QueueIds of the program, numbered in order of first appearance;
// each runs its instructions in program order, one at a time until the cost model's
// occupancy has passed. An instruction starts as soon as its queue is free and every wait
// holds (semaphore >= value); its signals fire when its latency has passed. Semantics run
// atomically at the start, so for a race-free program the data does not depend on the
// costs. Several cores (run_cores) share one event loop: queues are numbered core by core,
// and events are ordered by (time, queue number = core then queue, instruction index), which
// makes runs reproducible bit for bit. core_barrier holds its queue until every participant
// of its generation has arrived.
//
// The preparation pass before the loop (validation, queues, packed waits and signals, the cost
// model's preparation) is executor_prepare.cpp.
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <exception>
#include <limits>
#include <map>

#include "isa/validate.h"
#include "sim/collective_calls.h"
#include "sim/core_io.h"
#include "sim/describe.h"
#include "sim/event_queue.h"
#include "sim/exchange.h"
#include "sim/executor_detail.h"
#include "sim/hazards.h"
#include "sim/ops.h"
#include "sim/ops_executor.h"
#include "util/huge_pages.h"

namespace trnsim::sim {

static_assert(std::endian::native == std::endian::little,
              "the simulated memories are little-endian and are accessed with memcpy");

namespace {

using namespace executor_detail;

SimError instruction_error(const isa::Program& program, std::size_t index, std::string why,
                           std::vector<util::Note> notes) {
  const isa::Instruction& inst = program.instructions[index];
  return SimError(index, std::string(isa::op_name(inst.op)), inst.origin, std::move(why),
                  std::move(notes));
}

}  // namespace

void execute_op(const isa::CustomOp& op, CoreOperandIO& io) {
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

namespace {

// Runs the data semantics of one instruction: the operation's execute_op overload where
// one exists, the elementwise semantics otherwise; sequencer operations only synchronise
// (their waits and signals, or the barrier the event loop holds the queue for), and control
// operations are run by the event loop (run_control), which owns the registers.
void execute(const isa::Instruction& inst, CoreOperandIO& io, const Device&) {
  std::visit(
      [&](const auto& op) {
        using Op = std::decay_t<decltype(op)>;
        if constexpr (Op::kClass == isa::OpClass::kSequencer) {
          return;
        } else if constexpr (Op::kClass == isa::OpClass::kControl) {
          io.fail("internal: a control operation reached the data path");
        } else if constexpr (Op::kClass == isa::OpClass::kTranspose) {
          if (inst.queue.engine == isa::Engine::kTensor) {
            execute_op(op, io);
          } else if (!execute_elementwise(inst.op, io)) {
            io.fail("not implemented on this engine");
          }
        } else if constexpr (requires { execute_op(op, io); }) {
          execute_op(op, io);
        } else if (!execute_elementwise(inst.op, io)) {
          io.fail("not implemented in the simulator");
        }
      },
      inst.op);
}

// One generation of a barrier id: the k-th arrival of every participating core.
struct BarrierArrival {
  std::uint32_t core;  // launch
  std::uint32_t queue;
  std::uint32_t id;  // of the start (Event)
  InstructionCost cost;
};
struct BarrierGeneration {
  std::uint32_t num_cores = 0;
  std::vector<BarrierArrival> arrivals;
};

class Executor {
 public:
  Executor(Device& device, std::span<const CoreProgram> launches, const RunOptions& options,
           bool multi_core)
      : device_(device), options_(options), multi_core_(multi_core) {
    if (launches.empty()) throw SimError("run_cores: no program launched");
    for (std::size_t i = 0; i < launches.size(); ++i) {
      const CoreProgram& l = launches[i];
      if (l.core < 0 || l.core >= device.num_cores())
        throw SimError(fmt::format("{}: core {} requested on a {}-core device",
                                   multi_core ? "run_cores" : "run", l.core, device.num_cores()));
      if (l.program == nullptr)
        throw SimError(fmt::format("run_cores: launch {} (core {}) has no program", i, l.core));
      if (l.program->instructions.size() > std::numeric_limits<std::uint32_t>::max())
        throw SimError(fmt::format("core {}: a program has at most 2^32 - 1 instructions", l.core));
      for (std::size_t j = 0; j < i; ++j) {
        if (launches[j].core == l.core)
          throw SimError(fmt::format("run_cores: core {} is launched twice (launches {} and {})",
                                     l.core, j, i));
        // A cost model holds the state of one core's run (and is prepared concurrently).
        if (l.cost_model != nullptr && launches[j].cost_model == l.cost_model)
          throw SimError(fmt::format(
              "run_cores: launches {} and {} share one cost model; give each core its own "
              "(sim::ChipTimingModel makes one per core)",
              j, i));
      }
      CoreRun run;
      run.physical = l.core;
      run.group = l.group;
      run.rank = static_cast<std::uint32_t>(
          std::count_if(launches.begin(), launches.begin() + static_cast<std::ptrdiff_t>(i),
                        [&](const CoreProgram& o) { return o.group == l.group; }));
      run.core = &device.core(l.core);
      run.program = l.program;
      run.cost = l.cost_model != nullptr ? l.cost_model : &unit_cost_;
      run.seed = options.seed.value_or(l.program->seed);
      cores_.push_back(std::move(run));
      ranks_ = std::max(ranks_, static_cast<std::uint32_t>(std::max(l.group, 0)) + 1);
    }
  }

  MultiRunResult run() {
    if (util::Progress* progress = options_.progress; progress != nullptr) {
      std::uint64_t total = 0;
      for (const CoreRun& c : cores_) total += c.program->instructions.size();
      progress->done.store(0, std::memory_order_relaxed);
      progress->total.store(total, std::memory_order_relaxed);
      progress->enter(util::Progress::Phase::kSimulating);
    }
    prepare_queues(cores_, queues_, device_, options_, multi_core_, &unit_cost_);
    step_limit_ = options_.max_steps;
    for (CoreRun& c : cores_) {
      if (c.looping) {
        c.runs.assign(c.info.size(), 0);
        if (step_limit_ == 0) step_limit_ = RunOptions::kLoopStepLimit;
      }
      c.core->semaphores().fill(0);
      c.core->reset_engine_state(c.seed);
      util::assign_huge(c.result.times, c.program->instructions.size());
    }
    if (options_.check_hazards) {
      std::vector<HazardCore> hc;
      for (const CoreRun& c : cores_) hc.push_back({c.program, c.physical});
      hazards_.emplace(std::move(hc), multi_core_);
    }

    for (std::uint32_t q = 0; q < queues_.size(); ++q) try_start(q, 0);
    while (!events_.empty()) {
      const Event event = events_.pop();
      now_ = event.time;
      const std::uint32_t q = event.queue();
      CoreRun& c = cores_[queues_[q].core];
      c.result.end_time = now_;
      if (event.kind() == EventKind::kQueueFree) {
        queues_[q].busy = false;
        release(c, event.id());
        try_start(q, now_);
        continue;
      }
      complete(c, event.id());
      if (event.kind() == EventKind::kComplete) release(c, event.id());
      // Semaphores of this core changed: its waiting queues may start now, in queue order.
      start_waiting(c);
      if (event.kind() == EventKind::kCompleteAndFree) {
        // The kQueueFree event it stands for sorts right after this one unless starts just
        // made (of zero cost) sort before it: then it is queued after them as such.
        const Event freed{event.time, q, event.id(), EventKind::kQueueFree};
        if (events_.has_earlier(freed)) {
          events_.push(freed);
        } else {
          queues_[q].busy = false;
          release(c, event.id());
          try_start(q, now_);
        }
      }
    }
    for (const auto& q : queues_)
      if (!q.finished()) report_deadlock();

    MultiRunResult out;
    for (CoreRun& c : cores_) {
      c.result.semaphores = c.core->semaphores();
      for (std::uint32_t q = c.first_queue; q < c.end_queue; ++q)
        c.result.queues.push_back({queues_[q].id, queues_[q].starts});
      out.end_time = std::max(out.end_time, c.result.end_time);
      out.cores.push_back(std::move(c.result));
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const CoreRun& c, std::size_t index, std::string why,
                         std::vector<util::Note> notes = {}) {
    fail_at(c, index, std::move(why), multi_core_, std::move(notes));
  }

  static bool waits_hold(const CoreRun& c, const Queue& queue, std::size_t index) {
    const CoreRun::Info& info = c.info[index];
    const auto& sems = c.core->semaphores();
    const isa::SemWait* w = c.chunk_of(index).waits.data() + info.first_wait;
    if (info.relative_waits) [[unlikely]] {
      for (std::uint32_t k = 0; k < info.waits; ++k)
        if (std::int64_t{sems[w[k].sem]} < wait_target(w[k], queue.regs)) return false;
      return true;
    }
    for (std::uint32_t k = 0; k < info.waits; ++k)
      if (sems[w[k].sem] < w[k].value) return false;
    return true;
  }

  // Starts the head of queue `q` if it is free and its waits hold.
  void try_start(std::uint32_t q, Duration time) {
    Queue& queue = queues_[q];
    if (queue.busy || queue.next == queue.instructions.size()) return;
    CoreRun& c = cores_[queue.core];
    const std::size_t index = queue.instructions[queue.next];
    const std::uint64_t bit = std::uint64_t{1} << ((q - c.first_queue) & 63);
    if (!waits_hold(c, queue, index)) {
      c.waiting |= bit;
      return;
    }
    c.waiting &= ~bit;
    start(c, q, index, time);
  }

  // After a completion on core `c`: tries, in queue order, every queue that may start now.
  // Busy queues and queues with nothing left cannot, so only the waiting ones are tried.
  void start_waiting(CoreRun& c) {
    if (!c.few_queues) {
      for (std::uint32_t q = c.first_queue; q < c.end_queue; ++q) try_start(q, now_);
      return;
    }
    for (std::uint64_t pending = c.waiting; pending != 0; pending &= pending - 1)
      try_start(c.first_queue + static_cast<std::uint32_t>(std::countr_zero(pending)), now_);
  }

  void push_event(Duration time, std::uint32_t q, std::uint32_t id, EventKind kind) {
    events_.push({time, q, id, kind});
  }

  // Runs `f` for instruction `index`, turning an exception other than a SimError into the
  // instruction's error.
  template <class F>
  void guarded(const CoreRun& c, std::size_t index, F&& f) {
    try {
      attributed(c, multi_core_, f);
    } catch (const SimError&) {
      throw;
    } catch (const std::exception& e) {
      fail(c, index, e.what());
    }
  }

  void start(CoreRun& c, std::uint32_t q, std::size_t index, Duration time) {
    if (step_limit_ != 0 && steps_ >= step_limit_) [[unlikely]]
      fail(c, index, step_limit_message());
    const CoreRun::Info& info = c.info[index];
    const isa::Instruction* inst = &c.program->instructions[index];
    Queue& queue = queues_[q];
    ++queue.next;
    queue.busy = true;
    queue.current = static_cast<std::uint32_t>(index);
    ++queue.starts;
    ++steps_;
    ++c.result.instructions_executed;
    std::uint32_t run = 0;
    if (c.looping) [[unlikely]] {
      run = c.runs[index]++;
      if (run == std::numeric_limits<std::uint32_t>::max())
        fail(c, index, "an instruction runs at most 2^32 - 1 times");
    }
    std::string moved;  // what the registers moved, for the errors of the run
    if (info.dynamic) [[unlikely]] {
      guarded(c, index, [&] {
        moved = resolve_operands(*inst, index, queue.regs, device_.chip(), resolved_,
                                 c.result.moved_offsets);
      });
      inst = &resolved_;
    }
    const std::uint32_t id = c.looping ? take_slot(c, index) : static_cast<std::uint32_t>(index);
    if (info.relative_waits && c.looping)
      for (const isa::SemWait& w : inst->waits)
        if (w.base.present()) c.result.wait_targets.push_back(wait_target(w, queue.regs));

    if (hazards_) {
      // The waits order us after every signal that brought each semaphore to its value.
      for (const isa::SemWait& w : inst->waits) {
        const std::int64_t target = wait_target(w, queue.regs);
        if (target <= 0) continue;
        const auto& history = c.signals[w.sem];
        const auto reached =
            std::lower_bound(history.begin(), history.end(), target,
                             [](const SignalRecord& r, std::int64_t v) { return r.value < v; });
        if (reached != history.end()) join_into(queue.clock, reached->clock);
      }
      if (queue.starts > std::numeric_limits<std::uint32_t>::max()) [[unlikely]]
        fail(c, index,
             "the hazard detector counts at most 2^32 - 1 starts per queue; run this loop "
             "without hazard checking");
      queue.clock[q] = static_cast<std::uint32_t>(queue.starts);
      c.in_flight_clock[id] = queue.clock;
      attributed(c, multi_core_, [&] {
        hazards_->record(instruction_accesses(*inst), queue.core, q, queue.clock[q], index,
                         queue.clock, c.result);
      });
      if (steps_ % kPruneInterval == 0) prune_hazard_history();
    }

    std::optional<std::uint32_t> jump;  // a taken branch's target
    detail::CollectiveInputs sent;      // a sendrecv's src (.src), a collective's inputs
    if (options_.functional) {
      CoreOperandIO io(device_, *c.core, *inst, index, c.seed, options_.uninitialized,
                       &options_.name_memory, run);
      try {
        guarded(c, index, [&] {
          if (info.control) {
            jump = run_control(*inst, queue.regs, &io, c.group, static_cast<std::int32_t>(ranks_));
          } else if (info.exchange) {
            sent.src = io.load_bytes(std::get<isa::SendRecv>(inst->op).src);  // moves on pairing
          } else if (info.collective) {
            sent = detail::load_inputs(io, std::get<isa::Collective>(inst->op));
          } else {
            execute(*inst, io, device_);
          }
        });
      } catch (const SimError& e) {
        if (moved.empty()) throw;
        throw with_moved_operands(e, moved);
      }
    } else if (info.control) {
      guarded(c, index, [&] {
        jump = run_control(*inst, queue.regs, nullptr, c.group, static_cast<std::int32_t>(ranks_));
      });
    }
    if (jump) queue.next = c.position[*jump];

    if (c.looping) {
      c.slots[id].record = static_cast<std::uint32_t>(c.result.executions.size());
      c.result.executions.push_back({static_cast<std::uint32_t>(index), run, {}});
    }
    if (info.exchange) {
      exchange_start(c, q, id, index, *inst, std::move(sent.src), time);
      return;
    }
    if (info.collective) {
      collective_start(c, q, id, index, *inst, std::move(sent), time);
      return;
    }
    const InstructionCost cost =
        checked_cost(c, index, *inst, info.dynamic ? CostModel::kResolved : index, time);
    if (info.barrier) {
      arrive(c, std::get<isa::CoreBarrier>(inst->op), q, id, time, cost);
      return;
    }
    record_time(c, id, {time, time + cost.latency, time + cost.occupancy});
    schedule(c, q, id, time + cost.latency, time + cost.occupancy, cost.latency == cost.occupancy);
  }

  // A cost model is user code: a negative, infinite or NaN cost would run time backwards or
  // stop it, silently.
  InstructionCost checked_cost(CoreRun& c, std::size_t index, const isa::Instruction& inst,
                               std::size_t cost_index, Duration time) {
    const InstructionCost cost = c.cost->cost(inst, cost_index, time);
    constexpr Duration kForever = std::numeric_limits<Duration>::infinity();
    if (!(cost.occupancy >= 0 && cost.occupancy < kForever && cost.latency >= 0 &&
          cost.latency < kForever)) [[unlikely]]
      fail(c, index,
           fmt::format("the cost model gave occupancy {} and latency {}; costs must be finite "
                       "and non-negative",
                       cost.occupancy, cost.latency));
    return cost;
  }

  // A sendrecv reached the head of its queue: it keeps the queue until both its transfers
  // are done, and each transfer begins once its sender and receiver have both started.
  void exchange_start(CoreRun& c, std::uint32_t q, std::uint32_t id, std::size_t index,
                      const isa::Instruction& inst, std::vector<std::uint8_t> sent, Duration time) {
    record_time(c, id, {time, time, time});
    detail::ExchangeParty party;
    party.core = static_cast<std::uint32_t>(&c - cores_.data());
    party.queue = q;
    party.id = id;
    party.index = index;
    party.inst = inst;
    party.bytes = std::move(sent);
    party.started = time;
    for (const detail::Exchanges::Transfer& t :
         exchanges_.arrive(c.group, c.rank, std::move(party)))
      transfer(t, time);
  }

  // One transfer of a sendrecv pair, timed on the sender's DMA engines from `now` (an
  // SBUF -> SBUF copy); the receiver's dst holds the data from then on.
  void transfer(const detail::Exchanges::Transfer& t, Duration now) {
    detail::ExchangeParty& from = exchanges_.party(t.sender);
    detail::ExchangeParty& to = exchanges_.party(t.receiver);
    CoreRun& sender = cores_[from.core];
    CoreRun& receiver = cores_[to.core];
    const auto& src = std::get<isa::SendRecv>(from.inst.op).src;
    const auto& dst = std::get<isa::SendRecv>(to.inst.op).dst;
    if (src.dtype != dst.dtype || src.partitions != dst.partitions ||
        src.free_elements() != dst.free_elements())
      fail(receiver, to.index,
           fmt::format("sendrecv receives {}[{}, {}] from core {} into dst {}[{}, {}]; the sent "
                       "and received tiles must have the same dtype and shape",
                       numerics::name(src.dtype), src.partitions, src.free_elements(),
                       sender.physical, numerics::name(dst.dtype), dst.partitions,
                       dst.free_elements()),
           {{from.inst.origin, fmt::format("core {} sends it here", sender.physical)}});
    const InstructionCost cost =
        checked_cost(sender, from.index, from.inst, CostModel::kResolved, now);
    if (options_.functional) {
      CoreOperandIO io(device_, *receiver.core, to.inst, to.index, receiver.seed,
                       options_.uninitialized, &options_.name_memory);
      guarded(receiver, to.index, [&] { io.store_bytes(dst, from.bytes); });
      std::vector<std::uint8_t>().swap(from.bytes);
    }
    if (hazards_) {
      // What the sender did before its sendrecv happens before what the receiver does after
      // its own completes (as at a barrier).
      join_into(receiver.in_flight_clock[to.id], sender.in_flight_clock[from.id]);
      join_into(queues_[to.queue].clock, sender.in_flight_clock[from.id]);
    }
    for (detail::ExchangeParty* p : {&from, &to})
      if (p->transfer_start < 0) p->transfer_start = now;
    from.sent_at = now + cost.latency;
    to.received_at = now + cost.latency;
    finish_exchange(t.sender);
    if (t.receiver != t.sender) finish_exchange(t.receiver);
  }

  void finish_exchange(std::size_t i) {
    const detail::ExchangeParty& p = exchanges_.party(i);
    if (!p.complete()) return;
    const Duration end = std::max(p.sent_at, p.received_at);
    CoreRun& c = cores_[p.core];
    record_time(c, p.id, {p.transfer_start, end, end});
    schedule(c, p.queue, p.id, end, end, true);
    exchanges_.release(i);
  }

  // A collective reached the head of its queue: it keeps the queue until the collective engine
  // has run it among every member of its set.
  void collective_start(CoreRun& c, std::uint32_t q, std::uint32_t id, std::size_t index,
                        const isa::Instruction& inst, detail::CollectiveInputs inputs,
                        Duration time) {
    record_time(c, id, {time, time, time});
    if (options_.collectives == nullptr)
      fail(c, index,
           "a collective needs a launch of ranks with a collective engine "
           "(runtime::launch_ranks or launch_system)");
    const auto core = static_cast<std::uint32_t>(&c - cores_.data());
    detail::CollectiveArrival a{core, q, id, index, inst, std::move(inputs), time};
    isa::Origin first{};
    std::optional<std::vector<detail::CollectiveArrival>> set;
    try {
      set = collectives_.arrive(static_cast<std::uint32_t>(c.group), c.rank, ranks_, std::move(a),
                                &first);
    } catch (const std::invalid_argument& e) {
      fail(c, index, e.what(),
           !first.known() ? std::vector<util::Note>{}
                          : std::vector<util::Note>{{first, "the call it meets"}});
    }
    if (set) run_collective(*set);
  }

  // Runs a collective whose members have all arrived: the engine computes and times it, each
  // member's dst takes its data and its call completes when the engine says.
  void run_collective(std::vector<detail::CollectiveArrival>& set) {
    std::vector<CollectiveMember> members(set.size());
    for (std::size_t k = 0; k < set.size(); ++k) {
      members[k].rank = cores_[set[k].core].group;
      members[k].op = &std::get<isa::Collective>(set[k].inst.op);
      members[k].src = std::move(set[k].inputs.src);
      members[k].src1 = std::move(set[k].inputs.src1);
      members[k].metadata = std::move(set[k].inputs.metadata);
      members[k].arrived = set[k].time;
    }
    Duration last_arrival = 0;
    for (const detail::CollectiveArrival& a : set) last_arrival = std::max(last_arrival, a.time);
    CoreRun& last = cores_[set.back().core];
    std::vector<Duration> ends;
    guarded(last, set.back().index, [&] {
      ends = options_.collectives->run(members, static_cast<int>(ranks_), options_.functional);
      if (ends.size() != members.size())
        throw std::logic_error("the collective engine gave a time per member");
    });
    for (std::size_t k = 0; k < set.size(); ++k) {
      CoreRun& c = cores_[set[k].core];
      if (options_.functional) {
        CoreOperandIO io(device_, *c.core, set[k].inst, set[k].index, c.seed,
                         options_.uninitialized, &options_.name_memory);
        guarded(c, set[k].index, [&] { detail::store_outputs(io, *members[k].op, members[k]); });
      }
      if (hazards_)  // what every member did before the call happens before what each does after
        for (const detail::CollectiveArrival& other : set)
          join_into(queues_[set[k].queue].clock, cores_[other.core].in_flight_clock[other.id]);
      // Like a sendrecv's, the call's time starts when the collective does (the last
      // arrival): the wait for the others before it is a stall, not work.
      const Duration end = std::max(ends[k], last_arrival);
      record_time(c, set[k].id, {last_arrival, end, end});
      schedule(c, set[k].queue, set[k].id, end, end, true);
    }
  }

  // The times of the start with id `id`: its instruction's (the last run's) and, in a
  // program with control flow, its execution's.
  static void record_time(CoreRun& c, std::uint32_t id, const InstructionTime& t) {
    c.result.times[c.index_of(id)] = t;
    if (c.looping) c.result.executions[c.slots[id].record].time = t;
  }

  // The completion and queue release of start `id`: one event when they coincide by cost
  // (`together`), as a transfer's do.
  void schedule(CoreRun& c, std::uint32_t q, std::uint32_t id, Duration end,
                Duration occupied_until, bool together) {
    if (c.looping) c.slots[id].pending = together ? 1 : 2;
    if (together) {
      push_event(end, q, id, EventKind::kCompleteAndFree);
      return;
    }
    push_event(end, q, id, EventKind::kComplete);
    push_event(occupied_until, q, id, EventKind::kQueueFree);
  }

  // An execution slot for a start of instruction `index` (programs with control flow).
  std::uint32_t take_slot(CoreRun& c, std::size_t index) const {
    std::uint32_t id = 0;
    if (!c.free_slots.empty()) {
      id = c.free_slots.back();
      c.free_slots.pop_back();
    } else {
      id = static_cast<std::uint32_t>(c.slots.size());
      c.slots.emplace_back();
      if (hazards_) c.in_flight_clock.emplace_back();
    }
    c.slots[id].index = static_cast<std::uint32_t>(index);
    return id;
  }

  // One of the events of start `id` has happened; the slot is free after the last.
  static void release(CoreRun& c, std::uint32_t id) {
    if (c.looping && --c.slots[id].pending == 0) c.free_slots.push_back(id);
  }

  std::string step_limit_message() const {
    std::string why = fmt::format(
        "step limit of {} instruction starts reached before this instruction could start",
        step_limit_);
    if (options_.max_steps == 0)
      why +=
          " (the default for a program with control flow: does a loop never end? "
          "RunOptions::max_steps, or --max-steps, sets another limit)";
    return why;
  }

  // A core reaches a barrier: its k-th arrival at this id joins generation k. The queue stays
  // occupied until the generation is complete; then every participant completes together.
  void arrive(CoreRun& c, const isa::CoreBarrier& barrier, std::uint32_t q, std::uint32_t id,
              Duration time, InstructionCost cost) {
    const std::size_t index = c.index_of(id);
    const std::uint32_t generation = c.barrier_arrivals[barrier.barrier_id]++;
    auto& generations = barriers_[{c.group, barrier.barrier_id}];
    if (generations.size() <= generation) generations.resize(generation + 1);
    BarrierGeneration& g = generations[generation];
    if (g.num_cores == 0) g.num_cores = barrier.num_cores;
    if (g.num_cores != barrier.num_cores) {
      const BarrierArrival& first = g.arrivals.front();
      const CoreRun& other_core = cores_[first.core];
      const std::size_t other_index = other_core.index_of(first.id);
      const isa::Instruction& other = other_core.program->instructions[other_index];
      fail(c, index,
           fmt::format("core_barrier {} generation {} among {} cores, but core {} reached it as a "
                       "barrier among {} cores ({})",
                       barrier.barrier_id, generation, barrier.num_cores,
                       cores_[first.core].physical, g.num_cores,
                       describe_instruction(other, other_index)),
           {{other.origin, fmt::format("core {} reached it here", cores_[first.core].physical)}});
    }
    record_time(c, id, {time, time, time});
    g.arrivals.push_back({queues_[q].core, q, id, cost});
    if (g.arrivals.size() < g.num_cores) return;

    // Release: everyone proceeds from now; with hazard checking, every participant's later
    // work is ordered after everything the participants did before the barrier.
    VectorClock joined;
    if (hazards_) {
      joined.assign(queues_.size(), 0);
      for (const BarrierArrival& a : g.arrivals)
        join_into(joined, cores_[a.core].in_flight_clock[a.id]);
    }
    for (const BarrierArrival& a : g.arrivals) {
      CoreRun& p = cores_[a.core];
      const InstructionTime& arrived = p.result.times[p.index_of(a.id)];
      const InstructionTime t{arrived.start, time + a.cost.latency, time + a.cost.occupancy};
      record_time(p, a.id, t);
      if (hazards_) {
        p.in_flight_clock[a.id] = joined;
        join_into(queues_[a.queue].clock, joined);
      }
      schedule(p, a.queue, a.id, t.end, t.occupied_until, false);
    }
    g.arrivals.clear();
  }

  void complete(CoreRun& c, std::uint32_t id) {
    const std::size_t index = c.index_of(id);
    if (util::Progress* progress = options_.progress; progress != nullptr) {
      const std::uint64_t done = progress->done.fetch_add(1, std::memory_order_relaxed) + 1;
      // A loop runs more instructions than its program has: the total grows with them.
      if (c.looping && done > progress->total.load(std::memory_order_relaxed))
        progress->total.store(done, std::memory_order_relaxed);
    }
    auto& sems = c.core->semaphores();
    const CoreRun::Info& info = c.info[index];
    const isa::SemSignal* signal = c.chunk_of(index).signals.data() + info.first_signal;
    for (std::uint32_t k = 0; k < info.signals; ++k) {
      const isa::SemSignal& s = signal[k];
      if (s.increment > std::numeric_limits<std::uint32_t>::max() - sems[s.sem])
        fail(c, index,
             fmt::format("semaphore {} overflows: {} + {} is above 2^32 - 1 (a counter that "
                         "wrapped would make later waits wrong)",
                         s.sem, sems[s.sem], s.increment));
      sems[s.sem] += s.increment;
      if (!hazards_) continue;
      auto& history = c.signals[s.sem];
      VectorClock clock = history.empty() ? VectorClock(queues_.size(), 0) : history.back().clock;
      join_into(clock, c.in_flight_clock[id]);
      history.push_back({sems[s.sem], std::move(clock)});
    }
    if (hazards_) c.in_flight_clock[id] = {};
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

  // The first blocked instruction is the error; every blocked instruction is a note at its
  // own line saying what it waits for.
  [[noreturn]] void report_deadlock() {
    std::vector<util::Note> blocked;
    const CoreRun* first_core = nullptr;
    std::size_t first_blocked = 0;
    for (const auto& q : queues_) {
      if (q.finished()) continue;
      const CoreRun& c = cores_[q.core];
      const std::string prefix = multi_core_ ? fmt::format("core {}: ", c.physical) : "";
      // Only a barrier or a sendrecv keeps a queue busy with no event pending.
      const std::size_t index = q.busy ? q.current : q.instructions[q.next];
      if (first_core == nullptr) first_core = &c, first_blocked = index;
      const isa::Instruction& inst = c.program->instructions[index];
      std::string what = fmt::format("{}{} on queue {}", prefix, describe_instruction(inst, index),
                                     queue_name(q.id));
      if (q.busy && std::holds_alternative<isa::Collective>(inst.op)) {
        what += collectives_.status(q.core, index);
      } else if (q.busy && std::holds_alternative<isa::SendRecv>(inst.op)) {
        std::vector<int> physical_of_rank;
        for (const CoreRun& o : cores_)
          if (o.group == c.group) physical_of_rank.push_back(o.physical);
        what += exchanges_.status(q.core, index, physical_of_rank);
      } else if (q.busy) {
        const auto& barrier = std::get<isa::CoreBarrier>(inst.op);
        what += fmt::format(" waits at core_barrier {}", barrier.barrier_id);
        what += barrier_status(barrier, c);
      } else {
        const auto& sems = c.core->semaphores();
        for (const isa::SemWait& w : inst.waits) {
          const std::int64_t target = wait_target(w, q.regs);
          if (std::int64_t{sems[w.sem]} >= target) continue;
          const std::string counted =
              w.base.present()
                  ? fmt::format("r{}{:+} = ", w.base.index, static_cast<std::int32_t>(w.value))
                  : "";
          what += fmt::format(" waits for semaphore {} >= {}{} (it is {})", w.sem, counted, target,
                              sems[w.sem]);
        }
      }
      blocked.push_back({inst.origin, std::move(what)});
    }
    const std::size_t count = blocked.size();
    fail(*first_core, first_blocked,
         fmt::format("deadlock: no queue can proceed ({} blocked instruction{}, each in a note)",
                     count, count == 1 ? "" : "s"),
         std::move(blocked));
  }

  // "(generation 0: 1 of 2 cores arrived: core 0; not arrived: core 1, core 2)"
  std::string barrier_status(const isa::CoreBarrier& barrier, const CoreRun& waiting) const {
    const auto it = barriers_.find({waiting.group, barrier.barrier_id});
    const std::uint32_t generation = waiting.barrier_arrivals.at(barrier.barrier_id) - 1;
    const BarrierGeneration& g = it->second[generation];
    std::string arrived, missing;
    for (std::size_t k = 0; k < cores_.size(); ++k) {
      if (cores_[k].group != waiting.group) continue;
      const bool here = std::any_of(g.arrivals.begin(), g.arrivals.end(),
                                    [&](const BarrierArrival& a) { return a.core == k; });
      std::string& list = here ? arrived : missing;
      list += fmt::format("{}core {}", list.empty() ? "" : ", ", cores_[k].physical);
    }
    return fmt::format(" (generation {}: {} of {} cores arrived: {}; not arrived: {})", generation,
                       g.arrivals.size(), g.num_cores, arrived, missing.empty() ? "none" : missing);
  }

  static constexpr std::uint64_t kPruneInterval = 256;

  Device& device_;
  const RunOptions& options_;
  bool multi_core_ = false;
  UnitCostModel unit_cost_;
  std::vector<CoreRun> cores_;
  std::vector<Queue> queues_;
  EventQueue events_;
  Duration now_ = 0;
  std::uint64_t steps_ = 0;
  std::uint64_t step_limit_ = 0;  // 0: none
  isa::Instruction resolved_;     // the running instruction with its registers applied
  std::optional<HazardDetector> hazards_;
  // By (group, barrier id).
  std::map<std::pair<int, std::uint32_t>, std::vector<BarrierGeneration>> barriers_;
  detail::Exchanges exchanges_;
  detail::CollectiveCalls collectives_;
  std::uint32_t ranks_ = 1;  // the launch's groups (CoreProgram::group 0 to ranks_ - 1)
};

}  // namespace

namespace executor_detail {

void fail_at(const CoreRun& c, std::size_t index, std::string why, bool multi_core,
             std::vector<util::Note> notes) {
  SimError e = instruction_error(*c.program, index, std::move(why), std::move(notes));
  if (multi_core) throw SimError(c.physical, e);
  throw e;
}

}  // namespace executor_detail

RunResult run(Device& device, const isa::Program& program, const RunOptions& options) {
  const CoreProgram launch{options.core, &program, options.cost_model};
  MultiRunResult result =
      Executor(device, std::span<const CoreProgram>(&launch, 1), options, false).run();
  return std::move(result.cores.front());
}

MultiRunResult run_cores(Device& device, std::span<const CoreProgram> launches,
                         const RunOptions& options) {
  return Executor(device, launches, options, true).run();
}

}  // namespace trnsim::sim
