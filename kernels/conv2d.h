// 2-D convolution, NCHW (kernels/conv2d.cpp): x [N, C, H, W], w [K, C, R, S] ->
// out [N, K, P, Q], P = (H + 2 pad - R) / stride + 1, Q = (W + 2 pad - S) / stride + 1,
// zero padding, no dilation or groups. BF16/FP16/FP32 (output in the input dtype).
#pragma once

#include <span>
#include <vector>

#include "kernel/kernel.h"
#include "kernels/registry.h"

namespace trnsim::kernels {

using kernel::Tensor;

struct Conv2dOptions {
  int stride = 1;
  int pad = 0;
};
std::vector<Tensor> conv2d(std::span<const Tensor> in, const Conv2dOptions& options = {});

// The problem for any stride/pad (the registry names fix them: conv2d, conv2d_s2, conv2d_valid).
Problem make_conv2d_problem(const std::vector<std::int64_t>& nchwkrs, DType dtype, int stride,
                            int pad);

}  // namespace trnsim::kernels
