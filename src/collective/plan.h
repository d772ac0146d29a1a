// The steps of each collective algorithm as transfers between ranks: what the analytical
// model (estimate.cpp) and the event model (event_model.cpp) both time, so that the two
// describe the same algorithm in one place. Internal to the collective layer.
#pragma once

#include <bit>
#include <vector>

#include "collective/collective.h"

namespace trnsim::collective::detail {

// One step: every rank sends `bytes` to each of its partners at once. Ring: the next rank;
// mesh: every other rank; RDH: r XOR distance; hierarchical (m ranks per node): the next
// rank of the node, or the rank of the same local index on the next node. In every kind a
// rank receives from as many ranks as it sends to.
struct StepPlan {
  enum class Kind : unsigned char { kNext, kAll, kXor, kNextLocal, kNextNode } kind;
  double bytes;  // per transfer
  int distance = 0;
};

// The steps of `op` under algorithm `a` on n ranks (m per node) for a buffer of `bytes`.
inline std::vector<StepPlan> steps_of(Op op, Algorithm a, double bytes, int n, int m) {
  std::vector<StepPlan> steps;
  const double chunk = bytes / n;
  const bool scatter = op != Op::kAllGather;  // a reduce-scatter phase
  const bool gather = op != Op::kReduceScatter;
  const int phases = scatter && gather ? 2 : 1;
  const auto add = [&](int count, StepPlan::Kind kind, double size) {
    for (int k = 0; k < count; ++k) steps.push_back({kind, size});
  };
  switch (a) {
    case Algorithm::kRing:
      add(phases * (n - 1), StepPlan::Kind::kNext, chunk);
      break;
    case Algorithm::kMesh:
      add(phases, StepPlan::Kind::kAll, chunk);
      break;
    case Algorithm::kRdh:
      if (scatter)  // halving: distance n/2 with half the buffer, then n/4 with a quarter, ...
        for (int d = n / 2, k = 1; d >= 1; d /= 2, ++k)
          steps.push_back({StepPlan::Kind::kXor, bytes / (1 << k), d});
      if (gather)  // doubling: the reverse
        for (int d = 1, k = std::countr_zero(static_cast<unsigned>(n)); d < n; d *= 2, --k)
          steps.push_back({StepPlan::Kind::kXor, bytes / (1 << k), d});
      break;
    case Algorithm::kHierarchical: {
      // Reduce-scatter within the nodes, all-reduce (or its half) across, all-gather within.
      const int nodes = n / m;
      const double piece = bytes / m;
      if (scatter) add(m - 1, StepPlan::Kind::kNextLocal, piece);
      add(phases * (nodes - 1), StepPlan::Kind::kNextNode, piece / nodes);
      if (gather) add(m - 1, StepPlan::Kind::kNextLocal, piece);
      break;
    }
  }
  return steps;
}

// Calls send(to) for each rank rank `r` sends to in a step of this kind.
template <class Send>
void for_each_partner(const StepPlan& s, int r, int n, int m, Send&& send) {
  switch (s.kind) {
    case StepPlan::Kind::kNext:
      send((r + 1) % n);
      break;
    case StepPlan::Kind::kAll:  // r + 1 first: the ranks do not all send to one rank at once
      for (int k = 1; k < n; ++k) send((r + k) % n);
      break;
    case StepPlan::Kind::kXor:
      send(r ^ s.distance);
      break;
    case StepPlan::Kind::kNextLocal:
      send(r / m * m + (r % m + 1) % m);
      break;
    case StepPlan::Kind::kNextNode:
      send((r + m) % n);
      break;
  }
}

// How many transfers a rank sends (and receives) in a step of this kind.
inline int partners_per_rank(const StepPlan& s, int n) {
  return s.kind == StepPlan::Kind::kAll ? n - 1 : 1;
}

}  // namespace trnsim::collective::detail
