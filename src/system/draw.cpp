// Drawings of a topology: a terminal picture for `trnsim system show` and Graphviz DOT.
#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "system/system.h"

namespace trnsim::system {

namespace {

// Rows and columns shown before a drawing is cut (a 2^20-chip system must not print a book).
constexpr int kMaxDrawnRows = 64;
constexpr int kHeadRows = 48;
constexpr int kMaxDrawnColumns = 24;

std::size_t index_of_dimension(const std::vector<Dimension>& dims, const std::string& name) {
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].name == name) return i;
  }
  return 0;
}

bool drawable(const LinkRule& rule) {
  return rule.pattern == LinkPattern::kRing || rule.pattern == LinkPattern::kLine;
}

// The switches a set of chips attaches to in one tier: "server_switch[5]" or "l2[0-1]".
std::string switches_of(const Topology& t, int tier_kind, int first_chip, int count) {
  std::set<int> ids;
  for (int c = first_chip; c < first_chip + count; ++c) {
    for (const int ch : t.out_channels(c)) {
      const Channel& channel = t.channels()[static_cast<std::size_t>(ch)];
      const Node& to = t.node(channel.to);
      if (channel.kind == tier_kind && to.kind == NodeKind::kSwitch) ids.insert(to.index);
    }
  }
  if (ids.empty()) return "";
  const std::string& name = t.kind_names()[static_cast<std::size_t>(tier_kind)];
  if (ids.size() == 1) return fmt::format("{}[{}]", name, *ids.begin());
  return fmt::format("{}[{}-{}]", name, *ids.begin(), *ids.rbegin());
}

struct Grid {
  int columns = 1;      // chips across: the last dimension
  int rows = 1;         // every other dimension, flattened
  std::size_t row_dim;  // the dimension that changes from one row to the next
  int rows_per_block;   // rows with the same outer coordinates
  bool across_links = false, across_wrap = false, down_links = false, down_wrap = false;
};

Grid grid_of(const SystemConfig& config, const Topology& t) {
  const auto& dims = t.dimensions();
  Grid g;
  g.columns = dims.back().size;
  g.rows = t.chips() / g.columns;
  g.row_dim = dims.size() - 2;  // dims[0] is the instance dimension
  g.rows_per_block = dims[g.row_dim].size;
  for (const auto& [name, rule] : config.links) {
    if (!drawable(rule)) continue;
    if (rule.along == dims.back().name) {
      g.across_links = true;
      g.across_wrap |= rule.pattern == LinkPattern::kRing && g.columns > 2;
    } else if (rule.along == dims[g.row_dim].name) {
      g.down_links = true;
      g.down_wrap |= rule.pattern == LinkPattern::kRing && g.rows_per_block > 2;
    }
  }
  return g;
}

// "node 1, " style header of a block of rows (outer coordinates), "" for the only block.
std::string block_header(const Topology& t, const Grid& g, int row) {
  const auto& dims = t.dimensions();
  const auto xs = t.coordinates(row * g.columns);
  std::string out;
  for (std::size_t i = 0; i < g.row_dim; ++i) {
    if (dims[i].size == 1) continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", dims[i].name, xs[i]);
  }
  return out;
}

void draw_row(std::string& out, const Topology& t, const Grid& g, int row, int width) {
  const auto& dims = t.dimensions();
  const int shown = std::min(g.columns, kMaxDrawnColumns);
  const auto xs = t.coordinates(row * g.columns);
  std::string line =
      fmt::format("  {:<10}", fmt::format("{} {}", dims[g.row_dim].name, xs[g.row_dim]));
  line += g.across_wrap ? "~" : " ";
  for (int col = 0; col < shown; ++col) {
    if (col > 0) line += g.across_links ? "---" : "   ";
    line += fmt::format("{:>{}}", row * g.columns + col, width);
  }
  if (shown < g.columns) line += fmt::format(" ... ({} more)", g.columns - shown);
  line += g.across_wrap ? "~" : " ";
  std::string attached;
  for (int kind = 0; kind < static_cast<int>(t.kind_names().size()); ++kind) {
    const std::string s = switches_of(t, kind, row * g.columns, g.columns);
    if (!s.empty()) {
      attached += (attached.empty() ? "   | " : " ") + s;
    }
  }
  out += line + attached + "\n";
}

void draw_down_links(std::string& out, const Grid& g, int width) {
  std::string line = fmt::format("  {:<10} ", "");
  const int shown = std::min(g.columns, kMaxDrawnColumns);
  for (int col = 0; col < shown; ++col) {
    if (col > 0) line += "   ";
    line += fmt::format("{:>{}}", "|", width);
  }
  out += line + "\n";
}

std::string legend(const SystemConfig& config, const Topology& t, const Grid& g) {
  const auto& dims = t.dimensions();
  std::string out = "  key: numbers are chips";
  if (g.across_links) {
    out += fmt::format("; --- links along {}{}", dims.back().name,
                       g.across_wrap ? " (~: the row wraps around)" : "");
  }
  if (g.down_links) {
    out += fmt::format("; | links along {}{}", dims[g.row_dim].name,
                       g.down_wrap ? " (the last row links back to the first)" : "");
  }
  out += "\n";
  for (const auto& [name, rule] : config.links) {
    const bool shown =
        drawable(rule) && (rule.along == dims.back().name || rule.along == dims[g.row_dim].name);
    if (shown) continue;
    const std::string how =
        rule.pattern == LinkPattern::kHalves
            ? fmt::format("{} c <-> {} c+{}", rule.along, rule.along,
                          dims[index_of_dimension(dims, rule.along)].size / 2)
            : fmt::format(
                  "{} c <-> {} c+1{}", rule.along, rule.along,
                  rule.pattern == LinkPattern::kRing ? " (a ring: the last to the first)" : "");
    out += fmt::format("  not drawn: {}: {}, every other coordinate equal\n", name, how);
  }
  return out;
}

}  // namespace

std::string draw(const SystemConfig& config, const Topology& t) {
  const Grid g = grid_of(config, t);
  const int width = static_cast<int>(std::to_string(t.chips() - 1).size());
  std::string out;
  std::string previous_header;
  for (int row = 0; row < g.rows; ++row) {
    const bool cut = g.rows > kMaxDrawnRows && row >= kHeadRows && row < g.rows - 1;
    if (cut) {
      if (row == kHeadRows) out += fmt::format("  ... {} rows not drawn ...\n", g.rows - 1 - row);
      continue;
    }
    const std::string header = block_header(t, g, row);
    if (!header.empty() && header != previous_header) out += header + ":\n";
    previous_header = header;
    draw_row(out, t, g, row, width);
    const bool last_of_block = (row + 1) % g.rows_per_block == 0;
    if (g.down_links && !last_of_block && row + 1 < g.rows) draw_down_links(out, g, width);
  }
  return out + legend(config, t, g);
}

std::string to_dot(const SystemConfig& config, const Topology& t) {
  std::string out = fmt::format("graph \"{}\" {{\n  node [shape=box, fontsize=10];\n", config.name);
  for (int n = 0; n < t.nodes(); ++n) {
    const Node& node = t.node(n);
    const bool chip = node.kind == NodeKind::kChip;
    out +=
        fmt::format("  n{} [label=\"{}\"{}];\n", n, t.describe(n), chip ? "" : ", shape=ellipse");
  }
  // One edge per link: channels come in pairs of opposite direction.
  for (std::size_t i = 0; i < t.channels().size(); i += 2) {
    const Channel& c = t.channels()[i];
    out += fmt::format("  n{} -- n{} [label=\"{} {:g} GB/s\"];\n", c.from, c.to,
                       t.kind_names()[static_cast<std::size_t>(c.kind)], c.bytes_per_ns);
  }
  return out + "}\n";
}

}  // namespace trnsim::system
