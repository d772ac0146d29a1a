// Flash attention beyond the correctness cases (correctness_test.cpp): key blocks and
// transpose paths other than the library variants', a missing mask that the check catches,
// and the shapes it refuses.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

TEST(AttentionKernel, SeveralKeyBlocks) {
  // Key blocks of 128: the online softmax rescales 3 times per query tile, with a
  // ragged last block.
  for (bool causal : {false, true})
    expect_kernel_correct(
        run_kernel_with_fn(causal ? "attention_causal" : "attention", "trn3", {456, 64},
                           DType::kBFloat16, [causal](std::span<const kernel::Tensor> in) {
                             return attention(in, {.causal = causal, .kv_block = 128});
                           }));
}

TEST(AttentionKernel, TransposePaths) {
  // How the P^T chunks are transposed: dma_transpose_period 0, 1 and 3 (the tensor engine
  // alone is the library's attention_pe, in correctness_test.cpp).
  for (int period : {0, 1, 3})
    expect_kernel_correct(
        run_kernel_with_fn("attention_causal", "trn3", {520, 128}, DType::kBFloat16,
                           [period](std::span<const kernel::Tensor> in) {
                             return attention(in, {.causal = true, .dma_transpose_period = period});
                           }));
}

TEST(AttentionKernel, CheckCatchesAMissingMask) {
  // The non-causal kernel's output against the causal reference must fail: the check (and
  // its tolerance) can tell the two apart.
  expect_check_fails(run_kernel_with_fn(
      "attention_causal", "trn3", {256, 64}, DType::kBFloat16,
      [](std::span<const kernel::Tensor> in) { return attention(in, {.causal = false}); }));
}

TEST(AttentionKernel, RejectsBadShapes) {
  expect_rejected("attention", {128, 256}, DType::kBFloat16);
  expect_rejected("attention", {128}, DType::kBFloat16);
  expect_rejected("attention", {128, 64}, DType::kFloat32);
}

}  // namespace
}  // namespace trnsim::kernels
