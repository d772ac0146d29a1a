// Tensor engine semantics against references written independently of the simulator: own
// decoders for each input format, a scalar loop per output element, products formed in
// double (exact for these inputs) and the documented fp32 summation order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "isa/validate.h"
#include "sim/tests/test_util.h"

namespace trnsim::sim::testing {
namespace {

// ---- Independent decoders ------------------------------------------------------------

float decode_fp16(std::uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  double v = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  return static_cast<float>(sign ? -v : v);
}

// OCP E4M3 (fn): bias 7, subnormals, no Inf, 0x7F/0xFF NaN.
float decode_e4m3(std::uint8_t c) {
  const int sign = c >> 7, exponent = (c >> 3) & 0xF, mantissa = c & 7;
  if (exponent == 15 && mantissa == 7) return std::numeric_limits<float>::quiet_NaN();
  double v = exponent == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, exponent - 10);
  return static_cast<float>(sign ? -v : v);
}

// OCP E2M1: bias 1, one subnormal (0.5).
float decode_e2m1(std::uint8_t c) {
  const int sign = (c >> 3) & 1, exponent = (c >> 1) & 3, mantissa = c & 1;
  double v = exponent == 0 ? 0.5 * mantissa : std::ldexp(2 + mantissa, exponent - 2);
  return static_cast<float>(sign ? -v : v);
}

// A random matrix of raw codes of `dtype` (finite values, moderate exponents) and its values.
struct Matrix {
  std::vector<std::uint8_t> bytes;
  std::vector<float> values;
};

// bf16 biased exponents are drawn from [bf16_exponent_lo, bf16_exponent_lo + span).
Matrix random_matrix(DType dtype, std::size_t count, TestRng& rng,
                     std::uint32_t bf16_exponent_lo = 120, std::uint32_t bf16_exponent_span = 16) {
  Matrix m;
  m.values.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t r = rng.next();
    switch (dtype) {
      case DType::kFloat32: {
        const float v = std::ldexp(static_cast<float>(static_cast<std::int32_t>(r)), -31);
        const auto bits = f32_bits(v);
        m.bytes.insert(m.bytes.end(), {std::uint8_t(bits), std::uint8_t(bits >> 8),
                                       std::uint8_t(bits >> 16), std::uint8_t(bits >> 24)});
        m.values[i] = v;
        break;
      }
      case DType::kBFloat16: {
        // by default exponent 120..135 (values ~2^-7..2^8), random sign and mantissa
        const auto code = static_cast<std::uint16_t>(
            ((r >> 31) << 15) | ((bf16_exponent_lo + (r >> 7) % bf16_exponent_span) << 7) |
            (r & 0x7F));
        m.bytes.insert(m.bytes.end(), {std::uint8_t(code), std::uint8_t(code >> 8)});
        m.values[i] = bf16_to_f32(code);
        break;
      }
      case DType::kFloat16: {
        const auto code = static_cast<std::uint16_t>(((r >> 31) << 15) |
                                                     ((8 + (r >> 10) % 16) << 10) | (r & 0x3FF));
        m.bytes.insert(m.bytes.end(), {std::uint8_t(code), std::uint8_t(code >> 8)});
        m.values[i] = decode_fp16(code);
        break;
      }
      case DType::kFloat8E4M3: {
        std::uint8_t code = static_cast<std::uint8_t>(r);
        if ((code & 0x7F) == 0x7F) code = 0x3F;  // avoid NaN
        m.bytes.push_back(code);
        m.values[i] = decode_e4m3(code);
        break;
      }
      default:
        ADD_FAILURE() << "unsupported test dtype";
    }
  }
  return m;
}

// Reference of the documented numerics: per output element, fp32 sum over k in order,
// starting from the first product; products exact in double then rounded to fp32.
float reference_dot(const float* a, const float* b, std::size_t k_count, std::size_t a_stride,
                    std::size_t b_stride) {
  float sum = 0;
  for (std::size_t k = 0; k < k_count; ++k) {
    const float p = static_cast<float>(static_cast<double>(a[k * a_stride]) * b[k * b_stride]);
    sum = k == 0 ? p : sum + p;
  }
  return sum;
}

struct MatmulCase {
  DType in = DType::kBFloat16;
  DType out = DType::kFloat32;
  std::uint32_t k = 128, m = 128, n = 512;
  std::uint32_t k_start = 0;
  std::int64_t moving_step = 1;  // 0 = broadcast of one element per row
  bool accumulate = false;
  std::uint32_t bf16_exponent_lo = 120, bf16_exponent_span = 16;
};

void run_matmul_case(const MatmulCase& c) {
  SCOPED_TRACE(::testing::Message()
               << numerics::name(c.in) << "->" << numerics::name(c.out) << " K=" << c.k
               << " M=" << c.m << " N=" << c.n << " k_start=" << c.k_start
               << " step=" << c.moving_step << " acc=" << c.accumulate);
  Device device(trn3());
  Core& core = device.core(0);
  TestRng rng(c.k * 7 + c.m * 3 + c.n + static_cast<std::uint64_t>(c.in));
  const std::size_t moving_span =
      c.moving_step == 0 ? 1 : (c.n - 1) * static_cast<std::size_t>(c.moving_step) + 1;
  const Matrix stationary =
      random_matrix(c.in, std::size_t{c.k} * c.m, rng, c.bf16_exponent_lo, c.bf16_exponent_span);
  const Matrix moving = random_matrix(c.in, std::size_t{c.k} * moving_span, rng, c.bf16_exponent_lo,
                                      c.bf16_exponent_span);
  const std::uint64_t moving_offset = 64 * 1024;
  fill_onchip(core, isa::Memory::kSbuf, c.k_start, c.k, 0, stationary.bytes);
  fill_onchip(core, isa::Memory::kSbuf, c.k_start, c.k, moving_offset, moving.bytes);

  const std::size_t out_size = numerics::storage_bytes(c.out);
  std::vector<float> old(std::size_t{c.m} * c.n, 0.0f);
  if (c.accumulate) {
    std::vector<std::uint8_t> bytes;
    for (auto& v : old) {
      v = rng.uniform(-4, 4);
      if (c.out == DType::kBFloat16) {
        const std::uint16_t b = f32_to_bf16_rne(v);
        v = bf16_to_f32(b);
        bytes.insert(bytes.end(), {std::uint8_t(b), std::uint8_t(b >> 8)});
      } else {
        const std::uint32_t b = f32_bits(v);
        bytes.insert(bytes.end(), {std::uint8_t(b), std::uint8_t(b >> 8), std::uint8_t(b >> 16),
                                   std::uint8_t(b >> 24)});
      }
    }
    fill_onchip(core, isa::Memory::kPsum, 0, c.m, 2048, bytes);
  }

  isa::NcMatmul mm;
  mm.stationary = sbuf(c.in, c.k_start, c.k, 0, {{1, c.m}});
  mm.moving = sbuf(c.in, c.k_start, c.k, moving_offset, {{c.moving_step, c.n}});
  mm.dst = psum(c.out, 0, c.m, 2048, {{1, c.n}});
  mm.accumulate = c.accumulate ? isa::AccumulateMode::kAccumulate : isa::AccumulateMode::kOverwrite;
  isa::Program program;
  program.instructions.push_back(make(tensor_q(), mm));
  run(device, program);

  const auto out = read_rows(core, isa::Memory::kPsum, 0, c.m, 2048, std::size_t{c.n} * out_size);
  for (std::uint32_t m = 0; m < c.m; ++m) {
    for (std::uint32_t n = 0; n < c.n; ++n) {
      const std::size_t b_index = static_cast<std::size_t>(c.moving_step) * n;
      float expected = reference_dot(stationary.values.data() + m, moving.values.data() + b_index,
                                     c.k, c.m, moving_span);
      if (c.accumulate) expected = old[std::size_t{m} * c.n + n] + expected;
      const std::size_t at = (std::size_t{m} * c.n + n) * out_size;
      if (c.out == DType::kBFloat16) {
        const std::uint16_t got = static_cast<std::uint16_t>(out[at] | (out[at + 1] << 8));
        ASSERT_EQ(got, f32_to_bf16_rne(expected)) << "m=" << m << " n=" << n;
      } else {
        std::uint32_t got = 0;
        std::memcpy(&got, out.data() + at, 4);
        ASSERT_EQ(got, f32_bits(expected)) << "m=" << m << " n=" << n << " expected " << expected
                                           << " got " << std::bit_cast<float>(got);
      }
    }
  }
}

TEST(Matmul, Bf16FullTileMatchesReferenceBitExact) {
  run_matmul_case({});
}

// Products that overflow fp32 or fall below its normal range: the result must still be each
// product rounded on its own, then the ordered sum (no fused multiply-add shortcut).
TEST(Matmul, Bf16ProductsOutsideTheNormalRange) {
  run_matmul_case({.k = 32, .m = 32, .n = 64, .bf16_exponent_lo = 1, .bf16_exponent_span = 254});
  run_matmul_case({.k = 32, .m = 32, .n = 64, .bf16_exponent_lo = 190, .bf16_exponent_span = 64});
  run_matmul_case({.k = 32, .m = 32, .n = 64, .bf16_exponent_lo = 1, .bf16_exponent_span = 64});
}

// Each instruction set's kernel (register blocks of their own sizes, fused multiply-add only
// where exact) gives the reference's bits, edge blocks included (M and N that no block
// divides). Levels above the host's run the host's.
TEST(Matmul, EveryVectorLevelMatchesTheReference) {
  struct Restore {
    ~Restore() { limit_simd(std::nullopt); }
  } restore;
  const SimdLevel host = simd_level();
  for (const SimdLevel level : {SimdLevel::kBaseline, SimdLevel::kAvx2, SimdLevel::kAvx512}) {
    limit_simd(level);
    ASSERT_EQ(simd_level(), std::min(level, host));
    SCOPED_TRACE(std::string(simd_level_name(simd_level())));
    run_matmul_case({});                            // bf16: the fused kernel, whole blocks
    run_matmul_case({.k = 64, .m = 37, .n = 100});  // the fused kernel's edge rows and columns
    run_matmul_case({.in = DType::kFloat32, .k = 64, .m = 37, .n = 100});  // unfused, edges
    run_matmul_case({.k = 32, .m = 30, .n = 70, .bf16_exponent_lo = 1, .bf16_exponent_span = 254});
  }
}

TEST(Matmul, Fp32InputsRoundEachProduct) {
  run_matmul_case({.in = DType::kFloat32, .k = 64, .m = 32, .n = 128});
}

TEST(Matmul, Fp16AndFp8Inputs) {
  run_matmul_case({.in = DType::kFloat16, .k = 128, .m = 64, .n = 256});
  run_matmul_case({.in = DType::kFloat8E4M3, .k = 128, .m = 128, .n = 128});
}

TEST(Matmul, PartitionOffsetsStridedAndBroadcastMoving) {
  run_matmul_case({.k = 32, .m = 16, .n = 64, .k_start = 32});
  run_matmul_case({.k = 64, .m = 8, .n = 100, .k_start = 64, .moving_step = 2});
  run_matmul_case({.k = 32, .m = 8, .n = 16, .k_start = 96, .moving_step = 0});
}

TEST(Matmul, AccumulateOntoFp32AndBf16Psum) {
  run_matmul_case({.k = 128, .m = 64, .n = 128, .accumulate = true});
  run_matmul_case({.out = DType::kBFloat16, .k = 128, .m = 64, .n = 128});
  run_matmul_case({.out = DType::kBFloat16, .k = 64, .m = 32, .n = 64, .accumulate = true});
}

TEST(Matmul, SmallIntegerValuedInputsAreExact) {
  // With small integers every partial sum is exact, so the result must equal the exact
  // (double) dot product whatever the order: a check that does not share the reference's
  // ordering assumption.
  Device device(trn3());
  Core& core = device.core(0);
  TestRng rng(5);
  const std::uint32_t k = 128, m = 16, n = 32;
  std::vector<std::uint16_t> a(k * m), b(k * n);
  std::vector<double> av(a.size()), bv(b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    av[i] = rng.integer(-8, 8), a[i] = f32_to_bf16_rne(static_cast<float>(av[i]));
  for (std::size_t i = 0; i < b.size(); ++i)
    bv[i] = rng.integer(-8, 8), b[i] = f32_to_bf16_rne(static_cast<float>(bv[i]));
  fill_onchip(core, isa::Memory::kSbuf, 0, k, 0, to_bytes(a));
  fill_onchip(core, isa::Memory::kSbuf, 0, k, 1024, to_bytes(b));
  isa::NcMatmul mm;
  mm.stationary = sbuf(DType::kBFloat16, 0, k, 0, {{1, m}});
  mm.moving = sbuf(DType::kBFloat16, 0, k, 1024, {{1, n}});
  mm.dst = psum(DType::kFloat32, 0, m, 0, {{1, n}});
  isa::Program program;
  program.instructions.push_back(make(tensor_q(), mm));
  run(device, program);
  const auto out = from_bytes<float>(read_rows(core, isa::Memory::kPsum, 0, m, 0, n * 4));
  for (std::uint32_t i = 0; i < m; ++i)
    for (std::uint32_t j = 0; j < n; ++j) {
      double exact = 0;
      for (std::uint32_t kk = 0; kk < k; ++kk) exact += av[kk * m + i] * bv[kk * n + j];
      ASSERT_EQ(out[i * n + j], exact);
    }
}

// An is_transpose matmul of the [k, m] codes `data` of `in` (SBUF byte 0) against the k x k
// identity whose diagonal holds the code `one` (SBUF byte `identity_offset`), written to a
// [m, k] PSUM tile of `out` at byte 0.
template <class Code>
isa::NcMatmul transpose_matmul(Core& core, DType in, DType out, std::uint32_t k, std::uint32_t m,
                               const std::vector<Code>& data, Code one,
                               std::uint64_t identity_offset) {
  std::vector<Code> identity(std::size_t{k} * k, 0);
  for (std::uint32_t i = 0; i < k; ++i) identity[i * k + i] = one;
  fill_onchip(core, isa::Memory::kSbuf, 0, k, 0, to_bytes(data));
  fill_onchip(core, isa::Memory::kSbuf, 0, k, identity_offset, to_bytes(identity));
  isa::NcMatmul mm;
  mm.is_transpose = true;
  mm.stationary = sbuf(in, 0, k, 0, {{1, m}});
  mm.moving = sbuf(in, 0, k, identity_offset, {{1, k}});
  mm.dst = psum(out, 0, m, 0, {{1, k}});
  return mm;
}

TEST(Matmul, IsTransposeAndTensorTransposeAreBitExact) {
  Device device(trn3());
  Core& core = device.core(0);
  const std::uint32_t k = 32, m = 16;
  std::vector<std::uint16_t> data(k * m);
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<std::uint16_t>(0x7F81 + i * 977);  // incl. NaN payloads
  const isa::NcMatmul mm = transpose_matmul(core, DType::kBFloat16, DType::kBFloat16, k, m, data,
                                            std::uint16_t{0x3F80}, 4096);
  isa::NcTranspose tr;
  tr.data = sbuf(DType::kBFloat16, 0, k, 0, {{1, m}});
  tr.dst = psum(DType::kBFloat16, 0, m, 2048, {{1, k}});
  isa::Program program;
  program.instructions.push_back(make(tensor_q(), mm));
  program.instructions.push_back(make(tensor_q(), tr));
  run(device, program);
  for (std::uint64_t offset : {0u, 2048u}) {
    const auto out =
        from_bytes<std::uint16_t>(read_rows(core, isa::Memory::kPsum, 0, m, offset, k * 2));
    for (std::uint32_t i = 0; i < m; ++i)
      for (std::uint32_t j = 0; j < k; ++j) ASSERT_EQ(out[i * k + j], data[j * m + i]) << offset;
  }
}

TEST(Matmul, Fp8IsTransposeZeroExtendsToSixteenBits) {
  Device device(trn3());
  Core& core = device.core(0);
  const std::uint32_t p = 8, f = 4;
  std::vector<std::uint8_t> data(p * f);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(0x81 + 5 * i);
  const isa::NcMatmul mm = transpose_matmul(core, DType::kFloat8E4M3, DType::kBFloat16, p, f, data,
                                            std::uint8_t{0x38}, 64);  // 1.0 in E4M3
  isa::Program program;
  program.instructions.push_back(make(tensor_q(), mm));
  run(device, program);
  const auto out = from_bytes<std::uint16_t>(read_rows(core, isa::Memory::kPsum, 0, f, 0, p * 2));
  for (std::uint32_t i = 0; i < f; ++i)
    for (std::uint32_t j = 0; j < p; ++j) ASSERT_EQ(out[i * p + j], data[j * f + i]);
}

// Before NeuronCore-v3 a transpose goes through the array's fp32 datapath: a bf16 stationary
// into an fp32 PSUM dst is exact by value (isa::transpose_move says kConvert), and it both
// validates and runs (it once validated, then failed as "not a bit-exact move").
TEST(Matmul, Bf16IsTransposeIntoFp32OnTrn1ConvertsExactly) {
  const arch::ChipConfig chip = arch::load_preset("trn1");
  Device device(chip);
  Core& core = device.core(0);
  const std::uint32_t k = 16, m = 8;
  std::vector<std::uint16_t> data(k * m);
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<std::uint16_t>(0x3F00 + i * 37);  // finite values around 0.5..8
  const isa::NcMatmul mm = transpose_matmul(core, DType::kBFloat16, DType::kFloat32, k, m, data,
                                            std::uint16_t{0x3F80}, 4096);
  isa::Program program;
  program.instructions.push_back(make(tensor_q(), mm));
  EXPECT_TRUE(isa::check_instruction(program.instructions[0], 0, chip).empty());
  run(device, program);
  const auto out = from_bytes<std::uint32_t>(read_rows(core, isa::Memory::kPsum, 0, m, 0, k * 4));
  for (std::uint32_t i = 0; i < m; ++i)
    for (std::uint32_t j = 0; j < k; ++j)
      ASSERT_EQ(out[i * k + j], std::uint32_t{data[j * m + i]} << 16) << i << "," << j;
}

TEST(Matmul, TransposeMoveRule) {
  using isa::TransposeMove;
  EXPECT_EQ(isa::transpose_move(DType::kBFloat16, DType::kBFloat16), TransposeMove::kBits);
  EXPECT_EQ(isa::transpose_move(DType::kFloat8E4M3, DType::kBFloat16), TransposeMove::kZeroExtend);
  EXPECT_EQ(isa::transpose_move(DType::kBFloat16, DType::kFloat32), TransposeMove::kConvert);
  EXPECT_EQ(isa::transpose_move(DType::kFloat16, DType::kFloat32), TransposeMove::kConvert);
  EXPECT_EQ(isa::transpose_move(DType::kFloat32, DType::kBFloat16), std::nullopt);
  EXPECT_EQ(isa::transpose_move(DType::kFloat4E2M1x4, DType::kFloat32),
            std::nullopt);  // words, not values
  EXPECT_EQ(isa::transpose_move(DType::kFloat8E4M3x4, DType::kFloat32), TransposeMove::kBits);
}

// ---- MX ---------------------------------------------------------------------------------

struct MxCase {
  DType packed = DType::kFloat8E4M3x4;
  std::uint32_t partitions = 128, m = 16, n = 64;
  // E8M0 scale codes drawn from [scale_lo, scale_lo + scale_span).
  std::uint32_t scale_lo = 120, scale_span = 14;
};

void run_mx_case(const MxCase& c) {
  SCOPED_TRACE(numerics::name(c.packed));
  Device device(trn3());
  Core& core = device.core(0);
  TestRng rng(99 + c.partitions);
  const bool fp4 = c.packed == DType::kFloat4E2M1x4;
  const std::size_t word = fp4 ? 2 : 4;
  // Codes: element (p, col, lane) is K index 4p + lane.
  auto make_codes = [&](std::uint32_t cols) {
    std::vector<std::uint8_t> codes(std::size_t{c.partitions} * cols * 4);
    for (auto& code : codes) {
      code = static_cast<std::uint8_t>(rng.next() & (fp4 ? 0x0F : 0xFF));
      if (!fp4 && (code & 0x7F) == 0x7F) code = 0x01;
    }
    return codes;
  };
  auto pack = [&](const std::vector<std::uint8_t>& codes) {
    std::vector<std::uint8_t> bytes;
    for (std::size_t w = 0; w < codes.size() / 4; ++w) {
      if (fp4) {
        const auto v = static_cast<std::uint16_t>(codes[4 * w] | codes[4 * w + 1] << 4 |
                                                  codes[4 * w + 2] << 8 | codes[4 * w + 3] << 12);
        bytes.insert(bytes.end(), {std::uint8_t(v), std::uint8_t(v >> 8)});
      } else {
        bytes.insert(bytes.end(), codes.begin() + 4 * w, codes.begin() + 4 * w + 4);
      }
    }
    return bytes;
  };
  const auto s_codes = make_codes(c.m), m_codes = make_codes(c.n);
  fill_onchip(core, isa::Memory::kSbuf, 0, c.partitions, 0, pack(s_codes));
  fill_onchip(core, isa::Memory::kSbuf, 0, c.partitions, 8192, pack(m_codes));
  // Scales: only rows quadrant*32 + g (g < 4) are written, the rest stays uninitialised.
  std::vector<std::uint8_t> s_scale(std::size_t{c.partitions} * c.m),
      m_scale(std::size_t{c.partitions} * c.n);
  for (auto& s : s_scale) s = static_cast<std::uint8_t>(c.scale_lo + rng.next() % c.scale_span);
  for (auto& s : m_scale) s = static_cast<std::uint8_t>(c.scale_lo + rng.next() % c.scale_span);
  for (std::uint32_t p = 0; p < c.partitions; ++p) {
    if (p % 32 >= 4) continue;
    core.write_onchip(isa::Memory::kSbuf, p, 16384, std::span(s_scale).subspan(p * c.m, c.m));
    core.write_onchip(isa::Memory::kSbuf, p, 20480, std::span(m_scale).subspan(p * c.n, c.n));
  }
  isa::NcMatmulMx mm;
  mm.stationary = sbuf(c.packed, 0, c.partitions, 0, {{1, c.m}});
  mm.moving = sbuf(c.packed, 0, c.partitions, 8192, {{1, c.n}});
  mm.stationary_scale = sbuf(DType::kUInt8, 0, c.partitions, 16384, {{1, c.m}});
  mm.moving_scale = sbuf(DType::kUInt8, 0, c.partitions, 20480, {{1, c.n}});
  mm.dst = psum(DType::kFloat32, 0, c.m, 0, {{1, c.n}});
  isa::Program program;
  program.instructions.push_back(make(tensor_q(), mm));
  run(device, program);
  (void)word;

  // Reference: dequantise every element (value * 2^(scale-127)) into a dense [K, cols]
  // matrix first, then a plain dot product in the documented order.
  const std::uint32_t k_count = 4 * c.partitions;
  auto dequantize = [&](const std::vector<std::uint8_t>& codes,
                        const std::vector<std::uint8_t>& scales, std::uint32_t cols) {
    std::vector<double> out(std::size_t{k_count} * cols);
    for (std::uint32_t k = 0; k < k_count; ++k) {
      const std::uint32_t p = k / 4, lane = k % 4;
      const std::uint32_t scale_row = (p / 32) * 32 + (p % 32) / 8;
      for (std::uint32_t col = 0; col < cols; ++col) {
        const std::uint8_t code = codes[(std::size_t{p} * cols + col) * 4 + lane];
        const double element = fp4 ? decode_e2m1(code) : decode_e4m3(code);
        out[std::size_t{k} * cols + col] =
            std::ldexp(element, scales[scale_row * cols + col] - 127);
      }
    }
    return out;
  };
  const auto a = dequantize(s_codes, s_scale, c.m), b = dequantize(m_codes, m_scale, c.n);
  const auto out = from_bytes<float>(read_rows(core, isa::Memory::kPsum, 0, c.m, 0, c.n * 4));
  for (std::uint32_t i = 0; i < c.m; ++i)
    for (std::uint32_t j = 0; j < c.n; ++j) {
      float sum = 0;
      for (std::uint32_t k = 0; k < k_count; ++k) {
        const float p =
            static_cast<float>(a[std::size_t{k} * c.m + i] * b[std::size_t{k} * c.n + j]);
        sum = k == 0 ? p : sum + p;
      }
      if (std::isnan(sum)) {
        ASSERT_TRUE(std::isnan(out[i * c.n + j])) << i << "," << j;
      } else {
        ASSERT_EQ(f32_bits(out[i * c.n + j]), f32_bits(sum)) << i << "," << j;
      }
    }
}

TEST(MatmulMx, Mxfp8MatchesDequantiseThenMatmul) {
  run_mx_case({});
}
// Scales far from 2^0: products overflow fp32 or fall below its normal range, where only
// rounding the exact (double) product once gives the documented result.
TEST(MatmulMx, ExtremeScalesRoundEachExactProductOnce) {
  run_mx_case({.scale_lo = 1, .scale_span = 253});
  run_mx_case({.scale_lo = 190, .scale_span = 64});
  run_mx_case({.scale_lo = 1, .scale_span = 30});
}
TEST(MatmulMx, Mxfp4MatchesDequantiseThenMatmul) {
  run_mx_case({.packed = DType::kFloat4E2M1x4, .partitions = 64, .m = 8, .n = 32});
}

}  // namespace
}  // namespace trnsim::sim::testing
