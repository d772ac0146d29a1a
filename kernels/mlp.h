// Gated MLP block: y = down(act(gate(x)) * up(x)), act = SiLU or GELU.
//
// Inputs (HBM, BF16): x [T, H], w_gate [H, F], w_up [H, F], w_down [F, H]; output y [T, H]
// BF16. Any T, H, F (ragged tiles included); SBUF bounds the block sizes (see mlp.cpp).
#pragma once

#include <span>
#include <vector>

#include "kernel/kernel.h"

namespace trnsim::kernels {

using numerics::DType;

struct MlpOptions {
  isa::ActivationFunc act = isa::ActivationFunc::kSilu;  // kSilu or kGelu
  DType out_dtype = DType::kBFloat16;
  std::int64_t token_block = 512;  // tokens per pass over the weights (moving free size)
  std::int64_t down_cols = 512;    // output columns per down-projection weight slab
};

std::vector<kernel::Tensor> mlp(std::span<const kernel::Tensor> in, const MlpOptions& options = {});

}  // namespace trnsim::kernels
