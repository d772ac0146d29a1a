// Gated MLP. Per block of up to 512 tokens (the moving free size):
//
//   x^T [H, Tb]       DMA transposes from HBM (one per 128-column slice of x): the
//                     contraction dim H lands on partitions without the tensor engine
//   for each 512-wide slice of F (weights streamed, one DMA per 128 x 512 tile):
//     for each 128 rows f of it:
//       g^T, u^T [f, Tb] = W_gate/up[:, f]^T x^T     TensorE, accumulated over H in PSUM
//       a^T = act(g^T) * u^T                       ScalarE act (PSUM in), VectorE product
//                                                  (PSUM in), BF16 out
//   for each slice of down_cols output columns (W_down streamed per slice):
//     y[t, cols] = a[t, :] W_down[:, cols]         TensorE, a^T 128-token slices stationary,
//                                                  accumulated over F in PSUM, drained
//                                                  through SBUF (BF16) to HBM
//
// The intermediate a^T [F, Tb] stays in SBUF between the two phases (F x Tb x 2 / 128
// bytes per partition), so no PSUM accumulator lives across the F loop. Weights are read
// once per token block: HBM traffic 6 H F bytes per Tb tokens, i.e. Tb flop per byte
// (512 >> the 128 flop/B ridge of a trn3 core), so large problems are compute bound.
#include "kernels/mlp.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace trnsim::kernels {

using kernel::KernelError;
using kernel::Tensor;

std::vector<Tensor> mlp(std::span<const Tensor> in, const MlpOptions& o) {
  require_inputs(in, {2, 2, 2, 2}, "mlp", "x [T, H], w_gate [H, F], w_up [H, F] and w_down [F, H]");
  const Tensor& x = in[0];
  const Tensor& wg = in[1];
  const Tensor& wu = in[2];
  const Tensor& wd = in[3];
  if (wu.shape() != wg.shape() || wg.dim(0) != x.dim(1) || wd.dim(0) != wg.dim(1) ||
      wd.dim(1) != x.dim(1))
    throw KernelError({}, "mlp: expected x [T, H], w_gate and w_up [H, F], w_down [F, H]");
  if (o.act != isa::ActivationFunc::kSilu && o.act != isa::ActivationFunc::kGelu)
    throw KernelError({}, "mlp: the activation is silu or gelu");
  const std::int64_t t_total = x.dim(0), h = x.dim(1), f = wg.dim(1);
  const std::int64_t pmax = nl::tile_size::pmax();
  const std::int64_t tb_max = std::min(o.token_block, nl::tile_size::gemm_moving_fmax());
  const std::int64_t slab =
      std::min<std::int64_t>(512, nl::tile_size::gemm_moving_fmax());  // F columns per gate/up DMA
  const std::int64_t dc = std::min(o.down_cols, nl::tile_size::psum_bank_fmax());
  const std::int64_t h_tiles = ceil_div(h, pmax), f_tiles = ceil_div(f, pmax);
  {
    // Live per partition: x^T, a^T, a gate+up slab pair and a down slab (x2 for overlap).
    const std::int64_t bytes =
        2 * (h_tiles * tb_max + f_tiles * tb_max + 2 * h_tiles * slab + f_tiles * dc) * 2;
    if (bytes > nl::tile_size::sbuf_bytes_per_partition())
      throw KernelError(
          {}, fmt::format(
                  "mlp: H={} F={} with {} tokens per block needs ~{} KiB per partition of SBUF "
                  "(> {} KiB); lower token_block or down_cols",
                  h, f, tb_max, bytes / 1024, nl::tile_size::sbuf_bytes_per_partition() / 1024));
  }
  Tensor y = nl::ndarray({t_total, h}, o.out_dtype, nl::shared_hbm, "y");

  // Each program of a logical core takes its share of the token blocks.
  for_each_owned(t_total, tb_max, [&](std::int64_t t0) {
    const std::int64_t tb = std::min(tb_max, t_total - t0);
    std::vector<Tensor> xt(static_cast<std::size_t>(h_tiles));
    for (std::int64_t kh = 0; kh < h_tiles; ++kh) {
      const std::int64_t h0 = kh * pmax, hk = std::min(pmax, h - h0);
      xt[static_cast<std::size_t>(kh)] = nl::ndarray({hk, tb}, x.dtype(), nl::sbuf, "x_t");
      nisa::dma_transpose(xt[static_cast<std::size_t>(kh)], x(nl::ds(t0, tb), nl::ds(h0, hk)));
    }

    // Phase 1: a^T [F, tb] in SBUF, one tile per 128 rows of F.
    std::vector<Tensor> at(static_cast<std::size_t>(f_tiles));
    for (std::int64_t s0 = 0; s0 < f; s0 += slab) {
      const std::int64_t sw = std::min(slab, f - s0);
      std::vector<Tensor> g_w, u_w;
      for (std::int64_t kh = 0; kh < h_tiles; ++kh) {
        const std::int64_t h0 = kh * pmax, hk = std::min(pmax, h - h0);
        Tensor a = nl::ndarray({hk, sw}, wg.dtype(), nl::sbuf, "w_gate");
        Tensor b = nl::ndarray({hk, sw}, wu.dtype(), nl::sbuf, "w_up");
        nisa::dma_copy(a, wg(nl::ds(h0, hk), nl::ds(s0, sw)));
        nisa::dma_copy(b, wu(nl::ds(h0, hk), nl::ds(s0, sw)));
        g_w.push_back(a);
        u_w.push_back(b);
      }
      for (std::int64_t c0 = 0; c0 < sw; c0 += pmax) {
        const std::int64_t fk = std::min(pmax, sw - c0);
        Tensor g_ps = nl::ndarray({fk, tb}, DType::kFloat32, nl::psum, "gate");
        Tensor u_ps = nl::ndarray({fk, tb}, DType::kFloat32, nl::psum, "up");
        for (std::int64_t kh = 0; kh < h_tiles; ++kh)
          nisa::nc_matmul(g_ps, g_w[static_cast<std::size_t>(kh)](nl::all, nl::ds(c0, fk)),
                          xt[static_cast<std::size_t>(kh)], {.accumulate = kh > 0});
        for (std::int64_t kh = 0; kh < h_tiles; ++kh)
          nisa::nc_matmul(u_ps, u_w[static_cast<std::size_t>(kh)](nl::all, nl::ds(c0, fk)),
                          xt[static_cast<std::size_t>(kh)], {.accumulate = kh > 0});
        Tensor g = nl::ndarray({fk, tb}, DType::kFloat32, nl::sbuf, "act");
        nisa::activation(g, o.act, g_ps);
        Tensor a = nl::ndarray({fk, tb}, DType::kBFloat16, nl::sbuf, "a_t");
        nisa::tensor_tensor(a, g, u_ps, isa::AluOp::kMultiply, {.engine = isa::Engine::kVector});
        at[static_cast<std::size_t>((s0 + c0) / pmax)] = a;
      }
    }

    // Phase 2: y[t0:t0+tb, :] = a W_down, down_cols output columns at a time.
    for (std::int64_t h0 = 0; h0 < h; h0 += dc) {
      const std::int64_t hw = std::min(dc, h - h0);
      std::vector<Tensor> d_w;
      for (std::int64_t kf = 0; kf < f_tiles; ++kf) {
        const std::int64_t f0 = kf * pmax, fk = std::min(pmax, f - f0);
        Tensor w = nl::ndarray({fk, hw}, wd.dtype(), nl::sbuf, "w_down");
        nisa::dma_copy(w, wd(nl::ds(f0, fk), nl::ds(h0, hw)));
        d_w.push_back(w);
      }
      for (std::int64_t j0 = 0; j0 < tb; j0 += pmax) {
        const std::int64_t tr = std::min(pmax, tb - j0);
        Tensor y_ps = nl::ndarray({tr, hw}, DType::kFloat32, nl::psum, "y_acc");
        for (std::int64_t kf = 0; kf < f_tiles; ++kf)
          nisa::nc_matmul(y_ps, at[static_cast<std::size_t>(kf)](nl::all, nl::ds(j0, tr)),
                          d_w[static_cast<std::size_t>(kf)], {.accumulate = kf > 0});
        Tensor y_sb = nl::ndarray({tr, hw}, o.out_dtype, nl::sbuf, "y_tile");
        nisa::tensor_copy(y_sb, y_ps);
        nisa::dma_copy(y(nl::ds(t0 + j0, tr), nl::ds(h0, hw)), y_sb);
      }
    }
  });
  return {y};
}

namespace {

double act_ref(isa::ActivationFunc act, double g) {
  if (act == isa::ActivationFunc::kSilu) return g / (1.0 + std::exp(-g));
  return 0.5 * g * std::erfc(-g / std::sqrt(2.0));
}

Problem make_mlp(const std::vector<std::int64_t>& shape, DType dtype, isa::ActivationFunc act,
                 const OptionValues& options) {
  const std::int64_t token_block = options.integer("token_block"),
                     down_cols = options.integer("down_cols");
  require_dims(shape, 3, "TxHxF");
  if (dtype != DType::kBFloat16) throw std::invalid_argument("mlp takes bfloat16 inputs");
  const std::int64_t t = shape[0], h = shape[1], f = shape[2];
  const bool silu = act == isa::ActivationFunc::kSilu;
  Problem p;
  p.label = fmt::format("mlp{} {}x{}x{} {}", silu ? "" : "_gelu", t, h, f, numerics::name(dtype));
  p.fn = [act, token_block, down_cols](std::span<const Tensor> in) {
    return mlp(in, {.act = act, .token_block = token_block, .down_cols = down_cols});
  };
  // Variance-preserving weights: U(-a, a) with a = sqrt(3 / fan_in), so g, u ~ unit scale.
  const float ah = static_cast<float>(std::sqrt(3.0 / double(h))),
              af = static_cast<float>(std::sqrt(3.0 / double(f)));
  p.inputs.push_back(runtime::random_tensor("x", dtype, {t, h}, 41));
  p.inputs.push_back(runtime::random_tensor("w_gate", dtype, {h, f}, 42, -ah, ah));
  p.inputs.push_back(runtime::random_tensor("w_up", dtype, {h, f}, 43, -ah, ah));
  p.inputs.push_back(runtime::random_tensor("w_down", dtype, {f, h}, 44, -af, af));
  p.reference = [t, h, f, act](const std::vector<std::vector<float>>& in, std::size_t,
                               std::span<const std::int64_t> idx) {
    (void)t;
    // a[tok, :] = act(g) u for a block of tokens: each weight row is read once per block
    // (not once per token) and the inner loop walks it contiguously; every g and u still sums
    // k = 0, 1, ... in order.
    const auto hidden_rows = [&](std::span<const std::int64_t> tokens) {
      const std::size_t nt = tokens.size(), fu = static_cast<std::size_t>(f);
      std::vector<std::vector<double>> g(nt, std::vector<double>(fu, 0.0));
      std::vector<std::vector<double>> u(nt, std::vector<double>(fu, 0.0));
      constexpr std::int64_t kChunk = 256;  // columns per pass: the block's sums stay in L2
      for (std::int64_t j0 = 0; j0 < f; j0 += kChunk) {
        const std::int64_t j1 = std::min(f, j0 + kChunk);
        for (std::int64_t k = 0; k < h; ++k) {
          const float* wgr = in[1].data() + k * f;
          const float* wur = in[2].data() + k * f;
          for (std::size_t b = 0; b < nt; ++b) {
            const double xv = in[0][static_cast<std::size_t>(tokens[b] * h + k)];
            const auto cols = static_cast<std::size_t>(j1 - j0);
            add_scaled(std::span(g[b]).subspan(static_cast<std::size_t>(j0), cols), xv, wgr + j0);
            add_scaled(std::span(u[b]).subspan(static_cast<std::size_t>(j0), cols), xv, wur + j0);
          }
        }
      }
      for (std::size_t b = 0; b < nt; ++b)
        for (std::size_t j = 0; j < fu; ++j) g[b][j] = act_ref(act, g[b][j]) * u[b][j];
      return g;
    };
    // w_down by output column, so that each sampled element reads a contiguous column.
    std::vector<float> w_down_t(static_cast<std::size_t>(f * h));
    for (std::int64_t j = 0; j < f; ++j)
      for (std::int64_t c = 0; c < h; ++c)
        w_down_t[static_cast<std::size_t>(c * f + j)] = in[3][static_cast<std::size_t>(j * h + c)];
    return sample_by_row_blocks(idx, h, 32, hidden_rows,
                                [&](const std::vector<double>& a, std::int64_t, std::int64_t col) {
                                  const float* w = w_down_t.data() + col * f;
                                  double s = 0;
                                  for (std::int64_t j = 0; j < f; ++j)
                                    s += a[static_cast<std::size_t>(j)] * double(w[j]);
                                  return s;
                                });
  };
  // a = act(g) u is rounded to BF16 for the down matmul: independent errors of at most
  // 2^-8 |a_f| (std 2^-8 |a_f| / sqrt(3)). With these weights E[a^2] <= E[g^2] E[u^2] <= 1/9
  // and E[w_down^2] = 1/F, so the error of y has std <= 2^-8 / sqrt(27); 8 sigma of it is
  // the absolute bound. fp32 PSUM sums are ~2^-24 (H + F) relative; BF16 output rounding is
  // half an ulp.
  p.tolerance = {
      8 * 0x1p-8 / std::sqrt(27.0) + 1e-5, half_ulp(DType::kBFloat16),
      "BF16 intermediate a = act(g) u (8-sigma bound of the rounding noise through the down "
      "projection), fp32 PSUM accumulation, BF16 output rounding"};
  p.flops = 6.0 * double(t) * double(h) * double(f);
  p.hbm_bytes = 2.0 * (2.0 * double(t) * double(h) + 3.0 * double(h) * double(f));
  p.peak_mode = "bf16";
  return p;
}

std::vector<KernelOption> mlp_options() {
  return {KernelOption::integer(
              "token_block", MlpOptions{}.token_block, 1, 512,
              "tokens per pass over the weights (the moving free size of the gate/up matmuls)"),
          KernelOption::integer(
              "down_cols", MlpOptions{}.down_cols, 1, 512,
              "output columns per down-projection weight slab (one PSUM bank of fp32)")};
}

// The registered MLP kernels differ only in the gate's activation.
bool register_mlp(const char* name, const char* summary, isa::ActivationFunc act) {
  return register_kernel(
      {name,
       summary,
       "TxHxF",
       {2048, 1024, 4096},
       DType::kBFloat16,
       {DType::kBFloat16},
       [act](const std::vector<std::int64_t>& shape, DType dtype, const arch::ChipConfig&,
             const OptionValues& o) { return make_mlp(shape, dtype, act, o); },
       mlp_options()});
}

const bool registered_silu = register_mlp(
    "mlp",
    "gated MLP y = down(silu(gate(x)) * up(x)); x [T,H], w_gate/w_up [H,F], w_down [F,H], BF16",
    isa::ActivationFunc::kSilu);
const bool registered_gelu =
    register_mlp("mlp_gelu", "gated MLP with GELU (erf form): y = down(gelu(gate(x)) * up(x))",
                 isa::ActivationFunc::kGelu);

}  // namespace

}  // namespace trnsim::kernels
