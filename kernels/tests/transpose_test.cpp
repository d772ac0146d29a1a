// The tensor-engine transpose's output is the input transposed bit for bit (the ragged
// shapes of both transposes are in correctness_test.cpp).
#include <gtest/gtest.h>

#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

TEST(TransposePe, OutputIsTheTransposeBitForBit) {
  const Problem p = trn3_problem("transpose", {130, 260}, DType::kBFloat16);
  const ProblemReport r = run_problem(p, trn3());
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
