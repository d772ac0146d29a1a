// Topology graphs of the presets: neighbours, per-chip bandwidth, routes, drawings.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "system/system.h"

namespace trnsim::system {
namespace {

// Hops of the longest shortest route between any two chips.
int diameter(const Topology& t) {
  int worst = 0;
  for (int from = 0; from < t.chips(); ++from) {
    for (const auto& r : t.routes_from(from)) worst = std::max(worst, r.hops());
  }
  return worst;
}

int neighbours(const Topology& t, int chip) {
  return static_cast<int>(t.out_channels(chip).size());
}

TEST(Topology, Trn2InstanceIsAFourByFourTorus) {
  const Topology t(load_preset("trn2.48xlarge"));
  ASSERT_EQ(t.chips(), 16);
  EXPECT_EQ(t.nodes(), 16);
  EXPECT_EQ(t.channels().size(), 2u * 32u);  // 16 chips x 4 neighbours / 2, both directions
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(neighbours(t, c), 4);
    EXPECT_DOUBLE_EQ(t.neuronlink_bytes_per_ns(c), 1024);
  }
  EXPECT_EQ(t.route(0, 3).hops(), 1);   // the row wraps around
  EXPECT_EQ(t.route(0, 12).hops(), 1);  // the column wraps around
  EXPECT_EQ(t.route(0, 5).hops(), 2);
  EXPECT_EQ(t.route(0, 10).hops(), 4);  // the far corner of a 4x4 torus
  EXPECT_DOUBLE_EQ(t.route(0, 10).latency_ns, 4 * 300);
  EXPECT_DOUBLE_EQ(t.route(0, 10).bytes_per_ns, 256);
  EXPECT_EQ(diameter(t), 4);
  // A route's channels join up from the source to the destination.
  const Route r = t.route(1, 14);
  int at = 1;
  for (const int ch : r.channels) {
    EXPECT_EQ(t.channels()[static_cast<std::size_t>(ch)].from, at);
    at = t.channels()[static_cast<std::size_t>(ch)].to;
  }
  EXPECT_EQ(at, 14);
}

TEST(Topology, Trn1InstanceHasItsPublishedPerChipBandwidth) {
  const Topology t(load_preset("trn1.32xlarge"));
  EXPECT_EQ(t.chips(), 16);
  EXPECT_DOUBLE_EQ(t.neuronlink_bytes_per_ns(7), 384);
  EXPECT_EQ(diameter(t), 4);
}

TEST(Topology, Trn2UltraServerAddsTheZRing) {
  const Topology t(load_preset("trn2-ultraserver"));
  ASSERT_EQ(t.chips(), 64);
  for (int c = 0; c < 64; ++c) {
    EXPECT_EQ(neighbours(t, c), 6);
    EXPECT_DOUBLE_EQ(t.neuronlink_bytes_per_ns(c), 1280);
  }
  EXPECT_EQ(t.route(0, 48).hops(), 1);  // node 3 wraps back to node 0
  EXPECT_DOUBLE_EQ(t.route(0, 48).bytes_per_ns, 128);
  EXPECT_EQ(diameter(t), 6);
}

TEST(Topology, Trn3Gen2RoutesThroughTheSwitchTiers) {
  const Topology t(load_preset("trn3-ultraserver-gen2"));
  ASSERT_EQ(t.chips(), 144);
  EXPECT_EQ(t.nodes(), 144 + 36 + 2);  // chips, a switch per server, two rack switches
  const auto via = [&](const Route& r) {
    std::string kinds;
    for (const int ch : r.channels) {
      kinds +=
          (kinds.empty() ? "" : ",") +
          t.kind_names()[static_cast<std::size_t>(t.channels()[static_cast<std::size_t>(ch)].kind)];
    }
    return kinds;
  };
  EXPECT_EQ(via(t.route(0, 1)), "server_switch,server_switch");  // same server
  EXPECT_DOUBLE_EQ(t.route(0, 1).latency_ns, 300 + 300 + 300);   // in, across, out
  EXPECT_EQ(via(t.route(0, 4)), "rack_switch,rack_switch");      // server 1, same rack
  EXPECT_EQ(via(t.route(0, 72)), "rack_to_rack");                // server 18: the direct link
  EXPECT_EQ(t.route(0, 77).hops(), 3);                           // server 19, chip 1
  EXPECT_EQ(t.describe(77), "chip 77 (server 19, chip 1)");
  EXPECT_EQ(t.describe(144), "switch server_switch[0]");
  EXPECT_EQ(t.describe(180), "switch rack_switch[0]");
  for (int c = 0; c < 144; ++c) EXPECT_DOUBLE_EQ(t.neuronlink_bytes_per_ns(c), 256 + 320 + 128);
  EXPECT_EQ(diameter(t), 3);
}

TEST(Topology, Trn3Gen1PairsServersOnSwitches) {
  const Topology t(load_preset("trn3-ultraserver-gen1"));
  ASSERT_EQ(t.chips(), 64);
  EXPECT_EQ(t.nodes(), 64 + 2);
  EXPECT_EQ(t.route(0, 16).hops(), 2);  // server 1 shares the switch
  EXPECT_EQ(t.route(0, 32).hops(), 1);  // server 2: the direct link
  EXPECT_EQ(t.route(0, 48).hops(), 3);  // server 3: direct link, then the other switch
  EXPECT_EQ(diameter(t), 3);
}

TEST(Topology, CoordinatesAndChipNumbersAgree) {
  const Topology t(load_preset("trn2-ultraserver"));
  for (int c = 0; c < t.chips(); ++c) EXPECT_EQ(t.chip_at(t.coordinates(c)), c);
  EXPECT_EQ(t.coordinates(27), (std::vector<int>{0, 1, 2, 3}));  // instance, node, row, col
  EXPECT_THROW(t.chip_at({0, 4, 0, 0}), std::out_of_range);
  EXPECT_THROW(t.coordinates(64), std::out_of_range);
  EXPECT_THROW(t.route(0, 64), std::out_of_range);
}

TEST(Topology, SmallRingsAndLinesLinkEachPairOnce) {
  SystemConfig c = load_preset("trn2.48xlarge");
  c.shape = {{"row", 2}, {"col", 5}};
  c.links.at("torus_col").pattern = LinkPattern::kLine;
  c.published.clear();
  validate(c);
  const Topology t(c);
  // Rows of 2 get one ring link per column (5), lines of 5 get 4 links per row (8).
  EXPECT_EQ(t.channels().size(), 2u * (5 + 8));
  EXPECT_EQ(t.route(0, 4).hops(), 4);  // no wrap-around on a line
}

TEST(Topology, RoutesAreTheSameEveryTime) {
  const SystemConfig c = load_preset("trn3-ultraserver-gen2");
  const Topology a(c);
  const Topology b(c);
  for (int from : {0, 5, 143}) {
    const auto ra = a.routes_from(from);
    const auto rb = b.routes_from(from);
    for (std::size_t i = 0; i < ra.size(); ++i) EXPECT_EQ(ra[i].channels, rb[i].channels);
  }
}

// One route must not cost every route from its source: on a line of 8192 chips those hold 33
// million channels (a second or more each time), one route a few thousand.
// Routes on a long line: each follows the chain back from its own destination. (That a call
// no longer builds every route is host speed: 12 s before, 14 ms after on this test's 40
// routes, measured once; tests assert no times.)
TEST(Topology, RoutesAndLengthsOnALongLine) {
  SystemConfig c = load_preset("trn2.48xlarge");
  c.shape = {{"x", 8192}};
  c.links = {{"line", c.links.at("torus_col")}};
  c.links.at("line").along = "x";
  c.links.at("line").pattern = LinkPattern::kLine;
  c.published.clear();
  validate(c);
  const Topology t(c);
  for (int to = 8191; to > 8191 - 40; --to) ASSERT_EQ(t.route(0, to).hops(), to);
  const RouteLengths lengths = t.route_lengths_from(0);
  EXPECT_EQ(lengths.hops.size(), 8192u);
  EXPECT_EQ(lengths.hops[8191], 8191);
  EXPECT_DOUBLE_EQ(lengths.latency_ns[100], 100 * 300);
}

TEST(Topology, RouteLengthsAgreeWithTheRoutes) {
  const Topology t(load_preset("trn3-ultraserver-gen2"));
  for (int from : {0, 77, 143}) {
    const auto routes = t.routes_from(from);
    const RouteLengths lengths = t.route_lengths_from(from);
    ASSERT_EQ(lengths.hops.size(), routes.size());
    for (std::size_t to = 0; to < routes.size(); ++to) {
      EXPECT_EQ(lengths.hops[to], routes[to].hops());
      EXPECT_DOUBLE_EQ(lengths.latency_ns[to], routes[to].latency_ns);
      EXPECT_EQ(t.route(from, static_cast<int>(to)).channels, routes[to].channels);
    }
  }
}

TEST(Topology, KindsAndDimensionsAreFoundByName) {
  const Topology t(load_preset("trn3-ultraserver-gen2"));
  // Link rules, then switch tiers by level, then EFA.
  EXPECT_EQ(t.kind_names(),
            (std::vector<std::string>{"rack_to_rack", "server_switch", "rack_switch", "efa"}));
  EXPECT_EQ(t.kind_of("rack_switch"), 2);
  EXPECT_EQ(t.kind_of("efa"), 3);
  EXPECT_EQ(t.kind_of("nothing"), -1);
  EXPECT_EQ(t.dimension_of("instance"), 0);
  EXPECT_EQ(t.dimension_of("chip"), 2);
  EXPECT_EQ(t.dimension_of("col"), -1);
}

// The message of the std::invalid_argument chip_named throws for `spec`, or "" if none.
std::string chip_error(const Topology& t, const std::string& spec) {
  try {
    t.chip_named(spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Topology, ChipsAreNamedByNumberOrCoordinates) {
  const Topology t(load_preset("trn3-ultraserver-gen2"));
  EXPECT_EQ(t.chip_named("77"), 77);
  EXPECT_EQ(t.chip_named(" 0 "), 0);
  EXPECT_EQ(t.chip_named("server=19,chip=1"), 77);
  EXPECT_EQ(t.chip_named("chip=1, server=19"), 77);
  EXPECT_EQ(t.chip_named("server=1"), 4);  // a dimension not named is 0
  EXPECT_EQ(t.chip_named("instance=0,server=35,chip=3"), 143);
  // Errors quote the chip as the user wrote it and say what would do.
  EXPECT_EQ(chip_error(t, "144"),
            "\"144\" is not a chip: give its number, 0..143, or its coordinates, such as "
            "\"server=35,chip=3\"");
  EXPECT_NE(chip_error(t, "0x10").find("\"0x10\" is not a chip"), std::string::npos);
  EXPECT_NE(chip_error(t, "-1").find("\"-1\" is not a chip"), std::string::npos);
  EXPECT_EQ(chip_error(t, "sever=19"),
            "\"sever=19\": \"sever\" is not a dimension; the dimensions are instance, server, "
            "chip; did you mean \"server\"?");
  EXPECT_NE(chip_error(t, "server=36").find("server must be given once, as a number in 0..35"),
            std::string::npos);
  EXPECT_NE(chip_error(t, "server=1,server=2").find("given once"), std::string::npos);
}

// A config that skipped validate() must get a ConfigError from the constructor, not a division
// by zero, an overflow or a switch number past the end.
TEST(Topology, TheConstructorChecksAnUnvalidatedConfig) {
  const SystemConfig good = load_preset("trn3-ultraserver-gen2");
  SystemConfig c = good;
  c.switches.at("server_switch").block.at("chip") = 3;
  EXPECT_THROW(Topology{c}, ConfigError);
  c = good;
  c.switches.at("server_switch").block.at("chip") = 0;
  EXPECT_THROW(Topology{c}, ConfigError);
  c = good;
  c.links.at("rack_to_rack").along = "rack";
  EXPECT_THROW(Topology{c}, ConfigError);
  c = good;
  c.shape = {{"a", 65536}, {"b", 65536}, {"c", 65536}, {"d", 65536}};
  EXPECT_GT(c.chips(), kMaxChips);  // saturated, not wrapped around to 0
  EXPECT_THROW(Topology{c}, ConfigError);
}

TEST(TopologyDrawing, ATorusIsDrawnAsAGridWithItsWrapAround) {
  const SystemConfig c = load_preset("trn2.48xlarge");
  const std::string picture = draw(c, Topology(c));
  EXPECT_NE(picture.find("row 0     ~ 0--- 1--- 2--- 3~"), std::string::npos) << picture;
  EXPECT_NE(picture.find("row 3     ~12---13---14---15~"), std::string::npos) << picture;
  EXPECT_NE(picture.find("| links along row (the last row links back to the first)"),
            std::string::npos)
      << picture;
}

TEST(TopologyDrawing, SwitchedSystemsNameTheSwitchesOfEachRow) {
  const SystemConfig c = load_preset("trn3-ultraserver-gen2");
  const std::string picture = draw(c, Topology(c));
  EXPECT_NE(picture.find("server 19"), std::string::npos) << picture;
  EXPECT_NE(picture.find("| server_switch[19] rack_switch[1]"), std::string::npos) << picture;
  EXPECT_NE(picture.find("not drawn: rack_to_rack: server c <-> server c+18"), std::string::npos)
      << picture;
}

// A row label longer than the usual 10 characters widens the label column of every line, so
// that the "|" of the links between rows stay under the chips.
TEST(TopologyDrawing, LongRowLabelsKeepTheColumnsAligned) {
  SystemConfig c = load_preset("trn2.48xlarge");
  c.shape = {{"a_long_dimension_name", 3}, {"col", 3}};
  c.links.at("torus_row").along = "a_long_dimension_name";
  c.published.clear();
  validate(c);
  std::istringstream lines(draw(c, Topology(c)));
  std::string row;
  std::string down;
  std::getline(lines, row);
  std::getline(lines, down);
  ASSERT_EQ(row.rfind("  a_long_dimension_name 0 ~0---1---2~", 0), 0u) << row;
  const auto bar = down.find('|');
  ASSERT_NE(bar, std::string::npos) << down;
  EXPECT_EQ(row[bar], '0') << row << "\n" << down;
}

TEST(TopologyDrawing, DotQuotesTheSystemName) {
  SystemConfig c = load_preset("trn2.48xlarge");
  c.name = R"(my "big" system\)";
  const std::string dot = to_dot(c, Topology(c));
  EXPECT_EQ(dot.rfind(R"(graph "my \"big\" system\\" {)", 0), 0u) << dot.substr(0, 60);
}

TEST(TopologyDrawing, DotHasOneEdgePerLink) {
  const SystemConfig c = load_preset("trn3-ultraserver-gen1");
  const Topology t(c);
  const std::string dot = to_dot(c, t);
  EXPECT_EQ(dot.rfind("graph \"trn3-ultraserver-gen1\" {", 0), 0u);
  std::size_t edges = 0;
  for (std::size_t at = dot.find(" -- "); at != std::string::npos; at = dot.find(" -- ", at + 1)) {
    ++edges;
  }
  EXPECT_EQ(edges, t.channels().size() / 2);
}

}  // namespace
}  // namespace trnsim::system
