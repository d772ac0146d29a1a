// Topology graphs of the presets: neighbours, per-chip bandwidth, routes, drawings.
#include <gtest/gtest.h>

#include <algorithm>
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
