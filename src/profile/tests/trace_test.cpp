// Chrome trace JSON: parsed back with nlohmann_json, required fields, per-track monotonic
// timestamps, paired flows, metadata names and counters.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "profile/tests/helpers.h"
#include "sim/asm_runner.h"

namespace trnsim::profile {
namespace {

using nlohmann::json;

struct AsmRun {
  arch::ChipConfig chip = arch::load_preset("trn3");
  sim::AsmRunOutcome outcome;
};
std::unique_ptr<AsmRun> run_matmul_example() {
  auto r = std::make_unique<AsmRun>();
  sim::AsmRunRequest req;
  req.asm_path = testing::source_dir() + "/examples/asm/matmul_256_bf16.s";
  req.inits.push_back({"a_t", sim::TensorInit::Kind::kRandom, "", {}, 1});
  req.inits.push_back({"b", sim::TensorInit::Kind::kRandom, "", {}, 2});
  req.timed = true;
  r->outcome = sim::run_asm(req);
  return r;
}

void check_trace(const json& trace, std::size_t expected_slices, std::set<int> pids) {
  ASSERT_TRUE(trace.contains("traceEvents"));
  const json& events = trace["traceEvents"];
  ASSERT_TRUE(events.is_array());
  std::map<std::pair<int, int>, double> last_ts;
  std::map<std::pair<int, int>, long long> last_end_ns;  // of the last slice on each track
  std::map<std::pair<int, int>, std::string> names;
  std::map<std::uint64_t, int> starts, finishes;
  std::size_t slices = 0, counters = 0;
  std::set<int> seen_pids;
  for (const json& e : events) {
    ASSERT_TRUE(e.contains("ph")) << e.dump();
    const std::string ph = e["ph"];
    ASSERT_TRUE(e.contains("pid")) << e.dump();
    const int pid = e["pid"];
    if (ph == "M") {
      if (e["name"] == "thread_name") names[{pid, e["tid"].get<int>()}] = e["args"]["name"];
      continue;
    }
    ASSERT_TRUE(e.contains("ts")) << e.dump();
    const double ts = e["ts"];
    if (ph == "C") {
      ++counters;
      ASSERT_TRUE(e["args"].is_object());
      continue;
    }
    ASSERT_TRUE(e.contains("tid")) << e.dump();
    const int tid = e["tid"];
    seen_pids.insert(pid);
    auto key = std::make_pair(pid, tid);
    if (last_ts.count(key)) {
      EXPECT_GE(ts, last_ts[key]) << "track " << pid << "/" << tid << " goes back";
    }
    last_ts[key] = ts;
    if (ph == "X") {
      ++slices;
      // Slices on one track nest: each starts at or after the end of the one before, in the
      // trace's own whole nanoseconds (start and duration rounded separately overlapped).
      const auto ns = [](double us) { return std::llround(us * 1000); };
      if (last_end_ns.count(key)) {
        EXPECT_GE(ns(ts), last_end_ns[key]) << "slice overlaps the one before: " << e.dump();
      }
      last_end_ns[key] = ns(ts) + ns(e["dur"].get<double>());
      for (const char* f : {"name", "dur", "args"})
        EXPECT_TRUE(e.contains(f)) << f << " in " << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0);
      const json& args = e["args"];
      for (const char* f : {"op", "operands", "dtype", "bytes", "flops", "stall_ns"})
        EXPECT_TRUE(args.contains(f)) << f << " in " << e.dump();
    } else if (ph == "s") {
      ++starts[e["id"].get<std::uint64_t>()];
    } else if (ph == "f") {
      ++finishes[e["id"].get<std::uint64_t>()];
      EXPECT_EQ(e["bp"], "e");
    } else {
      ADD_FAILURE() << "unexpected phase " << ph;
    }
  }
  EXPECT_EQ(slices, expected_slices);
  EXPECT_GT(counters, 0u);
  EXPECT_EQ(seen_pids, pids);
  EXPECT_FALSE(starts.empty());
  EXPECT_EQ(starts.size(), finishes.size());
  for (const auto& [id, n] : starts) {
    EXPECT_EQ(n, 1) << "flow " << id;
    EXPECT_EQ(finishes[id], 1) << "flow " << id << " has no finish";
  }
  // Every track used has a name.
  for (const auto& [key, ts] : last_ts)
    EXPECT_TRUE(names.count(key)) << key.first << "/" << key.second;
}

TEST(ProfileTrace, MatmulExampleParsesWithEveryRequiredField) {
  const auto r = run_matmul_example();
  ProfileInput in{
      &r->chip, {{0, &r->outcome.program, &r->outcome.result, &*r->outcome.timing}}, "matmul"};
  std::stringstream out;
  write_chrome_trace(in, out);
  const json trace = json::parse(out.str());
  check_trace(trace, 12, {0});
  // Track names: tensor, vector, dma.0, dma.1, dma.2.
  std::set<std::string> names;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      names.insert(e["args"]["name"].get<std::string>());
  EXPECT_EQ(names, (std::set<std::string>{"tensor", "vector", "dma.0", "dma.1", "dma.2"}));
  // The first matmul waits for the 4 loads: its slice says what it waited on and carries
  // its source line.
  bool found = false;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["args"]["index"] == 4) {
      found = true;
      EXPECT_EQ(e["args"]["waits"], "s1>=4");
      EXPECT_GT(e["args"]["stall_ns"].get<double>(), 0);
      EXPECT_NE(e["args"]["source"].get<std::string>().find("matmul_256_bf16.s:"),
                std::string::npos);
      EXPECT_EQ(e["args"]["flops"].get<double>(), 2.0 * 128 * 128 * 256);
    }
  EXPECT_TRUE(found);
}

// A loop runs on the device (examples/asm/loop_tiles.s: 8 trips on three queues): the
// trace has one slice per start, labelled "name#k", with the waits as they held at that
// start, and the analysis' busy time per queue is the timing report's.
TEST(ProfileTrace, ALoopShowsOneSlicePerTrip) {
  auto r = std::make_unique<AsmRun>();
  sim::AsmRunRequest req;
  req.asm_path = testing::source_dir() + "/examples/asm/loop_tiles.s";
  req.inits.push_back({"x", sim::TensorInit::Kind::kRandom, "", {}, 1});
  req.timed = true;
  r->outcome = sim::run_asm(req);
  const sim::RunResult& result = r->outcome.result;
  ASSERT_EQ(result.executions.size(), 75u);
  ProfileInput in{&r->chip, {{0, &r->outcome.program, &result, &*r->outcome.timing}}, "loop"};
  std::stringstream out;
  write_chrome_trace(in, out);
  const json trace = json::parse(out.str());
  check_trace(trace, 75, {0});
  std::set<std::string> computes;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["args"]["op"] != "tensor_scalar") continue;
    const std::string label = e["args"]["label"];
    computes.insert(label);
    // Trip k waits for load k (s1 >= k + 1) and store k - 1 (s3 >= k).
    const int k = std::stoi(label.substr(label.find('#') + 1));
    EXPECT_EQ(e["args"]["waits"], fmt::format("s1>={} s3>={}", k + 1, k)) << label;
  }
  EXPECT_EQ(computes.size(), 8u);
  EXPECT_TRUE(computes.count("tensor_scalar#7"));

  const Analysis a = analyze(in);
  const CoreProfile& c = a.cores[0];
  EXPECT_EQ(c.instructions.size(), 75u);
  for (const auto& q : r->outcome.timing->queues) {
    const std::string name = q.queue.engine == isa::Engine::kDma
                                 ? "dma." + std::to_string(q.queue.index)
                                 : std::string(isa::engine_name(q.queue.engine));
    const auto t = std::find_if(c.tracks.begin(), c.tracks.end(),
                                [&](const TrackProfile& p) { return p.name == name; });
    ASSERT_NE(t, c.tracks.end()) << name;
    EXPECT_NEAR(t->busy_ns, q.busy_ns, 1e-6) << name;
    EXPECT_NEAR(t->stalled_ns, q.stalled_ns, 1e-6) << name;
  }
  // The stores wait on the computations of their trip: engine stalls, released by a
  // tensor_scalar start.
  std::size_t released_by_compute = 0;
  for (const InstructionProfile& p : c.instructions)
    if (p.released_by >= 0 && a.op_names[c.instructions[p.released_by].op] == "tensor_scalar")
      ++released_by_compute;
  EXPECT_GE(released_by_compute, 8u);
}

// DMA times are fractional nanoseconds (bytes over a rate): back-to-back copies of odd sizes
// on one queue would overlap by 1 ns if the trace rounded start and duration separately.
TEST(ProfileTrace, SlicesOfOddDurationsOnOneTrackNest) {
  std::string text = ".hbm x@0x0:float32[128,1000]\n";
  for (int i = 0; i < 40; ++i)
    text += fmt::format(
        "[dma.0] dma_copy dst=sbuf[p0:128, off={}, float32, [[1,{}]]], src=hbm[p0:128x1000, "
        "addr=0x0, float32, [[1,{}]]]\n",
        (i % 4) * 4000, 37 + 13 * i, 37 + 13 * i);
  AsmRun r;
  sim::AsmRunRequest req;
  req.asm_text = text;
  req.asm_path = "odd.s";
  req.inits.push_back({"x", sim::TensorInit::Kind::kRandom, "", {}, 1});
  req.timed = true;
  req.options.check_hazards = false;  // the copies overwrite each other's tiles on purpose
  r.outcome = sim::run_asm(req);
  ProfileInput in{&r.chip, {{0, &r.outcome.program, &r.outcome.result, &*r.outcome.timing}}, "odd"};
  std::stringstream out;
  write_chrome_trace(in, out);
  const json trace = json::parse(out.str());
  long long last_end = -1;
  int slices = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++slices;
    const long long start = std::llround(e["ts"].get<double>() * 1000);
    EXPECT_GE(start, last_end) << e.dump();
    last_end = start + std::llround(e["dur"].get<double>() * 1000);
  }
  EXPECT_EQ(slices, 40);
}

// The explorer's source view shows each line's code, read from the source file.
TEST(ProfileAnalysis, SourceLinesCarryTheirCode) {
  const auto r = run_matmul_example();
  ProfileInput in{
      &r->chip, {{0, &r->outcome.program, &r->outcome.result, &*r->outcome.timing}}, "matmul"};
  const Analysis a = analyze(in);
  std::size_t with_code = 0;
  for (const SourceLine& s : a.sources) {
    if (s.line == 0) continue;
    EXPECT_EQ(s.code.rfind('[', 0), 0u) << s.file << ":" << s.line << " '" << s.code << "'";
    with_code += s.code.empty() ? 0 : 1;
  }
  EXPECT_GT(with_code, 0u);
  const Analysis none = analyze(in, {.read_source_code = false});
  for (const SourceLine& s : none.sources) EXPECT_TRUE(s.code.empty());
}

TEST(ProfileTrace, OneProcessPerCore) {
  const auto r = run_matmul_example();
  const auto& o = r->outcome;
  ProfileInput in{&r->chip,
                  {{0, &o.program, &o.result, &*o.timing}, {5, &o.program, &o.result, &*o.timing}},
                  "2"};
  std::stringstream out;
  write_chrome_trace(in, out);
  check_trace(json::parse(out.str()), 24, {0, 5});
}

}  // namespace
}  // namespace trnsim::profile
