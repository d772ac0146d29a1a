// Flash-attention forward (one head), NKI style.
//
// Per query tile of 128 rows (queries on partitions) and per key block of kv_block keys:
//
//   S    = q_tile^T k_blk            TensorE, K = D contraction, one matmul per block
//                                    (<= 4096 moving columns on trn3, 512 elsewhere)
//   S   += mask                      VectorE, causal diagonal 128 x 128 square only
//   -mb  = -rowmax(S)                VectorE tensor_reduce(negate) straight from PSUM
//   -m'  = min(-m, -mb)              running (negated) max
//   P    = exp(scale S - scale m')   ScalarE activation from PSUM, BF16 out, row sums in
//                                    reduce_res (fp32, before the cast)
//   a    = exp(scale (m - m'))       ScalarE, rescale factor of the previous steps
//   l    = l a + rowsum(P)
//   P^T  = transpose(P)              TensorE, 128 x 128 chunks into one PSUM tile,
//                                    one PSUM -> SBUF copy per group
//   O'   = P V                       TensorE, P^T chunk stationary, V chunk moving,
//                                    accumulated over the block in one PSUM bank
//   O    = O a + O'                  VectorE scalar_tensor_tensor (fp32 in SBUF)
//
// and at the end out = O / l. Keys after the diagonal are never computed (causal blocks
// past it are skipped), and only the diagonal 128 x 128 square is masked, with an additive
// mask built once by affine_select (0 where key <= query, -1e30 elsewhere).
//
// K^T and V stay resident in SBUF (one tile per block / per 128 keys, loaded up front so
// the DMA queues stream them while the first query tiles compute); every value of the
// loop is a fresh declaration, so the allocator rotates buffers and consecutive query tiles
// overlap on the engines.
#include "kernels/attention.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "kernels/registry.h"
#include "kernels/tiling.h"

namespace trnsim::kernels {

namespace {

using kernel::KernelError;
using kernel::Tensor;

constexpr float kMasked = -1e30f;  // additive mask: exp(scale * (s + kMasked) - ...) == 0

// K^T [D, S] as resident SBUF blocks of `kvb` keys.
std::vector<Tensor> load_key_blocks(const Tensor& k_t, std::int64_t kvb) {
  const std::int64_t d = k_t.dim(0), s = k_t.dim(1);
  std::vector<Tensor> blocks;
  for (std::int64_t b0 = 0; b0 < s; b0 += kvb) {
    const std::int64_t w = std::min(kvb, s - b0);
    Tensor t = nl::ndarray({d, w}, k_t.dtype(), nl::sbuf, "k_blk");
    nisa::dma_copy(t, k_t(nl::all, nl::ds(b0, w)));
    blocks.push_back(t);
  }
  return blocks;
}

// V [S, D] as resident SBUF chunks of 128 keys (the moving operand of P V).
std::vector<Tensor> load_value_chunks(const Tensor& v) {
  const std::int64_t s = v.dim(0), d = v.dim(1), pmax = nl::tile_size::pmax();
  std::vector<Tensor> chunks;
  for (std::int64_t c0 = 0; c0 < s; c0 += pmax) {
    const std::int64_t w = std::min(pmax, s - c0);
    Tensor t = nl::ndarray({w, d}, v.dtype(), nl::sbuf, "v_chunk");
    nisa::dma_copy(t, v(nl::ds(c0, w), nl::all));
    chunks.push_back(t);
  }
  return chunks;
}

// The additive causal mask of a diagonal [128, 128] tile: 0 where key <= query, kMasked above.
Tensor causal_mask() {
  const std::int64_t pmax = nl::tile_size::pmax();
  Tensor zero = nl::zeros({pmax, pmax}, DType::kFloat32, nl::sbuf, "zero");
  Tensor mask = nl::ndarray({pmax, pmax}, DType::kFloat32, nl::sbuf, "causal_mask");
  // keep where query (partition p) - key (column i) >= 0
  nisa::affine_select(
      mask, zero, isa::AluOp::kGreaterEqual, kMasked,
      {.pattern = {{-1, static_cast<std::uint32_t>(pmax)}}, .offset = 0, .channel_multiplier = 1});
  return mask;
}

// P^T of a [r, w] block of probabilities, by 128-key chunks: on the tensor engine (grouped
// into one PSUM tile per bank, one PSUM -> SBUF copy per group), or for every
// dma_transpose_period-th chunk by a DMA transpose SBUF -> SBUF. Chunk c is [kw, r].
std::vector<Tensor> transpose_probabilities(const Tensor& p, std::int64_t r, std::int64_t w,
                                            std::int64_t dma_transpose_period) {
  const std::int64_t pmax = nl::tile_size::pmax();
  // P^T chunks per PSUM tile: one bank of BF16 (1024 per partition) = 8 chunks of 128.
  const std::int64_t group = std::max<std::int64_t>(1, nl::tile_size::psum_bank_fmax() * 2 / pmax);
  const std::int64_t chunks = ceil_div(w, pmax);
  std::vector<Tensor> pt_of(static_cast<std::size_t>(chunks));
  std::vector<std::int64_t> on_tensor;
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t k0 = c * pmax, kw = std::min(pmax, w - k0);
    if (dma_transpose_period > 0 && c % dma_transpose_period == dma_transpose_period - 1) {
      Tensor t = nl::ndarray({kw, r}, DType::kBFloat16, nl::sbuf, "pt_dma");
      nisa::dma_transpose(t, p(nl::all, nl::ds(k0, kw)));
      pt_of[static_cast<std::size_t>(c)] = t;
    } else {
      on_tensor.push_back(c);
    }
  }
  const auto n_tensor = static_cast<std::int64_t>(on_tensor.size());
  for (std::int64_t g0 = 0; g0 < n_tensor; g0 += group) {
    const std::int64_t gn = std::min(group, n_tensor - g0);
    Tensor pt_ps = nl::ndarray({pmax, gn * r}, DType::kBFloat16, nl::psum, "pt_ps");
    Tensor pt = nl::ndarray({pmax, gn * r}, DType::kBFloat16, nl::sbuf, "pt");
    std::int64_t full = 0;  // chunks of 128 keys in this group (a ragged one comes last)
    for (std::int64_t i = 0; i < gn; ++i) {
      const std::int64_t c = on_tensor[static_cast<std::size_t>(g0 + i)];
      const std::int64_t k0 = c * pmax, kw = std::min(pmax, w - k0);
      nisa::nc_transpose(pt_ps(nl::ds(0, kw), nl::ds(i * r, r)), p(nl::all, nl::ds(k0, kw)),
                         {.engine = isa::Engine::kTensor});
      pt_of[static_cast<std::size_t>(c)] = pt(nl::ds(0, kw), nl::ds(i * r, r));
      if (kw == pmax) ++full;
    }
    if (full > 0)
      nisa::tensor_copy(pt(nl::all, nl::ds(0, full * r)), pt_ps(nl::all, nl::ds(0, full * r)));
    if (full < gn) {
      const std::int64_t kw =
          pt_of[static_cast<std::size_t>(on_tensor[static_cast<std::size_t>(g0 + full)])].dim(0);
      nisa::tensor_copy(pt(nl::ds(0, kw), nl::ds(full * r, r)),
                        pt_ps(nl::ds(0, kw), nl::ds(full * r, r)));
    }
  }
  return pt_of;
}

}  // namespace

std::vector<Tensor> attention(std::span<const Tensor> in, const AttentionOptions& o) {
  require_inputs(in, {2, 2, 2}, "attention", "q_t [D, S], k_t [D, S] and v [S, D]");
  const Tensor& q_t = in[0];
  const Tensor& k_t = in[1];
  const Tensor& v = in[2];
  if (q_t.shape() != k_t.shape() || v.dim(0) != q_t.dim(1) || v.dim(1) != q_t.dim(0))
    throw KernelError({}, "attention: expected q_t [D, S], k_t [D, S] and v [S, D]");
  const std::int64_t d = q_t.dim(0), s = q_t.dim(1);
  const std::int64_t pmax = nl::tile_size::pmax();
  if (d > pmax)
    throw KernelError({}, fmt::format("attention: head dim {} exceeds {} partitions", d, pmax));
  if (o.kv_block < 128 || o.kv_block % 128 != 0 || o.kv_block > 2048)
    throw KernelError(
        {},
        fmt::format("attention: kv_block {} must be a multiple of 128 in [128, 2048]", o.kv_block));
  const float scale =
      o.scale != 0.0f ? o.scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const std::int64_t kvb = o.kv_block;
  const std::int64_t mm_cols = std::min<std::int64_t>(nl::tile_size::gemm_moving_fmax(), kvb);
  Tensor out = nl::ndarray({s, d}, o.out_dtype, nl::shared_hbm, "out");

  // Resident K^T blocks and V chunks of 128 keys.
  const std::vector<Tensor> k_blk = load_key_blocks(k_t, kvb);
  const std::vector<Tensor> v_chunk = load_value_chunks(v);
  const Tensor mask = o.causal ? causal_mask() : Tensor{};

  // Causal query tiles run longest first (tile i sees i + 1 key tiles), so the short ones
  // fill the engines while the last long ones drain.
  const std::int64_t q_tiles = ceil_div(s, pmax);
  // Each program of a logical core takes its share of the query tiles (round-robin, which also
  // balances the causal ones).
  for_each_owned(q_tiles, 1, [&](std::int64_t qi) {
    const std::int64_t q0 = (o.causal ? q_tiles - 1 - qi : qi) * pmax;
    const std::int64_t r = std::min(pmax, s - q0);
    Tensor q_tile = nl::ndarray({d, r}, q_t.dtype(), nl::sbuf, "q_tile");
    nisa::dma_copy(q_tile, q_t(nl::all, nl::ds(q0, r)));
    const std::int64_t kv_len = o.causal ? q0 + r : s;

    Tensor neg_max, sum, acc;  // running -max, sum of exp, unnormalised output
    for (std::int64_t b0 = 0; b0 < kv_len; b0 += kvb) {
      const bool first = b0 == 0;
      const std::int64_t w = std::min(kvb, kv_len - b0);
      const Tensor& kb = k_blk[static_cast<std::size_t>(b0 / kvb)];

      Tensor scores = nl::ndarray({r, w}, DType::kFloat32, nl::psum, "scores");
      for (std::int64_t c0 = 0; c0 < w; c0 += mm_cols) {
        const std::int64_t cw = std::min(mm_cols, w - c0);
        nisa::nc_matmul(scores(nl::all, nl::ds(c0, cw)), q_tile, kb(nl::all, nl::ds(c0, cw)));
      }
      if (o.causal && b0 + w == kv_len) {
        // The diagonal square: keys q0 .. q0 + r - 1 against queries q0 .. q0 + r - 1.
        Tensor diag = scores(nl::all, nl::ds(w - r, r));
        nisa::tensor_tensor(diag, diag, mask(nl::ds(0, r), nl::ds(0, r)), isa::AluOp::kAdd,
                            {.engine = isa::Engine::kVector});
      }

      Tensor blk_neg_max = nl::ndarray({r, 1}, DType::kFloat32, nl::sbuf, "blk_neg_max");
      nisa::tensor_reduce(blk_neg_max, scores, isa::AluOp::kMaximum,
                          {.negate = true, .common = {.engine = isa::Engine::kVector}});
      Tensor new_neg_max = blk_neg_max;
      if (!first) {
        new_neg_max = nl::ndarray({r, 1}, DType::kFloat32, nl::sbuf, "neg_max");
        nisa::tensor_tensor(new_neg_max, neg_max, blk_neg_max, isa::AluOp::kMinimum);
      }
      Tensor bias = nl::ndarray({r, 1}, DType::kFloat32, nl::sbuf, "exp_bias");  // -scale * max
      nisa::tensor_scalar(bias, new_neg_max, isa::AluOp::kMultiply, scale);

      Tensor p = nl::ndarray({r, w}, DType::kBFloat16, nl::sbuf, "p");
      Tensor row_sum = nl::ndarray({r, 1}, DType::kFloat32, nl::sbuf, "row_sum");
      nisa::activation(p, isa::ActivationFunc::kExp, scores,
                       {.scale = scale, .bias = bias, .reduce_res = row_sum});

      Tensor alpha;
      if (!first) {
        // exp(scale * max_old - scale * max_new)
        alpha = nl::ndarray({r, 1}, DType::kFloat32, nl::sbuf, "alpha");
        nisa::activation(alpha, isa::ActivationFunc::kExp, neg_max,
                         {.scale = -scale, .bias = bias});
        Tensor new_sum = nl::ndarray({r, 1}, DType::kFloat32, nl::sbuf, "sum");
        nisa::scalar_tensor_tensor(new_sum, sum, isa::AluOp::kMultiply, alpha, isa::AluOp::kAdd,
                                   row_sum);
        sum = new_sum;
      } else {
        sum = row_sum;
      }
      neg_max = new_neg_max;

      // P^T by 128-key chunks, then P V accumulated over the block in one PSUM bank.
      Tensor pv = nl::ndarray({r, d}, DType::kFloat32, nl::psum, "pv");
      const std::int64_t chunks = ceil_div(w, pmax);
      const std::vector<Tensor> pt_of = transpose_probabilities(p, r, w, o.dma_transpose_period);
      for (std::int64_t c = 0; c < chunks; ++c)
        nisa::nc_matmul(pv, pt_of[static_cast<std::size_t>(c)],
                        v_chunk[static_cast<std::size_t>((b0 + c * pmax) / pmax)],
                        {.accumulate = c > 0});
      Tensor new_acc = nl::ndarray({r, d}, DType::kFloat32, nl::sbuf, "acc");
      if (first) {
        nisa::tensor_copy(new_acc, pv);
      } else {
        nisa::scalar_tensor_tensor(new_acc, acc, isa::AluOp::kMultiply, alpha, isa::AluOp::kAdd, pv,
                                   {.common = {.engine = isa::Engine::kVector}});
      }
      acc = new_acc;
    }

    Tensor inv = nl::ndarray({r, 1}, DType::kFloat32, nl::sbuf, "inv_sum");
    nisa::reciprocal(inv, sum);
    Tensor o_tile = nl::ndarray({r, d}, o.out_dtype, nl::sbuf, "o_tile");
    nisa::tensor_scalar(o_tile, acc, isa::AluOp::kMultiply, inv);
    nisa::dma_copy(out(nl::ds(q0, r), nl::all), o_tile);
  });
  return {out};
}

namespace {

// Double reference: one output row per sampled query row (its scores, softmax and P V).
ReferenceFn attention_reference(std::int64_t s, std::int64_t d, bool causal, double scale) {
  return [=](const std::vector<std::vector<float>>& in, std::size_t,
             std::span<const std::int64_t> idx) {
    const auto& qt = in[0];
    const auto& kt = in[1];
    const auto& vv = in[2];
    const auto output_row = [&](std::int64_t i) {  // query row i of the output
      const std::int64_t n = causal ? i + 1 : s;
      // Scores accumulate over the head dimension in the outer loop so that the inner loop
      // walks a row of K^T contiguously (vectorised); each score still sums k = 0, 1, ...
      std::vector<double> sc(static_cast<std::size_t>(n), 0.0);
      for (std::int64_t k = 0; k < d; ++k) {
        add_scaled(sc, qt[static_cast<std::size_t>(k * s + i)], kt.data() + k * s);
      }
      double mx = -INFINITY;
      for (auto& x : sc) mx = std::max(mx, x *= scale);
      double l = 0;
      for (auto& x : sc) l += (x = std::exp(x - mx));
      std::vector<double> o(static_cast<std::size_t>(d), 0.0);
      for (std::int64_t j = 0; j < n; ++j)
        add_scaled(o, sc[static_cast<std::size_t>(j)], vv.data() + j * d);
      for (auto& x : o) x /= l;
      return o;
    };
    return sample_by_row(idx, d, output_row,
                         [](const std::vector<double>& row, std::int64_t, std::int64_t c) {
                           return row[static_cast<std::size_t>(c)];
                         });
  };
}

Problem make_attention(const std::vector<std::int64_t>& shape, DType dtype, bool causal,
                       DType out_dtype, const OptionValues& options, int dma_transpose_period) {
  const int kv_block = static_cast<int>(options.integer("kv_block"));
  require_dims(shape, 2, "SxD");
  const std::int64_t s = shape[0], d = shape[1];
  if (d > 128) throw std::invalid_argument(fmt::format("attention: head dim {} exceeds 128", d));
  if (dtype != DType::kBFloat16) throw std::invalid_argument("attention takes bfloat16 inputs");
  Problem p;
  p.label =
      fmt::format("attention{}{} {}x{} {}", causal ? "_causal" : "",
                  dma_transpose_period == 0 ? " (PE transposes)" : "", s, d, numerics::name(dtype));
  p.fn = [causal, out_dtype, kv_block, dma_transpose_period](std::span<const Tensor> in) {
    return attention(in, {.causal = causal,
                          .out_dtype = out_dtype,
                          .kv_block = kv_block,
                          .dma_transpose_period = dma_transpose_period});
  };
  // Queries in [-3, 3) make the softmax peaked enough (score std ~1.2) that a wrong mask,
  // max or rescale shows far above the tolerance.
  p.inputs.push_back(runtime::random_tensor("q_t", dtype, {d, s}, 11, -3.0f, 3.0f));
  p.inputs.push_back(runtime::random_tensor("k_t", dtype, {d, s}, 12));
  p.inputs.push_back(runtime::random_tensor("v", dtype, {s, d}, 13));
  const double scale =
      static_cast<double>(static_cast<float>(1.0 / std::sqrt(static_cast<double>(d))));
  p.reference = attention_reference(s, d, causal, scale);
  // P is rounded to BF16 (relative error <= 2^-8 per weight) before the P V matmul while the
  // row sums use the fp32 values, so |error| <= 2^-8 * sum_j p_j |v_j| / l <= 2^-8 max|v|
  // (= 2^-8, v in [-1, 1)); fp32 scores, exponent arguments and accumulations add < 1e-5;
  // the output rounds once into its type.
  p.tolerance = {0x1p-8 + 1e-5, half_ulp(out_dtype),
                 fmt::format("BF16 probabilities in the P V matmul (<= 2^-8 max|v| absolute), fp32 "
                             "scores and accumulation, one rounding to {}",
                             numerics::name(out_dtype))};
  const double sd = static_cast<double>(s), dd = static_cast<double>(d);
  // Useful work: QK^T and PV over the visible (query, key) pairs.
  const double pairs = causal ? sd * (sd + 1) / 2 : sd * sd;
  p.flops = 4.0 * pairs * dd;
  p.hbm_bytes = 3.0 * sd * dd * double(numerics::storage_bytes(dtype)) +
                sd * dd * double(numerics::storage_bytes(out_dtype));
  p.peak_mode = "bf16";
  return p;
}

// The knobs of AttentionOptions that do not change the problem (causal and the output type
// are the registered names' own); attention_pe fixes the transposes on the tensor engine.
std::vector<KernelOption> attention_options(bool dma_transposes) {
  std::vector<KernelOption> options = {KernelOption::integer(
      "kv_block", AttentionOptions{}.kv_block, 128, 2048,
      "keys per online-softmax step: one 128 x kv_block fp32 score block in PSUM", 128)};
  if (dma_transposes)
    options.push_back(KernelOption::integer(
        "dma_transpose_period", AttentionOptions{}.dma_transpose_period, 0, 16,
        "every n-th 128-key P^T chunk of a step is transposed by DMA instead of "
        "the tensor engine (0: none)"));
  return options;
}

// The registered attention kernels: one problem maker, with causal masking, the output type
// and the transpose path fixed per name.
struct AttentionVariant {
  const char* name;
  const char* summary;
  bool causal;
  DType out_dtype;
  bool dma_transposes;  // false: every P^T transpose on the tensor engine
};

const AttentionVariant kAttentionVariants[] = {
    {"attention",
     "flash-attention forward, one head: softmax(q k^T / sqrt(D)) v; inputs q_t [D,S], k_t [D,S], "
     "v [S,D] BF16, output [S,D] BF16",
     false, DType::kBFloat16, true},
    {"attention_causal",
     "causal flash-attention forward (key j visible to query i iff j <= i); same layout as "
     "attention",
     true, DType::kBFloat16, true},
    {"attention_pe",
     "flash-attention forward as 'attention' with every P^T transpose on the tensor engine (no "
     "DMA transposes)",
     false, DType::kBFloat16, false},
    {"attention_f32out", "flash-attention forward as 'attention' with an fp32 output", false,
     DType::kFloat32, true},
};

void register_attention(const AttentionVariant& v) {
  register_kernel({v.name,
                   v.summary,
                   "SxD",
                   {4096, 128},
                   DType::kBFloat16,
                   {DType::kBFloat16},
                   [v](const std::vector<std::int64_t>& shape, DType dtype, const arch::ChipConfig&,
                       const OptionValues& o) {
                     const int period =
                         v.dma_transposes ? static_cast<int>(o.integer("dma_transpose_period")) : 0;
                     return make_attention(shape, dtype, v.causal, v.out_dtype, o, period);
                   },
                   attention_options(v.dma_transposes)});
}

const bool attention_registered = [] {
  for (const AttentionVariant& v : kAttentionVariants) register_attention(v);
  return true;
}();

}  // namespace

}  // namespace trnsim::kernels
