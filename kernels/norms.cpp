// RMSNorm and LayerNorm over rows: one 128-row tile at a time, whole rows per partition.
//
// Per tile (P rows x C columns):
//   rmsnorm:   ScalarE  activation(square, x) with reduce_res -> sum of squares [P, 1]
//              ScalarE  activation(rsqrt, ss, scale = 1/C, bias = eps) -> rstd [P, 1]
//              VectorE  scalar_tensor_tensor((x * rstd) * weight) -> out
//   layernorm: VectorE  bn_stats per 512-column chunk, bn_aggr -> (mean, var)
//              ScalarE  activation(rsqrt, var, bias = eps) -> rstd
//              VectorE  scalar_tensor_tensor((x - mean) * weight) -> t (fp32)
//              VectorE  scalar_tensor_tensor((t * rstd) + bias) -> out
//
// RMSNorm is memory bound (2 bytes in and 2 out per element against two engine passes), so
// the tile is sized for the DMA: one load and one store of P x C elements, C * dtype bytes
// contiguous per partition (16 KiB for C = 8192 BF16), spread by the compiler over the 16
// DMA engines (8 partitions each) and over its DMA queues. Tiles are fresh declarations per
// iteration, so the allocator rotates them and the loads of tile i+1 overlap the compute of
// tile i and the store of tile i-1. The activation's elementwise result is written into the
// output tile (overwritten by the final multiply), so a tile costs 2 x C x dtype bytes of
// SBUF per partition, plus the broadcast weight loaded once.
#include "kernels/norms.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace trnsim::kernels {

namespace {

using isa::ActivationFunc;
using isa::AluOp;

void check_norm_inputs(std::span<const Tensor> in, std::size_t n, const char* name) {
  if (in.size() != n)
    throw kernel::KernelError({}, fmt::format("{} takes {} inputs (x [R, C], weight [C]{})", name,
                                              n, n == 3 ? ", bias [C]" : ""));
  if (in[0].ndim() != 2) throw kernel::KernelError({}, fmt::format("{}: x must be [R, C]", name));
  const std::int64_t c = in[0].dim(1);
  for (std::size_t i = 1; i < n; ++i)
    if (in[i].ndim() != 1 || in[i].dim(0) != c)
      throw kernel::KernelError({}, fmt::format("{}: input {} must be [C] = [{}]", name, i, c));
}

// A [rows, C] SBUF copy of a [C] HBM vector on every partition (HBM partition stride 0).
Tensor broadcast_rows(const Tensor& v, std::int64_t rows, const char* name) {
  const std::int64_t c = v.dim(0);
  Tensor t = nl::ndarray({rows, c}, v.dtype(), nl::sbuf, name);
  nisa::dma_copy(t, v.reshape({1, c}).broadcast(0, rows));
  return t;
}

// eps as a [rows, 1] fp32 bias tile: an immediate non-zero bias needs NeuronCore-v3+.
Tensor eps_column(std::int64_t rows, float eps) {
  Tensor t = nl::ndarray({rows, 1}, DType::kFloat32, nl::sbuf, "eps");
  nisa::memset(t, eps);
  return t;
}

// Rows [r0, r0 + rows) of x [R, C] in a fresh SBUF tile (so the allocator can rotate tiles
// and overlap the next load with this tile's compute).
Tensor load_rows(const Tensor& x, std::int64_t r0, std::int64_t rows) {
  Tensor t = nl::ndarray({rows, x.dim(1)}, x.dtype(), nl::sbuf, "x_tile");
  nisa::dma_copy(t, x(nl::ds(r0, rows), nl::all), {.name = "load x"});
  return t;
}

}  // namespace

std::vector<Tensor> rmsnorm(std::span<const Tensor> in, const NormOptions& o) {
  check_norm_inputs(in, 2, "rmsnorm");
  const Tensor& x = in[0];
  const std::int64_t r_total = x.dim(0), c = x.dim(1);
  const std::int64_t pmax = nl::tile_size::pmax();
  Tensor out = nl::ndarray({r_total, c}, x.dtype(), nl::shared_hbm, "out");
  const std::int64_t wrows = std::min(pmax, r_total);
  const Tensor w = broadcast_rows(in[1], wrows, "weight");
  const Tensor eps = eps_column(wrows, o.eps);
  // Each program of a logical core normalises its share of the row tiles.
  for_each_owned(r_total, pmax, [&](std::int64_t r0) {
    const std::int64_t rows = std::min(pmax, r_total - r0);
    const Tensor xt = load_rows(x, r0, rows);
    Tensor ot = nl::ndarray({rows, c}, x.dtype(), nl::sbuf, "out_tile");
    Tensor ss = nl::ndarray({rows, 1}, DType::kFloat32, nl::sbuf, "sumsq");
    nisa::activation(ot, ActivationFunc::kSquare, xt, {.reduce_res = ss});
    Tensor rstd = nl::ndarray({rows, 1}, DType::kFloat32, nl::sbuf, "rstd");
    nisa::activation(
        rstd, ActivationFunc::kRsqrt, ss,
        {.scale = 1.0f / static_cast<float>(c), .bias = eps(nl::ds(0, rows), nl::all)});
    nisa::scalar_tensor_tensor(ot, xt, AluOp::kMultiply, rstd, AluOp::kMultiply,
                               w(nl::ds(0, rows), nl::all));
    nisa::dma_copy(out(nl::ds(r0, rows), nl::all), ot, {.name = "store out"});
  });
  return {out};
}

std::vector<Tensor> layernorm(std::span<const Tensor> in, const NormOptions& o) {
  check_norm_inputs(in, 3, "layernorm");
  const Tensor& x = in[0];
  const std::int64_t r_total = x.dim(0), c = x.dim(1);
  const std::int64_t pmax = nl::tile_size::pmax();
  const std::int64_t fmax = nl::tile_size::bn_stats_fmax();
  const std::int64_t chunks = (c + fmax - 1) / fmax;
  Tensor out = nl::ndarray({r_total, c}, x.dtype(), nl::shared_hbm, "out");
  const std::int64_t wrows = std::min(pmax, r_total);
  const Tensor w = broadcast_rows(in[1], wrows, "weight");
  const Tensor b = broadcast_rows(in[2], wrows, "bias");
  const Tensor eps = eps_column(wrows, o.eps);
  // Each program of a logical core normalises its share of the row tiles.
  for_each_owned(r_total, pmax, [&](std::int64_t r0) {
    const std::int64_t rows = std::min(pmax, r_total - r0);
    const Tensor xt = load_rows(x, r0, rows);
    // bn_stats takes at most bn_stats_fmax (512) elements: one 6-value record per chunk.
    Tensor stats = nl::ndarray({rows, 6 * chunks}, DType::kFloat32, nl::sbuf, "stats");
    for (std::int64_t k = 0; k < chunks; ++k) {
      const std::int64_t c0 = k * fmax, len = std::min(fmax, c - c0);
      nisa::bn_stats(stats(nl::all, nl::ds(6 * k, 6)), xt(nl::all, nl::ds(c0, len)));
    }
    Tensor mv = nl::ndarray({rows, 2}, DType::kFloat32, nl::sbuf, "mean_var");
    nisa::bn_aggr(mv, stats);
    Tensor rstd = nl::ndarray({rows, 1}, DType::kFloat32, nl::sbuf, "rstd");
    nisa::activation(rstd, ActivationFunc::kRsqrt, mv(nl::all, nl::ds(1, 1)),
                     {.bias = eps(nl::ds(0, rows), nl::all)});
    Tensor t = nl::ndarray({rows, c}, DType::kFloat32, nl::sbuf, "centered_w");
    nisa::scalar_tensor_tensor(t, xt, AluOp::kSubtract, mv(nl::all, nl::ds(0, 1)), AluOp::kMultiply,
                               w(nl::ds(0, rows), nl::all));
    Tensor ot = nl::ndarray({rows, c}, x.dtype(), nl::sbuf, "out_tile");
    nisa::scalar_tensor_tensor(ot, t, AluOp::kMultiply, rstd, AluOp::kAdd,
                               b(nl::ds(0, rows), nl::all));
    nisa::dma_copy(out(nl::ds(r0, rows), nl::all), ot, {.name = "store out"});
  });
  return {out};
}

namespace {

// Reference in double: each sampled row's statistics once, then its sampled elements.
ReferenceFn norm_reference(std::int64_t c, double eps, bool layer) {
  return [=](const std::vector<std::vector<float>>& in, std::size_t,
             std::span<const std::int64_t> idx) {
    const auto row_stats = [&](std::int64_t r) {  // {mean (0 for RMSNorm), 1/sqrt(ms + eps)}
      const float* row = in[0].data() + r * c;
      double s = 0, s2 = 0;
      for (std::int64_t k = 0; k < c; ++k) s += row[k];
      const double mean = layer ? s / double(c) : 0.0;
      for (std::int64_t k = 0; k < c; ++k) s2 += (row[k] - mean) * (row[k] - mean);
      return std::array<double, 2>{mean, 1.0 / std::sqrt(s2 / double(c) + eps)};
    };
    return sample_by_row(
        idx, c, row_stats, [&](const std::array<double, 2>& st, std::int64_t r, std::int64_t j) {
          const double xv = in[0][static_cast<std::size_t>(r * c + j)];
          double v = (xv - st[0]) * st[1] * double(in[1][static_cast<std::size_t>(j)]);
          if (layer) v += double(in[2][static_cast<std::size_t>(j)]);
          return v;
        });
  };
}

constexpr float kEps = 1e-6f;

Problem make_norm(const std::vector<std::int64_t>& shape, DType dtype, bool layer,
                  const OptionValues& options) {
  const auto eps = static_cast<float>(options.number("eps"));
  require_dims(shape, 2, "RxC");
  if (dtype != DType::kBFloat16 && dtype != DType::kFloat32)
    throw std::invalid_argument("norms take bfloat16 or float32 inputs");
  const std::int64_t r = shape[0], c = shape[1];
  Problem p;
  p.label =
      fmt::format("{} {}x{} {}", layer ? "layernorm" : "rmsnorm", r, c, numerics::name(dtype));
  p.fn = [layer, eps](std::span<const Tensor> in) {
    return layer ? layernorm(in, {.eps = eps}) : rmsnorm(in, {.eps = eps});
  };
  p.inputs.push_back(runtime::random_tensor("x", dtype, {r, c}, 11));
  p.inputs.push_back(runtime::random_tensor("weight", dtype, {c}, 12, 0.5f, 1.5f));
  if (layer) p.inputs.push_back(runtime::random_tensor("bias", dtype, {c}, 13, -0.5f, 0.5f));
  p.reference = norm_reference(c, eps, layer);
  // fp32 inside: the sequential fp32 sums of C terms (squares, or bn_stats' two passes) err
  // by at most C * 2^-24 relative (positive terms); rsqrt, the scale and the two multiplies
  // add a few 2^-24; then one rounding into the output type. LayerNorm's x - mean cancels:
  // its error is absolute, |d mean| * rstd * |w| <= C * 2^-24 * max|x| * rstd * |w|, with
  // |x| < 1, rstd ~ sqrt(3) for uniform inputs and |w| < 1.5, hence the abs term.
  const double cd = static_cast<double>(c);
  const double fp32_rel = (cd + 16) * 0x1p-24;
  p.tolerance = {
      layer ? 8 * (cd + 16) * 0x1p-24 : 1e-30, half_ulp(dtype) * (1 + 0x1p-6) + fp32_rel,
      fmt::format("fp32 statistics over C={} terms (<= (C+16)*2^-24 relative{}) plus one "
                  "rounding to {} (half an ulp)",
                  c, layer ? ", and as absolute error after the x - mean cancellation" : "",
                  numerics::name(dtype))};
  const double e = double(numerics::storage_bytes(dtype));
  p.hbm_bytes = e * double(r) * double(c) * 2 + e * double(c) * (layer ? 2 : 1);
  p.flops = 0;
  p.peak_mode = "";
  return p;
}

std::vector<KernelOption> norm_options() {
  return {KernelOption::number("eps", kEps, 0, 1,
                               "added to the mean square (variance) before the square root")};
}

// rmsnorm and layernorm: one problem maker, with or without centring and bias.
bool register_norm(const char* name, const char* summary, std::vector<std::int64_t> default_shape,
                   bool layer) {
  return register_kernel(
      {name,
       summary,
       "RxC",
       std::move(default_shape),
       DType::kBFloat16,
       {DType::kBFloat16, DType::kFloat32},
       [layer](const std::vector<std::int64_t>& s, DType d, const arch::ChipConfig&,
               const OptionValues& o) { return make_norm(s, d, layer, o); },
       norm_options()});
}

const bool registered_rms = register_norm(
    "rmsnorm", "out = x / sqrt(mean(x^2) + eps) * weight over rows of x [R, C]; 128-row tiles",
    {8192, 8192}, /*layer=*/false);
const bool registered_ln = register_norm(
    "layernorm", "out = (x - mean) / sqrt(var + eps) * weight + bias over rows; bn_stats/bn_aggr",
    {4096, 4096}, /*layer=*/true);

}  // namespace

}  // namespace trnsim::kernels
