// Flash attention against its double reference: causal and non-causal, D = 64 and 128,
// sequence lengths that are not multiples of 128 or of the key block, trn3 and trn2.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include "arch/arch.h"
#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

TEST(AttentionKernel, NonCausalD128) {
  expect_kernel_correct("attention", "trn3", {512, 128}, DType::kBFloat16);
}
TEST(AttentionKernel, NonCausalD64) {
  expect_kernel_correct("attention", "trn3", {384, 64}, DType::kBFloat16);
}
TEST(AttentionKernel, CausalD128) {
  expect_kernel_correct("attention_causal", "trn3", {512, 128}, DType::kBFloat16);
}
TEST(AttentionKernel, CausalD64) {
  expect_kernel_correct("attention_causal", "trn3", {384, 64}, DType::kBFloat16);
}

TEST(AttentionKernel, RaggedSequence) {
  // 200 = one full query tile + a 72-row tile; the causal diagonal of the ragged tile.
  expect_kernel_correct("attention", "trn3", {200, 128}, DType::kBFloat16);
  expect_kernel_correct("attention_causal", "trn3", {200, 64}, DType::kBFloat16);
  expect_kernel_correct("attention_causal", "trn3", {1, 64}, DType::kBFloat16);
}

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
  // All P^T chunks on the tensor engine, all by DMA, and every other one (the default).
  expect_kernel_correct("attention_pe", "trn3", {384, 128}, DType::kBFloat16);
  for (int period : {0, 1, 3})
    expect_kernel_correct(
        run_kernel_with_fn("attention_causal", "trn3", {520, 128}, DType::kBFloat16,
                           [period](std::span<const kernel::Tensor> in) {
                             return attention(in, {.causal = true, .dma_transpose_period = period});
                           }));
}

TEST(AttentionKernel, Fp32Output) {
  expect_kernel_correct("attention_f32out", "trn3", {256, 128}, DType::kBFloat16);
}

TEST(AttentionKernel, Trn2) {
  expect_kernel_correct("attention", "trn2", {256, 128}, DType::kBFloat16);
  expect_kernel_correct("attention_causal", "trn2", {384, 64}, DType::kBFloat16);
}

TEST(AttentionKernel, CheckCatchesAMissingMask) {
  // The non-causal kernel's output against the causal reference must fail: the check (and
  // its tolerance) can tell the two apart.
  expect_check_fails(run_kernel_with_fn(
      "attention_causal", "trn3", {256, 64}, DType::kBFloat16,
      [](std::span<const kernel::Tensor> in) { return attention(in, {.causal = false}); }));
}

TEST(AttentionKernel, RejectsBadShapes) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  EXPECT_THROW(find_kernel("attention")->make({128, 256}, DType::kBFloat16, chip),
               std::invalid_argument);
  EXPECT_THROW(find_kernel("attention")->make({128}, DType::kBFloat16, chip),
               std::invalid_argument);
  EXPECT_THROW(find_kernel("attention")->make({128, 64}, DType::kFloat32, chip),
               std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::kernels
