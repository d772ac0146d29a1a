// What every kernel test does: run a library problem on a chip preset and expect the run to
// be correct, e.g. `expect_kernel_correct("softmax", "trn3", {256, 512}, DType::kBFloat16);`.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "arch/tests/test_presets.h"
#include "kernel/kernel.h"
#include "kernels/options.h"
#include "kernels/registry.h"
#include "kernels/runner.h"

namespace trnsim::kernels {

// The library kernel `kernel`'s problem of `shape` and `dtype`, with the options of `set`
// and a logical core of `lnc` physical cores, run (functionally) on the preset `chip`.
// Throws std::invalid_argument when no kernel has that name.
ProblemReport run_kernel(std::string_view kernel, std::string_view chip,
                         const std::vector<std::int64_t>& shape, DType dtype,
                         const OptionValues& set = {}, int lnc = 1);

using arch::testing::trn3;
// The library kernel `kernel`'s problem of `shape` and `dtype` for trn3 with default options,
// for tests that change the problem or compare its inputs with the outputs.
Problem trn3_problem(std::string_view kernel, const std::vector<std::int64_t>& shape, DType dtype);

// The same problem computed by `fn` instead of the kernel: a variant of the kernel, or a
// deliberately wrong one that the problem's check must catch.
ProblemReport run_kernel_with_fn(std::string_view kernel, std::string_view chip,
                                 const std::vector<std::int64_t>& shape, DType dtype,
                                 kernel::KernelFn fn);

// The run was checked on some elements and passed, took simulated time and had no hazards.
// Failures name the problem's label.
void expect_kernel_correct(const ProblemReport& report);
// run_kernel, then the above.
void expect_kernel_correct(std::string_view kernel, std::string_view chip,
                           const std::vector<std::int64_t>& shape, DType dtype,
                           const OptionValues& set = {}, int lnc = 1);

// The run was checked and failed the check.
void expect_check_fails(const ProblemReport& report);

// The library kernel `kernel` refuses the problem of `shape` and `dtype` on trn3
// (std::invalid_argument from its make).
void expect_rejected(std::string_view kernel, const std::vector<std::int64_t>& shape, DType dtype);

}  // namespace trnsim::kernels
