// Transposes of a 2-D HBM matrix: on the tensor engine and on the DMA engines.
//
// Tensor engine ("transpose"): the matrix is walked in 1024 x 1024 super-blocks. Eight
// [<=128, <=1024] row strips are loaded (1024 contiguous elements per partition); each of
// their 128x128 blocks is transposed by nc_transpose into PSUM, the eight blocks of one
// output row band landing side by side in one [<=128, <=1024] PSUM tile (1 bank for BF16,
// 2 for fp32; no single transpose crosses a bank), which is copied to SBUF and stored as
// 1024 contiguous elements per partition. (512 x 512 super-blocks reached 60% of the HBM
// share at 4096^2 BF16, 1024 x 1024 74%: the DMAs are twice as large.)
// nc_transpose is bit-accurate from NeuronCore-v3 on (the 2-byte dtypes keep their dtype in
// PSUM); on NeuronCore-v2 it is a matmul against the identity, exact for finite values.
//
// DMA ("transpose_dma"): dma_transpose reads a [rows, <=128] slab of x and writes its
// transpose [<=128, rows] into SBUF (up to 2048 rows per instruction), then a dma_copy
// stores it: no compute engine is involved. NeuronCore-v3+ (dma_transpose is gen3+).
#include "kernels/transpose.h"

#include <fmt/core.h>

#include <algorithm>

#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace trnsim::kernels {

namespace {

const Tensor& check_input(std::span<const Tensor> in, const char* name) {
  require_inputs(in, {2}, name, "x [R, C]");
  return in[0];
}

}  // namespace

std::vector<Tensor> transpose_pe(std::span<const Tensor> in) {
  const Tensor& x = check_input(in, "transpose");
  const std::int64_t r_total = x.dim(0), c_total = x.dim(1);
  constexpr std::int64_t kBlock = 128, kGroup = 8, kSuper = kBlock * kGroup;
  Tensor out = nl::ndarray({c_total, r_total}, x.dtype(), nl::shared_hbm, "out");
  // Each program of a logical core takes its share of the super-block rows.
  for_each_owned(r_total, kSuper, [&](std::int64_t r0) {
    const std::int64_t rs = std::min(kSuper, r_total - r0);
    for (std::int64_t c0 = 0; c0 < c_total; c0 += kSuper) {
      const std::int64_t cs = std::min(kSuper, c_total - c0);
      // Row strips of the super-block.
      std::vector<Tensor> strips;
      for (std::int64_t i = 0; i * kBlock < rs; ++i) {
        const std::int64_t rp = std::min(kBlock, rs - i * kBlock);
        Tensor s = nl::ndarray({rp, cs}, x.dtype(), nl::sbuf, "strip");
        nisa::dma_copy(s, x(nl::ds(r0 + i * kBlock, rp), nl::ds(c0, cs)), {.name = "load strip"});
        strips.push_back(s);
      }
      // One output band per 128 columns of x.
      for (std::int64_t j = 0; j * kBlock < cs; ++j) {
        const std::int64_t cp = std::min(kBlock, cs - j * kBlock);
        // A fresh band per output band: the allocator rotates them through the PSUM banks,
        // and a band placed over a dead one waits for that one's copy to SBUF (WAR).
        const Tensor band = nl::ndarray({cp, rs}, x.dtype(), nl::psum, "band");
        for (std::size_t i = 0; i < strips.size(); ++i) {
          const std::int64_t rp = strips[i].dim(0);
          nisa::nc_transpose(band(nl::all, nl::ds(static_cast<std::int64_t>(i) * kBlock, rp)),
                             strips[i](nl::all, nl::ds(j * kBlock, cp)),
                             {.engine = isa::Engine::kTensor});
        }
        Tensor o = nl::ndarray({cp, rs}, x.dtype(), nl::sbuf, "band_sb");
        nisa::tensor_copy(o, band);
        nisa::dma_copy(out(nl::ds(c0 + j * kBlock, cp), nl::ds(r0, rs)), o, {.name = "store band"});
      }
    }
  });
  return {out};
}

std::vector<Tensor> transpose_dma(std::span<const Tensor> in) {
  const Tensor& x = check_input(in, "transpose_dma");
  const std::int64_t r_total = x.dim(0), c_total = x.dim(1);
  constexpr std::int64_t kCols = 128, kRows = 2048;
  Tensor out = nl::ndarray({c_total, r_total}, x.dtype(), nl::shared_hbm, "out");
  // Each program of a logical core takes its share of the column slabs.
  for_each_owned(c_total, kCols, [&](std::int64_t c0) {
    const std::int64_t cp = std::min(kCols, c_total - c0);
    for (std::int64_t r0 = 0; r0 < r_total; r0 += kRows) {
      const std::int64_t rs = std::min(kRows, r_total - r0);
      Tensor t = nl::ndarray({cp, rs}, x.dtype(), nl::sbuf, "slab_t");
      nisa::dma_transpose(t, x(nl::ds(r0, rs), nl::ds(c0, cp)), {.name = "transpose slab"});
      nisa::dma_copy(out(nl::ds(c0, cp), nl::ds(r0, rs)), t, {.name = "store slab"});
    }
  });
  return {out};
}

namespace {

Problem make_transpose(const std::vector<std::int64_t>& shape, DType dtype, bool dma) {
  require_dims(shape, 2, "RxC");
  if (numerics::storage_bytes(dtype) != 2 && numerics::storage_bytes(dtype) != 4)
    throw std::invalid_argument("transpose takes 2- or 4-byte dtypes");
  const std::int64_t r = shape[0], c = shape[1];
  Problem p;
  p.label =
      fmt::format("{} {}x{} {}", dma ? "transpose_dma" : "transpose", r, c, numerics::name(dtype));
  p.fn = dma ? kernel::KernelFn(transpose_dma) : kernel::KernelFn(transpose_pe);
  p.inputs.push_back(runtime::random_tensor("x", dtype, {r, c}, 21));
  p.reference = [r, c](const std::vector<std::vector<float>>& in, std::size_t,
                       std::span<const std::int64_t> idx) {
    std::vector<double> out;
    out.reserve(idx.size());
    for (std::int64_t flat : idx) {
      const std::int64_t i = flat / r, j = flat % r;  // out[i, j] = x[j, i]
      out.push_back(in[0][static_cast<std::size_t>(j * c + i)]);
    }
    return out;
  };
  p.tolerance = {0, 0, "a transpose moves bits: exact"};
  p.hbm_bytes = 2.0 * double(numerics::storage_bytes(dtype)) * double(r) * double(c);
  return p;
}

// The two registered transposes differ only in the engine that moves the data.
bool register_transpose(const char* name, const char* summary, bool dma) {
  return register_kernel({name,
                          summary,
                          "RxC",
                          {4096, 4096},
                          DType::kBFloat16,
                          {DType::kBFloat16, DType::kFloat32},
                          [dma](const std::vector<std::int64_t>& s, DType d,
                                const arch::ChipConfig&) { return make_transpose(s, d, dma); }});
}

const bool registered_pe = register_transpose(
    "transpose",
    "out[C, R] = x[R, C]^T on the tensor engine (nc_transpose via PSUM, 128x128 blocks)",
    /*dma=*/false);
const bool registered_dma = register_transpose(
    "transpose_dma",
    "out[C, R] = x[R, C]^T by dma_transpose into SBUF, then stores (NeuronCore-v3+)",
    /*dma=*/true);

}  // namespace

}  // namespace trnsim::kernels
