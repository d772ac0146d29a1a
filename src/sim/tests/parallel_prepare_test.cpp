// The preparation pass before a run works on chunks of CostModel::kPrepareChunk
// instructions on several threads. Whatever the thread count, a run must give the same bits
// (times, report) and the same error as one serial pass, and the prepared costs must equal
// the cost formulas evaluated instruction by instruction.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/describe.h"
#include "sim/tests/test_util.h"
#include "sim/timing_model.h"
#include "util/huge_pages.h"

namespace trnsim::sim {
namespace {

using namespace trnsim::sim::testing;
using isa::Memory;

constexpr std::size_t kChunk = CostModel::kPrepareChunk;
constexpr std::uint64_t kMatmulTileBytes = 128 * 128 * 2;

// A software pipeline (load, matmul, evict, store) over `tiles` tiles whose DMA loads
// alternate between two queues and whose matmuls use each stationary twice in a row, the
// pairs straddling every chunk border, so that the program spans several chunks and
// stationaries and DMA shapes recur across chunk borders.
isa::Program pipeline(std::uint32_t tiles) {
  isa::Program program;
  for (std::uint32_t i = 0; i < tiles; ++i) {
    const std::uint64_t slot = i % 3;
    isa::DmaCopy load = dma_load(DType::kBFloat16, slot * kMatmulTileBytes, 128, 128, slot * 256);
    std::vector<isa::SemWait> load_waits;
    if (i >= 3) load_waits.push_back({3, i - 2});
    program.instructions.push_back(
        make(dma_q(static_cast<std::uint8_t>(i % 2)), load, load_waits, {{0, 1}}));

    isa::NcMatmul mm;
    mm.stationary = sbuf(DType::kBFloat16, 0, 128, ((i + 1) / 2 % 3) * 256, {{1, 128}});
    mm.moving = sbuf(DType::kBFloat16, 0, 128, 1024, {{1, 128 + 64 * (i % 2)}});
    mm.dst = psum(DType::kFloat32, 0, 128, (i % 2) * 2048, {{1, 128 + 64 * (i % 2)}});
    program.instructions.push_back(make(tensor_q(), mm, {{0, i + 1}}, {{1, 1}}));

    isa::TensorScalar evict;
    evict.data = mm.dst;
    evict.dst = sbuf(DType::kBFloat16, 0, 128, 2048 + slot * 512, {{1, 128 + 64 * (i % 2)}});
    program.instructions.push_back(make(vector_q(), evict, {{1, i + 1}}, {{2, 1}}));

    isa::DmaCopy store;
    store.src = evict.dst;
    store.dst = hbm(DType::kBFloat16, 4 * kMatmulTileBytes + slot * 2 * kMatmulTileBytes, 128,
                    128 + 64 * (i % 2), {{1, 128 + 64 * (i % 2)}});
    program.instructions.push_back(make(dma_q(2), store, {{2, i + 1}}, {{3, 1}}));
  }
  return program;
}

struct Outcome {
  RunResult result;
  TimingReport report;
};

Outcome time_with(const isa::Program& program, unsigned threads, bool validate = true,
                  const arch::ChipConfig& chip = trn3()) {
  Device device(chip);
  device.allocate_at(0, 10 * kMatmulTileBytes);
  TimingModel model(chip);
  RunOptions options = timing_only_options(&model);
  options.threads = threads;
  options.validate = validate;
  Outcome o;
  o.result = run(device, program, options);
  o.report = model.report(program, o.result);
  return o;
}

void expect_same_times(const RunResult& a, const RunResult& b) {
  ASSERT_EQ(a.times.size(), b.times.size());
  for (std::size_t i = 0; i < a.times.size(); ++i) {
    // Bit-exact: the same doubles, not merely close ones.
    ASSERT_EQ(a.times[i].start, b.times[i].start) << "instruction " << i;
    ASSERT_EQ(a.times[i].end, b.times[i].end) << "instruction " << i;
    ASSERT_EQ(a.times[i].occupied_until, b.times[i].occupied_until) << "instruction " << i;
  }
  EXPECT_EQ(a.end_time, b.end_time);
}

TEST(ParallelPreparation, EveryThreadCountGivesTheSameBits) {
  const isa::Program program = pipeline(70000);  // 280,000 instructions: 5 chunks
  ASSERT_GT(program.instructions.size(), 4 * kChunk);
  const Outcome serial = time_with(program, 1);
  for (unsigned threads : {2u, 3u, 8u}) {
    SCOPED_TRACE(threads);
    const Outcome parallel = time_with(program, threads);
    expect_same_times(serial.result, parallel.result);
    EXPECT_EQ(format_timing_report(serial.report), format_timing_report(parallel.report));
    EXPECT_EQ(timing_report_json(serial.report), timing_report_json(parallel.report));
  }
}

// Hands cost() to a TimingModel but hides the preparation hooks: the model then evaluates
// its formulas on each instruction as it starts.
class Unprepared final : public CostModel {
 public:
  explicit Unprepared(TimingModel& model) : model_(model) {}
  InstructionCost cost(const isa::Instruction& inst, std::size_t index, Duration start) override {
    return model_.cost(inst, index, start);
  }

 private:
  TimingModel& model_;
};

TEST(ParallelPreparation, PreparedCostsEqualTheFormulasPerInstruction) {
  // A slow stationary load (no fast weight load) makes a reused stationary visibly faster:
  // reuse across chunk borders needs program-wide stationary ids.
  arch::ChipConfig chip = trn3();
  chip.tensor.load_stationary_speedup.value = 0.25;
  const isa::Program program = pipeline(40000);  // 160,000 instructions: 3 chunks
  const Outcome prepared = time_with(program, 2, true, chip);

  Device device(chip);
  device.allocate_at(0, 10 * kMatmulTileBytes);
  TimingModel model(chip);
  Unprepared direct(model);
  const RunResult unprepared = run(device, program, timing_only_options(&direct));
  expect_same_times(prepared.result, unprepared);
  // Stationaries recur across chunks: reuse must have been found across the borders too.
  EXPECT_EQ(format_timing_report(prepared.report),
            format_timing_report(model.report(program, unprepared)));
}

// TimingModel::prepare hands an instruction whose operation equals a recent one's up to the
// operands' offsets that instruction's record. Every other field must count: variants that
// each differ from a base in one field, cycled at moving offsets, must be timed exactly as
// the formulas time them instruction by instruction; and each variant must cost differently
// from its base on its own, or the comparison would prove nothing.
TEST(ParallelPreparation, RecentShapesAreReusedOnlyUpToOffsets) {
  const DType bf16 = DType::kBFloat16, fp32 = DType::kFloat32;
  const auto load = [](DType dtype, std::uint32_t start, std::uint32_t rows, std::int64_t step,
                       std::uint32_t n, std::uint64_t shift) {
    isa::DmaCopy op;
    op.dst = sbuf(dtype, start, rows, shift, {{1, n}});
    op.src = hbm(dtype, shift, rows, step, {{1, n}});
    return op;
  };
  const auto scale = [](isa::AccessPattern data, std::uint32_t n, std::uint64_t shift) {
    isa::TensorScalar op;
    op.dst = sbuf(DType::kBFloat16, 0, 128, 4096 + shift, {{1, n}});
    op.data = data;
    return op;
  };
  const auto multiply = [](DType dtype, std::uint32_t n, std::uint64_t shift) {
    isa::NcMatmul op;
    op.stationary = sbuf(dtype, 0, 128, 8192 + shift, {{1, 128}});
    op.moving = sbuf(dtype, 0, 128, 12288 + shift, {{1, n}});
    op.dst = psum(DType::kFloat32, 0, 128, 0, {{1, n}});
    return op;
  };
  // {base, variant, whether the variant costs differently on its own}, built at `shift`.
  struct Pair {
    isa::Instruction base, variant;
    bool costs_differ;
  };
  const auto pairs = [&](std::uint64_t shift) {
    const isa::Instruction dma = make(dma_q(0), load(bf16, 0, 128, 128, 128, shift));
    const isa::Instruction vec =
        make(vector_q(), scale(psum(fp32, 0, 128, shift, {{1, 512}}), 512, shift));
    const isa::Instruction mm = make(tensor_q(), multiply(bf16, 512, shift));
    // One element per partition, where the access requests (not the stream) set the latency.
    const isa::Instruction tiny =
        make(vector_q(), scale(psum(fp32, 0, 128, shift, {{1, 1}}), 1, shift));
    isa::TensorScalar by_tile = std::get<isa::TensorScalar>(tiny.op);
    by_tile.operand0 = sbuf(fp32, 0, 128, 16384 + shift, {{1, 1}});
    return std::vector<Pair>{
        {dma, make(dma_q(0), load(bf16, 0, 128, 128, 64, shift)), true},   // elements
        {dma, make(dma_q(0), load(fp32, 0, 128, 128, 128, shift)), true},  // dtype
        {dma, make(dma_q(0), load(bf16, 0, 4, 128, 128, shift)), true},    // partitions
        {dma, make(dma_q(0), load(bf16, 0, 128, 512, 64, shift)), true},   // HBM row step
        {make(dma_q(0), load(bf16, 0, 64, 128, 128, shift)),               // first engine
         make(dma_q(0), load(bf16, 64, 64, 128, 128, shift)), false},
        {vec, make(vector_q(), scale(sbuf(bf16, 0, 128, shift, {{1, 512}}), 512, shift)), true},
        {vec, make(vector_q(), scale(psum(fp32, 0, 128, shift, {{1, 128}}), 128, shift)), true},
        {vec, make(scalar_q(), std::get<isa::TensorScalar>(vec.op)), true},  // engine
        {tiny, make(vector_q(), by_tile), true},                             // scalar operand
        {mm, make(tensor_q(), multiply(bf16, 128, shift)), true},
        {mm, make(tensor_q(), multiply(fp32, 512, shift)), true},
    };
  };
  isa::Program program;
  for (std::uint64_t round = 0; round < 3; ++round) {
    for (const Pair& p : pairs(round * 64)) {
      program.instructions.push_back(p.base);
      program.instructions.push_back(p.variant);
    }
  }
  const std::vector<Pair> at_zero = pairs(0);
  for (std::size_t k = 0; k < at_zero.size(); ++k) {
    const Pair& p = at_zero[k];
    if (!p.costs_differ) continue;
    TimingModel alone(trn3());
    const InstructionCost base = alone.cost(p.base, 0, 0.0);
    TimingModel other(trn3());
    const InstructionCost variant = other.cost(p.variant, 0, 0.0);
    EXPECT_TRUE(base.occupancy != variant.occupancy || base.latency != variant.latency)
        << "pair " << k << ": " << describe_instruction(p.variant, 0);
  }

  const Outcome prepared = time_with(program, 1);
  Device device(trn3());
  device.allocate_at(0, 10 * kMatmulTileBytes);
  TimingModel model(trn3());
  Unprepared direct(model);
  const RunResult unprepared = run(device, program, timing_only_options(&direct));
  expect_same_times(prepared.result, unprepared);
  EXPECT_EQ(format_timing_report(prepared.report),
            format_timing_report(model.report(program, unprepared)));
}

std::string error_of(const isa::Program& program, unsigned threads, bool validate) {
  try {
    time_with(program, threads, validate);
  } catch (const SimError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ParallelPreparation, ViolationsInSeveralChunksAreReportedTogetherInProgramOrder) {
  isa::Program program = pipeline(50000);
  // A vector op reading HBM (chunk 0) and one reading PSUM past its end (chunk 2).
  auto& early = std::get<isa::TensorScalar>(program.instructions[6].op);
  early.data.memory = Memory::kHbm;
  auto& late = std::get<isa::TensorScalar>(program.instructions[2 * kChunk + 2].op);
  late.data.offset = 1 << 20;
  const std::string serial = error_of(program, 1, true);
  EXPECT_NE(serial.find("2 ISA rules"), std::string::npos) << serial;
  EXPECT_NE(serial.find("instruction 6 "), std::string::npos) << serial;
  EXPECT_NE(serial.find(std::to_string(2 * kChunk + 2)), std::string::npos) << serial;
  EXPECT_LT(serial.find("instruction 6 "), serial.find(std::to_string(2 * kChunk + 2)));
  for (unsigned threads : {2u, 5u}) EXPECT_EQ(error_of(program, threads, true), serial);
}

TEST(ParallelPreparation, TheFirstPreparationErrorInProgramOrderIsReported) {
  // Without validation, a semaphore out of range stops the pass where it is met: with two
  // (chunks 3 and 1), every thread count names the one of chunk 1.
  isa::Program program = pipeline(70000);
  program.instructions[3 * kChunk + 5].signals = {{300, 1}};
  program.instructions[kChunk + 9].waits = {{400, 1}};
  const std::string serial = error_of(program, 1, false);
  EXPECT_NE(serial.find("semaphore 400 does not exist"), std::string::npos) << serial;
  EXPECT_NE(serial.find("instruction " + std::to_string(kChunk + 9)), std::string::npos) << serial;
  for (unsigned threads : {2u, 4u}) EXPECT_EQ(error_of(program, threads, false), serial);
}

TEST(ParallelPreparation, OneCostModelSharedByTwoLaunchesIsAnError) {
  Device device(trn3(), 2);
  const isa::Program program = pipeline(4);
  device.allocate_at(0, 10 * kMatmulTileBytes);
  TimingModel model(trn3());
  const std::vector<CoreProgram> launches = {{0, &program, &model}, {1, &program, &model}};
  RunOptions options;
  options.functional = false;
  const std::optional<SimError> e = sim_error_of([&] { run_cores(device, launches, options); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("share one cost model"), std::string::npos) << e->what();
}

// The run's large arrays are allocated through util::assign_huge: a hint about pages that
// must not change what they hold, on a fresh allocation or reusing one.
TEST(HugePages, AssignHugeHoldsTheValuesWhateverTheStorage) {
  std::vector<InstructionTime> times = {{1.0, 2.0, 3.0}};
  const std::size_t count = 3 * util::kHugePageBytes / sizeof(InstructionTime) + 7;
  util::assign_huge(times, count, InstructionTime{4.0, 5.0, 6.0});
  ASSERT_EQ(times.size(), count);
  EXPECT_EQ(times.front().start, 4.0);
  EXPECT_EQ(times.back().occupied_until, 6.0);
  const InstructionTime* storage = times.data();
  util::assign_huge(times, 10);  // fits: the storage is reused, the values reset
  EXPECT_EQ(times.data(), storage);
  ASSERT_EQ(times.size(), 10u);
  EXPECT_EQ(times[9].start, 0.0);
  std::vector<std::uint32_t> none = {1, 2};
  util::assign_huge(none, 0);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace trnsim::sim
