// Pass 5: synchronise (docs/compiler.md, "Synchronise"): semaphore signals and waits for every
// cross-queue dependency of the scheduled program, without those already implied.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "compiler/passes.h"

namespace trnsim::compiler::detail {

namespace {

// True for queues whose instructions read their operands when they start and publish their
// results only at completion, so a dependent instruction on the same queue must wait for
// the producer's completion: the Vector, Scalar and GpSimd engines (the NKI cost model's
// fixed overhead "on dependent chains"). The tensor engine accumulates into PSUM in its own
// pipeline (back-to-back accumulating matmuls do not wait), and a DMA queue is occupied until
// its transfer completes, so neither needs it.
bool waits_for_own_results(int queue_key) {
  const isa::Engine e = detail::queue_of_key(queue_key).engine;
  return e == isa::Engine::kVector || e == isa::Engine::kScalar || e == isa::Engine::kGpSimd;
}

}  // namespace

SyncResult synchronise(std::vector<isa::Instruction>& phys, const detail::SchedResult& sched,
                       const std::vector<std::vector<std::uint32_t>>& preds,
                       const std::vector<std::vector<std::uint32_t>>& flow, int num_queues,
                       bool signal_every) {
  const std::size_t n = phys.size();
  const auto nq = static_cast<std::size_t>(num_queues);
  std::vector<std::uint32_t> pos(n, 0);                     // 1-based position in its queue
  std::vector<std::vector<std::uint32_t>> queue_insts(nq);  // queue -> instructions in order
  std::vector<std::uint32_t> clocks(n * nq, 0);             // known-completed positions at start
  std::vector<std::vector<std::uint32_t>> known(nq, std::vector<std::uint32_t>(nq, 0));
  std::vector<char> signals(n, 0);
  std::vector<std::vector<std::uint32_t>> wait_on(n);  // producers each instruction waits for
  SyncResult r;
  std::vector<std::uint32_t> needed(nq, 0);
  // Per queue: the last own position known *completed* (k[q] below is the own position
  // started, which is what other queues learn when they wait for this one).
  std::vector<std::uint32_t> own_done(nq, 0);
  for (std::uint32_t i : sched.order) {
    const auto q = static_cast<std::size_t>(sched.queue[i]);
    queue_insts[q].push_back(i);
    pos[i] = static_cast<std::uint32_t>(queue_insts[q].size());
    // A same-queue flow dependency: wait for the producer's own completion signal.
    std::uint32_t own_needed = 0;
    if (waits_for_own_results(sched.queue[i]))
      for (std::uint32_t j : flow[i])
        if (static_cast<std::size_t>(sched.queue[j]) == q)
          own_needed = std::max(own_needed, pos[j]);
    std::fill(needed.begin(), needed.end(), 0);
    for (std::uint32_t j : preds[i]) {
      const auto rq = static_cast<std::size_t>(sched.queue[j]);
      if (rq == q) continue;
      if (pos[j] == 0) throw std::logic_error("compiler bug: schedule is not topological");
      ++r.cross_edges;
      needed[rq] = std::max(needed[rq], pos[j]);
    }
    std::vector<std::uint32_t>& k = known[q];
    std::vector<std::uint32_t> targets;  // producer instructions not yet known complete
    for (std::size_t rq = 0; rq < nq; ++rq)
      if (needed[rq] > k[rq]) targets.push_back(queue_insts[rq][needed[rq] - 1]);
    for (std::uint32_t t : targets) {
      const auto tq = static_cast<std::size_t>(sched.queue[t]);
      bool implied = false;
      for (std::uint32_t o : targets)
        if (o != t && clocks[o * nq + tq] >= pos[t]) implied = true;
      if (implied) continue;
      wait_on[i].push_back(t);
      signals[t] = 1;
      for (std::size_t x = 0; x < nq; ++x) k[x] = std::max(k[x], clocks[t * nq + x]);
      own_done[q] = std::max(own_done[q], clocks[t * nq + q]);
    }
    if (own_needed > own_done[q]) {
      const std::uint32_t t = queue_insts[q][own_needed - 1];
      wait_on[i].push_back(t);
      signals[t] = 1;
      own_done[q] = own_needed;
    }
    k[q] = pos[i];
    std::copy(k.begin(), k.end(), clocks.begin() + static_cast<std::ptrdiff_t>(i * nq));
  }
  if (signal_every) std::fill(signals.begin(), signals.end(), 1);
  // Signal ordinals: the number of signalling instructions of a queue up to and including one.
  std::vector<std::uint32_t> ordinal(n, 0);
  for (std::size_t q = 0; q < nq; ++q) {
    std::uint32_t count = 0;
    for (std::uint32_t i : queue_insts[q])
      if (signals[i]) ordinal[i] = ++count;
  }
  r.program.reserve(n);
  for (std::uint32_t i : sched.order) {
    isa::Instruction inst = std::move(phys[i]);
    inst.queue = detail::queue_of_key(sched.queue[i]);
    inst.waits.clear();
    inst.signals.clear();
    std::sort(wait_on[i].begin(), wait_on[i].end(),
              [&](std::uint32_t a, std::uint32_t b) { return sched.queue[a] < sched.queue[b]; });
    for (std::uint32_t t : wait_on[i])
      inst.waits.push_back({static_cast<std::uint16_t>(sched.queue[t]), ordinal[t]});
    if (signals[i]) inst.signals.push_back({static_cast<std::uint16_t>(sched.queue[i]), 1});
    r.waits += inst.waits.size();
    r.signals += inst.signals.size();
    r.program.push_back(std::move(inst));
  }
  return r;
}

}  // namespace trnsim::compiler::detail
