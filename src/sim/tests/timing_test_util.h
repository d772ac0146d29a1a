// What the timing calibration tests (timing_test.cpp, multicore_test.cpp) share: the tensor
// engine and DMA streams they time, the tolerance on published peaks and the measured figures they
// record for the docs.
#pragma once

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/tests/test_util.h"
#include "sim/timing_model.h"

namespace trnsim::sim::testing {

// How close a calibrated stream must come to the published figure.
inline constexpr double kCalibrationTolerance = 0.03;

// The measured figure in the test's XML/JSON output (--gtest_output), for the docs.
inline void record(const std::string& key, double value) {
  ::testing::Test::RecordProperty(key, fmt::format("{:.4g}", value));
}

inline TimingOptions ramp(bool on) {
  TimingOptions o;
  o.power_ramp = on;
  return o;
}

// `count` full-width [K=128, M] x [K, N] matmuls alternating between two stationary tiles
// (the next one's LoadStationary hides behind the current MultiplyMoving) into two banks.
inline isa::Program matmul_stream(int count, DType dtype, std::uint32_t m = 128,
                                  std::uint32_t n = 512) {
  isa::Program program;
  const std::uint64_t bytes = numerics::storage_bytes(dtype);
  for (int i = 0; i < count; ++i) {
    isa::NcMatmul mm;
    mm.stationary = sbuf(dtype, 0, 128, (i % 2) * m * bytes, {{1, m}});
    mm.moving = sbuf(dtype, 0, 128, 4096 + n * bytes * (i % 2), {{1, n}});
    mm.dst = psum(DType::kFloat32, 0, m, (i % 2) * 2048, {{1, n}});
    program.instructions.push_back(make(tensor_q(), mm));
  }
  return program;
}

// The same with 128x128x512 MXFP8 matmuls (scales beside the data).
inline isa::Program matmul_mx_stream(int count) {
  isa::Program program;
  for (int i = 0; i < count; ++i) {
    const std::uint64_t parity = static_cast<std::uint64_t>(i % 2);
    isa::NcMatmulMx mm;
    mm.stationary = sbuf(DType::kFloat8E4M3x4, 0, 128, parity * 512, {{1, 128}});
    mm.moving = sbuf(DType::kFloat8E4M3x4, 0, 128, 4096 + parity * 2048, {{1, 512}});
    mm.stationary_scale = sbuf(DType::kUInt8, 0, 128, 16384 + parity * 128, {{1, 128}});
    mm.moving_scale = sbuf(DType::kUInt8, 0, 128, 20480 + parity * 512, {{1, 512}});
    mm.dst = psum(DType::kFloat32, 0, 128, parity * 2048, {{1, 512}});
    program.instructions.push_back(make(tensor_q(), mm));
  }
  return program;
}

// A streaming HBM -> SBUF -> HBM copy of `tiles` [partitions, free] bf16 tiles over `pairs`
// load/store queue pairs (DMA queues 2k and 2k + 1; queue 0 for both when pairs == 1). Pair
// k copies tiles k, k + pairs, ... through two SBUF buffers of its own: on partitions of its
// own while they fit, side by side in the free dimension beyond. Tiles are read from `slots`
// tile slots of HBM at `base` and written to the `slots` after them. Semaphore k counts pair
// k's loads, semaphore 16 + k its stores; a load waits for the store two tiles back.
inline isa::Program streaming_copy(int tiles, int pairs, std::uint32_t partitions,
                                   std::uint32_t free, std::uint64_t base, std::uint64_t slots) {
  isa::Program program;
  const std::uint64_t tile_bytes = std::uint64_t{partitions} * free * 2;
  std::vector<std::uint32_t> loads(static_cast<std::size_t>(pairs), 0);
  for (int i = 0; i < tiles; ++i) {
    const auto pair = static_cast<std::size_t>(i % pairs);
    const auto load_sem = static_cast<std::uint16_t>(pair);
    const auto store_sem = static_cast<std::uint16_t>(16 + pair);
    const std::uint64_t slot = static_cast<std::uint64_t>(i) % slots;
    const std::uint64_t lane = pair * partitions;
    const auto first_partition = static_cast<std::uint32_t>(lane % 128);
    const std::uint64_t buffer = ((lane / 128) * 2 + loads[pair] % 2) * free * 2;
    isa::DmaCopy load;
    load.src = hbm(DType::kBFloat16, base + slot * tile_bytes, partitions, free, {{1, free}});
    load.dst =
        sbuf(DType::kBFloat16, first_partition, partitions, buffer % (192 * 1024), {{1, free}});
    isa::DmaCopy store;
    store.src = load.dst;
    store.dst =
        hbm(DType::kBFloat16, base + (slots + slot) * tile_bytes, partitions, free, {{1, free}});
    std::vector<isa::SemWait> load_waits;
    if (loads[pair] >= 2) load_waits.push_back({store_sem, loads[pair] - 1});
    const auto load_queue = static_cast<std::uint8_t>(pairs == 1 ? 0 : 2 * pair);
    const auto store_queue = static_cast<std::uint8_t>(pairs == 1 ? 0 : 2 * pair + 1);
    program.instructions.push_back(make(dma_q(load_queue), load, load_waits, {{load_sem, 1}}));
    ++loads[pair];
    program.instructions.push_back(
        make(dma_q(store_queue), store, {{load_sem, loads[pair]}}, {{store_sem, 1}}));
  }
  return program;
}

}  // namespace trnsim::sim::testing
