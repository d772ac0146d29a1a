// Row softmax: per tile of 128 partitions x g rows x C columns,
//
//   -max  = tensor_reduce(max, negate) over C      VectorE, one instruction per tile
//   e     = exp(x - max), sums in reduce_res       ScalarE, one activation per row group
//   inv   = 1 / sums                               VectorE
//   e    *= inv                                    VectorE (in place), then one DMA out
//
// BF16 inputs keep e in BF16 so ScalarE and VectorE run their 16-bit paths; the row sums
// are fp32 (from the activation for FP32, a VectorE reduction of the BF16 values for BF16). The
// kernel is HBM-bound on trn2/trn3 for both dtypes (ScalarE exp runs at >= 2x the rate HBM delivers
// rows).
#include "kernels/softmax.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace trnsim::kernels {

using kernel::KernelError;
using kernel::Tensor;

std::vector<Tensor> softmax(std::span<const Tensor> in, const SoftmaxOptions& o) {
  require_inputs(in, {2}, "softmax", "x [R, C]");
  const Tensor& x = in[0];
  const std::int64_t rows = x.dim(0), cols = x.dim(1);
  const DType dt = x.dtype();
  if (dt != DType::kFloat32 && dt != DType::kBFloat16)
    throw KernelError({},
                      fmt::format("softmax takes float32 or bfloat16, not {}", numerics::name(dt)));
  const std::int64_t bytes = static_cast<std::int64_t>(numerics::storage_bytes(dt));
  if (cols * bytes * 4 > nl::tile_size::sbuf_bytes_per_partition() || cols > 65535)
    throw KernelError(
        {}, fmt::format("softmax: {} columns of {} do not fit SBUF twice over (limit {} bytes "
                        "per partition for the input and exp tiles of two rows in flight)",
                        cols, numerics::name(dt), nl::tile_size::sbuf_bytes_per_partition()));
  const std::int64_t pmax = nl::tile_size::pmax();
  Tensor out = nl::ndarray({rows, cols}, dt, nl::shared_hbm, "out");

  const std::int64_t g_max =
      std::max<std::int64_t>(1, std::min(o.tile_elements / cols, rows / pmax));
  auto tile = [&](std::int64_t r0, std::int64_t parts, std::int64_t g) {
    const std::int64_t n = parts * g;
    Tensor xt = nl::ndarray({parts, g, cols}, dt, nl::sbuf, "x_tile");
    nisa::dma_copy(xt, x(nl::ds(r0, n), nl::all).reshape({parts, g, cols}));
    Tensor neg_max = nl::ndarray({parts, g}, DType::kFloat32, nl::sbuf, "neg_max");
    nisa::tensor_reduce(neg_max, xt, isa::AluOp::kMaximum, {.axes = 1, .negate = true});
    Tensor e = nl::ndarray({parts, g, cols}, dt, nl::sbuf, "e");
    Tensor sums = nl::ndarray({parts, g}, DType::kFloat32, nl::sbuf, "sums");
    // FP32: the activation sums its fp32 results. BF16: the exp writes BF16 only (an fp32
    // accumulator output keeps ScalarE off its 16-bit path) and one VectorE reduction sums
    // the BF16 values of all g rows in fp32, so the output is normalised by exactly the
    // values it divides.
    const bool wide = dt == DType::kBFloat16;
    for (std::int64_t j = 0; j < g; ++j) {
      nisa::ActivationOptions ao{.bias = neg_max(nl::all, nl::ds(j, 1))};
      if (!wide) ao.reduce_res = sums(nl::all, nl::ds(j, 1));
      nisa::activation(e(nl::all, j, nl::all), isa::ActivationFunc::kExp, xt(nl::all, j, nl::all),
                       ao);
    }
    if (wide)
      nisa::tensor_reduce(sums, e, isa::AluOp::kAdd,
                          {.axes = 1, .common = {.engine = isa::Engine::kVector}});
    Tensor inv = nl::ndarray({parts, g}, DType::kFloat32, nl::sbuf, "inv");
    nisa::reciprocal(inv, sums);
    for (std::int64_t j = 0; j < g; ++j)
      nisa::tensor_scalar(e(nl::all, j, nl::all), e(nl::all, j, nl::all), isa::AluOp::kMultiply,
                          inv(nl::all, nl::ds(j, 1)), {.common = {.engine = isa::Engine::kVector}});
    nisa::dma_copy(out(nl::ds(r0, n), nl::all).reshape({parts, g, cols}), e);
  };

  for_each_row_tile(rows, pmax, g_max, tile);
  return {out};
}

namespace {

Problem make_softmax(const std::vector<std::int64_t>& shape, DType dtype, const arch::ChipConfig&,
                     const OptionValues& options) {
  const SoftmaxOptions o{.tile_elements = options.integer("tile_elements")};
  require_dims(shape, 2, "RxC");
  if (dtype != DType::kFloat32 && dtype != DType::kBFloat16)
    throw std::invalid_argument("softmax takes float32 or bfloat16");
  const std::int64_t rows = shape[0], cols = shape[1];
  Problem p;
  p.label = fmt::format("softmax {}x{} {}", rows, cols, numerics::name(dtype));
  p.fn = [o](std::span<const Tensor> in) { return softmax(in, o); };
  // [-4, 4): exp spans e^8, so a missing max subtraction or a wrong sum shows.
  p.inputs.push_back(runtime::random_tensor("x", dtype, {rows, cols}, 21, -4.0f, 4.0f));
  p.reference = [cols](const std::vector<std::vector<float>>& in, std::size_t,
                       std::span<const std::int64_t> idx) {
    const auto row_stats = [&](std::int64_t i) {  // {max, sum of exp(x - max)} of row i
      const float* row = in[0].data() + i * cols;
      double mx = -INFINITY, sum = 0;
      for (std::int64_t c = 0; c < cols; ++c) mx = std::max(mx, double(row[c]));
      for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(double(row[c]) - mx);
      return std::vector<double>{mx, sum};
    };
    return sample_by_row(
        idx, cols, row_stats,
        [&](const std::vector<double>& stats, std::int64_t i, std::int64_t c) {
          return std::exp(double(in[0][static_cast<std::size_t>(i * cols + c)]) - stats[0]) /
                 stats[1];
        });
  };
  // exp(x - max) with |x - max| <= 8: argument and result rounding (<= 9 x 2^-24), a
  // sequential fp32 sum of C positive terms (<= C x 2^-24), reciprocal and multiply
  // (2 x 2^-24); BF16 adds the cast of e and of the output (2 x 2^-8).
  const double fp32_part = static_cast<double>(cols + 16) * 0x1p-24;
  const double rel = dtype == DType::kBFloat16 ? 2 * 0x1p-8 + fp32_part : fp32_part;
  p.tolerance = {
      1e-30, rel,
      dtype == DType::kBFloat16
          ? fmt::format(
                "BF16 exp values and output (2 x 2^-8 relative) plus an fp32 sum of {} terms", cols)
          : fmt::format("fp32 exp (argument <= 8) and a sequential fp32 sum of {} terms ((C+16) x "
                        "2^-24 relative)",
                        cols)};
  p.flops = 0;
  p.hbm_bytes = 2.0 * double(rows) * double(cols) * double(numerics::storage_bytes(dtype));
  p.peak_mode = "";
  return p;
}

const bool softmax_registered = register_kernel(
    {"softmax",
     "row-wise numerically stable softmax of x [R,C] (rows on partitions)",
     "RxC",
     {8192, 2048},
     DType::kBFloat16,
     {DType::kBFloat16, DType::kFloat32},
     make_softmax,
     {KernelOption::integer(
         "tile_elements", SoftmaxOptions{}.tile_elements, 1, 1 << 20,
         "target elements per partition per tile (rows per partition = tile_elements / C); "
         "SBUF bounds it")}});

}  // namespace

}  // namespace trnsim::kernels
