// Every library kernel against its reference (kernel_test_util.h: correct, checked, timed, no
// hazards), one test per problem: the shapes chosen for each family exercise its tiling edges
// (ragged rows, columns and blocks), its data types and the other chip generations. What a
// family needs beyond that (variants, checks that must fail, bad inputs) is in its own file.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

struct CorrectnessCase {
  const char* kernel;
  const char* chip;
  std::vector<std::int64_t> shape;
  DType dtype;
  bool bit_exact = false;  // the output equals the reference bit for bit (moves of bits)
};

// "rmsnorm_trn3_200x700_bfloat16"
std::string case_name(const ::testing::TestParamInfo<CorrectnessCase>& info) {
  const CorrectnessCase& c = info.param;
  return fmt::format("{}_{}_{}_{}", c.kernel, c.chip, fmt::join(c.shape, "x"),
                     numerics::name(c.dtype));
}

class LibraryKernel : public ::testing::TestWithParam<CorrectnessCase> {};

TEST_P(LibraryKernel, IsCorrect) {
  const CorrectnessCase& c = GetParam();
  const ProblemReport r = run_kernel(c.kernel, c.chip, c.shape, c.dtype);
  expect_kernel_correct(r);
  if (c.bit_exact) {
    ASSERT_TRUE(r.check.has_value()) << r.label;
    EXPECT_EQ(r.check->max_abs_error, 0.0) << r.label;
  }
}

constexpr DType kBf16 = DType::kBFloat16;
constexpr DType kFp32 = DType::kFloat32;

const CorrectnessCase kCases[] = {
    // Matmul: M, N, K not multiples of 128/512 give partial stationary, moving and
    // contraction tiles.
    {"matmul", "trn3", {256, 1024, 512}, kBf16},
    {"matmul", "trn3", {200, 700, 300}, kBf16},
    {"matmul", "trn3", {1, 1, 1}, kBf16},
    {"matmul", "trn3", {129, 513, 129}, DType::kFloat16},
    {"matmul", "trn3", {128, 512, 256}, kFp32},
    {"matmul", "trn3", {128, 512, 256}, DType::kFloat8E4M3},
    {"matmul", "trn3", {128, 512, 256}, DType::kFloat8E5M2},
    {"matmul", "trn2", {256, 512, 256}, kBf16},
    {"matmul", "trn1", {256, 512, 256}, kBf16},
    // Gated MLP (SiLU and GELU): T = 600 is a 512-token block and an 88-token one, H and F
    // not multiples of 128; H = 1100 gives three down-projection column slabs (512, 512, 76).
    {"mlp", "trn3", {256, 256, 512}, kBf16},
    {"mlp_gelu", "trn3", {256, 256, 512}, kBf16},
    {"mlp", "trn3", {600, 200, 700}, kBf16},
    {"mlp_gelu", "trn3", {1, 64, 96}, kBf16},
    {"mlp", "trn3", {128, 1100, 256}, kBf16},
    {"mlp", "trn2", {256, 256, 384}, kBf16},
    // Flash attention, causal and not, D = 64 and 128: 200 = one full query tile + a 72-row
    // tile (the causal diagonal of the ragged tile); attention_pe does every P^T chunk on the
    // tensor engine.
    {"attention", "trn3", {512, 128}, kBf16},
    {"attention", "trn3", {384, 64}, kBf16},
    {"attention_causal", "trn3", {512, 128}, kBf16},
    {"attention_causal", "trn3", {384, 64}, kBf16},
    {"attention", "trn3", {200, 128}, kBf16},
    {"attention_causal", "trn3", {200, 64}, kBf16},
    {"attention_causal", "trn3", {1, 64}, kBf16},
    {"attention_pe", "trn3", {384, 128}, kBf16},
    {"attention_f32out", "trn3", {256, 128}, kBf16},
    {"attention", "trn2", {256, 128}, kBf16},
    {"attention_causal", "trn2", {384, 64}, kBf16},
    // Row softmax: several rows per partition (g = 8 for C = 512) with a ragged tail of 3
    // single-row tiles, and wide rows.
    {"softmax", "trn3", {256, 512}, kFp32},
    {"softmax", "trn3", {256, 512}, kBf16},
    {"softmax", "trn3", {1, 100}, kFp32},
    {"softmax", "trn3", {200, 300}, kBf16},
    {"softmax", "trn3", {128 * 8 + 300, 512}, kBf16},
    {"softmax", "trn3", {128, 8192}, kFp32},
    {"softmax", "trn2", {300, 1024}, kBf16},
    // RMSNorm and LayerNorm: ragged rows (not a multiple of 128) and columns (not a multiple
    // of 512, bn_stats' chunk); C = 6200 is a wide row.
    {"rmsnorm", "trn3", {256, 1024}, kBf16},
    {"rmsnorm", "trn3", {200, 700}, kBf16},
    {"rmsnorm", "trn3", {1, 4}, kBf16},
    {"rmsnorm", "trn3", {130, 6200}, kBf16},
    {"rmsnorm", "trn3", {130, 96}, kFp32},
    {"rmsnorm", "trn2", {160, 512}, kBf16},
    {"layernorm", "trn3", {128, 1024}, kBf16},
    {"layernorm", "trn3", {129, 1000}, kBf16},
    {"layernorm", "trn3", {3, 5}, kFp32},
    {"layernorm", "trn3", {64, 1536}, kFp32},
    {"layernorm", "trn2", {200, 600}, kBf16},
    // RoPE: ragged positions, 128 * 32 + 77 is 32 tiles and a tail.
    {"rope", "trn3", {256, 128}, kFp32},
    {"rope", "trn3", {512, 64}, kBf16},
    {"rope", "trn3", {1, 128}, kFp32},
    {"rope", "trn3", {128 * 32 + 77, 128}, kBf16},
    {"rope", "trn2", {300, 128}, kBf16},
    // Tensor-engine and DMA transposes move bits; 1100 x 1030 needs several super-blocks.
    {"transpose", "trn3", {512, 1024}, kBf16, true},
    {"transpose", "trn3", {300, 700}, kBf16, true},
    {"transpose", "trn3", {1, 129}, kBf16, true},
    {"transpose", "trn3", {1100, 1030}, kBf16, true},
    {"transpose", "trn3", {257, 130}, kFp32, true},
    {"transpose", "trn2", {384, 200}, kBf16, true},
    {"transpose", "trn2", {130, 260}, kFp32, true},
    {"transpose_dma", "trn3", {300, 700}, kBf16, true},
    {"transpose_dma", "trn3", {2100, 130}, kFp32, true},
    {"transpose_dma", "trn2", {256, 384}, kBf16, true},
    // MX dequantisation (exact), both FP8 element types, ragged rows.
    {"mx_dequantize", "trn3", {256, 520}, DType::kFloat8E4M3x4},
    {"mx_dequantize", "trn3", {1037, 16}, DType::kFloat8E5M2x4},
    // conv2d under its registry names (stride 2, no padding) on trn2.
    {"conv2d", "trn2", {1, 16, 10, 10, 16, 3, 3}, kBf16},
    {"conv2d_s2", "trn2", {1, 16, 10, 10, 16, 3, 3}, kBf16},
    {"conv2d_valid", "trn2", {1, 16, 10, 10, 16, 3, 3}, kBf16},
};

INSTANTIATE_TEST_SUITE_P(Problems, LibraryKernel, ::testing::ValuesIn(kCases), case_name);

// Kernels whose inputs are computed on the host (tables, quantised data), not drawn at
// random: a timing-only run makes none of them, and a shape whose data would not fit the
// chip's HBM is refused before the host tries to make it.
struct HostInputCase {
  const char* kernel;
  std::vector<std::int64_t> shape, too_big;
};

TEST(LibraryProblems, HostComputedInputsAreMadeOnlyForFunctionalRuns) {
  const std::vector<HostInputCase> cases = {
      {"rope", {256, 64}, {1'000'000'000, 128}},
      {"mx_quantize", {256, 512}, {1'000'000, 100'000}},
      {"mx_dequantize", {256, 512}, {1'000'000, 100'000}},
      {"matmul_mx", {256, 512, 256}, {1'000'000, 100'000, 1280}},
  };
  for (const HostInputCase& c : cases) {
    SCOPED_TRACE(c.kernel);
    const KernelInfo* k = find_kernel(c.kernel);
    ASSERT_NE(k, nullptr);
    const Problem problem = trn3_problem(c.kernel, c.shape, k->default_dtype);
    const ProblemReport timed = run_problem(problem, trn3(), {.functional = false});
    EXPECT_GT(timed.simulated_ns, 0);
    for (const runtime::HostTensor& t : problem.inputs) EXPECT_FALSE(t.generated()) << t.name;
    expect_kernel_correct(run_problem(problem, trn3()));
    try {
      (void)trn3_problem(c.kernel, c.too_big, k->default_dtype);
      ADD_FAILURE() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("GiB of HBM; trn3 has 144 GiB"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace trnsim::kernels
