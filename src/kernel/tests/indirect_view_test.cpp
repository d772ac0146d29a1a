// Tensor::rows_at (NKI's .ap(vector_offset=)): how an indirect view lowers into the
// dma_indirect that dma_copy and dma_compute record, and its misuse as errors.
#include <gtest/gtest.h>

#include "arch/arch.h"
#include "arch/tests/test_presets.h"
#include "kernel/kernel.h"

namespace trnsim::kernel {
namespace {

using numerics::DType;

// Traces `body` over a [40, 16] fp32 table and returns the recorded instructions.
std::vector<IrInstruction> trace_with_table(
    const std::function<void(const Tensor& table, const Tensor& index)>& body) {
  auto ir = trace(
      [&](std::span<const Tensor> in) {
        Tensor index = nl::ndarray({32, 1}, DType::kUInt32, nl::sbuf, "index");
        nisa::iota(index, {.pattern = {{0, 1}}});
        body(in[0], index);
        return std::vector<Tensor>{};
      },
      std::vector<TensorSpec>{{"table", DType::kFloat32, {40, 16}}}, arch::testing::trn3(),
      {.name = "indirect"});
  return ir.at(0).instructions;
}

const isa::DmaIndirect& last_indirect(const std::vector<IrInstruction>& insts) {
  return std::get<isa::DmaIndirect>(insts.back().inst.op);
}

TEST(IndirectView, AGatherReachesEveryWholeRowOfTheTable) {
  const auto insts = trace_with_table([](const Tensor& table, const Tensor& index) {
    Tensor rows = nl::ndarray({32, 8}, DType::kFloat32, nl::sbuf, "rows");
    // Columns 4..11 of each picked row: 40 rows of 16 elements, each starting at 16 x index.
    nisa::dma_copy(rows, table(nl::ds(0, 1), nl::ds(4, 8)).rows_at(index, 16));
  });
  const isa::DmaIndirect& op = last_indirect(insts);
  EXPECT_EQ(op.mode, isa::IndirectMode::kGather);
  EXPECT_EQ(op.accumulate, isa::DmaAccumulate::kNone);
  EXPECT_EQ(op.src.memory, isa::Memory::kHbm);
  EXPECT_EQ(op.src.partitions, 40u);  // rows whose columns 4..11 lie inside the table
  EXPECT_EQ(op.src.partition_step, 16);
  EXPECT_EQ(op.src.free_elements(), 8u);
  EXPECT_EQ(op.dst.partitions, 32u);
  EXPECT_EQ(op.index.total_elements(), 32u);
}

TEST(IndirectView, ARowStepSmallerThanARowCountsOnlyRowsThatFit) {
  const auto insts = trace_with_table([](const Tensor& table, const Tensor& index) {
    Tensor rows = nl::ndarray({32, 16}, DType::kFloat32, nl::sbuf, "rows");
    // Overlapping rows of 16 starting every 8 elements: the last one starts at 640 - 16.
    nisa::dma_copy(table(nl::ds(0, 1), nl::all).rows_at(index, 8), rows);
  });
  const isa::DmaIndirect& op = last_indirect(insts);
  EXPECT_EQ(op.mode, isa::IndirectMode::kScatter);
  EXPECT_EQ(op.dst.partitions, (640u - 16u) / 8u + 1u);
  EXPECT_EQ(op.dst.partition_step, 8);
}

TEST(IndirectView, DmaComputeWithDstAmongItsSourcesIsAReadModifyWrite) {
  const auto insts = trace_with_table([](const Tensor& table, const Tensor& index) {
    Tensor data = nl::ndarray({32, 16}, DType::kFloat32, nl::sbuf, "data");
    nisa::memset(data, 1.0f);
    const Tensor rows = table(nl::ds(0, 1), nl::all).rows_at(index, 16);
    nisa::dma_compute(rows, {data, rows}, isa::AluOp::kAdd, {.oob = isa::OobMode::kSkip});
  });
  const isa::DmaIndirect& op = last_indirect(insts);
  EXPECT_EQ(op.mode, isa::IndirectMode::kScatter);
  EXPECT_EQ(op.accumulate, isa::DmaAccumulate::kAdd);
  EXPECT_EQ(op.oob, isa::OobMode::kSkip);
  EXPECT_EQ(op.src.memory, isa::Memory::kSbuf);
}

// Tracing `body` throws a KernelError whose message contains `why`.
void expect_error(const std::function<void(const Tensor&, const Tensor&)>& body,
                  const std::string& why) {
  std::string message = "no error";
  try {
    trace_with_table(body);
  } catch (const KernelError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find(why), std::string::npos) << message;
}

TEST(IndirectView, MisuseIsAnErrorThatSaysWhy) {
  expect_error(
      [](const Tensor& table, const Tensor& index) {
        Tensor rows = nl::ndarray({32, 16}, DType::kFloat32, nl::sbuf, "rows");
        nisa::tensor_copy(rows, table(nl::ds(0, 1), nl::all).rows_at(index, 16));
      },
      "is an operand of dma_copy and dma_compute only");
  expect_error(
      [](const Tensor& table, const Tensor& index) {
        (void)table(nl::ds(0, 1), nl::all).rows_at(index, 16)(nl::ds(0, 4), nl::all);
      },
      "indexing of an indirect view of 'table'");
  expect_error(
      [](const Tensor& table, const Tensor&) {
        Tensor f = nl::ndarray({32, 1}, DType::kFloat32, nl::sbuf, "f");
        (void)table(nl::ds(0, 1), nl::all).rows_at(f, 16);
      },
      "is float32; row indices are uint32 or int32");
  expect_error(
      [](const Tensor& table, const Tensor& index) {
        Tensor data = nl::ndarray({32, 16}, DType::kFloat32, nl::sbuf, "data");
        const Tensor rows = table(nl::ds(0, 1), nl::all).rows_at(index, 16);
        nisa::dma_compute(rows, {data, data}, isa::AluOp::kAdd);
      },
      "one of the two sources must be dst itself");
}

}  // namespace
}  // namespace trnsim::kernel
