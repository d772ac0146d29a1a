// Throughput of the bulk conversions on 16M elements, next to a memcpy of the same input
// bytes (64 MiB) in the same process. Each benchmark also reports `x_memcpy`: its fastest
// iteration divided by the fastest of five memcpys, a ratio that survives a busy machine
// better than the mean times do.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "numerics/numerics.h"

namespace {

using trnsim::numerics::ConvertOptions;
using trnsim::numerics::DType;
using trnsim::numerics::MxOptions;
using trnsim::numerics::RoundingMode;

constexpr std::size_t kElements = std::size_t{16} << 20;

const std::vector<float>& input() {
  static const std::vector<float> data = [] {
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 4.0f);
    std::vector<float> v(kElements);
    for (float& x : v) x = dist(rng);
    return v;
  }();
  return data;
}

// Seconds for one memcpy of the 64 MiB input, best of five.
double memcpy_seconds() {
  static const double seconds = [] {
    std::vector<float> out(kElements);
    double best = 1e9;
    for (int i = 0; i < 5; ++i) {
      const auto start = std::chrono::steady_clock::now();
      std::memcpy(out.data(), input().data(), kElements * sizeof(float));
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
      best = std::min(
          best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
  }();
  return seconds;
}

// Times each iteration of `body` and reports items/s plus the best-iteration ratio.
template <class Body>
void run(benchmark::State& state, Body&& body) {
  double best = 1e9;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    body();
    benchmark::ClobberMemory();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(kElements));
  state.counters["x_memcpy"] = best / memcpy_seconds();
}

void BM_Memcpy(benchmark::State& state) {
  std::vector<float> out(kElements);
  run(state, [&] {
    std::memcpy(out.data(), input().data(), kElements * sizeof(float));
    benchmark::DoNotOptimize(out.data());
  });
}

template <class Word>
void convert(benchmark::State& state, DType type, RoundingMode rounding) {
  std::vector<Word> out(kElements);
  ConvertOptions options;
  options.rounding = rounding;
  options.seed = 1;
  run(state, [&] {
    trnsim::numerics::encode_array(type, input(), std::span<Word>(out), options);
    benchmark::DoNotOptimize(out.data());
  });
}

void BM_Fp32ToBf16(benchmark::State& state) {
  convert<std::uint16_t>(state, DType::kBFloat16, RoundingMode::kNearestEven);
}
void BM_Fp32ToBf16Stochastic(benchmark::State& state) {
  convert<std::uint16_t>(state, DType::kBFloat16, RoundingMode::kStochastic);
}
void BM_Fp32ToFp8E4M3(benchmark::State& state) {
  convert<std::uint8_t>(state, DType::kFloat8E4M3, RoundingMode::kNearestEven);
}
void BM_Fp32ToFp8E4M3Stochastic(benchmark::State& state) {
  convert<std::uint8_t>(state, DType::kFloat8E4M3, RoundingMode::kStochastic);
}

void mx(benchmark::State& state, DType element) {
  std::vector<std::uint8_t> codes(kElements), scales(kElements / 32);
  MxOptions options;
  options.element = element;
  run(state, [&] {
    trnsim::numerics::quantize_mx(input(), codes, scales, options);
    benchmark::DoNotOptimize(codes.data());
  });
}

void BM_Fp32ToMxfp8E4M3(benchmark::State& state) {
  mx(state, DType::kFloat8E4M3);
}
void BM_Fp32ToMxfp4(benchmark::State& state) {
  mx(state, DType::kFloat4E2M1);
}

void BM_Fp32ToMxfp4Packed(benchmark::State& state) {
  std::vector<std::byte> words(kElements / 4 * 2);
  std::vector<std::uint8_t> scales(kElements / 32);
  run(state, [&] {
    trnsim::numerics::quantize_mx_packed(DType::kFloat4E2M1x4, input(), words, scales, {});
    benchmark::DoNotOptimize(words.data());
  });
}

void BM_Bf16ToFp32(benchmark::State& state) {
  std::vector<std::uint16_t> codes(kElements);
  trnsim::numerics::encode_array(DType::kBFloat16, input(), std::span<std::uint16_t>(codes));
  std::vector<float> out(kElements);
  run(state, [&] {
    trnsim::numerics::decode_array(DType::kBFloat16, std::span<const std::uint16_t>(codes), out);
    benchmark::DoNotOptimize(out.data());
  });
}

void BM_Fp8E4M3ToFp32(benchmark::State& state) {
  std::vector<std::uint8_t> codes(kElements);
  trnsim::numerics::encode_array(DType::kFloat8E4M3, input(), std::span<std::uint8_t>(codes));
  std::vector<float> out(kElements);
  run(state, [&] {
    trnsim::numerics::decode_array(DType::kFloat8E4M3, std::span<const std::uint8_t>(codes), out);
    benchmark::DoNotOptimize(out.data());
  });
}

BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fp32ToBf16)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fp32ToBf16Stochastic)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fp32ToFp8E4M3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fp32ToFp8E4M3Stochastic)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fp32ToMxfp8E4M3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fp32ToMxfp4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fp32ToMxfp4Packed)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Bf16ToFp32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Fp8E4M3ToFp32)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
