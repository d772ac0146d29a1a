// A 10^6-instruction synthetic program streamed as a Chrome trace and validated with a SAX
// parser (no DOM of a million events), plus an explorer report of 10^5 instructions. Host
// speed is recorded as a test property, never asserted.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "profile/tests/helpers.h"

namespace trnsim::profile {
namespace {

using namespace testing;  // NOLINT
using json = nlohmann::json;

// dma.0 loads tile k (s1), TensorE multiplies it (waits s1 >= k+1, signals s2), VectorE
// evicts (waits s2 >= k+1). Times are laid out by hand: a 100 ns period per tile.
struct Synthetic {
  arch::ChipConfig chip = arch::load_preset("trn3");
  isa::Program program;
  sim::RunResult result;
};
std::unique_ptr<Synthetic> synthetic(std::size_t tiles) {
  auto s = std::make_unique<Synthetic>();
  auto& ins = s->program.instructions;
  ins.reserve(tiles * 3);
  s->result.times.reserve(tiles * 3);
  for (std::size_t k = 0; k < tiles; ++k) {
    const auto v = static_cast<std::uint32_t>(k + 1);
    const double t = 100.0 * static_cast<double>(k);
    ins.push_back(make(dma_q(0), load(0, 128, 64, 0), {}, {{1, 1}}, 1));
    s->result.times.push_back({t, t + 90, t + 90});
    ins.push_back(make(tensor_q(), matmul(128, 128, 64, 0, 0), {{1, v}}, {{2, 1}}, 2));
    s->result.times.push_back({t + 90, t + 150, t + 140});
    ins.push_back(make(
        vector_q(), copy(sbuf(DType::kFloat32, 128, 8192, 64), psum(DType::kFloat32, 128, 0, 64)),
        {{2, v}}, {}, 3));
    s->result.times.push_back({t + 150, t + 190, t + 180});
  }
  s->result.end_time = s->result.times.back().end;
  s->result.instructions_executed = ins.size();
  return s;
}

class Counter : public nlohmann::json_sax<json> {
 public:
  std::size_t slices = 0, flow_s = 0, flow_f = 0, counters = 0, depth = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t& v) override {
    if (depth == 2 && key_ == "ph") {
      if (v == "X")
        ++slices;
      else if (v == "s")
        ++flow_s;
      else if (v == "f")
        ++flow_f;
      else if (v == "C")
        ++counters;
    }
    return true;
  }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    ++depth;
    return true;
  }
  bool end_object() override {
    --depth;
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t pos, const std::string&,
                   const nlohmann::detail::exception& e) override {
    ADD_FAILURE() << "JSON error at " << pos << ": " << e.what();
    return false;
  }

 private:
  std::string key_;
};

TEST(ProfileTraceStream, MillionInstructionsStreamAndParse) {
  const std::size_t tiles = 333'334;  // 1,000,002 instructions
  const auto s = synthetic(tiles);
  ProfileInput in{&s->chip, {{0, &s->program, &s->result, nullptr}}, "synthetic"};
  const std::string path = ::testing::TempDir() + "/profile_million.json";
  const auto t0 = std::chrono::steady_clock::now();
  {
    std::ofstream out(path, std::ios::binary);
    write_chrome_trace(in, out);
    ASSERT_TRUE(out.good());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  const auto bytes = static_cast<double>(file.tellg());
  file.seekg(0);
  RecordProperty("trace_write_seconds", std::to_string(secs));
  RecordProperty("trace_bytes", std::to_string(bytes));
  std::printf("trace: %zu instructions, %.1f MB in %.2f s (%.0f k events/s)\n",
              s->program.instructions.size(), bytes / 1e6, secs,
              static_cast<double>(s->program.instructions.size()) / secs / 1e3);
  Counter counter;
  ASSERT_TRUE(json::sax_parse(file, &counter));
  EXPECT_EQ(counter.slices, 3 * tiles);
  // Every matmul and every copy was released by a signal: one flow each, paired.
  EXPECT_EQ(counter.flow_s, 2 * tiles);
  EXPECT_EQ(counter.flow_f, 2 * tiles);
  EXPECT_GT(counter.counters, 0u);
  std::remove(path.c_str());
}

TEST(ProfileTraceStream, ExplorerReportOfAHundredThousandInstructions) {
  const auto s = synthetic(33'334);
  ProfileInput in{&s->chip, {{0, &s->program, &s->result, nullptr}}, "synthetic"};
  const auto t0 = std::chrono::steady_clock::now();
  const Analysis a = analyze(in);
  const auto t1 = std::chrono::steady_clock::now();
  std::stringstream out;
  write_html_report(a, out);
  const auto t2 = std::chrono::steady_clock::now();
  const std::string html = out.str();
  std::printf("report: %zu instructions, analysis %.2f s, HTML %.1f MB in %.2f s\n",
              s->program.instructions.size(), std::chrono::duration<double>(t1 - t0).count(),
              static_cast<double>(html.size()) / 1e6,
              std::chrono::duration<double>(t2 - t1).count());
  RecordProperty("report_bytes", std::to_string(html.size()));
  // Matmul k starts at 100k + 90 when load k ends; TensorE was free from 100(k-1) + 140:
  // a 50 ns stall released by the load on dma.0. The copy starts as TensorE's signal fires,
  // 10 ns after its queue became free.
  const CoreProfile& c = a.cores[0];
  EXPECT_EQ(c.instructions[4].released_by, 3);
  EXPECT_NEAR(c.instructions[4].stall_ns, 50, 1e-9);
  EXPECT_EQ(c.instructions[4].cause, StallCause::kDma);
  EXPECT_EQ(c.instructions[5].released_by, 4);
  EXPECT_NEAR(c.instructions[5].stall_ns, 70, 1e-9);
  EXPECT_EQ(c.instructions[5].cause, StallCause::kEngine);
  EXPECT_NE(html.find("data-tracks=\"3\""), std::string::npos);
}

}  // namespace
}  // namespace trnsim::profile
