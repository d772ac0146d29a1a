// Control flow in the event loop: registers, branches, register-relative operands and
// waits, an instruction in flight twice across a back edge, hazards across trips, the
// errors of a loop gone wrong, and the timing report over every trip.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "isa/asm.h"
#include "sim/asm_runner.h"
#include "sim/tests/test_util.h"

namespace trnsim::sim::testing {
namespace {

// run_asm on a program text (HBM tensors by .hbm lines).
AsmRunOutcome run_text(const std::string& text, RunOptions options = {}, bool timed = false,
                       std::vector<TensorInit> inits = {}) {
  AsmRunRequest request;
  request.asm_path = "loop.s";
  request.asm_text = text;
  request.options = options;
  request.timed = timed;
  request.inits = std::move(inits);
  return run_asm(request);
}

std::string what_of(const std::string& text, RunOptions options = {},
                    std::vector<TensorInit> inits = {}) {
  const std::optional<SimError> e =
      sim_error_of([&] { run_text(text, options, false, std::move(inits)); });
  return e ? e->what() : "";
}

TEST(ControlFlow, RegistersLoadComputeAndStore) {
  // A while loop: r1 = n (loaded), r2 += 3 per trip until r1 counts down to 0; then r2 and a
  // wrapped sum are stored. Branch conditions compare against an immediate or a register.
  const std::string text =
      ".hbm n@0x0:int32[1]\n"
      ".hbm out@0x40:int32[3]\n"
      "[sync] reg_load dst=r1, src=hbm[p0:1x1, addr=0x0, int32, [[1,1]]]\n"  // 0
      "[sync] reg_set dst=r2, imm=0\n"
      "[sync] reg_add dst=r2, src=r2, imm=3\n"  // 2
      "[sync] reg_add dst=r1, src=r1, imm=-1\n"
      "[sync] branch cond=ne, a=r1, imm=0, target=2\n"
      "[sync] reg_store dst=hbm[p0:1x1, addr=0x40, int32, [[1,1]]], src=r2\n"
      "[sync] reg_set dst=r3, imm=2147483647\n"
      "[sync] reg_add dst=r3, src=r3, imm=1\n"  // wraps to -2^31
      "[sync] reg_store dst=hbm[p0:1x1, addr=0x44, int32, [[1,1]]], src=r3\n"
      "[sync] reg_set dst=r4, imm=7\n"
      "[sync] branch cond=ge, a=r4, b=r2, target=12\n"  // 7 >= 15 fails: falls through
      "[sync] reg_set dst=r4, imm=-9\n"
      "[sync] reg_store dst=hbm[p0:1x1, addr=0x48, int32, [[1,1]]], src=r4\n";
  const std::vector<std::int32_t> n = {5};
  const AsmRunOutcome outcome =
      run_text(text, {}, false, {{"n", TensorInit::Kind::kBytes, "", to_bytes(n), 0}});
  EXPECT_EQ(from_bytes<std::int32_t>(outcome.contents.at("out")),
            (std::vector<std::int32_t>{15, std::numeric_limits<std::int32_t>::min(), -9}));
  EXPECT_EQ(outcome.result.instructions_executed, 2 + 3 * 5 + 8u);
  // A straight-line program records no executions; this one records every start.
  EXPECT_EQ(outcome.result.executions.size(), outcome.result.instructions_executed);
}

// The cost of every instruction: one unit of occupancy, `latency` units until it signals.
class LongLatency final : public CostModel {
 public:
  explicit LongLatency(Duration latency) : latency_(latency) {}
  InstructionCost cost(const isa::Instruction&, std::size_t, Duration) override {
    return {1, latency_};
  }

 private:
  Duration latency_;
};

TEST(ControlFlow, AnInstructionRunsAgainBeforeItsLastRunCompleted) {
  // The memset starts at 1, 4 and 7 and signals 10 units after each start: the second and
  // third runs start while the first is still in flight.
  const std::string text =
      "[vector] reg_set dst=r0, imm=0\n"
      "[vector] memset dst=sbuf[p0:1, off=0, fp32, [[1,4]]], value=1 signal s1+=1\n"
      "[vector] reg_add dst=r0, src=r0, imm=1\n"
      "[vector] branch cond=lt, a=r0, imm=3, target=1\n"
      "[sync] sem wait s1>=3\n";
  LongLatency cost(10);
  RunOptions options;
  options.cost_model = &cost;
  Device device(trn3());
  const isa::Program program = isa::parse_program(text, "loop.s");
  const RunResult r = run(device, program, options);
  std::vector<InstructionTime> memsets;
  for (const Execution& e : r.executions)
    if (e.index == 1) memsets.push_back(e.time);
  ASSERT_EQ(memsets.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(memsets[k].start, 1 + 3.0 * static_cast<double>(k));
    EXPECT_EQ(memsets[k].end, memsets[k].start + 10);
  }
  EXPECT_EQ(r.times[1].start, 7);   // the last run
  EXPECT_EQ(r.times[4].start, 17);  // after the third signal
  EXPECT_EQ(r.end_time, 27);
  EXPECT_TRUE(r.hazards.empty());
}

// Three queues pipelining 4 rows through one SBUF buffer per stage, with waits counted from
// each queue's trip register (as examples/asm/loop_tiles.s does for whole tiles).
std::string row_pipeline(bool load_waits_for_compute, std::uint32_t trips = 4) {
  return fmt::format(
      ".hbm a@0x0:float32[4,8]\n"
      ".hbm out@0x1000:float32[4,8]\n"
      "[dma.0] reg_set dst=r0, imm=0\n"
      "[dma.0] dma_copy dst=sbuf[p0:1, off=0, fp32, [[1,8]]], src=hbm[p0:1x8, addr=0x0+r0*32, "
      "fp32, [[1,8]]] {}signal s1+=1\n"
      "[dma.0] reg_add dst=r0, src=r0, imm=1\n"
      "[dma.0] branch cond=lt, a=r0, imm={}, target=1\n"
      "[vector] reg_set dst=r0, imm=0\n"
      "[vector] tensor_copy dst=sbuf[p0:1, off=64, fp32, [[1,8]]], src=sbuf[p0:1, off=0, fp32, "
      "[[1,8]]] wait s1>=r0+1, s3>=r0 signal s2+=1\n"
      "[vector] reg_add dst=r0, src=r0, imm=1\n"
      "[vector] branch cond=lt, a=r0, imm={}, target=5\n"
      "[dma.1] reg_set dst=r0, imm=0\n"
      "[dma.1] dma_copy dst=hbm[p0:1x8, addr=0x1000+r0*32, fp32, [[1,8]]], src=sbuf[p0:1, "
      "off=64, fp32, [[1,8]]] wait s2>=r0+1 signal s3+=1\n"
      "[dma.1] reg_add dst=r0, src=r0, imm=1\n"
      "[dma.1] branch cond=lt, a=r0, imm={}, target=9\n",
      load_waits_for_compute ? "wait s2>=r0 " : "", trips, trips, trips);
}

std::vector<TensorInit> rows_of_a() {
  std::vector<float> a(32);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) - 7.5f;
  return {{"a", TensorInit::Kind::kBytes, "", to_bytes(a), 0}};
}

TEST(ControlFlow, RegisterRelativeOperandsAndWaitsPipelineTrips) {
  const AsmRunOutcome outcome = run_text(row_pipeline(true), {}, false, rows_of_a());
  EXPECT_TRUE(outcome.result.hazards.empty());
  EXPECT_EQ(outcome.contents.at("out"), outcome.contents.at("a"));
}

TEST(ControlFlow, UnrollGivesTheStraightLineProgramTheRunAmountedTo) {
  const AsmRunOutcome outcome = run_text(row_pipeline(true), {}, false, rows_of_a());
  const UnrolledRun u = unroll(outcome.program, outcome.result);
  ASSERT_EQ(u.program.instructions.size(), outcome.result.executions.size());
  ASSERT_EQ(u.source.size(), u.program.instructions.size());
  ASSERT_EQ(u.result.times.size(), u.program.instructions.size());
  EXPECT_TRUE(u.result.executions.empty());
  std::uint32_t loads = 0, copies = 0;
  for (std::size_t i = 0; i < u.program.instructions.size(); ++i) {
    const isa::Instruction& inst = u.program.instructions[i];
    EXPECT_EQ(u.result.times[i].start, outcome.result.executions[i].time.start);
    if (u.source[i] == 1) {  // trip k's load reads row k, by a static address now
      const auto& src = std::get<isa::DmaCopy>(inst.op).src;
      EXPECT_FALSE(src.is_dynamic());
      EXPECT_EQ(src.offset, 32u * loads);
      EXPECT_EQ(inst.name, fmt::format("dma_copy#{}", loads));
      EXPECT_EQ(inst.waits.front().value, loads);  // s2 >= r0 at trip k
      ++loads;
    } else if (u.source[i] == 5) {  // s1 >= k + 1 and s3 >= k
      ASSERT_EQ(inst.waits.size(), 2u);
      EXPECT_FALSE(inst.waits[0].base.present());
      EXPECT_EQ(inst.waits[0].value, copies + 1);
      EXPECT_EQ(inst.waits[1].value, copies);
      ++copies;
    } else if (u.source[i] == 0) {
      EXPECT_EQ(inst.name, "");  // ran once: no "#k"
    }
  }
  EXPECT_EQ(loads, 4u);
  EXPECT_EQ(copies, 4u);
  // A straight-line run comes back as it is; a result of another program is refused.
  const AsmRunOutcome line =
      run_text("[vector] memset dst=sbuf[p0:1, off=0, fp32, [[1,4]]], value=1\n");
  EXPECT_EQ(unroll(line.program, line.result).program, line.program);
  EXPECT_THROW(unroll(line.program, outcome.result), std::invalid_argument);
}

TEST(ControlFlow, TheHazardDetectorSeesARaceBetweenTrips) {
  // Without its wait, trip i + 1's load overwrites the buffer trip i's copy reads.
  const AsmRunOutcome outcome = run_text(row_pipeline(false), {}, false, rows_of_a());
  ASSERT_FALSE(outcome.result.hazards.empty());
  const Hazard& h = outcome.result.hazards.front();
  EXPECT_EQ(std::min(h.first, h.second), 1u);  // the load
  EXPECT_EQ(std::max(h.first, h.second), 5u);  // the copy
}

TEST(ControlFlow, AnOperandMovedOutOfItsMemoryIsAnErrorAtItsRun) {
  // Trip 4 of a 5-trip loop reads past the end of HBM tensor a's allocation.
  const std::string what = what_of(row_pipeline(true, 5), {}, rows_of_a());
  EXPECT_NE(what.find("loop.s:4:"), std::string::npos) << what;
  EXPECT_NE(what.find("('src' moved by r0 = 4)"), std::string::npos) << what;
  // Moved past the end of an SBUF partition: the chip's rules, checked at the run.
  const std::string past = what_of(
      "[vector] reg_set dst=r0, imm=1000\n"
      "[vector] memset dst=sbuf[p0:1, off=0+r0*4096, fp32, [[1,4]]], value=1\n");
  EXPECT_NE(past.find("'dst' moved by r0 = 1000: operand 'dst': bytes [4096000, 4096016) lie "
                      "outside"),
            std::string::npos)
      << past;
  // Moved below address 0.
  const std::string below = what_of(
      "[dma.0] reg_set dst=r0, imm=-1\n"
      "[dma.0] dma_copy dst=sbuf[p0:1, off=0, fp32, [[1,8]]], src=hbm[p0:1x8, addr=0x0+r0*32, "
      "fp32, [[1,8]]]\n");
  EXPECT_NE(below.find("r0 = -1 moves it -32 bytes from offset 0, below 0"), std::string::npos)
      << below;
}

TEST(ControlFlow, BranchTargetsAndRegistersAreCheckedEvenWithoutValidation) {
  // The simulator checks what it would index, whether or not it validates the program.
  RunOptions unchecked;
  unchecked.functional = false;
  unchecked.validate = false;
  for (const RunOptions& options : {RunOptions{}, unchecked}) {
    std::string what = what_of("[sync] reg_set dst=r0, imm=0\n[sync] branch target=9\n", options);
    EXPECT_NE(what.find("branch target 9: the program has 2 instructions"), std::string::npos)
        << what;
    what = what_of(
        "[sync] reg_set dst=r0, imm=0\n"
        "[vector] memset dst=sbuf[p0:1, off=0, fp32, [[1,4]]], value=1\n"
        "[sync] branch cond=lt, a=r0, imm=3, target=1\n",
        options);
    EXPECT_NE(what.find("branch target 1 is on queue vector"), std::string::npos) << what;
  }
  const std::string what = what_of("[sync] reg_set dst=r70, imm=0\n", unchecked);
  EXPECT_NE(what.find("register r70 does not exist"), std::string::npos) << what;
}

TEST(ControlFlow, ALoopThatNeverEndsStopsAtTheStepLimit) {
  RunOptions options;
  options.max_steps = 1000;
  const std::string what =
      what_of("[sync] reg_set dst=r0, imm=0\n[sync] branch target=1\n", options);
  EXPECT_NE(what.find("step limit of 1000 instruction starts"), std::string::npos) << what;
  EXPECT_NE(RunOptions::kLoopStepLimit, 0u);
}

TEST(ControlFlow, ARelativeWaitThatNeverHoldsIsADeadlockNamingItsRegister) {
  const std::string what = what_of(
      "[vector] reg_set dst=r4, imm=2\n"
      "[vector] memset dst=sbuf[p0:1, off=0, fp32, [[1,4]]], value=1 wait s1>=r4+1\n");
  EXPECT_NE(what.find("waits for semaphore 1 >= r4+1 = 3 (it is 0)"), std::string::npos) << what;
}

TEST(ControlFlow, ATimingOnlyRunCannotLoadARegisterFromData) {
  RunOptions options;
  options.functional = false;
  const std::string what = what_of(
      ".hbm n@0x0:int32[1]\n"
      "[sync] reg_load dst=r1, src=hbm[p0:1x1, addr=0x0, int32, [[1,1]]]\n",
      options);
  EXPECT_NE(what.find("timing-only run does not compute"), std::string::npos) << what;
}

TEST(ControlFlow, TimedLoopsReportEveryTripAndRepeatBitForBit) {
  RunOptions options;
  const AsmRunOutcome a = run_text(row_pipeline(true), options, true, rows_of_a());
  options.threads = 1;
  const AsmRunOutcome b = run_text(row_pipeline(true), options, true, rows_of_a());
  ASSERT_TRUE(a.timing && b.timing);
  ASSERT_EQ(a.result.executions.size(), b.result.executions.size());
  for (std::size_t i = 0; i < a.result.executions.size(); ++i) {
    EXPECT_EQ(a.result.executions[i].index, b.result.executions[i].index);
    EXPECT_EQ(a.result.executions[i].time.start, b.result.executions[i].time.start);
    EXPECT_EQ(a.result.executions[i].time.end, b.result.executions[i].time.end);
  }
  // The report's busy time of the vector queue is that of all its runs, not the last's.
  Duration vector_busy = 0;
  for (const Execution& e : a.result.executions)
    if (a.program.instructions[e.index].queue.engine == isa::Engine::kVector)
      vector_busy += e.time.occupied_until - e.time.start;
  const auto vector =
      std::find_if(a.timing->queues.begin(), a.timing->queues.end(),
                   [](const QueueTiming& q) { return q.queue.engine == isa::Engine::kVector; });
  ASSERT_NE(vector, a.timing->queues.end());
  EXPECT_EQ(vector->busy_ns, vector_busy);
  EXPECT_GT(vector_busy, 4 * (a.result.times[5].occupied_until - a.result.times[5].start) - 1e-9);
}

}  // namespace
}  // namespace trnsim::sim::testing
