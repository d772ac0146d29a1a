// The kernel compiler: turns traced kernels (kernel::KernelIr, one per program id) into
// executable ISA programs, one per physical core, as docs/compiler.md describes.
//
// Passes, in order: verify (ISA rules on every operand, errors name the kernel line),
// allocate (SBUF and PSUM by liveness, with reuse and alignment; HBM layout of the kernel's
// tensors), dependencies (flow/anti/output between instructions from their operand
// footprints), schedule (engine and DMA-queue choice and per-queue order by list scheduling
// on the timing model's cost estimates), synchronise (the semaphore waits and signals the
// hardware needs and no more), and a final ISA validation of the result.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "arch/arch.h"
#include "isa/isa.h"
#include "kernel/ir.h"

namespace trnsim::compiler {

struct CompileOptions {
  bool schedule = true;  // false: keep the kernel's program order on each queue (first
                         // allowed engine, DMA queues round-robin)
  int dma_queues = 0;    // DMA queues per core the compiler may use (1..queues_per_engine);
                         // 0: every queue the chip has (dma.queues_per_engine)
};

// Where the compiler placed an HBM tensor of the kernel (the runtime allocates exactly these
// ranges). Shared tensors are placed once for all programs (program = -1); private ones
// once per program.
struct HbmPlacement {
  kernel::StorageId storage = 0;
  int program = -1;
  std::string name;
  numerics::DType dtype = numerics::DType::kFloat32;
  std::vector<std::int64_t> shape;
  kernel::TensorRole role = kernel::TensorRole::kScratch;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::shared_ptr<const std::vector<std::uint8_t>> constant;  // kConstant: what to write
};

// Where the compiler placed an on-chip tile, and the instructions between which it is live.
struct OnChipPlacement {
  kernel::StorageId storage = 0;
  isa::Memory memory = isa::Memory::kSbuf;
  std::uint64_t offset = 0;  // byte offset inside every partition
  std::uint64_t bytes = 0;   // bytes per partition
  std::uint32_t partitions = 0;
  std::size_t first_use = 0, last_use = 0;  // IR instruction indices
};

struct CompileStats {
  double total_ms = 0;
  std::vector<std::pair<std::string, double>> pass_ms;  // in pass order
  std::uint64_t sbuf_peak_bytes = 0;  // per partition, at the busiest point (sum of live tiles)
  std::uint64_t psum_peak_bytes = 0;
  // Highest byte per partition any tile reached (>= peak: the allocator rotates tiles of
  // consecutive loop iterations through different buffers while memory allows).
  std::uint64_t sbuf_extent_bytes = 0;
  std::uint64_t psum_extent_bytes = 0;
  std::size_t instructions = 0;  // over all programs
  std::size_t waits = 0, signals = 0;
  std::size_t dependencies = 0;  // cross-queue edges before redundancy elimination
  double estimated_ns = 0;       // the scheduler's estimate of the longest program (0 unscheduled)
};

struct CompiledKernel {
  std::string name;
  std::vector<isa::Program> programs;  // indexed by program id
  std::vector<HbmPlacement> hbm;
  std::vector<std::vector<OnChipPlacement>> onchip;  // per program
  CompileStats stats;
  // The chip every program was validated against (isa::validate_program) after compiling:
  // a run on this chip need not validate them again.
  std::optional<arch::ChipConfig> validated_for;
};

// Throws kernel::KernelError (naming the kernel source line) for anything the compiler
// cannot turn into a valid program: ISA violations, tiles that do not fit (with the tiles
// live at the peak and the bytes needed), inconsistent programs of one launch.
CompiledKernel compile(std::span<const kernel::KernelIr> programs, const arch::ChipConfig& chip,
                       const CompileOptions& options = {});

}  // namespace trnsim::compiler
