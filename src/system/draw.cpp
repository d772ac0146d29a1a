// Drawings of a topology: a terminal picture for `trnsim system show` and Graphviz DOT.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>

#include "system/system.h"

namespace trnsim::system {

namespace {

// Rows and columns shown before a drawing is cut (a 2^20-chip system must not print a book).
constexpr int kMaxDrawnRows = 64;
constexpr int kHeadRows = 48;
constexpr int kMaxDrawnColumns = 24;
constexpr int kMinLabelWidth = 10;  // "server 35", "row 3": the presets' labels line up at 10
constexpr std::size_t kMaxSwitchRuns = 8;  // "l1[0-3,8,12-15]": runs listed before "..."

bool drawable(const LinkRule& rule) {
  return rule.pattern == LinkPattern::kRing || rule.pattern == LinkPattern::kLine;
}

// "5", "0-3", "0-3,8,12-15": switch numbers as runs, so that a gap shows.
std::string runs_of(const std::set<int>& ids) {
  std::string out;
  std::size_t runs = 0;
  for (auto it = ids.begin(); it != ids.end();) {
    const int first = *it;
    int last = first;
    while (++it != ids.end() && *it == last + 1) ++last;
    if (++runs > kMaxSwitchRuns) return out + ",...";
    out += fmt::format("{}{}", out.empty() ? "" : ",", first);
    if (last > first) out += fmt::format("-{}", last);
  }
  return out;
}

// The switches a set of chips attaches to, tier by tier in kind order, in one pass over their
// channels: " server_switch[5] rack_switch[0]", or "" when they attach to none.
std::string switches_of(const Topology& t, int first_chip, int count) {
  std::map<int, std::set<int>> ids;  // by kind
  for (int c = first_chip; c < first_chip + count; ++c) {
    for (const int ch : t.out_channels(c)) {
      const Channel& channel = t.channels()[static_cast<std::size_t>(ch)];
      const Node& to = t.node(channel.to);
      if (to.kind == NodeKind::kSwitch) ids[channel.kind].insert(to.index);
    }
  }
  std::string out;
  for (const auto& [kind, numbers] : ids) {
    out += fmt::format(" {}[{}]", t.kind_names()[static_cast<std::size_t>(kind)], runs_of(numbers));
  }
  return out;
}

struct Grid {
  int columns = 1;                   // chips across: the last dimension
  int rows = 1;                      // every other dimension, flattened
  std::size_t row_dim;               // the dimension that changes from one row to the next
  int rows_per_block;                // rows with the same outer coordinates
  int label_width = kMinLabelWidth;  // "row 3" padded: wider than the longest label
  bool across_links = false, across_wrap = false, down_links = false, down_wrap = false;
};

Grid grid_of(const SystemConfig& config, const Topology& t) {
  const auto& dims = t.dimensions();
  Grid g;
  g.columns = dims.back().size;
  g.rows = t.chips() / g.columns;
  g.row_dim = dims.size() - 2;  // dims[0] is the instance dimension
  g.rows_per_block = dims[g.row_dim].size;
  // The longest label and a space, so that no label runs into its row.
  const auto longest =
      dims[g.row_dim].name.size() + 1 + std::to_string(g.rows_per_block - 1).size();
  g.label_width = std::max(g.label_width, static_cast<int>(longest) + 1);
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
  const std::string label = fmt::format("{} {}", dims[g.row_dim].name, xs[g.row_dim]);
  std::string line = fmt::format("  {:<{}}", label, g.label_width);
  line += g.across_wrap ? "~" : " ";
  for (int col = 0; col < shown; ++col) {
    if (col > 0) line += g.across_links ? "---" : "   ";
    line += fmt::format("{:>{}}", row * g.columns + col, width);
  }
  if (shown < g.columns) line += fmt::format(" ... ({} more)", g.columns - shown);
  line += g.across_wrap ? "~" : " ";
  const std::string attached = switches_of(t, row * g.columns, g.columns);
  out += line + (attached.empty() ? "" : "   |" + attached) + "\n";
}

void draw_down_links(std::string& out, const Grid& g, int width) {
  std::string line = fmt::format("  {:<{}} ", "", g.label_width);
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
                          dims[static_cast<std::size_t>(t.dimension_of(rule.along))].size / 2)
            : fmt::format(
                  "{} c <-> {} c+1{}", rule.along, rule.along,
                  rule.pattern == LinkPattern::kRing ? " (a ring: the last to the first)" : "");
    out += fmt::format("  not drawn: {}: {}, every other coordinate equal\n", name, how);
  }
  return out;
}

// A DOT quoted string's content: a quote or a backslash in a name must not end the string.
std::string dot_quoted(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
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
  std::string out =
      fmt::format("graph \"{}\" {{\n  node [shape=box, fontsize=10];\n", dot_quoted(config.name));
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
