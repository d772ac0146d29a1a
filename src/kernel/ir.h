// The kernel IR: what tracing an NKI-style kernel records, and what the compiler consumes.
//
// A traced kernel is a flat list of ISA operations in program order (NKI's sequential
// semantics: the logical order is the order the kernel issued them) over *storages*: the
// tiles the kernel declared in SBUF/PSUM and the tensors it declared in HBM. Operands are
// ordinary isa::AccessPatterns in a virtual address space, one window per storage, so every
// ISA helper (byte_span, validation of shapes and dtypes, the assembly printer) works on IR
// operands unchanged; the compiler only rebases each window to the address it allocates:
//
//   virtual offset = storage_window(id) + byte offset inside the storage
//   start_partition = partition inside the storage (storages start at partition 0)
//
// Queue choice is the compiler's: an IR instruction says which engines may run it (and
// whether the kernel author fixed one); its isa::Instruction::queue is a placeholder until
// the compiler assigns one, and it has no waits or signals (the compiler inserts them).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "isa/isa.h"
#include "numerics/dtype.h"

namespace trnsim::kernel {

using numerics::DType;

// Where a storage lives (NKI's nl.sbuf, nl.psum, nl.private_hbm / nl.hbm, nl.shared_hbm).
enum class Buffer : std::uint8_t { kSbuf, kPsum, kPrivateHbm, kSharedHbm };
std::string_view buffer_name(Buffer b);  // "sbuf", "psum", "private_hbm", "shared_hbm"
inline bool is_on_chip(Buffer b) {
  return b == Buffer::kSbuf || b == Buffer::kPsum;
}
inline bool is_hbm(Buffer b) {
  return !is_on_chip(b);
}
inline isa::Memory memory_of(Buffer b) {
  return b == Buffer::kSbuf   ? isa::Memory::kSbuf
         : b == Buffer::kPsum ? isa::Memory::kPsum
                              : isa::Memory::kHbm;
}

// How a kernel uses an HBM tensor: an argument it reads (and may update in place), a
// tensor it returns, or scratch space of its own.
// kConstant: NKI's nl.shared_constant, a shared HBM tensor whose bytes the kernel carries
// (Storage::constant) and the runtime writes before the run.
enum class TensorRole : std::uint8_t { kInput, kOutput, kScratch, kConstant };
std::string_view tensor_role_name(TensorRole r);  // "input", "output", "scratch", "constant"

using StorageId = std::uint32_t;

// The virtual address window of a storage: bits [kStorageShift, 64) hold id + 1 (so that no
// window starts at address 0), bits below it the byte offset inside the storage.
inline constexpr int kStorageShift = 40;
inline constexpr std::uint64_t kStorageOffsetMask = (std::uint64_t{1} << kStorageShift) - 1;
inline constexpr std::uint64_t storage_window(StorageId id) {
  return (std::uint64_t{id} + 1) << kStorageShift;
}
inline constexpr StorageId storage_of_offset(std::uint64_t virtual_offset) {
  return static_cast<StorageId>((virtual_offset >> kStorageShift) - 1);
}
inline constexpr std::uint64_t offset_in_storage(std::uint64_t virtual_offset) {
  return virtual_offset & kStorageOffsetMask;
}

// A tile (SBUF/PSUM) or an HBM tensor declared by the kernel.
struct Storage {
  StorageId id = 0;
  Buffer buffer = Buffer::kSbuf;
  DType dtype = DType::kFloat32;
  std::vector<std::int64_t> shape;         // as declared; on-chip: shape[0] is the partition dim
  std::uint32_t partitions = 0;            // on-chip: shape[0]; HBM: 0
  std::uint64_t bytes = 0;                 // on-chip: bytes per partition; HBM: total bytes
  std::string name;                        // user name or a generated one ("t3")
  isa::Origin origin;                      // where the kernel declared it
  TensorRole role = TensorRole::kScratch;  // HBM only
  // On-chip storages the kernel placed by hand (NKI's address=(partition, byte offset));
  // the allocator must honour it and not place anything else over it while it is live.
  std::optional<std::uint64_t> fixed_offset;
  // The dynamic loop (KernelIr::loops index + 1) whose body declared it, 0 for none: such a
  // tile is one per trip, not carried from one trip to the next.
  std::uint32_t loop = 0;
  // kConstant: the tensor's stored bytes (shared: programs and copies of the IR hold one).
  std::shared_ptr<const std::vector<std::uint8_t>> constant;
};

// A dynamic loop (NKI 0.6's nl.fori_loop / nl.while_loop): its body was traced once and
// runs on the device as a loop (docs/dynamic-loops.md). Registers are the kernel's
// (KernelIr::registers): isa::Reg indices 0..registers - 1.
struct Loop {
  std::size_t begin = 0, end = 0;  // the body: IR instructions [begin, end)
  // The loop whose body holds this one (index + 1 into KernelIr::loops; 0: none). Loops are
  // in the order they began, so an enclosing loop comes first.
  std::uint32_t parent = 0;
  bool is_while = false;
  // fori_loop: the loop variable, lower <= var < upper by step; while_loop: the condition
  // register (the body leaves the next condition in it; the loop ends when it is 0).
  isa::Reg var;
  std::variant<std::int32_t, isa::Reg> lower = 0, upper = 0;
  std::int32_t step = 1;
  isa::Origin origin;
};

struct IrInstruction {
  isa::Instruction inst;                  // no waits/signals; queue assigned by the compiler
  std::uint8_t engines = 0;               // isa::engine_bit mask of engines allowed to run it
  bool engine_fixed = false;              // the kernel asked for one engine (engines has 1 bit)
  std::optional<std::uint8_t> dma_queue;  // DMA only: the kernel fixed the queue
  // NKI's no_reorder block this instruction was recorded in (0: none): the scheduler issues
  // the instructions of one block in program order.
  std::uint32_t order_block = 0;
  // Earlier instructions it must run after although no data orders them (NKI's
  // NkiInstruction.depends_on): IR indices, each below this instruction's.
  std::vector<std::uint32_t> after;
};

// One traced kernel instance: one program id of a launch (NKI kernel[lnc] traces the kernel
// once per program id; they share the storages in shared HBM).
// NKI's nl.device_print: the tensor as it was at that point of the program, copied into a
// private HBM snapshot the runtime reads back after a functional run.
struct Print {
  std::string prefix;
  StorageId snapshot = 0;
  isa::Origin origin;
};

struct KernelIr {
  std::string name;
  int program_id = 0;
  int num_programs = 1;
  std::vector<Storage> storages;            // indexed by StorageId
  std::vector<IrInstruction> instructions;  // program order
  std::vector<StorageId> inputs;            // HBM inputs, in argument order
  std::vector<StorageId> outputs;           // HBM outputs, in return order
  std::vector<Loop> loops;                  // in program order; bodies do not overlap
  std::uint8_t registers = 0;               // registers the kernel allocated (r0..)
  std::vector<Print> prints;                // device_print calls, in program order
};

// A kernel the toolchain cannot trace or compile: a bad shape, a dtype an engine lacks, a
// tile that does not fit. `where` is the kernel source line responsible (the operation or
// declaration; unknown when none applies); what() is "file:line:col: error: why" followed by
// the notes ("file:line:col: note: ...", e.g. the tiles live at an SBUF peak).
class KernelError : public util::Error {
 public:
  KernelError(isa::Origin where, std::string why, std::vector<util::Note> notes = {});
  const isa::Origin& where() const { return diagnostics().front().where; }
  const std::string& why() const { return why_; }

 private:
  std::string why_;
};

// Human-readable listing of the IR (`--emit ir`): storages, then one line per instruction
// with operands named by storage ("a[0:128, 256:384] bf16") and the origin.
std::string format_ir(const KernelIr& ir);

}  // namespace trnsim::kernel
