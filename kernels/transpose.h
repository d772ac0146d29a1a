// 2-D transpose of an HBM matrix x [R, C] -> out [C, R] (kernels/transpose.cpp), any R and C,
// BF16 or FP32 (any 2- or 4-byte dtype), bit-exact.
#pragma once

#include <span>
#include <vector>

#include "kernel/kernel.h"

namespace trnsim::kernels {

using kernel::Tensor;

// Tensor engine: 128x128 blocks through PSUM (nc_transpose), 1024x1024 super-blocks so that
// loads and stores move 1024 contiguous elements per partition.
std::vector<Tensor> transpose_pe(std::span<const Tensor> in);
// DMA engines: dma_transpose of [rows <= 2048, 128] HBM slabs into SBUF, then a plain store
// (NeuronCore-v3+).
std::vector<Tensor> transpose_dma(std::span<const Tensor> in);

}  // namespace trnsim::kernels
