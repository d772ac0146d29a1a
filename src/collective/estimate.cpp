// The analytical model of collective time: each algorithm as steps of transfers between
// ranks, each step timed by its busiest channel (docs/collectives.md, "Time").
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <stdexcept>

#include "collective/collective.h"
#include "util/enum_names.h"

namespace trnsim::collective {

std::string_view name(Op op) {
  static constexpr std::array<std::string_view, 3> kNames = {"all_reduce", "all_gather",
                                                             "reduce_scatter"};
  return util::enum_name(kNames, op);
}

double bus_factor(Op op, int ranks) {
  const double r = ranks;
  return op == Op::kAllReduce ? 2 * (r - 1) / r : (r - 1) / r;
}

Algorithm choose_algorithm(Op, std::uint64_t bytes, int ranks, int nodes) {
  constexpr std::uint64_t kMiB = 1 << 20;
  if (nodes > 1) return Algorithm::kHierarchical;
  if (bytes < kMiB) return Algorithm::kMesh;
  if (bytes <= 56 * kMiB && std::has_single_bit(static_cast<unsigned>(ranks)))
    return Algorithm::kRdh;
  return Algorithm::kRing;
}

CollectiveModel::CollectiveModel(const system::SystemConfig& config, int ranks_per_chip)
    : config_(config), topology_(config) {
  const arch::ChipConfig& chip = config.chip_config;
  const int logical = chip.cores_per_chip / std::max(1, chip.default_lnc);
  ranks_per_chip_ = ranks_per_chip > 0 ? ranks_per_chip : std::max(1, logical);
  if (ranks_per_chip_ > chip.cores_per_chip)
    throw std::invalid_argument(fmt::format("{} ranks per chip; a {} has {} cores", ranks_per_chip_,
                                            chip.name, chip.cores_per_chip));
  step_ns_ = chip.dma.fixed_latency_ns;
  local_bytes_per_ns_ = chip.hbm.bandwidth_gbps / 2;  // each byte read and written
  routes_.resize(static_cast<std::size_t>(topology_.chips()));
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
  // Ranks fill the chips in ring order, instances outermost: the nodes are runs of ranks.
  std::vector<int> per_node;
  int last = -1;
  for (int r = 0; r < ranks; ++r) {
    const int instance = topology_.coordinates(chip_of(r)).front();
    if (instance != last) per_node.push_back(0);
    ++per_node.back();
    last = instance;
  }
  for (const int count : per_node)
    if (count != per_node.front())
      throw std::invalid_argument(fmt::format(
          "{} ranks on {} nodes of {}: {} on the first node but {} on another (collectives "
          "across nodes take the same number of ranks on each, internode-collective-comm.rst)",
          ranks, per_node.size(), config_.name, per_node.front(), count));
  return static_cast<int>(per_node.size());
}

const system::Route& CollectiveModel::route(int from_chip, int to_chip) const {
  auto& from = routes_[static_cast<std::size_t>(from_chip)];
  if (from.empty()) from = topology_.routes_from(from_chip);
  return from[static_cast<std::size_t>(to_chip)];
}

double CollectiveModel::step_time(const std::vector<Flow>& flows, std::string* busiest,
                                  double* transfer_ns, double* latency_ns) const {
  // Bytes per channel (>= 0) and per chip-local path (key -1 - chip).
  std::map<int, double> load;
  double latency = 0;
  for (const Flow& f : flows) {
    const int a = chip_of(f.from_rank), b = chip_of(f.to_rank);
    if (a == b) {
      load[-1 - a] += f.bytes;
      continue;
    }
    const system::Route& r = route(a, b);
    latency = std::max(latency, r.latency_ns);
    for (const int c : r.channels) load[c] += f.bytes;
  }
  double transfer = 0;
  int worst = 0;
  for (const auto& [path, bytes] : load) {
    const double rate = path < 0
                            ? local_bytes_per_ns_
                            : topology_.channels()[static_cast<std::size_t>(path)].bytes_per_ns;
    if (bytes / rate > transfer) {
      transfer = bytes / rate;
      worst = path;
    }
  }
  if (busiest != nullptr && !load.empty()) {
    if (worst < 0) {
      *busiest = fmt::format("chip {}'s HBM", -1 - worst);
    } else {
      const system::Channel& c = topology_.channels()[static_cast<std::size_t>(worst)];
      *busiest = fmt::format("{} -> {} ({})", topology_.describe(c.from), topology_.describe(c.to),
                             topology_.kind_names()[static_cast<std::size_t>(c.kind)]);
    }
  }
  *transfer_ns += transfer;
  *latency_ns += step_ns_ + latency;
  return step_ns_ + latency + transfer;
}

namespace {

// The steps of an algorithm as (partner of rank r, bytes it sends) per step. Ring: to the
// next rank; mesh: to every other rank at once; RDH: to r XOR d; hierarchical: to the next
// rank of the node (m ranks each), or to the rank of the same local index on the next node.
struct StepPlan {
  enum class Kind { kNext, kAll, kXor, kNextLocal, kNextNode } kind;
  double bytes;  // per transfer
  int distance = 0;
};

std::vector<StepPlan> steps_of(Op op, Algorithm a, double bytes, int n, int m) {
  std::vector<StepPlan> steps;
  const double chunk = bytes / n;
  const bool scatter = op != Op::kAllGather;  // a reduce-scatter phase
  const bool gather = op != Op::kReduceScatter;
  switch (a) {
    case Algorithm::kRing:
      for (int phase = 0; phase < (scatter && gather ? 2 : 1); ++phase)
        for (int s = 0; s + 1 < n; ++s) steps.push_back({StepPlan::Kind::kNext, chunk});
      break;
    case Algorithm::kMesh:
      for (int phase = 0; phase < (scatter && gather ? 2 : 1); ++phase)
        steps.push_back({StepPlan::Kind::kAll, chunk});
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
      const auto add = [&](int count, StepPlan::Kind kind, double size) {
        for (int k = 0; k < count; ++k) steps.push_back({kind, size});
      };
      if (scatter) add(m - 1, StepPlan::Kind::kNextLocal, piece);
      add((scatter && gather ? 2 : 1) * (nodes - 1), StepPlan::Kind::kNextNode, piece / nodes);
      if (gather) add(m - 1, StepPlan::Kind::kNextLocal, piece);
      break;
    }
  }
  return steps;
}

}  // namespace

Estimate CollectiveModel::estimate(Op op, std::uint64_t bytes, int ranks,
                                   std::optional<Algorithm> algorithm) const {
  if (ranks < 1 || ranks > max_ranks())
    throw std::invalid_argument(
        fmt::format("{} ranks on {}: it holds 1 to {} ({} chips of {} ranks)", ranks, config_.name,
                    max_ranks(), topology_.chips(), ranks_per_chip_));
  Estimate e;
  const int nodes = nodes_of(ranks);
  e.algorithm = algorithm.value_or(choose_algorithm(op, bytes, ranks, nodes));
  if (e.algorithm == Algorithm::kRdh && !std::has_single_bit(static_cast<unsigned>(ranks)))
    throw std::invalid_argument(fmt::format(
        "rdh (recursive halving-doubling) needs a power-of-two number of ranks, not {}", ranks));
  const int m = ranks / nodes;  // ranks per node
  if (ranks == 1) return e;
  // A step's shape (who sends to whom) decides its latency and its busiest path; its time
  // is linear in the bytes. Each shape is routed once, with one byte per transfer.
  struct Shape {
    double latency_ns = 0, ns_per_byte = 0;
    std::string busiest;
  };
  std::map<std::pair<int, int>, Shape> shapes;
  std::map<std::string, int> busiest_count;
  for (const StepPlan& s : steps_of(op, e.algorithm, static_cast<double>(bytes), ranks, m)) {
    const std::pair<int, int> key{static_cast<int>(s.kind), s.distance};
    auto it = shapes.find(key);
    if (it == shapes.end()) {
      std::vector<Flow> flows;
      for (int r = 0; r < ranks; ++r) {
        switch (s.kind) {
          case StepPlan::Kind::kNext:
            flows.push_back({r, (r + 1) % ranks, 1});
            break;
          case StepPlan::Kind::kAll:
            for (int to = 0; to < ranks; ++to)
              if (to != r) flows.push_back({r, to, 1});
            break;
          case StepPlan::Kind::kXor:
            flows.push_back({r, r ^ s.distance, 1});
            break;
          case StepPlan::Kind::kNextLocal:
            flows.push_back({r, r / m * m + (r % m + 1) % m, 1});
            break;
          case StepPlan::Kind::kNextNode:
            flows.push_back({r, (r + m) % ranks, 1});
            break;
        }
      }
      Shape shape;
      double start_and_latency = 0;
      step_time(flows, &shape.busiest, &shape.ns_per_byte, &start_and_latency);
      shape.latency_ns = start_and_latency;
      it = shapes.emplace(key, std::move(shape)).first;
    }
    const Shape& shape = it->second;
    e.transfer_ns += shape.ns_per_byte * s.bytes;
    e.latency_ns += shape.latency_ns;
    e.time_ns += shape.latency_ns + shape.ns_per_byte * s.bytes;
    ++busiest_count[shape.busiest];
    ++e.steps;
  }
  e.bound = std::max_element(busiest_count.begin(), busiest_count.end(),
                             [](const auto& a, const auto& b) { return a.second < b.second; })
                ->first;
  return e;
}

}  // namespace trnsim::collective
