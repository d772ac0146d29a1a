// Host speed of the timing model: simulated instructions per host second in timing-only
// mode on a program of more than 10^6 instructions, and the cost of timing a functional run.
//
// The program is a software pipeline over tiles: DMA load (HBM -> SBUF) on one queue,
// matmul on TensorE, PSUM eviction on VectorE, DMA store on a second queue, linked by
// semaphores and double-buffered, as a compiled kernel would be.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "bench_util.h"
#include "sim/sim.h"
#include "sim/timing_model.h"

namespace {

using namespace trnsim;
using isa::Memory;
using numerics::DType;

constexpr std::uint32_t kTile = 128;  // [128, 128] bf16 tiles
constexpr std::uint64_t kTileBytes = kTile * kTile * 2;
constexpr std::uint64_t kOutBase = 2 * kTileBytes;  // HBM: two input slots, two output slots
constexpr std::uint16_t kLoaded = 0, kMultiplied = 1, kEvicted = 2, kStored = 3;

// A [128, 128] tile from byte `offset`.
isa::AccessPattern onchip(Memory memory, DType dtype, std::uint64_t offset) {
  return bench::tile_pattern(memory, dtype, kTile, offset, kTile);
}

isa::AccessPattern in_hbm(std::uint64_t address) {
  isa::AccessPattern ap = onchip(Memory::kHbm, DType::kBFloat16, address);
  ap.partition_step = kTile;
  return ap;
}

isa::Instruction make(isa::QueueId queue, isa::Operation op, std::vector<isa::SemWait> waits,
                      std::uint16_t signal) {
  isa::Instruction inst;
  inst.queue = queue;
  inst.op = std::move(op);
  inst.waits = std::move(waits);
  inst.signals = {{signal, 1}};
  return inst;
}

isa::Program pipeline(std::uint32_t tiles) {
  isa::Program program;
  for (std::uint32_t i = 0; i < tiles; ++i) {
    const std::uint64_t slot = i % 2;
    const isa::AccessPattern tile = onchip(Memory::kSbuf, DType::kBFloat16, slot * 256);
    const isa::AccessPattern result = onchip(Memory::kSbuf, DType::kBFloat16, 1024 + slot * 256);
    const isa::AccessPattern acc = onchip(Memory::kPsum, DType::kFloat32, slot * 2048);

    isa::DmaCopy load;
    load.src = in_hbm(slot * kTileBytes);
    load.dst = tile;
    // Double buffering: reuse a slot once the store two tiles back has finished.
    std::vector<isa::SemWait> load_waits;
    if (i >= 2) load_waits.push_back({kStored, i - 1});
    program.instructions.push_back(make({isa::Engine::kDma, 0}, load, load_waits, kLoaded));

    isa::NcMatmul mm;
    mm.stationary = tile;
    mm.moving = tile;
    mm.dst = acc;
    program.instructions.push_back(
        make({isa::Engine::kTensor, 0}, mm, {{kLoaded, i + 1}}, kMultiplied));

    isa::TensorScalar evict;
    evict.data = acc;
    evict.dst = result;
    program.instructions.push_back(
        make({isa::Engine::kVector, 0}, evict, {{kMultiplied, i + 1}}, kEvicted));

    isa::DmaCopy store;
    store.src = result;
    store.dst = in_hbm(kOutBase + slot * kTileBytes);
    program.instructions.push_back(
        make({isa::Engine::kDma, 1}, store, {{kEvicted, i + 1}}, kStored));
  }
  return program;
}

// The HBM the pipeline uses: the two input slots filled, the two output slots allocated.
void allocate_tiles(sim::Device& device) {
  device.allocate_at(0, 4 * kTileBytes);
  device.write(0, std::vector<std::uint8_t>(2 * kTileBytes, 0x3f));  // bf16 0.74
}

// Timing only, 2^18 tiles = 1,048,576 instructions; with unit costs the event loop alone;
// `validate` = false skips isa::check_instruction (a program validated once, timed again:
// what `trnsim run --timing-only` does with a compiled kernel). The benchmark argument is
// RunOptions::threads for the pass before the run (0 = one per hardware thread); the run
// itself is one event loop. Real (wall-clock) time, since the pass uses several threads.
void run_timing_only(benchmark::State& state, bool timed, bool validate = true) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const isa::Program program = pipeline(1u << 18);
  sim::Device device(chip);
  allocate_tiles(device);
  double simulated_ns = 0;
  for (auto _ : state) {
    sim::TimingModel model(chip);
    sim::RunOptions options;
    options.functional = false;
    options.check_hazards = false;
    options.validate = validate;
    options.threads = static_cast<unsigned>(state.range(0));
    if (timed) options.cost_model = &model;
    const sim::RunResult result = sim::run(device, program, options);
    simulated_ns = result.end_time;
    benchmark::DoNotOptimize(result.end_time);
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<std::int64_t>(program.instructions.size()));
  if (timed) state.counters["simulated_us"] = simulated_ns * 1e-3;
}
void BM_TimingOnly(benchmark::State& state) {
  run_timing_only(state, true);
}
void BM_EventLoopUnitCosts(benchmark::State& state) {
  run_timing_only(state, false);
}
void BM_TimingOnlyPrevalidated(benchmark::State& state) {
  run_timing_only(state, true, false);
}
void BM_EventLoopUnitCostsPrevalidated(benchmark::State& state) {
  run_timing_only(state, false, false);
}
void timing_only_args(benchmark::internal::Benchmark* b) {
  b->ArgName("threads")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->MinTime(2.0)->UseRealTime();
}
BENCHMARK(BM_TimingOnly)->Apply(timing_only_args);
BENCHMARK(BM_EventLoopUnitCosts)->Apply(timing_only_args);
BENCHMARK(BM_TimingOnlyPrevalidated)->Apply(timing_only_args);
BENCHMARK(BM_EventLoopUnitCostsPrevalidated)->Apply(timing_only_args);

// Functional runs of 4096 tiles (16,384 instructions), with unit costs or timed.
void run_functional(benchmark::State& state, bool timed) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const isa::Program program = pipeline(4096);
  sim::Device device(chip);
  allocate_tiles(device);
  for (auto _ : state) {
    sim::TimingModel model(chip);
    sim::RunOptions options;
    options.check_hazards = false;
    if (timed) options.cost_model = &model;
    const sim::RunResult result = sim::run(device, program, options);
    benchmark::DoNotOptimize(result.end_time);
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<std::int64_t>(program.instructions.size()));
}
void BM_FunctionalUnitCosts(benchmark::State& state) {
  run_functional(state, false);
}
void BM_FunctionalTimed(benchmark::State& state) {
  run_functional(state, true);
}
BENCHMARK(BM_FunctionalUnitCosts)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_FunctionalTimed)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
