// Tests of execute_elementwise against references written independently in the tests:
// here the dispatch; the operations are tested by family in ops_elementwise_*_test.cpp (helpers
// in ops_test_util.h).
#include <gtest/gtest.h>

#include "sim/tests/ops_test_util.h"

namespace trnsim::sim {
namespace {

using namespace ops_testing;

TEST(Dispatch, ExecutorOperationsAreNotOurs) {
  HostIO io;
  EXPECT_FALSE(run_op(isa::NcMatmul{}, io));
  EXPECT_FALSE(run_op(isa::CustomOp{}, io));
  EXPECT_FALSE(run_op(isa::DmaCopy{}, io));
  EXPECT_FALSE(run_op(isa::SemaphoreOp{}, io));
}

}  // namespace
}  // namespace trnsim::sim
