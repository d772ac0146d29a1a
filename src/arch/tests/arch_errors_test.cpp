// Every kind of bad file gives a ConfigError naming the JSON path and the reason.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "arch/arch.h"
#include "test_util.h"

namespace trnsim::arch {
namespace {

using testing::fails_with;

TEST(BadJson, ReportsLineAndColumn) {
  const std::string text =
      "{\n  \"base\": \"trn3\",\n  \"sbuf\": {\"bytes_per_partition\": 12,}\n}";
  EXPECT_TRUE(fails_with(text, "", "invalid JSON: syntax error"));
  try {
    load_json_text(text, "test.json");
    ADD_FAILURE() << "loaded";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.where(), (util::SourceLocation{"test.json", 3, 38}));
    EXPECT_EQ(std::string(e.what()).rfind("test.json:3:38: error: invalid JSON: ", 0), 0u)
        << e.what();
  }
  EXPECT_TRUE(fails_with("", "", "invalid JSON"));
  EXPECT_TRUE(fails_with("{\"base\": \"trn3\"", "", "invalid JSON"));
  EXPECT_TRUE(fails_with("[1, 2]", "", "must be a JSON object"));
}

TEST(BadJson, DuplicateKey) {
  EXPECT_TRUE(fails_with(R"({"base":"trn3","sbuf":{"partitions":128,"partitions":64}})",
                         "sbuf.partitions", "duplicate key"));
}

// `levels` nested arrays ([[...]]) or objects ({"a":{"a":...1}}).
std::string nested(std::size_t levels, bool arrays) {
  std::string text;
  text.reserve(levels * 6);
  for (std::size_t i = 0; i < levels; ++i) text += arrays ? "[" : "{\"a\":";
  if (!arrays) text += "1";
  text.append(levels, arrays ? ']' : '}');
  return text;
}

// A file nested 100k levels deep (~200-500 KB) is refused where it passes the limit, before
// anything recurses over it: copying, merging or printing such a value overflowed the stack.
TEST(BadJson, DeepNestingIsRefusedWhereItPassesTheLimit) {
  constexpr std::size_t kLevels = 100000;
  for (const bool arrays : {true, false}) {
    const std::string deep = nested(kLevels, arrays);
    for (const std::string& prefix :
         {std::string(R"({"base":"trn3","x":)"), std::string(R"({"base":"trn3","name":)"),
          std::string(R"({"base":"trn3","published_chip":{"bf16":)"),
          std::string(R"({"tensor":{"clock_ghz":)")}) {
      const std::size_t open = std::count(prefix.begin(), prefix.end(), '{');
      const std::string text = prefix + deep + std::string(open, '}');
      const std::size_t levels = open + kLevels;
      SCOPED_TRACE(text.substr(0, prefix.size() + 12));
      EXPECT_TRUE(fails_with(
          text, "",
          fmt::format("nested {} levels deep; a trnsim config nests at most 64", levels)));
      try {
        load_json_text(text, "deep.json");
      } catch (const ConfigError& e) {
        // The bracket that opens level 65.
        std::size_t at = 0;
        for (std::size_t depth = 0; depth < 65; ++at) {
          if (text[at] == '[' || text[at] == '{') ++depth;
        }
        EXPECT_EQ(e.where(),
                  (util::SourceLocation{"deep.json", 1, static_cast<std::uint32_t>(at)}));
      }
    }
  }
  // The limit itself: 64 levels pass the nesting check (and fail for what they are), 65 do not.
  const auto at_depth = [](std::size_t levels) {
    return R"({"base":"trn3","x":)" + nested(levels - 1, true) + "}";
  };
  EXPECT_TRUE(fails_with(at_depth(64), "x", "unknown field"));
  EXPECT_TRUE(fails_with(at_depth(65), "", "nested 65 levels deep"));
  // Brackets inside strings (escaped quotes included) and comments do not count.
  const std::string brackets(100, '[');
  EXPECT_NO_THROW(load_json_text(R"({"base":"trn3", /* )" + brackets + R"( */ "name":"\")" +
                                     brackets + "\"}\n// " + brackets + "\n",
                                 "strings.json"));
}

// The same bound on a value built in memory and given to load_json.
TEST(BadJson, DeepNestingInMemoryIsRefused) {
  for (const bool arrays : {true, false}) {
    nlohmann::json root = {{"base", "trn3"}};
    nlohmann::json* node = &root["name"];
    for (int i = 0; i < 100000; ++i) {
      *node = arrays ? nlohmann::json::array({nullptr}) : nlohmann::json::object({{"a", nullptr}});
      node = arrays ? &(*node)[0] : &(*node)["a"];
    }
    try {
      load_json(root, "memory");
      ADD_FAILURE() << "loaded";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "name");
      EXPECT_NE(e.why().find("nested 100001 levels deep; a trnsim config nests at most 64"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(UnknownField, SuggestsTheCloseName) {
  EXPECT_TRUE(fails_with(R"({"base":"trn3","sbuf":{"bytes_per_partiton":4096}})",
                         "sbuf.bytes_per_partiton", "did you mean \"sbuf.bytes_per_partition\""));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensr":{}})", "tensr", "did you mean \"tensor\""));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"clock":2}})", "tensor.clock",
                         "did you mean \"tensor.clock_ghz\""));
  // The right name in the wrong section.
  EXPECT_TRUE(fails_with(R"({"base":"trn3","sbuf":{"banks":8}})", "sbuf.banks",
                         "did you mean \"psum.banks\""));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","hbm":{"zzzzzzzz":1}})", "hbm.zzzzzzzz",
                         "the fields of hbm are: "));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"clock_ghz":{"value":2.4,"sourc":"x"}}})",
                         "tensor.clock_ghz.sourc", "did you mean \"source\""));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","published_chip":{"int8":{"value":1}}})",
                         "published_chip.int8", "unknown mode"));
  EXPECT_TRUE(
      fails_with(R"({"base":"trn3","sbuf.partitions":128})", "sbuf.partitions", "dotted keys"));
}

TEST(WrongType, NamesExpectedAndActual) {
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"clock_ghz":"fast"}})", "tensor.clock_ghz",
                         "expected a number"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"has_mx":1}})", "tensor.has_mx",
                         "expected true or false, got number 1"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","sbuf":7})", "sbuf", "expected an object"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","lnc_options":"1,2"})", "lnc_options",
                         "expected a list of integers"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","generation":"gen5"})", "generation",
                         "unknown generation \"gen5\""));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","name":42})", "name", "expected a string"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"rows":{"value":128,"estimate":"yes"}}})",
                         "tensor.rows.estimate", "expected true or false"));
}

TEST(BadValue, NegativeZeroAndNonInteger) {
  EXPECT_TRUE(fails_with(R"({"base":"trn3","dma":{"engines_per_core":-1}})", "dma.engines_per_core",
                         "must be an integer in 1..1024 engines, got -1"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","hbm":{"bandwidth_gbps":0}})", "hbm.bandwidth_gbps",
                         "must be in 0.001..1e9 GB/s, got 0"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","psum":{"banks":7.5}})", "psum.banks",
                         "must be an integer, got 7.5"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","cores_per_chip":2.5})", "cores_per_chip",
                         "must be an integer"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","cores_per_chip":0})", "cores_per_chip",
                         "must be an integer in 1..1024, got 0"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","cores_per_chip":1e12})", "cores_per_chip",
                         "must be an integer in 1..1024, got 1000000000000"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"power_ramp_start_fraction":1.5}})",
                         "tensor.power_ramp_start_fraction", "must be in 0.01..1, got 1.5"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","lnc_options":[1,-2]})", "lnc_options[1]",
                         "must be an integer in 1..1024, got -2"));
  EXPECT_TRUE(
      fails_with(R"({"base":"trn3","tensor":{"clock_ghz":null}})", "tensor.clock_ghz", "missing"));
}

// The values of issue #18 that validated and then broke a run, each refused with its field,
// the value and the range.
TEST(BadValue, OutOfRangeNamesTheRange) {
  // An out-of-range double -> uint64 cast (undefined), reported at run time as "capacity 0x0".
  EXPECT_TRUE(fails_with(R"({"base":"trn3","hbm":{"capacity_gib":1e30}})", "hbm.capacity_gib",
                         "must be in 0.01..1048576 GiB, got 1e+30"));
  // Tensors are placed from 1 MiB on: 1 MB of HBM held none.
  EXPECT_TRUE(fails_with(R"({"base":"trn3","hbm":{"capacity_gib":0.001}})", "hbm.capacity_gib",
                         "must be in 0.01..1048576 GiB, got 0.001"));
  // inf/NaN instruction costs.
  EXPECT_TRUE(fails_with(
      R"({"base":"trn3","tensor":{"clock_ghz":1e-320,"published_peak_tflops":null},
          "published_chip":null})",
      "tensor.clock_ghz", "must be in 0.01..100 GHz, got 1e-320"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","vector":{"clock_ghz":1000}})", "vector.clock_ghz",
                         "must be in 0.01..100 GHz, got 1000"));
  // A "successful" run of 4e300 us.
  EXPECT_TRUE(fails_with(R"({"base":"trn3","dma":{"fixed_latency_ns":1e300}})",
                         "dma.fixed_latency_ns", "must be in 0..1e9 ns, got 1e+300"));
  // The simulator said "not a positive whole number".
  EXPECT_TRUE(fails_with(R"({"base":"trn3","sbuf":{"bytes_per_partition":4294967296}})",
                         "sbuf.bytes_per_partition",
                         "must be an integer in 1024..16777216 bytes, got 4294967296"));
  // The description said 8 cores and the HBM share was a millionth.
  EXPECT_TRUE(fails_with(R"({"base":"trn3","cores_per_chip":1000000,"published_chip":null})",
                         "cores_per_chip", "must be an integer in 1..1024, got 1000000"));
  // Reals that are positive but so small that what divides by them overflows.
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"power_ramp_start_fraction":1e-300}})",
                         "tensor.power_ramp_start_fraction", "must be in 0.01..1, got 1e-300"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"rate_mx":1e-300,"published_peak_tflops":
                             null},"published_chip":null})",
                         "tensor.rate_mx", "must be 0 or in 0.001..64 rows/cycle, got 1e-300"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"load_stationary_speedup":1e-300}})",
                         "tensor.load_stationary_speedup", "must be in 0.01..100 x, got 1e-300"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","published_chip":{"bf16":1e300}})",
                         "published_chip.bf16", "must be in 0.001..1e9 TFLOPS, got 1e+300"));
  // The ends of a range are accepted.
  EXPECT_NO_THROW(load_json_text(
      R"({"base":"trn3","hbm":{"capacity_gib":1048576},"dma":{"fixed_latency_ns":1e9},
          "sbuf":{"bytes_per_partition":16777216},"cores_per_chip":1024,"published_chip":null})",
      "ends.json"));
}

// Every numeric field refuses a value just outside each end of its documented range (the
// ranges of describe_fields(), which the docs test compares with docs/arch-config.md).
TEST(BadValue, EveryRangeIsEnforcedAtBothEnds) {
  int checked = 0;
  for (const FieldInfo& field : describe_fields()) {
    if (field.range.empty()) continue;
    std::string span = field.range;
    const bool or_zero = span.rfind("0 or ", 0) == 0;
    if (or_zero) span = span.substr(5);
    const auto dots = span.find("..");
    const double min = std::stod(span.substr(0, dots));
    const double max = dots == std::string::npos ? min : std::stod(span.substr(dots + 2));
    const bool integral = field.kind != "number" && field.kind.find("figure") == std::string::npos;
    const double below = min > 0 ? (integral ? min - 1 : min / 2) : -1;
    const double above = integral ? max + 1 : max * 2;
    const bool is_list = field.kind == "list of integers";
    const bool is_figures = field.kind.find("figure") != std::string::npos;
    for (const double value : {below, above}) {
      if (or_zero && value == 0) continue;
      nlohmann::json patch = {{"base", "trn3"}};
      std::string path = field.path;
      nlohmann::json json_value = value;
      if (is_list) {
        json_value = nlohmann::json::array({1, value});
        path += "[1]";
      } else if (is_figures) {
        path += ".bf16";
      }
      std::string pointer = "/" + path;
      std::replace(pointer.begin(), pointer.end(), '.', '/');
      if (is_list) pointer = "/" + field.path;
      patch[nlohmann::json::json_pointer(pointer)] = json_value;
      const std::string needle = min == max ? "must be " + field.range
                                 : or_zero  ? "must be 0 or in " + span
                                            : "in " + span;
      EXPECT_TRUE(fails_with(patch.dump(), path, needle)) << patch.dump();
      ++checked;
    }
  }
  EXPECT_GT(checked, 120);
}

TEST(Inconsistent, SizesAndPartitions) {
  EXPECT_TRUE(fails_with(R"({"base":"trn3","sbuf":{"total_bytes":1048576}})", "sbuf.total_bytes",
                         "partitions x bytes_per_partition = 128 x 262144 = 33554432"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","psum":{"banks":6}})", "psum.bytes_per_partition",
                         "not divisible into psum.banks = 6"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","sbuf":{"partitions":64}})", "sbuf.partitions",
                         "must be 128, got 64"));
  EXPECT_TRUE(
      fails_with(R"({"base":"trn3","vector":{"lanes":96}})", "vector.lanes", "must be 128"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","sbuf":{"bytes_per_partition":262146}})",
                         "sbuf.bytes_per_partition", "not a multiple of sbuf.min_alignment_bytes"));
  // An alignment of 6 validated, then the compiler placed fp32 tiles at offsets like 1026
  // and failed its own ISA validation ("trnsim compiler bug").
  EXPECT_TRUE(
      fails_with(R"({"base":"trn3","sbuf":{"min_alignment_bytes":6,"bytes_per_partition":262140}})",
                 "sbuf.min_alignment_bytes", "must be a power of two, got 6"));
  EXPECT_NO_THROW(load_json_text(R"({"base":"trn3","sbuf":{"min_alignment_bytes":64}})", "x"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","gpsimd":{"cores":4}})", "gpsimd.partitions_per_core",
                         "must cover the 128 SBUF partitions"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"moving_free_max":8192}})",
                         "tensor.moving_free_max", "more than the 16384 bytes of PSUM"));
  EXPECT_TRUE(fails_with(R"({"base":"trn2","tensor":{"has_mx":true}})", "tensor.rate_mx",
                         "must be > 0 when tensor.has_mx is true"));
  EXPECT_TRUE(fails_with(R"({"base":"trn2","tensor":{"has_bf16_psum":true}})",
                         "tensor.moving_free_max_bf16", "must be > 0"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","lnc_options":[1,3]})", "lnc_options",
                         "3 does not divide cores_per_chip = 8"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","lnc_options":[2,4],"default_lnc":2})", "lnc_options",
                         "must include 1"));
  EXPECT_TRUE(
      fails_with(R"({"base":"trn1","default_lnc":2})", "default_lnc", "not one of lnc_options"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","dma":{"engine_peak_bytes_per_ns":40}})",
                         "dma.engine_peak_bytes_per_ns", "exceeds the theoretical"));
}

// A run holds the SBUF and PSUM of every core of a logical core in host memory: a logical
// core of 1024 trn3 cores (34 GiB) validated, then the run exhausted the host.
TEST(Inconsistent, LogicalCoreFitsTheSimulator) {
  EXPECT_TRUE(fails_with(
      R"({"base":"trn3","cores_per_chip":1024,"lnc_options":[1,2,1024],"published_chip":null})",
      "lnc_options",
      "a logical core of 1024 cores holds 1024 x 34 MiB = 34 GiB of SBUF and PSUM, "
      "more than the 8 GiB a run can simulate"));
  EXPECT_TRUE(
      fails_with(R"({"base":"trn3","lnc_options":[1,2,4],"sbuf":{"bytes_per_partition":16777216}})",
                 "lnc_options", "a logical core of 4 cores holds 4 x 2050 MiB"));
  EXPECT_NO_THROW(load_json_text(
      R"({"base":"trn3","cores_per_chip":1024,"lnc_options":[1,2,4,8,16,32,64,128],
          "published_chip":null})",
      "x"));
  EXPECT_NO_THROW(
      load_json_text(R"({"base":"trn3","sbuf":{"bytes_per_partition":16777216}})", "x"));
}

// A PSUM bank smaller than one fp32 validated, then the kernels divided by zero (SIGFPE)
// sizing their tiles: bank bytes = psum.bytes_per_partition / psum.banks.
TEST(Inconsistent, PsumBanksTheModelCanUse) {
  EXPECT_TRUE(fails_with(R"({"base":"trn3","psum":{"banks":16384}})", "psum.banks",
                         "16384 banks of the 16384 bytes of PSUM per partition are 1 byte each; "
                         "a bank must hold tensor.rows = 128 fp32 accumulators (512 bytes)"));
  // 256 bytes: kernels whose 128 x 128 tiles no longer fit a bank failed ISA validation.
  EXPECT_TRUE(
      fails_with(R"({"base":"trn3","psum":{"banks":64}})", "psum.banks", "are 256 bytes each"));
  EXPECT_NO_THROW(load_json_text(R"({"base":"trn3","psum":{"banks":32}})", "x"));
  // Whole fp32 accumulators: 8 banks of 1502 bytes.
  EXPECT_TRUE(fails_with(
      R"({"base":"trn3","psum":{"bytes_per_partition":12016},"tensor":{"moving_free_max":2048,
          "moving_free_max_bf16":4096}})",
      "psum.banks", "8 banks of 1502 bytes each: a bank must hold whole 4-byte fp32"));
  // Before gen4 a matmul output lies within one bank: the largest one must fit.
  EXPECT_TRUE(fails_with(R"({"base":"trn2","psum":{"banks":16}})", "tensor.moving_free_max",
                         "512 fp32 results per partition need 2048 bytes, more than one 1024-byte "
                         "PSUM bank; before gen4"));
  EXPECT_NO_THROW(load_json_text(
      R"({"base":"trn2","psum":{"banks":16},"tensor":{"moving_free_max":256}})", "x"));
  // gen4 may spread one matmul over several banks.
  EXPECT_NO_THROW(load_json_text(R"({"base":"trn3","psum":{"banks":16}})", "x"));
}

TEST(PublishedPeaks, ContradictionNamesTheFigure) {
  // 2 x 128 x 128 x 2.4 GHz x 1 = 78.6; 100 is 27% off.
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"published_peak_tflops":{"bf16":100}}})",
                         "tensor.published_peak_tflops.bf16",
                         "published 100 TFLOPS contradicts the 78.6 TFLOPS derived from 2 x 128 "
                         "rows x 128 cols x 2.4 GHz x rate 1"));
  // Just outside 3%: 78.64 x 1.031 = 81.08.
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"published_peak_tflops":{"bf16":81.1}}})",
                         "tensor.published_peak_tflops.bf16", "tolerance 3%"));
  EXPECT_NO_THROW(
      load_json_text(R"({"base":"trn3","tensor":{"published_peak_tflops":{"bf16":81}}})", "x"));
  EXPECT_TRUE(fails_with(R"({"base":"trn2","tensor":{"published_peak_tflops":{"mx":300}}})",
                         "tensor.published_peak_tflops.mx", "no mx matmul"));
}

TEST(PublishedPeaks, ChipFigureNeedsItsRecordedTolerance) {
  // Replacing the figure object drops the 7% tolerance: 671 vs 629 is then an error.
  EXPECT_TRUE(fails_with(R"({"base":"trn3","published_chip":{"bf16":671}})", "published_chip.bf16",
                         "8 cores x 2 x 128 rows"));
  // A wider tolerance must say why.
  EXPECT_TRUE(
      fails_with(R"({"base":"trn3","published_chip":{"bf16":{"value":671,"tolerance":0.07}}})",
                 "published_chip.bf16.discrepancy", "must say why"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","published_chip":{"mx":{"value":2517,"tolerance":-1}}})",
                         "published_chip.mx.tolerance", "must be a fraction"));
  EXPECT_NO_THROW(load_json_text(
      R"({"base":"trn3","published_chip":{"bf16":{"value":671,"tolerance":0.07,
          "discrepancy":"implies 2.56 GHz"}}})",
      "x"));
}

// Text from a config reached the terminal as written: a NUL or an escape sequence in a name.
TEST(BadValue, ControlCharactersInTextAreRefused) {
  EXPECT_TRUE(fails_with(R"({"base":"trn3","name":"\u001b[31mred"})", "name",
                         "contains control character U+001B"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","name":"a\u0000b"})", "name",
                         "contains control character U+0000"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","name":"a\u007fb"})", "name",
                         "contains control character U+007F"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","description":"two\nlines"})", "description",
                         "contains control character U+000A"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","description":"csi \u009b2J"})", "description",
                         "contains control character U+009B"));
  EXPECT_TRUE(
      fails_with(R"({"base":"trn3","tensor":{"clock_ghz":{"value":2.4,"source":"\u0007"}}})",
                 "tensor.clock_ghz.source", "contains control character U+0007"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","cores_per_chip":{"value":8,"source":"\u001b]0;x"}})",
                         "cores_per_chip.source", "contains control character U+001B"));
  EXPECT_TRUE(fails_with(
      R"({"base":"trn3","published_chip":{"bf16":{"value":671,"tolerance":0.07,
          "discrepancy":"\u001b[2J"}}})",
      "published_chip.bf16.discrepancy", "contains control character U+001B"));
  // Other characters are text.
  const ChipConfig c = load_json_text(
      R"({"base":"trn3","name":"Trainium \u00fc \u2713 \u00a0","description":"tab-free"})", "x");
  EXPECT_EQ(c.name, "Trainium \u00fc \u2713 \u00a0");
}

// No error message carries a control character from the file: keys, preset names and JSON
// text are quoted with their control characters escaped.
TEST(BadValue, MessagesEscapeControlCharacters) {
  const auto message_of = [](const std::string& text, const std::string& origin) {
    try {
      load_json_text(text, origin);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  for (const std::string& text :
       {std::string(R"({"base":"trn3","\u001b[2J":1})"), std::string(R"({"base":"\u001b[31m"})"),
        std::string(R"({"base":"trn3","sbuf":{"\u009b1m":1}})"),
        std::string(R"({"base":"trn3","published_chip":{"\u0007":1}})"),
        std::string("{\"base\":\"trn3\",\"name\":\"\x7f\x7f\"} \x7f"),
        std::string(R"({"base":"trn3","generation":"gen\u001b"})")}) {
    const std::string what = message_of(text, "test.json");
    EXPECT_NE(what, "loaded") << text;
    EXPECT_FALSE(what.find_first_of(std::string("\x00\x07\x1b\x7f", 4)) != std::string::npos ||
                 what.find("\xc2\x9b") != std::string::npos)
        << what;
    EXPECT_NE(what.find("\\u00"), std::string::npos) << what;
  }
  // A file named with a control character gives its escaped name to the config.
  const ChipConfig c = load_json_text(R"({"base":"trn3"})", "evil\x1b[31m.json");
  EXPECT_EQ(c.name, "evil\\u001b[31m.json");
  EXPECT_EQ(c.sbuf.bytes_per_partition.source, load_preset("trn3").sbuf.bytes_per_partition.source);
  EXPECT_NE(c.description.find("from evil\\u001b[31m.json"), std::string::npos);
}

// A message quotes a long name from the file (a key, a preset name) cut to 48 bytes with
// its length: a 1 MB key made a 1 MB error line.
TEST(BadValue, MessagesShortenLongNames) {
  const std::string long_name(1000000, 'k');
  const std::string cut = std::string(48, 'k') + "...(1000000 bytes)";
  EXPECT_TRUE(fails_with(R"({"base":"trn3",")" + long_name + R"(":1})", cut, "unknown field"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","sbuf":{")" + long_name + R"(":1}})", "sbuf." + cut,
                         "unknown field"));
  EXPECT_TRUE(
      fails_with(R"({"base":")" + long_name + R"("})", "base", "unknown preset \"" + cut + "\""));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","generation":")" + long_name + R"("})", "generation",
                         "unknown generation \"" + cut + "\""));
  EXPECT_TRUE(fails_with(R"({"base":"trn3","published_chip":{")" + long_name + R"(":1}})",
                         "published_chip." + cut, "unknown mode"));
  EXPECT_TRUE(
      fails_with(R"({"base":"trn3","tensor":{"rows":{"value":128,")" + long_name + R"(":1}}})",
                 "tensor.rows." + cut, "unknown key"));
  EXPECT_TRUE(fails_with(R"({"base":"trn3",")" + long_name + R"(":{"a":1,"a":2}})", cut + ".a",
                         "duplicate key"));
  // Cut between UTF-8 sequences: 47 ASCII bytes, then two-byte characters.
  std::string utf8(47, 'u');
  for (int i = 0; i < 20; ++i) utf8 += "\u00fc";
  EXPECT_TRUE(fails_with(R"({"base":"trn3",")" + utf8 + R"(":1})",
                         std::string(47, 'u') + "..." + "(87 bytes)", "unknown field"));
  // A close name is still suggested.
  EXPECT_TRUE(fails_with(R"({"base":"trn3","tensor":{"clock_ghzz":1}})", "tensor.clock_ghzz",
                         "did you mean \"tensor.clock_ghz\""));
}

TEST(Base, UnknownOrMalformed) {
  EXPECT_TRUE(fails_with(R"({"base":"trn4"})", "base",
                         "unknown preset \"trn4\"; the presets are trn1, trn2, trn3"));
  EXPECT_TRUE(fails_with(R"({"base":3})", "base", "expected a preset name"));
  EXPECT_TRUE(fails_with(R"({"name":"x"})", "description", "missing"));
}

TEST(Files, MissingDirectoryOrEndless) {
  // Located at the path, as every file error (util::read_file).
  for (const auto& [path, why] :
       {std::pair<std::string, std::string>{"/nonexistent/chip.json", "chip config: cannot open"},
        {"/tmp", "chip config: cannot read a directory"},
        {"/dev/zero", "chip config: more than 16777216 bytes"}}) {
    try {
      load_file(path);
      ADD_FAILURE() << path;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.where().file, path);
      EXPECT_NE(std::string(e.what()).find(path + ": error: " + why), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace trnsim::arch
