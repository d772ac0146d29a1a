// Tensor engine semantics: nc_matmul, nc_matmul_mx and the exact transposes.
//
// Numeric definition (docs/simulator.md, "Matmul numerics"):
//  - Inputs decode exactly to fp32. Each product a*b is formed in fp32: exact for every input
//    type of 16 bits or less (at most 11+11 significant bits, exponents well inside fp32's
//    range), and correctly rounded (RNE) for fp32 inputs.
//  - The K products of one output element are summed in fp32, in order k = 0, 1, ..., K-1,
//    starting from the first product (not from +0, so an all -0 sum stays -0). With
//    perf_mode double_row the contraction index is k = d * partitions + p (d = the major
//    free index of size 2).
//  - accumulate: dst = round(dst_old + sum), one fp32 addition; a bf16 dst is upcast
//    (exact), added in fp32, then rounded to bf16 with the instruction's rounding mode.
//    overwrite: dst = round(sum).
// The kernel (contract_rows) streams the contraction rows in order over register blocks,
// vectorised across n: every element keeps its summation order (n are independent), so
// results do not depend on the vector width. The library is built with -ffp-contract=off;
// a multiply-add is fused only where every product is exact (see contract_rows).
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "isa/validate.h"
#include "numerics/numerics.h"
#include "sim/access.h"
#include "sim/ops_executor.h"

namespace trnsim::sim {

namespace {

// The contraction kernel. out[m][n] = sum over rows r of a_rows[r][m] * b_rows[r][n], in
// row order, starting from the r = 0 product. Each output element's arithmetic is exactly
// that sequence of fp32 multiplies and adds whatever the blocking or vector width: blocks
// only choose which independent elements are computed together. The register block
// (kBlockM rows x kBlockN columns) keeps the accumulators in vector registers while the
// rows stream through; the moving panel [rows x kBlockN] stays in L1 across the m blocks.
//
// Two variants give the same bits. The unfused one multiplies, rounds, then adds (the
// library is built with -ffp-contract=off so the compiler never fuses them). The fused one
// computes fma(a, b, acc) = round(a*b + acc), which equals round(round(a*b) + acc) whenever
// every product a*b is exact in fp32; the caller checks that (products_exact_in_fp32) before
// choosing it. Each is built for several instruction sets, chosen at run time.
// The register block: kBlockM rows x kVectors vectors of W floats of accumulators, held in
// vector registers (GCC's vector extensions) while the rows stream through. Sizes per
// instruction set, measured on the development VM (BENCHMARKS.md): AVX-512 12 x 2 zmm (24 of
// its 32 registers), AVX2 6 x 2 ymm (12 of 16), the baseline 6 x 2 xmm. Rows past the last
// whole block run one at a time, columns past the last whole block element by element: the
// same sequence of operations for every element either way.
//
// The fused variant is the unfused code compiled with fp-contract=fast, so that each
// acc + a * b may become one fma; the caller picks it only when every product is exact
// (products_exact_in_fp32), where fma(a, b, acc) and acc + round(a * b) are the same number.
template <class Vec, std::uint64_t W, std::uint64_t kBlockM, std::uint64_t kVectors>
[[gnu::always_inline]] inline void contract_block(const float* const* a_rows,
                                                  const float* const* b_rows, std::uint64_t rows,
                                                  std::uint64_t m0, std::uint64_t n0,
                                                  std::uint64_t n_count, float* out) {
  Vec acc[kBlockM][kVectors];
  for (std::uint64_t v = 0; v < kVectors; ++v) {
    Vec b;
    std::memcpy(&b, b_rows[0] + n0 + v * W, sizeof b);
    for (std::uint64_t i = 0; i < kBlockM; ++i) acc[i][v] = a_rows[0][m0 + i] * b;
  }
  for (std::uint64_t r = 1; r < rows; ++r) {
    Vec b[kVectors];
    for (std::uint64_t v = 0; v < kVectors; ++v)
      std::memcpy(&b[v], b_rows[r] + n0 + v * W, sizeof(Vec));
    for (std::uint64_t i = 0; i < kBlockM; ++i) {
      const float a = a_rows[r][m0 + i];
      for (std::uint64_t v = 0; v < kVectors; ++v) acc[i][v] = acc[i][v] + a * b[v];
    }
  }
  for (std::uint64_t i = 0; i < kBlockM; ++i)
    std::memcpy(out + (m0 + i) * n_count + n0, acc[i], sizeof(acc[i]));
}

template <class Vec, std::uint64_t W, std::uint64_t kBlockM, std::uint64_t kVectors>
[[gnu::always_inline]] inline void contract_rows_body(const float* const* a_rows,
                                                      const float* const* b_rows,
                                                      std::uint64_t rows, std::uint64_t m_count,
                                                      std::uint64_t n_count, float* out) {
  constexpr std::uint64_t kBlockN = W * kVectors;
  const std::uint64_t n_whole = n_count / kBlockN * kBlockN;
  const std::uint64_t m_whole = m_count / kBlockM * kBlockM;
  for (std::uint64_t n0 = 0; n0 < n_whole; n0 += kBlockN) {
    for (std::uint64_t m0 = 0; m0 < m_whole; m0 += kBlockM)
      contract_block<Vec, W, kBlockM, kVectors>(a_rows, b_rows, rows, m0, n0, n_count, out);
    for (std::uint64_t m0 = m_whole; m0 < m_count; ++m0)
      contract_block<Vec, W, 1, kVectors>(a_rows, b_rows, rows, m0, n0, n_count, out);
  }
  // The columns past the last whole block, element by element.
  for (std::uint64_t m = 0; m < m_count && n_whole < n_count; ++m) {
    float* o = out + m * n_count;
    const float a0 = a_rows[0][m];
    for (std::uint64_t j = n_whole; j < n_count; ++j) o[j] = a0 * b_rows[0][j];
    for (std::uint64_t r = 1; r < rows; ++r) {
      const float a = a_rows[r][m];
      for (std::uint64_t j = n_whole; j < n_count; ++j) o[j] = o[j] + a * b_rows[r][j];
    }
  }
}

using ContractFn = void (*)(const float* const*, const float* const*, std::uint64_t, std::uint64_t,
                            std::uint64_t, float*);
using Floats4 = float __attribute__((vector_size(16)));

// GCC's per-function fp-contract; other compilers keep the file's -ffp-contract=off (the
// fused variants then multiply and add apart, with the same bits).
#if defined(__GNUC__) && !defined(__clang__)
#define TRNSIM_FP_CONTRACT(mode) optimize(mode)
#else
#define TRNSIM_FP_CONTRACT(mode)
#endif

// One variant per (instruction set, fused or not); contract_rows picks (sim::simd_level).
#define TRNSIM_CONTRACT_VARIANT(name, target_isa, contract, Vec, W, block_m, vectors)          \
  __attribute__((target(target_isa), TRNSIM_FP_CONTRACT(contract))) void name(                 \
      const float* const* a_rows, const float* const* b_rows, std::uint64_t rows,              \
      std::uint64_t m_count, std::uint64_t n_count, float* out) {                              \
    contract_rows_body<Vec, W, block_m, vectors>(a_rows, b_rows, rows, m_count, n_count, out); \
  }
#if defined(__x86_64__)
using Floats8 = float __attribute__((vector_size(32)));
using Floats16 = float __attribute__((vector_size(64)));
TRNSIM_CONTRACT_VARIANT(contract_unfused_avx512, "avx512f", "fp-contract=off", Floats16, 16, 12, 2)
TRNSIM_CONTRACT_VARIANT(contract_fused_avx512, "avx512f,fma", "fp-contract=fast", Floats16, 16, 12,
                        2)
TRNSIM_CONTRACT_VARIANT(contract_unfused_avx2, "avx2", "fp-contract=off", Floats8, 8, 6, 2)
TRNSIM_CONTRACT_VARIANT(contract_fused_avx2, "avx2,fma", "fp-contract=fast", Floats8, 8, 6, 2)
#endif
#undef TRNSIM_CONTRACT_VARIANT
#undef TRNSIM_FP_CONTRACT

// The build's own instruction set (SSE2 on x86-64, NEON on Arm), never fused.
void contract_unfused_baseline(const float* const* a_rows, const float* const* b_rows,
                               std::uint64_t rows, std::uint64_t m_count, std::uint64_t n_count,
                               float* out) {
  contract_rows_body<Floats4, 4, 6, 2>(a_rows, b_rows, rows, m_count, n_count, out);
}

// `products_exact`: every a*b is exact in fp32 (see above), so the fused kernel may be used
// (the baseline has no fused multiply-add: it runs the unfused one, with the same bits).
void contract_rows(const float* const* a_rows, const float* const* b_rows, std::uint64_t rows,
                   std::uint64_t m_count, std::uint64_t n_count, float* out, bool products_exact) {
  if (rows == 0) return;
  ContractFn fn = contract_unfused_baseline;
#if defined(__x86_64__)
  switch (simd_level()) {
    case SimdLevel::kAvx512:
      fn = products_exact ? contract_fused_avx512 : contract_unfused_avx512;
      break;
    case SimdLevel::kAvx2:
      fn = products_exact ? contract_fused_avx2 : contract_unfused_avx2;
      break;
    case SimdLevel::kBaseline:
      break;
  }
#endif
  fn(a_rows, b_rows, rows, m_count, n_count, out);
}

// Smallest non-zero and largest magnitude of a set of fp32 values, from their bit patterns
// (for non-negative floats the bit order is the value order), in a loop the compiler
// vectorises (32-bit min/max need SSE4.1, hence the clones). Returns false if any value is
// NaN or infinite.
#if defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
bool magnitude_range(
    const std::vector<float>& values, double& lo, double& hi) {
  // min(magnitude - 1) skips zeros without a branch: 0 - 1 wraps to the largest value.
  std::uint32_t lo_minus_one = 0xFFFFFFFFu, hi_bits = 0;
  const float* data = values.data();
  const std::size_t size = values.size();
  for (std::size_t i = 0; i < size; ++i) {
    const std::uint32_t magnitude = std::bit_cast<std::uint32_t>(data[i]) & 0x7FFFFFFFu;
    hi_bits = std::max(hi_bits, magnitude);
    lo_minus_one = std::min(lo_minus_one, magnitude - 1u);
  }
  if (hi_bits >= 0x7F800000u) return false;
  hi = std::bit_cast<float>(hi_bits);
  lo = lo_minus_one == 0xFFFFFFFFu ? std::numeric_limits<double>::infinity()
                                   : std::bit_cast<float>(lo_minus_one + 1u);
  return true;
}

// True when every product of a value of `a` and a value of `b` is exactly representable as
// a normal fp32 number (or zero), given that the values have at most `significant_bits`
// bits each (so a product has at most twice that): it must not overflow nor fall below
// fp32's normal range.
bool products_exact_in_fp32(const std::vector<float>& a, const std::vector<float>& b,
                            int significant_bits) {
  if (2 * significant_bits > std::numeric_limits<float>::digits) return false;
  double a_lo, a_hi, b_lo, b_hi;
  if (!magnitude_range(a, a_lo, a_hi) || !magnitude_range(b, b_lo, b_hi)) return false;
  if (a_hi == 0.0 || b_hi == 0.0) return true;  // every product is zero
  const double float_max = std::numeric_limits<float>::max();
  const double float_min_normal = std::numeric_limits<float>::min();
  return a_lo >= float_min_normal && b_lo >= float_min_normal && a_hi * b_hi < float_max &&
         a_lo * b_lo >= float_min_normal;
}

// Significant bits of a matmul input type; fp32 and tf32 (whose storage may carry more bits
// than tf32 keeps) count as 24, more than a product can keep exact.
int significant_bits(numerics::DType t) {
  switch (t) {
    case numerics::DType::kBFloat16:
      return 8;
    case numerics::DType::kFloat16:
      return 11;
    case numerics::DType::kFloat8E4M3:
    case numerics::DType::kFloat8E4M3Ieee:
      return 4;
    case numerics::DType::kFloat8E5M2:
      return 3;
    default:
      return 24;
  }
}

// dst[M, N] = stationary^T moving, summed over `slices` x K rows as described above.
// stationary: K rows of slices*M values; moving: K rows of slices*N values. Contraction row
// r = d * K + k.
std::vector<float> contract(const Tile& stationary, numerics::DType stationary_type,
                            const Tile& moving, numerics::DType moving_type, std::uint32_t slices,
                            std::uint64_t m_count, std::uint64_t n_count) {
  std::vector<float> out(m_count * n_count, 0.0f);
  const std::uint32_t k_count = stationary.partitions;
  const std::uint64_t rows = std::uint64_t{slices} * k_count;
  if (rows == 0) return out;
  const bool exact = products_exact_in_fp32(
      stationary.values, moving.values,
      std::max(significant_bits(stationary_type), significant_bits(moving_type)));
  std::vector<const float*> a_rows(rows), b_rows(rows);
  for (std::uint32_t d = 0; d < slices; ++d)
    for (std::uint32_t k = 0; k < k_count; ++k) {
      a_rows[d * k_count + k] = stationary.values.data() + k * stationary.free + d * m_count;
      b_rows[d * k_count + k] = moving.values.data() + k * moving.free + d * n_count;
    }
  contract_rows(a_rows.data(), b_rows.data(), rows, m_count, n_count, out.data(), exact);
  return out;
}

// Writes a matmul result into PSUM, accumulating onto what is there if asked.
void write_result(const isa::AccessPattern& dst, isa::AccumulateMode mode, std::uint64_t m_count,
                  std::uint64_t n_count, std::vector<float> sum, CoreOperandIO& io) {
  if (dst.partitions != m_count || free_element_count(dst) != n_count)
    io.fail(fmt::format("dst is [{}, {}] but the product is [{}, {}]", dst.partitions,
                        free_element_count(dst), m_count, n_count));
  Tile result;
  result.partitions = static_cast<std::uint32_t>(m_count);
  result.free = n_count;
  result.values = std::move(sum);
  if (mode == isa::AccumulateMode::kAccumulate) {
    const Tile old = io.load(dst);
    for (std::size_t i = 0; i < result.values.size(); ++i) result.values[i] += old.values[i];
  }
  io.store(dst, result);
}

// Exact transpose of a [P, F] operand into [F, P], moved as isa::transpose_move says (the
// rule the validator checks): the bits, 1-byte types zero-extended into 2-byte words (FP8
// transposes, upper byte 0), or narrower floats converted into fp32 by value.
void transpose_storage(const isa::AccessPattern& dst, const isa::AccessPattern& src,
                       CoreOperandIO& io) {
  const std::uint32_t p_count = src.partitions;
  const std::uint64_t f_count = free_element_count(src);
  if (dst.partitions != f_count || free_element_count(dst) != p_count)
    io.fail(fmt::format("transpose of a [{}, {}] operand needs a [{}, {}] dst, got [{}, {}]",
                        p_count, f_count, f_count, p_count, dst.partitions,
                        free_element_count(dst)));
  const std::optional<isa::TransposeMove> move = isa::transpose_move(src.dtype, dst.dtype);
  if (!move)
    io.fail(fmt::format("transpose from {} to {} is not an exact move", numerics::name(src.dtype),
                        numerics::name(dst.dtype)));
  if (*move == isa::TransposeMove::kConvert) {
    const Tile in = io.load(src);
    Tile out;
    out.partitions = static_cast<std::uint32_t>(f_count);
    out.free = p_count;
    out.values.resize(in.values.size());
    for (std::uint32_t p = 0; p < p_count; ++p)
      for (std::uint64_t f = 0; f < f_count; ++f)
        out.values[f * p_count + p] = in.values[p * f_count + f];
    io.store(dst, out);
    return;
  }
  const std::size_t in_size = element_bytes(src), out_size = element_bytes(dst);
  const std::vector<std::uint8_t> in = io.load_bytes(src);
  std::vector<std::uint8_t> out(f_count * p_count * out_size, 0);
  for (std::uint32_t p = 0; p < p_count; ++p)
    for (std::uint64_t f = 0; f < f_count; ++f)
      std::memcpy(out.data() + (f * p_count + p) * out_size,
                  in.data() + (p * f_count + f) * in_size, in_size);
  io.store_bytes(dst, out);
}

}  // namespace

void execute_op(const isa::NcMatmul& op, CoreOperandIO& io) {
  if (op.is_transpose) {
    // Transpose mode passes the stationary through the array against an identity moving
    // tensor: the result is stationary^T, moved bit-exactly. The moving operand still has to
    // be valid, readable data (it is read by the hardware).
    io.load_bytes(op.moving);
    if (op.accumulate == isa::AccumulateMode::kAccumulate)
      io.fail("is_transpose cannot accumulate");
    transpose_storage(op.dst, op.stationary, io);
    return;
  }
  const std::uint32_t slices = op.perf_mode == isa::MatmulPerfMode::kDoubleRow ? 2 : 1;
  if (op.stationary.partitions != op.moving.partitions)
    io.fail(fmt::format("stationary has {} partitions and moving {}: K must match",
                        op.stationary.partitions, op.moving.partitions));
  const std::uint64_t stationary_free = free_element_count(op.stationary);
  const std::uint64_t moving_free = free_element_count(op.moving);
  if (stationary_free % slices != 0 || moving_free % slices != 0)
    io.fail("double_row needs stationary and moving free sizes that are multiples of 2");
  const Tile stationary = io.load(op.stationary);
  const Tile moving = io.load(op.moving);
  const std::uint64_t m_count = stationary_free / slices, n_count = moving_free / slices;
  write_result(
      op.dst, op.accumulate, m_count, n_count,
      contract(stationary, op.stationary.dtype, moving, op.moving.dtype, slices, m_count, n_count),
      io);
}

void execute_op(const isa::NcTranspose& op, CoreOperandIO& io) {
  transpose_storage(op.dst, op.data, io);
}

namespace {

// An x4-packed MX operand dequantised exactly into doubles: K = 4 * partitions rows (row
// k = 4p + lane) of `columns` values; value = element * 2^(scale - 127), NaN for scale 0xFF.
// Every MX element has at most 4 significant bits and the scale is a power of two, so the
// doubles are exact and so is the product of two of them (<= 8 bits, exponent within
// +-300).
template <class T>
std::vector<T> dequantize_operand(const isa::AccessPattern& data, const isa::AccessPattern& scale,
                                  CoreOperandIO& io, std::uint64_t& columns) {
  if (!numerics::is_mx_packed(data.dtype))
    io.fail(fmt::format("operand '{}' must be an x4-packed MX type, not {}", io.operand_name(data),
                        numerics::name(data.dtype)));
  if (element_bytes(scale) != 1)
    io.fail(
        fmt::format("scale operand '{}' must be float8_e8m0fnu or uint8", io.operand_name(scale)));
  const std::uint32_t p_count = data.partitions;
  columns = free_element_count(data);
  const std::uint64_t scale_columns = free_element_count(scale);
  if (scale_columns != columns)
    io.fail(fmt::format("scale '{}' has {} columns, its data {}", io.operand_name(scale),
                        scale_columns, columns));
  // Scale rows used by data partition p: quadrant base + (p mod 32) / 8. The highest one
  // needed must exist in the scale operand.
  const auto scale_row = [](std::uint32_t p) { return (p / 32) * 32 + (p % 32) / 8; };
  if (p_count > 0 && scale_row(p_count - 1) >= scale.partitions)
    io.fail(fmt::format("scale '{}' has {} partitions; {} data partitions need {}",
                        io.operand_name(scale), scale.partitions, p_count,
                        scale_row(p_count - 1) + 1));

  const std::vector<std::uint8_t> words = io.load_bytes(data);
  std::vector<std::uint8_t> codes(words.size() / element_bytes(data) * 4);
  numerics::unpack_x4(data.dtype, std::as_bytes(std::span(words)), codes);
  // Only the scale rows in use are read: the other 28 rows of each quadrant may be
  // unwritten or hold other operands' scales.
  std::vector<std::uint8_t> scales(std::uint64_t{scale.partitions} * scale_columns, 0);
  for (std::uint32_t p = 0; p < p_count; p += 8) {
    const std::vector<std::uint8_t> row = io.load_bytes(row_of(scale, scale_row(p)));
    std::copy(row.begin(), row.end(), scales.begin() + scale_row(p) * scale_columns);
  }

  const numerics::DType element = numerics::unpacked_element(data.dtype);
  double value_of_code[256];
  for (int c = 0; c < 256; ++c)
    value_of_code[c] = numerics::decode(element, static_cast<std::uint32_t>(c));
  double value_of_scale[256];
  for (int e = 0; e < 256; ++e)
    value_of_scale[e] =
        e == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, e - 127);

  std::vector<T> out(std::uint64_t{4} * p_count * columns);
  for (std::uint32_t p = 0; p < p_count; ++p) {
    const std::uint8_t* scale_codes = scales.data() + scale_row(p) * scale_columns;
    for (std::uint64_t c = 0; c < columns; ++c) {
      const double factor = value_of_scale[scale_codes[c]];
      for (std::uint32_t lane = 0; lane < 4; ++lane)
        out[(std::uint64_t{4} * p + lane) * columns + c] =
            static_cast<T>(value_of_code[codes[(p * columns + c) * 4 + lane]] * factor);
    }
  }
  return out;
}

}  // namespace

void execute_op(const isa::NcMatmulMx& op, CoreOperandIO& io) {
  if (op.stationary.partitions != op.moving.partitions)
    io.fail(fmt::format("stationary has {} partitions and moving {}: K must match",
                        op.stationary.partitions, op.moving.partitions));
  std::uint64_t m_count = 0, n_count = 0;
  const std::uint64_t k_count = std::uint64_t{4} * op.stationary.partitions;
  // Each product is exact in double and rounded once to fp32; the sum runs in fp32 over
  // k = 4p + lane in increasing order (partition-major, packed lane minor).
  //
  // Fast path: dequantise straight to fp32. A value is then exact unless it overflows fp32
  // (it reads as Inf): MX values have at most 4 significant bits and are at least 2^-143
  // in magnitude (E5M2 subnormal x 2^-127), so fp32 subnormals hold them exactly. When, in
  // addition, every product is a normal fp32 number, the fp32 kernel gives the documented
  // bits.
  const std::vector<float> a =
      dequantize_operand<float>(op.stationary, op.stationary_scale, io, m_count);
  const std::vector<float> b = dequantize_operand<float>(op.moving, op.moving_scale, io, n_count);
  std::vector<float> sum(m_count * n_count, 0.0f);
  if (products_exact_in_fp32(a, b, 4)) {
    std::vector<const float*> a_rows(k_count), b_rows(k_count);
    for (std::uint64_t k = 0; k < k_count; ++k) {
      a_rows[k] = a.data() + k * m_count;
      b_rows[k] = b.data() + k * n_count;
    }
    contract_rows(a_rows.data(), b_rows.data(), k_count, m_count, n_count, sum.data(), true);
  } else {
    const std::vector<double> stationary =
        dequantize_operand<double>(op.stationary, op.stationary_scale, io, m_count);
    const std::vector<double> moving =
        dequantize_operand<double>(op.moving, op.moving_scale, io, n_count);
    for (std::uint64_t m = 0; m < m_count; ++m) {
      float* acc = sum.data() + m * n_count;
      for (std::uint64_t k = 0; k < k_count; ++k) {
        const double s = stationary[k * m_count + m];
        const double* row = moving.data() + k * n_count;
        if (k == 0) {
          for (std::uint64_t n = 0; n < n_count; ++n) acc[n] = static_cast<float>(s * row[n]);
        } else {
          for (std::uint64_t n = 0; n < n_count; ++n) acc[n] += static_cast<float>(s * row[n]);
        }
      }
    }
  }
  write_result(op.dst, op.accumulate, m_count, n_count, std::move(sum), io);
}

}  // namespace trnsim::sim
