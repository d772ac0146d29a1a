// Row-wise, numerically stable softmax over an [R, C] HBM tensor (FP32 or BF16):
// out[r, :] = exp(x[r, :] - max_r) / sum(exp(x[r, :] - max_r)), output in the input dtype.
//
// Rows sit on partitions. When R allows it, each partition takes `rows_per_partition`
// consecutive rows, so one DMA moves 128 x g rows as g x C contiguous elements per
// partition; the tail (R not a multiple of 128 g) runs in tiles of <= 128 single rows.
// C is bounded by SBUF: about (sbuf bytes per partition) / (6 x element bytes) / 2.
#pragma once

#include <span>
#include <vector>

#include "kernel/kernel.h"

namespace trnsim::kernels {

using numerics::DType;

struct SoftmaxOptions {
  // Target elements per partition per tile (rows per partition = max(1, target / C)).
  std::int64_t tile_elements = 4096;
};

std::vector<kernel::Tensor> softmax(std::span<const kernel::Tensor> in,
                                    const SoftmaxOptions& options = {});

}  // namespace trnsim::kernels
