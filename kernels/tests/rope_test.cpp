// RoPE beyond the correctness cases (correctness_test.cpp): the interleaved convention fails
// the check, and the odd head dimension it refuses.
#include "kernels/rope.h"

#include <gtest/gtest.h>

#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

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
  expect_rejected("rope", {128, 63}, DType::kFloat32);
}

}  // namespace
}  // namespace trnsim::kernels
