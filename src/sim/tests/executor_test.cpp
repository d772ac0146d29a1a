// The event loop: semaphore ordering, deadlock reports, validation, uninitialised reads,
// determinism, timing-only mode, cost hook, step limit and custom operators.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "sim/tests/test_util.h"

namespace trnsim::sim::testing {
namespace {

// HBM [rows, cols] fp32 -> SBUF (dma0, signals sem 1), tensor_copy SBUF -> SBUF on Vector
// waiting for it (signals sem 2), DMA back to HBM waiting for that.
struct RoundTrip {
  Device device{trn3()};
  std::uint32_t rows = 8, cols = 16;
  std::uint64_t in = 0, out = 0;
  isa::Program program;
  RoundTrip() {
    in = device.allocate(rows * cols * 4);
    out = device.allocate(rows * cols * 4);
    std::vector<float> host(rows * cols);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) / 3.0f;
    device.write(in, to_bytes(host));
    isa::DmaCopy load = dma_load(DType::kFloat32, in, rows, cols, 0);
    isa::TensorCopy copy;
    copy.src = sbuf(DType::kFloat32, 0, rows, 0, {{1, cols}});
    copy.dst = sbuf(DType::kBFloat16, 0, rows, 1024, {{1, cols}});
    isa::DmaCopy store;
    store.src = sbuf(DType::kBFloat16, 0, rows, 1024, {{1, cols}});
    store.dst = hbm(DType::kFloat32, out, rows, cols, {{1, cols}});
    // Listed consumer-first: program order across queues must not matter.
    program.instructions.push_back(make(dma_q(1), store, {{2, 1}}));
    program.instructions.push_back(make(vector_q(), copy, {{1, 1}}, {{2, 1}}));
    program.instructions.push_back(make(dma_q(0), load, {}, {{1, 1}}));
  }
  std::vector<float> expected() const {
    std::vector<float> e(rows * cols);
    for (std::size_t i = 0; i < e.size(); ++i)
      e[i] = bf16_to_f32(f32_to_bf16_rne(static_cast<float>(i) / 3.0f));
    return e;
  }
};

TEST(Executor, SemaphoresOrderQueuesAndTimesFollow) {
  RoundTrip rt;
  const RunResult result = run(rt.device, rt.program);
  EXPECT_EQ(from_bytes<float>(rt.device.read(rt.out, rt.rows * rt.cols * 4)), rt.expected());
  EXPECT_EQ(result.instructions_executed, 3u);
  ASSERT_EQ(result.queues.size(), 3u);
  EXPECT_EQ(result.queues[0].queue, dma_q(1));  // first appearance order
  EXPECT_EQ(result.times[2].start, 0);
  EXPECT_GE(result.times[1].start, result.times[2].end);
  EXPECT_GE(result.times[0].start, result.times[1].end);
  EXPECT_EQ(result.end_time, 3);
  EXPECT_EQ(result.semaphores[1], 1u);
  EXPECT_EQ(result.semaphores[2], 1u);
  EXPECT_TRUE(result.hazards.empty());
}

// A progress display sees the simulating phase and every instruction counted once.
TEST(Executor, ProgressCountsEveryCompletedInstruction) {
  RoundTrip rt;
  util::Progress progress;
  progress.done = 99;  // a previous run's count is reset
  RunOptions options;
  options.progress = &progress;
  const RunResult result = run(rt.device, rt.program, options);
  EXPECT_EQ(progress.phase.load(), util::Progress::Phase::kSimulating);
  EXPECT_EQ(progress.total.load(), rt.program.instructions.size());
  EXPECT_EQ(progress.done.load(), result.instructions_executed);
}

// A counter that wrapped (2^32 - 1 + 2 = 1) would later show as a misleading deadlock.
TEST(Executor, SemaphoreOverflowIsAnErrorAtTheSignal) {
  Device device(trn3());
  isa::Program program;
  program.instructions.push_back(make(sync_q(), isa::SemaphoreOp{}, {}, {{1, 0xFFFFFFFFu}}));
  program.instructions.push_back(make(sync_q(), isa::SemaphoreOp{}, {}, {{1, 2}}));
  const std::optional<SimError> e = sim_error_of([&] { run(device, program); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->index(), 1u);
  EXPECT_NE(e->why().find("semaphore 1 overflows: 4294967295 + 2"), std::string::npos) << e->what();
}

// Until the simulator runs control flow, it refuses it rather than run a register-relative
// operand as if it were static (what validates runs; what does not is an error).
TEST(Executor, WaitNeedsTheFullValue) {
  // Two producers each add 1 to sem 3; the consumer waits for 2, so it starts only after both.
  Device device(trn3());
  isa::Memset a, b;
  a.dst = sbuf(DType::kFloat32, 0, 1, 0, {{1, 4}});
  a.value = 1;
  b.dst = sbuf(DType::kFloat32, 0, 1, 16, {{1, 4}});
  b.value = 2;
  isa::TensorTensor sum;
  sum.data1 = a.dst;
  sum.data2 = b.dst;
  sum.dst = sbuf(DType::kFloat32, 0, 1, 32, {{1, 4}});
  isa::Program program;
  program.instructions.push_back(make(vector_q(), a, {}, {{3, 1}}));
  program.instructions.push_back(make(gpsimd_q(), isa::SemaphoreOp{}, {}, {}));
  program.instructions.push_back(make(gpsimd_q(), b, {}, {{3, 1}}));
  program.instructions.push_back(make(sync_q(), isa::SemaphoreOp{}, {{3, 2}}, {{4, 1}}));
  program.instructions.push_back(make(vector_q(), sum, {{4, 1}}));
  const RunResult result = run(device, program);
  EXPECT_GE(result.times[3].start, result.times[2].end);
  EXPECT_TRUE(result.hazards.empty());
  const auto out = from_bytes<float>(read_rows(device.core(0), isa::Memory::kSbuf, 0, 1, 32, 16));
  EXPECT_EQ(out, (std::vector<float>{3, 3, 3, 3}));
}

TEST(Executor, DeadlockListsEveryBlockedInstruction) {
  Device device(trn3());
  isa::Program program;
  program.instructions.push_back(make(vector_q(), isa::SemaphoreOp{}, {{5, 1}}, {{6, 1}}));
  program.instructions.push_back(make(scalar_q(), isa::SemaphoreOp{}, {{6, 1}}, {{5, 1}}));
  program.instructions.push_back(make(sync_q(), isa::SemaphoreOp{}, {}, {{7, 1}}));
  program.instructions.push_back(make(gpsimd_q(), isa::SemaphoreOp{}, {{7, 2}}));
  const std::optional<SimError> e = sim_error_of([&] { run(device, program); }, "a deadlock");
  ASSERT_TRUE(e);
  const std::string what = e->what();
  EXPECT_NE(what.find("deadlock"), std::string::npos) << what;
  EXPECT_NE(what.find("instruction 0 (sem) on queue vector waits for semaphore 5 >= 1 (it is 0)"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("instruction 1 (sem) on queue scalar waits for semaphore 6 >= 1 (it is 0)"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("instruction 3 (sem) on queue gpsimd waits for semaphore 7 >= 2 (it is 1)"),
            std::string::npos)
      << what;
  EXPECT_EQ(what.find("instruction 2"), std::string::npos) << what;  // it finished
}

TEST(Executor, InvalidInstructionsAreRejectedBeforeRunning) {
  Device device(trn3());
  isa::NcMatmul mm;  // dst in SBUF: matmul outputs must be PSUM
  mm.stationary = sbuf(DType::kBFloat16, 0, 16, 0, {{1, 16}});
  mm.moving = sbuf(DType::kBFloat16, 0, 16, 64, {{1, 16}});
  mm.dst = sbuf(DType::kFloat32, 0, 16, 128, {{1, 16}});
  isa::Program program;
  program.instructions.push_back(make(tensor_q(), isa::SemaphoreOp{}));
  program.instructions.push_back(make(tensor_q(), mm));
  const std::optional<SimError> e =
      sim_error_of([&] { run(device, program); }, "a validation error");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->index(), 1u);
  EXPECT_EQ(e->op(), "nc_matmul");
  EXPECT_NE(e->why().find("ISA rule"), std::string::npos) << e->what();
}

TEST(Executor, UninitialisedReadNamesOperandAndAddress) {
  Device device(trn3());
  Core& core = device.core(0);
  // Partition 2 byte 8.. was never written; the rest was.
  for (std::uint32_t p = 0; p < 4; ++p)
    core.write_onchip(isa::Memory::kSbuf, p, 0, std::vector<std::uint8_t>(p == 2 ? 8 : 16, 0));
  isa::TensorCopy copy;
  copy.src = sbuf(DType::kFloat32, 0, 4, 0, {{1, 4}});
  copy.dst = sbuf(DType::kFloat32, 0, 4, 64, {{1, 4}});
  isa::Program program;
  program.instructions.push_back(make(vector_q(), copy));
  const std::optional<SimError> e =
      sim_error_of([&] { run(device, program); }, "an uninitialised read");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->index(), 0u);
  EXPECT_NE(e->why().find("operand 'src' reads uninitialised memory: sbuf partition 2 byte 8"),
            std::string::npos)
      << e->what();
  // NaN-fill policy: the two missing fp32 elements read as NaN, the rest as written.
  RunOptions options;
  options.uninitialized = UninitializedPolicy::kNanFill;
  run(device, program, options);
  const auto out = from_bytes<float>(read_rows(core, isa::Memory::kSbuf, 0, 4, 64, 16));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const bool missing = i / 4 == 2 && i % 4 >= 2;
    EXPECT_EQ(std::isnan(out[i]), missing) << i;
  }
}

TEST(Executor, NanFillGivesFourForIntegers) {
  Device device(trn3());
  isa::TensorCopy copy;
  copy.src = sbuf(DType::kInt32, 0, 1, 0, {{1, 2}});
  copy.dst = sbuf(DType::kFloat32, 0, 1, 64, {{1, 2}});
  isa::Program program;
  program.instructions.push_back(make(vector_q(), copy));
  RunOptions options;
  options.uninitialized = UninitializedPolicy::kNanFill;
  run(device, program, options);
  EXPECT_EQ(from_bytes<float>(read_rows(device.core(0), isa::Memory::kSbuf, 0, 1, 64, 8)),
            (std::vector<float>{4, 4}));
}

TEST(Executor, SameProgramTwiceGivesSameBitsAndStochasticRoundingFollowsTheSeed) {
  auto run_once = [](std::uint32_t seed) {
    Device device(trn3());
    const std::uint32_t n = 256;
    std::vector<float> host(n);
    for (std::uint32_t i = 0; i < n; ++i) host[i] = 1.0f + static_cast<float>(i) * 0x1.0p-12f;
    const auto in = device.allocate(n * 4), out = device.allocate(n * 2);
    device.write(in, to_bytes(host));
    isa::Instruction load = make(dma_q(0),
                                 isa::DmaCopy{.dst = sbuf(DType::kBFloat16, 0, 1, 0, {{1, n}}),
                                              .src = hbm(DType::kFloat32, in, 1, n, {{1, n}})},
                                 {}, {{1, 1}});
    load.rounding = isa::RoundingMode::kStochastic;
    isa::Instruction store = make(dma_q(1),
                                  isa::DmaCopy{.dst = hbm(DType::kBFloat16, out, 1, n, {{1, n}}),
                                               .src = sbuf(DType::kBFloat16, 0, 1, 0, {{1, n}})},
                                  {{1, 1}});
    isa::Program program;
    program.seed = seed;
    program.instructions = {load, store};
    run(device, program);
    return device.read(out, n * 2);
  };
  EXPECT_EQ(run_once(1), run_once(1));
  EXPECT_NE(run_once(1), run_once(2));
}

TEST(Executor, TimingOnlyModeComputesNothingButKeepsEvents) {
  RoundTrip functional_rt, timing_rt;
  RunOptions timing;
  timing.functional = false;
  const RunResult f = run(functional_rt.device, functional_rt.program);
  const RunResult t = run(timing_rt.device, timing_rt.program, timing);
  EXPECT_EQ(t.instructions_executed, f.instructions_executed);
  ASSERT_EQ(t.times.size(), f.times.size());
  for (std::size_t i = 0; i < t.times.size(); ++i) {
    EXPECT_EQ(t.times[i].start, f.times[i].start);
    EXPECT_EQ(t.times[i].end, f.times[i].end);
  }
  EXPECT_FALSE(timing_rt.device.is_initialized(timing_rt.out, 4));
  EXPECT_TRUE(functional_rt.device.is_initialized(functional_rt.out, 4));
}

class DmaIsSlow final : public CostModel {
 public:
  InstructionCost cost(const isa::Instruction& inst, std::size_t, Duration) override {
    if (inst.queue.engine == isa::Engine::kDma) return {10, 25};
    return {2, 2};
  }
};

TEST(Executor, CostModelDrivesTimes) {
  RoundTrip rt;
  DmaIsSlow costs;
  RunOptions options;
  options.cost_model = &costs;
  const RunResult result = run(rt.device, rt.program, options);
  EXPECT_EQ(result.times[2].start, 0);
  EXPECT_EQ(result.times[2].end, 25);
  EXPECT_EQ(result.times[1].start, 25);
  EXPECT_EQ(result.times[0].start, 27);
  EXPECT_EQ(result.end_time, 52);
}

TEST(Executor, QueueOccupancyLetsTheNextInstructionStartEarly) {
  Device device(trn3());
  class Pipelined final : public CostModel {
   public:
    InstructionCost cost(const isa::Instruction&, std::size_t, Duration) override { return {1, 5}; }
  } costs;
  isa::Program program;
  for (int i = 0; i < 3; ++i)
    program.instructions.push_back(make(sync_q(), isa::SemaphoreOp{}, {}, {{1, 1}}));
  program.instructions.push_back(make(gpsimd_q(), isa::SemaphoreOp{}, {{1, 3}}));
  RunOptions options;
  options.cost_model = &costs;
  const RunResult result = run(device, program, options);
  EXPECT_EQ(result.times[1].start, 1);
  EXPECT_EQ(result.times[2].start, 2);
  EXPECT_EQ(result.times[3].start, 7);  // after the third signal at 2 + 5
}

// A chain of queues, each instruction waiting for the one of the same rank on the queue
// before, with costs that make completions overtake one another: enough pending events
// that the event loop's queue of events turns from a scanned array into a heap and back.
// Times must be those computed queue by queue: an instruction starts when its queue is
// free and the k-th signal of the queue before (in completion order) has come.
TEST(Executor, ManyPendingEventsKeepTheirOrder) {
  Device device(trn3());
  class Varied final : public CostModel {
   public:
    InstructionCost cost(const isa::Instruction&, std::size_t index, Duration) override {
      const auto occupancy = static_cast<Duration>(1 + index * 7 % 5);
      return {occupancy, occupancy + static_cast<Duration>(index * 13 % 9)};
    }
  } costs;
  std::vector<isa::QueueId> queues = {sync_q(), gpsimd_q(), vector_q(), scalar_q(), tensor_q()};
  for (std::uint8_t d = 0; d < 16; ++d) queues.push_back(dma_q(d));
  constexpr std::uint32_t kPerQueue = 30;
  isa::Program program;
  // Interleaved in program order: the queue of instruction i is i % queues.
  for (std::uint32_t k = 0; k < kPerQueue; ++k)
    for (std::size_t q = 0; q < queues.size(); ++q) {
      std::vector<isa::SemWait> waits;
      if (q > 0) waits.push_back({static_cast<std::uint16_t>(q - 1), k + 1});
      program.instructions.push_back(
          make(queues[q], isa::SemaphoreOp{}, waits, {{static_cast<std::uint16_t>(q), 1}}));
    }
  RunOptions options;
  options.cost_model = &costs;
  const RunResult result = run(device, program, options);

  std::vector<Duration> previous_ends;  // of the queue before, in completion order
  std::size_t most_pending = 0;
  for (std::size_t q = 0; q < queues.size(); ++q) {
    std::vector<Duration> ends;
    Duration free_at = 0;
    for (std::uint32_t k = 0; k < kPerQueue; ++k) {
      const std::size_t i = k * queues.size() + q;
      const InstructionCost c = costs.cost(program.instructions[i], i, 0);
      const Duration start = std::max(free_at, q > 0 ? previous_ends[k] : 0.0);
      SCOPED_TRACE(::testing::Message() << "queue " << q << " instruction " << i);
      EXPECT_EQ(result.times[i].start, start);
      EXPECT_EQ(result.times[i].end, start + c.latency);
      free_at = start + c.occupancy;
      ends.push_back(start + c.latency);
    }
    std::sort(ends.begin(), ends.end());
    previous_ends = ends;
  }
  // Events pending right after each start: the completions and queue releases still to come.
  for (const InstructionTime& at : result.times) {
    std::size_t pending = 0;
    for (const InstructionTime& t : result.times)
      if (t.start <= at.start) pending += (t.end > at.start) + (t.occupied_until > at.start);
    most_pending = std::max(most_pending, pending);
  }
  EXPECT_GT(most_pending, 16u);
}

TEST(Executor, ACostModelGivingNegativeOrNonFiniteCostsIsAnError) {
  class Broken final : public CostModel {
   public:
    explicit Broken(InstructionCost bad) : bad_(bad) {}
    InstructionCost cost(const isa::Instruction&, std::size_t index, Duration) override {
      return index == 1 ? bad_ : InstructionCost{};
    }

   private:
    InstructionCost bad_;
  };
  const Duration nan = std::numeric_limits<Duration>::quiet_NaN();
  const Duration inf = std::numeric_limits<Duration>::infinity();
  for (const InstructionCost bad : {InstructionCost{-1, 1}, InstructionCost{1, -0.5},
                                    InstructionCost{nan, 1}, InstructionCost{1, inf}}) {
    RoundTrip rt;
    Broken costs(bad);
    RunOptions options;
    options.cost_model = &costs;
    SCOPED_TRACE(::testing::Message() << bad.occupancy << " " << bad.latency);
    try {
      run(rt.device, rt.program, options);
      ADD_FAILURE() << "no error";
    } catch (const SimError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("instruction 1 (tensor_copy)"), std::string::npos) << what;
      EXPECT_NE(what.find("costs must be finite and non-negative"), std::string::npos) << what;
    }
  }
}

TEST(Executor, StepLimitStopsRunawayPrograms) {
  RoundTrip rt;
  RunOptions options;
  options.max_steps = 2;
  EXPECT_THROW(run(rt.device, rt.program, options), SimError);
}

TEST(Executor, CustomOperatorRunsOnSbufTiles) {
  register_custom_op("scaled_sum", [](std::span<const Tile> in, std::span<Tile> out,
                                      std::span<const float> params) {
    for (std::size_t i = 0; i < out[0].values.size(); ++i)
      out[0].values[i] = params[0] * (in[0].values[i] + in[1].values[i]);
  });
  Device device(trn3());
  Core& core = device.core(0);
  fill_onchip(core, isa::Memory::kSbuf, 0, 2, 0, to_bytes(std::vector<float>{1, 2, 3, 4}));
  fill_onchip(core, isa::Memory::kSbuf, 0, 2, 64, to_bytes(std::vector<float>{10, 20, 30, 40}));
  isa::CustomOp op;
  op.op = "scaled_sum";
  op.inputs = {sbuf(DType::kFloat32, 0, 2, 0, {{1, 2}}), sbuf(DType::kFloat32, 0, 2, 64, {{1, 2}})};
  op.outputs = {sbuf(DType::kFloat32, 0, 2, 128, {{1, 2}})};
  op.params = {0.5f};
  isa::Program program;
  program.instructions.push_back(make(gpsimd_q(), op));
  run(device, program);
  EXPECT_EQ(from_bytes<float>(read_rows(core, isa::Memory::kSbuf, 0, 2, 128, 8)),
            (std::vector<float>{5.5f, 11, 16.5f, 22}));
  unregister_custom_op("scaled_sum");
  EXPECT_THROW(run(device, program), SimError);
}

TEST(Executor, CoreBarrierNeedsAMultiCoreLaunch) {
  // A barrier always spans >= 2 cores (the validator's rule); this executor drives one core,
  // so it must say so rather than pretend the barrier passed.
  Device device(trn3());
  isa::Program program;
  program.instructions.push_back(make(sync_q(), isa::CoreBarrier{.barrier_id = 0, .num_cores = 2}));
  const std::optional<SimError> e = sim_error_of([&] { run(device, program); });
  ASSERT_TRUE(e);
  EXPECT_NE(e->why().find("multi-core launch"), std::string::npos) << e->what();
}

}  // namespace
}  // namespace trnsim::sim::testing
