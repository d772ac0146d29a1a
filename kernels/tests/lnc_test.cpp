// Every library kernel on a logical core of two physical cores (NKI kernel[2]): the programs
// share the HBM inputs and outputs, so each must write only its own share of the output (a
// byte written by both is a WAW hazard the run refuses) and together all of it (the check
// against the reference). Where the problem has enough independent blocks, two cores must
// also run at least 1.8x faster than one. Then SPMD ranks of logical cores on one chip: each
// rank correct on inputs of its own, compute-bound ranks as fast as one, memory-bound ones
// sharing the chip's HBM.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using Shapes = std::map<std::string, std::vector<std::int64_t>, std::less<>>;

// Small problems (the run is functional and checked) whose blocks do not divide evenly
// between the two cores: one program gets one more block than the other, or a ragged one.
const Shapes kCorrectnessShapes = {
    {"attention", {384, 64}},  // 3 query tiles
    {"attention_causal", {384, 64}},
    {"attention_f32out", {384, 64}},
    {"attention_pe", {384, 64}},
    {"conv2d", {1, 64, 40, 40, 48, 3, 3}},  // 4 tiles of 12, 12, 12 and 4 output rows
    {"conv2d_s2", {1, 64, 80, 80, 48, 3, 3}},
    {"conv2d_valid", {1, 64, 42, 42, 48, 3, 3}},
    {"layernorm", {300, 512}},     // 128-row tiles and a 44-row tail
    {"matmul", {640, 1024, 256}},  // row blocks of 512 and 128 (block_m = 4 tiles)
    {"matmul_mx", {640, 1024, 256}},
    {"mlp", {600, 128, 256}},  // a 512-token block and an 88-token one
    {"mlp_gelu", {600, 128, 256}},
    {"mx_dequantize", {2060, 64}},  // row groups of 8: tiles of 128, 128 and 1, a 4-row tail
    {"mx_quantize", {300, 64}},
    {"rmsnorm", {300, 512}},
    {"rope", {1100, 64}},
    {"softmax", {300, 512}},
    {"transpose", {1100, 256}},  // a full and a ragged super-block row
    {"transpose_dma", {256, 300}},
    {"tutorial_matmul_blocked", {768, 1024, 256}},
    {"tutorial_matmul_hoisted", {384, 512, 256}},
    {"tutorial_matmul_optimized", {2048, 2048, 1024}},  // two column blocks of 1024
    {"tutorial_matmul_tiled", {384, 512, 256}},
};

// Problems with enough independent blocks to keep both cores busy. The runs are timing only:
// simulated time is deterministic, so the ratio is a fair assertion.
const Shapes kSpeedupShapes = {
    {"attention", {4096, 128}},
    {"attention_causal", {8192, 128}},  // round-robin query tiles balance the triangle
    {"attention_f32out", {4096, 128}},
    {"attention_pe", {4096, 128}},
    {"conv2d", {1, 128, 128, 128, 128, 3, 3}},
    {"conv2d_s2", {1, 128, 256, 256, 128, 3, 3}},
    {"conv2d_valid", {1, 128, 130, 130, 128, 3, 3}},
    {"layernorm", {4096, 4096}},
    {"matmul", {2048, 2048, 1024}},
    {"matmul_mx", {2048, 2048, 2048}},
    {"mlp", {2048, 1024, 4096}},
    {"mlp_gelu", {2048, 1024, 4096}},
    {"mx_dequantize", {2048, 2048}},
    {"mx_quantize", {2048, 2048}},
    {"rmsnorm", {4096, 4096}},
    {"rope", {32768, 128}},
    {"softmax", {4096, 2048}},
    {"transpose", {4096, 4096}},
    {"transpose_dma", {4096, 4096}},
    {"tutorial_matmul_blocked", {2048, 2048, 1024}},
    {"tutorial_matmul_hoisted", {1024, 1024, 1024}},
    {"tutorial_matmul_optimized", {2048, 2048, 2048}},
    {"tutorial_matmul_tiled", {1024, 1024, 1024}},
};

// Every registered kernel has a shape in `shapes`, so a new kernel cannot go untested.
void expect_every_kernel_listed(const Shapes& shapes) {
  for (const KernelInfo& k : library())
    EXPECT_TRUE(shapes.contains(k.name)) << "give " << k.name << " a shape in this table";
}

TEST(LogicalCore, EveryKernelIsCorrectOnTwoCores) {
  expect_every_kernel_listed(kCorrectnessShapes);
  for (const auto& [name, shape] : kCorrectnessShapes) {
    SCOPED_TRACE(name);
    const KernelInfo* k = find_kernel(name);
    ASSERT_NE(k, nullptr) << "no kernel " << name;
    expect_kernel_correct(name, "trn3", shape, k->default_dtype, {}, 2);
  }
}

// The same problems with program 1 doing nothing: its share of the output is never written
// (reads back as the simulator's poison bytes), so the check must fail. This proves both that
// every kernel gives the second core a share of the output and that the check sees it.
// Kernel `k`'s trn3 problem of `shape` (default dtype and options) on `lnc` cores.
Problem lnc_problem(const KernelInfo& k, const std::vector<std::int64_t>& shape, int lnc) {
  Problem problem = k.make(shape, k.default_dtype, trn3());
  problem.lnc = lnc;
  return problem;
}

TEST(LogicalCore, TheCheckFailsWhenOneProgramWritesNothing) {
  for (const auto& [name, shape] : kCorrectnessShapes) {
    SCOPED_TRACE(name);
    const KernelInfo* k = find_kernel(name);
    ASSERT_NE(k, nullptr) << "no kernel " << name;
    Problem problem = lnc_problem(*k, shape, 2);
    // Programs trace in order, so program 1 can declare the outputs program 0 returned.
    auto outputs = std::make_shared<std::vector<kernel::TensorSpec>>();
    problem.fn = [whole = problem.fn, outputs](std::span<const kernel::Tensor> in) {
      if (nl::program_id() == 0) {
        std::vector<kernel::Tensor> result = whole(in);
        outputs->clear();
        for (const kernel::Tensor& t : result) outputs->push_back({t.name(), t.dtype(), t.shape()});
        return result;
      }
      std::vector<kernel::Tensor> declared;
      for (const kernel::TensorSpec& t : *outputs)
        declared.push_back(nl::ndarray(t.shape, t.dtype, nl::shared_hbm, t.name));
      return declared;
    };
    expect_check_fails(run_problem(problem, trn3()));
  }
}

ProblemReport time_problem(const KernelInfo& k, const std::vector<std::int64_t>& shape, int lnc) {
  return run_problem(lnc_problem(k, shape, lnc), trn3(), {.functional = false});
}

TEST(LogicalCore, TwoCoresRunAtLeast1Point8TimesFaster) {
  expect_every_kernel_listed(kSpeedupShapes);
  for (const auto& [name, shape] : kSpeedupShapes) {
    SCOPED_TRACE(name);
    const KernelInfo* k = find_kernel(name);
    ASSERT_NE(k, nullptr) << "no kernel " << name;
    const ProblemReport one = time_problem(*k, shape, 1);
    const ProblemReport two = time_problem(*k, shape, 2);
    ASSERT_GT(two.simulated_ns, 0) << two.label;
    for (const auto& run : two.launch.runs) EXPECT_TRUE(run.hazards.empty()) << two.label;
    EXPECT_GE(one.simulated_ns / two.simulated_ns, 1.8)
        << one.label << ": " << one.simulated_ns << " ns on one core, " << two.simulated_ns
        << " ns on two";
  }
}

TEST(Ranks, RankInputsAreRotationsOfTheProblemsInputs) {
  const Problem problem = trn3_problem("softmax", {256, 64}, DType::kFloat32);
  const std::vector<runtime::HostTensor> zero = rank_inputs(problem.inputs, 0, 4);
  const std::vector<runtime::HostTensor> two = rank_inputs(problem.inputs, 2, 4);
  ASSERT_EQ(two.size(), problem.inputs.size());
  EXPECT_EQ(zero[0].bytes(), problem.inputs[0].bytes());
  EXPECT_EQ(two[0].spec().shape, problem.inputs[0].spec().shape);
  // Rank 2 of 4 starts half way through rank 0's words.
  const std::vector<float> x = problem.inputs[0].to_floats(), y = two[0].to_floats();
  ASSERT_EQ(x.size(), y.size());
  for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], x[(i + x.size() / 2) % x.size()]);
}

TEST(Ranks, EveryKernelIsCorrectOnEachOfTwoRanksOfTwoCores) {
  for (const auto& [name, shape] : kCorrectnessShapes) {
    SCOPED_TRACE(name);
    const KernelInfo* k = find_kernel(name);
    ASSERT_NE(k, nullptr) << "no kernel " << name;
    const ProblemReport r = run_problem(lnc_problem(*k, shape, 2), trn3(), {.ranks = 2});
    expect_kernel_correct(r);
    EXPECT_EQ(r.ranks, 2);
    ASSERT_EQ(r.rank_checks.size(), 2u);
    for (const CheckResult& c : r.rank_checks) EXPECT_TRUE(c.ok) << c.worst;
    ASSERT_TRUE(r.chip_timing.has_value());
    EXPECT_EQ(r.chip_timing->cores.size(), 4u);
  }
}

TEST(Ranks, ARankThatReadRankZerosInputsWouldFailItsCheck) {
  // Were rank 1's HBM tensors rank 0's, it would compute rank 0's outputs: the check against
  // its own inputs must catch that.
  const KernelInfo* k = find_kernel("softmax");
  ASSERT_NE(k, nullptr);
  Problem problem = lnc_problem(*k, {256, 512}, 1);
  const ProblemReport r = run_problem(problem, trn3(), {.ranks = 2});
  ASSERT_EQ(r.rank_checks.size(), 2u);
  EXPECT_TRUE(r.rank_checks[1].ok);
  Problem rank1 = problem;
  rank1.inputs = rank_inputs(problem.inputs, 1, 2);
  EXPECT_FALSE(check(rank1, r.launch.outputs).ok);  // r.launch: rank 0's
}

ProblemReport time_ranks(std::string_view kernel, std::string_view chip,
                         const std::vector<std::int64_t>& shape, int ranks) {
  const KernelInfo* k = find_kernel(kernel);
  const arch::ChipConfig c = arch::load_preset(std::string(chip));
  return run_problem(k->make(shape, k->default_dtype, c), c, {.functional = false, .ranks = ranks});
}

TEST(Ranks, ComputeBoundRanksKeepTheirTimeMemoryBoundOnesShareTheChipHbm) {
  // A matmul uses a quarter of its core's HBM share: eight of them do not contend.
  const ProblemReport one = time_ranks("matmul", "trn3", {2048, 2048, 1024}, 1);
  const ProblemReport eight = time_ranks("matmul", "trn3", {2048, 2048, 1024}, 8);
  EXPECT_DOUBLE_EQ(eight.simulated_ns, one.simulated_ns);
  EXPECT_DOUBLE_EQ(eight.flops, 8 * one.flops);
  EXPECT_DOUBLE_EQ(eight.peak_flops_per_s, 8 * one.peak_flops_per_s);
  ASSERT_TRUE(eight.chip_timing.has_value());
  EXPECT_EQ(eight.chip_timing->hbm_limited_ns, 0.0);
  // trn2's eight cores' DMA engines (8 x 435 GB/s) outrun its 2.9 TB/s HBM: eight softmax
  // ranks are slower than one and bounded by the chip's HBM.
  const ProblemReport alone = time_ranks("softmax", "trn2", {4096, 2048}, 1);
  const ProblemReport shared = time_ranks("softmax", "trn2", {4096, 2048}, 8);
  ASSERT_TRUE(shared.chip_timing.has_value());
  EXPECT_GT(shared.simulated_ns, 1.2 * alone.simulated_ns);
  EXPECT_GT(shared.chip_timing->hbm_limited_ns, 0.0);
  EXPECT_LE(shared.chip_timing->achieved_hbm_bytes_per_s, 2900e9);
  EXPECT_DOUBLE_EQ(shared.hbm_share_bytes_per_s, 2900e9);
}

}  // namespace
}  // namespace trnsim::kernels
