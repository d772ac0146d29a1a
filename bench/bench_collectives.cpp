// Host time of collectives against the size of the system: the event model and the analytical
// model timing a 256 MiB all-reduce on 1, 16, 64 and 144 chips (4 ranks per chip, the
// runtime's algorithm for the size), and the data of a bf16 all-reduce on 1 and 2 host
// threads (the same bits for both: collective_test.cpp checks it), and a kernel with an
// all-reduce launched on one rank per chip of those systems.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "collective/collective.h"
#include "kernel/collectives.h"
#include "kernel/kernel.h"
#include "numerics/numerics.h"
#include "runtime/runtime.h"

namespace {

using namespace trnsim;
using collective::Op;

constexpr std::uint64_t kBytes = std::uint64_t{256} << 20;

struct Case {
  const char* system;
  int chips;
};
// 1 chip: the 4 ranks of chip 0 of trn2.48xlarge.
constexpr Case kCases[] = {{"trn2.48xlarge", 1},
                           {"trn2.48xlarge", 16},
                           {"trn2-ultraserver", 64},
                           {"trn3-ultraserver-gen2", 144}};

void BM_AllReduceEvents(benchmark::State& state) {
  const Case& c = kCases[state.range(0)];
  const collective::CollectiveModel model(system::load_preset(c.system), 4);
  const int ranks = 4 * c.chips;
  std::uint64_t events = 0;
  for (auto _ : state) {
    const collective::Simulation s = model.simulate(Op::kAllReduce, kBytes, ranks);
    events = s.events;
    benchmark::DoNotOptimize(s.time_ns);
  }
  state.counters["chips"] = c.chips;
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AllReduceEvents)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_AllReduceAnalytical(benchmark::State& state) {
  const Case& c = kCases[state.range(0)];
  for (auto _ : state) {
    // A fresh model each time: its route cache would make every later call free.
    const collective::CollectiveModel model(system::load_preset(c.system), 4);
    benchmark::DoNotOptimize(model.estimate(Op::kAllReduce, kBytes, 4 * c.chips).time_ns);
  }
  state.counters["chips"] = c.chips;
}
BENCHMARK(BM_AllReduceAnalytical)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();

// The data: 16 ranks x 16 MiB of bf16, ring order, on 1 or 2 host threads.
void BM_AllReduceData(benchmark::State& state) {
  const std::size_t count = std::size_t{8} << 20;
  std::vector<collective::Buffer> inputs;
  std::vector<float> values(count);
  for (int r = 0; r < 16; ++r) {
    for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>((r * 7 + i) % 13);
    inputs.emplace_back(count * 2);
    numerics::encode_bytes(numerics::DType::kBFloat16, values, inputs.back());
  }
  for (auto _ : state) {
    const auto out = collective::all_reduce(inputs, numerics::DType::kBFloat16,
                                            collective::Reduce::kSum, collective::Algorithm::kRing,
                                            1, static_cast<unsigned>(state.range(0)));
    benchmark::DoNotOptimize(out.front().data());
  }
  state.counters["threads"] = static_cast<double>(state.range(0));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * 16 *
                          static_cast<std::int64_t>(count) * 2);
}
BENCHMARK(BM_AllReduceData)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// A kernel with a collective on a system's chips, one rank per chip (runtime::launch_system):
// each rank loads its [128, 512] fp32 tile, takes exp, and all-reduces it. The host time of
// building the launch, simulating every rank's cores and computing and timing the collective.
std::vector<kernel::Tensor> exp_then_all_reduce(std::span<const kernel::Tensor> in) {
  kernel::Tensor t = nl::load(in[0]);
  kernel::Tensor e = nl::ndarray(in[0].shape(), in[0].dtype(), nl::sbuf, "e");
  nisa::activation(e, isa::ActivationFunc::kExp, t);
  kernel::Tensor partial = nl::ndarray(in[0].shape(), in[0].dtype(), nl::private_hbm, "partial");
  nl::store(partial, e);
  kernel::Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm, "out");
  ncc::all_reduce({partial}, {out}, {}, isa::AluOp::kAdd);
  return {out};
}

void BM_KernelOnChips(benchmark::State& state) {
  const Case& c = kCases[state.range(0)];
  const system::SystemConfig config = system::load_preset(c.system);
  const kernel::Shape shape{128, 512};
  std::vector<std::vector<runtime::HostTensor>> inputs;
  for (int r = 0; r < c.chips; ++r)
    inputs.push_back({runtime::random_tensor("x", numerics::DType::kFloat32, shape,
                                             static_cast<std::uint32_t>(r))});
  const runtime::BuiltKernel built =
      runtime::build(exp_then_all_reduce, std::vector{inputs[0][0].spec()}, config.chip_config);
  double simulated_ns = 0;
  for (auto _ : state) {
    const runtime::RanksResult r = runtime::launch_system(built, config, inputs, 1);
    simulated_ns = r.simulated_ns;
    benchmark::DoNotOptimize(r.ranks.back().outputs.front().bytes().data());
  }
  state.counters["chips"] = c.chips;
  state.counters["simulated_us"] = simulated_ns / 1000;
}
BENCHMARK(BM_KernelOnChips)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
