// The topology graph of a system: chips, switches and the EFA network as nodes, each link as
// two channels of opposite direction; routes by Dijkstra over (latency, hops).
#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <queue>
#include <stdexcept>
#include <tuple>

#include "system/system.h"

namespace trnsim::system {

namespace {

constexpr double kBitsPerByte = 8;

std::vector<std::int64_t> strides_of(const std::vector<Dimension>& dims) {
  std::vector<std::int64_t> strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i].size;
  return strides;
}

std::size_t index_of(const std::vector<Dimension>& dims, const std::string& name) {
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].name == name) return i;
  }
  throw std::logic_error("validated configs name only their own dimensions");
}

}  // namespace

Topology::Topology(const SystemConfig& config) : dimensions_(config.dimensions()) {
  const std::int64_t chips = config.chips();
  if (chips < 1 || chips > kMaxChips) {
    throw ConfigError("shape", fmt::format("{} chips; a system has 1 to {}", chips, kMaxChips));
  }
  chips_ = static_cast<int>(chips);
  for (int c = 0; c < chips_; ++c) nodes_.push_back({NodeKind::kChip, -1, c});
  const auto strides = strides_of(dimensions_);

  for (const auto& [name, rule] : config.links) {
    const int kind = static_cast<int>(kind_names_.size());
    kind_names_.push_back(name);
    const std::size_t d = index_of(dimensions_, rule.along);
    const int n = dimensions_[d].size;
    const auto stride = strides[d];
    for (int c = 0; c < chips_; ++c) {
      const int x = static_cast<int>((c / stride) % n);
      int y = -1;
      switch (rule.pattern) {
        case LinkPattern::kRing:
          // n = 2: one link, not two between the same chips.
          if (n > 2 || (n == 2 && x == 0)) y = (x + 1) % n;
          break;
        case LinkPattern::kLine:
          if (x + 1 < n) y = x + 1;
          break;
        case LinkPattern::kHalves:
          if (x < n / 2) y = x + n / 2;
          break;
      }
      if (y < 0) continue;
      const auto other = static_cast<int>(c + (y - x) * stride);
      add_link(c, other, rule.bandwidth_gbps, rule.latency_ns, 0, 0, kind);
    }
  }

  // Tiers nearest the chips first: their switches get the lower node ids, so that of two
  // equally short routes the one through the nearer switch wins.
  std::vector<std::pair<const std::string*, const SwitchTier*>> tiers;
  for (const auto& [name, tier] : config.switches) tiers.emplace_back(&name, &tier);
  std::stable_sort(tiers.begin(), tiers.end(),
                   [](const auto& a, const auto& b) { return a.second->level < b.second->level; });
  for (const auto& [name_ptr, tier_ptr] : tiers) {
    const std::string& name = *name_ptr;
    const SwitchTier& tier = *tier_ptr;
    const int kind = static_cast<int>(kind_names_.size());
    kind_names_.push_back(name);
    // Switch number: the block's coordinates, row-major over the dimensions.
    std::vector<Dimension> blocks = dimensions_;
    std::vector<int> extent(dimensions_.size(), 1);
    for (const auto& [dim, e] : tier.block) {
      const std::size_t d = index_of(dimensions_, dim);
      extent[d] = e;
      blocks[d].size = dimensions_[d].size / e;
    }
    const auto block_strides = strides_of(blocks);
    const int first = nodes();
    const std::int64_t count = blocks.front().size * block_strides.front();
    for (int s = 0; s < count; ++s) nodes_.push_back({NodeKind::kSwitch, kind, s});
    for (int c = 0; c < chips_; ++c) {
      std::int64_t s = 0;
      for (std::size_t d = 0; d < dimensions_.size(); ++d) {
        const auto x = (c / strides[d]) % dimensions_[d].size;
        s += x / extent[d] * block_strides[d];
      }
      // The crossing of the switch is charged on the way out of it.
      add_link(c, first + static_cast<int>(s), tier.port_gbps, tier.link_latency_ns, 0,
               tier.switch_latency_ns, kind);
    }
  }

  const int efa_kind = static_cast<int>(kind_names_.size());
  kind_names_.emplace_back("efa");
  if (config.instances > 1) {
    const int network = nodes();
    nodes_.push_back({NodeKind::kNetwork, -1, 0});
    // The published latency is HBM to HBM: half on the way in, half on the way out.
    const double half = config.efa.latency_ns / 2;
    for (int c = 0; c < chips_; ++c) {
      add_link(c, network, config.efa.gbit_per_chip / kBitsPerByte, half, 0, 0, efa_kind);
    }
  }

  // Outgoing channels by node (CSR), in the order they were added: deterministic routes.
  out_offsets_.assign(nodes_.size() + 1, 0);
  for (const auto& ch : channels_) ++out_offsets_[static_cast<std::size_t>(ch.from) + 1];
  for (std::size_t i = 1; i < out_offsets_.size(); ++i) out_offsets_[i] += out_offsets_[i - 1];
  out_ids_.assign(channels_.size(), 0);
  std::vector<int> fill(out_offsets_.begin(), out_offsets_.end() - 1);
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    out_ids_[static_cast<std::size_t>(fill[static_cast<std::size_t>(channels_[i].from)]++)] =
        static_cast<int>(i);
  }

  // Every chip must reach every other: links are symmetric, so reaching all from chip 0 does.
  std::vector<char> seen(nodes_.size(), 0);
  std::vector<int> stack = {0};
  seen[0] = 1;
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    for (const int ch : out_channels(n)) {
      const int to = channels_[static_cast<std::size_t>(ch)].to;
      if (seen[static_cast<std::size_t>(to)] == 0) {
        seen[static_cast<std::size_t>(to)] = 1;
        stack.push_back(to);
      }
    }
  }
  const int reached =
      static_cast<int>(std::count(seen.begin(), seen.begin() + chips_, static_cast<char>(1)));
  for (int c = 0; c < chips_; ++c) {
    if (seen[static_cast<std::size_t>(c)] != 0) continue;
    throw ConfigError("links", fmt::format("{} cannot be reached from {}: no link, switch or EFA "
                                           "path joins them (chip 0 reaches {} of the {} chips)",
                                           describe(c), describe(0), reached, chips_));
  }
}

void Topology::add_link(int a, int b, double bytes_per_ns, double latency_ns, double extra_a_to_b,
                        double extra_b_to_a, int kind) {
  channels_.push_back({a, b, bytes_per_ns, latency_ns + extra_a_to_b, kind});
  channels_.push_back({b, a, bytes_per_ns, latency_ns + extra_b_to_a, kind});
}

std::span<const int> Topology::out_channels(int node) const {
  const auto n = static_cast<std::size_t>(node);
  const auto begin = static_cast<std::size_t>(out_offsets_.at(n));
  const auto end = static_cast<std::size_t>(out_offsets_.at(n + 1));
  return {out_ids_.data() + begin, end - begin};
}

std::vector<int> Topology::coordinates(int chip) const {
  if (chip < 0 || chip >= chips_) throw std::out_of_range(fmt::format("no chip {}", chip));
  std::vector<int> out(dimensions_.size());
  for (std::size_t i = dimensions_.size(); i-- > 0;) {
    out[i] = chip % dimensions_[i].size;
    chip /= dimensions_[i].size;
  }
  return out;
}

int Topology::chip_at(const std::vector<int>& coordinates) const {
  if (coordinates.size() != dimensions_.size()) {
    throw std::out_of_range(
        fmt::format("{} coordinates for {} dimensions", coordinates.size(), dimensions_.size()));
  }
  int chip = 0;
  for (std::size_t i = 0; i < dimensions_.size(); ++i) {
    if (coordinates[i] < 0 || coordinates[i] >= dimensions_[i].size) {
      throw std::out_of_range(fmt::format("{} {} is outside 0..{}", dimensions_[i].name,
                                          coordinates[i], dimensions_[i].size - 1));
    }
    chip = chip * dimensions_[i].size + coordinates[i];
  }
  return chip;
}

std::string Topology::describe(int id) const {
  const Node& n = node(id);
  switch (n.kind) {
    case NodeKind::kChip: {
      const auto xs = coordinates(n.index);
      std::string where;
      // The instance coordinate only when there are several instances.
      for (std::size_t i = dimensions_.front().size > 1 ? 0 : 1; i < xs.size(); ++i) {
        where += fmt::format("{}{} {}", where.empty() ? "" : ", ", dimensions_[i].name, xs[i]);
      }
      return fmt::format("chip {} ({})", n.index, where);
    }
    case NodeKind::kSwitch:
      return fmt::format("switch {}[{}]", kind_names_.at(static_cast<std::size_t>(n.group)),
                         n.index);
    case NodeKind::kNetwork:
      return "efa";
  }
  return "?";
}

std::vector<double> Topology::shortest_latencies(int from, std::vector<int>& via) const {
  constexpr double kUnreached = std::numeric_limits<double>::infinity();
  std::vector<double> latency(nodes_.size(), kUnreached);
  std::vector<int> hops(nodes_.size(), std::numeric_limits<int>::max());
  via.assign(nodes_.size(), -1);
  using Entry = std::tuple<double, int, int>;  // latency, hops, node: ties go to the lower node
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  latency[static_cast<std::size_t>(from)] = 0;
  hops[static_cast<std::size_t>(from)] = 0;
  queue.emplace(0.0, 0, from);
  while (!queue.empty()) {
    const auto [l, h, n] = queue.top();
    queue.pop();
    const auto ni = static_cast<std::size_t>(n);
    if (l != latency[ni] || h != hops[ni]) continue;  // a stale entry
    for (const int ch : out_channels(n)) {
      const Channel& c = channels_[static_cast<std::size_t>(ch)];
      const auto to = static_cast<std::size_t>(c.to);
      const double nl = l + c.latency_ns;
      if (nl < latency[to] || (nl == latency[to] && h + 1 < hops[to])) {
        latency[to] = nl;
        hops[to] = h + 1;
        via[to] = ch;
        queue.emplace(nl, h + 1, c.to);
      }
    }
  }
  return latency;
}

std::vector<Route> Topology::routes_from(int chip) const {
  if (chip < 0 || chip >= chips_) throw std::out_of_range(fmt::format("no chip {}", chip));
  std::vector<int> via;
  const auto latency = shortest_latencies(chip, via);
  std::vector<Route> routes(static_cast<std::size_t>(chips_));
  for (int to = 0; to < chips_; ++to) {
    Route& r = routes[static_cast<std::size_t>(to)];
    r.latency_ns = latency[static_cast<std::size_t>(to)];
    for (int n = to; n != chip;) {
      const int ch = via[static_cast<std::size_t>(n)];
      r.channels.push_back(ch);
      n = channels_[static_cast<std::size_t>(ch)].from;
    }
    std::reverse(r.channels.begin(), r.channels.end());
    r.bytes_per_ns = 0;
    for (const int ch : r.channels) {
      const double bw = channels_[static_cast<std::size_t>(ch)].bytes_per_ns;
      r.bytes_per_ns = r.bytes_per_ns == 0 ? bw : std::min(r.bytes_per_ns, bw);
    }
  }
  return routes;
}

Route Topology::route(int from_chip, int to_chip) const {
  if (to_chip < 0 || to_chip >= chips_) throw std::out_of_range(fmt::format("no chip {}", to_chip));
  return routes_from(from_chip)[static_cast<std::size_t>(to_chip)];
}

double Topology::neuronlink_bytes_per_ns(int chip) const {
  const int efa_kind = static_cast<int>(kind_names_.size()) - 1;
  double total = 0;
  for (const int ch : out_channels(chip)) {
    const Channel& c = channels_[static_cast<std::size_t>(ch)];
    if (c.kind != efa_kind) total += c.bytes_per_ns;
  }
  return total;
}

}  // namespace trnsim::system
