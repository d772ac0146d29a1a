// A small hand-written "tracer" for compiler tests: declares storages and appends IR
// instructions with virtual operands, as src/kernel's tracer would.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "isa/isa.h"
#include "kernel/ir.h"
#include "sim/sim.h"

namespace trnsim::compiler::test {

using isa::AccessPattern;
using kernel::Buffer;
using kernel::StorageId;
using numerics::DType;

class IrBuilder {
 public:
  explicit IrBuilder(std::string name, int program_id = 0, int num_programs = 1);

  // HBM tensor [rows, cols] (2-D) or on-chip tile [partitions, free].
  StorageId hbm(const std::string& name, DType dtype, std::int64_t rows, std::int64_t cols,
                kernel::TensorRole role, Buffer buffer = Buffer::kSharedHbm,
                std::uint32_t line = 1);
  StorageId tile(const std::string& name, Buffer buffer, DType dtype, std::uint32_t partitions,
                 std::uint32_t free, std::uint32_t line);

  // The whole tile, or partitions [p0, p0 + np) x elements [e0, e0 + n).
  AccessPattern t(StorageId id) const;
  AccessPattern t(StorageId id, std::uint32_t p0, std::uint32_t np, std::uint64_t e0,
                  std::uint32_t n) const;
  // Rows [r0, r0 + nr) x columns [c0, c0 + nc) of an HBM tensor (row-major).
  AccessPattern h(StorageId id, std::int64_t r0, std::uint32_t nr, std::int64_t c0,
                  std::uint32_t nc) const;

  // Appends an instruction; `engines` 0 = every engine the operation allows.
  std::size_t add(isa::Operation op, std::uint32_t line, std::uint8_t engines = 0,
                  bool engine_fixed = false, std::optional<std::uint8_t> dma_queue = {});
  std::size_t dma(const AccessPattern& dst, const AccessPattern& src, std::uint32_t line);
  std::size_t matmul(const AccessPattern& dst, const AccessPattern& stationary,
                     const AccessPattern& moving, bool accumulate, std::uint32_t line);
  std::size_t copy(const AccessPattern& dst, const AccessPattern& src, std::uint32_t line,
                   std::uint8_t engines = 0, bool fixed = false);

  kernel::KernelIr& ir() { return ir_; }
  const kernel::KernelIr& ir() const { return ir_; }

 private:
  kernel::KernelIr ir_;
};

inline constexpr const char* kFile = "kernel_test.py";

std::uint16_t bf16_bits(float exact);  // value must be exactly representable
std::vector<std::uint8_t> encode(DType dtype, std::span<const float> values);
std::vector<float> decode_f32(std::span<const std::uint8_t> bytes);

// Runs a compiled single-program kernel on a fresh device: HBM placements allocated, the
// named inputs written, the program run with hazard checks (timed when `timed`).
struct RunOutcome {
  sim::RunResult result;
  double busy_sum_ns = 0;                          // sum over queues of busy time (timed runs)
  std::vector<std::vector<std::uint8_t>> tensors;  // every HBM placement's bytes after the run
};
RunOutcome run_compiled(
    const CompiledKernel& k, const arch::ChipConfig& chip,
    const std::vector<std::pair<std::string, std::vector<std::uint8_t>>>& inputs, bool timed);
const HbmPlacement& placement(const CompiledKernel& k, const std::string& name);
std::size_t placement_index(const CompiledKernel& k, const std::string& name);

}  // namespace trnsim::compiler::test
