// Compiler tests: hand-built IR compiled and run on the simulator with hazard checks.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "arch/arch.h"
#include "arch/tests/test_presets.h"
#include "ir_builder.h"

namespace trnsim::compiler::test {
namespace {

using kernel::KernelError;
using kernel::TensorRole;

using arch::testing::trn3;

// Small exact values (multiples of 1/8 in [-2, 2)) so that every product and sum is exact.
std::vector<float> exact_values(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  std::uint32_t x = seed * 2654435761u + 12345u;
  for (auto& e : v) {
    x = x * 1664525u + 1013904223u;
    e = static_cast<float>(static_cast<int>((x >> 16) % 32) - 16) / 8.0f;
  }
  return v;
}

// out[m, n] = sum_k a_t[k, m] * b[k, n]; a_t is [K, M], b is [K, N] (row-major).
std::vector<float> reference_matmul(const std::vector<float>& a_t, const std::vector<float>& b,
                                    std::size_t K, std::size_t M, std::size_t N) {
  std::vector<float> out(M * N, 0.0f);
  for (std::size_t k = 0; k < K; ++k)
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t n = 0; n < N; ++n) out[m * N + n] += a_t[k * M + m] * b[k * N + n];
  return out;
}

std::size_t count_waits(const isa::Program& p) {
  std::size_t n = 0;
  for (const auto& i : p.instructions) n += i.waits.size();
  return n;
}

// C[128, 512] = A_t^T @ B over K = 128 * kt tiles accumulated in one PSUM tile.
struct MatmulKernel {
  IrBuilder b{"matmul"};
  std::size_t kt;
  explicit MatmulKernel(std::size_t k_tiles) : kt(k_tiles) {
    const auto K = static_cast<std::int64_t>(128 * kt);
    const StorageId a_t = b.hbm("a_t", DType::kBFloat16, K, 128, TensorRole::kInput);
    const StorageId bb = b.hbm("b", DType::kBFloat16, K, 512, TensorRole::kInput);
    const StorageId c = b.hbm("c", DType::kFloat32, 128, 512, TensorRole::kOutput);
    const StorageId acc = b.tile("acc", Buffer::kPsum, DType::kFloat32, 128, 512, 10);
    for (std::size_t k = 0; k < kt; ++k) {
      const StorageId at =
          b.tile(fmt::format("at{}", k), Buffer::kSbuf, DType::kBFloat16, 128, 128, 12);
      const StorageId bt =
          b.tile(fmt::format("bt{}", k), Buffer::kSbuf, DType::kBFloat16, 128, 512, 13);
      const auto r0 = static_cast<std::int64_t>(128 * k);
      b.dma(b.t(at), b.h(a_t, r0, 128, 0, 128), 14);
      b.dma(b.t(bt), b.h(bb, r0, 128, 0, 512), 15);
      b.matmul(b.t(acc), b.t(at), b.t(bt), k > 0, 16);
    }
    const StorageId res = b.tile("res", Buffer::kSbuf, DType::kFloat32, 128, 512, 18);
    b.copy(b.t(res), b.t(acc), 19);
    b.dma(b.h(c, 0, 128, 0, 512), b.t(res), 20);
  }
};

void check_matmul(const CompiledKernel& k, std::size_t kt, bool timed) {
  const std::size_t K = 128 * kt;
  const auto a = exact_values(K * 128, 1), bv = exact_values(K * 512, 2);
  const RunOutcome r = run_compiled(
      k, trn3(), {{"a_t", encode(DType::kBFloat16, a)}, {"b", encode(DType::kBFloat16, bv)}},
      timed);
  EXPECT_TRUE(r.result.hazards.empty())
      << (r.result.diagnostics.empty() ? "" : r.result.diagnostics[0]);
  const auto got = decode_f32(r.tensors[placement_index(k, "c")]);
  const auto want = reference_matmul(a, bv, K, 128, 512);
  ASSERT_EQ(got.size(), want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) bad += got[i] != want[i];
  EXPECT_EQ(bad, 0u);
}

TEST(compiler, SingleTileMatmulEndToEnd) {
  MatmulKernel m(1);
  for (bool sched : {false, true}) {
    CompileOptions o;
    o.schedule = sched;
    const CompiledKernel k = compile(std::span(&m.b.ir(), 1), trn3(), o);
    ASSERT_EQ(k.programs.size(), 1u);
    EXPECT_EQ(k.programs[0].instructions.size(), m.b.ir().instructions.size());
    EXPECT_EQ(k.stats.instructions, m.b.ir().instructions.size());
    // matmul waits for both loads; the copy for the matmul; the store for the copy.
    EXPECT_EQ(k.stats.waits, 4u);
    EXPECT_EQ(k.stats.signals, 4u);
    EXPECT_EQ(count_waits(k.programs[0]), 4u);
    for (const auto& p : k.hbm) EXPECT_GE(p.address, std::uint64_t{1} << 20);
    for (const auto& p : k.hbm) EXPECT_EQ(p.address % 64, 0u);
    check_matmul(k, 1, sched);
  }
}

TEST(compiler, PsumAccumulationOverKTiles) {
  MatmulKernel m(4);
  const CompiledKernel k = compile(std::span(&m.b.ir(), 1), trn3());
  check_matmul(k, 4, true);
  // The four matmuls are consecutive on the tensor queue and need no semaphores between them.
  std::size_t matmuls = 0;
  for (const auto& inst : k.programs[0].instructions)
    if (std::holds_alternative<isa::NcMatmul>(inst.op)) {
      ++matmuls;
      EXPECT_EQ(inst.queue.engine, isa::Engine::kTensor);
    }
  EXPECT_EQ(matmuls, 4u);
}

// An 8-iteration loop with fresh tiles per iteration: load x_i, p_i = W^T x_i (PSUM), y_i =
// copy(p_i), z_i = y_i * 0.5 + 1, u_i = z_i * z_i, store u_i.
struct LoopKernel {
  IrBuilder b{"loop"};
  static constexpr int kIters = 8;
  std::vector<StorageId> x_tiles;
  LoopKernel() {
    const StorageId w = b.hbm("w", DType::kBFloat16, 128, 128, TensorRole::kInput);
    // Iteration i reads rows [128 i, 128 i + 128) of x and writes the same rows of out: the
    // byte ranges of different iterations are disjoint.
    const StorageId x = b.hbm("x", DType::kBFloat16, 128 * kIters, 512, TensorRole::kInput);
    const StorageId out = b.hbm("out", DType::kFloat32, 128 * kIters, 512, TensorRole::kOutput);
    const StorageId wt = b.tile("wt", Buffer::kSbuf, DType::kBFloat16, 128, 128, 30);
    b.dma(b.t(wt), b.h(w, 0, 128, 0, 128), 31);
    for (int i = 0; i < kIters; ++i) {
      const StorageId xt =
          b.tile(fmt::format("x{}", i), Buffer::kSbuf, DType::kBFloat16, 128, 512, 33);
      x_tiles.push_back(xt);
      const StorageId pt =
          b.tile(fmt::format("p{}", i), Buffer::kPsum, DType::kFloat32, 128, 512, 34);
      const StorageId yt =
          b.tile(fmt::format("y{}", i), Buffer::kSbuf, DType::kFloat32, 128, 512, 35);
      const StorageId zt =
          b.tile(fmt::format("z{}", i), Buffer::kSbuf, DType::kFloat32, 128, 512, 36);
      const StorageId ut =
          b.tile(fmt::format("u{}", i), Buffer::kSbuf, DType::kFloat32, 128, 512, 37);
      b.dma(b.t(xt), b.h(x, 128 * i, 128, 0, 512), 38);
      b.matmul(b.t(pt), b.t(wt), b.t(xt), false, 39);
      b.copy(b.t(yt), b.t(pt), 40);
      isa::TensorScalar ts;
      ts.dst = b.t(zt);
      ts.data = b.t(yt);
      ts.op0 = isa::AluOp::kMultiply;
      ts.operand0 = 0.5f;
      ts.op1 = isa::AluOp::kAdd;
      ts.operand1 = 1.0f;
      b.add(ts, 41);
      isa::TensorTensor tt;
      tt.dst = b.t(ut);
      tt.data1 = b.t(zt);
      tt.data2 = b.t(zt);
      tt.op = isa::AluOp::kMultiply;
      b.add(tt, 42);
      b.dma(b.h(out, 128 * i, 128, 0, 512), b.t(ut), 43);
    }
  }
};

struct LoopRun {
  CompiledKernel k;
  RunOutcome r;
};

LoopRun run_loop(const LoopKernel& lk, CompileOptions o) {
  LoopRun lr{compile(std::span(&lk.b.ir(), 1), trn3(), o), {}};
  const auto w = exact_values(128 * 128, 3), x = exact_values(128 * 512 * LoopKernel::kIters, 4);
  lr.r = run_compiled(
      lr.k, trn3(), {{"w", encode(DType::kBFloat16, w)}, {"x", encode(DType::kBFloat16, x)}}, true);
  EXPECT_TRUE(lr.r.result.hazards.empty())
      << (lr.r.result.diagnostics.empty() ? "" : lr.r.result.diagnostics[0]);
  // Host reference: out rows of iteration i = f(w^T x_i), w is [K=128, M=128].
  const auto got = decode_f32(lr.r.tensors[placement_index(lr.k, "out")]);
  std::size_t bad = 0;
  for (int it = 0; it < LoopKernel::kIters; ++it) {
    const std::size_t base = static_cast<std::size_t>(it) * 128 * 512;
    const std::vector<float> xi(x.begin() + static_cast<std::ptrdiff_t>(base),
                                x.begin() + static_cast<std::ptrdiff_t>(base + 128 * 512));
    const auto y = reference_matmul(w, xi, 128, 128, 512);
    for (std::size_t i = 0; i < y.size(); ++i) {
      const float z = y[i] * 0.5f + 1.0f;
      bad += got.at(base + i) != z * z;
    }
  }
  EXPECT_EQ(bad, 0u);
  return lr;
}

TEST(compiler, SchedulingOverlapsDmaWithCompute) {
  LoopKernel lk;
  CompileOptions in_order;
  in_order.schedule = false;
  const LoopRun base = run_loop(lk, in_order);
  const LoopRun sched = run_loop(lk, {});
  const double t_base = base.r.result.end_time, t_sched = sched.r.result.end_time;
  std::printf(
      "8-iteration loop: %.0f ns in program order, %.0f ns scheduled (estimate %.0f ns); "
      "busy sum %.0f ns\n",
      t_base, t_sched, sched.k.stats.estimated_ns, sched.r.busy_sum_ns);
  if (std::getenv("TRNSIM_DUMP")) {
    for (const LoopRun* lr : {&base, &sched}) {
      const auto& ins = lr->k.programs[0].instructions;
      for (std::size_t i = 0; i < ins.size(); ++i)
        std::printf("%3zu %-14s %s.%d  %8.0f %8.0f\n", i,
                    std::string(isa::op_name(ins[i].op)).c_str(),
                    std::string(isa::engine_name(ins[i].queue.engine)).c_str(), ins[i].queue.index,
                    lr->r.result.times[i].start, lr->r.result.times[i].end);
    }
  }
  RecordProperty("in_order_ns", std::to_string(t_base));
  RecordProperty("scheduled_ns", std::to_string(t_sched));
  EXPECT_LT(t_sched, 0.9 * t_base);
  EXPECT_LT(t_sched, sched.r.busy_sum_ns);  // queues ran concurrently
  // Loads and stores of the loop went to several different DMA queues.
  std::set<int> load_queues, store_queues;
  for (const auto& inst : sched.k.programs[0].instructions)
    if (const auto* d = std::get_if<isa::DmaCopy>(&inst.op))
      (d->dst.memory == isa::Memory::kHbm ? store_queues : load_queues).insert(inst.queue.index);
  EXPECT_GT(load_queues.size(), 1u);
  EXPECT_GT(store_queues.size(), 1u);
  // The elementwise work was spread over more than one engine.
  std::set<isa::Engine> elementwise;
  for (const auto& inst : sched.k.programs[0].instructions)
    if (std::holds_alternative<isa::TensorScalar>(inst.op) ||
        std::holds_alternative<isa::TensorCopy>(inst.op) ||
        std::holds_alternative<isa::TensorTensor>(inst.op))
      elementwise.insert(inst.queue.engine);
  EXPECT_GT(elementwise.size(), 1u);
}

TEST(compiler, UsesTheDmaQueuesTheChipHasByDefault) {
  LoopKernel lk;
  arch::ChipConfig three_queues = trn3();
  three_queues.dma.queues_per_engine.value = 3;
  for (bool sched : {false, true}) {
    CompileOptions o;
    o.schedule = sched;
    const CompiledKernel k = compile(std::span(&lk.b.ir(), 1), three_queues, o);
    std::set<int> queues;
    for (const auto& inst : k.programs[0].instructions)
      if (inst.queue.engine == isa::Engine::kDma) queues.insert(inst.queue.index);
    EXPECT_EQ(queues, (std::set<int>{0, 1, 2})) << (sched ? "scheduled" : "in order");
  }
  CompileOptions too_many;
  too_many.dma_queues = 4;
  EXPECT_THROW(compile(std::span(&lk.b.ir(), 1), three_queues, too_many), std::invalid_argument);
}

TEST(compiler, AllocationReusesAndRotates) {
  LoopKernel lk;
  const CompiledKernel k = compile(std::span(&lk.b.ir(), 1), trn3());
  std::uint64_t sum = 0;
  for (const auto& p : k.onchip[0]) sum += p.memory == isa::Memory::kSbuf ? p.bytes : 0;
  EXPECT_LT(k.stats.sbuf_peak_bytes, sum);
  // Consecutive iterations' x tiles get different buffers (double/multi-buffering).
  std::map<StorageId, std::uint64_t> offset;
  for (const auto& p : k.onchip[0]) offset[p.storage] = p.offset;
  for (std::size_t i = 1; i < lk.x_tiles.size(); ++i)
    EXPECT_NE(offset.at(lk.x_tiles[i]), offset.at(lk.x_tiles[i - 1]));
  // PSUM tiles of one bank each stay inside a bank.
  for (const auto& p : k.onchip[0])
    if (p.memory == isa::Memory::kPsum) {
      EXPECT_EQ(p.offset / 2048, (p.offset + p.bytes - 1) / 2048);
    }
}

// Tiles far larger in total than SBUF: 8 iterations of a 64 KiB-per-partition tile (4 fit).
TEST(compiler, ReuseOfDeadTilesIsHazardFree) {
  IrBuilder b("reuse");
  constexpr int kIters = 8;
  constexpr std::uint32_t kF = 16384;  // fp32: 64 KiB per partition
  const StorageId in = b.hbm("in", DType::kFloat32, 16, kF * kIters, TensorRole::kInput);
  const StorageId out = b.hbm("out", DType::kFloat32, 16, kF * kIters, TensorRole::kOutput);
  for (int i = 0; i < kIters; ++i) {
    const StorageId t = b.tile(fmt::format("t{}", i), Buffer::kSbuf, DType::kFloat32, 16, kF, 50);
    b.dma(b.t(t), b.h(in, 0, 16, kF * i, kF), 51);
    isa::TensorScalar ts;
    ts.dst = b.t(t);
    ts.data = b.t(t);
    ts.op0 = isa::AluOp::kAdd;
    ts.operand0 = static_cast<float>(i);
    b.add(ts, 52);
    b.dma(b.h(out, 0, 16, kF * i, kF), b.t(t), 53);
  }
  const CompiledKernel k = compile(std::span(&b.ir(), 1), trn3());
  EXPECT_LE(k.stats.sbuf_extent_bytes, 256u * 1024);
  EXPECT_EQ(k.stats.sbuf_peak_bytes, 64u * 1024);
  const auto v = exact_values(16 * kF * kIters, 5);
  const RunOutcome r = run_compiled(k, trn3(), {{"in", encode(DType::kFloat32, v)}}, true);
  EXPECT_TRUE(r.result.hazards.empty())
      << (r.result.diagnostics.empty() ? "" : r.result.diagnostics[0]);
  const auto got = decode_f32(r.tensors[placement_index(k, "out")]);
  std::size_t bad = 0;
  for (std::size_t row = 0; row < 16; ++row)
    for (std::size_t c = 0; c < kF * kIters; ++c) {
      const std::size_t idx = row * kF * kIters + c;
      bad += got.at(idx) != v[idx] + static_cast<float>(c / kF);
    }
  EXPECT_EQ(bad, 0u);
}

TEST(compiler, TileThatDoesNotFitNamesLiveTiles) {
  IrBuilder b("too_big");
  const StorageId t0 = b.tile("big0", Buffer::kSbuf, DType::kFloat32, 128, 25600, 3);  // 100 KiB
  const StorageId t1 = b.tile("big1", Buffer::kSbuf, DType::kFloat32, 128, 20480, 4);  // 80 KiB
  const StorageId t2 = b.tile("big2", Buffer::kSbuf, DType::kFloat32, 128, 25600, 5);
  for (StorageId t : {t0, t1, t2}) {
    isa::Memset m;
    m.dst = b.t(t);
    b.add(m, 7);
  }
  isa::TensorTensor tt;
  tt.dst = b.t(t2, 0, 128, 0, 20480);
  tt.data1 = b.t(t0, 0, 128, 0, 20480);
  tt.data2 = b.t(t1);
  b.add(tt, 8);
  try {
    compile(std::span(&b.ir(), 1), trn3());
    FAIL() << "expected KernelError";
  } catch (const KernelError& e) {
    std::printf("%s\n", e.what());
    EXPECT_EQ(e.where().line, 5u);
    const std::string what = e.what();
    EXPECT_NE(what.find("SBUF"), std::string::npos) << what;
    EXPECT_NE(what.find("big2"), std::string::npos) << what;
    EXPECT_NE(what.find("102400"), std::string::npos) << what;
    EXPECT_NE(what.find("262144"), std::string::npos) << what;
    // The live tiles are notes at their declarations, largest first.
    const auto& notes = e.diagnostics().front().notes;
    ASSERT_EQ(notes.size(), 2u) << what;
    EXPECT_EQ(notes[0].where.line, 3u);
    EXPECT_EQ(notes[1].where.line, 4u);
    EXPECT_NE(what.find("\nkernel_test.py:3:1: note: live tile 'big0' (102400 B per partition) "
                        "declared here\nkernel_test.py:4:1: note: live tile 'big1' (81920 B per "
                        "partition) declared here"),
              std::string::npos)
        << what;
  }
}

TEST(compiler, OperandOutsideItsTileNamesTheLine) {
  IrBuilder b("oob");
  const StorageId in = b.hbm("in", DType::kFloat32, 128, 512, TensorRole::kInput);
  const StorageId t = b.tile("tile", Buffer::kSbuf, DType::kFloat32, 128, 256, 3);
  b.dma(b.t(t, 0, 128, 0, 512), b.h(in, 0, 128, 0, 512), 9);  // 512 elements into 256
  try {
    compile(std::span(&b.ir(), 1), trn3());
    FAIL() << "expected KernelError";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.where().line, 9u);
    EXPECT_NE(std::string(e.what()).find("outside 'tile'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kernel_test.py:9"), std::string::npos) << e.what();
  }
  IrBuilder b2("oob_partitions");
  const StorageId in2 = b2.hbm("in", DType::kFloat32, 128, 64, TensorRole::kInput);
  const StorageId t2 = b2.tile("small", Buffer::kSbuf, DType::kFloat32, 64, 64, 3);
  b2.dma(b2.t(t2, 0, 128, 0, 64), b2.h(in2, 0, 128, 0, 64), 11);
  EXPECT_THROW(
      {
        try {
          compile(std::span(&b2.ir(), 1), trn3());
        } catch (const KernelError& e) {
          EXPECT_EQ(e.where().line, 11u);
          EXPECT_NE(std::string(e.what()).find("partitions [0, 128) outside 'small'"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      KernelError);
}

TEST(compiler, IsaViolationNamesTheLine) {
  IrBuilder b("bad_matmul");
  const StorageId a = b.tile("a", Buffer::kSbuf, DType::kBFloat16, 128, 128, 2);
  const StorageId m = b.tile("m", Buffer::kSbuf, DType::kBFloat16, 128, 1024, 3);
  const StorageId p = b.tile("p", Buffer::kPsum, DType::kFloat32, 128, 1024, 4);
  for (StorageId t : {a, m}) {
    isa::Memset ms;
    ms.dst = b.t(t);
    b.add(ms, 5);
  }
  b.matmul(b.t(p), b.t(a), b.t(m), false, 6);  // moving free 1024 > 512 on trn2
  const arch::ChipConfig trn2 = arch::load_preset("trn2");
  try {
    compile(std::span(&b.ir(), 1), trn2);
    FAIL() << "expected KernelError";
  } catch (const KernelError& e) {
    EXPECT_EQ(e.where().line, 6u);
    EXPECT_NE(std::string(e.what()).find("moving"), std::string::npos) << e.what();
  }
}

// a (DMA) -> b = copy(a) on vector -> c = copy(b) on scalar -> d = a * c on gpsimd -> store.
// d depends on a and on c; the wait for a is implied by the wait for c and is not emitted.
TEST(compiler, TransitivelyImpliedWaitsAreDropped) {
  IrBuilder b("chain");
  const StorageId in = b.hbm("in", DType::kFloat32, 128, 64, TensorRole::kInput);
  const StorageId out = b.hbm("out", DType::kFloat32, 128, 64, TensorRole::kOutput);
  const StorageId ta = b.tile("a", Buffer::kSbuf, DType::kFloat32, 128, 64, 2);
  const StorageId tb = b.tile("b", Buffer::kSbuf, DType::kFloat32, 128, 64, 3);
  const StorageId tc = b.tile("c", Buffer::kSbuf, DType::kFloat32, 128, 64, 4);
  const StorageId td = b.tile("d", Buffer::kSbuf, DType::kFloat32, 128, 64, 5);
  b.add(isa::DmaCopy{b.t(ta), b.h(in, 0, 128, 0, 64)}, 6, 0, false, std::uint8_t{0});
  b.copy(b.t(tb), b.t(ta), 7, isa::engine_bit(isa::Engine::kVector), true);
  b.copy(b.t(tc), b.t(tb), 8, isa::engine_bit(isa::Engine::kScalar), true);
  isa::TensorTensor tt;
  tt.dst = b.t(td);
  tt.data1 = b.t(ta);
  tt.data2 = b.t(tc);
  tt.op = isa::AluOp::kAdd;
  b.add(tt, 9, isa::engine_bit(isa::Engine::kGpSimd), true);
  b.add(isa::DmaCopy{b.h(out, 0, 128, 0, 64), b.t(td)}, 10, 0, false, std::uint8_t{1});
  for (bool sched : {false, true}) {
    CompileOptions o;
    o.schedule = sched;
    const CompiledKernel k = compile(std::span(&b.ir(), 1), trn3(), o);
    EXPECT_EQ(k.stats.dependencies, 5u);  // a->b, b->c, a->d, c->d, d->store
    EXPECT_EQ(k.stats.waits, 4u);
    for (const auto& inst : k.programs[0].instructions)
      if (std::holds_alternative<isa::TensorTensor>(inst.op)) {
        ASSERT_EQ(inst.waits.size(), 1u);
        EXPECT_EQ(inst.waits[0].sem, 2);  // the scalar queue's semaphore
      }
    const auto v = exact_values(128 * 64, 6);
    const RunOutcome r = run_compiled(k, trn3(), {{"in", encode(DType::kFloat32, v)}}, false);
    EXPECT_TRUE(r.result.hazards.empty());
    const auto got = decode_f32(r.tensors[placement_index(k, "out")]);
    for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(got[i], 2 * v[i]);
  }
}

TEST(compiler, Deterministic) {
  LoopKernel lk;
  const CompiledKernel a = compile(std::span(&lk.b.ir(), 1), trn3());
  const CompiledKernel b = compile(std::span(&lk.b.ir(), 1), trn3());
  EXPECT_EQ(a.programs, b.programs);
  ASSERT_EQ(a.hbm.size(), b.hbm.size());
  for (std::size_t i = 0; i < a.hbm.size(); ++i) EXPECT_EQ(a.hbm[i].address, b.hbm[i].address);
}

TEST(compiler, FixedOffsetIsHonoured) {
  IrBuilder b("fixed");
  const StorageId in = b.hbm("in", DType::kFloat32, 128, 64, TensorRole::kInput);
  const StorageId t0 = b.tile("auto", Buffer::kSbuf, DType::kFloat32, 128, 64, 2);
  const StorageId t1 = b.tile("pinned", Buffer::kSbuf, DType::kFloat32, 128, 64, 3);
  b.ir().storages[t1].fixed_offset = 0;  // where the automatic tile would go first
  b.dma(b.t(t0), b.h(in, 0, 128, 0, 64), 4);
  b.copy(b.t(t1), b.t(t0), 5);
  const CompiledKernel k = compile(std::span(&b.ir(), 1), trn3());
  std::map<StorageId, std::uint64_t> off;
  for (const auto& p : k.onchip[0]) off[p.storage] = p.offset;
  EXPECT_EQ(off.at(t1), 0u);
  EXPECT_GE(off.at(t0), 256u);
}

// A 4096 x 4096 x 4096 BF16 matmul's instruction stream: 32 x 8 output tiles of [128, 512],
// each accumulating 32 K tiles (fresh A and B tiles per step): ~25k instructions.
TEST(compiler, CompileTimeOfA25kInstructionKernel) {
  IrBuilder b("matmul4096");
  constexpr int kM = 32, kN = 8, kK = 32;
  const StorageId a_t = b.hbm("a_t", DType::kBFloat16, 4096, 4096, TensorRole::kInput);
  const StorageId bb = b.hbm("b", DType::kBFloat16, 4096, 4096, TensorRole::kInput);
  const StorageId c = b.hbm("c", DType::kFloat32, 4096, 4096, TensorRole::kOutput);
  for (int m = 0; m < kM; ++m)
    for (int n = 0; n < kN; ++n) {
      const StorageId acc = b.tile("acc", Buffer::kPsum, DType::kFloat32, 128, 512, 60);
      for (int k = 0; k < kK; ++k) {
        const StorageId at = b.tile("at", Buffer::kSbuf, DType::kBFloat16, 128, 128, 61);
        const StorageId bt = b.tile("bt", Buffer::kSbuf, DType::kBFloat16, 128, 512, 62);
        b.dma(b.t(at), b.h(a_t, 128 * k, 128, 128 * m, 128), 63);
        b.dma(b.t(bt), b.h(bb, 128 * k, 128, 512 * n, 512), 64);
        b.matmul(b.t(acc), b.t(at), b.t(bt), k > 0, 65);
      }
      const StorageId res = b.tile("res", Buffer::kSbuf, DType::kFloat32, 128, 512, 66);
      b.copy(b.t(res), b.t(acc), 67);
      b.dma(b.h(c, 128 * m, 128, 512 * n, 512), b.t(res), 68);
    }
  const auto t0 = std::chrono::steady_clock::now();
  const CompiledKernel k = compile(std::span(&b.ir(), 1), trn3());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("compiled %zu instructions in %.1f ms (", k.stats.instructions, ms);
  for (const auto& [pass, pms] : k.stats.pass_ms) std::printf(" %s %.1f", pass.c_str(), pms);
  std::printf(" ); waits %zu signals %zu deps %zu; estimate %.1f us\n", k.stats.waits,
              k.stats.signals, k.stats.dependencies, k.stats.estimated_ns / 1e3);
  RecordProperty("compile_ms", std::to_string(ms));
  EXPECT_EQ(k.stats.instructions, b.ir().instructions.size());
  EXPECT_GT(k.stats.instructions, 20000u);
}

// Stores of column blocks of one row-major HBM tensor, each on its own DMA queue: blocks
// [:, 128 j, 128 j + 128) share no byte (their bounding ranges do), so no store waits for
// another; a block overlapping its neighbour by 8 columns is ordered after it. Both compiled
// programs run race-free (the hazard detector uses the same exact footprints) and correct.
TEST(compiler, DisjointColumnBlocksOfHbmAreIndependent) {
  for (const bool overlap : {false, true}) {
    IrBuilder b("column_blocks");
    const StorageId in = b.hbm("in", DType::kFloat32, 128, 512, TensorRole::kInput);
    const StorageId out = b.hbm("out", DType::kFloat32, 128, 512, TensorRole::kOutput);
    const StorageId t = b.tile("t", Buffer::kSbuf, DType::kFloat32, 128, 512, 2);
    const StorageId u = b.tile("u", Buffer::kSbuf, DType::kFloat32, 128, 512, 3);
    b.add(isa::DmaCopy{b.t(t), b.h(in, 0, 128, 0, 512)}, 4, 0, false, std::uint8_t{0});
    b.copy(b.t(u), b.t(t), 5, isa::engine_bit(isa::Engine::kVector), true);
    for (std::uint8_t j = 0; j < 4; ++j) {
      // With `overlap`, block 1 starts 8 columns early (columns 120..255 of t and of out).
      const std::uint32_t c0 = 128u * j - (overlap && j == 1 ? 8u : 0u);
      const std::uint32_t nc = 128u + (overlap && j == 1 ? 8u : 0u);
      b.add(isa::DmaCopy{b.h(out, 0, 128, c0, nc), b.t(u, 0, 128, c0, nc)}, 6, 0, false,
            static_cast<std::uint8_t>(1 + j));
    }
    const CompiledKernel k = compile(std::span(&b.ir(), 1), trn3());
    std::map<int, std::vector<std::uint16_t>> waits_of_store;  // DMA queue -> semaphores
    for (const auto& inst : k.programs[0].instructions)
      if (const auto* d = std::get_if<isa::DmaCopy>(&inst.op);
          d && d->dst.memory == isa::Memory::kHbm)
        for (const isa::SemWait& w : inst.waits) waits_of_store[inst.queue.index].push_back(w.sem);
    const std::uint16_t vector_sem = 1, store0_sem = 5 + 1;
    for (int q = 1; q <= 4; ++q) {
      // Every store waits for the copy only; the overlapping block for block 0's store (which
      // waited for the copy: that wait is implied).
      const std::vector<std::uint16_t> want{overlap && q == 2 ? store0_sem : vector_sem};
      EXPECT_EQ(waits_of_store[q], want)
          << "store on dma queue " << q << (overlap ? " (overlap)" : "");
    }
    const auto v = exact_values(128 * 512, 9);
    const RunOutcome r = run_compiled(k, trn3(), {{"in", encode(DType::kFloat32, v)}}, true);
    EXPECT_TRUE(r.result.hazards.empty())
        << (r.result.diagnostics.empty() ? "" : r.result.diagnostics[0]);
    EXPECT_EQ(decode_f32(r.tensors[placement_index(k, "out")]), v);
  }
}

// PSUM reuse after a read on another engine: 12 iterations transpose eight 128-column
// blocks of a strip into a PSUM band (one bank; fresh per iteration, some of 6 partitions,
// or one band declared once), copy the band to SBUF on the Vector engine and store it. PSUM
// holds 8 bands, so from iteration 8 on a band is placed over a dead one: its first
// nc_transpose (Tensor) must be ordered after the dead band's tensor_copy (Vector), a WAR
// through memory reuse (or on the one band). Run with the hazard detector, race-free and
// bit-exact, scheduled and in program order.
TEST(compiler, PsumReuseAfterAVectorReadIsOrdered) {
  constexpr int kIters = 12;
  for (const bool one_band : {false, true})
    for (const bool sched : {true, false}) {
      IrBuilder b("psum_reuse");
      const StorageId x = b.hbm("x", DType::kBFloat16, 128, 1024, TensorRole::kInput);
      std::vector<std::uint32_t> rows,
          first_row;  // band i: rows[i] partitions, out rows from first_row[i]
      std::uint32_t total_rows = 0;
      for (int i = 0; i < kIters; ++i) {
        rows.push_back(i % 3 == 2 ? 6 : 128);  // ragged bands over full ones
        first_row.push_back(total_rows);
        total_rows += rows.back();
      }
      const StorageId out = b.hbm("out", DType::kBFloat16, total_rows, 1024, TensorRole::kOutput);
      const StorageId strip = b.tile("strip", Buffer::kSbuf, DType::kBFloat16, 128, 1024, 2);
      b.dma(b.t(strip), b.h(x, 0, 128, 0, 1024), 3);
      const StorageId shared_band = b.tile("band", Buffer::kPsum, DType::kBFloat16, 128, 1024, 4);
      for (int i = 0; i < kIters; ++i) {
        const std::uint32_t cp = rows[static_cast<std::size_t>(i)];
        const StorageId band = one_band ? shared_band
                                        : b.tile(fmt::format("band{}", i), Buffer::kPsum,
                                                 DType::kBFloat16, cp, 1024, 5);
        for (std::uint32_t blk = 0; blk < 8; ++blk) {
          isa::NcTranspose t;
          t.dst = b.t(band, 0, cp, 128 * blk, 128);
          t.data = b.t(strip, 0, 128, 128 * ((i + blk) % 8), cp);
          b.add(t, 6, isa::engine_bit(isa::Engine::kTensor), true);
        }
        const StorageId o =
            b.tile(fmt::format("o{}", i), Buffer::kSbuf, DType::kBFloat16, cp, 1024, 7);
        b.copy(b.t(o), b.t(band, 0, cp, 0, 1024), 8, isa::engine_bit(isa::Engine::kVector), true);
        b.dma(b.h(out, first_row[static_cast<std::size_t>(i)], cp, 0, 1024), b.t(o), 9);
      }
      CompileOptions opt;
      opt.schedule = sched;
      const CompiledKernel k = compile(std::span(&b.ir(), 1), trn3(), opt);
      if (!one_band) {  // the allocator did place later bands over dead ones
        std::set<std::uint64_t> offsets;
        for (const auto& pl : k.onchip[0])
          if (pl.memory == isa::Memory::kPsum) offsets.insert(pl.offset);
        EXPECT_LE(offsets.size(), 8u);
      }
      std::vector<float> xv(128 * 1024);
      for (std::size_t e = 0; e < xv.size(); ++e)
        xv[e] = static_cast<float>(static_cast<int>((e * 7919) % 97) - 48) / 16.0f;
      const std::vector<std::uint8_t> xb = encode(DType::kBFloat16, xv);
      const RunOutcome r = run_compiled(k, trn3(), {{"x", xb}}, true);
      ASSERT_TRUE(r.result.hazards.empty())
          << (one_band ? "one band" : "fresh bands") << (sched ? ", scheduled: " : ", in order: ")
          << r.result.diagnostics[0];
      // out[first_row[i] + c, 128 blk + r] = x[r, 128 ((i + blk) % 8) + c] for c < rows[i].
      const std::vector<std::uint8_t>& got = r.tensors[placement_index(k, "out")];
      std::size_t bad = 0, checked = 0;
      for (int i = 0; i < kIters; ++i)
        for (std::uint32_t c = 0; c < rows[static_cast<std::size_t>(i)]; ++c)
          for (std::uint32_t col = 0; col < 1024; ++col) {
            const std::uint32_t blk = col / 128, rr = col % 128;
            const std::size_t src = (rr * 1024 + 128 * ((i + blk) % 8) + c) * 2;
            const std::size_t dst =
                ((first_row[static_cast<std::size_t>(i)] + c) * std::size_t{1024} + col) * 2;
            bad += got.at(dst) != xb[src] || got.at(dst + 1) != xb[src + 1];
            ++checked;
          }
      EXPECT_EQ(bad, 0u) << "of " << checked;
    }
}

// The same through matmuls: 12 iterations of p = w^T x_i into PSUM (fresh [128, 512] fp32
// tiles, one bank each, or one tile declared once), copied out on the Vector engine: every
// matmul into reused PSUM waits for the copy that read it.
TEST(compiler, PsumReuseByMatmulAfterAVectorReadIsOrdered) {
  constexpr int kIters = 12;
  for (const bool one_tile : {false, true}) {
    IrBuilder b("psum_reuse_matmul");
    const StorageId w = b.hbm("w", DType::kBFloat16, 128, 128, TensorRole::kInput);
    const StorageId x = b.hbm("x", DType::kBFloat16, 128 * kIters, 512, TensorRole::kInput);
    const StorageId out = b.hbm("out", DType::kFloat32, 128 * kIters, 512, TensorRole::kOutput);
    const StorageId wt = b.tile("wt", Buffer::kSbuf, DType::kBFloat16, 128, 128, 2);
    b.dma(b.t(wt), b.h(w, 0, 128, 0, 128), 3);
    const StorageId shared = b.tile("p", Buffer::kPsum, DType::kFloat32, 128, 512, 4);
    for (int i = 0; i < kIters; ++i) {
      const StorageId xt =
          b.tile(fmt::format("x{}", i), Buffer::kSbuf, DType::kBFloat16, 128, 512, 5);
      const StorageId pt =
          one_tile ? shared
                   : b.tile(fmt::format("p{}", i), Buffer::kPsum, DType::kFloat32, 128, 512, 6);
      const StorageId yt =
          b.tile(fmt::format("y{}", i), Buffer::kSbuf, DType::kFloat32, 128, 512, 7);
      b.dma(b.t(xt), b.h(x, 128 * i, 128, 0, 512), 8);
      b.matmul(b.t(pt), b.t(wt), b.t(xt), false, 9);
      b.copy(b.t(yt), b.t(pt), 10, isa::engine_bit(isa::Engine::kVector), true);
      b.dma(b.h(out, 128 * i, 128, 0, 512), b.t(yt), 11);
    }
    const CompiledKernel k = compile(std::span(&b.ir(), 1), trn3());
    const auto wv = exact_values(128 * 128, 11), xv = exact_values(128 * 512 * kIters, 12);
    const RunOutcome r = run_compiled(
        k, trn3(), {{"w", encode(DType::kBFloat16, wv)}, {"x", encode(DType::kBFloat16, xv)}},
        true);
    ASSERT_TRUE(r.result.hazards.empty()) << r.result.diagnostics[0];
    const auto got = decode_f32(r.tensors[placement_index(k, "out")]);
    std::size_t bad = 0;
    for (int i = 0; i < kIters; ++i) {
      const std::size_t base = static_cast<std::size_t>(i) * 128 * 512;
      const std::vector<float> xi(xv.begin() + static_cast<std::ptrdiff_t>(base),
                                  xv.begin() + static_cast<std::ptrdiff_t>(base + 128 * 512));
      const auto want = reference_matmul(wv, xi, 128, 128, 512);
      for (std::size_t e = 0; e < want.size(); ++e) bad += got.at(base + e) != want[e];
    }
    EXPECT_EQ(bad, 0u) << (one_tile ? "one tile" : "fresh tiles");
  }
}

TEST(compiler, LaunchProgramsMustAgreeOnSharedTensors) {
  std::vector<kernel::KernelIr> irs;
  for (int p = 0; p < 2; ++p) {
    IrBuilder b("lnc", p, 2);
    b.hbm("x", DType::kFloat32, 128, p == 0 ? 64 : 32, TensorRole::kInput);
    irs.push_back(b.ir());
  }
  try {
    compile(irs, trn3());
    FAIL() << "expected KernelError";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("programs of one launch diverge"), std::string::npos);
  }
}

// Two programs: each loads its half of x, barriers, and stores. Shared tensors are placed
// once; private ones per program; the barrier waits for the core's earlier work and the
// instructions after it wait for the barrier.
TEST(compiler, TwoProgramsWithCoreBarrier) {
  std::vector<kernel::KernelIr> irs;
  for (int p = 0; p < 2; ++p) {
    IrBuilder b("lnc", p, 2);
    const StorageId x = b.hbm("x", DType::kFloat32, 128, 128, TensorRole::kInput);
    const StorageId y = b.hbm("y", DType::kFloat32, 128, 128, TensorRole::kOutput);
    const StorageId s =
        b.hbm("scratch", DType::kFloat32, 128, 64, TensorRole::kScratch, Buffer::kPrivateHbm);
    const StorageId t = b.tile("t", Buffer::kSbuf, DType::kFloat32, 128, 64, 2);
    const StorageId u = b.tile("u", Buffer::kSbuf, DType::kFloat32, 128, 64, 3);
    b.dma(b.t(t), b.h(x, 0, 128, 64 * p, 64), 4);
    b.copy(b.t(u), b.t(t), 5);
    b.dma(b.h(s, 0, 128, 0, 64), b.t(u), 6);
    isa::CoreBarrier bar;
    bar.num_cores = 2;
    b.add(bar, 7);
    b.dma(b.h(y, 0, 128, 64 * p, 64), b.t(u), 8);
    irs.push_back(b.ir());
  }
  const CompiledKernel k = compile(irs, trn3());
  ASSERT_EQ(k.programs.size(), 2u);
  int shared = 0, priv = 0;
  for (const auto& h : k.hbm) (h.program == -1 ? shared : priv)++;
  EXPECT_EQ(shared, 2);
  EXPECT_EQ(priv, 2);
  for (const auto& prog : k.programs) {
    std::size_t bar = prog.instructions.size();
    for (std::size_t i = 0; i < prog.instructions.size(); ++i)
      if (std::holds_alternative<isa::CoreBarrier>(prog.instructions[i].op)) bar = i;
    ASSERT_LT(bar, prog.instructions.size());
    // Before it: load (dma), copy (vector), store to scratch (dma, another queue or not):
    // the barrier waits for the vector copy's queue and the scratch store's queue.
    EXPECT_GE(prog.instructions[bar].waits.size(), 1u);
    EXPECT_EQ(prog.instructions[bar].signals.size(), 1u);
    for (std::size_t i = bar + 1; i < prog.instructions.size(); ++i)
      EXPECT_FALSE(prog.instructions[i].waits.empty());
  }
}

}  // namespace
}  // namespace trnsim::compiler::test
