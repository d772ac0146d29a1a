// Tensor-engine and DMA transposes, bit-exact against the input, on ragged shapes.
#include <gtest/gtest.h>

#include "arch/arch.h"
#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

// Correct and bit-exact: a transpose moves bits.
void expect_exact(std::string_view kernel, std::string_view chip,
                  const std::vector<std::int64_t>& shape, DType dtype) {
  const ProblemReport r = run_kernel(kernel, chip, shape, dtype);
  expect_kernel_correct(r);
  ASSERT_TRUE(r.check.has_value());
  EXPECT_EQ(r.check->max_abs_error, 0.0) << r.label;
}

TEST(TransposePe, SquareAndRaggedBf16) {
  expect_exact("transpose", "trn3", {512, 1024}, DType::kBFloat16);
  expect_exact("transpose", "trn3", {300, 700}, DType::kBFloat16);
  expect_exact("transpose", "trn3", {1, 129}, DType::kBFloat16);
  expect_exact("transpose", "trn3", {1100, 1030}, DType::kBFloat16);  // several super-blocks
}

TEST(TransposePe, Fp32AndTrn2) {
  expect_exact("transpose", "trn3", {257, 130}, DType::kFloat32);
  expect_exact("transpose", "trn2", {384, 200}, DType::kBFloat16);
  expect_exact("transpose", "trn2", {130, 260}, DType::kFloat32);
}

TEST(TransposeDma, RaggedBf16AndFp32) {
  expect_exact("transpose_dma", "trn3", {300, 700}, DType::kBFloat16);
  expect_exact("transpose_dma", "trn3", {2100, 130}, DType::kFloat32);
}

TEST(TransposeDma, Trn2) {
  expect_exact("transpose_dma", "trn2", {256, 384}, DType::kBFloat16);
}

TEST(TransposePe, OutputIsTheTransposeBitForBit) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const Problem p = find_kernel("transpose")->make({130, 260}, DType::kBFloat16, chip);
  const ProblemReport r = run_problem(p, chip);
  ASSERT_EQ(r.launch.outputs.size(), 1u);
  const auto& in = p.inputs[0].bytes();
  const auto& out = r.launch.outputs[0].bytes();
  ASSERT_EQ(in.size(), out.size());
  EXPECT_EQ(r.launch.outputs[0].shape, (kernel::Shape{260, 130}));
  std::size_t bad = 0;
  for (std::int64_t i = 0; i < 130; ++i)
    for (std::int64_t j = 0; j < 260; ++j)
      for (int b = 0; b < 2; ++b)
        bad += in[static_cast<std::size_t>((i * 260 + j) * 2 + b)] !=
               out[static_cast<std::size_t>((j * 130 + i) * 2 + b)];
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace trnsim::kernels
