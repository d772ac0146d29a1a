// The race detector: every hazard kind across queues, silence when a semaphore path orders
// the accesses, the "first signals reaching the value" rule, and scale.
#include <gtest/gtest.h>

#include "sim/tests/test_util.h"

namespace trnsim::sim::testing {
namespace {

isa::AccessPattern tile_at(std::uint64_t offset, std::uint32_t partitions = 4) {
  return sbuf(DType::kFloat32, 0, partitions, offset, {{1, 8}});
}

isa::Operation write_tile(std::uint64_t offset, float value = 1.0f) {
  return isa::Memset{.dst = tile_at(offset), .value = value};
}

isa::Operation copy_tile(std::uint64_t to, std::uint64_t from) {
  return isa::TensorCopy{.dst = tile_at(to), .src = tile_at(from)};
}

RunResult run_program(const isa::Program& program, bool check = true) {
  Device device(trn3());
  RunOptions options;
  options.check_hazards = check;
  options.uninitialized = UninitializedPolicy::kIgnore;
  return run(device, program, options);
}

TEST(Hazards, ReadAfterWriteAcrossQueues) {
  isa::Program program;
  program.instructions.push_back(make(vector_q(), write_tile(0)));
  program.instructions.push_back(make(scalar_q(), copy_tile(256, 0)));
  const RunResult result = run_program(program);
  ASSERT_EQ(result.hazards.size(), 1u);
  const Hazard& h = result.hazards[0];
  EXPECT_EQ(h.kind, HazardKind::kReadAfterWrite);
  EXPECT_EQ(h.first, 0u);
  EXPECT_EQ(h.second, 1u);
  EXPECT_EQ(h.first_operand, "dst");
  EXPECT_EQ(h.second_operand, "src");
  EXPECT_EQ(h.memory, isa::Memory::kSbuf);
  EXPECT_EQ(h.partition_lo, 0u);
  EXPECT_EQ(h.partition_hi, 4u);
  EXPECT_EQ(h.byte_lo, 0);
  EXPECT_EQ(h.byte_hi, 32);
  EXPECT_NE(h.message.find(
                "RAW hazard: instruction 0 (memset) 'dst' and instruction 1 (tensor_copy) 'src'"),
            std::string::npos)
      << h.message;
}

TEST(Hazards, WriteAfterReadAndWriteAfterWrite) {
  isa::Program war;
  war.instructions.push_back(make(vector_q(), write_tile(0), {}, {{1, 1}}));
  war.instructions.push_back(make(scalar_q(), copy_tile(256, 0), {{1, 1}}));
  war.instructions.push_back(make(gpsimd_q(), write_tile(0, 2.0f), {{1, 1}}));  // races the read
  RunResult result = run_program(war);
  ASSERT_EQ(result.hazards.size(), 1u);
  EXPECT_EQ(result.hazards[0].kind, HazardKind::kWriteAfterRead);
  EXPECT_EQ(result.hazards[0].first, 1u);
  EXPECT_EQ(result.hazards[0].second, 2u);

  isa::Program waw;
  waw.instructions.push_back(make(vector_q(), write_tile(0)));
  waw.instructions.push_back(make(gpsimd_q(), write_tile(16, 2.0f)));  // overlaps bytes 16..32
  result = run_program(waw);
  ASSERT_EQ(result.hazards.size(), 1u);
  EXPECT_EQ(result.hazards[0].kind, HazardKind::kWriteAfterWrite);
  EXPECT_EQ(result.hazards[0].byte_lo, 16);
  EXPECT_EQ(result.hazards[0].byte_hi, 32);
}

TEST(Hazards, OrderedBySemaphorePathOrSameQueueOrDisjointIsSilent) {
  isa::Program program;
  // vector writes A, signals; scalar (ordered) copies A->B and signals; gpsimd waits on the
  // scalar only, yet is transitively ordered after the vector write, and overwrites A.
  program.instructions.push_back(make(vector_q(), write_tile(0), {}, {{1, 1}}));
  program.instructions.push_back(make(scalar_q(), copy_tile(256, 0), {{1, 1}}, {{2, 1}}));
  program.instructions.push_back(make(gpsimd_q(), write_tile(0, 3.0f), {{2, 1}}));
  program.instructions.push_back(make(gpsimd_q(), copy_tile(512, 0)));  // same queue
  program.instructions.push_back(make(vector_q(), write_tile(1024)));   // disjoint bytes
  program.instructions.push_back(
      make(vector_q(), isa::Memset{.dst = sbuf(DType::kFloat32, 64, 4, 0, {{1, 8}}),
                                   .value = 0}));  // disjoint partitions
  EXPECT_TRUE(run_program(program).hazards.empty());
}

TEST(Hazards, WaiterIsOrderedOnlyAfterTheSignalsThatReachedItsValue) {
  // Two queues signal sem 1 once each. The reader waits for sem 1 >= 1, which the vector
  // signal reaches first (it runs first), so it is ordered after the vector write but not
  // after the gpsimd write, even though gpsimd has signalled by the time the reads run.
  isa::Program program;
  program.instructions.push_back(make(vector_q(), write_tile(0), {}, {{1, 1}}));
  program.instructions.push_back(make(gpsimd_q(), isa::SemaphoreOp{}));
  program.instructions.push_back(make(gpsimd_q(), write_tile(256), {}, {{1, 1}}));
  program.instructions.push_back(
      make(sync_q(), isa::SemaphoreOp{}, {{1, 2}}));  // keeps time moving
  program.instructions.push_back(make(scalar_q(), isa::SemaphoreOp{}, {{1, 2}}));
  program.instructions.push_back(
      make(scalar_q(), isa::TensorCopy{.dst = tile_at(512), .src = tile_at(0)}));
  program.instructions.push_back(
      make(scalar_q(), isa::TensorCopy{.dst = tile_at(768), .src = tile_at(256)}));
  EXPECT_TRUE(run_program(program).hazards.empty());  // waits for 2: both writers ordered

  program.instructions[4].waits = {{1, 1}};
  const RunResult result = run_program(program);
  ASSERT_EQ(result.hazards.size(), 1u);
  EXPECT_EQ(result.hazards[0].kind, HazardKind::kReadAfterWrite);
  EXPECT_EQ(result.hazards[0].first, 2u);  // the gpsimd write, not the vector one
  EXPECT_EQ(result.hazards[0].second, 6u);
}

TEST(Hazards, HbmFootprintsAreExactForStridedRows) {
  // Two DMA queues write interleaved rows of the same HBM buffer: row r of the first at
  // r*64 bytes, of the second at `shift` + r*64. Their bounding ranges overlap; with shift 32
  // no byte is common (no race), with shift 28 each row of the second meets a row of the first.
  for (const std::uint64_t shift : {32u, 28u}) {
    Device device(trn3());
    const auto buffer = device.allocate(4096);
    device.write(buffer, std::vector<std::uint8_t>(4096, 0));
    isa::Program program;
    isa::DmaCopy a{.dst = hbm(DType::kFloat32, buffer, 4, 16, {{1, 8}}), .src = tile_at(0)};
    isa::DmaCopy b{.dst = hbm(DType::kFloat32, buffer + shift, 4, 16, {{1, 8}}), .src = tile_at(0)};
    program.instructions.push_back(make(dma_q(0), a));
    program.instructions.push_back(make(dma_q(1), b));
    RunOptions options;
    options.uninitialized = UninitializedPolicy::kIgnore;
    const RunResult result = run(device, program, options);
    if (shift == 32) {
      EXPECT_TRUE(result.hazards.empty()) << result.hazards.front().message;
      continue;
    }
    ASSERT_EQ(result.hazards.size(), 1u);
    EXPECT_EQ(result.hazards[0].memory, isa::Memory::kHbm);
    EXPECT_EQ(result.hazards[0].kind, HazardKind::kWriteAfterWrite);
  }
}

// The column blocks [:, 0:128] and [:, 128:256] of a row-major [64, 256] BF16 tensor stored
// from two queues do not race; a third store of [:, 120:136] races with both.
TEST(Hazards, DisjointColumnBlocksDoNotRace) {
  Device device(trn3());
  const auto buffer = device.allocate(64 * 256 * 2);
  isa::Program program;
  auto store = [&](std::uint32_t c0, std::uint32_t cols, int queue) {
    isa::DmaCopy d{.dst = hbm(DType::kBFloat16, buffer + c0 * 2, 64, 256, {{1, cols}}),
                   .src = sbuf(DType::kBFloat16, 0, 64, 0, {{1, cols}})};
    program.instructions.push_back(make(dma_q(static_cast<std::uint8_t>(queue)), d));
  };
  store(0, 128, 0);
  store(128, 128, 1);
  RunOptions options;
  options.uninitialized = UninitializedPolicy::kIgnore;
  EXPECT_TRUE(run(device, program, options).hazards.empty());
  store(120, 16, 2);
  const RunResult result = run(device, program, options);
  ASSERT_EQ(result.hazards.size(), 2u);
  EXPECT_EQ(result.hazards[0].second, 2u);
  EXPECT_EQ(result.hazards[1].second, 2u);
}

TEST(Hazards, SwitchOffReportsNothing) {
  isa::Program program;
  program.instructions.push_back(make(vector_q(), write_tile(0)));
  program.instructions.push_back(make(scalar_q(), copy_tile(256, 0)));
  EXPECT_TRUE(run_program(program, /*check=*/false).hazards.empty());
}

TEST(Hazards, HundredThousandOrderedInstructionsReportNothing) {
  // A ping-pong pipeline over 4 queues with 8 rotating buffers: every access is ordered
  // through a chain of semaphores, so nothing may be reported however long the history.
  // (How fast the detector prunes its history is a benchmark matter, not a test's.)
  isa::Program program;
  const int kSteps = 25000;
  const isa::QueueId queues[] = {dma_q(0), vector_q(), scalar_q(), gpsimd_q()};
  for (int i = 0; i < kSteps; ++i) {
    const std::uint64_t buffer = static_cast<std::uint64_t>(i % 8) * 256;
    const auto step = static_cast<std::uint32_t>(i + 1);
    program.instructions.push_back(make(queues[1], write_tile(buffer), {{3, step - 1}}, {{0, 1}}));
    program.instructions.push_back(
        make(queues[2], copy_tile(4096 + buffer, buffer), {{0, step}}, {{1, 1}}));
    program.instructions.push_back(
        make(queues[3], copy_tile(8192 + buffer, 4096 + buffer), {{1, step}}, {{2, 1}}));
    program.instructions.push_back(make(queues[0], isa::SemaphoreOp{}, {{2, step}}, {{3, 1}}));
  }
  Device device(trn3());
  RunOptions options;
  options.functional = false;  // measure the detector and the loop, not the semantics
  const RunResult result = run(device, program, options);
  EXPECT_EQ(result.instructions_executed, 4u * kSteps);
  EXPECT_TRUE(result.hazards.empty());
}

}  // namespace
}  // namespace trnsim::sim::testing
