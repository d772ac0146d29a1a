// Host speed of the functional tensor engine: simulated nc_matmul / nc_matmul_mx streams in
// host GFLOP/s, next to OpenBLAS sgemm on the same problem in the same run.
//
// Both sides run on one host thread (OpenBLAS is pinned to one thread) so the ratio compares
// the kernels, not the thread counts. The simulated side includes everything a functional
// run does per instruction: validation, decoding the operands from their storage type,
// the ordered fp32 contraction, and encoding into PSUM. Hazard checking is off (a
// single-queue program has no cross-queue hazards to find).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "bench_util.h"
#include "isa/isa.h"
#include "numerics/numerics.h"
#include "sim/sim.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace {

using trnsim::bench::tile_pattern;
using trnsim::isa::Memory;
using trnsim::numerics::DType;
namespace isa = trnsim::isa;
namespace sim = trnsim::sim;

isa::Instruction on_tensor(isa::Operation op) {
  isa::Instruction inst;
  inst.op = std::move(op);
  inst.queue = {isa::Engine::kTensor, 0};
  return inst;
}

// Fills `bytes` of every SBUF partition from `offset` with data that encodes valid values
// of `dtype` (random codes of bf16 in a modest range; random MX element codes).
void fill_sbuf(sim::Core& core, DType dtype, std::uint64_t offset, std::uint64_t bytes,
               std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::uint8_t> row(bytes);
  for (std::uint32_t p = 0; p < 128; ++p) {
    if (dtype == DType::kBFloat16) {
      std::vector<float> values(bytes / 2);
      for (float& v : values) v = dist(rng);
      trnsim::numerics::encode_bytes(DType::kBFloat16, values,
                                     std::as_writable_bytes(std::span(row)));
    } else {
      // E4M3 codes without the NaN pattern (S.1111.111) and E8M0 scales near 2^0.
      for (auto& b : row) {
        const auto code = static_cast<std::uint8_t>(rng() & 0xFF);
        b = dtype == DType::kUInt8 ? static_cast<std::uint8_t>(120 + code % 16)
                                   : ((code & 0x7F) == 0x7F ? std::uint8_t{0} : code);
      }
    }
    core.write_onchip(Memory::kSbuf, p, offset, row);
  }
}

struct MatmulProblem {
  isa::Program program;
  double flops = 0;
};

// A GEMM C[M,N] = A[M,K] B[K,N] made of full-tile `Matmul` instructions: stationary A^T
// tiles [128 (k), 128 (m)], moving B tiles [128 (k), 512 (n)], accumulating over the K steps
// (k_step values of K each) in PSUM. SBUF layout per partition: A^T tiles, then B tiles, in
// elements of `dtype` of `element_bytes` each. `finish(mm, i, j, l)` sets what else the
// instruction of output tile (i, j) at K step l needs.
template <class Matmul, class Finish>
MatmulProblem full_tile_gemm(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                             std::uint32_t k_step, DType dtype, std::uint64_t element_bytes,
                             Finish finish) {
  MatmulProblem problem;
  const std::uint32_t mt = m / 128, nt = n / 512, kt = k / k_step;
  const std::uint64_t a_bytes = std::uint64_t{kt} * m * element_bytes;
  for (std::uint32_t i = 0; i < mt; ++i)
    for (std::uint32_t j = 0; j < nt; ++j)
      for (std::uint32_t l = 0; l < kt; ++l) {
        Matmul mm;
        mm.stationary =
            tile_pattern(Memory::kSbuf, dtype, 128,
                         (std::uint64_t{l} * m + std::uint64_t{i} * 128) * element_bytes, 128);
        mm.moving = tile_pattern(
            Memory::kSbuf, dtype, 128,
            a_bytes + (std::uint64_t{l} * n + std::uint64_t{j} * 512) * element_bytes, 512);
        mm.dst =
            tile_pattern(Memory::kPsum, DType::kFloat32, 128, std::uint64_t{j % 8} * 2048, 512);
        mm.accumulate = l == 0 ? isa::AccumulateMode::kOverwrite : isa::AccumulateMode::kAccumulate;
        finish(mm, i, j, l);
        problem.program.instructions.push_back(on_tensor(mm));
      }
  problem.flops = 2.0 * m * n * k;
  return problem;
}

// BF16 nc_matmul: K = 128 per instruction.
MatmulProblem bf16_gemm(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  return full_tile_gemm<isa::NcMatmul>(
      m, n, k, 128, DType::kBFloat16, 2,
      [](isa::NcMatmul&, std::uint32_t, std::uint32_t, std::uint32_t) {});
}

// MXFP8 (E4M3 x4-packed) nc_matmul_mx: K = 512 per instruction (one 32-bit word per column
// and partition), the E8M0 scales after the B tiles (A's, then B's).
MatmulProblem mxfp8_gemm(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  const std::uint32_t kt = k / 512;
  const std::uint64_t a_bytes = std::uint64_t{kt} * m * 4;
  const std::uint64_t b_bytes = std::uint64_t{kt} * n * 4;
  const std::uint64_t scale_base = a_bytes + b_bytes;
  const std::uint64_t a_scale_bytes = std::uint64_t{kt} * m;
  return full_tile_gemm<isa::NcMatmulMx>(
      m, n, k, 512, DType::kFloat8E4M3x4, 4,
      [&](isa::NcMatmulMx& mm, std::uint32_t i, std::uint32_t j, std::uint32_t l) {
        mm.stationary_scale =
            tile_pattern(Memory::kSbuf, DType::kUInt8, 128,
                         scale_base + std::uint64_t{l} * m + std::uint64_t{i} * 128, 128);
        mm.moving_scale = tile_pattern(
            Memory::kSbuf, DType::kUInt8, 128,
            scale_base + a_scale_bytes + std::uint64_t{l} * n + std::uint64_t{j} * 512, 512);
      });
}

void run_simulated(benchmark::State& state, const MatmulProblem& problem, bool mx,
                   std::uint64_t data_bytes, std::uint64_t scale_bytes) {
  sim::Device device(trnsim::arch::load_preset("trn3"));
  sim::Core& core = device.core(0);
  fill_sbuf(core, mx ? DType::kFloat8E4M3 : DType::kBFloat16, 0, data_bytes, 1);
  if (mx) fill_sbuf(core, DType::kUInt8, data_bytes, scale_bytes, 2);
  sim::RunOptions options;
  options.check_hazards = false;
  // Which kernel ran: the host's vector level, or TRNSIM_SIMD's (avx2, baseline).
  state.SetLabel(std::string("simd=") + std::string(sim::simd_level_name(sim::simd_level())));
  for (auto _ : state) {
    sim::RunResult result = sim::run(device, problem.program, options);
    benchmark::DoNotOptimize(result.instructions_executed);
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(problem.flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["instructions"] = static_cast<double>(problem.program.instructions.size());
}

void BM_SimBf16Matmul(benchmark::State& state) {
  const auto m = static_cast<std::uint32_t>(state.range(0));
  const auto n = static_cast<std::uint32_t>(state.range(1));
  const auto k = static_cast<std::uint32_t>(state.range(2));
  run_simulated(state, bf16_gemm(m, n, k), false, std::uint64_t{k / 128} * (m + n) * 2, 0);
}

void BM_SimMxfp8Matmul(benchmark::State& state) {
  const auto m = static_cast<std::uint32_t>(state.range(0));
  const auto n = static_cast<std::uint32_t>(state.range(1));
  const auto k = static_cast<std::uint32_t>(state.range(2));
  const std::uint64_t kt = k / 512;
  run_simulated(state, mxfp8_gemm(m, n, k), true, kt * (m + n) * 4, kt * (m + n));
}

// OpenBLAS sgemm on the same shape: C[M,N] = A[M,K] B[K,N], fp32, one thread.
void BM_OpenBlasSgemm(benchmark::State& state) {
  openblas_set_num_threads(1);
  const auto m = static_cast<int>(state.range(0));
  const auto n = static_cast<int>(state.range(1));
  const auto k = static_cast<int>(state.range(2));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n),
      c(static_cast<std::size_t>(m) * n);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n,
                0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate);
}

// One full tile (a single instruction) and a 2048^3 GEMM made of full tiles.
BENCHMARK(BM_SimBf16Matmul)
    ->Args({128, 512, 128})
    ->Args({2048, 2048, 2048})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimMxfp8Matmul)
    ->Args({128, 512, 512})
    ->Args({2048, 2048, 2048})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OpenBlasSgemm)
    ->Args({128, 512, 128})
    ->Args({128, 512, 512})
    ->Args({2048, 2048, 2048})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
