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
  bool causal = false;  // key j is visible to query i only when j <= i
  DType out_dtype = DType::kBFloat16;
  float scale = 0.0f;  // 0 = 1 / sqrt(D)
  // Keys per online-softmax step: one PSUM score block of 128 x kv_block fp32, one max and
  // one rescale per step (512 measures best: small enough for several blocks in flight). A multiple
  // of 128, at most 2048 (4 of the 8 PSUM banks).
  int kv_block = 512;
  // 0: every P^T chunk is transposed on the tensor engine. n > 0: every n-th 128-key chunk
  // is transposed by the DMA engines instead (dma_transpose SBUF -> SBUF), which the
  // tensor, vector (no PSUM copy) and otherwise idle DMA queues share.
  int dma_transpose_period = 2;
};

std::vector<kernel::Tensor> attention(std::span<const kernel::Tensor> in,
                                      const AttentionOptions& options = {});

}  // namespace trnsim::kernels
