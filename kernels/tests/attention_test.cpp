// Flash attention against its double reference: causal and non-causal, D = 64 and 128,
// sequence lengths that are not multiples of 128 or of the key block, trn3 and trn2.
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include "arch/arch.h"
#include "kernels/registry.h"
#include "kernels/runner.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

ProblemReport run(const std::string& kernel, const std::string& chip_name,
                  std::vector<std::int64_t> shape) {
  const arch::ChipConfig chip = arch::load_preset(chip_name);
  const KernelInfo* info = find_kernel(kernel);
  EXPECT_NE(info, nullptr) << kernel;
  return run_problem(info->make(shape, DType::kBFloat16, chip), chip);
}

void expect_correct(const ProblemReport& r) {
  ASSERT_TRUE(r.check.has_value());
  EXPECT_TRUE(r.check->ok) << r.label << ": " << r.check->worst << "\n" << format_report(r);
  EXPECT_GT(r.check->checked, 0u);
  EXPECT_GT(r.simulated_ns, 0);
  for (const auto& run : r.launch.runs) EXPECT_TRUE(run.hazards.empty()) << r.label;
}

TEST(AttentionKernel, NonCausalD128) {
  expect_correct(run("attention", "trn3", {512, 128}));
}
TEST(AttentionKernel, NonCausalD64) {
  expect_correct(run("attention", "trn3", {384, 64}));
}
TEST(AttentionKernel, CausalD128) {
  expect_correct(run("attention_causal", "trn3", {512, 128}));
}
TEST(AttentionKernel, CausalD64) {
  expect_correct(run("attention_causal", "trn3", {384, 64}));
}

TEST(AttentionKernel, RaggedSequence) {
  // 200 = one full query tile + a 72-row tile; the causal diagonal of the ragged tile.
  expect_correct(run("attention", "trn3", {200, 128}));
  expect_correct(run("attention_causal", "trn3", {200, 64}));
  expect_correct(run("attention_causal", "trn3", {1, 64}));
}

TEST(AttentionKernel, SeveralKeyBlocks) {
  // Key blocks of 128: the online softmax rescales 3 times per query tile, with a
  // ragged last block.
  const arch::ChipConfig chip = arch::load_preset("trn3");
  for (bool causal : {false, true}) {
    Problem p = find_kernel(causal ? "attention_causal" : "attention")
                    ->make({456, 64}, DType::kBFloat16, chip);
    p.fn = [causal](std::span<const kernel::Tensor> in) {
      return attention(in, {.causal = causal, .kv_block = 128});
    };
    expect_correct(run_problem(p, chip));
  }
}

TEST(AttentionKernel, TransposePaths) {
  // All P^T chunks on the tensor engine, all by DMA, and every other one (the default).
  expect_correct(run("attention_pe", "trn3", {384, 128}));
  const arch::ChipConfig chip = arch::load_preset("trn3");
  for (int period : {0, 1, 3}) {
    Problem p = find_kernel("attention_causal")->make({520, 128}, DType::kBFloat16, chip);
    p.fn = [period](std::span<const kernel::Tensor> in) {
      return attention(in, {.causal = true, .dma_transpose_period = period});
    };
    expect_correct(run_problem(p, chip));
  }
}

TEST(AttentionKernel, Fp32Output) {
  expect_correct(run("attention_f32out", "trn3", {256, 128}));
}

TEST(AttentionKernel, Trn2) {
  expect_correct(run("attention", "trn2", {256, 128}));
  expect_correct(run("attention_causal", "trn2", {384, 64}));
}

TEST(AttentionKernel, CheckCatchesAMissingMask) {
  // The non-causal kernel's output against the causal reference must fail: the check (and
  // its tolerance) can tell the two apart.
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const Problem causal = find_kernel("attention_causal")->make({256, 64}, DType::kBFloat16, chip);
  Problem wrong = causal;
  wrong.fn = [](std::span<const kernel::Tensor> in) { return attention(in, {.causal = false}); };
  const ProblemReport r = run_problem(wrong, chip);
  ASSERT_TRUE(r.check.has_value());
  EXPECT_FALSE(r.check->ok);
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
