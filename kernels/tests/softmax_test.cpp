// Row softmax against its double reference on fp32 and bf16, ragged row counts and the
// multi-row-per-partition tiling.
#include "kernels/softmax.h"

#include <gtest/gtest.h>

#include "arch/arch.h"
#include "kernels/registry.h"
#include "kernels/runner.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

ProblemReport run(const std::string& chip_name, std::vector<std::int64_t> shape, DType dtype) {
  const arch::ChipConfig chip = arch::load_preset(chip_name);
  const KernelInfo* info = find_kernel("softmax");
  EXPECT_NE(info, nullptr);
  return run_problem(info->make(shape, dtype, chip), chip);
}

void expect_correct(const ProblemReport& r) {
  ASSERT_TRUE(r.check.has_value());
  EXPECT_TRUE(r.check->ok) << r.label << ": " << r.check->worst << "\n" << format_report(r);
  EXPECT_GT(r.check->checked, 0u);
  EXPECT_GT(r.simulated_ns, 0);
  for (const auto& run : r.launch.runs) EXPECT_TRUE(run.hazards.empty()) << r.label;
}

TEST(SoftmaxKernel, Fp32) {
  expect_correct(run("trn3", {256, 512}, DType::kFloat32));
}
TEST(SoftmaxKernel, Bf16) {
  expect_correct(run("trn3", {256, 512}, DType::kBFloat16));
}

TEST(SoftmaxKernel, RaggedRows) {
  expect_correct(run("trn3", {1, 100}, DType::kFloat32));
  expect_correct(run("trn3", {200, 300}, DType::kBFloat16));
  // Several rows per partition (g = 8 for C = 512) and a ragged tail of 3 single-row tiles.
  expect_correct(run("trn3", {128 * 8 + 300, 512}, DType::kBFloat16));
}

TEST(SoftmaxKernel, WideRows) {
  expect_correct(run("trn3", {128, 8192}, DType::kFloat32));
}

TEST(SoftmaxKernel, Trn2) {
  expect_correct(run("trn2", {300, 1024}, DType::kBFloat16));
}

TEST(SoftmaxKernel, CheckCatchesAWrongNormalisation) {
  // A kernel that forgets the max subtraction still normalises correctly in exact math;
  // one that skips the division must fail the check.
  const arch::ChipConfig chip = arch::load_preset("trn3");
  Problem p = find_kernel("softmax")->make({128, 256}, DType::kFloat32, chip);
  p.fn = [](std::span<const kernel::Tensor> in) {
    kernel::Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm, "out");
    kernel::Tensor x = nl::load(in[0]);
    nl::store(out, nl::exp(x));
    return std::vector<kernel::Tensor>{out};
  };
  const ProblemReport r = run_problem(p, chip);
  ASSERT_TRUE(r.check.has_value());
  EXPECT_FALSE(r.check->ok);
}

TEST(SoftmaxKernel, RejectsBadInputs) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  EXPECT_THROW(find_kernel("softmax")->make({128}, DType::kFloat32, chip), std::invalid_argument);
  EXPECT_THROW(find_kernel("softmax")->make({128, 128}, DType::kFloat8E4M3, chip),
               std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::kernels
