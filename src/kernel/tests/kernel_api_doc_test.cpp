// The examples of docs/kernel-api.md, traced on trn3: every name the reference uses exists
// and every example is a kernel the tracer accepts (shapes, engines, ISA rules). Keep the
// two in step: a snippet changed in the document is changed here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arch/arch.h"
#include "arch/tests/test_presets.h"
#include "kernel/kernel.h"

namespace trnsim::kernel {
namespace {

using isa::ActivationFunc;
using isa::AluOp;
using isa::Engine;
using numerics::DType;

using arch::testing::trn3;

std::vector<std::string> ops_of(const KernelIr& ir) {
  std::vector<std::string> ops;
  for (const auto& i : ir.instructions) ops.emplace_back(isa::op_name(i.inst.op));
  return ops;
}

// "A first kernel"
std::vector<Tensor> add_one(std::span<const Tensor> in) {
  const Tensor& x = in[0];  // [R, C] in HBM
  Tensor out = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "out");
  const std::int64_t p = nl::tile_size::pmax();
  for (std::int64_t r0 = 0; r0 < x.dim(0); r0 += p) {
    const std::int64_t n = std::min(p, x.dim(0) - r0);
    Tensor t = nl::load(x(nl::ds(r0, n), nl::all));  // HBM -> a new SBUF tile [n, C]
    nisa::tensor_scalar(t, t, AluOp::kAdd, 1.0f);    // one instruction, engine left open
    nl::store(out(nl::ds(r0, n), nl::all), t);       // SBUF -> HBM
  }
  return {out};
}

TEST(KernelApiDoc, FirstKernel) {
  std::vector<TensorSpec> specs = {{"x", DType::kFloat32, {300, 64}}};
  auto ir = trace(add_one, specs, trn3(), {.name = "add_one"});
  ASSERT_EQ(ir.size(), 1u);
  EXPECT_EQ(ir[0].instructions.size(), 9u);  // 3 row tiles x (load, add, store)
}

TEST(KernelApiDoc, Declarations) {
  trace(
      [](std::span<const Tensor>) {
        Tensor x_tile = nl::ndarray({128, 512}, DType::kBFloat16, nl::sbuf, "x_tile");
        Tensor acc = nl::ndarray({128, 512}, DType::kFloat32, nl::psum, "acc");
        Tensor ones = nl::full({128, 1}, 1.0f, DType::kFloat32);  // + one memset
        Tensor zero = nl::zeros({128, 128}, DType::kFloat32, nl::sbuf, "zero");
        Tensor scratch = nl::ndarray({4096, 64}, DType::kFloat32, nl::private_hbm, "scratch");
        Tensor out = nl::ndarray({4096, 64}, DType::kBFloat16, nl::shared_hbm, "out");
        Tensor pinned = nl::ndarray_at({128, 256}, DType::kFloat32, nl::sbuf, 65536, "pinned");
        EXPECT_EQ(x_tile.shape(), (Shape{128, 512}));
        EXPECT_EQ(acc.buffer(), Buffer::kPsum);
        EXPECT_EQ(ones.dtype(), DType::kFloat32);
        EXPECT_EQ(zero.name(), "zero");
        EXPECT_EQ(scratch.buffer(), Buffer::kPrivateHbm);
        EXPECT_EQ(pinned.partition_offset(), 0u);
        EXPECT_EQ(out.buffer(), Buffer::kSharedHbm);
        return std::vector<Tensor>{};  // `out` is never written: returning it is an error
      },
      {}, trn3());
}

TEST(KernelApiDoc, Views) {
  trace(
      [](std::span<const Tensor> in) {
        const Tensor& x = in[0];     // HBM [1024, 512] bf16
        const Tensor& bias = in[1];  // HBM [1, 512] fp32
        Tensor t = nl::ndarray({128, 4, 512}, DType::kBFloat16, nl::sbuf, "t");
        Tensor a = t(nl::ds(32, 32), 2, nl::ds(256, 128));  // [32, 128], partitions 32..63
        Tensor b = t(nl::all, nl::all, Slice{0, kEnd, 2});  // every other column: [128, 4, 256]
        Tensor c = t(5);                                    // partition 5: [1, 4, 512]
        Tensor d = t(nl::all, -1);                          // last row group: [128, 512]
        Tensor e = t.slice(2, 0, 64);                       // [128, 4, 64]
        EXPECT_EQ(a.shape(), (Shape{32, 128}));
        EXPECT_EQ(a.partition_offset(), 32u);
        EXPECT_EQ(b.shape(), (Shape{128, 4, 256}));
        EXPECT_EQ(c.shape(), (Shape{1, 4, 512}));
        EXPECT_EQ(d.shape(), (Shape{128, 512}));
        EXPECT_EQ(e.shape(), (Shape{128, 4, 64}));
        Tensor row = x(7);  // HBM views drop an integer-indexed dim: [512]
        EXPECT_EQ(row.shape(), (Shape{512}));
        // Four rows per partition, in one DMA: [1024, 512] -> [128, 4, 512]
        nisa::dma_copy(t, x(nl::ds(0, 512), nl::all).reshape({128, 4, 512}));
        // One bias row on every partition: a zero-stride partition dim.
        Tensor bias_tile = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf, "bias");
        nisa::dma_copy(bias_tile, bias.broadcast(0, 128));
        // The same [128, 1] column for every element of a row: a broadcast free dim.
        Tensor col = nl::ndarray({128, 1}, DType::kFloat32, nl::sbuf, "col");
        nisa::memset(col, 2.0f);
        Tensor prod = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf, "prod");
        nisa::tensor_tensor(prod, bias_tile, col.broadcast(1, 512), AluOp::kMultiply);
        // Swap the free dims of a tile (the partition dim stays first on chip).
        Tensor tt = t.permute({0, 2, 1});  // [128, 512, 4]
        EXPECT_EQ(tt.shape(), (Shape{128, 512, 4}));
        Tensor bits = bias_tile.view(DType::kInt32);  // same bytes as int32: [128, 512]
        EXPECT_EQ(bits.dtype(), DType::kInt32);
        Tensor halves = bias_tile.view(DType::kBFloat16);  // [128, 1024]
        EXPECT_EQ(halves.shape(), (Shape{128, 1024}));
        Tensor g = col.expand_dim(2).squeeze_dim(2);  // [128, 1, 1] -> [128, 1]
        EXPECT_EQ(g.shape(), (Shape{128, 1}));
        EXPECT_TRUE(t.is_contiguous());
        EXPECT_FALSE(b.is_contiguous());
        // b walks each partition at step 2 across its 4 row groups: one pattern dim.
        const isa::AccessPattern ap = b.ap();
        EXPECT_EQ(ap.partitions, 128u);
        EXPECT_EQ(ap.num_dims, 1);
        EXPECT_EQ(ap.dims[0].step, 2);
        EXPECT_EQ(ap.dims[0].count, 1024u);
        EXPECT_EQ(b.ap_exact().num_dims, 2);  // one pattern dim per free dim of the view
        return std::vector<Tensor>{};
      },
      std::vector<TensorSpec>{{"x", DType::kBFloat16, {1024, 512}},
                              {"bias", DType::kFloat32, {1, 512}}},
      trn3());
}

TEST(KernelApiDoc, LoopsAndBuffers) {
  auto ir = trace(
      [](std::span<const Tensor> in) {
        const Tensor& x = in[0];  // [1024, 512]
        Tensor y = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "y");
        for (std::int64_t i : nl::affine_range(x.dim(0) / 128)) {
          Tensor t = nl::ndarray({128, 512}, x.dtype(), nl::sbuf, "t");  // fresh per iteration
          nisa::dma_copy(t, x(nl::ds(i * 128, 128), nl::all));
          nisa::activation(t, ActivationFunc::kTanh, t);
          nisa::dma_copy(y(nl::ds(i * 128, 128), nl::all), t);
        }
        for (std::int64_t c0 : nl::affine_range(0, 512, 128)) EXPECT_EQ(c0 % 128, 0);
        for (std::int64_t k : nl::sequential_range(2)) EXPECT_LT(k, 2);
        for (std::int64_t k : nl::static_range(2)) EXPECT_LT(k, 2);
        // Explicit buffers, chosen by hand: two tiles used alternately.
        std::vector<Tensor> bufs;
        for (int b = 0; b < 2; ++b)
          bufs.push_back(nl::ndarray({128, 512}, x.dtype(), nl::sbuf, "buf"));
        for (std::int64_t i = 0; i < 8; ++i) {
          const Tensor& t = bufs[static_cast<std::size_t>(i % 2)];
          nisa::dma_copy(t, x(nl::ds(i * 128, 128), nl::all));
          nisa::dma_copy(y(nl::ds(i * 128, 128), nl::all), t);
        }
        return std::vector<Tensor>{y};
      },
      std::vector<TensorSpec>{{"x", DType::kBFloat16, {1024, 512}}}, trn3());
  EXPECT_EQ(ir[0].instructions.size(), 8u * 3 + 8u * 2);
}

TEST(KernelApiDoc, TensorEngine) {
  trace(
      [](std::span<const Tensor> in) {
        const Tensor &a_t = in[0], &b = in[1];  // [K, M] and [K, N], K = 512
        Tensor acc = nl::ndarray({128, 512}, DType::kFloat32, nl::psum, "acc");
        for (std::int64_t k = 0; k < 4; ++k) {
          Tensor a_tile = nl::ndarray({128, 128}, a_t.dtype(), nl::sbuf, "a_tile");
          Tensor b_tile = nl::ndarray({128, 512}, b.dtype(), nl::sbuf, "b_tile");
          nisa::dma_copy(a_tile, a_t(nl::ds(k * 128, 128), nl::ds(0, 128)));
          nisa::dma_copy(b_tile, b(nl::ds(k * 128, 128), nl::ds(0, 512)));
          nisa::nc_matmul(acc, a_tile, b_tile, {.accumulate = k > 0});  // acc[M, N] += a^T b
        }
        Tensor c_tile = nl::ndarray({128, 512}, DType::kBFloat16, nl::sbuf, "c_tile");
        nisa::tensor_copy(c_tile, acc);  // PSUM -> SBUF, cast to bf16
        Tensor x = nl::ndarray({128, 128}, DType::kBFloat16, nl::sbuf, "x");
        nisa::memset(x, 1.0f);
        Tensor xt = nl::ndarray({128, 128}, DType::kBFloat16, nl::psum, "xt");
        nisa::nc_transpose(xt, x, {.engine = Engine::kTensor});
        Tensor small = nl::ndarray({32, 32}, DType::kFloat32, nl::sbuf, "small");
        nisa::memset(small, 0.0f);
        Tensor small_t = nl::ndarray({32, 32}, DType::kFloat32, nl::sbuf, "small_t");
        nisa::nc_transpose(small_t, small, {.engine = Engine::kVector});
        return std::vector<Tensor>{};
      },
      std::vector<TensorSpec>{{"a_t", DType::kBFloat16, {512, 128}},
                              {"b", DType::kBFloat16, {512, 512}}},
      trn3());
}

TEST(KernelApiDoc, ElementwiseAndReductions) {
  auto ir = trace(
      [](std::span<const Tensor>) {
        Tensor x = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf, "x");
        nisa::memset(x, 0.5f);
        Tensor y = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf, "y");
        Tensor z = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf, "z");
        Tensor col = nl::ndarray({128, 1}, DType::kFloat32, nl::sbuf, "col");
        nisa::memset(col, 3.0f);
        // y = (x * 2) + col: two ALU stages in one instruction, operand1 a [P, 1] column
        nisa::tensor_scalar(y, x, AluOp::kMultiply, 2.0f, {.op1 = AluOp::kAdd, .operand1 = col});
        // y = 1 - x: reverse0 swaps the operands of op0
        nisa::tensor_scalar(y, x, AluOp::kSubtract, 1.0f, {.reverse0 = true});
        nisa::tensor_tensor(z, x, y, AluOp::kMaximum);                            // z = max(x, y)
        nisa::scalar_tensor_tensor(z, x, AluOp::kMultiply, col, AluOp::kAdd, y);  // z = x*col + y
        // ScalarE: z = exp(x * 0.5 - col), with the row sums of z in sums
        Tensor sums = nl::ndarray({128, 1}, DType::kFloat32, nl::sbuf, "sums");
        Tensor neg = nl::ndarray({128, 1}, DType::kFloat32, nl::sbuf, "neg");
        nisa::tensor_scalar(neg, col, AluOp::kMultiply, -1.0f);
        nisa::activation(z, ActivationFunc::kExp, x,
                         {.scale = 0.5f, .bias = neg, .reduce_res = sums});
        // Reductions: the innermost free dim, optionally negated
        Tensor neg_max = nl::ndarray({128, 1}, DType::kFloat32, nl::sbuf, "neg_max");
        nisa::tensor_reduce(neg_max, x, AluOp::kMaximum, {.negate = true});
        Tensor x3 = nl::ndarray({128, 4, 128}, DType::kFloat32, nl::sbuf, "x3");
        nisa::memset(x3, 1.0f);
        Tensor per_group = nl::ndarray({128, 4}, DType::kFloat32, nl::sbuf, "per_group");
        nisa::tensor_reduce(per_group, x3, AluOp::kAdd, {.axes = 1});
        Tensor total = nl::ndarray({128, 1}, DType::kFloat32, nl::sbuf, "total");
        nisa::tensor_reduce(total, x3, AluOp::kAdd, {.axes = 2});
        Tensor colsum = nl::ndarray({1, 512}, DType::kFloat32, nl::sbuf, "colsum");
        nisa::tensor_partition_reduce(colsum, x, AluOp::kAdd);  // over the 128 partitions
        nisa::tensor_copy(y, x, {.engine = Engine::kScalar});
        nisa::reciprocal(y, x);
        // Prefix sum along the free dim: r[i] = (1 * r[i-1]) + x[i], r[-1] = 0
        Tensor ones = nl::full({128, 512}, 1.0f, DType::kFloat32);
        nisa::tensor_tensor_scan(z, ones, x, 0.0f, AluOp::kMultiply, AluOp::kAdd);
        // Statistics: bn_stats per <= 512 elements, bn_aggr into (mean, variance)
        Tensor stats = nl::ndarray({128, 6}, DType::kFloat32, nl::sbuf, "stats");
        nisa::bn_stats(stats, x);
        Tensor mean_var = nl::ndarray({128, 2}, DType::kFloat32, nl::sbuf, "mean_var");
        nisa::bn_aggr(mean_var, stats);
        // select: where the predicate is non-zero take x, else 0
        Tensor pred = nl::ndarray({128, 512}, DType::kUInt8, nl::sbuf, "pred");
        nisa::memset(pred, 1.0f);
        nisa::select(z, pred, x, 0.0f);
        // Top values and their positions
        Tensor top = nl::ndarray({128, 8}, DType::kFloat32, nl::sbuf, "top");
        nisa::max8(top, x);
        Tensor where = nl::ndarray({128, 8}, DType::kUInt32, nl::sbuf, "where");
        nisa::nc_find_index8(where, x, top);
        // exp(x - max) on VectorE (gen4), with row sums
        nisa::exponential(z, x, {.max_value = col, .reduce_res = sums});
        nisa::rand2(z, -1.0f, 1.0f);
        return std::vector<Tensor>{};
      },
      {}, trn3());
  EXPECT_GT(ir[0].instructions.size(), 20u);
}

TEST(KernelApiDoc, AffineAndGpsimd) {
  trace(
      [](std::span<const Tensor>) {
        // iota: idx[p, i] = 1000 + 512 p + i
        Tensor idx = nl::ndarray({128, 512}, DType::kInt32, nl::sbuf, "idx");
        nisa::iota(idx, {.pattern = {{1, 512}}, .offset = 1000, .channel_multiplier = 512});
        // A causal mask: 0 where key i <= query p, -1e30 elsewhere
        Tensor zero = nl::zeros({128, 128}, DType::kFloat32, nl::sbuf, "zero");
        Tensor mask = nl::ndarray({128, 128}, DType::kFloat32, nl::sbuf, "mask");
        nisa::affine_select(mask, zero, AluOp::kGreaterEqual, -1e30f,
                            {.pattern = {{-1, 128}}, .offset = 0, .channel_multiplier = 1});
        // local_gather: uint16 offsets, per 16-partition group
        Tensor src = nl::ndarray({128, 64}, DType::kFloat32, nl::sbuf, "src");
        nisa::memset(src, 0.0f);
        Tensor offs = nl::ndarray({128, 4}, DType::kUInt16, nl::sbuf, "offs");
        nisa::memset(offs, 0.0f);
        Tensor gathered = nl::ndarray({128, 4}, DType::kFloat32, nl::sbuf, "gathered");
        nisa::local_gather(gathered, src, offs);
        return std::vector<Tensor>{};
      },
      {}, trn3());
}

TEST(KernelApiDoc, Dma) {
  trace(
      [](std::span<const Tensor> in) {
        const Tensor& x = in[0];  // [256, 128] bf16
        Tensor out = nl::ndarray({128, 256}, DType::kBFloat16, nl::shared_hbm, "out");
        Tensor t = nl::ndarray({128, 128}, DType::kFloat32, nl::sbuf, "t");
        nisa::dma_copy(t, x(nl::ds(0, 128), nl::all), {.queue = 3, .name = "load x"});  // casts
        Tensor xt = nl::ndarray({128, 256}, DType::kBFloat16, nl::sbuf, "xt");
        nisa::dma_transpose(xt, x);  // [256, 128] -> [128, 256]
        nisa::dma_copy(out, xt);
        // Gather rows of x by an index column: row r of dst = x[rows[r]]
        Tensor rows = nl::ndarray({128, 1}, DType::kUInt32, nl::sbuf, "rows");
        nisa::iota(rows, {.pattern = {{0, 1}}, .channel_multiplier = 2});
        Tensor picked = nl::ndarray({128, 128}, DType::kBFloat16, nl::sbuf, "picked");
        nisa::dma_indirect(picked, x, rows, isa::IndirectMode::kGather);
        return std::vector<Tensor>{out};
      },
      std::vector<TensorSpec>{{"x", DType::kBFloat16, {256, 128}}}, trn3());
}

TEST(KernelApiDoc, Helpers) {
  auto ir = trace(
      [](std::span<const Tensor> in) {
        const Tensor &a_t = in[0], &b = in[1], &x = in[2];
        Tensor c = nl::ndarray({128, 512}, DType::kBFloat16, nl::shared_hbm, "c");
        Tensor y = nl::ndarray({128, 512}, DType::kFloat32, nl::shared_hbm, "y");
        // One matmul tile: a_t [K, M] is already in the stationary layout.
        Tensor a_tile = nl::load(a_t);                                  // SBUF [128, 128]
        Tensor b_tile = nl::load(b);                                    // SBUF [128, 512]
        Tensor acc = nl::matmul(a_tile, b_tile, /*transpose_x=*/true);  // PSUM fp32 [128, 512]
        nl::store(c, acc);  // PSUM -> SBUF (cast to c's dtype) -> HBM
        // Softmax pieces by hand, then the one-call version.
        Tensor xt = nl::load(x, DType::kFloat32);  // cast while loading
        Tensor m = nl::max(xt);                    // [128, 1]
        Tensor e = nl::exp(nl::subtract(xt, m));   // [P, 1] operand: tensor_scalar
        Tensor s = nl::sum(e);
        Tensor inv = nl::ndarray({128, 1}, DType::kFloat32, nl::sbuf, "inv");
        nisa::reciprocal(inv, s);
        Tensor p1 = nl::multiply(e, inv);
        Tensor p2 = nl::softmax(xt);
        Tensor both = nl::add(p1, p2);  // a full tile: tensor_tensor
        nl::store(y, nl::maximum(both, 0.0f));
        Tensor g = nl::activation(ActivationFunc::kGelu, xt);
        Tensor g2 = nl::copy(g, DType::kBFloat16);
        Tensor tr = nl::transpose(g2(nl::all, nl::ds(0, 128)));  // PSUM [128, 128]
        EXPECT_EQ(tr.buffer(), Buffer::kPsum);
        Tensor xm = nl::matmul(g2(nl::all, nl::ds(0, 128)), b_tile);  // transposes x first
        EXPECT_EQ(xm.shape(), (Shape{128, 512}));
        return std::vector<Tensor>{c, y};
      },
      std::vector<TensorSpec>{{"a_t", DType::kBFloat16, {128, 128}},
                              {"b", DType::kBFloat16, {128, 512}},
                              {"x", DType::kBFloat16, {128, 512}}},
      trn3());
  const auto ops = ops_of(ir[0]);
  EXPECT_EQ(ops[0], "dma_copy");
  EXPECT_EQ(ops[2], "nc_matmul");
  EXPECT_EQ(ops[3], "tensor_copy");  // nl::store of a PSUM tile stages through SBUF
}

TEST(KernelApiDoc, LogicalCores) {
  auto ir = trace(
      [](std::span<const Tensor> in) {
        const Tensor& x = in[0];  // [1024, 256]
        Tensor y = nl::ndarray(x.shape(), x.dtype(), nl::shared_hbm, "y");
        const std::int64_t rows = x.dim(0) / nl::num_programs();
        const std::int64_t r0 = nl::program_id() * rows;  // this core's share of the rows
        for (std::int64_t r = r0; r < r0 + rows; r += 128) {
          Tensor t = nl::load(x(nl::ds(r, 128), nl::all));
          nl::store(y(nl::ds(r, 128), nl::all), nl::exp(t));
        }
        nisa::core_barrier();  // both cores reach this point before either goes on
        return std::vector<Tensor>{y};
      },
      std::vector<TensorSpec>{{"x", DType::kFloat32, {1024, 256}}}, trn3(),
      {.name = "exp_lnc2", .num_programs = 2});
  ASSERT_EQ(ir.size(), 2u);
  EXPECT_EQ(ir[1].program_id, 1);
}

// "Source locations": a helper that reports its caller's line.
Tensor scaled_exp(const Tensor& x, float s, Loc loc = Loc::current()) {
  Tensor y = nl::ndarray(x.shape(), DType::kFloat32, nl::sbuf, "", loc);
  nisa::activation(y, ActivationFunc::kExp, x, {.scale = s}, loc);
  return y;
}

TEST(KernelApiDoc, SourceLocations) {
  std::uint32_t line = 0;
  auto ir = trace(
      [&](std::span<const Tensor>) {
        Tensor x = nl::zeros({128, 64}, DType::kFloat32);
        line = __LINE__ + 1;
        Tensor y = scaled_exp(x, 0.5f);
        EXPECT_TRUE(y.valid());
        return std::vector<Tensor>{};
      },
      {}, trn3());
  EXPECT_EQ(ir[0].instructions.back().inst.origin.line, line);
  EXPECT_NE(ir[0].instructions.back().inst.origin.file.find("kernel_api_doc_test.cpp"),
            std::string::npos);
}

TEST(KernelApiDoc, Errors) {
  try {
    trace(
        [](std::span<const Tensor>) {
          Tensor a = nl::ndarray({128, 128}, DType::kBFloat16, nl::sbuf, "a");
          Tensor b = nl::ndarray({128, 512}, DType::kBFloat16, nl::sbuf, "b");
          Tensor c = nl::ndarray({128, 512}, DType::kFloat32, nl::sbuf, "c");  // should be psum
          nisa::nc_matmul(c, a, b);
          return std::vector<Tensor>{};
        },
        {}, trn3());
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.why(), "nc_matmul is not valid on trn3");
    // The broken rule is a note at the same line.
    ASSERT_EQ(e.diagnostics().front().notes.size(), 1u);
    EXPECT_EQ(e.diagnostics().front().notes[0].message, "operand 'dst': must be in psum, not sbuf");
    EXPECT_EQ(e.diagnostics().front().notes[0].where, e.where());
    EXPECT_NE(std::string(e.what()).find("kernel_api_doc_test.cpp:"), std::string::npos);
    EXPECT_GT(e.where().line, 0u);
  }
}

}  // namespace
}  // namespace trnsim::kernel
