// Compiler tests: hand-built IR compiled and run on the simulator with hazard checks.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "arch/arch.h"
#include "ir_builder.h"

namespace trnsim::compiler::test {
namespace {

using kernel::KernelError;
using kernel::TensorRole;

const arch::ChipConfig& trn3() {
  static const arch::ChipConfig chip = arch::load_preset("trn3");
  return chip;
}

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
      const StorageId at = b.tile("at" + std::to_string(k), Buffer::kSbuf, DType::kBFloat16, 128, 128, 12);
      const StorageId bt = b.tile("bt" + std::to_string(k), Buffer::kSbuf, DType::kBFloat16, 128, 512, 13);
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
      k, trn3(), {{"a_t", encode(DType::kBFloat16, a)}, {"b", encode(DType::kBFloat16, bv)}}, timed);
  EXPECT_TRUE(r.result.hazards.empty()) << (r.result.diagnostics.empty() ? "" : r.result.diagnostics[0]);
  const auto got = decode_f32(r.tensors[placement_index(k, "c")]);
  const auto want = reference_matmul(a, bv, K, 128, 512);
  ASSERT_EQ(got.size(), want.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) bad += got[i] != want[i];
  EXPECT_EQ(bad, 0u);
}

TEST(Compiler, SingleTileMatmulEndToEnd) {
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

TEST(Compiler, PsumAccumulationOverKTiles) {
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

}  // namespace
}  // namespace trnsim::compiler::test
