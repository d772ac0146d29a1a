// The trnsim kernel library: NKI-style kernels written with the C++ kernel API, each
// checked against a reference in kernels/tests and runnable with `trnsim run NAME`.
//
// Every kernel is a plain function over kernel::Tensor (inputs in HBM, outputs returned in
// shared HBM); parameters that change the generated code are in a small options struct,
// whose knobs the kernel's registration declares as tuning options (`trnsim run --set`,
// kernels/options.h).
#pragma once

#include <span>
#include <vector>

#include "kernel/kernel.h"
#include "kernels/registry.h"

namespace trnsim::kernels {

using kernel::Tensor;
using numerics::DType;

// ---- matmul --------------------------------------------------------------------------
// c[M, N] = a[M, K] @ b[K, N], with a given transposed: inputs a_t [K, M] and b [K, N]
// (the stationary layout, as NKI's matmul tutorial). Any M, N, K; BF16/FP16/FP32/FP8
// inputs (both the same class: fp32 pairs with fp32); output fp32 or bf16.
struct MatmulOptions {
  DType out_dtype = DType::kFloat32;
  // Block of output tiles computed together: block_m x 128 rows by block_n x 512 columns.
  // block_m * block_n accumulators must fit the PSUM banks (8 on every generation).
  int block_m = 4;
  int block_n = 2;
};
std::vector<Tensor> matmul(std::span<const Tensor> in, const MatmulOptions& options = {});

// The problem of any kernel computing c = a_t^T @ b with the inputs above: deterministic
// inputs (a_t seed 1, b seed 2), the double reference, the accumulation tolerance, FLOPs.
Problem matmul_problem(const std::string& name, const std::vector<std::int64_t>& shape, DType dtype,
                       DType out, kernel::KernelFn fn);

}  // namespace trnsim::kernels
