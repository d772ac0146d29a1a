// Robustness: random structural mutations of a system preset never crash the loader. Each
// mutant either loads (then round-trips, routes and draws) or throws ConfigError.
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "system/system.h"

namespace trnsim::system {
namespace {

using nlohmann::json;

TEST(SystemFuzz, TreeMutationsNeverCrash) {
  std::mt19937 rng(20261207);
  const std::vector<json> replacements = {json(nullptr),
                                          json(0),
                                          json(-1),
                                          json(0.5),
                                          json(1e300),
                                          json(2),
                                          json(3),
                                          json(36),
                                          json(true),
                                          json("chip"),
                                          json("ring"),
                                          json("halves"),
                                          json::array(),
                                          json::array({json::array({"x", 2})}),
                                          json::object(),
                                          json::object({{"value", 3}}),
                                          json(65536),
                                          json(2147483648.0),
                                          json(std::numeric_limits<std::uint64_t>::max())};
  int loaded = 0;
  int rejected = 0;
  for (const auto& preset : {"trn2-ultraserver", "trn3-ultraserver-gen2"}) {
    const json original = to_json(load_preset(preset));
    for (int i = 0; i < 400; ++i) {
      json mutant = original;
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits; ++e) {
        json* node = &mutant;
        while ((node->is_object() || node->is_array()) && !node->empty() && rng() % 4 != 0) {
          auto it = node->begin();
          std::advance(it, static_cast<long>(rng() % node->size()));
          node = &*it;
        }
        switch (rng() % 4) {
          case 0:
            if (node->is_object() && !node->empty()) node->erase(node->begin());
            break;
          case 1:
            if (node->is_object()) (*node)["extra_field"] = 1;
            break;
          default:
            *node = replacements[rng() % replacements.size()];
            break;
        }
      }
      try {
        const SystemConfig c = load_json_text(mutant.dump(), "mutant.json");
        EXPECT_EQ(load_json_text(to_json(c).dump(), "again.json"), c);
        const Topology t(c);
        EXPECT_EQ(t.route(0, t.chips() - 1).channels.empty(), t.chips() == 1);
        EXPECT_FALSE(draw(c, t).empty());
        ++loaded;
      } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()), "");
        ++rejected;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "unexpected " << e.what() << " for:\n" << mutant.dump();
      }
    }
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace trnsim::system
