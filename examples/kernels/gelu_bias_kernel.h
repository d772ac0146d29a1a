// The example kernel y = gelu(x * 0.5 + bias[col]) over x [R, C] (gelu_bias_kernel.cpp), with
// its double-precision reference and error bound, shared by the two ways to use it: the
// program gelu_bias.cpp, and the kernel library gelu_bias_library.cpp that `trnsim run
// --load` opens.
#pragma once

#include <span>
#include <vector>

#include "kernel/kernel.h"

// inputs x [R, C] bf16 and bias [1, C] fp32; returns y [R, C] bf16.
std::vector<trnsim::kernel::Tensor> gelu_bias(std::span<const trnsim::kernel::Tensor> in);

// The exact value of y for one element of x and its column's bias.
double gelu_bias_reference(double x, double bias);

// Largest |got - want| / (|want| + 1e-3): the bf16 input is exact, the fp32 affine step and
// ScalarE's fp32 gelu add errors of order 2^-24, and the output rounds once to bf16 (half an
// ulp, 2^-8 relative); 1.5 x 2^-8 bounds the sum with room to spare.
inline constexpr double kGeluBiasTolerance = 1.5 * 0x1p-8;
