// User files: overrides over a preset, complete files, and the preset-or-path loader.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "arch/arch.h"
#include "test_util.h"

namespace trnsim::arch {
namespace {

using nlohmann::json;

// A file in the test's temporary directory, removed at the end of the test.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_((std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name))
                  .string()) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(Override, SbufBytesOverTrn3) {
  const ChipConfig base = load_preset("trn3");
  const ChipConfig c =
      load_json_text(R"({"base":"trn3","sbuf":{"bytes_per_partition":131072}})", "small.json");
  EXPECT_DOUBLE_EQ(c.sbuf.bytes_per_partition.value, 131072);
  EXPECT_EQ(c.sbuf.bytes_per_partition.source, "set in small.json");
  EXPECT_FALSE(c.sbuf.bytes_per_partition.estimate);
  EXPECT_DOUBLE_EQ(sbuf_bytes_per_core(c), 16.0 * 1024 * 1024);
  // Everything else is the preset's, provenance included.
  EXPECT_EQ(c.sbuf.partitions, base.sbuf.partitions);
  EXPECT_EQ(c.tensor, base.tensor);
  EXPECT_EQ(c.published_chip, base.published_chip);
  EXPECT_EQ(c.generation, Generation::kGen4);
  EXPECT_EQ(c.name, "small.json");
  EXPECT_NE(c.description.find("preset trn3 with overrides from small.json"), std::string::npos);
}

// The preset's description stays, so it names what the file changed: with a million cores it
// still said "8 NeuronCore-v4" and nothing else.
TEST(Override, DescriptionNamesTheOverriddenFields) {
  const ChipConfig c = load_json_text(
      R"({"base":"trn3","cores_per_chip":16,"published_chip":null,"name":"big"})", "big.json");
  EXPECT_EQ(c.description, load_preset("trn3").description +
                               " (preset trn3 with overrides from big.json: cores_per_chip, "
                               "published_chip)");
  const ChipConfig many = load_json_text(
      R"({"base":"trn2","dma":{"fixed_latency_ns":{"value":900,"estimate":true},
          "per_descriptor_ns":20},"tensor":{"published_peak_tflops":{"bf16":80}},
          "sbuf":{"bytes_per_partition":131072,"min_alignment_bytes":8},"hbm":{"stacks":2}})",
      "many.json");
  EXPECT_NE(many.description.find(
                "overrides from many.json: dma.fixed_latency_ns, dma.per_descriptor_ns, "
                "hbm.stacks, sbuf.bytes_per_partition and 2 more)"),
            std::string::npos)
      << many.description;
  EXPECT_NE(load_json_text(R"({"base":"trn1"})", "plain.json")
                .description.find("(preset trn1, from plain.json without overrides)"),
            std::string::npos);
}

TEST(Override, ObjectFormReplacesTheWholeParameter) {
  const ChipConfig c = load_json_text(
      R"({"base":"trn2","dma":{"fixed_latency_ns":{"value":900,"estimate":true}},
          "name":"my-trn2"})",
      "f.json");
  EXPECT_DOUBLE_EQ(c.dma.fixed_latency_ns.value, 900);
  EXPECT_TRUE(c.dma.fixed_latency_ns.estimate);
  EXPECT_EQ(c.dma.fixed_latency_ns.source, "");  // the preset's source no longer applies
  EXPECT_EQ(c.name, "my-trn2");
}

TEST(Override, FlagsAndCountsTakeTheFileAsSource) {
  const ChipConfig c =
      load_json_text(R"({"base":"trn3","tensor":{"power_ramp":false},"default_lnc":1})", "p.json");
  EXPECT_FALSE(c.tensor.power_ramp);
  EXPECT_EQ(c.provenance.at("tensor.power_ramp").source, "set in p.json");
  EXPECT_EQ(c.default_lnc, 1);
}

// Changing what a published figure depends on needs the figure updated or deleted (null).
TEST(Override, ClockChangeNeedsPublishedFiguresDeleted) {
  EXPECT_TRUE(testing::fails_with(R"({"base":"trn3","tensor":{"clock_ghz":2.8}})",
                                  "tensor.published_peak_tflops.bf16", "contradicts"));
  const ChipConfig c = load_json_text(
      R"({"base":"trn3","tensor":{"clock_ghz":2.8,"published_peak_tflops":null},
          "published_chip":null})",
      "fast.json");
  EXPECT_NEAR(core_peak_tflops(c, "bf16"), 91.75, 0.01);
  EXPECT_TRUE(c.tensor.published_peak_tflops.empty());
  EXPECT_TRUE(c.published_chip.empty());
  // A single figure can go too.
  const ChipConfig without_mx =
      load_json_text(R"({"base":"trn3","published_chip":{"mx":null}})", "m.json");
  EXPECT_EQ(without_mx.published_chip.count("mx"), 0u);
  EXPECT_EQ(without_mx.published_chip.count("bf16"), 1u);
}

TEST(Override, StatedSbufTotalIsAccepted) {
  const ChipConfig c = load_json_text(
      R"({"base":"trn1","sbuf":{"bytes_per_partition":65536,"total_bytes":8388608}})", "t.json");
  ASSERT_TRUE(c.sbuf.total_bytes.has_value());
  EXPECT_DOUBLE_EQ(c.sbuf.total_bytes->value, 8388608);
}

TEST(Override, RoundTripIsIdentical) {
  const ChipConfig c = load_json_text(
      R"({"base":"trn3","sbuf":{"bytes_per_partition":131072,"total_bytes":16777216},
          "hbm":{"bandwidth_gbps":4700},"tensor":{"power_ramp":false}})",
      "o.json");
  EXPECT_EQ(load_json(to_json(c), "again"), c);
}

// A complete file of plain numbers, the way a user might write one from scratch.
TEST(CompleteFile, PlainNumbersLoadWithTheFileAsSource) {
  json full = to_json(load_preset("trn2"));
  std::function<void(json&)> strip = [&](json& node) {
    for (auto& [key, child] : node.items()) {
      if (child.is_object() && child.contains("value")) {
        child = json(child["value"]);
      } else if (child.is_object()) {
        strip(child);
      }
    }
  };
  strip(full);
  // Plain chip figures lose their recorded discrepancy, and trn2's are 3-15% off the derived.
  EXPECT_THROW(load_json(full, "plain.json"), ConfigError);
  full.erase("published_chip");
  const ChipConfig c = load_json(full, "plain.json");
  const ChipConfig preset = load_preset("trn2");
  EXPECT_DOUBLE_EQ(c.tensor.clock_ghz.value, preset.tensor.clock_ghz.value);
  EXPECT_EQ(c.tensor.clock_ghz.source, "set in plain.json");
  EXPECT_EQ(c.lnc_options, preset.lnc_options);
  EXPECT_EQ(c.tensor.published_peak_tflops.size(), 3u);  // per-core figures agree within 3%
  EXPECT_TRUE(c.published_chip.empty());
}

TEST(Loader, PresetNameOrPath) {
  EXPECT_EQ(load("trn2"), load_preset("trn2"));
  const TempFile file("override.json", R"({"base": "trn1", // comments are allowed
    "hbm": {"capacity_gib": 64}})");
  const ChipConfig c = load(file.path());
  EXPECT_DOUBLE_EQ(c.hbm.capacity_gib.value, 64);
  EXPECT_EQ(c.name, file.path());
  try {
    load("trn5");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("neither a preset"), std::string::npos) << e.what();
  }
}

TEST(Loader, ValidateAcceptsPresetsAndRejectsEdits) {
  ChipConfig c = load_preset("trn3");
  EXPECT_NO_THROW(validate(c));
  c.psum.banks.value = 6;
  EXPECT_THROW(validate(c), ConfigError);
}

TEST(Schema, DescribeFieldsCoversTheFormat) {
  const auto fields = describe_fields();
  const auto has = [&](const std::string& path) {
    return std::any_of(fields.begin(), fields.end(),
                       [&](const FieldInfo& f) { return f.path == path; });
  };
  EXPECT_TRUE(has("tensor.clock_ghz"));
  EXPECT_TRUE(has("scalar.free_max_psum"));
  EXPECT_TRUE(has("published_chip"));
  for (const auto& f : fields) EXPECT_FALSE(f.meaning.empty()) << f.path;
}

}  // namespace
}  // namespace trnsim::arch
