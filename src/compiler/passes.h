// Internal interfaces between the compiler's passes (not installed; see compiler.h for the
// public API and docs/compiler.md for what each pass does).
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "arch/arch.h"
#include "compiler/compiler.h"
#include "isa/isa.h"
#include "kernel/ir.h"

namespace trnsim::compiler::detail {

// Dense queue numbering used by the scheduler and the synchroniser: compute engines and sync
// by their Engine value (0..4), DMA queue q at 5 + q. The semaphore of a queue has the same
// number.
inline constexpr int kFirstDmaQueueKey = 5;
inline int queue_key(const isa::QueueId& q) {
  return q.engine == isa::Engine::kDma ? kFirstDmaQueueKey + q.index : static_cast<int>(q.engine);
}
inline isa::QueueId queue_of_key(int key) {
  if (key >= kFirstDmaQueueKey)
    return {isa::Engine::kDma, static_cast<std::uint8_t>(key - kFirstDmaQueueKey)};
  return {static_cast<isa::Engine>(key), 0};
}

// What the scheduler needs about one instruction of a program.
struct SchedInput {
  const std::vector<isa::Instruction>* insts = nullptr;  // physical operands
  const std::vector<std::uint8_t>* engines = nullptr;    // verified engine masks
  const std::vector<int>* fixed_dma_queue = nullptr;     // -1 = compiler's choice
  const std::vector<std::vector<std::uint32_t>>* preds = nullptr;
  // Per instruction its no_reorder block (0: none; null: no blocks): a block's instructions
  // are issued in program order.
  const std::vector<std::uint32_t>* order_blocks = nullptr;
};

struct SchedResult {
  std::vector<std::uint32_t> order;  // issue order over all queues (a topological order)
  std::vector<int> queue;            // queue key per instruction (IR index)
  double estimated_ns = 0;           // estimated end time (0 when not scheduled)
};

SchedResult schedule_list(const SchedInput& in, const arch::ChipConfig& chip, int dma_queues);
SchedResult schedule_in_order(const SchedInput& in, int dma_queues);

// ---------------------------------------------------------------------------------------
// The other passes, one file each. compile() (compiler.cpp) runs: check_launch, verify,
// layout_hbm, allocate, rebase, dependencies, schedule (above), synchronise, validate.

using isa::AccessPattern;
using isa::Role;
using kernel::Buffer;
using kernel::IrInstruction;
using kernel::KernelError;
using kernel::KernelIr;
using kernel::Storage;
using kernel::StorageId;

// "No instruction": std::numeric_limits<std::size_t>::max().
inline constexpr std::size_t kNone = SIZE_MAX;

inline std::uint64_t align_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

inline std::string memory_upper(Buffer b) {
  return b == Buffer::kSbuf ? "SBUF" : "PSUM";
}

// Capacity (bytes per partition) of an on-chip buffer.
inline std::uint64_t capacity_of(Buffer b, const arch::ChipConfig& chip) {
  return b == Buffer::kSbuf ? static_cast<std::uint64_t>(chip.sbuf.bytes_per_partition.value)
                            : static_cast<std::uint64_t>(chip.psum.bytes_per_partition.value);
}

// launch.cpp: the programs of one launch agree on their shared HBM tensors.
void check_launch(std::span<const KernelIr> programs);
// HBM layout of the launch into `out`; returns address[program][storage] (0 for on-chip
// storages).
std::vector<std::vector<std::uint64_t>> layout_hbm(std::span<const KernelIr> programs,
                                                   std::vector<HbmPlacement>& out);

// verify.cpp: returns, per instruction, the engines (isa::engine_bit mask) that may run it on
// this chip.
std::vector<std::uint8_t> verify(const KernelIr& ir, const arch::ChipConfig& chip);

// allocate.cpp: SBUF/PSUM placement of every tile.
struct Lifetime {
  std::size_t first = kNone, last = 0;
};

struct TilePlace {
  std::uint64_t offset = 0, size = 0;
  bool placed = false;
  std::vector<StorageId> inherits;  // dead tiles whose memory it reuses
};

struct Allocation {
  std::vector<TilePlace> places;  // indexed by StorageId (on-chip only meaningful)
  std::vector<Lifetime> life;
  std::uint64_t sbuf_peak = 0, psum_peak = 0, sbuf_extent = 0, psum_extent = 0;
};

Allocation allocate(const KernelIr& ir, const arch::ChipConfig& chip);
// Physical instructions: every operand rebased to its storage's placement.
std::vector<isa::Instruction> rebase(const KernelIr& ir, const Allocation& alloc,
                                     const std::vector<std::uint64_t>& hbm_addr);

// dependencies.cpp
// Predecessors of every instruction (IR indices, sorted, unique); `flow` gets the subset
// that are read-after-write (the instruction reads what the predecessor wrote).
std::vector<std::vector<std::uint32_t>> dependencies(const KernelIr& ir,
                                                     const std::vector<isa::Instruction>& phys,
                                                     const Allocation& alloc,
                                                     std::vector<std::vector<std::uint32_t>>& flow);

// synchronise.cpp: semaphore waits and signals for the scheduled program.
struct SyncResult {
  std::vector<isa::Instruction> program;
  std::size_t waits = 0, signals = 0, cross_edges = 0;
};

// `signal_every`: every instruction signals its queue's semaphore (compile_with_loops counts
// the signals of a piece from its instructions).
SyncResult synchronise(std::vector<isa::Instruction>& phys, const detail::SchedResult& sched,
                       const std::vector<std::vector<std::uint32_t>>& preds,
                       const std::vector<std::vector<std::uint32_t>>& flow, int num_queues,
                       bool signal_every = false);

// compiler.cpp, pass 4: the engines and DMA queues the kernel fixed, then the scheduler.
SchedResult schedule_ir(const KernelIr& ir, const std::vector<isa::Instruction>& phys,
                        const std::vector<std::uint8_t>& allowed,
                        const std::vector<std::vector<std::uint32_t>>& preds,
                        const arch::ChipConfig& chip, const CompileOptions& options);

// loops.cpp: programs with registers or dynamic loops.
bool has_control_flow(const KernelIr& ir);
// Storages a loop body uses but did not declare live through the whole loop.
void extend_lifetimes_over_loops(const KernelIr& ir, std::vector<Lifetime>& life);
// The program of such a kernel, piece by piece (docs/compiler.md "Dynamic loops"); adds
// the pieces' estimates to `estimated_ns`.
SyncResult compile_with_loops(const KernelIr& ir, const std::vector<isa::Instruction>& phys,
                              const std::vector<std::uint8_t>& allowed, const Allocation& alloc,
                              const arch::ChipConfig& chip, const CompileOptions& options,
                              int num_queues, double& estimated_ns);

}  // namespace trnsim::compiler::detail
