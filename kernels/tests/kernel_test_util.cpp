#include "kernels/tests/kernel_test_util.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>

#include "arch/arch.h"

namespace trnsim::kernels {

namespace {

const KernelInfo& library_kernel(std::string_view name) {
  const KernelInfo* info = find_kernel(name);
  if (info == nullptr)
    throw std::invalid_argument(fmt::format("no library kernel named '{}'", name));
  return *info;
}

}  // namespace

ProblemReport run_kernel(std::string_view kernel, std::string_view chip,
                         const std::vector<std::int64_t>& shape, DType dtype,
                         const OptionValues& set, int lnc) {
  const arch::ChipConfig config = arch::load_preset(std::string(chip));
  Problem problem = library_kernel(kernel).make(shape, dtype, config, set);
  problem.lnc = lnc;
  return run_problem(problem, config);
}

Problem trn3_problem(std::string_view kernel, const std::vector<std::int64_t>& shape, DType dtype) {
  return library_kernel(kernel).make(shape, dtype, trn3());
}

ProblemReport run_kernel_with_fn(std::string_view kernel, std::string_view chip,
                                 const std::vector<std::int64_t>& shape, DType dtype,
                                 kernel::KernelFn fn) {
  const arch::ChipConfig config = arch::load_preset(std::string(chip));
  Problem problem = library_kernel(kernel).make(shape, dtype, config);
  problem.fn = std::move(fn);
  return run_problem(problem, config);
}

void expect_kernel_correct(const ProblemReport& r) {
  ASSERT_TRUE(r.check.has_value()) << r.label;
  EXPECT_TRUE(r.check->ok) << r.label << ": " << r.check->worst << "\n" << format_report(r);
  EXPECT_GT(r.check->checked, 0u) << r.label;
  EXPECT_GT(r.simulated_ns, 0) << r.label;
  for (const auto& run : r.launch.runs) EXPECT_TRUE(run.hazards.empty()) << r.label;
}

void expect_kernel_correct(std::string_view kernel, std::string_view chip,
                           const std::vector<std::int64_t>& shape, DType dtype,
                           const OptionValues& set, int lnc) {
  expect_kernel_correct(run_kernel(kernel, chip, shape, dtype, set, lnc));
}

void expect_check_fails(const ProblemReport& r) {
  ASSERT_TRUE(r.check.has_value()) << r.label;
  EXPECT_FALSE(r.check->ok) << r.label;
}

void expect_rejected(std::string_view kernel, const std::vector<std::int64_t>& shape, DType dtype) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const KernelInfo& info = library_kernel(kernel);
  EXPECT_THROW(info.make(shape, dtype, chip), std::invalid_argument) << kernel;
}

}  // namespace trnsim::kernels
