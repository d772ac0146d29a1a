// MX kernels (NeuronCore-v4): mx_quantize, mx_dequantize and matmul_mx. Layouts: mx.h.
//
// mx_quantize: 128-row tiles (rows on partitions, padded with zero rows to a multiple of
// 32 for quantize_mx), column chunks of up to 4096. quantize_mx writes the x4 words in place
// and the scales on partitions 32q + s (s < 4) of each quadrant q; the words go back to HBM
// in one DMA, the scales in one DMA per quadrant (4 partitions = HBM scale rows 4q .. 4q+3
// of the tile).
//
// mx_dequantize: the ISA has no MX decode outside the tensor engine (x4 types are raw words
// for DMA and Vector, quantize_mx is one-way), so the kernel decodes with Vector ops. The
// block rows go on partitions: partition g holds rows 8g .. 8g+7 (8 * C contiguous HBM
// bytes) and its scale row, so one scale serves 8 x 4 elements of its own partition. The
// words are read as plain fp8 bytes (view as float8_e4m3fn / float8_e5m2, lane i = byte i),
// the E8M0 code s becomes the fp32 bits s << 23 (= 2^(s-127)) with two fix-ups: s = 0 is the
// subnormal 2^-127 (bits 0x00400000) and s = 255 is NaN (0x7FC00000), both by OR-ing
// 0x00400000 where |s - 127.5| >= 127. One tensor_tensor multiplies the decoded elements by
// the scale broadcast over 8 rows x 4 lanes. Every MX value is exact in fp32, so the output
// is exact.
//
// matmul_mx: the blocked structure of kernels/matmul.cpp with 512-deep contraction steps
// (128 partitions x 4 packed values). A block of block_m x block_n output tiles (128 x 512
// each, one PSUM bank) accumulates over all of K; each step loads a [128, block_m * 128] word
// slice of a and a [128, block_n * 512] slice of b, and every stationary tile streams
// block_n moving tiles. The scales of a whole block (all K steps) are loaded once per
// operand with one DMA per quadrant: scale tile [128, k_steps, cols] with partition 32q + s,
// step t <- HBM scale row 16t + 4q + s.
#include "kernels/mx.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/tiling.h"
#include "numerics/numerics.h"

namespace trnsim::kernels {

namespace {

using isa::AluOp;

bool is_fp8_x4(DType t) {
  return t == DType::kFloat8E4M3x4 || t == DType::kFloat8E5M2x4;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// mx_quantize

std::vector<Tensor> mx_quantize(std::span<const Tensor> in, const MxQuantizeOptions& o) {
  require_inputs(in, {2}, "mx_quantize", "x [R, C]");
  if (!is_fp8_x4(o.packed))
    throw kernel::KernelError(
        {}, fmt::format("mx_quantize produces float8_e4m3fn_x4 or float8_e5m2_x4, "
                        "not {}",
                        numerics::name(o.packed)));
  const Tensor& x = in[0];
  const std::int64_t r_total = x.dim(0), c_total = x.dim(1);
  if (c_total % 4 != 0)
    throw kernel::KernelError({},
                              fmt::format("mx_quantize: C = {} must be a multiple of 4", c_total));
  const std::int64_t words_total = c_total / 4;
  Tensor data = nl::ndarray({r_total, words_total}, o.packed, nl::shared_hbm, "mx_data");
  Tensor scales =
      nl::ndarray({ceil_div(r_total, 8), words_total}, DType::kUInt8, nl::shared_hbm, "mx_scales");
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t pmax = nl::tile_size::pmax();
  // Each program of a logical core takes its share of the row tiles.
  for_each_owned(r_total, pmax, [&](std::int64_t r0) {
    const std::int64_t rows = std::min(pmax, r_total - r0);
    const std::int64_t prows = ceil_div(rows, 32) * 32;  // quantize_mx: multiple of 32
    for (std::int64_t c0 = 0; c0 < c_total; c0 += kChunk) {
      const std::int64_t cs = std::min(kChunk, c_total - c0), ws = cs / 4;
      Tensor src = nl::ndarray({prows, cs}, x.dtype(), nl::sbuf, "src");
      if (prows != rows) nisa::memset(src, 0.0f);  // zero rows: no effect on a block's amax
      nisa::dma_copy(src(nl::ds(0, rows), nl::all), x(nl::ds(r0, rows), nl::ds(c0, cs)),
                     {.name = "load x"});
      Tensor q = nl::ndarray({prows, ws}, o.packed, nl::sbuf, "q");
      Tensor s = nl::ndarray({prows, ws}, DType::kUInt8, nl::sbuf, "scale");
      nisa::quantize_mx(q, src, s);
      nisa::dma_copy(data(nl::ds(r0, rows), nl::ds(c0 / 4, ws)), q(nl::ds(0, rows), nl::all),
                     {.name = "store words"});
      for (std::int64_t quad = 0; quad * 32 < rows; ++quad) {
        const std::int64_t n = ceil_div(std::min<std::int64_t>(32, rows - quad * 32), 8);
        nisa::dma_copy(scales(nl::ds(r0 / 8 + quad * 4, n), nl::ds(c0 / 4, ws)),
                       s(nl::ds(quad * 32, n), nl::all), {.name = "store scales"});
      }
    }
  });
  return {data, scales};
}

// ---------------------------------------------------------------------------------------
// mx_dequantize

namespace {

// Rows [8 g0, 8 g0 + 8 gp) (or a tail group of `rows_per_group` < 8 rows when gp == 1),
// columns [c0, c0 + cs): data viewed as fp8 [.., C], out fp32 [.., C].
void dequantize_groups(const Tensor& data8, const Tensor& scales, const Tensor& out,
                       std::int64_t g0, std::int64_t gp, std::int64_t rows_per_group,
                       std::int64_t c0, std::int64_t cs) {
  const std::int64_t c_total = data8.dim(1), ws = cs / 4;
  const std::int64_t r0 = g0 * 8;
  const DType e8 = data8.dtype();
  Tensor d = nl::ndarray({gp, rows_per_group, cs}, e8, nl::sbuf, "elems");
  Tensor dst = nl::ndarray({gp, rows_per_group, cs}, DType::kFloat32, nl::sbuf, "values");
  if (rows_per_group == 8) {
    const std::int64_t r_full = data8.dim(0) / 8 * 8;
    nisa::dma_copy(d,
                   data8(nl::ds(0, r_full), nl::all)
                       .reshape({r_full / 8, 8, c_total})(nl::ds(g0, gp), nl::all, nl::ds(c0, cs)),
                   {.name = "load words"});
  } else {
    nisa::dma_copy(d, data8(nl::ds(r0, rows_per_group), nl::ds(c0, cs)).expand_dim(0),
                   {.name = "load words"});
  }
  // E8M0 code -> int32 (DMA casts) -> fp32 bits of 2^(s - 127).
  Tensor s = nl::ndarray({gp, ws}, DType::kInt32, nl::sbuf, "scale_code");
  nisa::dma_copy(s, scales(nl::ds(g0, gp), nl::ds(c0 / 4, ws)), {.name = "load scales"});
  Tensor dist = nl::ndarray({gp, ws}, DType::kFloat32, nl::sbuf, "scale_dist");
  nisa::tensor_scalar(dist, s, AluOp::kSubtract, 127.5f, {.op1 = AluOp::kAbsMax, .operand1 = 0.0f});
  Tensor fix = nl::ndarray({gp, ws}, DType::kInt32, nl::sbuf, "scale_fix");
  nisa::tensor_scalar(fix, dist, AluOp::kGreaterEqual, 127.0f,
                      {.op1 = AluOp::kMultiply, .operand1 = 4194304.0f});  // 0x00400000
  Tensor bits = nl::ndarray({gp, ws}, DType::kInt32, nl::sbuf, "scale_bits");
  nisa::tensor_scalar(bits, s, AluOp::kLeftShift, 23.0f);
  Tensor factor = nl::ndarray({gp, ws}, DType::kInt32, nl::sbuf, "scale_value");
  nisa::tensor_tensor(factor, bits, fix, AluOp::kBitwiseOr);
  const Tensor f = factor.view(DType::kFloat32)
                       .expand_dim(1)
                       .broadcast(1, rows_per_group)
                       .expand_dim(3)
                       .broadcast(3, 4);  // [gp, rows, ws, 4]
  nisa::tensor_tensor(dst.reshape({gp, rows_per_group, ws, 4}),
                      d.reshape({gp, rows_per_group, ws, 4}), f, AluOp::kMultiply);
  if (rows_per_group == 8) {
    const std::int64_t r_full = out.dim(0) / 8 * 8;
    nisa::dma_copy(out(nl::ds(0, r_full), nl::all)
                       .reshape({r_full / 8, 8, c_total})(nl::ds(g0, gp), nl::all, nl::ds(c0, cs)),
                   dst, {.name = "store values"});
  } else {
    nisa::dma_copy(out(nl::ds(r0, rows_per_group), nl::ds(c0, cs)).expand_dim(0), dst,
                   {.name = "store values"});
  }
}

}  // namespace

std::vector<Tensor> mx_dequantize(std::span<const Tensor> in) {
  require_inputs(in, {2, 2}, "mx_dequantize", "data [R, C/4] and scales [ceil(R/8), C/4]");
  const Tensor& data = in[0];
  const Tensor& scales = in[1];
  if (!is_fp8_x4(data.dtype()))
    throw kernel::KernelError(
        {}, fmt::format("mx_dequantize decodes MXFP8 (float8_e4m3fn_x4, float8_e5m2_x4), "
                        "not {}: FP4 has no unpacked dtype the Vector engine reads",
                        numerics::name(data.dtype())));
  const std::int64_t r_total = data.dim(0), words = data.dim(1), c_total = words * 4;
  if (scales.dim(0) != ceil_div(r_total, 8) || scales.dim(1) != words)
    throw kernel::KernelError(
        {}, fmt::format("mx_dequantize: scales must be [{}, {}]", ceil_div(r_total, 8), words));
  const DType e8 = numerics::unpacked_element(data.dtype());
  const Tensor data8 = data.view(e8);  // [R, C] plain fp8 bytes
  Tensor out = nl::ndarray({r_total, c_total}, DType::kFloat32, nl::shared_hbm, "out");
  constexpr std::int64_t kChunk = 512;  // columns: 4 KiB fp8 in + 16 KiB fp32 out per partition
  const std::int64_t pmax = nl::tile_size::pmax();
  const std::int64_t full_groups = r_total / 8, tail = r_total % 8;
  // Each program of a logical core takes its share of the row groups (a column chunk of the
  // row-major output spans rows, so splitting columns would overlap the programs' stores);
  // the last program takes the tail group.
  const bool owns_tail = nl::program_id() == nl::num_programs() - 1;
  for (std::int64_t c0 = 0; c0 < c_total; c0 += kChunk) {
    const std::int64_t cs = std::min(kChunk, c_total - c0);
    for_each_owned(full_groups, pmax, [&](std::int64_t g0) {
      dequantize_groups(data8, scales, out, g0, std::min(pmax, full_groups - g0), 8, c0, cs);
    });
    if (tail && owns_tail) dequantize_groups(data8, scales, out, full_groups, 1, tail, c0, cs);
  }
  return {out};
}

// ---------------------------------------------------------------------------------------
// matmul_mx

std::vector<Tensor> matmul_mx(std::span<const Tensor> in, const MatmulMxOptions& o) {
  const arch::ChipConfig& chip = nl::chip();
  if (!chip.tensor.has_mx)
    throw kernel::KernelError(
        {__FILE__, static_cast<std::uint32_t>(__LINE__), 0},
        fmt::format("matmul_mx needs the MX tensor engine (nc_matmul_mx, x4-packed "
                    "types), which NeuronCore-v4 (trn3) has; {} is {}",
                    chip.name, arch::core_name(chip.generation)));
  require_inputs(in, {2, 2, 2, 2}, "matmul_mx",
                 "a data [K/4, M], a scales [K/32, M], b data [K/4, N] and b scales [K/32, N]");
  const Tensor& a = in[0];
  const Tensor& as = in[1];
  const Tensor& b = in[2];
  const Tensor& bs = in[3];
  if (!numerics::is_mx_packed(a.dtype()) || a.dtype() != b.dtype())
    throw kernel::KernelError(
        {}, fmt::format("matmul_mx: a and b must have the same x4-packed MX type; got {} "
                        "and {}",
                        numerics::name(a.dtype()), numerics::name(b.dtype())));
  const std::int64_t k4 = a.dim(0), m_total = a.dim(1), n_total = b.dim(1);
  if (b.dim(0) != k4 || k4 % 32 != 0)
    throw kernel::KernelError(
        {}, fmt::format("matmul_mx: a and b need the same K/4 rows, a multiple of 32 (K a "
                        "multiple of 128); got {} and {}",
                        k4, b.dim(0)));
  if (m_total % 2 != 0)
    throw kernel::KernelError(
        {}, fmt::format("matmul_mx: M = {} must be even (stationary free size)", m_total));
  if (as.dim(0) != k4 / 8 || as.dim(1) != m_total || bs.dim(0) != k4 / 8 || bs.dim(1) != n_total)
    throw kernel::KernelError({}, fmt::format("matmul_mx: scales must be [{}, {}] and [{}, {}]",
                                              k4 / 8, m_total, k4 / 8, n_total));
  const std::int64_t tile_k = nl::tile_size::pmax();  // partitions (x4 = 512 values of K)
  const std::int64_t tile_m = nl::tile_size::gemm_stationary_fmax();
  const std::int64_t tile_n = nl::tile_size::psum_bank_fmax();
  check_block_fits_psum("matmul_mx", o.block_m, o.block_n);
  Tensor c = nl::ndarray({m_total, n_total}, o.out_dtype, nl::shared_hbm, "c");
  const std::int64_t k_tiles = ceil_div(k4, tile_k);
  const std::int64_t k_full = k4 / tile_k;  // steps with all 128 partitions
  const std::int64_t block_rows = o.block_m * tile_m, block_cols = o.block_n * tile_n;

  // Scales of all K steps for columns [f0, f0 + fs) of one operand: [128, k_tiles, fs].
  const auto load_scales = [&](const Tensor& hbm, std::int64_t f0, std::int64_t fs,
                               const char* name) {
    Tensor t = nl::ndarray({tile_k, k_tiles, fs}, DType::kUInt8, nl::sbuf, name);
    if (k_full > 0) {
      // HBM scale rows [16t + 4q + s] as [t, q, s, f]; quadrant q is [s, t, f].
      const Tensor v = hbm(nl::ds(0, k_full * 16), nl::all).reshape({k_full, 4, 4, hbm.dim(1)});
      for (std::int64_t q = 0; q < 4; ++q)
        nisa::dma_copy(t(nl::ds(q * 32, 4), nl::ds(0, k_full), nl::all),
                       v(nl::all, q, nl::all, nl::ds(f0, fs)).permute({1, 0, 2}),
                       {.name = "load scales"});
    }
    if (k_full < k_tiles) {  // a last step of 32, 64 or 96 partitions
      const std::int64_t quads = (k4 - k_full * tile_k) / 32;
      for (std::int64_t q = 0; q < quads; ++q)
        nisa::dma_copy(t(nl::ds(q * 32, 4), k_full, nl::all),
                       hbm(nl::ds(k_full * 16 + q * 4, 4), nl::ds(f0, fs)),
                       {.name = "load scales"});
    }
    return t;
  };

  // Each program of a logical core takes its share of the row bands.
  for_each_owned(m_total, block_rows, [&](std::int64_t m0) {
    const std::int64_t rows = std::min(block_rows, m_total - m0);
    const std::int64_t m_tiles = ceil_div(rows, tile_m);
    // The stationary scales serve every block of the row band.
    const Tensor sa_block = o.hoist_a_scales ? load_scales(as, m0, rows, "a_scales") : Tensor();
    // So does the stationary data when the band (all K steps) fits the budget: it is then
    // loaded once instead of once per block (K x M bytes in all instead of N / block_cols
    // times that).
    const bool hoist_a =
        static_cast<std::int64_t>(numerics::storage_bytes(a.dtype())) * k_tiles * rows <=
        o.a_band_budget_bytes;
    std::vector<Tensor> a_band;
    if (hoist_a)
      for (std::int64_t kt = 0; kt < k_tiles; ++kt) {
        const std::int64_t k0 = kt * tile_k, ks = std::min(tile_k, k4 - k0);
        a_band.push_back(nl::ndarray({ks, rows}, a.dtype(), nl::sbuf, "a_band"));
        nisa::dma_copy(a_band.back(), a(nl::ds(k0, ks), nl::ds(m0, rows)), {.name = "load a"});
      }
    for (std::int64_t n0 = 0; n0 < n_total; n0 += block_cols) {
      const std::int64_t cols = std::min(block_cols, n_total - n0);
      const std::int64_t n_tiles = ceil_div(cols, tile_n);
      const Tensor sa = o.hoist_a_scales ? sa_block : load_scales(as, m0, rows, "a_scales");
      const Tensor sb = load_scales(bs, n0, cols, "b_scales");
      const OutputBlock block{m0, n0, rows, cols, tile_m, tile_n};
      const std::vector<Tensor> acc = declare_accumulators(block);
      for (std::int64_t kt = 0; kt < k_tiles; ++kt) {
        const std::int64_t k0 = kt * tile_k, ks = std::min(tile_k, k4 - k0);
        Tensor a_tile = hoist_a ? a_band[static_cast<std::size_t>(kt)]
                                : nl::ndarray({ks, rows}, a.dtype(), nl::sbuf, "a_tile");
        Tensor b_tile = nl::ndarray({ks, cols}, b.dtype(), nl::sbuf, "b_tile");
        if (!hoist_a)
          nisa::dma_copy(a_tile, a(nl::ds(k0, ks), nl::ds(m0, rows)), {.name = "load a"});
        nisa::dma_copy(b_tile, b(nl::ds(k0, ks), nl::ds(n0, cols)), {.name = "load b"});
        for (std::int64_t i = 0; i < m_tiles; ++i) {
          const std::int64_t ms = std::min(tile_m, rows - i * tile_m);
          for (std::int64_t j = 0; j < n_tiles; ++j) {
            const std::int64_t ns = std::min(tile_n, cols - j * tile_n);
            nisa::nc_matmul_mx(
                acc[static_cast<std::size_t>(i * n_tiles + j)],
                a_tile(nl::all, nl::ds(i * tile_m, ms)), b_tile(nl::all, nl::ds(j * tile_n, ns)),
                sa(nl::ds(0, ks), kt, nl::ds(i * tile_m, ms)),
                sb(nl::ds(0, ks), kt, nl::ds(j * tile_n, ns)), {.accumulate = kt > 0});
          }
        }
      }
      store_accumulators(block, acc, c, "store c");
    }
  });
  return {c};
}

// ---------------------------------------------------------------------------------------
// Host side and problems

HostMx mx_quantize_host(DType packed, std::span<const float> x, std::int64_t rows,
                        std::int64_t cols) {
  if (cols % 4 != 0 || static_cast<std::int64_t>(x.size()) != rows * cols)
    throw std::invalid_argument("mx_quantize_host: x must be [rows, cols], cols a multiple of 4");
  const std::int64_t words = cols / 4, groups = ceil_div(rows, 8);
  const std::size_t wb = numerics::storage_bytes(packed);
  HostMx h;
  h.words.assign(static_cast<std::size_t>(rows * words) * wb, std::byte{0});
  h.scales.assign(static_cast<std::size_t>(groups * words), 0);
  numerics::MxOptions opts;
  opts.scale_rule = numerics::MxScaleRule::kTrainium;
  float block[32];
  std::byte out[8 * 4];
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t j = 0; j < words; ++j) {
      for (std::int64_t i = 0; i < 8; ++i)
        for (std::int64_t l = 0; l < 4; ++l) {
          const std::int64_t r = 8 * g + i;
          block[i * 4 + l] = r < rows ? x[static_cast<std::size_t>(r * cols + 4 * j + l)] : 0.0f;
        }
      std::uint8_t scale = 0;
      numerics::quantize_mx_packed(packed, block, std::span(out, 8 * wb), std::span(&scale, 1),
                                   opts);
      h.scales[static_cast<std::size_t>(g * words + j)] = scale;
      for (std::int64_t i = 0; i < 8 && 8 * g + i < rows; ++i)
        std::memcpy(h.words.data() + static_cast<std::size_t>((8 * g + i) * words + j) * wb,
                    out + i * wb, wb);
    }
  }
  return h;
}

namespace {

// Element value of an MX matrix in the decoded inputs: data elements (4 per word, raw) and
// scale codes, as check() hands them to the reference.
double mx_value(const std::vector<float>& elems, const std::vector<float>& codes,
                std::int64_t words, std::int64_t r, std::int64_t col) {
  const double e = elems[static_cast<std::size_t>(r * words * 4 + col)];
  const auto s = static_cast<int>(codes[static_cast<std::size_t>((r / 8) * words + col / 4)]);
  return s == 255 ? NAN : std::ldexp(e, s - 127);
}

// Values of varying magnitude: uniform [-1, 1) times 2^e, e in -4..0 chosen per block of 8
// rows x 4 columns, so the scales differ between neighbouring blocks.
std::vector<float> mx_values(std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  const runtime::HostTensor u = runtime::random_tensor("u", DType::kFloat32, {rows, cols}, seed);
  std::vector<float> v = u.to_floats();
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      std::uint32_t h = static_cast<std::uint32_t>((r / 8) * 2654435761u) ^
                        static_cast<std::uint32_t>((c / 4) * 40503u) ^ seed;
      h ^= h >> 15;
      h *= 0x2C1B3C6Du;
      h ^= h >> 12;
      v[static_cast<std::size_t>(r * cols + c)] =
          std::ldexp(v[static_cast<std::size_t>(r * cols + c)], -static_cast<int>(h % 5));
    }
  return v;
}

// The two input tensors of an MX matrix quantised on the host from mx_values(rows, cols,
// seed): data [rows, cols/4] words (shape `data_shape`) and scales (`scales_shape`), made
// once, when a functional run first needs either (a timing-only run never does).
void add_deferred_mx(Problem& p, const std::string& name, DType packed, std::int64_t rows,
                     std::int64_t cols, std::uint32_t seed, kernel::Shape data_shape,
                     kernel::Shape scales_shape) {
  struct Lazy {
    std::once_flag once;
    HostMx mx;
  };
  auto lazy = std::make_shared<Lazy>();
  auto get = [=]() -> const HostMx& {
    std::call_once(lazy->once, [&] {
      lazy->mx = mx_quantize_host(packed, mx_values(rows, cols, seed), rows, cols);
    });
    return lazy->mx;
  };
  p.inputs.push_back(
      runtime::HostTensor::deferred(name + "data", packed, std::move(data_shape), [get] {
        const std::vector<std::byte>& w = get().words;
        std::vector<std::uint8_t> bytes(w.size());
        std::memcpy(bytes.data(), w.data(), w.size());
        return bytes;
      }));
  p.inputs.push_back(runtime::HostTensor::deferred(
      name + "scales", DType::kUInt8, std::move(scales_shape), [get] { return get().scales; }));
}

// The R x C shape of an mx_quantize or mx_dequantize problem (`what` says what `kernel` does
// with the packed type, for the error).
struct MxShape {
  std::int64_t rows, cols, scale_bytes;
};
MxShape mx_problem_shape(const std::vector<std::int64_t>& shape, DType packed,
                         std::string_view kernel, std::string_view what) {
  require_dims(shape, 2, "RxC");
  if (!is_fp8_x4(packed))
    throw std::invalid_argument(
        fmt::format("{} {} float8_e4m3fn_x4 or float8_e5m2_x4", kernel, what));
  const std::int64_t r = shape[0], c = shape[1];
  if (c % 4 != 0) throw std::invalid_argument(fmt::format("{}: C must be a multiple of 4", kernel));
  return {r, c, ceil_div(r, 8) * c / 4};  // one E8M0 scale byte per 32 values
}

Problem make_mx_quantize(const std::vector<std::int64_t>& shape, DType packed) {
  const MxShape shape_rc = mx_problem_shape(shape, packed, "mx_quantize", "produces");
  const std::int64_t r = shape_rc.rows, c = shape_rc.cols;  // named: lambdas capture them
  Problem p;
  p.label = fmt::format("mx_quantize {}x{} bfloat16 -> {}", r, c, numerics::name(packed));
  p.fn = [packed](std::span<const Tensor> in) { return mx_quantize(in, {.packed = packed}); };
  p.inputs.push_back(runtime::HostTensor::deferred("x", DType::kBFloat16, {r, c}, [r, c] {
    return runtime::HostTensor::from_floats("x", DType::kBFloat16, {r, c}, mx_values(r, c, 31))
        .bytes();
  }));
  p.reference = [r, c, packed](const std::vector<std::vector<float>>& in, std::size_t output,
                               std::span<const std::int64_t> idx) {
    const HostMx h = mx_quantize_host(packed, in[0], r, c);
    std::vector<double> out;
    out.reserve(idx.size());
    if (output == 0) {
      std::vector<std::uint8_t> codes(static_cast<std::size_t>(r * c));
      numerics::unpack_x4(packed, h.words, codes);
      const DType e = numerics::unpacked_element(packed);
      for (std::int64_t i : idx)
        out.push_back(numerics::decode(e, codes[static_cast<std::size_t>(i)]));
    } else {
      for (std::int64_t i : idx) out.push_back(h.scales[static_cast<std::size_t>(i)]);
    }
    return out;
  };
  p.tolerance = {
      0, 0,
      "quantize_mx with the Trainium scale rule is exact: the same element codes and E8M0 "
      "scales as numerics::quantize_mx_packed"};
  p.hbm_bytes = 2.0 * double(r * c) + double(r * c) + double(shape_rc.scale_bytes);
  return p;
}

Problem make_mx_dequantize(const std::vector<std::int64_t>& shape, DType packed) {
  const MxShape shape_rc = mx_problem_shape(shape, packed, "mx_dequantize", "decodes");
  const std::int64_t r = shape_rc.rows, c = shape_rc.cols;  // named: lambdas capture them
  Problem p;
  p.label = fmt::format("mx_dequantize {}x{} {} -> float32", r, c, numerics::name(packed));
  p.fn = [](std::span<const Tensor> in) { return mx_dequantize(in); };
  add_deferred_mx(p, "", packed, r, c, 41, {r, c / 4}, {ceil_div(r, 8), c / 4});
  p.reference = [c](const std::vector<std::vector<float>>& in, std::size_t,
                    std::span<const std::int64_t> idx) {
    std::vector<double> out;
    out.reserve(idx.size());
    for (std::int64_t i : idx) out.push_back(mx_value(in[0], in[1], c / 4, i / c, i % c));
    return out;
  };
  p.tolerance = {0, 0, "an MX value (<= 4 significant bits times a power of two) is exact in fp32"};
  p.hbm_bytes = double(r * c) + double(shape_rc.scale_bytes) + 4.0 * double(r * c);
  return p;
}

// A matmul operand X [K, F] in the MX layout of mx.h (from Y [K/4, 4F], Y[p, 4f+l] = X[4p+l, f]).
void add_mx_operand(Problem& p, const char* name, DType packed, std::int64_t k, std::int64_t f,
                    std::uint32_t seed) {
  add_deferred_mx(p, fmt::format("{}_", name), packed, k / 4, 4 * f, seed, {k / 4, f}, {k / 32, f});
}

}  // namespace

Problem make_matmul_mx_problem(std::int64_t m, std::int64_t n, std::int64_t k, DType packed,
                               const MatmulMxOptions& options) {
  const DType out = options.out_dtype;
  if (m <= 0 || n <= 0 || k <= 0)
    throw std::invalid_argument("matmul_mx: shape values must be positive");
  if (!numerics::is_mx_packed(packed))
    throw std::invalid_argument(
        "matmul_mx takes float8_e4m3fn_x4, float8_e5m2_x4 or float4_e2m1fn_x4");
  if (k % 128 != 0)
    throw std::invalid_argument(fmt::format("matmul_mx: K = {} must be a multiple of 128", k));
  if (m % 2 != 0) throw std::invalid_argument(fmt::format("matmul_mx: M = {} must be even", m));
  if (out != DType::kFloat32 && out != DType::kBFloat16)
    throw std::invalid_argument("matmul_mx writes float32 or bfloat16");
  Problem p;
  p.label = fmt::format("matmul_mx {}x{}x{} {} -> {}", m, n, k, numerics::name(packed),
                        numerics::name(out));
  p.fn = [options](std::span<const Tensor> in) { return matmul_mx(in, options); };
  add_mx_operand(p, "a", packed, k, m, 51);
  add_mx_operand(p, "b", packed, k, n, 52);
  p.reference = [m, n, k](const std::vector<std::vector<float>>& in, std::size_t,
                          std::span<const std::int64_t> idx) {
    // Operand values X[kk, f] = element (p = kk/4, word f, lane kk%4) x 2^(scale (kk/32, f) - 127).
    const auto value = [k](const std::vector<float>& e, const std::vector<float>& s,
                           std::int64_t f_total, std::int64_t kk, std::int64_t f) {
      const double el = e[static_cast<std::size_t>(((kk / 4) * f_total + f) * 4 + kk % 4)];
      const auto code = static_cast<int>(s[static_cast<std::size_t>((kk / 32) * f_total + f)]);
      (void)k;
      return code == 255 ? NAN : std::ldexp(el, code - 127);
    };
    return matmul_reference(
        idx, n, k, [&](std::int64_t kk, std::int64_t i) { return value(in[0], in[1], m, kk, i); },
        [&](std::int64_t kk, std::int64_t j) { return value(in[2], in[3], n, kk, j); });
  };
  // Products of two MX values are exact (<= 4 + 4 significant bits); the tensor engine sums
  // the K products in fp32, each addition erring by at most half an ulp of the running sum.
  // The inputs are below 1 in magnitude (|u| < 1 times 2^-4..2^0), so the running sums stay
  // far below 2^5 (their spread is about 0.09 sqrt(K)): at most K * 2^-20 absolute. Then
  // one rounding into the output type (half an ulp relative).
  const double kd = static_cast<double>(k);
  p.tolerance = {
      kd * 0x1p-20, half_ulp(out) * (1 + 0x1p-6),
      fmt::format("exact MX products, fp32 accumulation of K={} terms with running sums < 2^5 "
                  "(<= K*2^-20 absolute), one rounding to {}",
                  k, numerics::name(out))};
  p.flops = 2.0 * double(m) * double(n) * double(k);
  const double wb = double(numerics::storage_bytes(packed));
  const std::int64_t words = k / 4, scales = k / 32;  // per row; K is a multiple of 32
  p.hbm_bytes = double(m + n) * (double(words) * wb + double(scales)) +
                double(numerics::storage_bytes(out)) * double(m) * double(n);
  p.peak_mode = "mx";
  return p;
}

namespace {

const std::vector<DType> kFp8x4 = {DType::kFloat8E4M3x4, DType::kFloat8E5M2x4};

// mx_quantize and mx_dequantize: the same layouts and dtypes, one direction each.
// `bytes_per_value`: HBM bytes per value of x (input plus output; the scales add 1/32):
// the maker computes the data on the host, so an absurd shape is refused first.
bool register_mx_conversion(const char* name, const char* summary, double bytes_per_value,
                            Problem (*make)(const std::vector<std::int64_t>&, DType)) {
  return register_kernel(
      {name,
       summary,
       "RxC",
       {1024, 4096},
       DType::kFloat8E4M3x4,
       kFp8x4,
       [=](const std::vector<std::int64_t>& s, DType d, const arch::ChipConfig& chip) {
         require_dims(s, 2, "RxC");
         require_fits_hbm(name, bytes_per_value * double(s[0]) * double(s[1]), chip);
         return make(s, d);
       }});
}

const bool registered_q = register_mx_conversion(
    "mx_quantize",
    "BF16 x [R, C] -> MXFP8 x4 words [R, C/4] + E8M0 scales [R/8, C/4] by quantize_mx (dtype: the "
    "packed output)",
    2 + 1, make_mx_quantize);
const bool registered_dq = register_mx_conversion(
    "mx_dequantize",
    "MXFP8 x4 words [R, C/4] + E8M0 scales [R/8, C/4] -> fp32 [R, C] with Vector ops", 1 + 4,
    make_mx_dequantize);

const bool registered_mm = register_kernel(
    {"matmul_mx",
     "c[M,N] (bf16) = a_t[K,M]^T @ b[K,N], both MX (x4 words + E8M0 scales per 32 of K); "
     "nc_matmul_mx",
     "MxNxK",
     {2048, 2048, 2048},
     DType::kFloat8E4M3x4,
     {DType::kFloat8E4M3x4, DType::kFloat8E5M2x4, DType::kFloat4E2M1x4},
     [](const std::vector<std::int64_t>& s, DType d, const arch::ChipConfig& chip,
        const OptionValues& options) {
       require_dims(s, 3, "MxNxK");
       const MatmulMxOptions o{.out_dtype = options.choice("out_dtype") == "float32"
                                                ? DType::kFloat32
                                                : DType::kBFloat16,
                               .block_m = static_cast<int>(options.integer("block_m")),
                               .block_n = static_cast<int>(options.integer("block_n")),
                               .hoist_a_scales = options.flag("hoist_a_scales"),
                               .a_band_budget_bytes = options.integer("a_band_budget_bytes")};
       check_psum_block("matmul_mx", o.block_m, o.block_n, chip);
       // a and b quantised on the host (at least half a byte a value), c at least 2 bytes.
       const double m = double(s[0]), n = double(s[1]), k = double(s[2]);
       require_fits_hbm("matmul_mx", 0.5 * (m * k + k * n) + 2 * m * n, chip);
       return make_matmul_mx_problem(s[0], s[1], s[2], d, o);
     },
     {KernelOption::integer(
          "block_m", MatmulMxOptions{}.block_m, 1, 8,
          "output tiles of 128 rows per block (block_m x block_n <= the 8 PSUM banks)"),
      KernelOption::integer("block_n", MatmulMxOptions{}.block_n, 1, 8,
                            "output tiles of 512 columns per block"),
      KernelOption::flag(
          "hoist_a_scales", MatmulMxOptions{}.hoist_a_scales,
          "load the stationary scales once per row band of blocks (off: once per block)"),
      KernelOption::integer(
          "a_band_budget_bytes", MatmulMxOptions{}.a_band_budget_bytes, 0, 1 << 20,
          "keep a row band's stationary data (all of K) in SBUF when it takes at most this "
          "many bytes per partition (0: reload it per block)"),
      KernelOption::choice("out_dtype", "bfloat16", {"bfloat16", "float32"}, "the output type")}});

}  // namespace

}  // namespace trnsim::kernels
