// The steps of each collective algorithm as transfers between ranks: what the analytical
// model (estimate.cpp) and the event model (event_model.cpp) both time, so that the two
// describe the same algorithm in one place. Internal to the collective layer.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "collective/collective.h"

namespace trnsim::collective::detail {

// One step: every rank sends `bytes` to each of its partners at once. Ring: the next rank;
// mesh: every other rank; RDH: r XOR distance; hierarchical (m ranks per node): the next
// rank of the node, or the rank of the same local index on the next node; permute: the
// rank's target, if it has one; from-root: the group's first rank to every other rank.
// Ranks are numbered within their replica group.
struct StepPlan {
  enum class Kind : unsigned char {
    kNext,
    kAll,
    kXor,
    kNextLocal,
    kNextNode,
    kPermute,
    kFromRoot,  // the group's first rank to every other rank
  } kind;
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
  if (op == Op::kAllToAll) return {{StepPlan::Kind::kAll, chunk}};
  if (op == Op::kPermute) return {{StepPlan::Kind::kPermute, bytes}};
  if (op == Op::kBroadcast) {
    // Mesh: the root sends the whole buffer to every rank at once. Ring: it scatters one
    // chunk to each rank, and a ring all-gather completes every rank's copy.
    if (a == Algorithm::kMesh) return {{StepPlan::Kind::kFromRoot, bytes}};
    steps.push_back({StepPlan::Kind::kFromRoot, chunk});
    add(n - 1, StepPlan::Kind::kNext, chunk);
    return steps;
  }
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

// Calls send(to) for each rank `r` sends to in a step of this kind (not kPermute), ranks
// numbered 0..n-1 within one group.
template <class Send>
void for_each_local_partner(const StepPlan& s, int r, int n, int m, Send&& send) {
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
    case StepPlan::Kind::kFromRoot:
      for (int to = 1; r == 0 && to < n; ++to) send(to);
      break;
    case StepPlan::Kind::kPermute:
      break;
  }
}

// The ranks of a run in their replica groups (one group of every rank when none are given)
// and, for a permute, each rank's target and source: who sends to whom in each step.
class Layout {
 public:
  Layout(int ranks, const ReplicaGroups& groups, int ranks_per_node, const Pairs& pairs)
      : groups_(groups), m_(ranks_per_node) {
    if (groups_.empty()) groups_ = {consecutive_groups(ranks, ranks).front()};
    n_ = static_cast<int>(groups_.front().size());
    group_of_.assign(static_cast<std::size_t>(ranks), 0);
    local_of_.assign(static_cast<std::size_t>(ranks), 0);
    for (std::size_t g = 0; g < groups_.size(); ++g)
      for (std::size_t k = 0; k < groups_[g].size(); ++k) {
        group_of_[static_cast<std::size_t>(groups_[g][k])] = static_cast<int>(g);
        local_of_[static_cast<std::size_t>(groups_[g][k])] = static_cast<int>(k);
      }
    target_.assign(static_cast<std::size_t>(ranks), -1);
    source_.assign(static_cast<std::size_t>(ranks), -1);
    for (const auto& [from, to] : pairs) {
      target_[static_cast<std::size_t>(from)] = to;
      source_[static_cast<std::size_t>(to)] = from;
    }
    pairs_ = pairs.size();
  }
  int group_size() const { return n_; }
  int ranks_per_node() const { return m_; }
  int ranks() const { return static_cast<int>(group_of_.size()); }
  const ReplicaGroups& groups() const { return groups_; }

  template <class Send>
  void for_each_partner(const StepPlan& s, int rank, Send&& send) const {
    const auto r = static_cast<std::size_t>(rank);
    if (s.kind == StepPlan::Kind::kPermute) {
      if (target_[r] >= 0) send(target_[r]);
      return;
    }
    const std::vector<int>& group = groups_[static_cast<std::size_t>(group_of_[r])];
    for_each_local_partner(s, local_of_[r], n_, m_,
                           [&](int local) { send(group[static_cast<std::size_t>(local)]); });
  }
  // How many transfers a rank sends, and receives, in a step.
  int sends(const StepPlan& s, int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    if (s.kind == StepPlan::Kind::kPermute) return target_[r] >= 0;
    if (s.kind == StepPlan::Kind::kFromRoot) return local_of_[r] == 0 ? n_ - 1 : 0;
    return s.kind == StepPlan::Kind::kAll ? n_ - 1 : 1;
  }
  // Transfers in a step over all ranks.
  std::uint64_t transfers(const StepPlan& s) const {
    const auto ranks = static_cast<std::uint64_t>(group_of_.size());
    const auto n = static_cast<std::uint64_t>(n_);
    switch (s.kind) {
      case StepPlan::Kind::kAll:
        return ranks * (n - 1);
      case StepPlan::Kind::kFromRoot:
        return groups_.size() * (n - 1);
      case StepPlan::Kind::kPermute:
        return pairs_;
      default:
        return ranks;
    }
  }
  int receives(const StepPlan& s, int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    if (s.kind == StepPlan::Kind::kPermute) return source_[r] >= 0;
    if (s.kind == StepPlan::Kind::kFromRoot) return local_of_[r] == 0 ? 0 : 1;
    return s.kind == StepPlan::Kind::kAll ? n_ - 1 : 1;
  }

 private:
  ReplicaGroups groups_;
  int n_ = 1, m_ = 1;
  std::uint64_t pairs_ = 0;
  std::vector<int> group_of_, local_of_, target_, source_;
};

}  // namespace trnsim::collective::detail
