// Multi-core launches (sim::run_cores): barriers, errors naming cores, cross-core HBM
// hazards, and the chip-level timing model with HBM shared by every core (simulated time).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/tests/test_util.h"
#include "sim/tests/timing_test_util.h"
#include "sim/timing_model.h"

namespace trnsim::sim {
namespace {

using namespace trnsim::sim::testing;
using isa::Memory;

isa::Instruction barrier(std::uint32_t id, std::uint32_t cores,
                         std::vector<isa::SemWait> waits = {},
                         std::vector<isa::SemSignal> signals = {}) {
  return make(sync_q(), isa::CoreBarrier{.barrier_id = id, .num_cores = cores}, std::move(waits),
              std::move(signals));
}

// HBM -> HBM copies of `bytes` per transfer on 8 queues (each byte crosses HBM twice).
isa::Program hbm_to_hbm(int transfers, std::uint64_t bytes, std::uint64_t base) {
  isa::Program program;
  const std::uint32_t rows = 128;
  const auto free = static_cast<std::uint32_t>(bytes / rows / 4);
  for (int i = 0; i < transfers; ++i) {
    isa::DmaCopy copy;
    const std::uint64_t slot = static_cast<std::uint64_t>(i % 8);
    copy.src = hbm(DType::kFloat32, base + slot * bytes, rows, free, {{1, free}});
    copy.dst = hbm(DType::kFloat32, base + (8 + slot) * bytes, rows, free, {{1, free}});
    program.instructions.push_back(make(dma_q(static_cast<std::uint8_t>(i % 8)), copy));
  }
  return program;
}

struct ChipRun {
  MultiRunResult result;
  ChipTimingReport report;
};

// Timing-only run of programs[i] on physical core i, all timed by one ChipTimingModel.
ChipRun time_cores(const arch::ChipConfig& chip, const std::vector<isa::Program>& programs,
                   TimingOptions options = {}, std::uint64_t hbm_bytes = 0, int model_cores = 0) {
  Device device(chip, chip.cores_per_chip);
  if (hbm_bytes > 0) device.allocate_at(0, hbm_bytes);
  ChipTimingModel timing(chip, model_cores > 0 ? model_cores : static_cast<int>(programs.size()),
                         options);
  std::vector<CoreProgram> launches;
  for (std::size_t i = 0; i < programs.size(); ++i)
    launches.push_back({static_cast<int>(i), &programs[i], timing.core(static_cast<int>(i))});
  const RunOptions run_options = timing_only_options();  // each launch names its model
  ChipRun out;
  out.result = run_cores(device, launches, run_options);
  out.report = timing.chip_report(launches, out.result);
  return out;
}

// ---------------------------------------------------------------------------------------
// Compute peaks across cores

TEST(ChipTiming, EightTrn3CoresReachTheMxfp8ChipPeak) {
  const arch::ChipConfig& chip = trn3();
  const std::vector<isa::Program> programs(8, matmul_mx_stream(256));
  const ChipRun run = time_cores(chip, programs, ramp(false));
  const ChipTimingReport& r = run.report;
  const double per_core = chip.tensor.published_peak_tflops.at("mx").value * 1e12;
  record("eight_cores_mx_tflops", r.achieved_flops_per_s * 1e-12);
  EXPECT_EQ(r.tensor_mode, "mx");
  ASSERT_EQ(r.cores.size(), 8u);
  // 8 x 314.6 TFLOPS = 2517 TFLOPS, the published chip figure (trainium3.rst).
  EXPECT_NEAR(r.achieved_flops_per_s, 8 * per_core, 8 * per_core * kCalibrationTolerance);
  EXPECT_NEAR(r.achieved_flops_per_s, 2517e12, 2517e12 * kCalibrationTolerance);
  EXPECT_DOUBLE_EQ(r.published_chip_peak_flops_per_s, 2517e12);
  EXPECT_LE(r.achieved_flops_per_s, r.chip_peak_flops_per_s);
  EXPECT_DOUBLE_EQ(r.chip_peak_flops_per_s, r.launched_peak_flops_per_s);
  for (const TimingReport& core : r.cores) EXPECT_DOUBLE_EQ(core.total_ns, r.cores[0].total_ns);
}

TEST(ChipTiming, EightTrn3CoresReachEightTimesTheBf16CorePeak) {
  // The chip page's 671 BF16 TFLOPS is not 8 x 78.6 = 629: it would need a 2.56 GHz TensorE
  // clock, while the arch guide's 2.4 GHz matches the per-core figure. The preset keeps
  // 2.4 GHz and records the discrepancy (published_chip.bf16), so 8 cores reach 8 x 78.6.
  const arch::ChipConfig& chip = trn3();
  const std::vector<isa::Program> programs(8, matmul_stream(256, DType::kBFloat16));
  const ChipRun run = time_cores(chip, programs, ramp(false));
  const ChipTimingReport& r = run.report;
  record("eight_cores_bf16_tflops", r.achieved_flops_per_s * 1e-12);
  EXPECT_EQ(r.tensor_mode, "bf16");
  EXPECT_NEAR(r.achieved_flops_per_s, 8 * 78.6e12, 8 * 78.6e12 * kCalibrationTolerance);
  EXPECT_FALSE(chip.published_chip.at("bf16").discrepancy.empty());
  EXPECT_LT(r.achieved_flops_per_s, 0.97 * r.published_chip_peak_flops_per_s);
}

// ---------------------------------------------------------------------------------------
// HBM shared by the cores

constexpr std::uint32_t kFree = 8192;  // 16 KiB per partition: saturating transfers
constexpr std::uint64_t kTileBytes = 128ull * kFree * 2;
constexpr std::uint64_t kSlots = 2;
constexpr std::uint64_t kCoreRegion = 2 * kSlots * kTileBytes;

TEST(ChipTiming, EightCoresStreamingShareTheChipHbm) {
  const arch::ChipConfig& chip = trn3();
  std::vector<isa::Program> programs;
  for (int c = 0; c < 8; ++c)
    programs.push_back(
        streaming_copy(64, 8, 128, kFree, static_cast<std::uint64_t>(c) * kCoreRegion, kSlots));
  const ChipRun run = time_cores(chip, programs, {}, 8 * kCoreRegion);
  const ChipTimingReport& r = run.report;
  const double chip_bw = chip.hbm.bandwidth_gbps * 1e9;
  record("eight_cores_streaming_hbm_gbps", r.achieved_hbm_bytes_per_s * 1e-9);
  record("eight_cores_streaming_fraction_of_chip", r.achieved_hbm_bytes_per_s / chip_bw);
  EXPECT_EQ(r.hbm_bytes, 8u * 2 * 64 * kTileBytes);
  EXPECT_DOUBLE_EQ(r.hbm_bytes_per_s, chip_bw);
  EXPECT_GE(r.achieved_hbm_bytes_per_s, 0.90 * chip_bw);
  EXPECT_LE(r.achieved_hbm_bytes_per_s, chip_bw);
}

TEST(ChipTiming, HbmToHbmCopiesOnEightCoresAreLimitedByTheChipHbm) {
  // Each byte crosses HBM twice: 8 cores x 16 engines could ask for 9.8 TB/s, twice the chip.
  const arch::ChipConfig& chip = trn3();
  constexpr std::uint64_t kBytes = 1 << 20;
  std::vector<isa::Program> programs;
  for (int c = 0; c < 8; ++c)
    programs.push_back(hbm_to_hbm(64, kBytes, static_cast<std::uint64_t>(c) * 16 * kBytes));
  const ChipRun eight = time_cores(chip, programs, {}, 8 * 16 * kBytes);
  const ChipRun one = time_cores(chip, {programs[0]}, {}, 8 * 16 * kBytes, 8);
  const double chip_bw = chip.hbm.bandwidth_gbps * 1e9;
  record("eight_cores_hbm_to_hbm_gbps", eight.report.achieved_hbm_bytes_per_s * 1e-9);
  record("one_core_hbm_to_hbm_gbps", one.report.achieved_hbm_bytes_per_s * 1e-9);
  EXPECT_LE(eight.report.achieved_hbm_bytes_per_s, chip_bw);
  EXPECT_GE(eight.report.achieved_hbm_bytes_per_s, 0.90 * chip_bw);
  EXPECT_GT(eight.report.hbm_limited_ns, 0.0);
  // Alone, the core is bound by its engines (moving 2 HBM bytes per transfer byte).
  const double engines = chip.dma.engines_per_core * chip.dma.engine_bandwidth_gbps * 1e9;
  EXPECT_DOUBLE_EQ(one.report.hbm_limited_ns, 0.0);
  EXPECT_LE(one.report.cores[0].achieved_dma_bytes_per_s, engines);
  EXPECT_GE(one.report.cores[0].achieved_dma_bytes_per_s, 0.85 * engines);
  // Contention makes each core slower than alone.
  EXPECT_GT(eight.report.total_ns, 1.5 * one.report.total_ns);
}

TEST(ChipTiming, OneCoreAloneIsLimitedByItsDmaEnginesNotTheChipHbm) {
  const arch::ChipConfig& chip = trn3();
  const isa::Program program = streaming_copy(64, 8, 128, kFree, 0, kSlots);
  // The core runs alone in a chip model sized for 8 cores: the other cores leave HBM idle.
  const ChipRun run = time_cores(chip, {program}, {}, kCoreRegion, 8);
  const TimingReport& r = run.report.cores[0];
  const double engines = chip.dma.engines_per_core * chip.dma.engine_bandwidth_gbps * 1e9;
  record("one_core_alone_hbm_gbps", r.achieved_hbm_bytes_per_s * 1e-9);
  EXPECT_DOUBLE_EQ(r.hbm_limited_ns, 0.0);
  EXPECT_LE(r.achieved_hbm_bytes_per_s, engines);
  EXPECT_GE(r.achieved_hbm_bytes_per_s, 0.90 * engines);
  EXPECT_LT(r.achieved_hbm_bytes_per_s, 0.2 * chip.hbm.bandwidth_gbps * 1e9);

  // With a chip whose HBM is slower than one core's engines, HBM is the limit instead.
  arch::ChipConfig slow = chip;
  slow.hbm.bandwidth_gbps.value = 300;
  const ChipRun limited = time_cores(slow, {program}, {}, kCoreRegion, 8);
  const TimingReport& s = limited.report.cores[0];
  record("one_core_300gbps_hbm_gbps", s.achieved_hbm_bytes_per_s * 1e-9);
  EXPECT_LE(s.achieved_hbm_bytes_per_s, 300e9);
  EXPECT_GE(s.achieved_hbm_bytes_per_s, 0.90 * 300e9);
  EXPECT_GT(s.hbm_limited_ns, 0.0);
}

// Every core of trn1 and trn2 at once: the compute peaks add up, and streaming is bound by
// the lesser of the chip's HBM and all the cores' DMA engines.
TEST(ChipTiming, AllCoresOfTheOtherPresetsReachCoresTimesTheCorePeak) {
  for (const char* name : {"trn2", "trn1"}) {
    SCOPED_TRACE(name);
    const arch::ChipConfig chip = arch::load_preset(name);
    const int cores = chip.cores_per_chip;
    for (const auto& [mode, dtype] :
         {std::pair{"bf16", DType::kBFloat16}, std::pair{"fp32", DType::kFloat32}}) {
      SCOPED_TRACE(mode);
      const std::vector<isa::Program> programs(static_cast<std::size_t>(cores),
                                               matmul_stream(256, dtype));
      const ChipTimingReport r = time_cores(chip, programs, ramp(false)).report;
      const double per_core = chip.tensor.published_peak_tflops.at(mode).value * 1e12;
      record(fmt::format("{}_all_cores_{}_tflops", name, mode), r.achieved_flops_per_s * 1e-12);
      EXPECT_EQ(r.tensor_mode, mode);
      EXPECT_GE(r.achieved_flops_per_s, (1 - kCalibrationTolerance) * cores * per_core);
      EXPECT_LE(r.achieved_flops_per_s, r.chip_peak_flops_per_s);
    }
    std::vector<isa::Program> streams;
    for (int c = 0; c < cores; ++c)
      streams.push_back(
          streaming_copy(64, 8, 128, kFree, static_cast<std::uint64_t>(c) * kCoreRegion, kSlots));
    const ChipTimingReport all =
        time_cores(chip, streams, {}, static_cast<std::uint64_t>(cores) * kCoreRegion).report;
    // Each engine moves one 16 KiB partition row per descriptor: trn1's 90 ns per
    // descriptor costs it 13% of its engines' rate, trn2's 17.5 ns 3%.
    const double row_bytes = kFree * 2.0;
    const double engines =
        chip.dma.engines_per_core * row_bytes /
        (row_bytes / chip.dma.engine_bandwidth_gbps + chip.dma.per_descriptor_ns) * 1e9;
    const double bound = std::min(chip.hbm.bandwidth_gbps * 1e9, cores * engines);
    record(fmt::format("{}_all_cores_streaming_gbps", name), all.achieved_hbm_bytes_per_s * 1e-9);
    EXPECT_GE(all.achieved_hbm_bytes_per_s, 0.90 * bound);
    EXPECT_LE(all.achieved_hbm_bytes_per_s, bound);
    // One core alone keeps its own figure: its engines, not the chip's HBM.
    const ChipTimingReport one =
        time_cores(chip, {streams[0]}, {}, static_cast<std::uint64_t>(cores) * kCoreRegion, cores)
            .report;
    record(fmt::format("{}_one_core_streaming_gbps", name), one.achieved_hbm_bytes_per_s * 1e-9);
    EXPECT_DOUBLE_EQ(one.hbm_limited_ns, 0.0);
    EXPECT_GE(one.achieved_hbm_bytes_per_s, 0.90 * engines);
    EXPECT_LE(one.achieved_hbm_bytes_per_s, engines);
  }
}

TEST(ChipTiming, OneQueueIsLimitedByOneTransferInFlight) {
  const arch::ChipConfig& chip = trn3();
  const isa::Program program = streaming_copy(32, 1, 128, kFree, 0, kSlots);
  const ChipRun run = time_cores(chip, {program}, {}, kCoreRegion, 8);
  const TimingReport& r = run.report.cores[0];
  // Every transfer: the fixed latency, then each engine moves 8 partitions x 32 KiB with
  // one descriptor per partition; the queue starts the next transfer only then.
  const double engine_ns =
      8.0 * kFree * 2 / chip.dma.engine_bandwidth_gbps + 8.0 * chip.dma.per_descriptor_ns;
  const double transfer_ns = chip.dma.fixed_latency_ns + engine_ns;
  const double expected = static_cast<double>(kTileBytes) / (transfer_ns * 1e-9);
  record("one_queue_dma_gbps", r.achieved_dma_bytes_per_s * 1e-9);
  EXPECT_NEAR(r.achieved_dma_bytes_per_s, expected, 1e-6 * expected);
}

// ---------------------------------------------------------------------------------------
// HbmBandwidth on its own

TEST(HbmBandwidthTimeline, LaterReservationsGetWhatIsLeft) {
  HbmBandwidth hbm(100.0, 1000.0);  // 100 B/ns; demand can exceed it
  ASSERT_TRUE(hbm.can_limit());
  // 60 B/ns for 6000 B: [0, 100). Then 60 B/ns wanted from 50: 40 until 100, 60 after.
  EXPECT_DOUBLE_EQ(hbm.reserve(0, 6000, 60, 1), 100.0);
  EXPECT_DOUBLE_EQ(hbm.reserve(50, 5000, 60, 1), 100.0 + (5000 - 40 * 50) / 60.0);
  // A transfer crossing HBM twice gets half the free bandwidth in transfer bytes.
  HbmBandwidth twice(100.0, 1000.0);
  EXPECT_DOUBLE_EQ(twice.reserve(0, 1000, 80, 2), 20.0);
  // Old reservations are forgotten without changing what is reserved later.
  hbm.forget_before(120);
  EXPECT_LE(hbm.steps(), 3u);
  EXPECT_DOUBLE_EQ(hbm.reserve(200, 1000, 100, 1), 210.0);
  // When the engines can never exceed HBM, it is never the limit.
  HbmBandwidth ample(100.0, 50.0);
  EXPECT_FALSE(ample.can_limit());
  EXPECT_DOUBLE_EQ(ample.reserve(10, 500, 50, 2), 20.0);
}

// ---------------------------------------------------------------------------------------
// Barriers

TEST(RunCores, BarrierWaitShowsInSimulatedTime) {
  const arch::ChipConfig& chip = trn3();
  // Core 0: a long vector op, then the barrier. Core 1: the barrier at once, then a small op.
  const isa::TensorScalar longer = sbuf_tensor_scalar(DType::kFloat32, 128, 16384, 0, 65536);
  const isa::TensorScalar small = sbuf_tensor_scalar(DType::kFloat32, 128, 64, 0, 65536);
  isa::Program p0, p1;
  p0.instructions.push_back(make(vector_q(), longer, {}, {{0, 1}}));
  p0.instructions.push_back(barrier(7, 2, {{0, 1}}));
  p1.instructions.push_back(barrier(7, 2, {}, {{0, 1}}));
  p1.instructions.push_back(make(vector_q(), small, {{0, 1}}));
  const ChipRun run = time_cores(chip, {p0, p1}, {}, 0, 2);
  const RunResult& c0 = run.result.cores[0];
  const RunResult& c1 = run.result.cores[1];
  // Core 1 arrives at 0 and leaves when core 0 arrives, after its long op completed.
  EXPECT_DOUBLE_EQ(c1.times[0].start, 0.0);
  EXPECT_DOUBLE_EQ(c0.times[1].start, c0.times[0].end);
  EXPECT_DOUBLE_EQ(c1.times[0].end, c0.times[1].start);
  EXPECT_GE(c1.times[1].start, c0.times[0].end);
  EXPECT_GT(c0.times[0].end, 5000.0);  // 16384 fp32 elements per lane take ~6.9 us
  // The wait is stall time of core 1's sync queue, not busy time.
  const TimingReport& r1 = run.report.cores[1];
  ASSERT_EQ(r1.queues.size(), 2u);
  EXPECT_DOUBLE_EQ(r1.queues[0].stalled_ns, c0.times[1].start);
  EXPECT_DOUBLE_EQ(r1.queues[0].busy_ns, 0.0);
  record("barrier_wait_ns", c1.times[0].end - c1.times[0].start);
}

TEST(RunCores, BarrierGenerationsPairTheKthArrivals) {
  // Two rounds of the same barrier id: each core's k-th arrival forms generation k.
  const arch::ChipConfig& chip = trn3();
  isa::Program p0, p1;
  for (int k = 0; k < 2; ++k) {
    p0.instructions.push_back(barrier(1, 2));
    p1.instructions.push_back(barrier(1, 2));
  }
  Device device(chip, 2);
  const std::vector<CoreProgram> launches = {{0, &p0, nullptr}, {1, &p1, nullptr}};
  const MultiRunResult r = run_cores(device, launches);
  ASSERT_EQ(r.cores.size(), 2u);
  EXPECT_EQ(r.cores[0].instructions_executed, 2u);
  EXPECT_EQ(r.cores[1].instructions_executed, 2u);
  // Unit costs: generation 0 completes at 1, generation 1 arrives at 1 and completes at 2.
  EXPECT_DOUBLE_EQ(r.cores[1].times[1].start, 1.0);
  EXPECT_DOUBLE_EQ(r.end_time, 2.0);
}

TEST(RunCores, BarrierThatCanNeverCompleteIsADeadlockNamingTheCores) {
  const arch::ChipConfig& chip = trn3();
  isa::Program p0, p1;
  p0.instructions.push_back(barrier(3, 2));
  p1.instructions.push_back(make(sync_q(), isa::SemaphoreOp{}, {{5, 1}}));
  Device device(chip, 4);
  const std::vector<CoreProgram> launches = {{2, &p0, nullptr}, {3, &p1, nullptr}};
  const std::optional<SimError> e =
      sim_error_of([&] { run_cores(device, launches); }, "a deadlock");
  ASSERT_TRUE(e);
  const std::string what = e->what();
  EXPECT_TRUE(e->has_core());
  EXPECT_EQ(e->core(), 2);
  EXPECT_NE(what.find("deadlock"), std::string::npos) << what;
  EXPECT_NE(what.find("core 2: instruction 0 (core_barrier"), std::string::npos) << what;
  EXPECT_NE(what.find("not arrived: core 3"), std::string::npos) << what;
  EXPECT_NE(what.find("core 3: instruction 0"), std::string::npos) << what;
}

TEST(RunCores, BarrierAmongMoreCoresThanLaunchedIsAnError) {
  // The validator allows barriers among 2 cores on trn3 (its largest logical core); a
  // launch of one core cannot complete one.
  const arch::ChipConfig& chip = trn3();
  isa::Program p0, p1;
  p0.instructions.push_back(make(sync_q(), isa::SemaphoreOp{}));
  p0.instructions.push_back(barrier(0, 2));
  p1.instructions.push_back(barrier(0, 2));
  Device device(chip, 2);
  const std::vector<CoreProgram> alone = {{1, &p0, nullptr}};
  const std::optional<SimError> e = sim_error_of([&] { run_cores(device, alone); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()).rfind("error: core 1: instruction 1 (core_barrier", 0), 0u)
      << e->what();
  EXPECT_NE(e->why().find("only 1 core is launched"), std::string::npos) << e->what();
  // The same core twice is refused too.
  const std::vector<CoreProgram> twice = {{1, &p0, nullptr}, {1, &p1, nullptr}};
  EXPECT_THROW(run_cores(device, twice), SimError);
}

// n no-op instructions on the sync queue, then a barrier among 2 cores (unit costs: it
// arrives at n).
isa::Program barrier_after(int n) {
  isa::Program p;
  for (int i = 0; i < n; ++i) p.instructions.push_back(make(sync_q(), isa::SemaphoreOp{}));
  p.instructions.push_back(barrier(4, 2));
  p.instructions.push_back(make(sync_q(), isa::SemaphoreOp{}));  // starts on release
  return p;
}

TEST(RunCores, BarriersJoinOnlyTheCoresOfTheirGroup) {
  // Two groups (two ranks of a logical core of 2) run the same barrier id. Cores 0 (group 0)
  // and 2 (group 1) arrive first, at 0; core 1 at 5 and core 3 at 10. Cores 0 and 2 must not
  // pair: each waits for the other core of its own group.
  const arch::ChipConfig& chip = trn3();
  const isa::Program at0 = barrier_after(0), at5 = barrier_after(5), at10 = barrier_after(10);
  Device device(chip, 4);
  const std::vector<CoreProgram> launches = {
      {0, &at0, nullptr, 0}, {1, &at5, nullptr, 0}, {2, &at0, nullptr, 1}, {3, &at10, nullptr, 1}};
  const MultiRunResult r = run_cores(device, launches, timing_only_options());
  ASSERT_EQ(r.cores.size(), 4u);
  // Unit costs: a generation completes one unit after its last arrival.
  EXPECT_DOUBLE_EQ(r.cores[0].times[1].start, 6.0);
  EXPECT_DOUBLE_EQ(r.cores[1].times[6].start, 6.0);
  EXPECT_DOUBLE_EQ(r.cores[2].times[1].start, 11.0);
  EXPECT_DOUBLE_EQ(r.cores[3].times[11].start, 11.0);

  // A group of one cannot complete a barrier of two, even with other cores launched.
  const std::vector<CoreProgram> split = {{0, &at0, nullptr, 0}, {1, &at0, nullptr, 1}};
  const std::optional<SimError> e =
      sim_error_of([&] { run_cores(device, split, timing_only_options()); });
  ASSERT_TRUE(e);
  EXPECT_NE(e->why().find("only 1 core is launched in its group"), std::string::npos) << e->what();
}

TEST(RunCores, ErrorsInsideSemanticsNameTheCore) {
  const arch::ChipConfig& chip = trn3();
  isa::Program ok, bad;
  ok.instructions.push_back(make(sync_q(), isa::SemaphoreOp{}));
  isa::DmaCopy copy =
      dma_load(DType::kFloat32, 0x100000, 1, 4, 0);  // reads HBM that is not allocated
  bad.instructions.push_back(make(dma_q(0), copy));
  Device device(chip, 8);
  const std::vector<CoreProgram> launches = {{0, &ok, nullptr}, {5, &bad, nullptr}};
  const std::optional<SimError> e = sim_error_of([&] { run_cores(device, launches); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->core(), 5);
  EXPECT_EQ(std::string(e->what()).rfind("error: core 5: instruction 0 (dma_copy", 0), 0u)
      << e->what();
}

// ---------------------------------------------------------------------------------------
// Data and hazards across cores

// Core 0 loads 16 floats from HBM, doubles them and stores them to `out`; core 1 then
// copies `out` to `copy`. With `ordered`, a barrier orders core 1's read after core 0's store.
struct Handoff {
  isa::Program p0, p1;
};
Handoff handoff(bool ordered) {
  Handoff h;
  isa::DmaCopy load = dma_load(DType::kFloat32, 0, 1, 16, 0);
  isa::TensorScalar twice;
  twice.data = load.dst;
  twice.dst = sbuf(DType::kFloat32, 0, 1, 64, {{1, 16}});
  twice.op0 = isa::AluOp::kMultiply;
  twice.operand0 = 2.0f;
  isa::DmaCopy store;
  store.src = twice.dst;
  store.dst = hbm(DType::kFloat32, 64, 1, 16, {{1, 16}});
  h.p0.instructions.push_back(make(dma_q(0), load, {}, {{0, 1}}));
  h.p0.instructions.push_back(make(vector_q(), twice, {{0, 1}}, {{1, 1}}));
  h.p0.instructions.push_back(make(dma_q(0), store, {{1, 1}}, {{2, 1}}));
  if (ordered) h.p0.instructions.push_back(barrier(0, 2, {{2, 1}}));

  isa::DmaCopy read;
  read.src = store.dst;
  read.dst = sbuf(DType::kFloat32, 0, 1, 0, {{1, 16}});
  isa::DmaCopy write;
  write.src = read.dst;
  write.dst = hbm(DType::kFloat32, 128, 1, 16, {{1, 16}});
  std::vector<isa::SemWait> after_barrier;
  if (ordered) {
    h.p1.instructions.push_back(barrier(0, 2, {}, {{0, 1}}));
    after_barrier.push_back({0, 1});
  }
  h.p1.instructions.push_back(make(dma_q(0), read, after_barrier, {{1, 1}}));
  h.p1.instructions.push_back(make(dma_q(0), write, {{1, 1}}));
  return h;
}

TEST(RunCores, BarrierHandsDataFromOneCoreToAnotherWithoutHazards) {
  Device device(trn3(), 2);
  device.allocate_at(0, 192);
  std::vector<float> input(16);
  for (int i = 0; i < 16; ++i) input[static_cast<std::size_t>(i)] = static_cast<float>(i) - 4.5f;
  device.write(0, to_bytes(input));
  const Handoff h = handoff(true);
  const std::vector<CoreProgram> launches = {{0, &h.p0, nullptr}, {1, &h.p1, nullptr}};
  const MultiRunResult r = run_cores(device, launches);
  EXPECT_TRUE(r.cores[0].hazards.empty());
  EXPECT_TRUE(r.cores[1].hazards.empty());
  const std::vector<float> copied = from_bytes<float>(device.read(128, 64));
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(copied[static_cast<std::size_t>(i)], 2.0f * input[static_cast<std::size_t>(i)]);
}

TEST(RunCores, UnorderedHbmAccessesOfTwoCoresAreAHazard) {
  Device device(trn3(), 2);
  device.allocate_at(0, 192);
  device.write(0, std::vector<std::uint8_t>(192, 0));
  const Handoff h = handoff(false);
  const std::vector<CoreProgram> launches = {{0, &h.p0, nullptr}, {1, &h.p1, nullptr}};
  RunOptions options;
  options.functional = false;
  const MultiRunResult r = run_cores(device, launches, options);
  std::vector<Hazard> all = r.cores[0].hazards;
  all.insert(all.end(), r.cores[1].hazards.begin(), r.cores[1].hazards.end());
  ASSERT_FALSE(all.empty());
  bool cross = false;
  for (const Hazard& hz : all) {
    if (hz.first_core == hz.second_core) continue;
    cross = true;
    EXPECT_EQ(hz.memory, Memory::kHbm);
    EXPECT_NE(hz.message.find("core 0: instruction 2"), std::string::npos) << hz.message;
    EXPECT_NE(hz.message.find("core 1: instruction 0"), std::string::npos) << hz.message;
  }
  EXPECT_TRUE(cross);
}

TEST(RunCores, SameSbufAddressesOnTwoCoresDoNotConflict) {
  // SBUF is per core: identical on-chip addresses on two cores are no race.
  const Handoff h = handoff(false);
  isa::Program p = h.p0;
  p.instructions.pop_back();  // no store to HBM: only the load and SBUF work
  p.instructions.pop_back();
  Device device(trn3(), 2);
  device.allocate_at(0, 192);
  device.write(0, std::vector<std::uint8_t>(192, 0));
  const std::vector<CoreProgram> launches = {{0, &p, nullptr}, {1, &p, nullptr}};
  const MultiRunResult r = run_cores(device, launches);
  EXPECT_TRUE(r.cores[0].hazards.empty());
  EXPECT_TRUE(r.cores[1].hazards.empty());
}

TEST(RunCores, RunsAreDeterministicAndRunIsTheSingleLaunchCase) {
  const arch::ChipConfig& chip = trn3();
  std::vector<isa::Program> programs;
  for (int c = 0; c < 4; ++c)
    programs.push_back(
        streaming_copy(16, 4, 128, 1024, static_cast<std::uint64_t>(c) * (1 << 20), 2));
  const ChipRun a = time_cores(chip, programs, {}, 4 << 20);
  const ChipRun b = time_cores(chip, programs, {}, 4 << 20);
  for (std::size_t c = 0; c < programs.size(); ++c)
    for (std::size_t i = 0; i < programs[c].instructions.size(); ++i) {
      EXPECT_EQ(a.result.cores[c].times[i].start, b.result.cores[c].times[i].start);
      EXPECT_EQ(a.result.cores[c].times[i].end, b.result.cores[c].times[i].end);
    }
  // A single-core run_cores equals run with a standalone TimingModel.
  Device device(chip, 1);
  device.allocate_at(0, 4 << 20);
  TimingModel model(chip);
  RunOptions options;
  options.functional = false;
  options.cost_model = &model;
  const RunResult single = run(device, programs[0], options);
  const ChipRun one = time_cores(chip, {programs[0]}, {}, 4 << 20);
  ASSERT_EQ(single.times.size(), one.result.cores[0].times.size());
  for (std::size_t i = 0; i < single.times.size(); ++i)
    EXPECT_EQ(single.times[i].end, one.result.cores[0].times[i].end);
}

TEST(ChipTiming, ReportAndJson) {
  const arch::ChipConfig& chip = trn3();
  const std::vector<isa::Program> programs(2, matmul_stream(8, DType::kBFloat16));
  const ChipRun run = time_cores(chip, programs, ramp(false));
  const nlohmann::json j = nlohmann::json::parse(chip_timing_report_json(run.report));
  EXPECT_EQ(j["chip"], "trn3");
  ASSERT_EQ(j["cores"].size(), 2u);
  EXPECT_EQ(j["cores"][1]["core"], 1);
  EXPECT_TRUE(j["cores"][0].contains("queues"));
  EXPECT_DOUBLE_EQ(j["tensor"]["achieved_flops_per_s"].get<double>(),
                   run.report.achieved_flops_per_s);
  EXPECT_DOUBLE_EQ(j["hbm"]["chip_bytes_per_s"].get<double>(), 4900e9);
  const std::string text = format_chip_timing_report(run.report);
  EXPECT_NE(text.find("chip timing (trn3, 2 cores)"), std::string::npos) << text;
  EXPECT_NE(text.find("core 1: timing"), std::string::npos) << text;
  // A launch timed by another model is refused.
  ChipTimingModel other(chip, 2);
  std::vector<CoreProgram> launches = {{0, &programs[0], nullptr}, {1, &programs[1], nullptr}};
  EXPECT_THROW(other.chip_report(launches, run.result), std::invalid_argument);
  EXPECT_THROW(ChipTimingModel(chip, 9), std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::sim
