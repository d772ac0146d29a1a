// Builders shared by the profile tests: operands, instructions and timed runs (on top of
// the simulator tests' helpers, sim/tests/test_util.h).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "isa/isa.h"
#include "profile/profile.h"
#include "sim/sim.h"
#include "sim/tests/test_util.h"
#include "sim/timing_model.h"

namespace trnsim::profile::testing {

using isa::AccessPattern;
using isa::Dim;
using numerics::DType;

using isa::access_pattern;
inline AccessPattern sbuf(DType t, std::uint32_t parts, std::uint64_t off, std::uint32_t free,
                          std::uint32_t start = 0) {
  return access_pattern(isa::Memory::kSbuf, t, start, parts, off, {{1, free}});
}
inline AccessPattern psum(DType t, std::uint32_t parts, std::uint64_t off, std::uint32_t free) {
  return access_pattern(isa::Memory::kPsum, t, 0, parts, off, {{1, free}});
}
// HBM rows of `free` elements, `row_step` elements apart.
inline AccessPattern hbm(DType t, std::uint64_t addr, std::uint32_t rows, std::uint32_t free,
                         std::int64_t row_step) {
  return access_pattern(isa::Memory::kHbm, t, 0, rows, addr, {{1, free}}, row_step);
}

// The simulator tests' instruction builder and queues; `line` > 0 gives the instruction
// an origin at that line of "k.s".
using sim::testing::dma_q;
using sim::testing::scalar_q;
using sim::testing::tensor_q;
using sim::testing::vector_q;
inline isa::Instruction make(isa::QueueId q, isa::Operation op,
                             std::vector<isa::SemWait> waits = {},
                             std::vector<isa::SemSignal> signals = {}, std::uint32_t line = 0) {
  isa::Instruction inst =
      sim::testing::make(q, std::move(op), std::move(waits), std::move(signals));
  if (line) inst.origin = {"k.s", line, 1};
  return inst;
}

// HBM -> SBUF load of [parts, free] bf16 from `addr` into partition offset `off`.
inline isa::DmaCopy load(std::uint64_t addr, std::uint32_t parts, std::uint32_t free,
                         std::uint64_t off) {
  isa::DmaCopy d;
  d.dst = sbuf(DType::kBFloat16, parts, off, free);
  d.src = hbm(DType::kBFloat16, addr, parts, free, free);
  return d;
}
inline isa::NcMatmul matmul(std::uint32_t k, std::uint32_t m, std::uint32_t n, std::uint64_t st_off,
                            std::uint64_t mv_off, std::uint64_t psum_off = 0) {
  isa::NcMatmul mm;
  mm.dst = psum(DType::kFloat32, m, psum_off, n);
  mm.stationary = sbuf(DType::kBFloat16, k, st_off, m);
  mm.moving = sbuf(DType::kBFloat16, k, mv_off, n);
  return mm;
}
inline isa::TensorCopy copy(AccessPattern dst, AccessPattern src) {
  isa::TensorCopy c;
  c.dst = dst;
  c.src = src;
  return c;
}

// A timed run of one program on one core (timing only, ramp off unless asked).
struct TimedRun {
  arch::ChipConfig chip;
  isa::Program program;
  sim::RunResult result;
  sim::TimingReport report;
  ProfileInput input(int core = 0) const {
    return ProfileInput{&chip, {{core, &program, &result, &report}}, "test"};
  }
};
inline std::unique_ptr<TimedRun> run_timed(isa::Program program, bool ramp = false,
                                           std::uint64_t hbm_bytes = 1 << 22) {
  auto r = std::make_unique<TimedRun>();
  r->chip = arch::load_preset("trn3");
  r->program = std::move(program);
  sim::Device device(r->chip);
  device.allocate_at(0, hbm_bytes);
  sim::TimingModel model(r->chip, {.power_ramp = ramp});
  r->result = sim::run(device, r->program, sim::testing::timing_only_options(&model));
  r->report = model.report(r->program, r->result);
  return r;
}

inline std::string source_dir() {
  const char* env = std::getenv("TRNSIM_SOURCE_DIR");
  return env ? env : ".";
}

}  // namespace trnsim::profile::testing
