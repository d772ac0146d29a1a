// The preparation pass of a run (executor_detail.h: prepare_queues): validation, queues, the
// packed waits and signals and the cost model's preparation, chunk by chunk on several threads.
#include <fmt/core.h>

#include <algorithm>
#include <exception>
#include <limits>

#include "isa/validate.h"
#include "sim/describe.h"
#include "sim/executor_detail.h"
#include "util/huge_pages.h"
#include "util/parallel.h"

namespace trnsim::sim::executor_detail {

namespace {

// Every violation of the ISA rules found in a program, as one error at the first of them with
// a note at each of the others.
[[noreturn]] void throw_violations(const std::vector<isa::Violation>& violations) {
  const isa::Violation& first = violations.front();
  std::vector<util::Note> others;
  for (std::size_t i = 1; i < violations.size(); ++i)
    others.push_back({violations[i].origin, violations[i].diagnostic().message});
  throw SimError(
      first.index, first.op, first.origin,
      fmt::format("the program breaks {} ISA rule{}, first: {}{}", violations.size(),
                  violations.size() == 1 ? "" : "s",
                  first.operand.empty() ? "" : "operand '" + first.operand + "': ", first.message),
      std::move(others));
}

// The pass before the run reads every (large) instruction once, from memory that is not in
// any cache: it waits on those reads. Fetching the lines it will read a few instructions
// ahead overlaps them: the variant index, queue, waits and signals at the end of an
// instruction and, when the pass reads them (validation, or a cost model's preparation),
// the operands at the head of its operation.
constexpr std::size_t kPrefetchAhead = 6;
inline void prefetch_instruction(const isa::Instruction& inst, bool operands) {
  constexpr std::size_t kLine = 64;
  const char* base = reinterpret_cast<const char*>(&inst);
  if (operands)
    for (std::size_t at = 0; at < std::min<std::size_t>(sizeof(isa::Operation), 6 * kLine);
         at += kLine)
      __builtin_prefetch(base + at);
  __builtin_prefetch(base + sizeof(isa::Operation) - 1);  // the variant's index
  __builtin_prefetch(reinterpret_cast<const char*>(&inst.waits));
  // The last byte of the vector object itself (its end pointer), not of its elements.
  constexpr std::size_t kVectorObjectBytes = sizeof(std::vector<isa::SemSignal>);
  __builtin_prefetch(reinterpret_cast<const char*>(&inst.signals) + kVectorObjectBytes - 1);
}

class Preparation {
 public:
  Preparation(std::vector<CoreRun>& cores, std::vector<Queue>& queues, const Device& device,
              const RunOptions& options, bool multi_core, const CostModel* unit_cost)
      : device_(device),
        options_(options),
        multi_core_(multi_core),
        unit_cost_(unit_cost),
        cores_(cores),
        queues_(queues) {}

  void build_queues() {
    struct Task {
      std::uint32_t core;
      std::uint32_t chunk;
    };
    std::vector<Task> tasks;
    for (std::uint32_t k = 0; k < cores_.size(); ++k) {
      CoreRun& c = cores_[k];
      const std::size_t n = c.program->instructions.size();
      util::assign_huge(c.info, n);
      c.chunks.resize((n + CostModel::kPrepareChunk - 1) / CostModel::kPrepareChunk);
      c.cost->begin_program(n);
      for (std::uint32_t i = 0; i < c.chunks.size(); ++i) tasks.push_back({k, i});
    }
    util::parallel_for(tasks.size(), util::resolve_threads(options_.threads),
                       [&](std::size_t t) { build_chunk(cores_[tasks[t].core], tasks[t].chunk); });

    std::vector<std::size_t> sizes;  // instructions of each queue of the run
    for (std::uint32_t k = 0; k < cores_.size(); ++k) {
      CoreRun& c = cores_[k];
      c.first_queue = static_cast<std::uint32_t>(queues_.size());
      std::vector<isa::Violation> violations;
      for (CoreRun::Chunk& chunk : c.chunks) {
        // A serial pass stops preparing at the first violation and throws at the first
        // preparation error before it.
        if (chunk.error && violations.empty()) std::rethrow_exception(chunk.error);
        violations.insert(violations.end(), std::make_move_iterator(chunk.violations.begin()),
                          std::make_move_iterator(chunk.violations.end()));
        chunk.violations.clear();
        if (!violations.empty()) continue;
        c.looping = c.looping || chunk.control;
        for (auto& [id, list] : chunk.queues) {
          std::uint32_t q = c.first_queue;
          while (q < queues_.size() && !(queues_[q].id == id)) ++q;
          if (q == queues_.size()) {
            if (queues_.size() == kMaxQueues)  // Event keeps a queue in 30 bits
              throw SimError(fmt::format("a run has at most {} queues", kMaxQueues));
            queues_.push_back(Queue{.id = id, .core = k});
            sizes.push_back(0);
          }
          sizes[q] += list.size();
        }
      }
      if (!violations.empty()) attributed(c, multi_core_, [&] { throw_violations(violations); });
      // Each queue's instructions, chunk by chunk, in one allocation.
      for (std::uint32_t q = c.first_queue; q < queues_.size(); ++q) {
        util::assign_huge(queues_[q].instructions, sizes[q]);
        queues_[q].instructions.clear();
      }
      for (CoreRun::Chunk& chunk : c.chunks) {
        for (auto& [id, list] : chunk.queues) {
          std::uint32_t q = c.first_queue;
          while (!(queues_[q].id == id)) ++q;
          queues_[q].instructions.insert(queues_[q].instructions.end(), list.begin(), list.end());
        }
        chunk.queues = {};
      }
      if (c.looping) find_loop_state(c);
      c.cost->end_program();
      c.end_queue = static_cast<std::uint32_t>(queues_.size());
      c.few_queues = c.end_queue - c.first_queue <= 64;
      if (options_.check_hazards) {
        // Looping programs key it by execution slot, grown as slots are made.
        if (!c.looping) c.in_flight_clock.resize(c.info.size());
        c.signals.resize(isa::kNumSemaphores);
      }
    }
    if (options_.check_hazards)
      for (auto& q : queues_) q.clock.assign(queues_.size(), 0);
  }

 private:
  [[noreturn]] void fail(const CoreRun& c, std::size_t index, std::string why) {
    fail_at(c, index, std::move(why), multi_core_);
  }

  // What a program with control flow needs besides: the position of each instruction in its
  // queue (a branch continues at a program index) and which instructions have operands
  // relative to a register. Without control flow every register stays 0, so such an
  // operand is where its static offset says, and straight-line programs skip this pass
  // (and the reads of every operand it costs).
  // It also checks, whether or not the run validates, what the run would otherwise index
  // out of range: registers, and branch targets (validate_program's rule, which a program
  // given straight to the simulator has not been through).
  void find_loop_state(CoreRun& c) {
    constexpr std::uint32_t kNowhere = UINT32_MAX;
    c.position.assign(c.info.size(), kNowhere);
    for (std::uint32_t q = c.first_queue; q < queues_.size(); ++q)
      for (std::uint32_t at = 0; at < queues_[q].instructions.size(); ++at)
        c.position[queues_[q].instructions[at]] = at;
    const auto& insts = c.program->instructions;
    for (std::size_t i = 0; i < insts.size(); ++i) {
      if (const std::string bad = bad_register(insts[i]); !bad.empty()) fail(c, i, bad);
      if (const auto* branch = std::get_if<isa::Branch>(&insts[i].op)) {
        if (branch->target >= insts.size())
          fail(c, i,
               fmt::format("branch target {}: the program has {} instructions", branch->target,
                           insts.size()));
        if (!(insts[branch->target].queue == insts[i].queue))
          fail(c, i,
               fmt::format("branch target {} is on queue {}, not the branch's own", branch->target,
                           queue_name(insts[branch->target].queue)));
      }
      isa::for_each_operand(insts[i].op, [&](const isa::AccessPattern& ap, const isa::OperandRef&) {
        c.info[i].dynamic = c.info[i].dynamic || ap.is_dynamic();
      });
    }
  }

  // A barrier among `b.num_cores` cores must be able to complete in this launch.
  void check_barrier(const CoreRun& c, std::size_t i, const isa::CoreBarrier& b) {
    if (b.num_cores <= 1) return;
    if (!multi_core_)
      fail(c, i,
           fmt::format("core_barrier among {} cores, but sim::run drives 1 core of a {}-core "
                       "device: a barrier needs a multi-core launch (sim::run_cores)",
                       b.num_cores, device_.num_cores()));
    const auto in_group = static_cast<std::size_t>(std::count_if(
        cores_.begin(), cores_.end(), [&](const CoreRun& o) { return o.group == c.group; }));
    if (b.num_cores > in_group)
      fail(c, i,
           fmt::format("core_barrier {} among {} cores, but only {} core{} launched{}",
                       b.barrier_id, b.num_cores, in_group, in_group == 1 ? " is" : "s are",
                       in_group < cores_.size() ? " in its group (its logical core)" : ""));
  }

  // A sendrecv's peers must be launched in its group (ranks are the group's cores in launch
  // order, the program ids of its logical core).
  void check_exchange(const CoreRun& c, std::size_t i, const isa::SendRecv& x) {
    const auto in_group = static_cast<std::uint32_t>(std::count_if(
        cores_.begin(), cores_.end(), [&](const CoreRun& o) { return o.group == c.group; }));
    for (const auto& [field, rank] : {std::pair{"send_to", x.send_to}, {"recv_from", x.recv_from}})
      if (rank >= in_group)
        fail(c, i,
             fmt::format("sendrecv {} core {} of its logical core, but {} core{} launched{}{}",
                         field, rank, in_group, in_group == 1 ? " is" : "s are",
                         in_group < cores_.size() ? " in its group" : "",
                         multi_core_ ? "" : " (a sendrecv between cores needs sim::run_cores)"));
  }

  // Validates and packs the instructions of one chunk of a core's program (one thread).
  void build_chunk(CoreRun& c, std::uint32_t k) {
    // Timing-only runs may skip validation when the caller vouches for the program.
    const bool validate = options_.validate || options_.functional;
    CoreRun::Chunk& chunk = c.chunks[k];
    const auto& insts = c.program->instructions;
    const std::size_t begin = std::size_t{k} << CostModel::kPrepareChunkShift;
    const std::size_t end = std::min(insts.size(), begin + CostModel::kPrepareChunk);
    chunk.waits.reserve(end - begin);  // most instructions wait and signal at most once
    chunk.signals.reserve(end - begin);
    bool packing = true;   // false after the chunk's first violation or error
    std::size_t last = 0;  // programs tend to repeat a queue: try the last one first
    const bool read_operands = validate || c.cost != unit_cost_;
    for (std::size_t i = begin; i < end; ++i) {
      if (i + kPrefetchAhead < end) prefetch_instruction(insts[i + kPrefetchAhead], read_operands);
      const isa::Instruction& inst = insts[i];
      if (validate) {
        std::vector<isa::Violation> found = isa::check_instruction(inst, i, device_.chip());
        if (!found.empty()) {
          // Collect every violation; nothing is prepared past the first (the run stops).
          chunk.violations.insert(chunk.violations.end(), std::make_move_iterator(found.begin()),
                                  std::make_move_iterator(found.end()));
          packing = false;
          continue;
        }
      }
      if (!packing) {
        if (!validate) break;
        continue;
      }
      try {
        if (!(last < chunk.queues.size() && chunk.queues[last].first == inst.queue)) {
          last = 0;
          while (last < chunk.queues.size() && !(chunk.queues[last].first == inst.queue)) ++last;
          if (last == chunk.queues.size())
            chunk.queues.emplace_back(inst.queue, std::vector<std::uint32_t>{});
        }
        chunk.queues[last].second.push_back(static_cast<std::uint32_t>(i));

        CoreRun::Info& info = c.info[i];
        if (inst.waits.size() > 0xFFFF || inst.signals.size() > 0xFFFF)
          fail(c, i, "more than 65535 semaphore waits or signals");
        info.first_wait = static_cast<std::uint32_t>(chunk.waits.size());
        info.waits = static_cast<std::uint16_t>(inst.waits.size());
        info.first_signal = static_cast<std::uint32_t>(chunk.signals.size());
        info.signals = static_cast<std::uint16_t>(inst.signals.size());
        for (const isa::SemWait& w : inst.waits) {
          if (w.sem >= isa::kNumSemaphores)
            fail(c, i, fmt::format("semaphore {} does not exist", w.sem));
          if (w.base.present() && w.base.index >= isa::kNumRegisters)
            fail(c, i, fmt::format("register r{} does not exist", w.base.index));
          chunk.waits.push_back(w);
          info.relative_waits = info.relative_waits || w.base.present();
        }
        for (const isa::SemSignal& sig : inst.signals) {
          if (sig.sem >= isa::kNumSemaphores)
            fail(c, i, fmt::format("semaphore {} does not exist", sig.sem));
          chunk.signals.push_back(sig);
        }
        if (const auto* b = std::get_if<isa::CoreBarrier>(&inst.op)) {
          check_barrier(c, i, *b);
          info.barrier = b->num_cores > 1;
        }
        if (const auto* x = std::get_if<isa::SendRecv>(&inst.op)) {
          check_exchange(c, i, *x);
          info.exchange = true;
        }
        info.collective = std::holds_alternative<isa::Collective>(inst.op);
        info.control = isa::op_class(inst.op) == isa::OpClass::kControl;
        chunk.control = chunk.control || info.control;
        c.cost->prepare(inst, i);
      } catch (...) {
        chunk.error = std::current_exception();
        packing = false;
      }
    }
  }

  static constexpr std::size_t kMaxQueues = std::size_t{1} << 30;

  const Device& device_;
  const RunOptions& options_;
  bool multi_core_ = false;
  const CostModel* unit_cost_;
  std::vector<CoreRun>& cores_;
  std::vector<Queue>& queues_;
};

}  // namespace

void prepare_queues(std::vector<CoreRun>& cores, std::vector<Queue>& queues, const Device& device,
                    const RunOptions& options, bool multi_core, const CostModel* unit_cost) {
  Preparation(cores, queues, device, options, multi_core, unit_cost).build_queues();
}

}  // namespace trnsim::sim::executor_detail
