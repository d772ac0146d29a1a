// The explorer HTML: self-contained, the element ids the browser test looks for, the data
// block parses as JSON and matches the analysis.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "profile/tests/helpers.h"

namespace trnsim::profile {
namespace {

using namespace testing;  // NOLINT

isa::Program program() {
  isa::Program p;
  p.instructions.push_back(make(dma_q(0), load(0, 128, 512, 0), {}, {{1, 1}}, 3));
  p.instructions.push_back(make(tensor_q(), matmul(128, 128, 512, 0, 0), {{1, 1}}, {{2, 1}}, 4));
  p.instructions.push_back(make(
      vector_q(), copy(sbuf(DType::kFloat32, 128, 8192, 512), psum(DType::kFloat32, 128, 0, 512)),
      {{2, 1}}, {}, 5));
  return p;
}

nlohmann::json data_block(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"profile-data\">";
  const auto b = html.find(open);
  EXPECT_NE(b, std::string::npos);
  const auto e = html.find("</script>", b);
  return nlohmann::json::parse(html.substr(b + open.size(), e - b - open.size()));
}

TEST(ProfileHtml, SelfContainedReportWithTheExpectedSections) {
  const auto run = run_timed(program());
  const Analysis a = analyze(run->input());
  std::stringstream out;
  write_html_report(a, out);
  const std::string html = out.str();
  for (const char* id : {"id=\"summary\"", "id=\"timeline\"", "data-tracks=\"3\"",
                         "id=\"suggestions\"", "id=\"instructions\"", "id=\"source\"",
                         "id=\"selftest\"", "id=\"stalls\"", "<canvas id=\"timeline-canvas\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  // Nothing is fetched: no external scripts, styles or links.
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  const nlohmann::json data = data_block(html);
  EXPECT_EQ(data["mode"], "report");
  const auto& core = data["runs"][0]["cores"][0];
  EXPECT_EQ(core["tracks"].size(), 3u);
  EXPECT_EQ(core["ins"]["n"], 3);
  EXPECT_EQ(core["ins"]["start"].size(), 3u);
  EXPECT_DOUBLE_EQ(core["metrics"]["mfu_percent"].get<double>(), a.cores[0].metrics.mfu_percent);
  EXPECT_EQ(data["runs"][0]["suggestions"].size(), a.suggestions.size());
  EXPECT_EQ(core["text"].size(), 3u);
}

// The stall view's data: pairs of source lines with their shares of the stall time, and DMA
// queue rows without a peak of their own next to the engines' peak for all queues.
TEST(ProfileHtml, StallLinePairsAndTheDmaPeakAreEmbedded) {
  const auto run = run_timed(program());
  const Analysis a = analyze(run->input());
  std::stringstream out;
  write_html_report(a, out);
  const nlohmann::json data = data_block(out.str());
  const auto& sources = data["runs"][0]["sources"];
  const auto& core = data["runs"][0]["cores"][0];
  auto line_of = [&](const nlohmann::json& index) {
    return sources.at(index.get<std::size_t>())["line"].get<int>();
  };
  const auto& pairs = core["stall_lines"];
  ASSERT_EQ(pairs.size(), 2u);
  double percent = 0;
  bool dma_pair = false;
  for (const auto& p : pairs) {
    percent += p["percent"].get<double>();
    if (line_of(p["waiting"]) == 4) {
      dma_pair = true;
      EXPECT_EQ(line_of(p["releasing"]), 3);  // the matmul waited for the load
      EXPECT_EQ(p["cause"], "dma");
      EXPECT_EQ(p["sems"], nlohmann::json::array({1}));
      EXPECT_DOUBLE_EQ(p["ns"].get<double>(), a.cores[0].instructions[1].stall_ns);
    }
  }
  EXPECT_TRUE(dma_pair);
  EXPECT_NEAR(percent, 100.0, 1e-9);
  EXPECT_DOUBLE_EQ(core["metrics"]["stall_ns"].get<double>(), a.cores[0].metrics.stall_ns);
  for (const auto& b : core["stalls"]) EXPECT_LE(b["percent"].get<double>(), 100.0) << b;
  for (const auto& t : core["tracks"])
    if (t["engine"] == "dma") {
      EXPECT_EQ(t["peak_per_s"].get<double>(), 0.0) << t["name"];
    }
  EXPECT_GT(core["metrics"]["dma_peak_bytes_per_s"].get<double>(), 0.0);
  EXPECT_GT(core["metrics"]["achieved_dma_bytes_per_s"].get<double>(), 0.0);
}

TEST(ProfileHtml, TextCannotCloseTheDataBlock) {
  auto run = run_timed(program());
  ProfileInput in = run->input();
  in.title = "</script><b>x";
  std::stringstream out;
  write_html_report(analyze(in), out);
  const nlohmann::json data = data_block(out.str());
  EXPECT_EQ(data["runs"][0]["title"], "</script><b>x");
}

TEST(ProfileHtml, ComparisonEmbedsBothRuns) {
  const auto before = run_timed(program(), true);
  const auto after = run_timed(program(), false);
  std::stringstream out;
  write_html_comparison(analyze(before->input()), analyze(after->input()), out);
  const nlohmann::json data = data_block(out.str());
  EXPECT_EQ(data["mode"], "compare");
  ASSERT_EQ(data["runs"].size(), 2u);
  EXPECT_GT(data["runs"][0]["total_ns"].get<double>(), data["runs"][1]["total_ns"].get<double>());
}

TEST(ProfileHtml, InstructionLimitKeepsMetricsWhole) {
  const auto run = run_timed(program());
  const Analysis a = analyze(run->input());
  std::stringstream out;
  HtmlOptions options;
  options.max_instructions = 2;
  write_html_report(a, out, options);
  const nlohmann::json data = data_block(out.str());
  const auto& ins = data["runs"][0]["cores"][0]["ins"];
  EXPECT_EQ(ins["n"], 2);
  EXPECT_EQ(ins["total"], 3);
  EXPECT_EQ(ins["occ"].size(), 2u);
}

}  // namespace
}  // namespace trnsim::profile
