// Pass 4: engine and DMA-queue choice and issue order (docs/compiler.md, "Schedule").
//
// List scheduling over the dependency DAG with the timing layer's cost estimates: at every
// step the ready instruction that can start earliest (on the best queue it may use) is
// issued; ties go to the lowest IR index, so the result is deterministic. The estimate
// mirrors sim::TimingModel closely enough to matter: queues are free `occupancy` after a
// start, results are visible `latency` after it, and a DMA's shares queue up on the core's 16
// DMA engines, which every DMA queue shares.
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>

#include "compiler/passes.h"
#include "timing/timing.h"

namespace trnsim::compiler::detail {

namespace {

// The queues an instruction may go to (queue keys, ascending).
std::vector<int> candidate_queues(std::uint8_t engines, int fixed_dma, int dma_queues) {
  std::vector<int> qs;
  for (int e = 0; e < isa::kNumEngines; ++e) {
    const auto engine = static_cast<isa::Engine>(e);
    if (!(engines & isa::engine_bit(engine))) continue;
    if (engine == isa::Engine::kDma) {
      if (fixed_dma >= 0) {
        qs.push_back(kFirstDmaQueueKey + fixed_dma);
      } else {
        for (int q = 0; q < dma_queues; ++q) qs.push_back(kFirstDmaQueueKey + q);
      }
    } else {
      qs.push_back(queue_key({engine, 0}));
    }
  }
  return qs;
}

struct Pending {
  double ready;
  std::uint32_t inst;
  bool operator>(const Pending& o) const {
    return ready != o.ready ? ready > o.ready : inst > o.inst;
  }
};

// Instructions that share one set of candidate queues.
struct Class {
  std::vector<int> queues;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;  // by ready time
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> available;
};

// The list scheduler's state while it issues one program.
class ListScheduler {
 public:
  ListScheduler(const SchedInput& in, const arch::ChipConfig& chip, int dma_queues)
      : insts_(*in.insts),
        n_(insts_.size()),
        costs_(chip),
        dma_engines_(static_cast<std::uint32_t>(chip.dma.engines_per_core.value)),
        hbm_rate_(arch::hbm_bytes_per_ns_per_core(chip) / std::max<double>(1.0, dma_engines_)),
        queue_free_(static_cast<std::size_t>(kFirstDmaQueueKey +
                                             static_cast<int>(chip.dma.queues_per_engine.value)),
                    0.0),
        engine_free_(dma_engines_, 0.0),
        ready_(n_, 0.0),
        finish_(n_, 0.0) {
    // Successors and remaining-predecessor counts.
    succs_.resize(n_);
    missing_.assign(n_, 0);
    for (std::size_t i = 0; i < n_; ++i) {
      missing_[i] = static_cast<std::uint32_t>((*in.preds)[i].size());
      for (std::uint32_t j : (*in.preds)[i]) succs_[j].push_back(static_cast<std::uint32_t>(i));
    }
    // A no_reorder block's instructions: each waits until the one before it is issued.
    order_next_.assign(n_, kNone);
    if (in.order_blocks != nullptr) {
      std::vector<std::uint32_t> last;  // per block, its latest instruction so far
      for (std::size_t i = 0; i < n_; ++i) {
        const std::uint32_t block = (*in.order_blocks)[i];
        if (block == 0) continue;
        if (last.size() <= block) last.resize(block + 1, kNone);
        if (last[block] != kNone) {
          order_next_[last[block]] = static_cast<std::uint32_t>(i);
          ++missing_[i];
        }
        last[block] = static_cast<std::uint32_t>(i);
      }
    }
    // Classes of instructions with the same candidate queues.
    class_of_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) {
      std::vector<int> qs =
          candidate_queues((*in.engines)[i], (*in.fixed_dma_queue)[i], dma_queues);
      auto it = std::find_if(classes_.begin(), classes_.end(),
                             [&](const Class& c) { return c.queues == qs; });
      if (it == classes_.end()) {
        classes_.push_back(Class{std::move(qs), {}, {}});
        it = classes_.end() - 1;
      }
      class_of_[i] = static_cast<std::size_t>(it - classes_.begin());
    }
    for (std::size_t i = 0; i < n_; ++i)
      if (missing_[i] == 0)
        classes_[class_of_[i]].pending.push({0.0, static_cast<std::uint32_t>(i)});
  }

  SchedResult run() {
    SchedResult r;
    r.order.reserve(n_);
    r.queue.assign(n_, 0);
    for (std::size_t step = 0; step < n_; ++step) {
      std::size_t c = 0;
      std::uint32_t i = 0;
      // Every edge points back in program order, so something is always ready; a cycle
      // would drop instructions from the program, so it is a loud compiler bug instead.
      if (!pick_next(c, i))
        throw std::logic_error("trnsim compiler bug: a dependency cycle leaves " +
                               std::to_string(n_ - step) + " instructions unscheduled");
      issue(c, i, r);
    }
    return r;
  }

 private:
  // Takes the instruction of the class whose best instruction can start first (ties to the
  // lowest index) off that class's heaps; false when none is left.
  bool pick_next(std::size_t& best_class, std::uint32_t& best_inst) {
    best_class = classes_.size();
    double best_start = 0;
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      Class& cl = classes_[c];
      if (cl.pending.empty() && cl.available.empty()) continue;
      const double mf = min_free(cl);
      while (!cl.pending.empty() && cl.pending.top().ready <= mf) {
        cl.available.push(cl.pending.top().inst);
        cl.pending.pop();
      }
      double start;
      std::uint32_t inst;
      if (!cl.available.empty()) {
        start = mf;
        inst = cl.available.top();
      } else {
        start = cl.pending.top().ready;
        inst = cl.pending.top().inst;
      }
      if (best_class == classes_.size() || start < best_start ||
          (start == best_start && inst < best_inst)) {
        best_class = c;
        best_start = start;
        best_inst = inst;
      }
    }
    if (best_class == classes_.size()) return false;
    Class& cl = classes_[best_class];
    if (!cl.available.empty() && cl.available.top() == best_inst)
      cl.available.pop();
    else
      cl.pending.pop();
    return true;
  }

  double min_free(const Class& c) const {
    double m = std::numeric_limits<double>::infinity();
    for (int q : c.queues) m = std::min(m, queue_free_[static_cast<std::size_t>(q)]);
    return m;
  }

  // Estimated time from `start` until a DMA completes; `commit` books the engines it uses.
  double dma_time(const isa::Instruction& inst, double start, bool commit) {
    const timing::DmaPlan plan = costs_.plan_dma(inst);
    const std::uint32_t first = timing::first_dma_engine(inst.op, dma_engines_);
    const double t_ready = start + plan.fixed_latency_ns;
    double done = t_ready;
    for (const timing::DmaEngineWork& w : plan.engines) {
      if (w.bytes == 0 || dma_engines_ == 0) continue;
      const std::uint32_t e = (first + w.engine) % dma_engines_;
      const double data_ns = std::max(static_cast<double>(w.bytes) / plan.engine_bytes_per_ns,
                                      static_cast<double>(w.hbm_bytes) / hbm_rate_);
      const double share = data_ns + static_cast<double>(w.descriptors) * plan.per_descriptor_ns;
      const double begin = std::max(t_ready, engine_free_[e]);
      if (commit) engine_free_[e] = begin + share;
      done = std::max(done, begin + share);
    }
    return done - start;
  }

  // Queue choice: earliest finish (compute engines differ in cost); ties to the queue idle
  // longest, then the lowest queue. A DMA goes to a queue where it starts earliest: its
  // shares claim the DMA engines when it starts, so one placed behind a busy queue would in
  // fact queue on the engines behind every transfer started before it, not ahead of them as
  // committing it now would estimate. Then books the queue and releases the successors.
  void issue(std::size_t c, std::uint32_t i, SchedResult& r) {
    const Class& cl = classes_[c];
    isa::Instruction inst = insts_[i];
    int best_q = -1;
    double best_finish = 0, best_occ = 0, best_free = 0;
    const bool dma = isa::is_dma_transfer(inst.op);
    double earliest_start = std::numeric_limits<double>::infinity();
    for (int q : cl.queues)
      earliest_start =
          std::min(earliest_start, std::max(ready_[i], queue_free_[static_cast<std::size_t>(q)]));
    for (int q : cl.queues) {
      const double qf = queue_free_[static_cast<std::size_t>(q)];
      const double start = std::max(ready_[i], qf);
      if (dma && start > earliest_start) continue;
      inst.queue = queue_of_key(q);
      double occ, lat;
      if (dma) {
        occ = lat = dma_time(inst, start, false);
      } else {
        timing::TensorEngineState st = tensor_state_;
        const timing::ComputeCost cc = costs_.compute(inst, st);
        occ = cc.occupancy_ns;
        lat = cc.latency_ns;
      }
      const double fin = start + lat;
      if (best_q < 0 || fin < best_finish || (fin == best_finish && qf < best_free)) {
        best_q = q;
        best_finish = fin;
        best_occ = occ;
        best_free = qf;
      }
    }
    inst.queue = queue_of_key(best_q);
    const double start = std::max(ready_[i], queue_free_[static_cast<std::size_t>(best_q)]);
    if (dma) {
      const double t = dma_time(inst, start, true);
      best_occ = t;
      best_finish = start + t;
    } else if (inst.queue.engine == isa::Engine::kTensor) {
      (void)costs_.compute(inst, tensor_state_);  // track the loaded stationary
    }
    queue_free_[static_cast<std::size_t>(best_q)] = start + best_occ;
    finish_[i] = best_finish;
    r.queue[i] = best_q;
    r.order.push_back(i);
    r.estimated_ns = std::max(r.estimated_ns, best_finish);
    for (std::uint32_t s : succs_[i]) {
      ready_[s] = std::max(ready_[s], finish_[i]);
      if (--missing_[s] == 0) classes_[class_of_[s]].pending.push({ready_[s], s});
    }
    if (const std::uint32_t s = order_next_[i]; s != kNone) {  // issued, not finished
      ready_[s] = std::max(ready_[s], start);
      if (--missing_[s] == 0) classes_[class_of_[s]].pending.push({ready_[s], s});
    }
  }

  static constexpr std::uint32_t kNone = UINT32_MAX;

  const std::vector<isa::Instruction>& insts_;
  std::size_t n_;
  timing::CostModel costs_;
  std::uint32_t dma_engines_;
  double hbm_rate_;  // HBM bytes per ns one DMA engine may take of the core's share
  std::vector<std::vector<std::uint32_t>> succs_;
  std::vector<std::uint32_t> missing_;     // predecessors not yet issued
  std::vector<std::uint32_t> order_next_;  // the next instruction of its no_reorder block
  std::vector<Class> classes_;
  std::vector<std::size_t> class_of_;
  std::vector<double> queue_free_, engine_free_, ready_, finish_;
  timing::TensorEngineState tensor_state_;
};

}  // namespace

SchedResult schedule_in_order(const SchedInput& in, int dma_queues) {
  const std::size_t n = in.insts->size();
  SchedResult r;
  r.order.resize(n);
  r.queue.resize(n);
  int next_dma = 0;
  for (std::size_t i = 0; i < n; ++i) {
    r.order[i] = static_cast<std::uint32_t>(i);
    const std::vector<int> qs =
        candidate_queues((*in.engines)[i], (*in.fixed_dma_queue)[i], dma_queues);
    if (qs.front() >= kFirstDmaQueueKey && (*in.fixed_dma_queue)[i] < 0) {
      r.queue[i] = kFirstDmaQueueKey + next_dma;
      next_dma = (next_dma + 1) % dma_queues;
    } else {
      r.queue[i] = qs.front();
    }
  }
  return r;
}

SchedResult schedule_list(const SchedInput& in, const arch::ChipConfig& chip, int dma_queues) {
  return ListScheduler(in, chip, dma_queues).run();
}

}  // namespace trnsim::compiler::detail
