// Gated MLP beyond the correctness cases (correctness_test.cpp): the wrong activation fails
// the check, and the shapes it refuses.
#include "kernels/mlp.h"

#include <gtest/gtest.h>

#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

TEST(MlpKernel, CheckCatchesTheWrongActivation) {
  expect_check_fails(run_kernel_with_fn("mlp", "trn3", {128, 128, 256}, DType::kBFloat16,
                                        [](std::span<const kernel::Tensor> in) {
                                          return mlp(in, {.act = isa::ActivationFunc::kGelu});
                                        }));
}

TEST(MlpKernel, RejectsBadShapes) {
  expect_rejected("mlp", {128, 128}, DType::kBFloat16);
  expect_rejected("mlp", {128, 128, 128}, DType::kFloat32);
}

}  // namespace
}  // namespace trnsim::kernels
