// Calibration of the timing model on simulated time: instruction streams run through the
// event loop with sim::TimingModel and must reach the published peaks of each chip.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/asm_runner.h"
#include "sim/tests/test_util.h"
#include "sim/tests/timing_test_util.h"
#include "sim/timing_model.h"

namespace trnsim::sim {
namespace {

using namespace trnsim::sim::testing;
using isa::Engine;
using isa::Memory;

struct Timed {
  RunResult result;
  TimingReport report;
};

// Runs `program` in timing-only mode on a fresh device of `chip`.
Timed time_program(const arch::ChipConfig& chip, const isa::Program& program,
                   TimingOptions timing = {}, std::uint64_t hbm_bytes = 0) {
  Device device(chip);
  if (hbm_bytes > 0) device.allocate_at(0, hbm_bytes);
  TimingModel model(chip, timing);
  const RunOptions options = timing_only_options(&model);
  Timed t;
  t.result = run(device, program, options);
  t.report = model.report(program, t.result);
  return t;
}

double tflops(const TimingReport& r) {
  return r.achieved_flops_per_s * 1e-12;
}

TEST(TimingCalibration, Trn3FullTileMatmulStreamsReachThePublishedPeaks) {
  const Timed bf16 = time_program(trn3(), matmul_stream(128, DType::kBFloat16), ramp(false));
  const Timed fp32 = time_program(trn3(), matmul_stream(128, DType::kFloat32), ramp(false));
  const Timed mx = time_program(trn3(), matmul_mx_stream(128), ramp(false));
  record("bf16_tflops", tflops(bf16.report));
  record("fp32_tflops", tflops(fp32.report));
  record("mx_tflops", tflops(mx.report));
  EXPECT_NEAR(tflops(bf16.report), 79.0, 79.0 * kCalibrationTolerance);
  EXPECT_NEAR(tflops(fp32.report), 20.0, 20.0 * kCalibrationTolerance);
  EXPECT_NEAR(tflops(mx.report), 315.0, 315.0 * kCalibrationTolerance);
  EXPECT_EQ(bf16.report.tensor_mode, "bf16");
  EXPECT_EQ(fp32.report.tensor_mode, "fp32");
  EXPECT_EQ(mx.report.tensor_mode, "mx");
  EXPECT_GT(bf16.report.achieved_flops_per_s, 0.97 * bf16.report.tensor_peak_flops_per_s);
  EXPECT_LE(bf16.report.achieved_flops_per_s, bf16.report.tensor_peak_flops_per_s);
  // The tensor queue is the bottleneck: busy all the time but the final drain.
  ASSERT_EQ(bf16.report.queues.size(), 1u);
  EXPECT_GT(bf16.report.queues[0].busy_ns, 0.99 * bf16.report.total_ns);
  EXPECT_DOUBLE_EQ(bf16.report.queues[0].stalled_ns, 0.0);
}

TEST(TimingCalibration, OtherPresetsReachTheirOwnPeaks) {
  for (const char* name : {"trn2", "trn1"}) {
    SCOPED_TRACE(name);
    const arch::ChipConfig chip = arch::load_preset(name);
    const Timed bf16 = time_program(chip, matmul_stream(128, DType::kBFloat16), ramp(false));
    const Timed fp32 = time_program(chip, matmul_stream(128, DType::kFloat32), ramp(false));
    const double bf16_peak = chip.tensor.published_peak_tflops.at("bf16").value;
    const double fp32_peak = chip.tensor.published_peak_tflops.at("fp32").value;
    record(std::string(name) + "_bf16_tflops", tflops(bf16.report));
    record(std::string(name) + "_fp32_tflops", tflops(fp32.report));
    EXPECT_NEAR(tflops(bf16.report), bf16_peak, bf16_peak * kCalibrationTolerance);
    EXPECT_NEAR(tflops(fp32.report), fp32_peak, fp32_peak * kCalibrationTolerance);
  }
  // trn1 (92 BF16 TFLOPS at 2.8 GHz) differs from trn3 (79 at 2.4 GHz).
  EXPECT_GT(
      tflops(time_program(arch::load_preset("trn1"), matmul_stream(64, DType::kBFloat16)).report),
      88.0);
}

TEST(TimingCalibration, SmallMovingFreeSizeDegradesPerTheInitiationInterval) {
  // max(min(64, M), N) cycles: N=64 still streams at full rate, N=32 takes as long as N=64
  // for half the work, and a 32-column stationary with N=32 is bound by N at a quarter.
  const double n64 = tflops(
      time_program(trn3(), matmul_stream(256, DType::kBFloat16, 128, 64), ramp(false)).report);
  const double n32 = tflops(
      time_program(trn3(), matmul_stream(256, DType::kBFloat16, 128, 32), ramp(false)).report);
  const double m32 = tflops(
      time_program(trn3(), matmul_stream(256, DType::kBFloat16, 32, 32), ramp(false)).report);
  record("n64_tflops", n64);
  record("n32_tflops", n32);
  record("m32_n32_tflops", m32);
  EXPECT_NEAR(n64, 79.0, 79.0 * kCalibrationTolerance);
  EXPECT_NEAR(n32, n64 / 2, n64 / 2 * kCalibrationTolerance);
  EXPECT_NEAR(m32, n64 / 4, n64 / 4 * kCalibrationTolerance);
}

TEST(TimingPowerRamp, ShortStreamsAreThrottledLongStreamsConverge) {
  const arch::ChipConfig& chip = trn3();
  ASSERT_TRUE(chip.tensor.power_ramp);
  // Four 128x128x512 matmuls: 0.85 us of work, all inside the 3 us ramp.
  const Timed short_off = time_program(chip, matmul_stream(4, DType::kBFloat16), ramp(false));
  const Timed short_on = time_program(chip, matmul_stream(4, DType::kBFloat16), ramp(true));
  record("short_stream_ramp_on_ns", short_on.report.total_ns);
  record("short_stream_ramp_off_ns", short_off.report.total_ns);
  EXPECT_GT(short_on.report.total_ns, 1.4 * short_off.report.total_ns);
  EXPECT_LT(short_on.report.total_ns, 2.0 * short_off.report.total_ns);  // the limit is >= 50%

  // Continuous work loses exactly the area above the linear ramp: ramp_us * (1 - start) / 2.
  const double lost_ns =
      chip.tensor.power_ramp_us * 1e3 * (1.0 - chip.tensor.power_ramp_start_fraction) / 2.0;
  const Timed long_on = time_program(chip, matmul_stream(2048, DType::kBFloat16));
  const Timed long_off = time_program(chip, matmul_stream(2048, DType::kBFloat16), ramp(false));
  record("long_stream_ramp_on_tflops", tflops(long_on.report));
  record("long_stream_ramp_off_tflops", tflops(long_off.report));
  EXPECT_TRUE(long_on.report.power_ramp);  // the preset's default
  EXPECT_NEAR(long_on.report.throttled_ns, lost_ns, 1e-6 * lost_ns);
  EXPECT_NEAR(long_on.report.total_ns - long_off.report.total_ns, lost_ns, 1e-6 * lost_ns);
  EXPECT_GT(long_on.report.achieved_flops_per_s, 0.99 * long_off.report.achieved_flops_per_s);
  EXPECT_DOUBLE_EQ(long_off.report.throttled_ns, 0.0);
}

TEST(TimingPowerRamp, ReengagesAfterAnIdleGapLongerThanTheWindow) {
  const arch::ChipConfig& chip = trn3();
  // Burst 1 (16 matmuls, 3.4 us), then a vector op of ~6.8 us the second burst waits for.
  auto two_bursts = [](bool gap) {
    isa::Program program = matmul_stream(16, DType::kBFloat16);
    const isa::TensorScalar ts =
        sbuf_tensor_scalar(DType::kBFloat16, 128, gap ? 32768u : 64u, 65536, 65536);
    // The vector op starts after burst 1 signals, so the gap is its full latency.
    program.instructions.back().signals.push_back({1, 1});
    program.instructions.push_back(make(vector_q(), ts, {{1, 1}}, {{2, 1}}));
    isa::Program burst2 = matmul_stream(16, DType::kBFloat16);
    burst2.instructions.front().waits.push_back({2, 1});
    for (auto& inst : burst2.instructions) program.instructions.push_back(inst);
    return program;
  };
  const Timed one = time_program(chip, matmul_stream(16, DType::kBFloat16));
  const Timed gap = time_program(chip, two_bursts(true));
  const Timed no_gap = time_program(chip, two_bursts(false));
  const double window_ns = chip.tensor.power_ramp_window_us * 1e3;
  // Check the scenario: the long vector op leaves the tensor engine idle beyond the window.
  ASSERT_GT(gap.result.times[17].start - gap.result.times[15].occupied_until, window_ns);
  ASSERT_LT(no_gap.result.times[17].start - no_gap.result.times[15].occupied_until, window_ns);
  EXPECT_NEAR(gap.report.throttled_ns, 2.0 * one.report.throttled_ns,
              1e-6 * one.report.throttled_ns);
  EXPECT_LT(no_gap.report.throttled_ns, 1.5 * one.report.throttled_ns);
}

// One core running alone has the chip's HBM to itself (sim::HbmBandwidth): it is limited by
// its 16 DMA engines (16 x 38.4 GB/s = 614.4 GB/s), no longer by a static 1/8 share of HBM
// (612.5 GB/s), which applies only when all 8 cores stream (multicore_test.cpp).
TEST(TimingDma, ManyQueuesStreamNearTheCoresDmaEnginePeak) {
  const arch::ChipConfig& chip = trn3();
  constexpr std::uint32_t kFree = 8192;  // 16 KiB per partition: saturating transfers
  constexpr std::uint64_t kSlots = 4;
  const std::uint64_t tile_bytes = 128ull * kFree * 2;
  const Timed t =
      time_program(chip, streaming_copy(64, 8, 128, kFree, 0, kSlots), {}, 2 * kSlots * tile_bytes);
  const TimingReport& r = t.report;
  EXPECT_EQ(r.dma_bytes, 2 * 64 * tile_bytes);
  EXPECT_EQ(r.hbm_bytes, r.dma_bytes);
  const double share = chip.hbm.bandwidth_gbps * 1e9 / chip.cores_per_chip;
  EXPECT_DOUBLE_EQ(r.hbm_core_share_bytes_per_s, share);
  record("many_queues_hbm_gbps", r.achieved_hbm_bytes_per_s * 1e-9);
  record("many_queues_fraction_of_share", r.achieved_hbm_bytes_per_s / share);
  const double engines = chip.dma.engines_per_core * chip.dma.engine_bandwidth_gbps * 1e9;
  EXPECT_DOUBLE_EQ(r.dma_peak_bytes_per_s, engines);
  EXPECT_GE(r.achieved_hbm_bytes_per_s, 0.90 * engines);
  EXPECT_LE(r.achieved_hbm_bytes_per_s, engines);
  EXPECT_DOUBLE_EQ(r.hbm_limited_ns, 0.0);
  for (const DmaEngineTiming& e : r.dma_engines) EXPECT_GT(e.busy_ns, 0.9 * r.total_ns);
}

TEST(TimingDma, OneQueueIsLimitedByTheEnginesItsTransfersUse) {
  const arch::ChipConfig& chip = trn3();
  const double share = chip.hbm.bandwidth_gbps * 1e9 / chip.cores_per_chip;
  // 16-partition tiles use 2 of the 16 engines: at most 1/8 of the core's bandwidth.
  constexpr std::uint32_t kFree = 8192;
  const std::uint64_t tile_bytes = 16ull * kFree * 2;
  const Timed narrow =
      time_program(chip, streaming_copy(32, 1, 16, kFree, 0, 4), {}, 8 * tile_bytes);
  record("one_queue_16_partitions_hbm_gbps", narrow.report.achieved_hbm_bytes_per_s * 1e-9);
  EXPECT_LE(narrow.report.achieved_hbm_bytes_per_s, share / 8);
  EXPECT_GT(narrow.report.achieved_hbm_bytes_per_s, 0.5 * share / 8);
  int engines_used = 0;
  for (const DmaEngineTiming& e : narrow.report.dma_engines) engines_used += e.bytes > 0;
  EXPECT_EQ(engines_used, 2);

  // Full-width tiles on one queue use every engine, but each transfer's fixed latency is
  // exposed; spread over queues the same tiles overlap it.
  const std::uint64_t wide_bytes = 128ull * kFree * 2;
  const Timed one = time_program(chip, streaming_copy(32, 1, 128, kFree, 0, 4), {}, 8 * wide_bytes);
  const Timed many =
      time_program(chip, streaming_copy(32, 8, 128, kFree, 0, 4), {}, 8 * wide_bytes);
  record("one_queue_128_partitions_hbm_gbps", one.report.achieved_hbm_bytes_per_s * 1e-9);
  record("eight_pairs_128_partitions_hbm_gbps", many.report.achieved_hbm_bytes_per_s * 1e-9);
  EXPECT_LT(one.report.achieved_hbm_bytes_per_s, 0.85 * many.report.achieved_hbm_bytes_per_s);
  EXPECT_GT(one.report.achieved_hbm_bytes_per_s, 0.5 * share);
}

// Forwards to a TimingModel and records the order and time of its cost calls.
class RecordingCostModel final : public CostModel {
 public:
  explicit RecordingCostModel(TimingModel& inner) : inner_(inner) {}
  InstructionCost cost(const isa::Instruction& inst, std::size_t index, Duration start) override {
    calls.emplace_back(index, start);
    return inner_.cost(inst, index, start);
  }
  void begin_program(std::size_t n) override { inner_.begin_program(n); }
  void prepare(const isa::Instruction& inst, std::size_t index) override {
    inner_.prepare(inst, index);
  }
  void end_program() override { inner_.end_program(); }
  std::vector<std::pair<std::size_t, Duration>> calls;

 private:
  TimingModel& inner_;
};

// The DMA engine schedule, replayed one share at a time in the order the model was asked:
// each share of a transfer begins when its descriptors are ready and its engine (8 on-chip
// partitions per engine, from the on-chip side's first partition) is free. The model keeps
// all engines as one while every transfer uses all of them; mixing transfers that use all,
// some, and unevenly split engines must give the same times, per-engine busy time and
// bytes as this plain per-engine schedule.
TEST(TimingDma, EngineScheduleMatchesAPlainPerEngineReplay) {
  const arch::ChipConfig& chip = trn3();
  const auto engines = static_cast<std::uint32_t>(chip.dma.engines_per_core.value);
  struct Shape {
    std::uint32_t first_partition, partitions, free;
  };
  // Full width (all engines, even); 16 partitions (2 engines); 36 partitions from 64
  // (5 engines, an uneven split); a small full-width transfer.
  const std::vector<Shape> shapes = {{0, 128, 512}, {32, 16, 2048}, {64, 36, 777}, {0, 128, 3}};
  isa::Program program;
  for (int round = 0; round < 6; ++round) {
    for (std::size_t q = 0; q < shapes.size(); ++q) {
      // Rounds 2 and 3 use full-width transfers only, so that all engines line up again.
      const Shape& s = (round == 2 || round == 3) ? shapes[0] : shapes[(q + round) % shapes.size()];
      isa::DmaCopy copy;
      copy.src = hbm(DType::kBFloat16, 0, s.partitions, s.free, {{1, s.free}});
      copy.dst = sbuf(DType::kBFloat16, s.first_partition, s.partitions, 0, {{1, s.free}});
      if (round % 2 == 1) std::swap(copy.src, copy.dst);
      program.instructions.push_back(make(dma_q(static_cast<std::uint8_t>(q)), copy));
    }
  }
  Device device(chip);
  device.allocate_at(0, 128ull * 2048 * 2);
  TimingModel model(chip);
  RecordingCostModel recorder(model);
  const RunResult result = run(device, program, timing_only_options(&recorder));
  const TimingReport report = model.report(program, result);
  ASSERT_EQ(recorder.calls.size(), program.instructions.size());

  const timing::CostModel formulas(chip);
  std::vector<Duration> free_at(engines, 0.0), busy(engines, 0.0);
  std::vector<std::uint64_t> bytes(engines, 0);
  int waited = 0;  // shares that began after their descriptors were ready
  for (const auto& [index, start] : recorder.calls) {
    const isa::Instruction& inst = program.instructions[index];
    const auto& copy = std::get<isa::DmaCopy>(inst.op);
    const isa::AccessPattern& onchip = copy.dst.memory == Memory::kSbuf ? copy.dst : copy.src;
    const std::uint32_t first = onchip.start_partition / 8 % engines;
    const timing::DmaPlan plan = formulas.plan_dma(inst);
    const Duration ready = start + plan.fixed_latency_ns;
    Duration done = ready;
    for (const timing::DmaEngineWork& w : plan.engines) {
      if (w.bytes == 0) continue;
      const std::uint32_t e = (first + w.engine) % engines;
      const Duration begin = std::max(ready, free_at[e]);
      waited += begin > ready;
      const Duration time = plan.engine_time_ns(w);
      free_at[e] = begin + time;
      busy[e] += time;
      bytes[e] += w.bytes;
      done = std::max(done, begin + time);
    }
    SCOPED_TRACE(fmt::format("instruction {}", index));
    EXPECT_DOUBLE_EQ(result.times[index].start, start);
    EXPECT_DOUBLE_EQ(result.times[index].end, done);
  }
  EXPECT_GT(waited, 0);
  ASSERT_EQ(report.dma_engines.size(), engines);
  for (std::uint32_t e = 0; e < engines; ++e) {
    SCOPED_TRACE(fmt::format("engine {}", e));
    EXPECT_NEAR(report.dma_engines[e].busy_ns, busy[e], 1e-9 * busy[e]);
    EXPECT_EQ(report.dma_engines[e].bytes, bytes[e]);
  }
  // The shapes did load the engines unevenly.
  EXPECT_NE(bytes[0], bytes[5]);
}

TEST(TimingDma, TinyTransferCostsTheFixedLatency) {
  const arch::ChipConfig& chip = trn3();
  isa::DmaCopy copy = dma_load(DType::kFloat32, 0, 1, 1, 0);
  isa::Program program;
  program.instructions.push_back(make(dma_q(0), copy));
  const Timed t = time_program(chip, program, {}, 64);
  record("tiny_dma_ns", t.report.total_ns);
  EXPECT_GE(t.report.total_ns, chip.dma.fixed_latency_ns.value);
  EXPECT_LT(t.report.total_ns, 1.05 * chip.dma.fixed_latency_ns);
}

TEST(TimingStatistics, StallsOnSemaphoresAreSeparatedFromBusyAndIdleTime) {
  const arch::ChipConfig& chip = trn3();
  isa::DmaCopy copy = dma_load(DType::kBFloat16, 0, 128, 512, 0);
  const isa::TensorScalar ts = sbuf_tensor_scalar(DType::kBFloat16, 128, 512, 0, 4096);
  isa::Program program;
  program.instructions.push_back(make(dma_q(0), copy, {}, {{3, 1}}));
  program.instructions.push_back(make(vector_q(), ts, {{3, 1}}));
  const Timed t = time_program(chip, program, {}, 128 * 512 * 2);
  const TimingReport& r = t.report;
  ASSERT_EQ(r.queues.size(), 2u);
  const QueueTiming& dma = r.queues[0];
  const QueueTiming& vector = r.queues[1];
  EXPECT_DOUBLE_EQ(vector.stalled_ns, t.result.times[0].end);
  EXPECT_DOUBLE_EQ(vector.busy_ns, t.result.times[1].occupied_until - t.result.times[1].start);
  EXPECT_DOUBLE_EQ(dma.stalled_ns, 0.0);
  for (const QueueTiming& q : r.queues)
    EXPECT_NEAR(q.busy_ns + q.stalled_ns + q.idle_ns, r.total_ns, 1e-9);
  EXPECT_GT(dma.idle_ns, 0.0);  // while the vector op finishes
}

// Elementwise streams at the engines' datapath width times their clock.
double elements_per_second(const arch::ChipConfig& chip, Engine engine, DType dtype) {
  constexpr std::uint32_t kFree = 4096;
  isa::Program program;
  const std::uint64_t bytes = numerics::storage_bytes(dtype) * kFree;
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t parity = static_cast<std::uint64_t>(i % 2);
    isa::Instruction inst;
    if (engine == Engine::kScalar) {
      isa::Activation act;
      act.data = sbuf(dtype, 0, 128, parity * bytes, {{1, kFree}});
      act.dst = sbuf(dtype, 0, 128, (2 + parity) * bytes, {{1, kFree}});
      inst = make(scalar_q(), act);
    } else {
      const isa::TensorScalar ts =
          sbuf_tensor_scalar(dtype, 128, kFree, parity * bytes, (2 + parity) * bytes);
      inst = make(vector_q(), ts);
    }
    program.instructions.push_back(inst);
  }
  const Timed t = time_program(chip, program);
  return 64.0 * 128 * kFree / (t.report.total_ns * 1e-9);
}

TEST(TimingCalibration, ElementwiseOpsStreamAtLaneWidthTimesClock) {
  for (const char* name : {"trn3", "trn2"}) {
    SCOPED_TRACE(name);
    const arch::ChipConfig chip = arch::load_preset(name);
    const double v16 = chip.vector.elems_per_cycle_16bit * chip.vector.clock_ghz * 1e9;
    const double v32 = chip.vector.elems_per_cycle_other * chip.vector.clock_ghz * 1e9;
    const double s16 = chip.scalar.elems_per_cycle_16bit * chip.scalar.clock_ghz * 1e9;
    const double vector16 = elements_per_second(chip, Engine::kVector, DType::kBFloat16);
    const double vector32 = elements_per_second(chip, Engine::kVector, DType::kFloat32);
    const double scalar16 = elements_per_second(chip, Engine::kScalar, DType::kBFloat16);
    record(std::string(name) + "_vector_bf16_gelem_per_s", vector16 * 1e-9);
    record(std::string(name) + "_vector_fp32_gelem_per_s", vector32 * 1e-9);
    record(std::string(name) + "_scalar_bf16_gelem_per_s", scalar16 * 1e-9);
    EXPECT_NEAR(vector16, v16, v16 * kCalibrationTolerance);
    EXPECT_NEAR(vector32, v32, v32 * kCalibrationTolerance);
    EXPECT_NEAR(scalar16, s16, s16 * kCalibrationTolerance);
  }
  // trn3 vector bf16: 512 elements x 1.2 GHz.
  EXPECT_NEAR(elements_per_second(trn3(), Engine::kVector, DType::kBFloat16), 614.4e9,
              0.03 * 614.4e9);
}

TEST(TimingCalibration, TinyInstructionIsDominatedByFixedOverhead) {
  const arch::ChipConfig& chip = trn3();
  isa::Activation act;
  act.data = sbuf(DType::kFloat32, 0, 1, 0, {{1, 1}});
  act.dst = sbuf(DType::kFloat32, 0, 1, 64, {{1, 1}});
  isa::Program program;
  program.instructions.push_back(make(scalar_q(), act));
  const Timed t = time_program(chip, program);
  // MIN_II, the static instruction overhead and one fixed access cost per SBUF operand (a
  // read and a write): ARCH-v2's ~100 and ~60 cycles.
  const double overhead_ns =
      (chip.scalar.min_initiation_interval + chip.scalar.fixed_overhead_cycles +
       2 * chip.scalar.access_overhead_cycles) /
      chip.scalar.clock_ghz;
  const double one_element_ns =
      1.0 / (chip.scalar.elems_per_cycle_other / chip.scalar.lanes) / chip.scalar.clock_ghz;
  record("tiny_activation_ns", t.report.total_ns);
  EXPECT_NEAR(t.report.total_ns, overhead_ns, 1e-9);
  EXPECT_GT(t.report.total_ns, 100 * one_element_ns);
}

TEST(TimingModelRun, FunctionalAndTimedRunsAgreeOnTimes) {
  // The timing model does not depend on the data: a functional run gives the same times.
  const arch::ChipConfig& chip = trn3();
  isa::Program program = matmul_stream(8, DType::kBFloat16);
  Device device(chip);
  for (std::uint32_t p = 0; p < 128; ++p) {
    std::vector<std::uint8_t> zeros(8192, 0);
    device.core(0).write_onchip(Memory::kSbuf, p, 0, zeros);
  }
  TimingModel model(chip);
  RunOptions options;
  options.cost_model = &model;
  const RunResult functional = run(device, program, options);
  const Timed timed = time_program(chip, program);
  ASSERT_EQ(functional.times.size(), timed.result.times.size());
  for (std::size_t i = 0; i < functional.times.size(); ++i) {
    EXPECT_DOUBLE_EQ(functional.times[i].start, timed.result.times[i].start);
    EXPECT_DOUBLE_EQ(functional.times[i].end, timed.result.times[i].end);
  }
  const std::string json = timing_report_json(model.report(program, functional));
  EXPECT_NE(json.find("\"achieved_flops_per_s\""), std::string::npos);
  EXPECT_NE(format_timing_report(timed.report).find("TFLOP/s"), std::string::npos);
}

TEST(TimingModelRun, AsmRunnerTimesTheShippedMatmulExample) {
  const char* root = std::getenv("TRNSIM_SOURCE_DIR");
  AsmRunRequest request;
  request.asm_path = std::string(root != nullptr ? root : TRNSIM_SOURCE_DIR_DEFAULT) +
                     "/examples/asm/matmul_256_bf16.s";
  request.inits.push_back({"a_t", TensorInit::Kind::kRandom, "", {}, 1});
  request.inits.push_back({"b", TensorInit::Kind::kRandom, "", {}, 2});
  request.timed = true;
  const AsmRunOutcome outcome = run_asm(request);
  ASSERT_TRUE(outcome.timing.has_value());
  const TimingReport& r = *outcome.timing;
  EXPECT_DOUBLE_EQ(r.total_ns, outcome.result.end_time);
  // C[256, 256] = A @ B: 2 x 256^3 FLOPs; four [128, 256] bf16 loads and two fp32 stores.
  EXPECT_DOUBLE_EQ(r.flops, 2.0 * 256 * 256 * 256);
  EXPECT_EQ(r.dma_bytes, 4u * 128 * 256 * 2 + 2u * 128 * 256 * 4);
  // A chain of load -> matmul -> evict -> store is latency-bound: far from the peaks.
  EXPECT_LT(r.achieved_flops_per_s, 0.2 * r.tensor_peak_flops_per_s);
  EXPECT_GT(r.total_ns, 2 * trn3().dma.fixed_latency_ns);

  const nlohmann::json j = nlohmann::json::parse(timing_report_json(r));
  EXPECT_EQ(j.at("chip"), "trn3");
  EXPECT_DOUBLE_EQ(j.at("total_ns").get<double>(), r.total_ns);
  EXPECT_EQ(j.at("queues").size(), r.queues.size());
  EXPECT_EQ(j.at("dma_engines").size(), 16u);
  EXPECT_EQ(j.at("tensor").at("mode"), "bf16");
  EXPECT_EQ(j.at("dma").at("bytes").get<std::uint64_t>(), r.dma_bytes);
}

}  // namespace
}  // namespace trnsim::sim
