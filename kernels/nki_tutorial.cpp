// The four matmul kernels of the NKI matrix-multiplication tutorial, written with the C++
// kernel API: the same algorithms and tile/block sizes as the tutorial's published steps,
// so their simulated latencies can be compared with the hardware measurements the tutorial
// reports (docs/validation.md). They compute c = a_t^T @ b like the library matmul and take
// M, N, K multiples of the tile (and block) sizes, as the tutorial's kernels do.
#include <fmt/core.h>

#include <cmath>

#include "kernels/kernels.h"
#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace trnsim::kernels {

namespace {

struct Sizes {
  std::int64_t k, m, n;
  std::int64_t tile_k, tile_m, tile_n;
};

Sizes sizes_of(std::span<const Tensor> in, std::int64_t block_m = 1, std::int64_t block_n = 1,
               std::int64_t block_k = 1) {
  require_inputs(in, {2, 2}, "tutorial matmul", "a_t [K, M] and b [K, N]");
  if (in[0].dim(0) != in[1].dim(0))
    throw kernel::KernelError({}, "tutorial matmul: a_t [K, M] and b [K, N] must share K");
  Sizes s{in[0].dim(0),
          in[0].dim(1),
          in[1].dim(1),
          nl::tile_size::pmax(),
          nl::tile_size::gemm_stationary_fmax(),
          nl::tile_size::gemm_moving_fmax()};
  if (s.m % (s.tile_m * block_m) != 0 || s.n % (s.tile_n * block_n) != 0 ||
      s.k % (s.tile_k * block_k) != 0)
    throw kernel::KernelError(
        {}, fmt::format("tutorial matmul needs M a multiple of {}, N of {} and K of {}",
                        s.tile_m * block_m, s.tile_n * block_n, s.tile_k * block_k));
  return s;
}

// Loads the K tiles [tile_k, cols] of src from row tile k_first * tile_k and column col0, each
// into its own SBUF tile `name`. The instructions carry the caller's line, as if written there.
std::vector<Tensor> load_k_tiles(const Tensor& src, std::int64_t k_first, std::int64_t count,
                                 std::int64_t tile_k, std::int64_t col0, std::int64_t cols,
                                 const char* name, kernel::Loc loc = kernel::Loc::current()) {
  std::vector<Tensor> tiles;
  for (std::int64_t k = k_first; k < k_first + count; ++k) {
    tiles.push_back(nl::ndarray({tile_k, cols}, src.dtype(), nl::sbuf, name, loc));
    nisa::dma_copy(tiles.back(), src(nl::ds(k * tile_k, tile_k), nl::ds(col0, cols)), {}, loc);
  }
  return tiles;
}

// Step 1: one PSUM tile per output tile; both input tiles loaded inside the K loop.
std::vector<Tensor> tiled(std::span<const Tensor> in) {
  const Sizes s = sizes_of(in);
  const Tensor &a_t = in[0], &b = in[1];
  Tensor c = nl::ndarray({s.m, s.n}, a_t.dtype(), nl::shared_hbm, "c");
  // Each program of a logical core takes its share of the output row tiles.
  for_each_owned(s.m / s.tile_m, 1, [&](std::int64_t m) {
    for (std::int64_t n = 0; n < s.n / s.tile_n; ++n) {
      Tensor acc = nl::ndarray({s.tile_m, s.tile_n}, DType::kFloat32, nl::psum, "acc");
      for (std::int64_t k = 0; k < s.k / s.tile_k; ++k) {
        Tensor a_tile = nl::ndarray({s.tile_k, s.tile_m}, a_t.dtype(), nl::sbuf, "a_tile");
        Tensor b_tile = nl::ndarray({s.tile_k, s.tile_n}, b.dtype(), nl::sbuf, "b_tile");
        nisa::dma_copy(a_tile, a_t(nl::ds(k * s.tile_k, s.tile_k), nl::ds(m * s.tile_m, s.tile_m)));
        nisa::dma_copy(b_tile, b(nl::ds(k * s.tile_k, s.tile_k), nl::ds(n * s.tile_n, s.tile_n)));
        nisa::nc_matmul(acc, a_tile, b_tile, {.accumulate = k > 0});
      }
      Tensor out = nl::ndarray(acc.shape(), c.dtype(), nl::sbuf, "c_tile");
      nisa::tensor_copy(out, acc);
      nisa::dma_copy(c(nl::ds(m * s.tile_m, s.tile_m), nl::ds(n * s.tile_n, s.tile_n)), out);
    }
  });
  return {c};
}

// Step 2: the a_t column of tiles is loaded once per m, the b column once per (m, n).
std::vector<Tensor> hoisted(std::span<const Tensor> in) {
  const Sizes s = sizes_of(in);
  const Tensor &a_t = in[0], &b = in[1];
  Tensor c = nl::ndarray({s.m, s.n}, a_t.dtype(), nl::shared_hbm, "c");
  const std::int64_t kt = s.k / s.tile_k;
  // Each program of a logical core takes its share of the output row tiles.
  for_each_owned(s.m / s.tile_m, 1, [&](std::int64_t m) {
    const std::vector<Tensor> a_tiles =
        load_k_tiles(a_t, 0, kt, s.tile_k, m * s.tile_m, s.tile_m, "a_tile");
    for (std::int64_t n = 0; n < s.n / s.tile_n; ++n) {
      const std::vector<Tensor> b_tiles =
          load_k_tiles(b, 0, kt, s.tile_k, n * s.tile_n, s.tile_n, "b_tile");
      Tensor acc = nl::ndarray({s.tile_m, s.tile_n}, DType::kFloat32, nl::psum, "acc");
      for (std::int64_t k = 0; k < kt; ++k)
        nisa::nc_matmul(acc, a_tiles[static_cast<std::size_t>(k)],
                        b_tiles[static_cast<std::size_t>(k)], {.accumulate = k > 0});
      Tensor out = nl::ndarray(acc.shape(), c.dtype(), nl::sbuf, "c_tile");
      nisa::tensor_copy(out, acc);
      nisa::dma_copy(c(nl::ds(m * s.tile_m, s.tile_m), nl::ds(n * s.tile_n, s.tile_n)), out);
    }
  });
  return {c};
}

// Step 3: blocks of 2 x 2 output tiles (256 x 1024) share their loaded input columns.
std::vector<Tensor> blocked(std::span<const Tensor> in) {
  constexpr std::int64_t kBlockM = 2, kBlockN = 2;
  const Sizes s = sizes_of(in, kBlockM, kBlockN);
  const Tensor &a_t = in[0], &b = in[1];
  Tensor c = nl::ndarray({s.m, s.n}, a_t.dtype(), nl::shared_hbm, "c");
  const std::int64_t kt = s.k / s.tile_k;
  // Each program of a logical core takes its share of the output row blocks.
  for_each_owned(s.m / (s.tile_m * kBlockM), 1, [&](std::int64_t m) {
    std::vector<std::vector<Tensor>> a_tiles;
    for (std::int64_t bm = 0; bm < kBlockM; ++bm)
      a_tiles.push_back(
          load_k_tiles(a_t, 0, kt, s.tile_k, (m * kBlockM + bm) * s.tile_m, s.tile_m, "a_tile"));
    for (std::int64_t n = 0; n < s.n / (s.tile_n * kBlockN); ++n) {
      std::vector<std::vector<Tensor>> b_tiles;
      for (std::int64_t bn = 0; bn < kBlockN; ++bn)
        b_tiles.push_back(
            load_k_tiles(b, 0, kt, s.tile_k, (n * kBlockN + bn) * s.tile_n, s.tile_n, "b_tile"));
      for (std::int64_t bm = 0; bm < kBlockM; ++bm)
        for (std::int64_t bn = 0; bn < kBlockN; ++bn) {
          Tensor acc = nl::ndarray({s.tile_m, s.tile_n}, DType::kFloat32, nl::psum, "acc");
          for (std::int64_t k = 0; k < kt; ++k)
            nisa::nc_matmul(acc, a_tiles[bm][static_cast<std::size_t>(k)],
                            b_tiles[bn][static_cast<std::size_t>(k)], {.accumulate = k > 0});
          Tensor out = nl::ndarray(acc.shape(), c.dtype(), nl::sbuf, "c_tile");
          nisa::tensor_copy(out, acc);
          nisa::dma_copy(c(nl::ds((m * kBlockM + bm) * s.tile_m, s.tile_m),
                           nl::ds((n * kBlockN + bn) * s.tile_n, s.tile_n)),
                         out);
        }
    }
  });
  return {c};
}

// Step 4: blocks in M (16 tiles), N (2) and K (8); results accumulate in SBUF across the K
// blocks; loads are one DMA per [128, block] row of tiles.
constexpr std::int64_t kOptBlockM = 16, kOptBlockN = 2, kOptBlockK = 8;
std::vector<Tensor> optimized(std::span<const Tensor> in) {
  const Sizes s = sizes_of(in, kOptBlockM, kOptBlockN, kOptBlockK);
  const Tensor &a_t = in[0], &b = in[1];
  Tensor c = nl::ndarray({s.m, s.n}, a_t.dtype(), nl::shared_hbm, "c");
  const std::int64_t block_m = s.tile_m * kOptBlockM, block_n = s.tile_n * kOptBlockN,
                     block_k = s.tile_k * kOptBlockK;
  const std::int64_t num_m = s.m / block_m, num_n = s.n / block_n, num_k = s.k / block_k;
  // Each program of a logical core takes its share of the output column blocks.
  for_each_owned(num_n, 1, [&](std::int64_t n) {
    // result[m][bm][bn]: SBUF accumulators in the output type, zeroed.
    std::vector<Tensor> result;
    for (std::int64_t i = 0; i < num_m * kOptBlockM * kOptBlockN; ++i) {
      result.push_back(nl::ndarray({s.tile_m, s.tile_n}, a_t.dtype(), nl::sbuf, "result"));
      nisa::memset(result.back(), 0.0f);
    }
    auto at = [&](std::int64_t m, std::int64_t bm, std::int64_t bn) -> Tensor& {
      return result[static_cast<std::size_t>((m * kOptBlockM + bm) * kOptBlockN + bn)];
    };
    for (std::int64_t k = 0; k < num_k; ++k) {
      const std::vector<Tensor> b_tiles =
          load_k_tiles(b, kOptBlockK * k, kOptBlockK, s.tile_k, block_n * n, block_n, "b_tile");
      for (std::int64_t m = 0; m < num_m; ++m) {
        const std::vector<Tensor> a_tiles =
            load_k_tiles(a_t, kOptBlockK * k, kOptBlockK, s.tile_k, block_m * m, block_m, "a_tile");
        for (std::int64_t bn = 0; bn < kOptBlockN; ++bn)
          for (std::int64_t bm = 0; bm < kOptBlockM; ++bm) {
            Tensor acc = nl::ndarray({s.tile_m, s.tile_n}, DType::kFloat32, nl::psum, "acc");
            for (std::int64_t bk = 0; bk < kOptBlockK; ++bk)
              nisa::nc_matmul(
                  acc,
                  a_tiles[static_cast<std::size_t>(bk)](nl::all, nl::ds(bm * s.tile_m, s.tile_m)),
                  b_tiles[static_cast<std::size_t>(bk)](nl::all, nl::ds(bn * s.tile_n, s.tile_n)),
                  {.accumulate = bk > 0});
            nisa::tensor_tensor(at(m, bm, bn), at(m, bm, bn), acc, isa::AluOp::kAdd);
          }
      }
    }
    for (std::int64_t m = 0; m < num_m; ++m)
      for (std::int64_t bm = 0; bm < kOptBlockM; ++bm) {
        // result_packed takes the result tiles' dtype, as in the tutorial (SDK 2.23) whose
        // trn1 latencies docs/validation.md compares with.
        Tensor packed = nl::ndarray({s.tile_m, block_n}, a_t.dtype(), nl::sbuf, "packed");
        for (std::int64_t bn = 0; bn < kOptBlockN; ++bn)
          nisa::tensor_copy(packed(nl::all, nl::ds(bn * s.tile_n, s.tile_n)), at(m, bm, bn));
        nisa::dma_copy(
            c(nl::ds((kOptBlockM * m + bm) * s.tile_m, s.tile_m), nl::ds(block_n * n, block_n)),
            packed);
      }
  });
  return {c};
}

Problem tutorial_problem(const char* name, kernel::KernelFn fn,
                         const std::vector<std::int64_t>& shape, DType dtype,
                         std::int64_t sbuf_accumulations) {
  Problem p = matmul_problem(name, shape, dtype, dtype, std::move(fn));
  if (sbuf_accumulations > 1) {
    // Partial sums round into the output type once per K block before they are added.
    // Each rounding errs by half an ulp at the magnitude the running sums reach: with inputs
    // uniform in [-1, 1) a sum of k products has standard deviation sqrt(k / 9); 5 sigma
    // bounds it over the sampled elements.
    const double sigma = std::sqrt(static_cast<double>(shape[2]) / 9.0);
    const double magnitude = std::exp2(std::ceil(std::log2(5 * sigma)));
    p.tolerance.abs += static_cast<double>(sbuf_accumulations + 1) * half_ulp(dtype) * magnitude;
    p.tolerance.why += fmt::format(
        "; {} partial sums added in {} SBUF: one rounding each, half an "
        "ulp at |sum| <= {} (5 sigma)",
        sbuf_accumulations, numerics::name(dtype), magnitude);
  }
  return p;
}

const std::vector<DType> kTutorialDtypes = {DType::kBFloat16, DType::kFloat32};

// The tutorial's steps, each registered as a kernel.
struct TutorialStep {
  const char* name;
  const char* summary;
  std::vector<std::int64_t> default_shape;
  kernel::KernelFn fn;
  // K per partial sum the kernel adds in SBUF (0: all of K accumulates in PSUM).
  std::int64_t sbuf_block_k = 0;
};

const TutorialStep kSteps[] = {
    {"tutorial_matmul_tiled",
     "NKI matmul tutorial, step 1: tiled (loads inside the K loop)",
     {512, 1024, 512},
     tiled},
    {"tutorial_matmul_hoisted",
     "NKI matmul tutorial, step 2: loads hoisted out of the inner loops",
     {512, 1024, 512},
     hoisted},
    {"tutorial_matmul_blocked",
     "NKI matmul tutorial, step 3: M and N blocked (2 x 2 tiles)",
     {512, 1024, 512},
     blocked},
    {"tutorial_matmul_optimized",
     "NKI matmul tutorial, step 4: M, N, K blocked (16 x 2 x 8 tiles), SBUF accumulation",
     {2048, 1024, 2048},
     optimized,
     128 * kOptBlockK},
};

void register_step(const TutorialStep& step) {
  register_kernel(
      {step.name, step.summary, "MxNxK", step.default_shape, DType::kBFloat16, kTutorialDtypes,
       [step](const std::vector<std::int64_t>& shape, DType dtype, const arch::ChipConfig&) {
         const std::int64_t sbuf_accumulations =
             step.sbuf_block_k > 0 && shape.size() == 3 ? shape[2] / step.sbuf_block_k : 1;
         return tutorial_problem(step.name, step.fn, shape, dtype, sbuf_accumulations);
       }});
}

const bool nki_tutorial_registered = [] {
  for (const TutorialStep& step : kSteps) register_step(step);
  return true;
}();

}  // namespace

}  // namespace trnsim::kernels
