// conv2d against a double reference: stride/padding combinations, channel counts beyond
// one partition tile, K beyond one stationary tile, output tiles split in rows and columns.
#include "kernels/conv2d.h"

#include <gtest/gtest.h>

#include "arch/arch.h"
#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

ProblemReport run_conv(const std::string& chip_name, std::vector<std::int64_t> s, DType d,
                       int stride, int pad) {
  const arch::ChipConfig chip = arch::load_preset(chip_name);
  return run_problem(make_conv2d_problem(s, d, stride, pad), chip);
}

TEST(Conv2d, Same3x3Bf16) {
  expect_kernel_correct(run_conv("trn3", {2, 64, 16, 16, 64, 3, 3}, DType::kBFloat16, 1, 1));
}

TEST(Conv2d, ValidAndStride2) {
  expect_kernel_correct(run_conv("trn3", {1, 32, 13, 11, 48, 3, 3}, DType::kBFloat16, 1, 0));
  expect_kernel_correct(run_conv("trn3", {1, 32, 15, 17, 40, 3, 3}, DType::kBFloat16, 2, 1));
  expect_kernel_correct(run_conv("trn3", {1, 16, 9, 9, 8, 5, 5}, DType::kFloat32, 2, 2));
}

TEST(Conv2d, ManyChannelsAndFilters) {
  // C = 200 (two partition chunks), K = 160 (two stationary tiles), 1x1 and 3x1 filters.
  expect_kernel_correct(run_conv("trn3", {1, 200, 8, 8, 160, 3, 3}, DType::kBFloat16, 1, 1));
  expect_kernel_correct(run_conv("trn3", {1, 130, 6, 7, 20, 3, 1}, DType::kFloat32, 1, 0));
  expect_kernel_correct(run_conv("trn3", {2, 8, 5, 5, 4, 1, 1}, DType::kBFloat16, 1, 0));
}

TEST(Conv2d, WideRowsSplitColumns) {
  // Q = 600 > 512: output tiles split along columns; padding only on some tiles.
  expect_kernel_correct(run_conv("trn3", {1, 4, 3, 600, 8, 3, 3}, DType::kBFloat16, 1, 1));
}

TEST(Conv2d, RejectsBadShapes) {
  expect_rejected("conv2d", {1, 16, 10, 10, 16, 2, 2}, DType::kBFloat16);
  EXPECT_THROW(make_conv2d_problem({1, 16, 2, 2, 16, 5, 5}, DType::kBFloat16, 1, 0),
               std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::kernels
