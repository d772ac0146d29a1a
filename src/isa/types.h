// The vocabulary of the NeuronCore instruction set: engines and queues, memories, access
// patterns, ALU operators and activation functions, and the traits every operation declares
// (operand roles, operation class). Part of the public header isa/isa.h; include that.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <variant>

#include "numerics/dtype.h"

namespace trnsim::isa {

using numerics::DType;

// ---------------------------------------------------------------------------------------
// Engines and queues

enum class Engine : std::uint8_t { kTensor, kVector, kScalar, kGpSimd, kSync, kDma };
inline constexpr int kNumEngines = 6;
std::string_view engine_name(Engine e);  // "tensor", "vector", "scalar", "gpsimd", "sync", "dma"
std::optional<Engine> engine_from_name(std::string_view name);

// A queue is an engine's instruction stream; DMA has several queues per core (index).
struct QueueId {
  Engine engine = Engine::kSync;
  std::uint8_t index = 0;  // DMA queue number; 0 for compute engines
  friend bool operator==(const QueueId&, const QueueId&) = default;
};

// ---------------------------------------------------------------------------------------
// Operands: access patterns over one memory

enum class Memory : std::uint8_t { kHbm, kSbuf, kPsum };
inline constexpr int kNumMemories = 3;
std::string_view memory_name(Memory m);  // "hbm", "sbuf", "psum"
std::optional<Memory> memory_from_name(std::string_view name);

// One free dimension: `count` elements, `step` elements apart (may be 0 for broadcast or
// negative). Dimensions are listed major to minor, as in NKI's `.ap(pattern=...)`.
struct Dim {
  std::int64_t step = 1;
  std::uint32_t count = 1;
  friend bool operator==(const Dim&, const Dim&) = default;
};

inline constexpr int kMaxFreeDims = 4;

// Sequencer registers: 32-bit, kNumRegisters per queue (NKI: 64 per engine sequencer).
// Control operations (isa/operations_control.h) name them; an access pattern may add one,
// scaled, to its offset; a semaphore wait may count from one.
inline constexpr int kNumRegisters = 64;
inline constexpr std::uint8_t kNoRegister = 0xFF;  // "none" where a register is optional
struct Reg {
  std::uint8_t index = kNoRegister;
  bool present() const { return index != kNoRegister; }
  friend bool operator==(const Reg&, const Reg&) = default;
};

// An access pattern: which elements of a memory an operand touches, and their type.
//
// SBUF/PSUM: partitions [start_partition, start_partition + partitions) (contiguous, no
// partition striding); `offset` is the byte offset inside every partition; element (p, i..)
// lives at partition p, byte offset + elem_size * sum(dims[k].step * i_k).
// HBM: `offset` is the byte address; the partition dimension is an ordinary outer dimension
// with `partition_step` elements between consecutive partitions.
// For x4-packed MX dtypes an "element" is one packed word (4 values).
// A dynamic pattern (dyn_reg set) starts `dyn_scale` bytes further per unit of its register's
// (signed) value at the time it runs: NKI's .ap(scalar_offset=register). Everything static
// (byte_span, footprints) describes it at register value 0.
struct AccessPattern {
  Memory memory = Memory::kSbuf;
  DType dtype = DType::kFloat32;
  std::uint64_t offset = 0;
  std::uint32_t start_partition = 0;
  std::uint32_t partitions = 1;
  std::int64_t partition_step = 0;  // HBM only (elements); 0 for SBUF/PSUM
  std::uint8_t num_dims = 1;
  std::array<Dim, kMaxFreeDims> dims{};
  Reg dyn_reg;                 // none: a static pattern
  std::int64_t dyn_scale = 0;  // bytes per unit of the register

  bool is_dynamic() const { return dyn_reg.present(); }
  // Elements per partition (product of the free counts). Inline for the one-dim case: the
  // cost formulas ask for it many times per instruction.
  std::uint64_t free_elements() const {
    return num_dims == 1 ? dims[0].count : free_elements_of_dims();
  }
  std::uint64_t free_elements_of_dims() const;  // any num_dims (saturating)
  std::uint64_t total_elements() const { return free_elements() * partitions; }
  std::size_t element_bytes() const { return numerics::storage_bytes(dtype); }
  // True when the free dims walk consecutive elements (innermost step 1, each outer step
  // equal to the span of the dims inside it).
  bool is_contiguous() const;
  // Byte range [lo, hi) touched inside each partition (SBUF/PSUM) or in HBM; used for
  // bounds checks and as a conservative footprint for hazard detection.
  // Saturates at the int64 range instead of overflowing for absurd patterns.
  std::pair<std::int64_t, std::int64_t> byte_span() const;
  // Compares only the dims in use (dims past num_dims are ignored), so that two patterns
  // describing the same elements are equal whatever their unused slots hold; the assembly
  // round trip relies on this.
  friend bool operator==(const AccessPattern& a, const AccessPattern& b);
};

// An access pattern from its parts: `dims` major to minor as {step, count} (at most
// kMaxFreeDims; extra dims throw std::invalid_argument). For users and tests that build
// programs in C++; the kernel API builds them from tensor views.
inline AccessPattern access_pattern(Memory memory, DType dtype, std::uint32_t start_partition,
                                    std::uint32_t partitions, std::uint64_t offset,
                                    std::span<const Dim> dims, std::int64_t partition_step = 0) {
  if (dims.size() > kMaxFreeDims)
    throw std::invalid_argument("an access pattern has at most 4 free dims");
  AccessPattern ap;
  ap.memory = memory;
  ap.dtype = dtype;
  ap.start_partition = start_partition;
  ap.partitions = partitions;
  ap.offset = offset;
  ap.partition_step = partition_step;
  ap.num_dims = static_cast<std::uint8_t>(dims.size());
  std::copy(dims.begin(), dims.end(), ap.dims.begin());
  return ap;
}
inline AccessPattern access_pattern(Memory memory, DType dtype, std::uint32_t start_partition,
                                    std::uint32_t partitions, std::uint64_t offset,
                                    std::initializer_list<Dim> dims,
                                    std::int64_t partition_step = 0) {
  return access_pattern(memory, dtype, start_partition, partitions, offset,
                        std::span<const Dim>(dims.begin(), dims.size()), partition_step);
}

// An operand that is either an fp32 immediate or a per-partition [P, 1] tensor broadcast
// along the free dims (NKI tensor_scalar / activation scale and bias).
using ScalarOperand = std::variant<float, AccessPattern>;

// ---------------------------------------------------------------------------------------
// Operators and functions (NKI names)

enum class AluOp : std::uint8_t {
  kBypass,  // pass the first operand through
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kMaximum,
  kMinimum,
  kAbsMax,
  kAbsMin,
  kPower,
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterEqual,
  kLess,
  kLessEqual,  // 1.0 / 0.0
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor,  // on != 0
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kLeftShift,
  kRightShift,  // integer bits
  kAverage,     // tensor_partition_reduce only
  kInvert,      // bitwise NOT of the first operand (a bitvec operator; the second is ignored)
  kMod,         // remainder with the divisor's sign (NumPy mod, Python %)
  kFmod,        // remainder with the dividend's sign (C fmod)
};
inline constexpr int kNumAluOps = static_cast<int>(AluOp::kFmod) + 1;
std::string_view alu_op_name(AluOp op);  // "add", "subtract", ..., NKI spelling
std::optional<AluOp> alu_op_from_name(std::string_view name);
// bitwise_*, invert and shifts: integer operands only.
constexpr bool is_bitvec_op(AluOp op) {
  return op == AluOp::kBitwiseAnd || op == AluOp::kBitwiseOr || op == AluOp::kBitwiseXor ||
         op == AluOp::kLeftShift || op == AluOp::kRightShift || op == AluOp::kInvert;
}

enum class ActivationFunc : std::uint8_t {
  kCopy,
  kExp,
  kLog,
  kTanh,
  kSigmoid,
  kRelu,
  kGelu,
  kGeluApprxTanh,
  kGeluApprxSigmoid,
  kSilu,
  kSoftplus,
  kMish,
  kErf,
  kSqrt,
  kRsqrt,
  kSquare,
  kReciprocal,
  kSin,
  kCos,
  kArctan,
  kAbs,
  kSign,
  kPrelu,  // x for x > 0, else alpha * x (activate2's relu_param; 0 in activation)
  kGeluDx,
  kGeluApprxSigmoidDx,
  kSiluDx,
  kErfDx,  // derivatives of gelu, gelu_apprx_sigmoid, silu and erf
};
inline constexpr int kNumActivationFuncs = static_cast<int>(ActivationFunc::kErfDx) + 1;
std::string_view activation_name(ActivationFunc f);  // "copy", "exp", "gelu_apprx_tanh", ...
std::optional<ActivationFunc> activation_from_name(std::string_view name);

enum class AccumulateMode : std::uint8_t { kOverwrite, kAccumulate };
enum class RoundingMode : std::uint8_t { kNearestEven, kStochastic };
enum class MatmulPerfMode : std::uint8_t { kNone, kDoubleRow };
enum class DmaAccumulate : std::uint8_t { kNone, kAdd };  // gen4 near-memory read-add-write
enum class IndirectMode : std::uint8_t { kGather, kScatter };
// What an isa::Collective does (NKI's nki.collectives calls).
enum class CollectiveKind : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kPermute,
  kAllGatherV,     // variable sizes: counts and displacements in a metadata tensor
  kAllToAllV,      // the same, a count and displacement per destination
  kPermuteReduce,  // a permute of op(src, src1)
};
// NKI's nisa.oob_mode: an index outside the indexed rows is an error, or its row is skipped.
enum class OobMode : std::uint8_t { kError, kSkip };
// NKI's nisa.reduce_cmd: how an instruction treats its engine's accumulator registers.
enum class ReduceCmd : std::uint8_t { kIdle, kReset, kReduce, kResetReduce, kLoadReduce };
// State an operation keeps in its engine rather than in memory: the random generators, the
// Vector engine's accumulator registers. Operations on one state stay in program order.
enum class EngineState : std::uint8_t { kNone, kRng, kAccumulator };
inline constexpr int kNumEngineStates = 3;
// SBUF partitions each GpSimd core serves (8 cores x 16 = 128): its local gathers, top-k
// snakes and nonzero_with_count rows.
inline constexpr std::uint32_t kGpSimdPartitionsPerCore = 16;
// When a branch is taken: always, or comparing register a with b (or with imm when b is none)
// as signed 32-bit values.
enum class BranchCond : std::uint8_t { kAlways, kLess, kGreaterEqual, kEqual, kNotEqual };

// Spellings of the attribute enums in assembly, indexed by enumerator value:
// accumulate "overwrite"/"accumulate", rounding "rne"/"sr", perf_mode "none"/"double_row",
// DMA accumulate "none"/"add", indirect mode "gather"/"scatter", oob mode "error"/"skip".
std::string_view accumulate_mode_name(AccumulateMode m);
std::string_view rounding_mode_name(RoundingMode m);
std::string_view perf_mode_name(MatmulPerfMode m);
std::string_view dma_accumulate_name(DmaAccumulate m);
std::string_view indirect_mode_name(IndirectMode m);
std::string_view oob_mode_name(OobMode m);
std::string_view reduce_cmd_name(ReduceCmd c);    // "idle", "reset", "reduce", ... (NKI's)
std::string_view branch_cond_name(BranchCond c);  // "always", "lt", "ge", "eq", "ne"
// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "permute", "all_gather_v",
// "all_to_all_v", "permute_reduce"
std::string_view collective_kind_name(CollectiveKind k);
// The -v kinds: flat buffers sized at run time by a metadata tensor.
constexpr bool is_variable_collective(CollectiveKind k) {
  return k == CollectiveKind::kAllGatherV || k == CollectiveKind::kAllToAllV;
}
inline constexpr int kNumAccumulateModes = 2;
inline constexpr int kNumRoundingModes = 2;
inline constexpr int kNumPerfModes = 2;
inline constexpr int kNumDmaAccumulates = 2;
inline constexpr int kNumIndirectModes = 2;
inline constexpr int kNumOobModes = 2;
inline constexpr int kNumReduceCmds = 5;
inline constexpr int kNumBranchConds = 5;
inline constexpr int kNumCollectiveKinds = 8;

// ---------------------------------------------------------------------------------------
// Traits every operation declares next to its operands (isa/operations.h)

// How an operation uses a field: read, written, both, or an attribute (not memory).
enum class Role : std::uint8_t { kRead, kWrite, kReadWrite, kAttr };

// What kind of work an operation is. The generic code that treats a kind specially reads
// this instead of listing operation types: the cost formula that times it (timing/), the
// DMA engine split and queues (compiler, simulator), the profiler's transfer statistics.
enum class OpClass : std::uint8_t {
  kMatmul,       // tensor engine: a stationary matrix times a moving one, into PSUM
  kTranspose,    // nc_transpose: on the tensor engine as a matmul against an identity, or on
                 // the vector engine as an elementwise move
  kElementwise,  // streams its free elements through a Vector/Scalar/GpSimd datapath
  kDmaTransfer,  // moves `src` to `dst` on the DMA engines (has both fields)
  kSequencer,    // no datapath: semaphores and barriers
  kControl,      // the sequencer's registers and branches (isa/operations_control.h)
};
std::string_view op_class_name(OpClass c);  // "matmul", "transpose", "elementwise", ...

constexpr std::uint8_t engine_bit(Engine e) {
  return std::uint8_t(1u << unsigned(e));
}
constexpr std::uint8_t kComputeEngines =
    engine_bit(Engine::kVector) | engine_bit(Engine::kScalar) | engine_bit(Engine::kGpSimd);
constexpr std::uint8_t kAnyQueue = 0x3F;  // every engine's queues

}  // namespace trnsim::isa
