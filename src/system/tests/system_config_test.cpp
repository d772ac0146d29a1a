// System configs: the presets, user files that patch them, and one test per kind of bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "system/system.h"

namespace trnsim::system {
namespace {

// Loads `text` and expects a ConfigError on `field` whose message contains `needle`, located in
// the file it was read from.
::testing::AssertionResult fails_with(const std::string& text, const std::string& field,
                                      const std::string& needle) {
  try {
    load_json_text(text, "test.json");
  } catch (const ConfigError& e) {
    const std::string message = e.diagnostics().front().message;
    if (e.where().file != "test.json") {
      return ::testing::AssertionFailure() << "error not located in test.json: " << e.what();
    }
    if (e.field() != field) {
      return ::testing::AssertionFailure()
             << "error on field \"" << e.field() << "\", expected \"" << field << "\": " << message;
    }
    if (message.find(needle) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks \"" << needle << "\": " << message;
    }
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "loaded without error: " << text;
}

TEST(SystemPresets, EveryPresetLoadsWithItsChipsAndProvenance) {
  const std::map<std::string, std::pair<std::int64_t, std::string>> expected = {
      {"trn1.32xlarge", {16, "trn1"}},          {"trn2.48xlarge", {16, "trn2"}},
      {"trn2-ultraserver", {64, "trn2"}},       {"trn3-ultraserver-gen1", {64, "trn3"}},
      {"trn3-ultraserver-gen2", {144, "trn3"}},
  };
  ASSERT_EQ(preset_names().size(), expected.size());
  for (const auto& name : preset_names()) {
    SCOPED_TRACE(name);
    const SystemConfig c = load_preset(name);
    ASSERT_EQ(expected.count(name), 1u);
    EXPECT_EQ(c.chips(), expected.at(name).first);
    EXPECT_EQ(c.chip, expected.at(name).second);
    EXPECT_EQ(c.chip_config.name, c.chip);
    EXPECT_EQ(c.instances, 1);
    // Presets need a source or an estimate flag on every figure and rule.
    for (const auto& [link, rule] : c.links) {
      EXPECT_FALSE(rule.bandwidth_gbps.source.empty()) << link;
      EXPECT_FALSE(rule.topology.source.empty()) << link;
    }
    for (const auto& [tier_name, tier] : c.switches) {
      EXPECT_FALSE(tier.port_gbps.source.empty()) << tier_name;
      EXPECT_FALSE(tier.switch_latency_ns.source.empty()) << tier_name;
    }
    EXPECT_FALSE(c.efa.gbit_per_chip.source.empty());
    EXPECT_EQ(c.provenance.count("shape"), 1u);
  }
}

TEST(SystemPresets, ExportLoadsBackIdentically) {
  for (const auto& name : preset_names()) {
    SCOPED_TRACE(name);
    const SystemConfig c = load_preset(name);
    const SystemConfig back = load_json_text(to_json(c).dump(2), "export.json");
    EXPECT_EQ(back, c);
  }
}

TEST(SystemFiles, AFileOverridesOneFieldOfAPreset) {
  const SystemConfig c = load_json_text(R"({"base": "trn2-ultraserver",
      "links": {"z": {"bandwidth_gbps": 64}}, "published": null})",
                                        "faster.json");
  EXPECT_EQ(c.links.at("z").bandwidth_gbps.value, 64);
  EXPECT_EQ(c.links.at("z").bandwidth_gbps.source, "set in faster.json");
  EXPECT_FALSE(c.links.at("z").bandwidth_gbps.estimate);
  EXPECT_EQ(c.links.at("z").along, "node");  // the rest of the rule is the preset's
  EXPECT_EQ(c.links.at("torus_col").bandwidth_gbps.value, 256);
  EXPECT_EQ(c.name, "faster.json");
  EXPECT_NE(c.description.find("preset trn2-ultraserver"), std::string::npos);
}

TEST(SystemFiles, MoreInstancesAreJoinedByEfa) {
  const SystemConfig c = load_json_text(R"({"base": "trn2.48xlarge", "instances": 4})", "x4.json");
  EXPECT_EQ(c.chips(), 64);
  const Topology t(c);
  EXPECT_EQ(t.nodes(), 64 + 1);    // the chips and the EFA network
  const Route r = t.route(0, 16);  // chip 0 of instance 1
  EXPECT_EQ(r.hops(), 2);
  EXPECT_DOUBLE_EQ(r.latency_ns, 15000);
  EXPECT_DOUBLE_EQ(r.bytes_per_ns, 200.0 / 8);
  EXPECT_EQ(t.describe(16), "chip 16 (instance 1, row 0, col 0)");
  // EFA is not NeuronLink: the per-chip NeuronLink total is unchanged.
  EXPECT_DOUBLE_EQ(t.neuronlink_bytes_per_ns(16), 1024);
}

TEST(SystemFiles, AChipFileIsFoundBesideTheSystemFile) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("trnsim_system_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "chip.json") << R"({"base": "trn2", "hbm": {"bandwidth_gbps": 3000}})";
  std::ofstream(dir / "system.json") << R"({"base": "trn2.48xlarge", "chip": "chip.json"})";
  const SystemConfig c = load((dir / "system.json").string());
  EXPECT_EQ(c.chip, "chip.json");
  EXPECT_DOUBLE_EQ(c.chip_config.hbm.bandwidth_gbps.value, 3000);
  std::filesystem::remove_all(dir);
}

TEST(SystemErrors, UnknownFieldsAndNamesSuggestTheRightOne) {
  EXPECT_TRUE(
      fails_with(R"({"base": "trn2.48xlarge", "link": {}})", "link", "did you mean \"links\""));
  EXPECT_TRUE(
      fails_with(R"({"base": "trn2.48xl"})", "base", "unknown system preset \"trn2.48xl\""));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "chip": "trn9"})", "chip", "trn9"));
  EXPECT_TRUE(
      fails_with(R"({"base": "trn2.48xlarge", "links": {"torus_col": {"along": "column"}}})",
                 "links.torus_col.along", "did you mean \"col\""));
  EXPECT_TRUE(
      fails_with(R"({"base": "trn2.48xlarge", "links": {"torus_col": {"pattern": "rings"}}})",
                 "links.torus_col.pattern", "did you mean \"ring\""));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "links": {"torus_col": {"speed": 1}}})",
                         "links.torus_col.speed", "unknown field"));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "efa": {"gbit_per_chip": "fast"}})",
                         "efa.gbit_per_chip", "expected a number"));
}

TEST(SystemErrors, ALinkOfZeroBandwidthIsRefused) {
  EXPECT_TRUE(fails_with(
      R"({"base": "trn2.48xlarge", "links": {"torus_row": {"bandwidth_gbps": 0}}, "published": null})",
      "links.torus_row.bandwidth_gbps", "must be in 0.001..1e9 GB/s, got 0"));
  EXPECT_TRUE(fails_with(
      R"({"base": "trn3-ultraserver-gen2", "switches": {"rack_switch": {"port_gbps": -5}}})",
      "switches.rack_switch.port_gbps", "got -5"));
}

TEST(SystemErrors, AnUnreachableChipIsNamed) {
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "links": {"torus_row": null},
                             "published": null})",
                         "links", "chip 4 (row 1, col 0) cannot be reached from chip 0"));
  // Without its switches a Gen2 UltraServer is 72 pairs of chips.
  EXPECT_TRUE(fails_with(R"({"base": "trn3-ultraserver-gen2",
                             "switches": {"server_switch": null, "rack_switch": null},
                             "published": null})",
                         "links", "chip 0 reaches 2 of the 144 chips"));
}

TEST(SystemErrors, ShapesAndBlocksMustFitTogether) {
  EXPECT_TRUE(
      fails_with(R"({"base": "trn3-ultraserver-gen2", "shape": [["server", 35], ["chip", 4]]})",
                 "links.rack_to_rack.pattern", "size 35 is odd"));
  EXPECT_TRUE(fails_with(
      R"({"base": "trn3-ultraserver-gen2", "switches": {"rack_switch": {"block": {"server": 18, "chip": 3}}}})",
      "switches.rack_switch.block.chip", "a block of 3 does not divide \"chip\" (size 4)"));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "shape": [["instance", 4], ["col", 4]]})",
                         "shape[0][0]", "set \"instances\" instead"));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "shape": [["row", 4], ["row", 4]]})",
                         "shape[1][0]", "appears twice"));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "shape": [["row", 0], ["col", 4]]})",
                         "shape[0][1]", "got 0"));
  EXPECT_TRUE(fails_with(R"({"base": "trn3-ultraserver-gen2", "instances": 65536})", "shape",
                         "more than the 1048576"));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "shape": [["r o w", 4], ["col", 4]]})",
                         "shape[0][0]", "is not a name"));
}

TEST(SystemErrors, APublishedFigureTheLinksDoNotGiveIsAnError) {
  EXPECT_TRUE(
      fails_with(R"({"base": "trn2.48xlarge", "links": {"torus_col": {"bandwidth_gbps": 100}}})",
                 "published.neuronlink_gbps_per_chip",
                 "published 1024 GB/s, but the links and switch ports of chip 0 (row 0, "
                 "col 0) add up to 712 GB/s"));
  EXPECT_TRUE(fails_with(
      R"({"base": "trn2.48xlarge", "published": {"neuronlink_gbps_per_chip": {"value": 900, "tolerance": 0.5}}})",
      "published.neuronlink_gbps_per_chip.discrepancy", "required: a tolerance above the default"));
}

// Measured against the derived figure, a tolerance of 1 or more accepts any published figure
// down to zero; a narrower tolerance than the default needs no excuse.
TEST(SystemErrors, ToleranceIsAFractionBelowOneAndOnlyAWiderOneNeedsAReason) {
  EXPECT_TRUE(fails_with(
      R"({"base": "trn2.48xlarge", "published": {"neuronlink_gbps_per_chip": {"value": 2560,
          "tolerance": 2.7, "discrepancy": "a wish"}}})",
      "published.neuronlink_gbps_per_chip.tolerance", "must be a fraction in [0, 1), got 2.7"));
  const SystemConfig c = load_json_text(
      R"({"base": "trn2.48xlarge", "published": {"neuronlink_gbps_per_chip": {"value": 1030,
          "tolerance": 0.01}}})",
      "narrow.json");
  EXPECT_DOUBLE_EQ(c.published.at("neuronlink_gbps_per_chip").tolerance, 0.01);
  EXPECT_TRUE(fails_with(
      R"({"base": "trn2.48xlarge", "published": {"neuronlink_gbps_per_chip": {"value": 1040,
          "tolerance": 0.01}}})",
      "published.neuronlink_gbps_per_chip", "(1.6% apart, tolerance 1%)"));
}

// Trn3's checked figure is the PCIe breakdown the links model (704 GB/s) at the default
// tolerance; 2.56 TB/s stays in the note.
TEST(SystemPresets, Trn3ChecksTheFigureItsLinksModel) {
  for (const char* name : {"trn3-ultraserver-gen1", "trn3-ultraserver-gen2"}) {
    SCOPED_TRACE(name);
    const SystemConfig config = load_preset(name);
    const auto& figure = config.published.at("neuronlink_gbps_per_chip");
    EXPECT_EQ(figure.value, 704);
    EXPECT_EQ(figure.tolerance, arch::kDefaultPublishedTolerance);
    EXPECT_NE(figure.source.find("= 704 GB/s"), std::string::npos) << figure.source;
    EXPECT_NE(figure.discrepancy.find("2.56 TB/s"), std::string::npos) << figure.discrepancy;
  }
  // Gen1's split is Gen2's, assumed.
  EXPECT_TRUE(
      load_preset("trn3-ultraserver-gen1").published.at("neuronlink_gbps_per_chip").estimate);
}

// trn2-arch.rst's EFA cell for the UltraServer may be per instance or per UltraServer.
TEST(SystemPresets, Trn2UltraServerEfaRateIsAnEstimate) {
  const SystemConfig c = load_preset("trn2-ultraserver");
  EXPECT_TRUE(c.efa.gbit_per_chip.estimate);
  EXPECT_NE(c.efa.gbit_per_chip.source.find("unstated for the UltraServer"), std::string::npos);
  EXPECT_FALSE(load_preset("trn2.48xlarge").efa.gbit_per_chip.estimate);
}

TEST(SystemPresets, EstimatesAreListedFromTheFields) {
  EXPECT_EQ(estimated_fields(load_preset("trn3-ultraserver-gen2")),
            (std::vector<std::string>{
                "links.rack_to_rack.bandwidth_gbps", "links.rack_to_rack.latency_ns",
                "switches.server_switch.port_gbps", "switches.server_switch.link_latency_ns",
                "switches.server_switch.switch_latency_ns", "switches.rack_switch.port_gbps",
                "switches.rack_switch.link_latency_ns", "switches.rack_switch.switch_latency_ns",
                "efa.latency_ns"}));
  SystemConfig c = load_preset("trn2.48xlarge");
  c.provenance["shape"].estimate = true;
  c.links.at("torus_row").topology.estimate = true;
  c.published.at("neuronlink_gbps_per_chip").estimate = true;
  EXPECT_EQ(estimated_fields(c),
            (std::vector<std::string>{
                "shape", "links.torus_col.bandwidth_gbps", "links.torus_col.latency_ns",
                "links.torus_row", "links.torus_row.bandwidth_gbps", "links.torus_row.latency_ns",
                "published.neuronlink_gbps_per_chip"}));
}

// Without a cap, a few lines of JSON (many rules over 2^20 chips) would ask for gigabytes.
TEST(SystemErrors, TheLinkCountIsCappedBeforeTheGraphIsBuilt) {
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "shape": [["row", 1024], ["col", 1024]],
      "links": {"a": {"along": "row", "pattern": "ring", "bandwidth_gbps": 1, "latency_ns": 1},
                "b": {"along": "col", "pattern": "ring", "bandwidth_gbps": 1, "latency_ns": 1},
                "c": {"along": "row", "pattern": "line", "bandwidth_gbps": 1, "latency_ns": 1}},
      "published": null})",
                         "links",
                         "the system would have 5241856 links (link rules, switch ports and EFA "
                         "attachments of its 1048576 chips), more than the 4194304"));
}

TEST(SystemErrors, TextMustBePrintableAndTheNameNotEmpty) {
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "name": ""})", "name", "must not be empty"));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "name": "x\u001b[2J"})", "name",
                         "contains control character U+001B"));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "description": "bell\u0007"})", "description",
                         "control character U+0007"));
  EXPECT_TRUE(
      fails_with(R"({"base": "trn2.48xlarge", "links": {"torus_col": {"source": "\u009b"}}})",
                 "links.torus_col.source", "control character U+009B"));
  EXPECT_TRUE(fails_with(
      R"({"base": "trn2.48xlarge", "efa": {"latency_ns": {"value": 1, "source": "a\nb"}}})",
      "efa.latency_ns.source", "control character U+000A"));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "published": {"neuronlink_gbps_per_chip":
      {"value": 1024, "discrepancy": "\u0000"}}})",
                         "published.neuronlink_gbps_per_chip.discrepancy", "U+0000"));
}

TEST(SystemErrors, RulesAndTiersNeedNamesOfTheirOwn) {
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "published": null, "switches": {"torus_col":
      {"level": 1, "block": {"col": 4}, "port_gbps": 1, "link_latency_ns": 1,
       "switch_latency_ns": 1}}})",
                         "switches.torus_col", "also names a link rule"));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "published": null, "links": {"efa":
      {"along": "col", "pattern": "ring", "bandwidth_gbps": 1, "latency_ns": 1}}})",
                         "links.efa", "reserved for the EFA network"));
  EXPECT_TRUE(fails_with(R"({"base": "trn2.48xlarge", "published": null, "switches": {"efa":
      {"level": 1, "block": {"col": 4}, "port_gbps": 1, "link_latency_ns": 1,
       "switch_latency_ns": 1}}})",
                         "switches.efa", "reserved"));
}

TEST(SystemErrors, BlocksNameRealDimensions) {
  EXPECT_TRUE(fails_with(
      R"({"base": "trn3-ultraserver-gen2", "switches": {"server_switch": {"block": null}}})",
      "switches.server_switch.block", "missing"));
  EXPECT_TRUE(fails_with(R"({"base": "trn3-ultraserver-gen2", "published": null,
      "switches": {"rack_switch": {"block": {"server": null, "chip": null}}}})",
                         "switches.rack_switch.block", "names no dimension"));
  // A long or unprintable key is shortened and escaped in the field's path.
  const std::string long_name(200, 'x');
  const std::string long_block = R"({"base": "trn3-ultraserver-gen2", "switches":
      {"rack_switch": {"block": {")" +
                                 long_name + R"(": 2}}}})";
  EXPECT_TRUE(fails_with(long_block,
                         "switches.rack_switch.block." + std::string(48, 'x') + "...(200 bytes)",
                         "is not a name"));
  EXPECT_TRUE(fails_with(R"({"base": "trn3-ultraserver-gen2", "switches": {"rack_switch":
      {"block": {"a\u001bb": 2}}}})",
                         "switches.rack_switch.block.a\\u001bb", "is not a name"));
}

// A patch that changes which chips a rule joins, without a source, makes the preset's source
// wrong: the rule becomes the file's.
TEST(SystemFiles, ARuleWhoseTopologyChangesIsTheFiles) {
  const SystemConfig c = load_json_text(
      R"({"base": "trn2.48xlarge", "published": null, "links": {"torus_col": {"pattern": "line"},
          "torus_row": {"bandwidth_gbps": {"value": 256, "estimate": true}}}})",
      "line.json");
  EXPECT_EQ(c.links.at("torus_col").topology.source, "set in line.json");
  EXPECT_FALSE(c.links.at("torus_col").topology.estimate);
  // Only a figure changed: the rule keeps the preset's source.
  EXPECT_EQ(c.links.at("torus_row").topology,
            load_preset("trn2.48xlarge").links.at("torus_row").topology);
  const SystemConfig s = load_json_text(
      R"({"base": "trn3-ultraserver-gen2", "switches": {"rack_switch": {"block": {"server": 36}}},
          "links": {"rack_to_rack": {"along": "server", "source": "my drawing"}}})",
      "one-rack.json");
  EXPECT_EQ(s.switches.at("rack_switch").topology.source, "set in one-rack.json");
  EXPECT_EQ(s.links.at("rack_to_rack").topology.source, "my drawing");
}

TEST(SystemErrors, BadJsonAndMissingFieldsAreLocated) {
  try {
    load_json_text("{\n  \"base\": \"trn2.48xlarge\",\n  \"instances\": 2,,\n}", "test.json");
    FAIL() << "loaded";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where().file, "test.json");
    EXPECT_EQ(e.where().line, 3u);
  }
  EXPECT_TRUE(
      fails_with(R"({"name": "x", "description": "y", "chip": "trn2"})", "instances", "missing"));
  EXPECT_TRUE(fails_with("[1, 2]", "", "must be a JSON object"));
}

}  // namespace
}  // namespace trnsim::system
