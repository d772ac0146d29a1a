// Gated MLP against its double reference: SiLU and GELU, ragged T/H/F, several token
// blocks and weight slabs, trn2.
#include "kernels/mlp.h"

#include <gtest/gtest.h>

#include "arch/arch.h"
#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

TEST(MlpKernel, Silu) {
  expect_kernel_correct("mlp", "trn3", {256, 256, 512}, DType::kBFloat16);
}
TEST(MlpKernel, Gelu) {
  expect_kernel_correct("mlp_gelu", "trn3", {256, 256, 512}, DType::kBFloat16);
}

TEST(MlpKernel, RaggedShapes) {
  // T = 600: a 512-token block and an 88-token one; H and F not multiples of 128.
  expect_kernel_correct("mlp", "trn3", {600, 200, 700}, DType::kBFloat16);
  expect_kernel_correct("mlp_gelu", "trn3", {1, 64, 96}, DType::kBFloat16);
}

TEST(MlpKernel, SeveralDownSlabs) {
  // H = 1100: three down-projection column slabs (512, 512, 76).
  expect_kernel_correct("mlp", "trn3", {128, 1100, 256}, DType::kBFloat16);
}

TEST(MlpKernel, Trn2) {
  expect_kernel_correct("mlp", "trn2", {256, 256, 384}, DType::kBFloat16);
}

TEST(MlpKernel, CheckCatchesTheWrongActivation) {
  expect_check_fails(run_kernel_with_fn("mlp", "trn3", {128, 128, 256}, DType::kBFloat16,
                                        [](std::span<const kernel::Tensor> in) {
                                          return mlp(in, {.act = isa::ActivationFunc::kGelu});
                                        }));
}

TEST(MlpKernel, RejectsBadShapes) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  EXPECT_THROW(find_kernel("mlp")->make({128, 128}, DType::kBFloat16, chip), std::invalid_argument);
  EXPECT_THROW(find_kernel("mlp")->make({128, 128, 128}, DType::kFloat32, chip),
               std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::kernels
