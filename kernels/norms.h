// Row normalisations over x [R, C]: RMSNorm and LayerNorm (kernels/norms.cpp).
//
// Rows go on partitions in tiles of 128 (any R: the last tile is partial); each tile holds
// whole rows, so one DMA moves C * dtype bytes contiguous per partition and the statistics
// of a row never leave its partition. Inputs BF16 or FP32; the output has the input's dtype.
#pragma once

#include <span>
#include <vector>

#include "kernel/kernel.h"

namespace trnsim::kernels {

using kernel::Tensor;

struct NormOptions {
  float eps = 1e-6f;
};

// out[r, c] = x[r, c] / sqrt(mean_c(x[r, :]^2) + eps) * weight[c]. Inputs x [R, C], weight [C].
std::vector<Tensor> rmsnorm(std::span<const Tensor> in, const NormOptions& options = {});
// out[r, c] = (x[r, c] - mean) / sqrt(var + eps) * weight[c] + bias[c] (population variance).
// Inputs x [R, C], weight [C], bias [C].
std::vector<Tensor> layernorm(std::span<const Tensor> in, const NormOptions& options = {});

}  // namespace trnsim::kernels
