// Direct (im2col-free) convolution on the tensor engine.
//
// The contraction runs over input channels on partitions (chunks of 128) and over the R x S
// taps in PSUM: for an output tile of K' <= 128 channels x (np rows x qn columns, np * qn
// <= 512 = one fp32 PSUM bank), every (channel chunk, tap (r, s)) adds one matmul
//
//   acc[k, p, q] += sum_c w[k, c, r, s] * band[c, p * stride + r, q * stride + s]
//
// with the stationary the [C', K'] slice of tap (r, s) of the weights and the moving a
// strided window view of an input band [C', rows, cols] in SBUF: no im2col copy, the access
// pattern does the gather (two free dims, steps stride * cols and stride). The band holds the
// input rows and columns the output tile needs, with the zero padding as memset zeros around
// the DMA'd interior. Bands are loaded once per output tile and reused by every K' tile.
//
// The weights are prepared once per channel chunk as [C', R*S, K] (tap t of channels c for
// all K contiguous). w[K, C, R, S] in HBM has R*S contiguous elements per (k, c), so loading
// it with c on partitions would move 2*R*S-byte runs (18 bytes for 3x3 BF16), one DMA
// descriptor each; instead each 128-row slab of K is loaded as it lies ([K', C' * R*S], one
// contiguous run per partition) and every tap's [K', C'] view (step R*S) is transposed on the
// tensor engine into PSUM, a bank's worth of taps at a time, then copied to SBUF.
//
// Limits: the weights of one channel chunk take K * R * S * dtype bytes per partition;
// a band (np - 1) * stride + R rows of (qn - 1) * stride + S columns.
#include "kernels/conv2d.h"

#include <fmt/core.h>

#include <algorithm>

#include "kernels/tiling.h"

namespace trnsim::kernels {

namespace {

// The weights of input channels [c0, c0 + cp) as [cp, taps, K] in SBUF, from w3 = w viewed as
// [K, C, taps] (see the file comment).
Tensor load_weight_taps(const Tensor& w3, std::int64_t c0, std::int64_t cp) {
  const std::int64_t k_total = w3.dim(0), taps = w3.dim(2);
  const std::int64_t kmax = nl::tile_size::pmax();
  // Taps per PSUM tile: one bank holds psum_bank_fmax() fp32 values, twice as many 2-byte
  // ones (a transpose keeps its input's type).
  const std::int64_t bank_bytes = nl::tile_size::psum_bank_fmax() * 4;
  Tensor wt = nl::ndarray({cp, taps, k_total}, w3.dtype(), nl::sbuf, "w_taps");
  for (std::int64_t k0 = 0; k0 < k_total; k0 += kmax) {
    const std::int64_t kn = std::min(kmax, k_total - k0);
    const std::int64_t taps_per_bank = std::max<std::int64_t>(
        1, bank_bytes / (kn * static_cast<std::int64_t>(numerics::storage_bytes(w3.dtype()))));
    Tensor raw = nl::ndarray({kn, cp, taps}, w3.dtype(), nl::sbuf, "w_raw");
    nisa::dma_copy(raw, w3(nl::ds(k0, kn), nl::ds(c0, cp), nl::all), {.name = "load weights"});
    for (std::int64_t t0 = 0; t0 < taps; t0 += taps_per_bank) {
      const std::int64_t tn = std::min(taps_per_bank, taps - t0);
      const Tensor ps = nl::ndarray({cp, tn, kn}, w3.dtype(), nl::psum, "w_taps_ps");
      for (std::int64_t t = 0; t < tn; ++t)
        nisa::nc_transpose(ps(nl::all, t, nl::all), raw(nl::all, nl::all, t0 + t),
                           {.engine = isa::Engine::kTensor});
      nisa::tensor_copy(wt(nl::all, nl::ds(t0, tn), nl::ds(k0, kn)), ps);
    }
  }
  return wt;
}

}  // namespace

std::vector<Tensor> conv2d(std::span<const Tensor> in, const Conv2dOptions& o) {
  require_inputs(in, {4, 4}, "conv2d", "x [N, C, H, W] and w [K, C, R, S]");
  const Tensor& x = in[0];
  const Tensor& w = in[1];
  const std::int64_t n_total = x.dim(0), c_total = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const std::int64_t k_total = w.dim(0), r_taps = w.dim(2), s_taps = w.dim(3);
  if (w.dim(1) != c_total)
    throw kernel::KernelError(
        {}, fmt::format("conv2d: w has {} input channels, x {}", w.dim(1), c_total));
  if (o.stride < 1 || o.pad < 0) throw kernel::KernelError({}, "conv2d: stride >= 1 and pad >= 0");
  const std::int64_t stride = o.stride, pad = o.pad;
  const std::int64_t p_total = (h + 2 * pad - r_taps) / stride + 1;
  const std::int64_t q_total = (wd + 2 * pad - s_taps) / stride + 1;
  if (h + 2 * pad < r_taps || wd + 2 * pad < s_taps || p_total < 1 || q_total < 1)
    throw kernel::KernelError({}, "conv2d: the filter is larger than the padded input");
  Tensor out = nl::ndarray({n_total, k_total, p_total, q_total}, x.dtype(), nl::shared_hbm, "out");

  const std::int64_t pmax = nl::tile_size::pmax();
  const std::int64_t kmax = nl::tile_size::gemm_stationary_fmax();
  const std::int64_t fmax = nl::tile_size::psum_bank_fmax();
  const std::int64_t taps = r_taps * s_taps;
  const std::int64_t c_chunks = ceil_div(c_total, pmax);

  std::vector<Tensor> wts;
  for (std::int64_t cc = 0; cc < c_chunks; ++cc)
    wts.push_back(load_weight_taps(w.reshape({k_total, c_total, taps}), cc * pmax,
                                   std::min(pmax, c_total - cc * pmax)));

  const std::int64_t qn_max = std::min(q_total, fmax);
  const std::int64_t np_max = std::max<std::int64_t>(1, std::min(p_total, fmax / qn_max));
  for (std::int64_t n = 0; n < n_total; ++n) {
    // Each program of a logical core takes its share of the output row tiles of each image.
    for_each_owned(p_total, np_max, [&](std::int64_t p0) {
      const std::int64_t np = std::min(np_max, p_total - p0);
      for (std::int64_t q0 = 0; q0 < q_total; q0 += qn_max) {
        const std::int64_t qn = std::min(qn_max, q_total - q0);
        // Input window of this output tile (may reach into the padding).
        const std::int64_t h0 = p0 * stride - pad, rows = (np - 1) * stride + r_taps;
        const std::int64_t w0 = q0 * stride - pad, cols = (qn - 1) * stride + s_taps;
        const std::int64_t hv0 = std::max<std::int64_t>(0, h0), hv1 = std::min(h, h0 + rows);
        const std::int64_t wv0 = std::max<std::int64_t>(0, w0), wv1 = std::min(wd, w0 + cols);
        const bool padded = hv0 != h0 || hv1 != h0 + rows || wv0 != w0 || wv1 != w0 + cols;
        std::vector<Tensor> bands;
        for (std::int64_t cc = 0; cc < c_chunks; ++cc) {
          const std::int64_t c0 = cc * pmax, cp = std::min(pmax, c_total - c0);
          Tensor band = nl::ndarray({cp, rows, cols}, x.dtype(), nl::sbuf, "band");
          if (padded) nisa::memset(band, 0.0f);
          if (hv1 > hv0 && wv1 > wv0)
            nisa::dma_copy(band(nl::all, nl::ds(hv0 - h0, hv1 - hv0), nl::ds(wv0 - w0, wv1 - wv0)),
                           x(n, nl::ds(c0, cp), nl::ds(hv0, hv1 - hv0), nl::ds(wv0, wv1 - wv0)),
                           {.name = "load band"});
          bands.push_back(band);
        }
        for (std::int64_t k0 = 0; k0 < k_total; k0 += kmax) {
          const std::int64_t kn = std::min(kmax, k_total - k0);
          Tensor acc = nl::ndarray({kn, np, qn}, DType::kFloat32, nl::psum, "acc");
          bool first = true;
          for (std::int64_t cc = 0; cc < c_chunks; ++cc) {
            for (std::int64_t r = 0; r < r_taps; ++r) {
              for (std::int64_t s = 0; s < s_taps; ++s) {
                const Tensor moving = bands[static_cast<std::size_t>(cc)]
                                          .slice(1, r, r + (np - 1) * stride + 1, stride)
                                          .slice(2, s, s + (qn - 1) * stride + 1, stride);
                const Tensor stationary =
                    wts[static_cast<std::size_t>(cc)](nl::all, r * s_taps + s, nl::ds(k0, kn));
                nisa::nc_matmul(acc, stationary, moving, {.accumulate = !first});
                first = false;
              }
            }
          }
          Tensor ot = nl::ndarray({kn, np, qn}, x.dtype(), nl::sbuf, "out_tile");
          nisa::tensor_copy(ot, acc);
          nisa::dma_copy(out(n, nl::ds(k0, kn), nl::ds(p0, np), nl::ds(q0, qn)), ot,
                         {.name = "store out"});
        }
      }
    });
  }
  return {out};
}

Problem make_conv2d_problem(const std::vector<std::int64_t>& s, DType dtype, int stride, int pad) {
  require_dims(s, 7, "NxCxHxWxKxRxS");
  const std::int64_t n = s[0], c = s[1], h = s[2], w = s[3], k = s[4], r = s[5], sw = s[6];
  if (stride < 1 || pad < 0) throw std::invalid_argument("conv2d: stride >= 1, pad >= 0");
  if (h + 2 * pad < r || w + 2 * pad < sw)
    throw std::invalid_argument("conv2d: filter larger than the padded input");
  const std::int64_t p_out = (h + 2 * pad - r) / stride + 1,
                     q_out = (w + 2 * pad - sw) / stride + 1;
  Problem p;
  p.label = fmt::format("conv2d {}x{}x{}x{} * {}x{}x{}x{} stride {} pad {} {}", n, c, h, w, k, c, r,
                        sw, stride, pad, numerics::name(dtype));
  p.fn = [stride, pad](std::span<const Tensor> in) {
    return conv2d(in, {.stride = stride, .pad = pad});
  };
  p.inputs.push_back(runtime::random_tensor("x", dtype, {n, c, h, w}, 61));
  p.inputs.push_back(runtime::random_tensor("w", dtype, {k, c, r, sw}, 62));
  p.reference = [=](const std::vector<std::vector<float>>& in, std::size_t,
                    std::span<const std::int64_t> idx) {
    std::vector<double> out;
    out.reserve(idx.size());
    for (std::int64_t flat : idx) {
      const std::int64_t q = flat % q_out, pp = (flat / q_out) % p_out,
                         kk = (flat / (q_out * p_out)) % k, nn = flat / (q_out * p_out * k);
      double acc = 0;
      for (std::int64_t cc = 0; cc < c; ++cc)
        for (std::int64_t rr = 0; rr < r; ++rr)
          for (std::int64_t ss = 0; ss < sw; ++ss) {
            const std::int64_t hi = pp * stride - pad + rr, wi = q * stride - pad + ss;
            if (hi < 0 || hi >= h || wi < 0 || wi >= w) continue;
            acc += double(in[0][static_cast<std::size_t>(((nn * c + cc) * h + hi) * w + wi)]) *
                   double(in[1][static_cast<std::size_t>(((kk * c + cc) * r + rr) * sw + ss)]);
          }
      out.push_back(acc);
    }
    return out;
  };
  // As the matmul: products of <= 16-bit inputs are exact in fp32 (fp32 inputs round once),
  // and the fp32 PSUM sum of T = C*R*S terms of magnitude < 1 errs by <= T * 2^-22 with
  // running sums below 4; one rounding into the output type.
  const double terms = double(c * r * sw);
  p.tolerance = {
      terms * 0x1p-22 + 1e-6, half_ulp(dtype) * (1 + 0x1p-6),
      fmt::format("fp32 accumulation of C*R*S={} products (<= T*2^-22 absolute) plus one rounding "
                  "to {}",
                  c * r * sw, numerics::name(dtype))};
  p.flops = 2.0 * double(n * k * p_out * q_out) * terms;
  const double e = double(numerics::storage_bytes(dtype));
  p.hbm_bytes = e * double(n * c * h * w + k * c * r * sw + n * k * p_out * q_out);
  p.peak_mode = dtype == DType::kFloat32 ? "fp32" : "bf16";
  return p;
}

namespace {

const std::vector<DType> kConvDtypes = {DType::kBFloat16, DType::kFloat16, DType::kFloat32};

Problem make_same(const std::vector<std::int64_t>& s, DType d, int stride) {
  require_dims(s, 7, "NxCxHxWxKxRxS");
  if (s[5] != s[6] || s[5] % 2 == 0)
    throw std::invalid_argument("conv2d/conv2d_s2 pad (R-1)/2 ('same'): R = S and odd");
  return make_conv2d_problem(s, d, stride, static_cast<int>((s[5] - 1) / 2));
}

// The registered convolutions: one stride and padding each.
struct Conv2dVariant {
  const char* name;
  const char* summary;
  int stride;
  bool same_padding;  // pad (R-1)/2; false: no padding
};

const Conv2dVariant kConv2dVariants[] = {
    {"conv2d",
     "NCHW conv2d, stride 1, zero pad (R-1)/2 ('same'); taps accumulate in PSUM, no im2col", 1,
     true},
    {"conv2d_s2", "NCHW conv2d, stride 2, zero pad (R-1)/2", 2, true},
    {"conv2d_valid", "NCHW conv2d, stride 1, no padding", 1, false},
};

void register_conv2d(const Conv2dVariant& v) {
  register_kernel({v.name,
                   v.summary,
                   "NxCxHxWxKxRxS",
                   {1, 128, 32, 32, 128, 3, 3},
                   DType::kBFloat16,
                   kConvDtypes,
                   [v](const std::vector<std::int64_t>& s, DType d, const arch::ChipConfig&) {
                     return v.same_padding ? make_same(s, d, v.stride)
                                           : make_conv2d_problem(s, d, v.stride, 0);
                   }});
}

const bool conv2d_registered = [] {
  for (const Conv2dVariant& v : kConv2dVariants) register_conv2d(v);
  return true;
}();

}  // namespace

}  // namespace trnsim::kernels
