// Row softmax beyond the correctness cases (correctness_test.cpp): a kernel that skips the
// normalisation fails the check, and the inputs it refuses.
#include "kernels/softmax.h"

#include <gtest/gtest.h>

#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

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
  expect_rejected("softmax", {128}, DType::kFloat32);
  expect_rejected("softmax", {128, 128}, DType::kFloat8E4M3);
}

}  // namespace
}  // namespace trnsim::kernels
