// RMSNorm and LayerNorm against their double references, on shapes with ragged rows (not a
// multiple of 128) and columns (not a multiple of 512, bn_stats' chunk).
#include <gtest/gtest.h>

#include "arch/arch.h"
#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

TEST(NormRmsnorm, FullTilesBf16) {
  expect_kernel_correct("rmsnorm", "trn3", {256, 1024}, DType::kBFloat16);
}

TEST(NormRmsnorm, RaggedRowsAndColumns) {
  expect_kernel_correct("rmsnorm", "trn3", {200, 700}, DType::kBFloat16);
  expect_kernel_correct("rmsnorm", "trn3", {1, 4}, DType::kBFloat16);
  // C = 6200: wide rows, not a multiple of 512.
  expect_kernel_correct("rmsnorm", "trn3", {130, 6200}, DType::kBFloat16);
}

TEST(NormRmsnorm, Fp32AndTrn2) {
  expect_kernel_correct("rmsnorm", "trn3", {130, 96}, DType::kFloat32);
  expect_kernel_correct("rmsnorm", "trn2", {160, 512}, DType::kBFloat16);
}

TEST(NormLayernorm, FullTilesBf16) {
  expect_kernel_correct("layernorm", "trn3", {128, 1024}, DType::kBFloat16);
}

TEST(NormLayernorm, RaggedRowsAndColumnsNotMultipleOf512) {
  expect_kernel_correct("layernorm", "trn3", {129, 1000}, DType::kBFloat16);
  expect_kernel_correct("layernorm", "trn3", {3, 5}, DType::kFloat32);
}

TEST(NormLayernorm, Fp32AndTrn2) {
  expect_kernel_correct("layernorm", "trn3", {64, 1536}, DType::kFloat32);
  expect_kernel_correct("layernorm", "trn2", {200, 600}, DType::kBFloat16);
}

TEST(NormRmsnorm, CheckCatchesAWrongElement) {
  // The tolerance is tight enough that one element off by 1% fails.
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const Problem p = find_kernel("rmsnorm")->make({128, 256}, DType::kFloat32, chip);
  ProblemReport r = run_problem(p, chip);
  ASSERT_TRUE(r.check && r.check->ok) << format_report(r);
  std::vector<runtime::HostTensor> outs = r.launch.outputs;
  std::vector<float> v = outs[0].to_floats();
  v[1000] *= 1.01f;
  outs[0] = runtime::HostTensor::from_floats("out", DType::kFloat32, outs[0].shape, v);
  EXPECT_FALSE(check(p, outs).ok);
}

TEST(NormRmsnorm, RejectsBadInputs) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  EXPECT_THROW(find_kernel("rmsnorm")->make({128}, DType::kBFloat16, chip), std::invalid_argument);
  EXPECT_THROW(find_kernel("layernorm")->make({128, 128}, DType::kFloat16, chip),
               std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::kernels
