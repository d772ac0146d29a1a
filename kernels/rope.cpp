// RoPE, half-split: per tile of 128 partitions x g positions, x / cos / sin come in by one
// DMA each, six elementwise multiplies/adds (fp32 temporaries) write the two halves of the
// output tile in place, one DMA out. The engine of each elementwise step is left to the
// compiler (VectorE or GpSimd), which spreads them over both.
#include "kernels/rope.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace trnsim::kernels {

using kernel::KernelError;
using kernel::Tensor;

std::vector<Tensor> rope(std::span<const Tensor> in, const RopeOptions& o) {
  require_inputs(in, {2, 2, 2}, "rope", "x [S, D], cos [S, D/2] and sin [S, D/2]");
  const Tensor& x = in[0];
  const Tensor& cs = in[1];
  const Tensor& sn = in[2];
  if (x.dim(1) % 2 != 0 || cs.shape() != sn.shape() || cs.dim(0) != x.dim(0) ||
      cs.dim(1) * 2 != x.dim(1))
    throw KernelError({}, "rope: expected x [S, D] with D even and cos, sin [S, D/2]");
  const std::int64_t s = x.dim(0), d = x.dim(1), h = d / 2;
  const DType dt = x.dtype();
  const std::int64_t pmax = nl::tile_size::pmax();
  Tensor out = nl::ndarray({s, d}, dt, nl::shared_hbm, "out");

  const std::int64_t g_max = std::max<std::int64_t>(1, std::min(o.tile_elements / d, s / pmax));
  auto tile = [&](std::int64_t r0, std::int64_t parts, std::int64_t g) {
    const std::int64_t n = parts * g;
    Tensor xt = nl::ndarray({parts, g, d}, dt, nl::sbuf, "x_tile");
    Tensor ct = nl::ndarray({parts, g, h}, cs.dtype(), nl::sbuf, "cos_tile");
    Tensor st = nl::ndarray({parts, g, h}, sn.dtype(), nl::sbuf, "sin_tile");
    nisa::dma_copy(xt, x(nl::ds(r0, n), nl::all).reshape({parts, g, d}));
    nisa::dma_copy(ct, cs(nl::ds(r0, n), nl::all).reshape({parts, g, h}));
    nisa::dma_copy(st, sn(nl::ds(r0, n), nl::all).reshape({parts, g, h}));
    const Tensor x1 = xt(nl::all, nl::all, nl::ds(0, h));
    const Tensor x2 = xt(nl::all, nl::all, nl::ds(h, h));
    Tensor ot = nl::ndarray({parts, g, d}, dt, nl::sbuf, "out_tile");
    using isa::AluOp;
    auto tmp = [&](const char* name) {
      return nl::ndarray({parts, g, h}, DType::kFloat32, nl::sbuf, name);
    };
    Tensor a = tmp("x1cos"), b = tmp("x2sin"), c = tmp("x2cos"), e = tmp("x1sin");
    nisa::tensor_tensor(a, x1, ct, AluOp::kMultiply);
    nisa::tensor_tensor(b, x2, st, AluOp::kMultiply);
    nisa::tensor_tensor(ot(nl::all, nl::all, nl::ds(0, h)), a, b, AluOp::kSubtract);
    nisa::tensor_tensor(c, x2, ct, AluOp::kMultiply);
    nisa::tensor_tensor(e, x1, st, AluOp::kMultiply);
    nisa::tensor_tensor(ot(nl::all, nl::all, nl::ds(h, h)), c, e, AluOp::kAdd);
    nisa::dma_copy(out(nl::ds(r0, n), nl::all).reshape({parts, g, d}), ot);
  };
  for_each_row_tile(s, pmax, g_max, tile);
  return {out};
}

namespace {

Problem make_rope(const std::vector<std::int64_t>& shape, DType dtype, const arch::ChipConfig& chip,
                  const OptionValues& options) {
  const RopeOptions o{.tile_elements = options.integer("tile_elements")};
  require_dims(shape, 2, "SxD");
  const std::int64_t s = shape[0], d = shape[1], h = d / 2;
  if (d % 2 != 0) throw std::invalid_argument("rope: D must be even");
  if (dtype != DType::kFloat32 && dtype != DType::kBFloat16)
    throw std::invalid_argument("rope takes float32 or bfloat16");
  // x and the output, cos and sin (half as wide each); the tables are computed here.
  require_fits_hbm("rope", 3.0 * double(s) * double(d) * double(numerics::storage_bytes(dtype)),
                   chip);
  Problem p;
  p.label = fmt::format("rope {}x{} {}", s, d, numerics::name(dtype));
  p.fn = [o](std::span<const Tensor> in) { return rope(in, o); };
  p.inputs.push_back(runtime::random_tensor("x", dtype, {s, d}, 31));
  // The usual tables, angle = position * 10000^(-2i/D), made when a functional run needs them.
  const auto table = [s, d, h, dtype](bool sine) {
    return [=] {
      std::vector<float> v(static_cast<std::size_t>(s * h));
      for (std::int64_t pos = 0; pos < s; ++pos)
        for (std::int64_t i = 0; i < h; ++i) {
          const double angle = double(pos) * std::pow(10000.0, -2.0 * double(i) / double(d));
          v[static_cast<std::size_t>(pos * h + i)] =
              static_cast<float>(sine ? std::sin(angle) : std::cos(angle));
        }
      return runtime::HostTensor::from_floats("table", dtype, {s, h}, v).bytes();
    };
  };
  p.inputs.push_back(runtime::HostTensor::deferred("cos", dtype, {s, h}, table(false)));
  p.inputs.push_back(runtime::HostTensor::deferred("sin", dtype, {s, h}, table(true)));
  p.reference = [d, h](const std::vector<std::vector<float>>& in, std::size_t,
                       std::span<const std::int64_t> idx) {
    std::vector<double> r;
    r.reserve(idx.size());
    for (std::int64_t flat : idx) {
      const std::int64_t pos = flat / d, i = flat % d, j = i % h;
      const double x1 = in[0][static_cast<std::size_t>(pos * d + j)];
      const double x2 = in[0][static_cast<std::size_t>(pos * d + j + h)];
      const double c = in[1][static_cast<std::size_t>(pos * h + j)];
      const double sn = in[2][static_cast<std::size_t>(pos * h + j)];
      r.push_back(i < h ? x1 * c - x2 * sn : x2 * c + x1 * sn);
    }
    return r;
  };
  // Two fp32 products and their sum: <= 2^-24 (|x1| + |x2|) <= 2^-23 absolute for |x| < 1
  // (BF16 products are exact in fp32), then one rounding to the output type.
  p.tolerance = {
      0x1p-23, half_ulp(dtype),
      fmt::format("fp32 products and sum (<= 2^-23 absolute for |x| < 1), one rounding to {}",
                  numerics::name(dtype))};
  p.flops = 0;
  p.hbm_bytes = double(numerics::storage_bytes(dtype)) * double(3 * s * d);
  p.peak_mode = "";
  return p;
}

const bool rope_registered = register_kernel(
    {"rope",
     "rotary embedding of x [S,D] with cos/sin [S,D/2], half-split (rotate_half) convention",
     "SxD",
     {4096, 128},
     DType::kBFloat16,
     {DType::kBFloat16, DType::kFloat32},
     make_rope,
     {KernelOption::integer(
         "tile_elements", RopeOptions{}.tile_elements, 1, 1 << 20,
         "target elements of x per partition per tile (consecutive positions per "
         "partition = tile_elements / D); SBUF bounds it")}});

}  // namespace

}  // namespace trnsim::kernels
