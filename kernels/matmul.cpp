// Blocked matmul: a block of block_m x block_n output tiles accumulates in PSUM over the
// whole contraction; each K step loads one [128, block_m*128] slice of a_t and one
// [128, block_n*512] slice of b, and every stationary tile streams block_n moving tiles.
//
// HBM traffic per block is K x (block_m*128 + block_n*512) elements, so the default 4 x 2
// block (512 x 1024) keeps a BF16 4096^3 matmul compute bound on one core: 384 MiB moved in
// the time the tensor engine needs for 137 GFLOP. The tiles of each K step are fresh
// declarations, so the allocator rotates them through SBUF and the DMA queues run ahead of
// the tensor engine (multi-buffering without extra syntax; docs/compiler.md).
#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/kernels.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace trnsim::kernels {

std::vector<Tensor> matmul(std::span<const Tensor> in, const MatmulOptions& o) {
  using namespace trnsim;
  require_inputs(in, {2, 2}, "matmul", "a_t [K, M] and b [K, N]");
  const Tensor& a_t = in[0];
  const Tensor& b = in[1];
  if (a_t.dim(0) != b.dim(0))
    throw kernel::KernelError({}, fmt::format("matmul: a_t [K, M] and b [K, N] must share K; got "
                                              "[{}, {}] and [{}, {}]",
                                              a_t.dim(0), a_t.dim(1), b.dim(0), b.dim(1)));
  const std::int64_t k_total = a_t.shape()[0], m_total = a_t.shape()[1], n_total = b.shape()[1];
  const std::int64_t tile_k = nl::tile_size::pmax();
  const std::int64_t tile_m = nl::tile_size::gemm_stationary_fmax();
  const std::int64_t tile_n = nl::tile_size::gemm_moving_fmax();
  check_block_fits_psum("matmul", o.block_m, o.block_n);

  Tensor c = nl::ndarray({m_total, n_total}, o.out_dtype, nl::shared_hbm, "c");
  const std::int64_t block_rows = o.block_m * tile_m, block_cols = o.block_n * tile_n;
  const std::int64_t k_tiles = ceil_div(k_total, tile_k);

  // With a logical core of several physical cores (NKI kernel[n]), each program takes every
  // n-th block of rows; they share the inputs and the output in HBM.
  for_each_owned(m_total, block_rows, [&](std::int64_t m0) {
    const std::int64_t rows = std::min(block_rows, m_total - m0);
    const std::int64_t m_tiles = ceil_div(rows, tile_m);
    for (std::int64_t n0 = 0; n0 < n_total; n0 += block_cols) {
      const std::int64_t cols = std::min(block_cols, n_total - n0);
      const std::int64_t n_tiles = ceil_div(cols, tile_n);
      // One PSUM bank per output tile of the block.
      const OutputBlock block{m0, n0, rows, cols, tile_m, tile_n};
      const std::vector<Tensor> acc = declare_accumulators(block);
      for (std::int64_t kt = 0; kt < k_tiles; ++kt) {
        const std::int64_t k0 = kt * tile_k, ks = std::min(tile_k, k_total - k0);
        Tensor a_tile = nl::ndarray({ks, rows}, a_t.dtype(), nl::sbuf, "a_tile");
        Tensor b_tile = nl::ndarray({ks, cols}, b.dtype(), nl::sbuf, "b_tile");
        nisa::dma_copy(a_tile, a_t(nl::ds(k0, ks), nl::ds(m0, rows)));
        nisa::dma_copy(b_tile, b(nl::ds(k0, ks), nl::ds(n0, cols)));
        for (std::int64_t i = 0; i < m_tiles; ++i) {
          const std::int64_t ms = std::min(tile_m, rows - i * tile_m);
          for (std::int64_t j = 0; j < n_tiles; ++j) {
            const std::int64_t ns = std::min(tile_n, cols - j * tile_n);
            nisa::nc_matmul(acc[static_cast<std::size_t>(i * n_tiles + j)],
                            a_tile(nl::all, nl::ds(i * tile_m, ms)),
                            b_tile(nl::all, nl::ds(j * tile_n, ns)), {.accumulate = kt > 0});
          }
        }
      }
      // Drain the block: PSUM -> SBUF (casting to the output type) -> HBM.
      store_accumulators(block, acc, c);
    }
  });
  return {c};
}

namespace {

Problem make_matmul(const std::vector<std::int64_t>& shape, DType dtype,
                    const arch::ChipConfig& chip, const OptionValues& options) {
  if (dtype == DType::kFloat8E4M3 && chip.generation < arch::Generation::kGen4)
    throw std::invalid_argument(fmt::format(
        "matmul: float8_e4m3fn (OCP) is a matmul input from NeuronCore-v4 on; {} takes the "
        "legacy float8_e4m3 (--dtype fp8_e4m3)",
        chip.name));
  const DType out = dtype == DType::kFloat32 ? DType::kFloat32 : DType::kBFloat16;
  const MatmulOptions o{.out_dtype = out,
                        .block_m = static_cast<int>(options.integer("block_m")),
                        .block_n = static_cast<int>(options.integer("block_n"))};
  check_psum_block("matmul", o.block_m, o.block_n, chip);
  return matmul_problem("matmul", shape, dtype, out,
                        [o](std::span<const Tensor> in) { return matmul(in, o); });
}

}  // namespace

Problem matmul_problem(const std::string& name, const std::vector<std::int64_t>& shape, DType dtype,
                       DType out, kernel::KernelFn fn) {
  require_dims(shape, 3, "MxNxK");
  const std::int64_t m = shape[0], n = shape[1], k = shape[2];
  Problem p;
  p.label = fmt::format("{} {}x{}x{} {}", name, m, n, k, numerics::name(dtype));
  p.fn = std::move(fn);
  p.inputs.push_back(runtime::random_tensor("a_t", dtype, {k, m}, 1));
  p.inputs.push_back(runtime::random_tensor("b", dtype, {k, n}, 2));
  p.reference = [m, n, k](const std::vector<std::vector<float>>& in, std::size_t,
                          std::span<const std::int64_t> idx) {
    return matmul_reference(
        idx, n, k,
        [&](std::int64_t kk, std::int64_t i) {
          return double(in[0][static_cast<std::size_t>(kk * m + i)]);
        },
        [&](std::int64_t kk, std::int64_t j) {
          return double(in[1][static_cast<std::size_t>(kk * n + j)]);
        });
  };
  // Products of the decoded inputs are exact in fp32 for <= 16-bit inputs; the fp32 PSUM sum
  // of K terms of magnitude <= 1 errs by at most ~K * 2^-24 * sum|terms| (bounded by K), and
  // the output rounds once into its type.
  const double kd = static_cast<double>(k);
  p.tolerance = {kd * 0x1p-22 + 1e-6, half_ulp(out),
                 fmt::format("fp32 accumulation of K={} products (<= K*2^-22 absolute) plus one "
                             "rounding to {} (half an ulp relative)",
                             k, numerics::name(out))};
  p.flops = 2.0 * double(m) * double(n) * double(k);
  p.hbm_bytes = double(numerics::storage_bytes(dtype)) * double(m * k + k * n) +
                double(numerics::storage_bytes(out)) * double(m * n);
  const bool fp8 =
      dtype == DType::kFloat8E4M3 || dtype == DType::kFloat8E4M3Ieee || dtype == DType::kFloat8E5M2;
  p.peak_mode = dtype == DType::kFloat32 ? "fp32" : fp8 ? "fp8" : "bf16";
  return p;
}

namespace {

const bool matmul_registered = register_kernel(
    {"matmul",
     "c[M,N] = a[M,K] @ b[K,N] with a given as a_t [K,M]; blocked, PSUM accumulation",
     "MxNxK",
     {1024, 1024, 1024},
     DType::kBFloat16,
     {DType::kBFloat16, DType::kFloat16, DType::kFloat32, DType::kFloat8E4M3,
      DType::kFloat8E4M3Ieee, DType::kFloat8E5M2},
     make_matmul,
     {KernelOption::integer(
          "block_m", MatmulOptions{}.block_m, 1, 8,
          "output tiles of 128 rows computed together (block_m x block_n <= the 8 PSUM banks)"),
      KernelOption::integer(
          "block_n", MatmulOptions{}.block_n, 1, 8,
          "output tiles of 512 columns computed together; each a_t tile streams block_n "
          "moving tiles")}});

}  // namespace

}  // namespace trnsim::kernels
