// RMSNorm and LayerNorm beyond the correctness cases (correctness_test.cpp): the check's
// tolerance and the inputs they refuse.
#include <gtest/gtest.h>

#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

TEST(NormRmsnorm, CheckCatchesAWrongElement) {
  // The tolerance is tight enough that one element off by 1% fails.
  const Problem p = trn3_problem("rmsnorm", {128, 256}, DType::kFloat32);
  ProblemReport r = run_problem(p, trn3());
  ASSERT_TRUE(r.check && r.check->ok) << format_report(r);
  std::vector<runtime::HostTensor> outs = r.launch.outputs;
  std::vector<float> v = outs[0].to_floats();
  v[1000] *= 1.01f;
  outs[0] = runtime::HostTensor::from_floats("out", DType::kFloat32, outs[0].shape, v);
  EXPECT_FALSE(check(p, outs).ok);
}

TEST(NormRmsnorm, RejectsBadInputs) {
  expect_rejected("rmsnorm", {128}, DType::kBFloat16);
  expect_rejected("layernorm", {128, 128}, DType::kFloat16);
}

}  // namespace
}  // namespace trnsim::kernels
