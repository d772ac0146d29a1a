// The shipped presets: they load, every value has provenance, and the derived figures match
// the published ones (or the mismatch is recorded, for the chip-level peaks).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "arch/arch.h"
#include "test_util.h"

namespace trnsim::arch {
namespace {

using testing::read_text;
using testing::source_dir;

TEST(Presets, NamesAreTheThreeGenerations) {
  EXPECT_EQ(preset_names(), (std::vector<std::string>{"trn1", "trn2", "trn3"}));
  EXPECT_EQ(load_preset("trn1").generation, Generation::kGen2);
  EXPECT_EQ(load_preset("trn2").generation, Generation::kGen3);
  EXPECT_EQ(load_preset("trn3").generation, Generation::kGen4);
  EXPECT_EQ(core_name(Generation::kGen4), "NeuronCore-v4");
}

TEST(Presets, EveryValueHasASourceOrIsAnEstimate) {
  for (const auto& name : preset_names()) {
    const nlohmann::json j = to_json(load_preset(name));
    int values = 0;
    std::function<void(const nlohmann::json&, const std::string&)> walk =
        [&](const nlohmann::json& node, const std::string& path) {
          if (!node.is_object()) return;
          if (node.contains("value")) {
            ++values;
            const bool sourced =
                node.contains("source") && !node["source"].get<std::string>().empty();
            EXPECT_TRUE(sourced || node.value("estimate", false)) << name << " " << path;
            return;
          }
          for (const auto& [key, child] : node.items()) walk(child, path + "." + key);
        };
    walk(j, name);
    EXPECT_GT(values, 70) << name;
  }
}

TEST(Presets, EmbeddedTextIsTheShippedFile) {
  for (const auto& name : preset_names()) {
    const std::string path = source_dir() + "/src/arch/presets/" + name + ".json";
    EXPECT_EQ(preset_json_text(name), read_text(path)) << "rebuild did not re-embed " << path;
    EXPECT_EQ(load_file(path), load_preset(name));
  }
}

TEST(Presets, RoundTripThroughJsonIsIdentical) {
  for (const auto& name : preset_names()) {
    const ChipConfig original = load_preset(name);
    const ChipConfig again = load_json(to_json(original), "round-trip");
    EXPECT_EQ(again, original) << name;
    EXPECT_EQ(to_json(again), to_json(original)) << name;
    // Through text too, as `trnsim config export` writes it.
    EXPECT_EQ(load_json_text(to_json(original).dump(2), "export"), original) << name;
  }
}

// Per-core peaks against the architecture guides' figures, typed in here independently.
TEST(DerivedFigures, Trn3CorePeaksMatchPublished) {
  const ChipConfig c = load_preset("trn3");
  EXPECT_NEAR(core_peak_tflops(c, "mx"), 315, 315 * 0.01);
  EXPECT_NEAR(core_peak_tflops(c, "bf16"), 79, 79 * 0.01);
  EXPECT_NEAR(core_peak_tflops(c, "fp32"), 20, 20 * 0.02);
  EXPECT_DOUBLE_EQ(core_peak_tflops(c, "bf16"), 2.0 * 128 * 128 * 2.4 / 1000);
  EXPECT_DOUBLE_EQ(core_peak_tflops(c, "mx"), 4 * core_peak_tflops(c, "bf16"));
}

TEST(DerivedFigures, Trn3ChipMxMatchesPublished) {
  const ChipConfig c = load_preset("trn3");
  EXPECT_NEAR(chip_peak_tflops(c, "mx"), 2517, 2517 * 0.005);
  EXPECT_DOUBLE_EQ(c.published_chip.at("mx").value, 2517);
  EXPECT_EQ(c.published_chip.at("mx").tolerance, kDefaultPublishedTolerance);
}

// The chip page's 671 BF16 / 183 FP32 TFLOPS do not follow from 8 cores at 2.4 GHz. The model
// keeps the clock and records the published figure with its discrepancy.
TEST(DerivedFigures, Trn3ChipBf16AndFp32MismatchIsDocumented) {
  const ChipConfig c = load_preset("trn3");
  const double bf16 = chip_peak_tflops(c, "bf16");
  EXPECT_NEAR(bf16, 629.1, 0.1);  // 8 x 78.64
  EXPECT_DOUBLE_EQ(c.tensor.clock_ghz.value, 2.4);
  const PublishedFigure& published_bf16 = c.published_chip.at("bf16");
  EXPECT_DOUBLE_EQ(published_bf16.value, 671);
  EXPECT_GT(671 / bf16 - 1, 0.06);  // a real gap, not rounding
  EXPECT_GE(published_bf16.tolerance, 671 / bf16 - 1);
  EXPECT_NE(published_bf16.discrepancy.find("2.56 GHz"), std::string::npos);

  const double fp32 = chip_peak_tflops(c, "fp32");
  EXPECT_NEAR(fp32, 157.3, 0.1);
  EXPECT_DOUBLE_EQ(c.published_chip.at("fp32").value, 183);
  EXPECT_GT(183 / fp32 - 1, 0.16);
  EXPECT_FALSE(c.published_chip.at("fp32").discrepancy.empty());
}

TEST(DerivedFigures, Trn2PeaksMatchPublished) {
  const ChipConfig c = load_preset("trn2");
  EXPECT_NEAR(core_peak_tflops(c, "bf16"), 79, 79 * 0.01);
  EXPECT_NEAR(core_peak_tflops(c, "fp8"), 158, 158 * 0.01);
  EXPECT_NEAR(core_peak_tflops(c, "fp32"), 20, 20 * 0.02);
  EXPECT_EQ(core_peak_tflops(c, "mx"), 0);  // no MX before gen4
  EXPECT_NEAR(chip_peak_tflops(c, "bf16"), 629.1, 0.1);
  EXPECT_DOUBLE_EQ(c.published_chip.at("bf16").value, 667);
  EXPECT_DOUBLE_EQ(c.published_chip.at("fp8").value, 1299);
  EXPECT_DOUBLE_EQ(c.published_chip.at("fp32").value, 181);
  for (const auto& [mode, figure] : c.published_chip) {
    EXPECT_FALSE(figure.discrepancy.empty()) << mode << " differs by more than 3% from derived";
  }
}

TEST(DerivedFigures, Trn1PeaksMatchPublished) {
  const ChipConfig c = load_preset("trn1");
  EXPECT_DOUBLE_EQ(c.tensor.clock_ghz.value, 2.8);
  EXPECT_NEAR(core_peak_tflops(c, "bf16"), 92, 92 * 0.01);
  EXPECT_NEAR(core_peak_tflops(c, "fp32"), 23, 23 * 0.01);
  EXPECT_DOUBLE_EQ(core_peak_tflops(c, "fp8"), core_peak_tflops(c, "bf16"));  // cFP8 at BF16 rate
  EXPECT_NEAR(chip_peak_tflops(c, "bf16"), 183.5, 0.1);
  EXPECT_DOUBLE_EQ(c.published_chip.at("bf16").value, 190);
}

TEST(DerivedFigures, UnknownModeThrows) {
  EXPECT_THROW(core_peak_tflops(load_preset("trn3"), "int8"), std::invalid_argument);
}

TEST(DerivedFigures, MemoryPerCore) {
  constexpr double kMiB = 1024.0 * 1024.0;
  const std::vector<std::pair<std::string, double>> sbuf_mib = {
      {"trn1", 24}, {"trn2", 28}, {"trn3", 32}};
  const std::vector<double> sbuf_chip_mib = {48, 224, 256};  // the chip pages' figures
  for (std::size_t i = 0; i < sbuf_mib.size(); ++i) {
    const ChipConfig c = load_preset(sbuf_mib[i].first);
    EXPECT_DOUBLE_EQ(sbuf_bytes_per_core(c) / kMiB, sbuf_mib[i].second) << c.name;
    EXPECT_DOUBLE_EQ(c.cores_per_chip * sbuf_bytes_per_core(c) / kMiB, sbuf_chip_mib[i]) << c.name;
    EXPECT_DOUBLE_EQ(psum_bytes_per_core(c) / kMiB, 2) << c.name;
    EXPECT_DOUBLE_EQ(psum_bank_bytes(c), 2048) << c.name;  // 512 fp32 per bank
  }
}

TEST(DerivedFigures, BandwidthPerCore) {
  const ChipConfig trn1 = load_preset("trn1");
  const ChipConfig trn2 = load_preset("trn2");
  const ChipConfig trn3 = load_preset("trn3");
  EXPECT_DOUBLE_EQ(hbm_bytes_per_ns_per_core(trn1), 410);
  EXPECT_DOUBLE_EQ(hbm_bytes_per_ns_per_core(trn2), 362.5);
  EXPECT_DOUBLE_EQ(hbm_bytes_per_ns_per_core(trn3), 612.5);
  // The bandwidth guide's aggregate per core: 16 engines x 17 / 23 / 33 B/ns.
  EXPECT_DOUBLE_EQ(dma_bytes_per_ns_per_core(trn1), 272);
  EXPECT_DOUBLE_EQ(dma_bytes_per_ns_per_core(trn2), 368);
  EXPECT_DOUBLE_EQ(dma_bytes_per_ns_per_core(trn3), 528);
  // The chip pages' DMA totals (3.5 and 4.9 TB/s) are the theoretical per-engine rate x 128.
  EXPECT_NEAR(trn2.cores_per_chip * trn2.dma.engines_per_core * trn2.dma.engine_bandwidth_gbps,
              3500, 3500 * 0.01);
  EXPECT_NEAR(trn3.cores_per_chip * trn3.dma.engines_per_core * trn3.dma.engine_bandwidth_gbps,
              4900, 4900 * 0.01);
}

TEST(Presets, LogicalCoresAndPowerRamp) {
  const ChipConfig trn1 = load_preset("trn1");
  const ChipConfig trn2 = load_preset("trn2");
  const ChipConfig trn3 = load_preset("trn3");
  EXPECT_EQ(trn1.lnc_options, std::vector<int>{1});
  EXPECT_EQ(trn2.lnc_options, (std::vector<int>{1, 2}));
  EXPECT_EQ(trn3.lnc_options, (std::vector<int>{1, 2}));
  EXPECT_TRUE(lnc_allowed(trn2, 2));
  EXPECT_FALSE(lnc_allowed(trn1, 2));
  EXPECT_EQ(trn2.default_lnc, 2);
  // NCC_EVRF066: neuronx-cc defaults to LNC=2 on Trn2 and later (a published fact now).
  EXPECT_EQ(trn3.default_lnc, 2);
  EXPECT_FALSE(trn3.provenance.at("default_lnc").estimate);
  EXPECT_NE(trn3.provenance.at("default_lnc").source.find("EVRF066"), std::string::npos);
  EXPECT_FALSE(trn1.tensor.power_ramp);
  EXPECT_TRUE(trn2.tensor.power_ramp);
  EXPECT_TRUE(trn3.tensor.power_ramp);
  EXPECT_DOUBLE_EQ(trn3.tensor.power_ramp_start_fraction.value, 0.5);
  EXPECT_DOUBLE_EQ(trn3.tensor.power_ramp_us.value, 3);
}

TEST(Presets, GenerationFeatures) {
  const ChipConfig trn2 = load_preset("trn2");
  const ChipConfig trn3 = load_preset("trn3");
  EXPECT_DOUBLE_EQ(trn2.tensor.moving_free_max.value, 512);
  EXPECT_DOUBLE_EQ(trn3.tensor.moving_free_max.value, 4096);
  EXPECT_DOUBLE_EQ(trn3.tensor.moving_free_max_bf16.value, 8192);
  EXPECT_TRUE(trn3.tensor.has_mx && trn3.tensor.has_bf16_psum && trn3.dma.has_priority);
  EXPECT_FALSE(trn2.tensor.has_mx || trn2.tensor.has_bf16_psum || trn2.dma.has_priority);
  EXPECT_EQ(trn3.sbuf.bytes_per_partition.source,
            "ARCH-v4 and neuron-core-v4.rst: 32 MiB SBUF = 128 partitions x 256 KiB");
  EXPECT_TRUE(trn3.dma.per_descriptor_ns.estimate);
}

// docs/arch-config.md documents every field of the format: its row in the field table gives
// the kind, range, unit and meaning of describe_fields(), which validation enforces.
TEST(Docs, EveryFieldIsDocumentedWithItsRange) {
  const std::string doc = read_text(source_dir() + "/docs/arch-config.md");
  ASSERT_FALSE(doc.empty());
  const auto fields = describe_fields();
  EXPECT_GT(fields.size(), 70u);
  for (const auto& field : fields) {
    const std::string row = fmt::format("\n| `{}` | {} | {} | {} | {} |", field.path, field.kind,
                                        field.range, field.unit, field.meaning);
    EXPECT_NE(doc.find(row), std::string::npos) << "docs/arch-config.md lacks the row" << row;
  }
}

}  // namespace
}  // namespace trnsim::arch
