// Row softmax against its double reference on fp32 and bf16, ragged row counts and the
// multi-row-per-partition tiling.
#include "kernels/softmax.h"

#include <gtest/gtest.h>

#include "arch/arch.h"
#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

TEST(SoftmaxKernel, Fp32) {
  expect_kernel_correct("softmax", "trn3", {256, 512}, DType::kFloat32);
}
TEST(SoftmaxKernel, Bf16) {
  expect_kernel_correct("softmax", "trn3", {256, 512}, DType::kBFloat16);
}

TEST(SoftmaxKernel, RaggedRows) {
  expect_kernel_correct("softmax", "trn3", {1, 100}, DType::kFloat32);
  expect_kernel_correct("softmax", "trn3", {200, 300}, DType::kBFloat16);
  // Several rows per partition (g = 8 for C = 512) and a ragged tail of 3 single-row tiles.
  expect_kernel_correct("softmax", "trn3", {128 * 8 + 300, 512}, DType::kBFloat16);
}

TEST(SoftmaxKernel, WideRows) {
  expect_kernel_correct("softmax", "trn3", {128, 8192}, DType::kFloat32);
}

TEST(SoftmaxKernel, Trn2) {
  expect_kernel_correct("softmax", "trn2", {300, 1024}, DType::kBFloat16);
}

TEST(SoftmaxKernel, CheckCatchesAWrongNormalisation) {
  // A kernel that forgets the max subtraction still normalises correctly in exact math;
  // one that skips the division must fail the check.
  const auto unnormalised = [](std::span<const kernel::Tensor> in) {
    kernel::Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm, "out");
    kernel::Tensor x = nl::load(in[0]);
    nl::store(out, nl::exp(x));
    return std::vector<kernel::Tensor>{out};
  };
  expect_check_fails(
      run_kernel_with_fn("softmax", "trn3", {128, 256}, DType::kFloat32, unnormalised));
}

TEST(SoftmaxKernel, RejectsBadInputs) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  EXPECT_THROW(find_kernel("softmax")->make({128}, DType::kFloat32, chip), std::invalid_argument);
  EXPECT_THROW(find_kernel("softmax")->make({128, 128}, DType::kFloat8E4M3, chip),
               std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::kernels
