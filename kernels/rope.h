// Rotary position embedding (RoPE) of x [S, D] with tables cos, sin [S, D/2], half-split
// convention (GPT-NeoX / Hugging Face `rotate_half`): the pairs are (x[:, i], x[:, i + D/2]),
//
//   out[:, :D/2] = x1 * cos - x2 * sin        x1 = x[:, :D/2], x2 = x[:, D/2:]
//   out[:, D/2:] = x2 * cos + x1 * sin
//
// FP32 or BF16 (x, cos and sin share the dtype; products and sums in fp32, one rounding
// into the output dtype). Positions sit on partitions, g consecutive positions per
// partition per tile so every DMA moves long contiguous runs.
#pragma once

#include <span>
#include <vector>

#include "kernel/kernel.h"

namespace trnsim::kernels {

using numerics::DType;

struct RopeOptions {
  std::int64_t tile_elements = 2048;  // target elements of x per partition per tile
};

// Inputs: x [S, D], cos [S, D/2], sin [S, D/2]; D even. Returns out [S, D].
std::vector<kernel::Tensor> rope(std::span<const kernel::Tensor> in,
                                 const RopeOptions& options = {});

}  // namespace trnsim::kernels
