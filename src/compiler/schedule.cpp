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
  const std::vector<isa::Instruction>& insts = *in.insts;
  const std::size_t n = insts.size();
  const timing::CostModel costs(chip);
  const auto dma_engines = static_cast<std::uint32_t>(chip.dma.engines_per_core.value);
  const double hbm_rate =
      arch::hbm_bytes_per_ns_per_core(chip) / std::max<double>(1.0, dma_engines);

  // Successors and remaining-predecessor counts.
  std::vector<std::vector<std::uint32_t>> succs(n);
  std::vector<std::uint32_t> missing(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    missing[i] = static_cast<std::uint32_t>((*in.preds)[i].size());
    for (std::uint32_t j : (*in.preds)[i]) succs[j].push_back(static_cast<std::uint32_t>(i));
  }

  // Classes of instructions with the same candidate queues.
  std::vector<Class> classes;
  std::vector<std::size_t> class_of(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<int> qs = candidate_queues((*in.engines)[i], (*in.fixed_dma_queue)[i], dma_queues);
    auto it = std::find_if(classes.begin(), classes.end(),
                           [&](const Class& c) { return c.queues == qs; });
    if (it == classes.end()) {
      classes.push_back(Class{std::move(qs), {}, {}});
      it = classes.end() - 1;
    }
    class_of[i] = static_cast<std::size_t>(it - classes.begin());
  }

  const int num_queues = kFirstDmaQueueKey + static_cast<int>(chip.dma.queues_per_engine.value);
  std::vector<double> queue_free(static_cast<std::size_t>(num_queues), 0.0);
  std::vector<double> engine_free(dma_engines, 0.0);
  std::vector<double> ready(n, 0.0), finish(n, 0.0);
  timing::TensorEngineState tensor_state;

  for (std::size_t i = 0; i < n; ++i)
    if (missing[i] == 0) classes[class_of[i]].pending.push({0.0, static_cast<std::uint32_t>(i)});

  SchedResult r;
  r.order.reserve(n);
  r.queue.assign(n, 0);
  auto min_free = [&](const Class& c) {
    double m = std::numeric_limits<double>::infinity();
    for (int q : c.queues) m = std::min(m, queue_free[static_cast<std::size_t>(q)]);
    return m;
  };

  // Estimated (occupancy, latency) of a DMA started at `start`; commits the engine use.
  auto dma_time = [&](const isa::Instruction& inst, double start, bool commit) {
    const timing::DmaPlan plan = costs.plan_dma(inst);
    const std::uint32_t first = timing::first_dma_engine(inst.op, dma_engines);
    const double t_ready = start + plan.fixed_latency_ns;
    double done = t_ready;
    for (const timing::DmaEngineWork& w : plan.engines) {
      if (w.bytes == 0 || dma_engines == 0) continue;
      const std::uint32_t e = (first + w.engine) % dma_engines;
      const double data_ns = std::max(static_cast<double>(w.bytes) / plan.engine_bytes_per_ns,
                                      static_cast<double>(w.hbm_bytes) / hbm_rate);
      const double share = data_ns + static_cast<double>(w.descriptors) * plan.per_descriptor_ns;
      const double begin = std::max(t_ready, engine_free[e]);
      if (commit) engine_free[e] = begin + share;
      done = std::max(done, begin + share);
    }
    return done - start;
  };

  for (std::size_t step = 0; step < n; ++step) {
    // The class whose best instruction can start first.
    std::size_t best_class = classes.size();
    double best_start = 0;
    std::uint32_t best_inst = 0;
    for (std::size_t c = 0; c < classes.size(); ++c) {
      Class& cl = classes[c];
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
      if (best_class == classes.size() || start < best_start ||
          (start == best_start && inst < best_inst)) {
        best_class = c;
        best_start = start;
        best_inst = inst;
      }
    }
    if (best_class == classes.size()) break;  // a cycle; cannot happen for program-order edges
    Class& cl = classes[best_class];
    if (!cl.available.empty() && cl.available.top() == best_inst)
      cl.available.pop();
    else
      cl.pending.pop();
    const std::uint32_t i = best_inst;

    // Queue choice: earliest finish (compute engines differ in cost); ties to the queue
    // idle longest, then the lowest queue. A DMA goes to a queue where it starts earliest:
    // its shares claim the DMA engines when it starts, so one placed behind a busy queue
    // would in fact queue on the engines behind every transfer started before it, not ahead
    // of them as committing it now would estimate.
    isa::Instruction inst = insts[i];
    int best_q = -1;
    double best_finish = 0, best_occ = 0, best_free = 0;
    const bool dma = isa::is_dma_transfer(inst.op);
    double earliest_start = std::numeric_limits<double>::infinity();
    for (int q : cl.queues)
      earliest_start =
          std::min(earliest_start, std::max(ready[i], queue_free[static_cast<std::size_t>(q)]));
    for (int q : cl.queues) {
      const double qf = queue_free[static_cast<std::size_t>(q)];
      const double start = std::max(ready[i], qf);
      if (dma && start > earliest_start) continue;
      inst.queue = queue_of_key(q);
      double occ, lat;
      if (dma) {
        occ = lat = dma_time(inst, start, false);
      } else {
        timing::TensorEngineState st = tensor_state;
        const timing::ComputeCost cc = costs.compute(inst, st);
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
    const double start = std::max(ready[i], queue_free[static_cast<std::size_t>(best_q)]);
    if (dma) {
      const double t = dma_time(inst, start, true);
      best_occ = t;
      best_finish = start + t;
    } else if (inst.queue.engine == isa::Engine::kTensor) {
      (void)costs.compute(inst, tensor_state);  // track the loaded stationary
    }
    queue_free[static_cast<std::size_t>(best_q)] = start + best_occ;
    finish[i] = best_finish;
    r.queue[i] = best_q;
    r.order.push_back(i);
    r.estimated_ns = std::max(r.estimated_ns, best_finish);
    for (std::uint32_t s : succs[i]) {
      ready[s] = std::max(ready[s], finish[i]);
      if (--missing[s] == 0) classes[class_of[s]].pending.push({ready[s], s});
    }
  }
  return r;
}

}  // namespace trnsim::compiler::detail
