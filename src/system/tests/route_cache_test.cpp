// RouteCache gives the routes Topology::route gives: searches that stop at their target,
// routes translated between instances and routes over EFA are each checked pair by pair.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "system/system.h"

namespace trnsim::system {
namespace {

SystemConfig instances_of(const std::string& preset, int instances) {
  SystemConfig c = load_preset(preset);
  c.instances = instances;
  return c;
}

// Every `stride`-th pair (from, to), counted row-major, compared with Topology::route.
void expect_same_routes(const SystemConfig& config, int stride) {
  const Topology topology(config);
  RouteCache cache(topology);
  RouteScratch scratch;
  const int chips = topology.chips();
  std::vector<Route> full;  // every route from `from` by a search over every node
  int full_from = -1;
  for (long pair = 0; pair < static_cast<long>(chips) * chips; pair += stride) {
    const int from = static_cast<int>(pair / chips), to = static_cast<int>(pair % chips);
    if (from != full_from) {
      full = topology.routes_from(from);
      full_from = from;
    }
    const Route& want = full[static_cast<std::size_t>(to)];
    ASSERT_EQ(topology.route(from, to).channels, want.channels);  // the search that stops
    const Route& got = cache.route(from, to);
    ASSERT_EQ(got.channels, want.channels) << config.name << ": chip " << from << " -> " << to;
    EXPECT_EQ(got.latency_ns, want.latency_ns);
    EXPECT_EQ(got.bytes_per_ns, want.bytes_per_ns);
    EXPECT_EQ(topology.route(from, to, scratch).channels, want.channels);  // scratch reused
  }
}

TEST(RouteCache, GivesTheTopologysRoutesOnEveryPreset) {
  for (const std::string& preset : preset_names()) expect_same_routes(load_preset(preset), 3);
}

TEST(RouteCache, GivesTheTopologysRoutesAcrossAndWithinInstances) {
  expect_same_routes(instances_of("trn2.48xlarge", 3), 1);  // torus links, then EFA
  expect_same_routes(instances_of("trn1.32xlarge", 2), 1);
  expect_same_routes(instances_of("trn3-ultraserver-gen2", 2), 13);  // three switch tiers
}

TEST(RouteCache, KeepsEachRoute) {
  const Topology topology(instances_of("trn2.48xlarge", 2));
  RouteCache cache(topology);
  const Route& first = cache.route(17, 30);  // within the second instance: translated
  EXPECT_EQ(cache.size(), 2u);               // and the first instance's route it came from
  (void)cache.route(0, 31);                  // across: over EFA
  EXPECT_EQ(&cache.route(17, 30), &first);
  EXPECT_EQ(cache.route(0, 31).hops(), 2);
  EXPECT_THROW((void)cache.route(0, 32), std::out_of_range);
  EXPECT_THROW((void)cache.route(-1, 3), std::out_of_range);
}

}  // namespace
}  // namespace trnsim::system
