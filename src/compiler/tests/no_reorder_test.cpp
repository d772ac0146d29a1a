// NKI's no_reorder: the scheduler keeps a block's program order, and only the block's.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "arch/tests/test_presets.h"
#include "compiler/compiler.h"
#include "kernel/kernel.h"

namespace trnsim::compiler {
namespace {

using kernel::Tensor;
using numerics::DType;

// The names of the scalar engine's instructions, in the order the compiled program issues
// them. "late" waits for a DMA; "early" does not, so the list scheduler would put it first.
std::vector<std::string> scalar_order(bool no_reorder) {
  const kernel::KernelFn fn = [no_reorder](std::span<const Tensor> in) {
    const Tensor x = nl::load(in[0]);  // a DMA: "late" waits for it
    const Tensor y = nl::zeros({128, 512}, DType::kFloat32);
    const Tensor a = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf, "a");
    const Tensor b = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf, "b");
    const nisa::Common scalar_named_late{.engine = isa::Engine::kScalar, .name = "late"};
    const nisa::Common scalar_named_early{.engine = isa::Engine::kScalar, .name = "early"};
    {
      std::optional<kernel::NoReorder> keep;
      if (no_reorder) keep.emplace();
      nisa::activation(a, isa::ActivationFunc::kExp, x, {.common = scalar_named_late});
      nisa::activation(b, isa::ActivationFunc::kExp, y, {.common = scalar_named_early});
    }
    Tensor out = nl::ndarray({128, 512}, DType::kFloat32, nl::shared_hbm, "out");
    nisa::tensor_tensor(a, a, b, isa::AluOp::kAdd);
    nl::store(out, a);
    return std::vector<Tensor>{out};
  };
  const std::vector<kernel::TensorSpec> inputs = {{"x", DType::kFloat32, {128, 512}}};
  const auto ir = kernel::trace(fn, inputs, arch::testing::trn3(), {.name = "order"});
  const CompiledKernel k = compile(ir, arch::testing::trn3());
  std::vector<std::string> names;
  for (const isa::Instruction& inst : k.programs[0].instructions)
    if (inst.queue.engine == isa::Engine::kScalar) names.push_back(inst.name);
  return names;
}

TEST(NoReorder, TheSchedulerKeepsABlocksProgramOrder) {
  // Without a block, the instruction that needs no DMA goes first ...
  EXPECT_EQ(scalar_order(false), (std::vector<std::string>{"early", "late"}));
  // ... in a block, program order.
  EXPECT_EQ(scalar_order(true), (std::vector<std::string>{"late", "early"}));
}

TEST(NoReorder, BlocksDoNotNestAndEndWithTheirScope) {
  const auto ir = kernel::trace(
      [](std::span<const Tensor>) {
        const Tensor t = nl::zeros({128, 8}, DType::kFloat32);  // before: no block
        {
          kernel::NoReorder outer;
          nisa::memset(t, 1.0f);
          {
            kernel::NoReorder inner;  // joins the outer block
            nisa::memset(t, 2.0f);
          }
          nisa::memset(t, 3.0f);  // still in the outer block
        }
        nisa::memset(t, 4.0f);  // after it
        {
          kernel::NoReorder second;
          nisa::memset(t, 5.0f);
        }
        return std::vector<Tensor>{};
      },
      {}, arch::testing::trn3(), {.name = "blocks"});
  std::vector<std::uint32_t> blocks;
  for (const kernel::IrInstruction& inst : ir[0].instructions) blocks.push_back(inst.order_block);
  EXPECT_EQ(blocks, (std::vector<std::uint32_t>{0, 1, 1, 1, 0, 2}));
}

}  // namespace
}  // namespace trnsim::compiler
