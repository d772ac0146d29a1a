// Flash-attention forward for one head: out = softmax(q k^T * scale [+ causal mask]) v.
//
// Inputs (HBM, BF16): q_t [D, S] and k_t [D, S] — queries and keys *transposed*, the
// layout the tensor engine contracts over (D on partitions, no on-chip transpose of q or
// k) — and v [S, D]. Output [S, D] in BF16 or FP32. D <= 128 (64 and 128 are the tested
// head sizes), any S (ragged last tile included). docs/kernels-attention.md describes the
// schedule.
#pragma once

#include <span>
#include <vector>

#include "kernel/kernel.h"

namespace trnsim::kernels {

using numerics::DType;

struct AttentionOptions {
  bool causal = false;       // key j is visible to query i only when j <= i
  DType out_dtype = DType::kBFloat16;
  float scale = 0.0f;        // 0 = 1 / sqrt(D)
  // Keys per online-softmax step: one PSUM score block of 128 x kv_block fp32, one max and
  // one rescale per step. A multiple of 128, at most 2048 (4 of the 8 PSUM banks).
  int kv_block = 2048;
};

std::vector<kernel::Tensor> attention(std::span<const kernel::Tensor> in,
                                      const AttentionOptions& options = {});

}  // namespace trnsim::kernels
