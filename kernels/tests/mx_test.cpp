// MX kernels: quantize_mx against numerics::quantize_mx_packed (bit-exact, Trainium scale
// rule), the Vector-engine dequantisation (exact), and the MX matmul against a double
// reference over the dequantised inputs, for both FP8 element types and FP4.
#include "kernels/mx.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "arch/arch.h"
#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

// Runs mx_quantize on `p` and compares words and scales byte for byte with the host.
void expect_quantize_bit_exact(const Problem& p, DType packed, std::int64_t r, std::int64_t c) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const ProblemReport rep = run_problem(p, chip);
  expect_kernel_correct(rep);
  ASSERT_EQ(rep.launch.outputs.size(), 2u);
  const HostMx h = mx_quantize_host(packed, p.inputs[0].to_floats(), r, c);
  const auto& words = rep.launch.outputs[0].bytes();
  const auto& scales = rep.launch.outputs[1].bytes();
  ASSERT_EQ(words.size(), h.words.size());
  ASSERT_EQ(scales.size(), h.scales.size());
  EXPECT_EQ(std::memcmp(words.data(), h.words.data(), words.size()), 0) << p.label;
  EXPECT_EQ(std::memcmp(scales.data(), h.scales.data(), scales.size()), 0) << p.label;
}

TEST(MxQuantize, BitExactBothFp8Types) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  for (DType t : {DType::kFloat8E4M3x4, DType::kFloat8E5M2x4})
    expect_quantize_bit_exact(trn3_problem("mx_quantize", {256, 512}, t), t, 256, 512);
}

TEST(MxQuantize, RaggedRowsPadToBlocks) {
  // 100 rows: a partial quadrant and a last block of 4 rows (zero-padded on chip).
  const arch::ChipConfig chip = arch::load_preset("trn3");
  expect_quantize_bit_exact(trn3_problem("mx_quantize", {100, 36}, DType::kFloat8E4M3x4),
                            DType::kFloat8E4M3x4, 100, 36);
  expect_quantize_bit_exact(trn3_problem("mx_quantize", {8, 4}, DType::kFloat8E5M2x4),
                            DType::kFloat8E5M2x4, 8, 4);
}

TEST(MxQuantize, ZeroTinyAndHugeBlocks) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  Problem p = trn3_problem("mx_quantize", {64, 64}, DType::kFloat8E4M3x4);
  std::vector<float> v = p.inputs[0].to_floats();
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 4; ++c) {
      v[static_cast<std::size_t>(r * 64 + c)] = 0.0f;  // all-zero block: scale 0x00
      v[static_cast<std::size_t>(r * 64 + 4 + c)] =
          1e-39f * float(c + 1);  // scale underflow (clamps to 0x00)
      v[static_cast<std::size_t>(r * 64 + 8 + c)] =
          3e38f * (c % 2 ? -1.f : 1.f);  // largest exponents
    }
  v[static_cast<std::size_t>(9 * 64 + 12)] = 448.0f * 1024;  // one large value in a small block
  p.inputs[0] = runtime::HostTensor::from_floats("x", DType::kBFloat16, {64, 64}, v);
  expect_quantize_bit_exact(p, DType::kFloat8E4M3x4, 64, 64);
}

TEST(MxDequantize, SpecialScaleCodes) {
  // Scale code 0 is 2^-127 (a subnormal factor), 254 is 2^127 (overflows to Inf for
  // elements >= 2), 255 is NaN. Checked element by element (check() compares in double).
  const arch::ChipConfig chip = arch::load_preset("trn3");
  Problem p = trn3_problem("mx_dequantize", {16, 8}, DType::kFloat8E4M3x4);
  p.inputs[1].mutable_bytes()[0] = 0;    // rows 0..7, columns 0..3
  p.inputs[1].mutable_bytes()[1] = 254;  // rows 0..7, columns 4..7
  p.inputs[1].mutable_bytes()[2] = 255;  // rows 8..15, columns 0..3
  const ProblemReport r = run_problem(p, chip, {.functional = true});
  ASSERT_EQ(r.launch.outputs.size(), 1u);
  const std::vector<float> out = r.launch.outputs[0].to_floats();
  const std::vector<float> elems = p.inputs[0].to_floats();
  const std::vector<float> codes = p.inputs[1].to_floats();
  for (int row = 0; row < 16; ++row)
    for (int c = 0; c < 8; ++c) {
      const int s = static_cast<int>(codes[static_cast<std::size_t>((row / 8) * 2 + c / 4)]);
      const float e = elems[static_cast<std::size_t>(row * 8 + c)];
      const float got = out[static_cast<std::size_t>(row * 8 + c)];
      if (s == 255) {
        EXPECT_TRUE(std::isnan(got)) << row << "," << c;
      } else {
        const float want = static_cast<float>(std::ldexp(double(e), s - 127));
        EXPECT_EQ(got, want) << row << "," << c << " scale " << s;
      }
    }
}

ProblemReport run_mm(std::int64_t m, std::int64_t n, std::int64_t k, DType packed, DType out,
                     MatmulMxOptions o = {}) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  o.out_dtype = out;
  return run_problem(make_matmul_mx_problem(m, n, k, packed, o), chip);
}

TEST(MxMatmul, Fp8E4M3FullTilesFp32Out) {
  expect_kernel_correct(run_mm(256, 1024, 1024, DType::kFloat8E4M3x4, DType::kFloat32));
}

TEST(MxMatmul, Fp8E5M2Bf16Out) {
  expect_kernel_correct(run_mm(128, 512, 512, DType::kFloat8E5M2x4, DType::kBFloat16));
}

TEST(MxMatmul, Fp4RaggedShapes) {
  // M, N ragged; K = 384 is one 96-partition step; K = 640 a full step plus a 32-partition one.
  expect_kernel_correct(run_mm(130, 700, 384, DType::kFloat4E2M1x4, DType::kFloat32));
  expect_kernel_correct(run_mm(2, 1, 640, DType::kFloat4E2M1x4, DType::kBFloat16));
}

TEST(MxMatmul, PerStepLoadsAndSmallBlocks) {
  // The stationary band not kept in SBUF (loaded per K step), scales per block, 1 x 1 blocks.
  expect_kernel_correct(
      run_mm(300, 600, 1024, DType::kFloat8E4M3x4, DType::kFloat32,
             {.block_m = 1, .block_n = 1, .hoist_a_scales = false, .a_band_budget_bytes = 0}));
  expect_kernel_correct(
      run_mm(256, 1100, 640, DType::kFloat8E5M2x4, DType::kBFloat16, {.a_band_budget_bytes = 0}));
}

TEST(MxMatmul, RegistryProblemAndCheckCanFail) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const Problem p = trn3_problem("matmul_mx", {256, 512, 1536}, DType::kFloat8E4M3x4);
  ProblemReport r = run_problem(p, chip);
  expect_kernel_correct(r);
  // A scale off by one (a factor of 2 on a block of 32 k) must fail the check.
  Problem wrong = p;
  wrong.inputs[1].mutable_bytes()[5] = static_cast<std::uint8_t>(wrong.inputs[1].bytes()[5] + 1);
  EXPECT_FALSE(check(wrong, r.launch.outputs).ok);
}

TEST(MxMatmul, ConsumesWhatMxQuantizeProduces) {
  // The operands of a matmul problem rebuilt on the simulator: quantise each BF16 source
  // Y [K/4, 4F] (Y[p, 4f + l] = X[4p + l, f]) with the mx_quantize kernel and feed its
  // outputs to matmul_mx; the product must pass the problem's check.
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const std::int64_t m = 128, n = 512, k = 1024;
  Problem mm =
      make_matmul_mx_problem(m, n, k, DType::kFloat8E4M3x4, {.out_dtype = DType::kFloat32});
  for (int op = 0; op < 2; ++op) {
    const std::int64_t f = op == 0 ? m : n;
    // Decoded operand values X [K, F] from the problem's inputs, laid out as Y.
    const std::vector<float> e = mm.inputs[static_cast<std::size_t>(2 * op)].to_floats();
    const std::vector<float> sc = mm.inputs[static_cast<std::size_t>(2 * op + 1)].to_floats();
    std::vector<float> y(static_cast<std::size_t>(k * f));
    for (std::int64_t p = 0; p < k / 4; ++p)
      for (std::int64_t c = 0; c < f; ++c)
        for (std::int64_t l = 0; l < 4; ++l) {
          const std::size_t i = static_cast<std::size_t>((p * f + c) * 4 + l);
          y[i] = std::ldexp(e[i],
                            static_cast<int>(sc[static_cast<std::size_t>((p / 8) * f + c)]) - 127);
        }
    Problem q = trn3_problem("mx_quantize", {k / 4, 4 * f}, DType::kFloat8E4M3x4);
    q.inputs[0] = runtime::HostTensor::from_floats("x", DType::kBFloat16, {k / 4, 4 * f}, y);
    const ProblemReport qr = run_problem(q, chip);
    expect_kernel_correct(qr);
    ASSERT_EQ(qr.launch.outputs.size(), 2u);
    // (Not the same bytes as the problem's inputs: a block whose largest element rounded up
    // to the next power of two re-quantises with a scale one code higher.)
    for (int t = 0; t < 2; ++t) {
      runtime::HostTensor h = qr.launch.outputs[static_cast<std::size_t>(t)];
      h.name = mm.inputs[static_cast<std::size_t>(2 * op + t)].name;
      h.dtype = mm.inputs[static_cast<std::size_t>(2 * op + t)].dtype;
      mm.inputs[static_cast<std::size_t>(2 * op + t)] = h;
    }
  }
  expect_kernel_correct(run_problem(mm, chip));
}

TEST(MxMatmul, Trn2HasNoMxMatmul) {
  const arch::ChipConfig chip = arch::load_preset("trn2");
  const Problem p =
      make_matmul_mx_problem(128, 512, 512, DType::kFloat8E4M3x4, {.out_dtype = DType::kFloat32});
  std::vector<kernel::TensorSpec> specs;
  for (const auto& t : p.inputs) specs.push_back(t.spec());
  try {
    runtime::build(p.fn, specs, chip);
    FAIL() << "matmul_mx built for trn2";
  } catch (const kernel::KernelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("mx.cpp"), std::string::npos) << what;  // names the kernel line
    EXPECT_NE(what.find("nc_matmul_mx"), std::string::npos) << what;
    EXPECT_NE(what.find("NeuronCore-v4"), std::string::npos) << what;
    EXPECT_NE(what.find("NeuronCore-v3"), std::string::npos) << what;
  }
}

TEST(MxMatmul, RejectsBadShapes) {
  EXPECT_THROW(
      make_matmul_mx_problem(128, 128, 100, DType::kFloat8E4M3x4, {.out_dtype = DType::kFloat32}),
      std::invalid_argument);
  EXPECT_THROW(
      make_matmul_mx_problem(127, 128, 128, DType::kFloat8E4M3x4, {.out_dtype = DType::kFloat32}),
      std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::kernels
