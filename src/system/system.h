// Systems of many chips: instances and UltraServers as data, and the topology graph that
// routes between their chips.
//
// A system config names its chip (a chip preset or a chip config file), how its chips are
// numbered (`shape`: named dimensions, outermost first), the NeuronLink links between them
// (`links`: rules along a dimension), its NeuronSwitch switches (`switches`: one per block of
// chips) and EFA between instances. Presets (trn1.32xlarge, trn2.48xlarge, trn2-ultraserver,
// trn3-ultraserver-gen1, trn3-ultraserver-gen2) ship as JSON in src/system/presets/ and are
// embedded in the binary; a user file may start from one ("base") and override any field.
// Every figure carries its public source or an estimate flag, as chip configs do. The format,
// every field and every error: docs/system-config.md.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "arch/arch.h"

namespace trnsim::system {

using arch::ConfigError;
using arch::Param;
using arch::PublishedFigure;

// The dimension that numbers instances (EFA joins them); the loader puts it first in
// SystemConfig::dimensions() and a config may not name its own dimension so.
inline constexpr const char* kInstanceDimension = "instance";

struct Dimension {
  std::string name;
  int size = 1;
  bool operator==(const Dimension&) const = default;
};

// How a link rule joins the chips along its dimension (coordinate c, dimension size n).
enum class LinkPattern : std::uint8_t {
  kRing,    // c <-> c+1, and n-1 <-> 0 (a torus ring; n = 2 gives one link, n = 1 none)
  kLine,    // c <-> c+1 without the wrap-around
  kHalves,  // c <-> c + n/2 for c < n/2 (Trn3's direct links between paired servers)
};
std::string link_pattern_name(LinkPattern p);  // "ring", "line", "halves"

// Links between chips that differ in one coordinate; every other coordinate is equal.
struct LinkRule {
  std::string along;  // a dimension of `shape`
  LinkPattern pattern = LinkPattern::kRing;
  Param bandwidth_gbps;       // per direction, GB/s (= bytes/ns)
  Param latency_ns;           // one traversal of the link
  arch::Provenance topology;  // where the rule itself (which chips it joins) comes from
  bool operator==(const LinkRule&) const = default;
};

// A tier of switches: one switch per block of chips, every chip of the block attached to it.
// `block` gives the block's extent along each dimension (a dimension it does not name: 1).
struct SwitchTier {
  int level = 1;                     // 1 = nearest the chips (for drawings and reports)
  std::map<std::string, int> block;  // chips per switch along each named dimension
  Param port_gbps;                   // one chip's attachment, per direction, GB/s
  Param link_latency_ns;             // chip <-> switch, one way
  Param switch_latency_ns;           // crossing the switch
  arch::Provenance topology;
  bool operator==(const SwitchTier&) const = default;
};

// EFA joins the instances: one network every chip of every instance attaches to (with a
// single instance it is not part of the graph).
struct EfaConfig {
  Param gbit_per_chip;  // one chip's EFA rate, Gbit/s, per direction
  Param latency_ns;     // HBM to HBM across the network, one way
  bool operator==(const EfaConfig&) const = default;
};

struct SystemConfig {
  std::string name;  // preset or file name
  std::string description;
  std::string chip;              // the chip as written: a chip preset name or a file
  arch::ChipConfig chip_config;  // that chip, loaded
  int instances = 1;
  std::vector<Dimension> shape;                // one instance's chips, outermost first
  std::map<std::string, LinkRule> links;       // by name
  std::map<std::string, SwitchTier> switches;  // by name
  EfaConfig efa;
  // Published per-chip figures checked against the topology; key "neuronlink_gbps_per_chip":
  // the sum over a chip's NeuronLink links and switch ports, per direction.
  std::map<std::string, PublishedFigure> published;
  std::map<std::string, arch::Provenance> provenance;  // of `instances` and `shape`

  // `shape` with the instance dimension first.
  std::vector<Dimension> dimensions() const;
  // instances x the product of `shape`; above kMaxChips (a config validate() refuses) it
  // stops at kMaxChips + 1 rather than overflow.
  std::int64_t chips() const;
  bool operator==(const SystemConfig&) const = default;
};

// Systems may hold at most this many chips (2^20): the graph holds every link.
inline constexpr std::int64_t kMaxChips = std::int64_t{1} << 20;
// And at most this many links (2^22, about 300 MB of graph): link rules, switch ports and EFA
// attachments together. A 2^20-chip 2D torus on EFA makes 3 x 2^20.
inline constexpr std::int64_t kMaxLinks = std::int64_t{1} << 22;
// The reserved link kind of EFA: no link rule or switch tier may be named so.
inline constexpr const char* kEfaKind = "efa";

std::vector<std::string> preset_names();
SystemConfig load_preset(const std::string& name);  // throws ConfigError for unknown names
const std::string& preset_json_text(const std::string& name);
// A file whose "base" names a system preset, overriding fields; or a complete config. A chip
// given as a path is found relative to the file's directory.
SystemConfig load_file(const std::string& path);
SystemConfig load_json_text(const std::string& text, const std::string& origin);
// A preset name or a path to a JSON file.
SystemConfig load(const std::string& preset_or_path);
// The complete config, every figure with its provenance; the chip as written.
nlohmann::json to_json(const SystemConfig& c);
// Checks ranges, names, printable text, the link count, the published figures and that every
// chip can reach every other (it builds the topology); throws ConfigError naming the field.
// The loaders call it.
void validate(const SystemConfig& c);
// The switch tier names by level (nearest the chips first), then by name: the order of their
// node ids, of Topology::kind_names() and of reports.
std::vector<std::string> tiers_by_level(const SystemConfig& c);
// The JSON paths of the figures and rules marked as estimates, in the order to_json writes
// them (switch tiers by level): "shape", "links.z", "links.z.bandwidth_gbps", "published.x".
std::vector<std::string> estimated_fields(const SystemConfig& c);

namespace detail {
// The checks of validate() that come before the graph: ranges, names, text, dimensions,
// blocks and the link count. Topology's constructor runs them, so that no config, validated
// or not, can make it overflow, divide by zero or exhaust memory.
void validate_structure(const SystemConfig& c);
}  // namespace detail

// ---- the topology graph -----------------------------------------------------------------

enum class NodeKind : std::uint8_t { kChip, kSwitch, kNetwork };

struct Node {
  NodeKind kind = NodeKind::kChip;
  int group = -1;  // the switch tier's index in Topology::kind_names() (switches only)
  int index = 0;   // chip number, or the switch's number within its tier
};

// One direction of a link: channels come in pairs (2k, 2k + 1) of opposite directions.
struct Channel {
  int from = 0;  // node ids
  int to = 0;
  double bytes_per_ns = 0;  // = GB/s
  double latency_ns = 0;    // entering `to` (a switch's crossing time is on its way out)
  int kind = 0;             // index into Topology::kind_names()
};

struct Route {
  std::vector<int> channels;  // in order from the source chip
  double latency_ns = 0;      // sum over the channels
  double bytes_per_ns = 0;    // the narrowest channel (0 for a chip to itself)
  int hops() const { return static_cast<int>(channels.size()); }
};

// A search's state, kept between calls of Topology::route(from, to, scratch): each call then
// visits only the nodes nearer to `from` than `to` is, and clears only what it touched.
struct RouteScratch {
  std::vector<double> latency;
  std::vector<int> hops;
  std::vector<int> via;      // the channel a shortest route arrives by, -1 for none
  std::vector<int> touched;  // nodes whose entries the last search set
};

// The length of the shortest route from one chip to every chip (index: destination chip),
// without the routes themselves: what statistics over many pairs need.
struct RouteLengths {
  std::vector<double> latency_ns;
  std::vector<int> hops;
};

// The graph of a system: chips (node ids 0..chips-1, numbered row-major over dimensions()),
// then switches, then the EFA network (when there are several instances). Routes are
// shortest by latency, then by hops; ties go the same way on every run.
class Topology {
 public:
  // Throws ConfigError for a config detail::validate_structure() refuses, and if a chip is
  // unreachable.
  explicit Topology(const SystemConfig& config);

  int chips() const { return chips_; }
  int nodes() const { return static_cast<int>(nodes_.size()); }
  const Node& node(int id) const { return nodes_.at(static_cast<std::size_t>(id)); }
  const std::vector<Channel>& channels() const { return channels_; }
  std::span<const int> out_channels(int node) const;
  const std::vector<Dimension>& dimensions() const { return dimensions_; }
  // Link rule names, then switch tier names (by level, then name), then "efa": what
  // Channel::kind indexes.
  const std::vector<std::string>& kind_names() const { return kind_names_; }
  int kind_of(const std::string& name) const;       // index in kind_names(), or -1
  int dimension_of(const std::string& name) const;  // index in dimensions(), or -1
  std::vector<int> coordinates(int chip) const;
  int chip_at(const std::vector<int>& coordinates) const;  // throws std::out_of_range
  // "chip 5 (row 1, col 1)", "switch l2[0]", "efa".
  std::string describe(int node) const;
  // A chip as a user names it: its number ("77") or its coordinates ("server=19,chip=1", a
  // dimension not named being 0). Throws std::invalid_argument quoting `spec` as written, with
  // the valid numbers or dimensions and a did-you-mean for a misspelt dimension.
  int chip_named(const std::string& spec) const;

  // One shortest route: a search from `from_chip`, then its chain back from `to_chip` only.
  Route route(int from_chip, int to_chip) const;
  // The same route, searching only until `to_chip` is settled (the same route: a settled
  // node's route is final, and ties keep the first route found).
  Route route(int from_chip, int to_chip, RouteScratch& scratch) const;
  // Every shortest route from one chip (index: destination chip): costs chips x hops.
  std::vector<Route> routes_from(int chip) const;
  RouteLengths route_lengths_from(int chip) const;
  // Sum of a chip's NeuronLink channels out (links and switch ports, not EFA), bytes/ns.
  double neuronlink_bytes_per_ns(int chip) const;

 private:
  int add_kind(const std::string& name);
  void add_rule(const std::string& name, const LinkRule& rule);
  void add_tier(const std::string& name, const SwitchTier& tier);
  void add_link(int a, int b, double bytes_per_ns, double latency_ns, double extra_a_to_b,
                double extra_b_to_a, int kind);
  void index_channels();
  void check_reachable() const;
  using Search = RouteScratch;
  // Dijkstra from `chip` (std::out_of_range for a chip that is not one), over every node, or
  // until `stop_at` is settled; `search` holds infinities wherever it is not touched.
  void search(int chip, int stop_at, Search& search) const;
  Search search_from(int chip) const;
  Route route_in(const Search& search, int from, int to) const;

  std::vector<Dimension> dimensions_;
  int chips_ = 0;
  std::vector<Node> nodes_;
  std::vector<Channel> channels_;
  std::vector<int> out_offsets_;  // CSR over channels by source node
  std::vector<int> out_ids_;
  std::vector<std::string> kind_names_;
  std::map<std::string, int> kind_ids_;       // kind_names_ by name
  std::map<std::string, int> dimension_ids_;  // dimensions_ by name
};

// Routes on demand for systems too large to route from every chip: each is the route
// Topology::route gives, found by a search that stops at its target, translated from the
// first instance when both chips are in another one (instances are identical), or built
// directly over EFA between instances (their only connection), and kept for the next call.
// References stay valid for the cache's life. Not thread-safe.
class RouteCache {
 public:
  explicit RouteCache(const Topology& topology);
  const Route& route(int from_chip, int to_chip);
  std::size_t size() const { return routes_.size(); }

 private:
  Route translated(const Route& first, int instance) const;

  const Topology& topology_;
  int per_instance_ = 0;                // chips in one instance
  std::vector<int> node_shift_;         // a node's id step from one instance to the next
  std::vector<int> efa_up_, efa_down_;  // by chip: its EFA channels, -1 with one instance
  std::unordered_map<std::uint64_t, int> channel_by_ends_;  // from x nodes + to
  bool translatable_ = true;                                // no two channels join the same nodes
  std::unordered_map<std::uint64_t, Route> routes_;
  RouteScratch scratch_;
};

// A drawing of the topology a planner can read in a terminal: the chips as a grid (the last
// dimension across), their links, and which switches each row of chips attaches to.
std::string draw(const SystemConfig& config, const Topology& topology);
// The same graph in Graphviz's DOT language.
std::string to_dot(const SystemConfig& config, const Topology& topology);

}  // namespace trnsim::system
