// The analytical model of collective time: each algorithm as steps of transfers between
// ranks, each step timed by its busiest channel (docs/collectives.md, "Time").
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <stdexcept>

#include "collective/collective.h"
#include "collective/plan.h"
#include "util/enum_names.h"

namespace trnsim::collective {

std::string_view name(Op op) {
  static constexpr std::array<std::string_view, 6> kNames = {
      "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "permute", "broadcast"};
  return util::enum_name(kNames, op);
}

double bus_factor(Op op, int ranks) {
  const double r = ranks;
  if (op == Op::kPermute || op == Op::kBroadcast) return 1;
  return op == Op::kAllReduce ? 2 * (r - 1) / r : (r - 1) / r;
}

Algorithm choose_algorithm(Op op, std::uint64_t bytes, int ranks, int nodes) {
  constexpr std::uint64_t kMiB = 1 << 20;
  if (op == Op::kAllToAll || op == Op::kPermute) return Algorithm::kMesh;
  if (op == Op::kBroadcast) return bytes < kMiB ? Algorithm::kMesh : Algorithm::kRing;
  if (nodes > 1) return Algorithm::kHierarchical;
  if (bytes < kMiB) return Algorithm::kMesh;
  if (bytes <= 56 * kMiB && std::has_single_bit(static_cast<unsigned>(ranks)))
    return Algorithm::kRdh;
  return Algorithm::kRing;
}

CollectiveModel::CollectiveModel(const system::SystemConfig& config, int ranks_per_chip)
    : config_(config), topology_(config), routes_(topology_) {
  const arch::ChipConfig& chip = config.chip_config;
  const int logical = chip.cores_per_chip / std::max(1, chip.default_lnc);
  if (ranks_per_chip < 0)
    throw std::invalid_argument(fmt::format(
        "{} ranks per chip: a positive count (or 0 for the chip's logical cores)", ranks_per_chip));
  ranks_per_chip_ = ranks_per_chip > 0 ? ranks_per_chip : std::max(1, logical);
  if (ranks_per_chip_ > chip.cores_per_chip)
    throw std::invalid_argument(fmt::format("{} ranks per chip; a {} has {} cores", ranks_per_chip_,
                                            chip.name, chip.cores_per_chip));
  step_ns_ = chip.dma.fixed_latency_ns;
  local_bytes_per_ns_ = chip.hbm.bandwidth_gbps / 2;  // each byte read and written
  // A boustrophedon over the dimensions (outermost first): dimension j runs backwards
  // whenever the row-major index of the dimensions before it is odd, so consecutive chips
  // differ by one in one coordinate.
  const std::vector<system::Dimension>& dims = topology_.dimensions();
  for (int i = 0; i < topology_.chips(); ++i) {
    std::vector<int> digits(dims.size());
    int rest = i;
    for (std::size_t j = dims.size(); j-- > 0;) {
      digits[j] = rest % dims[j].size;
      rest /= dims[j].size;
    }
    std::vector<int> coordinates(dims.size());
    int prefix = 0;  // row-major index of the dimensions before j
    for (std::size_t j = 0; j < dims.size(); ++j) {
      coordinates[j] = prefix % 2 == 0 ? digits[j] : dims[j].size - 1 - digits[j];
      prefix = prefix * dims[j].size + digits[j];
    }
    chip_order_.push_back(topology_.chip_at(coordinates));
  }
}

int CollectiveModel::nodes_of(int ranks) const {
  check_ranks(ranks);
  std::vector<int> all(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) all[static_cast<std::size_t>(r)] = r;
  return nodes_of_group(all);
}

int CollectiveModel::nodes_of_group(const std::vector<int>& members, bool node_by_node) const {
  // Ranks fill the chips in ring order, instances outermost.
  std::vector<int> instances, per_node;  // in the order the members first reach each node
  for (const int r : members) {
    if (r < 0 || r >= max_ranks())
      throw std::invalid_argument(
          fmt::format("rank {} is not one of {}'s {} ranks", r, config_.name, max_ranks()));
    const int instance = topology_.coordinates(chip_of(r)).front();
    const auto it = std::find(instances.begin(), instances.end(), instance);
    if (it != instances.end() && it + 1 != instances.end() && node_by_node)
      throw std::invalid_argument(fmt::format(
          "replica group {}: its ranks on node {} are not listed together (a hierarchical "
          "collective takes a group's ranks node by node)",
          format_groups({members}), instance));
    if (it == instances.end()) {
      instances.push_back(instance);
      per_node.push_back(0);
    }
    ++per_node[static_cast<std::size_t>(std::find(instances.begin(), instances.end(), instance) -
                                        instances.begin())];
  }
  for (const int count : per_node)
    if (count != per_node.front())
      throw std::invalid_argument(fmt::format(
          "{} ranks on {} nodes of {}: {} on the first node but {} on another (collectives "
          "across nodes take the same number of ranks on each, internode-collective-comm.rst)",
          members.size(), per_node.size(), config_.name, per_node.front(), count));
  return static_cast<int>(per_node.size());
}

const system::Route& CollectiveModel::route(int from_chip, int to_chip) const {
  return routes_.route(from_chip, to_chip);
}

std::string CollectiveModel::path_name(int id, bool local) const {
  if (local) return fmt::format("chip {}'s HBM", id);
  const system::Channel& c = topology_.channels()[static_cast<std::size_t>(id)];
  return fmt::format("{} -> {} ({})", topology_.describe(c.from), topology_.describe(c.to),
                     topology_.kind_names()[static_cast<std::size_t>(c.kind)]);
}

CollectiveModel::ShapeCost CollectiveModel::shape_cost(const std::vector<Flow>& flows,
                                                       int ranks) const {
  // Bytes per channel, then per chip-local path (at channels + chip).
  const std::size_t links = topology_.channels().size();
  std::vector<double> load(links + static_cast<std::size_t>(topology_.chips()));
  // A flow's route between chips, or nullptr between two ranks of one chip.
  const auto path = [&](const Flow& f) -> const system::Route* {
    const int a = chip_of(f.from_rank), b = chip_of(f.to_rank);
    return a == b ? nullptr : &route(a, b);
  };
  for (const Flow& f : flows) {
    if (const system::Route* r = path(f))
      for (const int c : r->channels) load[static_cast<std::size_t>(c)] += f.bytes;
    else
      load[links + static_cast<std::size_t>(chip_of(f.from_rank))] += f.bytes;
  }
  const auto time_per_byte = [&](std::size_t c) {
    return load[c] / (c >= links ? local_bytes_per_ns_ : topology_.channels()[c].bytes_per_ns);
  };
  ShapeCost cost;
  cost.latency_ns.assign(static_cast<std::size_t>(ranks), 0);
  cost.ns_per_byte.assign(static_cast<std::size_t>(ranks), 0);
  cost.takes_part.assign(static_cast<std::size_t>(ranks), 0);
  for (const Flow& f : flows) {
    double latency = 0, per_byte = 0;
    if (const system::Route* r = path(f)) {
      latency = r->latency_ns;
      for (const int c : r->channels)
        per_byte = std::max(per_byte, time_per_byte(static_cast<std::size_t>(c)));
    } else {
      per_byte = time_per_byte(links + static_cast<std::size_t>(chip_of(f.from_rank)));
    }
    for (const int r : {f.from_rank, f.to_rank}) {
      auto& l = cost.latency_ns[static_cast<std::size_t>(r)];
      auto& x = cost.ns_per_byte[static_cast<std::size_t>(r)];
      cost.takes_part[static_cast<std::size_t>(r)] = 1;
      l = std::max(l, latency);
      x = std::max(x, per_byte);
    }
  }
  std::size_t worst = 0;
  for (std::size_t c = 1; c < load.size(); ++c)
    if (time_per_byte(c) > time_per_byte(worst)) worst = c;
  cost.busiest = worst >= links ? path_name(static_cast<int>(worst - links), true)
                                : path_name(static_cast<int>(worst), false);
  return cost;
}

void CollectiveModel::check_ranks(int ranks) const {
  if (ranks < 1 || ranks > max_ranks())
    throw std::invalid_argument(
        fmt::format("{} ranks on {}: it holds 1 to {} ({} chips of {} ranks)", ranks, config_.name,
                    max_ranks(), topology_.chips(), ranks_per_chip_));
}

CollectiveModel::Plan CollectiveModel::plan(Op op, std::uint64_t bytes, int ranks,
                                            std::optional<Algorithm> algorithm,
                                            const Participants& who) const {
  check_ranks(ranks);
  if (bytes == 0) throw std::invalid_argument("a collective of 0 bytes moves nothing to time");
  if (!who.replica_groups.empty()) check_replica_groups(who.replica_groups, ranks);
  const ReplicaGroups groups =
      who.replica_groups.empty() ? consecutive_groups(ranks, ranks) : who.replica_groups;
  const int n = static_cast<int>(groups.front().size());  // ranks per group
  int nodes = 0;
  for (const std::vector<int>& group : groups) {
    const int mine = nodes_of_group(group);
    if (nodes > 0 && mine != nodes)
      throw std::invalid_argument(
          fmt::format("replica group {} spans {} nodes, group 0 spans {} (groups of one shape)",
                      format_groups({group}), mine, nodes));
    nodes = mine;
  }
  Plan p;
  p.algorithm = algorithm.value_or(choose_algorithm(op, bytes, n, nodes));
  if ((op == Op::kAllToAll || op == Op::kPermute) && p.algorithm != Algorithm::kMesh)
    throw std::invalid_argument(fmt::format(
        "{} runs as one step of direct transfers (mesh), not {}", name(op), name(p.algorithm)));
  if (op == Op::kBroadcast && p.algorithm != Algorithm::kMesh && p.algorithm != Algorithm::kRing)
    throw std::invalid_argument(fmt::format(
        "broadcast runs as mesh (the root sends to every rank) or ring (scatter, then a ring "
        "all-gather), not {}",
        name(p.algorithm)));
  if (p.algorithm == Algorithm::kHierarchical)
    for (const std::vector<int>& group : groups) (void)nodes_of_group(group, true);
  if (p.algorithm == Algorithm::kRdh && !std::has_single_bit(static_cast<unsigned>(n)))
    throw std::invalid_argument(fmt::format(
        "rdh (recursive halving-doubling) needs a power-of-two number of ranks, not {}", n));
  if (op != Op::kPermute && !who.source_target_pairs.empty())
    throw std::invalid_argument(
        fmt::format("source-target pairs belong to permute, not {}", name(op)));
  Pairs pairs = who.source_target_pairs;
  if (op == Op::kPermute) {
    if (pairs.empty()) pairs = ring_pairs(groups);
    std::vector<int> group_of(static_cast<std::size_t>(ranks));
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (const int r : groups[g]) group_of[static_cast<std::size_t>(r)] = static_cast<int>(g);
    for (const auto& [from, to] : pairs)
      if (from >= 0 && to >= 0 && from < ranks && to < ranks &&
          group_of[static_cast<std::size_t>(from)] != group_of[static_cast<std::size_t>(to)])
        throw std::invalid_argument(fmt::format(
            "permute pair ({}, {}) joins replica groups {} and {} (a pair stays within a group)",
            from, to, group_of[static_cast<std::size_t>(from)],
            group_of[static_cast<std::size_t>(to)]));
    check_pairs(pairs, ranks);
  }
  p.layout = std::make_shared<const detail::Layout>(ranks, groups, n / nodes, pairs);
  return p;
}

namespace {
// The analytical model keeps one flow per transfer of a step shape, and the route cache one
// route per pair: about 100 bytes each.
constexpr std::uint64_t kMaxFlows = 50'000'000;
}  // namespace

Estimate CollectiveModel::estimate(Op op, std::uint64_t bytes, int ranks,
                                   std::optional<Algorithm> algorithm,
                                   const Participants& who) const {
  const Plan p = plan(op, bytes, ranks, algorithm, who);
  const detail::Layout& layout = *p.layout;
  Estimate e;
  e.algorithm = p.algorithm;
  const int n = layout.group_size();
  const int m = layout.ranks_per_node();
  if (n == 1) return e;
  // A step's shape (who sends to whom) decides each rank's latency and time per byte; each
  // shape is routed once, with one byte per transfer, and its steps are summed per rank.
  struct Shape {
    ShapeCost cost;
    int steps = 0;
    double bytes = 0;  // per transfer, over its steps
  };
  std::map<std::pair<int, int>, Shape> shapes;
  std::map<std::string, int> busiest_count;
  for (const detail::StepPlan& s :
       detail::steps_of(op, e.algorithm, static_cast<double>(bytes), n, m)) {
    const std::pair<int, int> key{static_cast<int>(s.kind), s.distance};
    auto it = shapes.find(key);
    if (it == shapes.end()) {
      const std::uint64_t transfers = layout.transfers(s);
      if (transfers > kMaxFlows)
        throw std::invalid_argument(fmt::format(
            "{} over {} ranks is {} transfers in one step (the analytical model routes at most "
            "{}): a ring, RDH or hierarchical collective takes one transfer per rank",
            name(e.algorithm), ranks, transfers, kMaxFlows));
      std::vector<Flow> flows;
      for (int r = 0; r < ranks; ++r)
        layout.for_each_partner(s, r, [&](int to) { flows.push_back({r, to, 1}); });
      it = shapes.emplace(key, Shape{shape_cost(flows, ranks)}).first;
    }
    ++it->second.steps;
    it->second.bytes += s.bytes;
    ++busiest_count[it->second.cost.busiest];
    ++e.steps;
  }
  for (int r = 0; r < ranks; ++r) {
    double latency = 0, transfer = 0;
    for (const auto& [key, shape] : shapes) {
      if (shape.cost.takes_part[static_cast<std::size_t>(r)] == 0) continue;
      latency += shape.steps * (step_ns_ + shape.cost.latency_ns[static_cast<std::size_t>(r)]);
      transfer += shape.bytes * shape.cost.ns_per_byte[static_cast<std::size_t>(r)];
    }
    if (latency + transfer > e.time_ns) {
      e.time_ns = latency + transfer;
      e.latency_ns = latency;
      e.transfer_ns = transfer;
    }
  }
  if (busiest_count.empty()) return e;
  e.bound = std::max_element(busiest_count.begin(), busiest_count.end(),
                             [](const auto& a, const auto& b) { return a.second < b.second; })
                ->first;
  return e;
}

}  // namespace trnsim::collective
