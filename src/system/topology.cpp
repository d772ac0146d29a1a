// The topology graph of a system: chips, switches and the EFA network as nodes, each link as
// two channels of opposite direction; routes by Dijkstra over (latency, hops).
#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <queue>
#include <stdexcept>
#include <tuple>

#include "arch/config_json.h"
#include "system/system.h"

namespace trnsim::system {

namespace {

constexpr double kBitsPerByte = 8;

std::vector<std::int64_t> strides_of(const std::vector<Dimension>& dims) {
  std::vector<std::int64_t> strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i].size;
  return strides;
}

}  // namespace

Topology::Topology(const SystemConfig& config) : dimensions_(config.dimensions()) {
  // Sizes, names, blocks and the link count first: what follows trusts them.
  detail::validate_structure(config);
  chips_ = static_cast<int>(config.chips());
  for (std::size_t d = 0; d < dimensions_.size(); ++d) {
    dimension_ids_.emplace(dimensions_[d].name, static_cast<int>(d));
  }
  for (int c = 0; c < chips_; ++c) nodes_.push_back({NodeKind::kChip, -1, c});
  for (const auto& [name, rule] : config.links) add_rule(name, rule);
  // Tiers nearest the chips first: their switches get the lower node ids, so that of two
  // equally short routes the one through the nearer switch wins.
  for (const auto& name : tiers_by_level(config)) add_tier(name, config.switches.at(name));
  const int efa_kind = add_kind(kEfaKind);
  if (config.instances > 1) {
    const int network = nodes();
    nodes_.push_back({NodeKind::kNetwork, -1, 0});
    // The published latency is HBM to HBM: half on the way in, half on the way out.
    const double half = config.efa.latency_ns / 2;
    for (int c = 0; c < chips_; ++c) {
      add_link(c, network, config.efa.gbit_per_chip / kBitsPerByte, half, 0, 0, efa_kind);
    }
  }
  index_channels();
  check_reachable();
}

int Topology::add_kind(const std::string& name) {
  const int kind = static_cast<int>(kind_names_.size());
  kind_names_.push_back(name);
  kind_ids_.emplace(name, kind);
  return kind;
}

void Topology::add_rule(const std::string& name, const LinkRule& rule) {
  const int kind = add_kind(name);
  const auto d = static_cast<std::size_t>(dimension_of(rule.along));
  const int n = dimensions_[d].size;
  const auto stride = strides_of(dimensions_)[d];
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

void Topology::add_tier(const std::string& name, const SwitchTier& tier) {
  const int kind = add_kind(name);
  // Switch number: the block's coordinates, row-major over the dimensions.
  std::vector<Dimension> blocks = dimensions_;
  std::vector<int> extent(dimensions_.size(), 1);
  for (const auto& [dim, e] : tier.block) {
    const auto d = static_cast<std::size_t>(dimension_of(dim));
    extent[d] = e;
    blocks[d].size = dimensions_[d].size / e;
  }
  const auto strides = strides_of(dimensions_);
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

// Outgoing channels by node (CSR), in the order they were added: deterministic routes.
void Topology::index_channels() {
  out_offsets_.assign(nodes_.size() + 1, 0);
  for (const auto& ch : channels_) ++out_offsets_[static_cast<std::size_t>(ch.from) + 1];
  for (std::size_t i = 1; i < out_offsets_.size(); ++i) out_offsets_[i] += out_offsets_[i - 1];
  out_ids_.assign(channels_.size(), 0);
  std::vector<int> fill(out_offsets_.begin(), out_offsets_.end() - 1);
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    out_ids_[static_cast<std::size_t>(fill[static_cast<std::size_t>(channels_[i].from)]++)] =
        static_cast<int>(i);
  }
}

// Every chip must reach every other: links are symmetric, so reaching all from chip 0 does.
void Topology::check_reachable() const {
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

int Topology::kind_of(const std::string& name) const {
  const auto it = kind_ids_.find(name);
  return it == kind_ids_.end() ? -1 : it->second;
}

int Topology::dimension_of(const std::string& name) const {
  const auto it = dimension_ids_.find(name);
  return it == dimension_ids_.end() ? -1 : it->second;
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

namespace {

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return "";
  return std::string(text.substr(first, text.find_last_not_of(" \t") - first + 1));
}

// A whole number of at most 9 digits (no sign, no "0x", no exponent), or -1.
int whole_number(const std::string& text) {
  if (text.empty() || text.size() > 9) return -1;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  return std::stoi(text);
}

}  // namespace

int Topology::chip_named(const std::string& spec) const {
  using arch::config_detail::did_you_mean;
  using arch::config_detail::escape_control;
  using arch::config_detail::join;
  using arch::config_detail::shorten;
  const std::string quoted = "\"" + escape_control(shorten(spec)) + "\"";
  std::vector<std::string> names;
  std::string example;  // "row=1,col=2": every dimension of the shape at its last coordinate
  for (const auto& d : dimensions_) {
    names.push_back(d.name);
    if (d.name == kInstanceDimension) continue;
    example += fmt::format("{}{}={}", example.empty() ? "" : ",", d.name, d.size - 1);
  }
  const std::string wanted = trimmed(spec);
  if (wanted.find('=') == std::string::npos) {
    const int chip = whole_number(wanted);
    if (chip >= 0 && chip < chips_) return chip;
    throw std::invalid_argument(
        fmt::format("{} is not a chip: give its number, 0..{}, or its coordinates, such as \"{}\"",
                    quoted, chips_ - 1, example));
  }
  std::vector<int> xs(dimensions_.size(), 0);
  std::vector<bool> given(dimensions_.size(), false);
  std::string_view rest = wanted;
  while (true) {
    const auto comma = rest.find(',');
    const std::string part = trimmed(rest.substr(0, comma));
    const auto equals = part.find('=');
    const std::string name = trimmed(std::string_view(part).substr(0, equals));
    const std::string value =
        equals == std::string::npos ? "" : trimmed(std::string_view(part).substr(equals + 1));
    const int d = dimension_of(name);
    if (d < 0) {
      throw std::invalid_argument(
          fmt::format("{}: \"{}\" is not a dimension; the dimensions are {}{}", quoted,
                      escape_control(shorten(name)), join(names), did_you_mean(name, names)));
    }
    const auto di = static_cast<std::size_t>(d);
    const int x = whole_number(value);
    if (given[di] || x < 0 || x >= dimensions_[di].size) {
      throw std::invalid_argument(fmt::format("{}: {} must be given once, as a number in 0..{}",
                                              quoted, name, dimensions_[di].size - 1));
    }
    xs[di] = x;
    given[di] = true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return chip_at(xs);
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

void Topology::search(int chip, int stop_at, Search& s) const {
  if (chip < 0 || chip >= chips_) throw std::out_of_range(fmt::format("no chip {}", chip));
  if (s.latency.size() != nodes_.size()) {
    s.latency.assign(nodes_.size(), std::numeric_limits<double>::infinity());
    s.hops.assign(nodes_.size(), std::numeric_limits<int>::max());
    s.via.assign(nodes_.size(), -1);
    s.touched.clear();
  }
  for (const int n : s.touched) {  // clear the last search's entries
    const auto ni = static_cast<std::size_t>(n);
    s.latency[ni] = std::numeric_limits<double>::infinity();
    s.hops[ni] = std::numeric_limits<int>::max();
    s.via[ni] = -1;
  }
  s.touched.clear();
  using Entry = std::tuple<double, int, int>;  // latency, hops, node: ties go to the lower node
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  s.latency[static_cast<std::size_t>(chip)] = 0;
  s.hops[static_cast<std::size_t>(chip)] = 0;
  s.touched.push_back(chip);
  queue.emplace(0.0, 0, chip);
  while (!queue.empty()) {
    const auto [l, h, n] = queue.top();
    queue.pop();
    const auto ni = static_cast<std::size_t>(n);
    if (l != s.latency[ni] || h != s.hops[ni]) continue;  // a stale entry
    if (n == stop_at) return;
    for (const int ch : out_channels(n)) {
      const Channel& c = channels_[static_cast<std::size_t>(ch)];
      const auto to = static_cast<std::size_t>(c.to);
      const double nl = l + c.latency_ns;
      if (nl < s.latency[to] || (nl == s.latency[to] && h + 1 < s.hops[to])) {
        if (s.via[to] < 0 && to != static_cast<std::size_t>(chip)) s.touched.push_back(c.to);
        s.latency[to] = nl;
        s.hops[to] = h + 1;
        s.via[to] = ch;
        queue.emplace(nl, h + 1, c.to);
      }
    }
  }
}

Topology::Search Topology::search_from(int chip) const {
  Search s;
  search(chip, -1, s);
  return s;
}

Route Topology::route_in(const Search& search, int from, int to) const {
  Route r;
  r.latency_ns = search.latency[static_cast<std::size_t>(to)];
  for (int n = to; n != from;) {
    const int ch = search.via[static_cast<std::size_t>(n)];
    r.channels.push_back(ch);
    n = channels_[static_cast<std::size_t>(ch)].from;
  }
  std::reverse(r.channels.begin(), r.channels.end());
  for (const int ch : r.channels) {
    const double bw = channels_[static_cast<std::size_t>(ch)].bytes_per_ns;
    r.bytes_per_ns = r.bytes_per_ns == 0 ? bw : std::min(r.bytes_per_ns, bw);
  }
  return r;
}

std::vector<Route> Topology::routes_from(int chip) const {
  const Search search = search_from(chip);
  std::vector<Route> routes;
  routes.reserve(static_cast<std::size_t>(chips_));
  for (int to = 0; to < chips_; ++to) routes.push_back(route_in(search, chip, to));
  return routes;
}

Route Topology::route(int from_chip, int to_chip) const {
  RouteScratch scratch;
  return route(from_chip, to_chip, scratch);
}

Route Topology::route(int from_chip, int to_chip, RouteScratch& scratch) const {
  if (to_chip < 0 || to_chip >= chips_) throw std::out_of_range(fmt::format("no chip {}", to_chip));
  search(from_chip, to_chip, scratch);
  return route_in(scratch, from_chip, to_chip);
}

RouteLengths Topology::route_lengths_from(int chip) const {
  Search search = search_from(chip);
  search.latency.resize(static_cast<std::size_t>(chips_));  // chips come first in node ids
  search.hops.resize(static_cast<std::size_t>(chips_));
  return {std::move(search.latency), std::move(search.hops)};
}

double Topology::neuronlink_bytes_per_ns(int chip) const {
  const int efa_kind = kind_of(kEfaKind);
  double total = 0;
  for (const int ch : out_channels(chip)) {
    const Channel& c = channels_[static_cast<std::size_t>(ch)];
    if (c.kind != efa_kind) total += c.bytes_per_ns;
  }
  return total;
}

}  // namespace trnsim::system
