// What keeps program order through the list scheduler although no data does: operations on
// one engine-held state (the random generators, the Vector accumulators), and the kernel's
// own depends_on edges (NKI's NkiInstruction.depends_on).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arch/tests/test_presets.h"
#include "compiler/compiler.h"
#include "kernel/kernel.h"

namespace trnsim::compiler {
namespace {

using kernel::Tensor;
using numerics::DType;

// The names of the vector engine's instructions "late" and "early" in issue order. "late"
// writes a tile that waits for a DMA; "early" writes a fresh tile, so the list scheduler
// would issue it first unless something orders the two.
enum class Ordering { kNone, kRandom, kDependsOn };

std::vector<std::string> vector_order(Ordering ordering) {
  const kernel::KernelFn fn = [ordering](std::span<const Tensor> in) {
    const Tensor x = nl::load(in[0]);  // a DMA
    const Tensor a = nl::ndarray({128, 512}, DType::kUInt32, nl::sbuf, "a");
    const Tensor b = nl::ndarray({128, 512}, DType::kUInt32, nl::sbuf, "b");
    nisa::tensor_copy(a, x, {.engine = isa::Engine::kGpSimd});  // a waits for the DMA
    const nisa::Common late{.engine = isa::Engine::kVector, .name = "late"};
    const nisa::Common early{.engine = isa::Engine::kVector, .name = "early"};
    if (ordering == Ordering::kRandom) {
      nisa::rng(a, late);
      nisa::rng(b, early);
    } else {
      const std::size_t start = nl::trace_position();
      nisa::memset(a, 1.0f, late);
      const nl::Recorded first = nl::recorded_since(start);
      const std::size_t next = nl::trace_position();
      nisa::memset(b, 2.0f, early);
      if (ordering == Ordering::kDependsOn) nl::depends_on(nl::recorded_since(next), first);
    }
    Tensor out = nl::ndarray({128, 512}, DType::kUInt32, nl::shared_hbm, "out");
    nisa::tensor_tensor(a, a, b, isa::AluOp::kBitwiseXor);
    nl::store(out, a);
    return std::vector<Tensor>{out};
  };
  const std::vector<kernel::TensorSpec> inputs = {{"x", DType::kUInt32, {128, 512}}};
  const auto ir = kernel::trace(fn, inputs, arch::testing::trn3(), {.name = "order"});
  const CompiledKernel k = compile(ir, arch::testing::trn3());
  std::vector<std::string> names;
  for (const isa::Instruction& inst : k.programs[0].instructions)
    if (inst.name == "late" || inst.name == "early") names.push_back(inst.name);
  return names;
}

TEST(EngineState, RandomDrawsKeepTheirProgramOrder) {
  // Independent instructions are reordered: the one that waits for nothing goes first ...
  EXPECT_EQ(vector_order(Ordering::kNone), (std::vector<std::string>{"early", "late"}));
  // ... but two draws from the generators are not: the numbers each tile gets do not
  // depend on the schedule.
  EXPECT_EQ(vector_order(Ordering::kRandom), (std::vector<std::string>{"late", "early"}));
}

TEST(EngineState, DependsOnOrdersWhatNoDataOrders) {
  EXPECT_EQ(vector_order(Ordering::kDependsOn), (std::vector<std::string>{"late", "early"}));
}

TEST(EngineState, DependsOnPointsBackInProgramOrder) {
  const auto backwards = [](std::span<const Tensor>) -> std::vector<Tensor> {
    const Tensor t = nl::zeros({4, 4}, DType::kFloat32);
    const std::size_t start = nl::trace_position();
    nisa::memset(t, 1.0f);
    const nl::Recorded first = nl::recorded_since(start);
    const std::size_t next = nl::trace_position();
    nisa::memset(t, 2.0f);
    nl::depends_on(first, nl::recorded_since(next));
    return {};
  };
  EXPECT_THROW((void)kernel::trace(backwards, {}, arch::testing::trn3(), {.name = "back"}),
               kernel::KernelError);
}

}  // namespace
}  // namespace trnsim::compiler
