// What the timing calibration tests (timing_test.cpp, multicore_test.cpp) share: the tensor
// engine streams they time, the tolerance on published peaks and the measured figures they
// record for the docs.
#pragma once

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

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

}  // namespace trnsim::sim::testing
