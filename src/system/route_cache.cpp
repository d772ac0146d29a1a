// Routes on demand (RouteCache): early-exit searches, translation between identical instances
// and direct EFA routes, each the route Topology::route gives (a test compares them).
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "system/system.h"

namespace trnsim::system {

RouteCache::RouteCache(const Topology& topology) : topology_(topology) {
  const int chips = topology.chips();
  const int instances = topology.dimensions().front().size;
  per_instance_ = chips / instances;
  const auto nodes = static_cast<std::size_t>(topology.nodes());
  // A tier's switches are numbered instance by instance (row-major, instances outermost).
  std::vector<int> per_tier;
  for (int n = 0; n < topology.nodes(); ++n) {
    const Node& node = topology.node(n);
    if (node.kind != NodeKind::kSwitch) continue;
    const auto g = static_cast<std::size_t>(node.group);
    if (per_tier.size() <= g) per_tier.resize(g + 1, 0);
    ++per_tier[g];
  }
  node_shift_.assign(nodes, 0);
  for (int n = 0; n < topology.nodes(); ++n) {
    const Node& node = topology.node(n);
    if (node.kind == NodeKind::kChip) node_shift_[static_cast<std::size_t>(n)] = per_instance_;
    if (node.kind == NodeKind::kSwitch)
      node_shift_[static_cast<std::size_t>(n)] =
          per_tier[static_cast<std::size_t>(node.group)] / instances;
  }
  efa_up_.assign(static_cast<std::size_t>(chips), -1);
  efa_down_.assign(static_cast<std::size_t>(chips), -1);
  const int efa = topology.kind_of(kEfaKind);
  const std::vector<Channel>& channels = topology.channels();
  channel_by_ends_.reserve(channels.size());
  for (std::size_t id = 0; id < channels.size(); ++id) {
    const Channel& c = channels[id];
    const std::uint64_t key =
        static_cast<std::uint64_t>(c.from) * nodes + static_cast<std::uint64_t>(c.to);
    if (!channel_by_ends_.emplace(key, static_cast<int>(id)).second) translatable_ = false;
    if (c.kind != efa) continue;
    if (c.from < chips) efa_up_[static_cast<std::size_t>(c.from)] = static_cast<int>(id);
    if (c.to < chips) efa_down_[static_cast<std::size_t>(c.to)] = static_cast<int>(id);
  }
}

const Route& RouteCache::route(int from_chip, int to_chip) {
  for (const int chip : {from_chip, to_chip})
    if (chip < 0 || chip >= topology_.chips())
      throw std::out_of_range(fmt::format("no chip {}", chip));
  const std::uint64_t key =
      static_cast<std::uint64_t>(from_chip) * static_cast<std::uint64_t>(topology_.chips()) +
      static_cast<std::uint64_t>(to_chip);
  if (const auto it = routes_.find(key); it != routes_.end()) return it->second;
  Route r;
  const int from_instance = from_chip / per_instance_, to_instance = to_chip / per_instance_;
  const int up = efa_up_[static_cast<std::size_t>(from_chip)];
  const int down = efa_down_[static_cast<std::size_t>(to_chip)];
  if (from_instance != to_instance && up >= 0 && down >= 0) {
    // Instances meet only at the EFA network: up from one chip and down to the other.
    const Channel& a = topology_.channels()[static_cast<std::size_t>(up)];
    const Channel& b = topology_.channels()[static_cast<std::size_t>(down)];
    r.channels = {up, down};
    r.latency_ns = a.latency_ns + b.latency_ns;
    r.bytes_per_ns = std::min(a.bytes_per_ns, b.bytes_per_ns);
  } else if (from_instance == to_instance && from_instance > 0 && translatable_) {
    const int shift = from_instance * per_instance_;
    r = translated(route(from_chip - shift, to_chip - shift), from_instance);
  } else {
    r = topology_.route(from_chip, to_chip, scratch_);
  }
  return routes_.emplace(key, std::move(r)).first->second;
}

Route RouteCache::translated(const Route& first, int instance) const {
  const auto nodes = static_cast<std::uint64_t>(topology_.nodes());
  const auto moved = [&](int node) {
    const std::int64_t moved_node =
        node + std::int64_t{instance} * node_shift_[static_cast<std::size_t>(node)];
    return static_cast<std::uint64_t>(moved_node);
  };
  Route r = first;
  for (int& id : r.channels) {
    const Channel& c = topology_.channels()[static_cast<std::size_t>(id)];
    id = channel_by_ends_.at(moved(c.from) * nodes + moved(c.to));
  }
  return r;
}

}  // namespace trnsim::system
