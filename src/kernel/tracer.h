// Internal to the kernel layer: the per-thread recorder behind the nl/nisa calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernel/kernel.h"

namespace trnsim::kernel {

isa::Origin origin_of(const Loc& loc);

class Tracer {
 public:
  // The launch may record `max_instructions` (TraceOptions), of which the programs traced
  // before this one recorded `recorded_before`; KernelError beyond.
  Tracer(const arch::ChipConfig& chip, std::string name, int program_id, int num_programs,
         std::uint64_t max_instructions = UINT64_MAX, std::uint64_t recorded_before = 0);

  // The tracer of this thread's kernel; KernelError at `loc` when nothing is being traced.
  static Tracer& current(const Loc& loc);

  KernelIr& ir() { return ir_; }
  // Unique per tracer in the process: a Tensor records the trace that declared it, so one
  // kept from another trace (an earlier kernel, another program of the logical core) is a
  // KernelError where it is used instead of a view of whatever storage has its id here.
  std::uint64_t serial() const { return serial_; }
  // `t`'s storage, after checking that `t` is a valid tensor of this trace (KernelError at
  // `loc` otherwise).
  const Storage& storage_of(const Tensor& t, const Loc& loc) const;
  const arch::ChipConfig& chip() const { return chip_; }

  Tensor declare(Shape shape, DType dtype, Buffer buffer, std::string name, const Loc& loc,
                 TensorRole role = TensorRole::kScratch,
                 std::optional<std::uint64_t> fixed_offset = std::nullopt);
  // A full view of an existing storage.
  Tensor view_of(StorageId id) const;

  struct Placement {
    std::optional<isa::Engine> engine;      // fixed by the kernel
    std::optional<std::uint8_t> dma_queue;  // fixed by the kernel
    isa::RoundingMode rounding = isa::RoundingMode::kNearestEven;
    std::string name;
  };
  // Checks `op` against the ISA rules on every engine that could run it (keeping those
  // where it is valid) and appends it; KernelError at `loc` when no engine can.
  void record(isa::Operation op, const Placement& placement, const Loc& loc);

  std::uint32_t next_barrier_id() { return barriers_++; }

  // Registers and dynamic loops (loops.cpp). A new register of this trace (KernelError past
  // the registers the compiler leaves to kernels); a register of another trace or an
  // invalid one is a KernelError at `loc`.
  Register new_register(const Loc& loc);
  void check_register(const Register& r, const Loc& loc) const;
  // Opens `loop` inside the innermost open one (its body starts at the next instruction;
  // KernelError inside a no_reorder block) and closes the innermost open loop, returning its
  // index in KernelIr::loops (nullopt when no loop is open).
  void begin_loop(Loop loop, const Loc& loc);
  bool in_loop() const { return !open_loops_.empty(); }
  std::optional<std::size_t> end_loop();
  // The innermost open loop (index + 1 into KernelIr::loops; 0: none).
  std::uint32_t innermost_loop() const { return open_loops_.empty() ? 0 : open_loops_.back(); }
  // Whether the body being traced may not write `r`: a fori_loop's variable and bounds
  // (the loop reads them on every trip, so a write would change its trip count).
  bool read_only_register(isa::Reg r) const;

  // NKI's NkiInstruction.depends_on: IR instructions [first, end) run after [p_first, p_end).
  // The producers were recorded first, in the consumers' dynamic loop or outside every loop
  // (NKI's rule: an edge into a loop from before it is fine, one out of or between loops
  // would fire unconditionally or never); KernelError at `loc` otherwise.
  void add_dependency(std::size_t first, std::size_t end, std::size_t p_first, std::size_t p_end,
                      const Loc& loc);

  // The no_reorder block being recorded (0: none); begin returns false when one is open.
  bool begin_order_block();
  void end_order_block() { order_block_ = 0; }

  // NKI's nc_matmul(accumulate=None): the first matmul write to a PSUM location overwrites,
  // later ones add. True when every location of `dst` was written by an earlier matmul of
  // this trace, false when none was; a dst covering both is a KernelError at `loc` (one
  // instruction has one accumulate flag). Marks `dst` as written.
  bool matmul_accumulates(const isa::AccessPattern& dst, const Loc& loc);
  // Marks `dst` as written by a matmul (one with an explicit accumulate flag).
  void note_matmul_write(const isa::AccessPattern& dst);

 private:
  const arch::ChipConfig& chip_;
  std::uint64_t serial_;
  std::uint64_t max_instructions_, recorded_before_;
  std::uint64_t hbm_bytes_ = 0;  // declared in HBM by this trace (inputs, outputs, scratch)
  KernelIr ir_;
  std::uint32_t barriers_ = 0;
  std::uint32_t order_block_ = 0, order_blocks_ = 0;
  std::vector<std::uint32_t> open_loops_;  // outermost first: index + 1 into ir_.loops
  // Per PSUM storage, one flag per byte: 1 where a matmul of this trace wrote.
  std::unordered_map<StorageId, std::vector<std::uint8_t>> matmul_written_;
};

// Installs a tracer as this thread's current one for its lifetime.
class TraceScope {
 public:
  explicit TraceScope(Tracer& tracer);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  Tracer* previous_;
};

}  // namespace trnsim::kernel
