// Gated MLP against its double reference: SiLU and GELU, ragged T/H/F, several token
// blocks and weight slabs, trn2.
#include "kernels/mlp.h"

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

TEST(MlpKernel, Silu) {
  expect_correct(run("mlp", "trn3", {256, 256, 512}));
}
TEST(MlpKernel, Gelu) {
  expect_correct(run("mlp_gelu", "trn3", {256, 256, 512}));
}

TEST(MlpKernel, RaggedShapes) {
  // T = 600: a 512-token block and an 88-token one; H and F not multiples of 128.
  expect_correct(run("mlp", "trn3", {600, 200, 700}));
  expect_correct(run("mlp_gelu", "trn3", {1, 64, 96}));
}

TEST(MlpKernel, SeveralDownSlabs) {
  // H = 1100: three down-projection column slabs (512, 512, 76).
  expect_correct(run("mlp", "trn3", {128, 1100, 256}));
}

TEST(MlpKernel, Trn2) {
  expect_correct(run("mlp", "trn2", {256, 256, 384}));
}

TEST(MlpKernel, CheckCatchesTheWrongActivation) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  Problem p = find_kernel("mlp")->make({128, 128, 256}, DType::kBFloat16, chip);
  p.fn = [](std::span<const kernel::Tensor> in) {
    return mlp(in, {.act = isa::ActivationFunc::kGelu});
  };
  const ProblemReport r = run_problem(p, chip);
  ASSERT_TRUE(r.check.has_value());
  EXPECT_FALSE(r.check->ok);
}

TEST(MlpKernel, RejectsBadShapes) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  EXPECT_THROW(find_kernel("mlp")->make({128, 128}, DType::kBFloat16, chip), std::invalid_argument);
  EXPECT_THROW(find_kernel("mlp")->make({128, 128, 128}, DType::kFloat32, chip),
               std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::kernels
