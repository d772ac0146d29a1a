// RoPE against its double reference, fp32 and bf16, ragged positions, trn2.
#include "kernels/rope.h"

#include <gtest/gtest.h>

#include "arch/arch.h"
#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

TEST(RopeKernel, Fp32) {
  expect_kernel_correct("rope", "trn3", {256, 128}, DType::kFloat32);
}
TEST(RopeKernel, Bf16) {
  expect_kernel_correct("rope", "trn3", {512, 64}, DType::kBFloat16);
}
TEST(RopeKernel, RaggedPositions) {
  expect_kernel_correct("rope", "trn3", {1, 128}, DType::kFloat32);
  expect_kernel_correct("rope", "trn3", {128 * 32 + 77, 128},
                        DType::kBFloat16);  // g = 32 tiles + tail
}
TEST(RopeKernel, Trn2) {
  expect_kernel_correct("rope", "trn2", {300, 128}, DType::kBFloat16);
}

TEST(RopeKernel, CheckCatchesTheInterleavedConvention) {
  // Rotating interleaved pairs (x[2i], x[2i+1]) instead of the half-split ones must fail.
  const auto interleaved = [](std::span<const kernel::Tensor> in) {
    const auto& x = in[0];
    const std::int64_t s = x.dim(0), d = x.dim(1), h = d / 2;
    kernel::Tensor out = nl::ndarray({s, d}, x.dtype(), nl::shared_hbm, "out");
    kernel::Tensor xt = nl::load(x);
    kernel::Tensor ct = nl::load(in[1]);
    kernel::Tensor st = nl::load(in[2]);
    kernel::Tensor pairs = xt.reshape({s, h, 2});
    kernel::Tensor ot = nl::ndarray({s, h, 2}, x.dtype());
    kernel::Tensor a = nl::ndarray({s, h}, x.dtype()), b = nl::ndarray({s, h}, x.dtype());
    nisa::tensor_tensor(a, pairs(nl::all, nl::all, 0), ct, isa::AluOp::kMultiply);
    nisa::tensor_tensor(b, pairs(nl::all, nl::all, 1), st, isa::AluOp::kMultiply);
    nisa::tensor_tensor(ot(nl::all, nl::all, 0), a, b, isa::AluOp::kSubtract);
    nisa::tensor_tensor(a, pairs(nl::all, nl::all, 1), ct, isa::AluOp::kMultiply);
    nisa::tensor_tensor(b, pairs(nl::all, nl::all, 0), st, isa::AluOp::kMultiply);
    nisa::tensor_tensor(ot(nl::all, nl::all, 1), a, b, isa::AluOp::kAdd);
    nl::store(out, ot.reshape({s, d}));
    (void)h;
    return std::vector<kernel::Tensor>{out};
  };
  expect_check_fails(run_kernel_with_fn("rope", "trn3", {128, 64}, DType::kFloat32, interleaved));
}

TEST(RopeKernel, RejectsOddHeadDim) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  EXPECT_THROW(find_kernel("rope")->make({128, 63}, DType::kFloat32, chip), std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::kernels
