// Robustness: random mutations of a preset never crash the loader. Each mutant either loads
// (and then validates and round-trips) or throws ConfigError; any other exception is a bug.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "arch/arch.h"

namespace trnsim::arch {
namespace {

using nlohmann::json;

struct Outcome {
  int loaded = 0;
  int rejected = 0;
};

void try_load(const std::string& text, Outcome& outcome) {
  try {
    const ChipConfig c = load_json_text(text, "mutant.json");
    validate(c);
    EXPECT_EQ(load_json(to_json(c), "again"), c);
    ++outcome.loaded;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()), "");
    ++outcome.rejected;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected " << e.what() << " for:\n" << text;
  }
}

// Byte-level edits of the preset text: mostly parse errors, some valid-but-odd values.
TEST(Fuzz, TextMutationsNeverCrash) {
  std::mt19937 rng(20260801);
  const std::string original = preset_json_text("trn3");
  const std::string alphabet = "{}[]\":,.-+0123456789eE truefalsn\n\\/x";
  Outcome outcome;
  for (int i = 0; i < 1500; ++i) {
    std::string text = original;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % text.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.erase(at, 1 + rng() % 8);
          break;
        default:
          text.insert(at, 1, c);
          break;
      }
    }
    try_load(text, outcome);
  }
  EXPECT_GT(outcome.rejected, 0);
}

// Structural edits: a random node becomes a random value, or a key is dropped or added.
TEST(Fuzz, TreeMutationsNeverCrash) {
  std::mt19937 rng(7);
  const json original = to_json(load_preset("trn3"));
  const std::vector<json> replacements = {json(nullptr),
                                          json(0),
                                          json(-1),
                                          json(0.5),
                                          json(1e300),
                                          json(-1e-300),
                                          json(128),
                                          json(true),
                                          json("text"),
                                          json::array(),
                                          json::array({1, 2, 3}),
                                          json::object(),
                                          json::object({{"value", 3}}),
                                          json::object({{"value", "x"}}),
                                          json(9.2e18),
                                          json(std::numeric_limits<std::uint64_t>::max()),
                                          json(2147483648.0)};
  Outcome outcome;
  for (int i = 0; i < 2000; ++i) {
    json mutant = original;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      // Walk down a random path.
      json* node = &mutant;
      while (node->is_object() && !node->empty() && rng() % 4 != 0) {
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
    try_load(mutant.dump(), outcome);
    // The same mutant as an override patch over a preset.
    if (mutant.is_object()) {
      mutant["base"] = "trn2";
      try_load(mutant.dump(), outcome);
    }
  }
  EXPECT_GT(outcome.loaded, 0);
  EXPECT_GT(outcome.rejected, 0);
}

}  // namespace
}  // namespace trnsim::arch
