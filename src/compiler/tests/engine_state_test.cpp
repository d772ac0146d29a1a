// Operations on one engine-held state (the random generators, the Vector accumulators) keep
// their program order through the list scheduler.
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
std::vector<std::string> vector_order(bool random) {
  const kernel::KernelFn fn = [random](std::span<const Tensor> in) {
    const Tensor x = nl::load(in[0]);  // a DMA
    const Tensor a = nl::ndarray({128, 512}, DType::kUInt32, nl::sbuf, "a");
    const Tensor b = nl::ndarray({128, 512}, DType::kUInt32, nl::sbuf, "b");
    nisa::tensor_copy(a, x, {.engine = isa::Engine::kGpSimd});  // a waits for the DMA
    const nisa::Common late{.engine = isa::Engine::kVector, .name = "late"};
    const nisa::Common early{.engine = isa::Engine::kVector, .name = "early"};
    if (random) {
      nisa::rng(a, late);
      nisa::rng(b, early);
    } else {
      nisa::memset(a, 1.0f, late);
      nisa::memset(b, 2.0f, early);
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
  EXPECT_EQ(vector_order(false), (std::vector<std::string>{"early", "late"}));
  // ... but two draws from the generators are not: the numbers each tile gets do not
  // depend on the schedule.
  EXPECT_EQ(vector_order(true), (std::vector<std::string>{"late", "early"}));
}

}  // namespace
}  // namespace trnsim::compiler
