// The NKI programming model in C++: tensors in HBM, tiles in SBUF/PSUM, views, and one call
// per ISA operation, recorded into a kernel::KernelIr by tracing.
//
// A kernel is a C++ callable that takes its input tensors and returns its outputs:
//
//   std::vector<Tensor> add_one(std::span<const Tensor> in) {
//     Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm);
//     Tensor t = nl::load(in[0](nl::ds(0, 128), nl::all));   // HBM -> new SBUF tile
//     nisa::tensor_scalar(t, t, AluOp::kAdd, 1.0f);
//     nl::store(out(nl::ds(0, 128), nl::all), t);
//     return {out};
//   }
//
// Names and semantics follow NKI 0.6 (nki.language as `nl`, nki.isa as `nisa`: dst first,
// access-pattern views, x4-packed MX types). C++ loops play the role of NKI's (unrolled)
// Python loops. Every operation and declaration records the kernel source line that made it
// (Loc::current(), std::source_location), so errors and profiles point at the kernel, not
// at trnsim.
//
// Shapes are checked when an operation is recorded; an operation an engine cannot run, a
// shape that does not match, an index out of range, all throw kernel::KernelError naming
// the line. Tracing runs the kernel once per program id (logical core size, NKI kernel[n]).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "arch/arch.h"
#include "isa/isa.h"
#include "kernel/ir.h"

namespace trnsim::kernel {

// Where a kernel operation was written: the call site, filled in by the default argument
// Loc::current(). That is std::source_location, except under clang 14 (the CI's clang-tidy),
// whose std::source_location is missing: there a class with the same members stands in,
// built from clang's __builtin_FILE/LINE/COLUMN (GCC 12 has no __builtin_COLUMN).
#if defined(__clang__) && !__has_builtin(__builtin_source_location)
class Loc {
 public:
  constexpr Loc() = default;
  static constexpr Loc current(const char* file = __builtin_FILE(),
                               std::uint32_t line = __builtin_LINE(),
                               std::uint32_t column = __builtin_COLUMN()) noexcept {
    Loc loc;
    loc.file_ = file;
    loc.line_ = line;
    loc.column_ = column;
    return loc;
  }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr std::uint32_t line() const noexcept { return line_; }
  constexpr std::uint32_t column() const noexcept { return column_; }

 private:
  const char* file_ = "";
  std::uint32_t line_ = 0;
  std::uint32_t column_ = 0;
};
#else
using Loc = std::source_location;
#endif

using Shape = std::vector<std::int64_t>;

// ---------------------------------------------------------------------------------------
// Indexing

inline constexpr std::int64_t kEnd = std::numeric_limits<std::int64_t>::max();

// A Python-style slice [start:stop:step] (negative start/stop count from the end).
struct Slice {
  std::int64_t start = 0, stop = kEnd, step = 1;
};

// One index of a view: an integer or a slice. Converting to it records the caller's line,
// so a bad index is reported where the kernel wrote it.
struct Index {
  Index(std::int64_t i, Loc loc = Loc::current()) : value(i), where(loc) {}       // NOLINT
  Index(int i, Loc loc = Loc::current()) : value(std::int64_t{i}), where(loc) {}  // NOLINT
  Index(Slice s, Loc loc = Loc::current()) : value(s), where(loc) {}              // NOLINT
  std::variant<std::int64_t, Slice> value;
  Loc where;
};

// ---------------------------------------------------------------------------------------
// Registers

// A 32-bit sequencer register of the kernel (NKI's VirtualRegister: nisa::register_alloc,
// the loop variable of nl::fori_loop). Every engine queue keeps its own copy and runs every
// register operation, so that all of them agree on the trip counts of dynamic loops
// (docs/dynamic-loops.md).
class Register {
 public:
  Register() = default;
  bool valid() const { return valid_; }
  isa::Reg reg() const { return isa::Reg{index_}; }

 private:
  friend class Tracer;
  bool valid_ = false;
  std::uint64_t trace_ = 0;  // the trace that made it (Tracer::serial)
  std::uint8_t index_ = 0;
};

// ---------------------------------------------------------------------------------------
// Tensors

// A view of a storage (an SBUF/PSUM tile or an HBM tensor): shape, element strides and
// offset, as NKI's NkiTensor. Views cost nothing at run time; they only change the access
// pattern an operation gets. On-chip tensors always have the partition dim first and at
// least 2 dims; their partition dim is contiguous (a partition offset, no stride).
class Tensor {
 public:
  Tensor() = default;

  bool valid() const { return valid_; }
  StorageId storage() const { return storage_; }
  Buffer buffer() const { return buffer_; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const std::vector<std::int64_t>& strides() const { return strides_; }
  std::int64_t offset() const { return offset_; }  // elements (on-chip: inside a partition)
  // Elements from the storage's start to the view's start, as Tensor::pattern counts them
  // (on-chip: partition_offset() x the elements of one partition, plus offset()).
  std::int64_t storage_offset(Loc loc = Loc::current()) const;
  std::uint32_t partition_offset() const { return partition_offset_; }  // on-chip only
  int ndim() const { return static_cast<int>(shape_.size()); }
  std::int64_t dim(int d) const;                     // negative d counts from the end
  std::int64_t size() const;                         // number of elements
  std::string name(Loc loc = Loc::current()) const;  // of the storage

  // t(i, j, ...): NKI indexing (ints, slices, nl::ds, nl::all). Integer-indexing an on-chip
  // partition dim keeps a size-1 dim; integer-indexing a free dim drops it unless the view
  // would fall below 2 dims. HBM views drop indexed dims.
  Tensor operator()(Index a) const;
  Tensor operator()(Index a, Index b) const;
  Tensor operator()(Index a, Index b, Index c) const;
  Tensor operator()(Index a, Index b, Index c, Index d) const;
  Tensor operator()(Index a, Index b, Index c, Index d, Index e) const;
  Tensor index(std::span<const Index> indices, Loc loc = Loc::current()) const;

  Tensor slice(int dim, std::int64_t start, std::int64_t stop, std::int64_t step = 1,
               Loc loc = Loc::current()) const;
  Tensor permute(std::vector<int> dims, Loc loc = Loc::current()) const;
  Tensor broadcast(int dim, std::int64_t size, Loc loc = Loc::current()) const;  // size-1 dim
  Tensor expand_dim(int dim, Loc loc = Loc::current()) const;
  Tensor squeeze_dim(int dim, Loc loc = Loc::current()) const;
  Tensor reshape(Shape shape, Loc loc = Loc::current()) const;  // contiguous views only
  // NKI's reshape_dim: dim becomes the dims `sizes` (one may be -1, inferred), row-major
  // inside the old dim's stride; on chip, not the partition dim.
  Tensor reshape_dim(int dim, Shape sizes, Loc loc = Loc::current()) const;
  // NKI's flatten_dims: dims first..last (inclusive) become one; they must walk on from
  // each other in memory. On chip, first > 0.
  Tensor flatten_dims(int first, int last, Loc loc = Loc::current()) const;
  // NKI's get_pattern: one [stride, size] pair per dim; on chip the partition dim's stride
  // is the elements of one partition, as Tensor::pattern takes it.
  std::vector<std::array<std::int64_t, 2>> pattern_pairs(Loc loc = Loc::current()) const;
  // Same bytes as another dtype; the last dim is rescaled by the size ratio.
  Tensor view(DType dtype, Loc loc = Loc::current()) const;
  bool is_contiguous() const;
  // NKI's t.ap(pattern, offset, dtype): a view of the whole storage (not of this view) with
  // an explicit pattern of [step, count] pairs, major to minor, in elements from `offset`.
  // On-chip storages take [elements per partition, partitions] first. `dtype` reads the
  // storage's bytes as another type (steps and offset count its elements).
  Tensor pattern(const std::vector<std::array<std::int64_t, 2>>& pattern, std::int64_t offset = 0,
                 std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current()) const;
  // The same view starting `elements` further per unit of `r`'s value when the operation
  // runs (NKI's .ap(scalar_offset=r): a dynamic loop's tile i). The register must be of
  // this trace; a view has at most one such term. On-chip, the offset moves inside the
  // partitions (a free dim), never across them.
  Tensor offset_by(const Register& r, std::int64_t elements, Loc loc = Loc::current()) const;
  bool is_dynamic() const { return dyn_reg_.present(); }
  // NKI's .ap(vector_offset=index): dim 0 of this HBM view becomes one row per element of
  // `index` (an SBUF tensor of uint32/int32, read when the operation runs), row r starting
  // index[r] x `row_step` elements after the view's start; the view's own dim-0 size and
  // step are replaced (a one-row view is the natural start). An index of `max_rows` or more
  // is out of range (NKI: past the indexed dim's size); 0 bounds it by the whole rows the
  // storage holds after the view's start. Only a DMA takes such a view (nisa::dma_copy
  // gathers or scatters its rows, nisa::dma_compute adds into them) and it cannot be
  // viewed further.
  Tensor rows_at(const Tensor& index, std::int64_t row_step, std::int64_t max_rows = 0,
                 Loc loc = Loc::current()) const;
  bool is_indirect() const { return indirect_ != nullptr; }
  // What a DMA gets for an indirect view: `rows`, every row of the storage the view can
  // reach (row t at t x row_step; the HBM side of isa::DmaIndirect), and the index.
  struct IndirectOperands {
    isa::AccessPattern rows, index;
  };
  IndirectOperands indirect_operands(Loc loc = Loc::current()) const;

  // The (virtual) access pattern an operation on this view gets (ir.h explains the
  // addressing). Dims of size 1 are dropped and adjacent dims merged; more than 4 free dims
  // left is an error.
  isa::AccessPattern ap(Loc loc = Loc::current()) const;
  // The same without dropping or merging dims: one pattern dim per free dim of the view
  // (operations whose attributes count dims, such as tensor_reduce's axes, need it).
  isa::AccessPattern ap_exact(Loc loc = Loc::current()) const;

 private:
  friend class Tracer;
  struct Indirection;  // rows_at's index and row step
  isa::AccessPattern lower(bool merge, Loc loc) const;
  void require_direct(std::string_view what, const Loc& loc) const;
  bool valid_ = false;
  std::uint64_t trace_ = 0;  // the trace that declared the storage (Tracer::serial)
  StorageId storage_ = 0;
  Buffer buffer_ = Buffer::kSbuf;
  DType dtype_ = DType::kFloat32;
  std::int64_t offset_ = 0;
  std::uint32_t partition_offset_ = 0;
  Shape shape_;
  std::vector<std::int64_t> strides_;            // on-chip: strides_[0] is 0 (partition dim)
  isa::Reg dyn_reg_;                             // offset_by: the register, none for a static view
  std::int64_t dyn_bytes_ = 0;                   // ... and the bytes per unit of it
  std::shared_ptr<const Indirection> indirect_;  // rows_at: set for an indirect view
};

// A scale/bias/operand that is an fp32 immediate or a [P, 1] tensor.
using Scalar = std::variant<float, Tensor>;

// ---------------------------------------------------------------------------------------
// Tracing

struct TensorSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
};

using KernelFn = std::function<std::vector<Tensor>(std::span<const Tensor> inputs)>;

struct TraceOptions {
  std::string name = "kernel";
  int num_programs = 1;  // logical core size (NKI kernel[n]); checked against the chip
  // Instructions the whole launch may record. Each costs about 2 KB of host memory through
  // compilation and simulation, so this bounds a run near 8 GB instead of tracing a problem
  // far larger than the chip could run until the host runs out of memory.
  std::uint64_t max_instructions = 4'000'000;
};

// Runs `fn` once per program id with inputs in shared HBM and returns one KernelIr per
// program id. Throws KernelError for anything the kernel does wrong.
std::vector<KernelIr> trace(const KernelFn& fn, std::span<const TensorSpec> inputs,
                            const arch::ChipConfig& chip, const TraceOptions& options = {});

// True while a kernel is being traced on this thread (the nl/nisa calls need a trace).
bool tracing();

// For front ends in other languages (the Python NKI package), which trace through this API on
// behalf of a kernel written in that language: while a SourceOverride lives, every
// declaration, operation and error recorded on its thread is located at `where` (the
// kernel's own file and line) instead of the C++ call site. Overrides nest.
class SourceOverride {
 public:
  explicit SourceOverride(isa::Origin where);
  ~SourceOverride();
  SourceOverride(const SourceOverride&) = delete;
  SourceOverride& operator=(const SourceOverride&) = delete;

 private:
  std::optional<isa::Origin> previous_;
};

// NKI's nl.no_reorder(): while a NoReorder lives, the operations recorded on its thread keep
// their program order when the compiler schedules them (it still picks their engines and
// queues; operations outside the block may move around them). Blocks do not nest: an inner
// one joins the outer.
class NoReorder {
 public:
  explicit NoReorder(Loc loc = Loc::current());
  ~NoReorder();
  NoReorder(const NoReorder&) = delete;
  NoReorder& operator=(const NoReorder&) = delete;

 private:
  // The serial of the trace whose block this one opened (0: none). A serial, not a pointer:
  // a Python block may end after its trace did, and then there is nothing to end.
  std::uint64_t opened_in_ = 0;
};

}  // namespace trnsim::kernel

// =======================================================================================
// nki.language

namespace trnsim::nl {

using kernel::Loc;
using kernel::Shape;
using kernel::Slice;
using kernel::Tensor;
using numerics::DType;

inline constexpr kernel::Buffer sbuf = kernel::Buffer::kSbuf;
inline constexpr kernel::Buffer psum = kernel::Buffer::kPsum;
inline constexpr kernel::Buffer hbm = kernel::Buffer::kPrivateHbm;
inline constexpr kernel::Buffer private_hbm = kernel::Buffer::kPrivateHbm;
inline constexpr kernel::Buffer shared_hbm = kernel::Buffer::kSharedHbm;

// nl.ds(start, size) and the full slice.
inline Slice ds(std::int64_t start, std::int64_t size) {
  return Slice{start, start + size, 1};
}
inline constexpr Slice all{};

// NKI's loop iterators are Python ranges in NKI 0.6; here they are integer ranges for
// range-for, kept for familiarity.
struct Range {
  struct It {
    std::int64_t v, step;
    std::int64_t operator*() const { return v; }
    It& operator++() {
      v += step;
      return *this;
    }
    bool operator!=(const It& o) const { return step > 0 ? v < o.v : v > o.v; }
  };
  std::int64_t lo, hi, step;
  It begin() const { return {lo, step}; }
  It end() const { return {hi, step}; }
};
inline Range affine_range(std::int64_t n) {
  return {0, n, 1};
}
inline Range affine_range(std::int64_t lo, std::int64_t hi, std::int64_t step = 1) {
  return {lo, hi, step};
}
inline Range sequential_range(std::int64_t n) {
  return {0, n, 1};
}
inline Range static_range(std::int64_t n) {
  return {0, n, 1};
}

// Dynamic loops (NKI 0.6), traced once and run on the device (docs/dynamic-loops.md):
// fori_loop runs body(i) for i in range(lower, upper, step), lower and upper ints or
// registers, step a positive int, i a read-only register; while_loop runs
// `r = init; while r != 0: r = body(r)`. State crosses trips through SBUF/HBM only; tiles
// declared in a body are one per trip and not visible after it; loops nest (an inner loop
// runs all its trips on each outer trip) and may not sit inside no_reorder.
using LoopBound = std::variant<std::int32_t, kernel::Register>;
void fori_loop(const LoopBound& lower, const LoopBound& upper,
               const std::function<void(const kernel::Register&)>& body, std::int32_t step = 1,
               Loc loc = Loc::current());
void while_loop(const kernel::Register& init,
                const std::function<kernel::Register(const kernel::Register&)>& body,
                Loc loc = Loc::current());
// The same loop as two calls, for front ends whose loop bodies are not functions (Python's
// deprecated `for i in nl.dynamic_range(n):`): begin returns the loop variable; the body is
// what the kernel records until end_dynamic_loop.
kernel::Register begin_fori_loop(const LoopBound& lower, const LoopBound& upper,
                                 std::int32_t step = 1, Loc loc = Loc::current());
void end_dynamic_loop(Loc loc = Loc::current());

// nl.tile_size and the chip being traced for.
namespace tile_size {
std::int64_t pmax();                  // 128 partitions
std::int64_t gemm_stationary_fmax();  // 128
std::int64_t gemm_moving_fmax();      // 512
std::int64_t psum_bank_fmax();        // fp32 elements per partition of one PSUM bank
std::int64_t psum_num_banks();
std::int64_t bn_stats_fmax();  // 512
std::int64_t sbuf_bytes_per_partition();
}  // namespace tile_size
// The same limits of any chip (what nl.tile_size says outside a kernel).
struct TileSizes {
  std::int64_t pmax, gemm_stationary_fmax, gemm_moving_fmax, psum_bank_fmax, psum_num_banks,
      bn_stats_fmax, sbuf_bytes_per_partition;
};
TileSizes tile_sizes(const arch::ChipConfig& chip);
const arch::ChipConfig& chip();

int program_id(int axis = 0);
int num_programs(int axis = 0);

// Declarations (uninitialised, as NKI's).
Tensor ndarray(Shape shape, DType dtype, kernel::Buffer buffer = sbuf, std::string name = "",
               Loc loc = Loc::current());
// Place an on-chip tile by hand at a byte offset of every partition (NKI address=).
Tensor ndarray_at(Shape shape, DType dtype, kernel::Buffer buffer, std::uint64_t byte_offset,
                  std::string name = "", Loc loc = Loc::current());
Tensor zeros(Shape shape, DType dtype, kernel::Buffer buffer = sbuf, std::string name = "",
             Loc loc = Loc::current());
Tensor full(Shape shape, float value, DType dtype, kernel::Buffer buffer = sbuf,
            std::string name = "", Loc loc = Loc::current());

// NKI's nl.shared_constant: a new shared HBM tensor holding `bytes` (the stored words of
// `dtype`, row-major, exactly shape x element size of them), written before the kernel runs.
// Every program of a logical core must give the same bytes.
Tensor shared_constant(Shape shape, DType dtype, std::vector<std::uint8_t> bytes,
                       std::string name = "", Loc loc = Loc::current());

// NKI's nl.device_print: after a functional run, `prefix` and the values `tensor` (SBUF or
// HBM) held at this point of the program (runtime::LaunchResult::prints). A DMA copies them
// to a private HBM snapshot, so the print costs simulated time, as on hardware. Not inside
// a dynamic loop (every trip would overwrite the one snapshot).
void device_print(const std::string& prefix, const Tensor& tensor, Loc loc = Loc::current());

// NKI's NkiInstruction: the instructions one call recorded, IR indices [first, end) of the
// trace `trace` (Tracer::serial). Take trace_position() before the call and
// recorded_since(it) after it.
struct Recorded {
  std::uint64_t trace = 0;
  std::size_t first = 0, end = 0;
};
std::size_t trace_position(Loc loc = Loc::current());
Recorded recorded_since(std::size_t position, Loc loc = Loc::current());
// NKI's depends_on: `consumer` runs after `producer` even where no data orders them
// (Tracer::add_dependency's rules).
void depends_on(const Recorded& consumer, const Recorded& producer, Loc loc = Loc::current());

// HBM -> a new SBUF tile of the same shape (dtype cast if given); SBUF -> HBM.
Tensor load(const Tensor& src, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
void store(const Tensor& dst, const Tensor& src, Loc loc = Loc::current());
// NKI's `t[key] = value`: copies `src` into the view `dst` of the same shape, by DMA when
// either is in HBM (a PSUM tile through SBUF), else with the engines' tensor_copy (casting to
// dst's dtype); a number fills an on-chip view (memset).
void assign(const Tensor& dst, const Tensor& src, Loc loc = Loc::current());
void assign(const Tensor& dst, float value, Loc loc = Loc::current());
// A new SBUF tile holding `src` (from SBUF or PSUM), cast to dtype if given.
Tensor copy(const Tensor& src, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
// x[K, M]^T... as NKI's nl.matmul(x, y, transpose_x): transpose_x=true means x is already
// [K, M] (stationary layout). Returns a new fp32 PSUM tile [M, N].
Tensor matmul(const Tensor& x, const Tensor& y, bool transpose_x = false, Loc loc = Loc::current());
// A new PSUM tile holding x^T (tensor engine, x <= [128, 128]), of dtype (default x's).
Tensor transpose(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                 Loc loc = Loc::current());

// Elementwise helpers returning new SBUF tiles (dtype defaults to the input's).
Tensor exp(const Tensor& x, Loc loc = Loc::current());
Tensor activation(isa::ActivationFunc func, const Tensor& x, Loc loc = Loc::current());
Tensor add(const Tensor& x, const kernel::Scalar& y, Loc loc = Loc::current());
Tensor subtract(const Tensor& x, const kernel::Scalar& y, Loc loc = Loc::current());
Tensor multiply(const Tensor& x, const kernel::Scalar& y, Loc loc = Loc::current());
Tensor maximum(const Tensor& x, const kernel::Scalar& y, Loc loc = Loc::current());
// Remainders of x / y: mod has y's sign (NumPy mod), fmod x's (C fmod).
Tensor mod(const Tensor& x, const kernel::Scalar& y, Loc loc = Loc::current());
Tensor fmod(const Tensor& x, const kernel::Scalar& y, Loc loc = Loc::current());
// Rounding to an integral value, one VectorE scalar_tensor_tensor each: floor(x) = x - mod(x,
// 1), ceil(x) = x - mod(x, -1), trunc(x) = x - fmod(x, 1) (docs/isa.md: their edge cases).
// Into a new SBUF tile of dtype (default x's; fp32 for a PSUM x).
Tensor floor(const Tensor& x, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
Tensor ceil(const Tensor& x, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
Tensor trunc(const Tensor& x, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
// tan(x) = sin(r) / cos(r) with r = fmod(x, pi) (ScalarE's sin takes [-pi, pi]).
Tensor tan(const Tensor& x, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
// sin and cos for any finite x: r = fmod(x, 2 pi) (exact), then ScalarE's sin and cos, which
// take [-pi, pi], of r / 2: sin x = 2 sin(r/2) cos(r/2), cos x = 1 - 2 sin(r/2)^2. A few ulp
// of the result's magnitude (cos: of 1); -0 stays -0 in sin; infinities give NaN.
Tensor sin(const Tensor& x, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
Tensor cos(const Tensor& x, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
// Bitwise NOT of an integer tile (VectorE tensor_scalar with invert).
Tensor invert(const Tensor& x, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
// Reductions over the last free dim into a new [P, 1] fp32 tile.
Tensor max(const Tensor& x, Loc loc = Loc::current());
Tensor sum(const Tensor& x, Loc loc = Loc::current());
// Row-wise numerically stable softmax over the last free dim of an on-chip tile, into a new
// SBUF tile of dtype (default x's; fp32 for a PSUM x).
Tensor softmax(const Tensor& x, std::optional<DType> dtype = std::nullopt,
               Loc loc = Loc::current());

}  // namespace trnsim::nl

// =======================================================================================
// nki.isa: one call per instruction, dst first

namespace trnsim::nisa {

using isa::AccumulateMode;
using isa::ActivationFunc;
using isa::AluOp;
using isa::Engine;
using isa::ReduceCmd;
using kernel::Loc;
using kernel::Scalar;
using kernel::Tensor;

// Options every instruction takes: the engine (unset = the compiler's choice among the
// engines that can run it), the rounding mode and a name (NKI name=, used by the profiler).
struct Common {
  std::optional<Engine> engine;
  isa::RoundingMode rounding = isa::RoundingMode::kNearestEven;
  std::string name;
};

struct MatmulOptions {
  // true: add into dst (PSUM accumulation); false: overwrite; unset (NKI's accumulate=None):
  // the first matmul write to a PSUM location overwrites, later ones add.
  std::optional<bool> accumulate = false;
  bool is_transpose = false;
  isa::MatmulPerfMode perf_mode = isa::MatmulPerfMode::kNone;
  std::uint32_t tile_row = 0, tile_col = 0, tile_rows = 0, tile_cols = 0;
  std::string name;
};
// dst[M, N] (+)= stationary[K, M]^T @ moving[K, N].
void nc_matmul(const Tensor& dst, const Tensor& stationary, const Tensor& moving,
               const MatmulOptions& options = {}, Loc loc = Loc::current());
// MX: x4-packed data [K/4 words per partition...], E8M0 scales (docs/isa.md).
void nc_matmul_mx(const Tensor& dst, const Tensor& stationary, const Tensor& moving,
                  const Tensor& stationary_scale, const Tensor& moving_scale,
                  const MatmulOptions& options = {}, Loc loc = Loc::current());
void nc_transpose(const Tensor& dst, const Tensor& data, const Common& common = {},
                  Loc loc = Loc::current());

struct ActivationOptions {
  Scalar scale = 1.0f;
  Scalar bias = 0.0f;
  std::optional<Tensor> reduce_res;  // [P, 1]: per-partition sum of the result
  Common common;
};
void activation(const Tensor& dst, ActivationFunc func, const Tensor& data,
                const ActivationOptions& options = {}, Loc loc = Loc::current());

struct Activate2Options {
  bool reverse0 = false;             // imm0 op0 data
  bool reverse1 = false;             // imm1 op1 (...)
  Scalar relu_param = 0.0f;          // prelu's slope: a number or a [P, 1] tile
  AluOp reduce_op = AluOp::kAdd;     // add, maximum, minimum, abs_max or abs_min
  std::optional<Tensor> reduce_res;  // [P, 1]: reduce_op over each partition's results
  Common common;
};
// dst = func((data op0 imm0) op1 imm1), NeuronCore-v4 Scalar engine; (op0, op1) is one of
// (multiply, add|subtract|bypass), (add|subtract|bypass, bypass); imm0/imm1 numbers or
// [P, 1] tiles.
void activate2(const Tensor& dst, ActivationFunc func, const Tensor& data, const Scalar& imm0,
               const Scalar& imm1, AluOp op0, AluOp op1, const Activate2Options& options = {},
               Loc loc = Loc::current());

void tensor_tensor(const Tensor& dst, const Tensor& data1, const Tensor& data2, AluOp op,
                   const Common& common = {}, Loc loc = Loc::current());

struct TensorScalarOptions {
  bool reverse0 = false;
  AluOp op1 = AluOp::kBypass;
  Scalar operand1 = 0.0f;
  bool reverse1 = false;
  Common common;
};
void tensor_scalar(const Tensor& dst, const Tensor& data, AluOp op0, const Scalar& operand0,
                   const TensorScalarOptions& options = {}, Loc loc = Loc::current());
struct TensorScalarReduceOptions {
  std::optional<Tensor> reduce_res;  // [P, 1]: reduce_op over each partition's results
  bool reverse0 = false;             // operand0 op0 data instead of data op0 operand0
  bool reduce_res_negate = false;    // reduce_res gets -(the reduction)
  Common common;
};
// dst = data op0 operand0 (an arithmetic operator; operand0 a number or a [P, 1] tile) and,
// into reduce_res, reduce_op (add, multiply, maximum, minimum) over each partition's results.
void tensor_scalar_reduce(const Tensor& dst, const Tensor& data, AluOp op0, const Scalar& operand0,
                          AluOp reduce_op, const TensorScalarReduceOptions& options = {},
                          Loc loc = Loc::current());
struct TensorScalarCumulativeOptions {
  Scalar imm1 = 0.0f;  // the accumulator's start value, with reduce_cmd = load_reduce
  ReduceCmd reduce_cmd = ReduceCmd::kResetReduce;
  Common common;
};
// A running scan along each partition: acc = op1(data op0 imm0, acc), dst = acc at every
// element (op1: add, subtract, multiply, maximum, minimum). reduce_cmd = reduce continues
// from where the previous cumulative instruction left the lane's accumulator.
void tensor_scalar_cumulative(const Tensor& dst, const Tensor& src, AluOp op0, AluOp op1,
                              const Scalar& imm0, const TensorScalarCumulativeOptions& options = {},
                              Loc loc = Loc::current());
struct ScalarTensorTensorOptions {
  bool reverse0 = false;  // operand0 op0 data instead of data op0 operand0
  bool reverse1 = false;  // operand1 op1 (...) instead of (...) op1 operand1
  Common common;
};
void scalar_tensor_tensor(const Tensor& dst, const Tensor& data, AluOp op0, const Scalar& operand0,
                          AluOp op1, const Tensor& operand1,
                          const ScalarTensorTensorOptions& options = {}, Loc loc = Loc::current());

struct ReduceOptions {
  std::uint32_t axes = 1;  // innermost free dims reduced
  bool negate = false;
  Common common;
};
void tensor_reduce(const Tensor& dst, const Tensor& data, AluOp op,
                   const ReduceOptions& options = {}, Loc loc = Loc::current());
void tensor_partition_reduce(const Tensor& dst, const Tensor& data, AluOp op,
                             const Common& common = {}, Loc loc = Loc::current());
void tensor_copy(const Tensor& dst, const Tensor& src, const Common& common = {},
                 Loc loc = Loc::current());
struct CopyPredicatedOptions {
  bool reverse_pred = false;  // copy where the predicate is zero instead
  Common common;
};
// dst = src where predicate (uint8/16/32, dst's shape) is non-zero, else dst keeps its value;
// src is a tile of dst's shape and dtype, or a number.
void tensor_copy_predicated(const Tensor& dst, const Scalar& src, const Tensor& predicate,
                            const CopyPredicatedOptions& options = {}, Loc loc = Loc::current());
void tensor_tensor_scan(const Tensor& dst, const Tensor& data0, const Tensor& data1,
                        const Scalar& initial, AluOp op0, AluOp op1, const Common& common = {},
                        Loc loc = Loc::current());
void bn_stats(const Tensor& dst, const Tensor& data, const Common& common = {},
              Loc loc = Loc::current());
void bn_aggr(const Tensor& dst, const Tensor& data, const Common& common = {},
             Loc loc = Loc::current());
void select(const Tensor& dst, const Tensor& predicate, const Tensor& on_true,
            const Scalar& on_false, const Common& common = {}, Loc loc = Loc::current());

struct AffineOptions {
  std::vector<isa::Dim> pattern;  // [step, count] per free dim, major to minor
  std::int32_t offset = 0;
  std::int32_t channel_multiplier = 0;
  Common common;
};
void iota(const Tensor& dst, const AffineOptions& options, Loc loc = Loc::current());
// dst = cmp_op(offset + channel_multiplier * p + pattern . i, 0) ? on_true : on_false_value
void affine_select(const Tensor& dst, const Tensor& on_true, AluOp cmp_op, float on_false_value,
                   const AffineOptions& options, Loc loc = Loc::current());
struct RangeSelectOptions {
  std::optional<Tensor> reduce_res;  // [P, 1]: per-partition maximum of the result
  std::int32_t range_start = 0;      // the index of the first free element
  float on_false_value = -3.4028234663852886e38f;
  Common common;
};
// dst[p, i] = on_true[p, i] where (range_start + i) comp_op0 bound0 and comp_op1 bound1,
// else on_false_value (bounds: numbers or [P, 1] tiles).
void range_select(const Tensor& dst, const Tensor& on_true, AluOp comp_op0, AluOp comp_op1,
                  const Scalar& bound0, const Scalar& bound1,
                  const RangeSelectOptions& options = {}, Loc loc = Loc::current());
// Within each 32-partition quadrant, dst partition k gets src partition mask[k] (255: dst
// partition k is left as it is).
void nc_stream_shuffle(const Tensor& dst, const Tensor& src,
                       const std::array<std::uint8_t, 32>& mask, const Common& common = {},
                       Loc loc = Loc::current());
void memset(const Tensor& dst, float value, const Common& common = {}, Loc loc = Loc::current());
void max8(const Tensor& dst, const Tensor& src, const Common& common = {},
          Loc loc = Loc::current());
void nc_find_index8(const Tensor& dst, const Tensor& data, const Tensor& vals,
                    const Common& common = {}, Loc loc = Loc::current());

// Per partition, vals[P, 8] from the last to the first: the first element of data equal to
// the value that no other value replaced becomes imm in dst; dst_idx (uint16/uint32 [P, 8])
// gets its index, all ones when there is none.
void nc_match_replace8(const Tensor& dst, const Tensor& data, const Tensor& vals, float imm,
                       const std::optional<Tensor>& dst_idx = std::nullopt,
                       const Common& common = {}, Loc loc = Loc::current());

struct ExponentialOptions {
  Scalar max_value = 0.0f;
  std::optional<Tensor> reduce_res;
  Common common;
};
void exponential(const Tensor& dst, const Tensor& src, const ExponentialOptions& options = {},
                 Loc loc = Loc::current());
void reciprocal(const Tensor& dst, const Tensor& data, const Common& common = {},
                Loc loc = Loc::current());
void quantize_mx(const Tensor& dst, const Tensor& src, const Tensor& dst_scale,
                 const Common& common = {}, Loc loc = Loc::current());
void local_gather(const Tensor& dst, const Tensor& src, const Tensor& index,
                  std::uint32_t num_elem_per_idx = 1, const Common& common = {},
                  Loc loc = Loc::current());
void rand2(const Tensor& dst, float min, float max, const Common& common = {},
           Loc loc = Loc::current());
// The engine's per-partition XORWOW state (6 uint32 per partition on GpSimd, the default;
// 24 on the gen4 Vector engine): load it / store it.
void rand_set_state(const Tensor& src_seeds, const Common& common = {}, Loc loc = Loc::current());
void rand_get_state(const Tensor& dst, const Common& common = {}, Loc loc = Loc::current());
// 32 random bits per element, truncated to dst's integer dtype (Vector by default, or GpSimd
// from gen3).
void rng(const Tensor& dst, const Common& common = {}, Loc loc = Loc::current());
// Re-seeds the Vector engine's generators from a [1, 1] 32-bit tile.
void set_rng_seed(const Tensor& src_seeds, const Common& common = {}, Loc loc = Loc::current());
// dst = data with each element zeroed with probability prob (a number or a [P, 1] tile).
void dropout(const Tensor& dst, const Tensor& data, const Scalar& prob, const Common& common = {},
             Loc loc = Loc::current());
// dst [1, 2, N]: each segment id's [start, end) (a run of equal non-zero ids); 0 is padding.
void sequence_bounds(const Tensor& dst, const Tensor& segment_ids, const Common& common = {},
                     Loc loc = Loc::current());
// On partitions 0, 16, ..., 112: indices of the non-zeros (+ index_offset), padding, count.
void nonzero_with_count(const Tensor& dst, const Tensor& src, std::int32_t index_offset = 0,
                        std::int32_t padding_val = -1, const Common& common = {},
                        Loc loc = Loc::current());
// dst[p, i] = data[p, indices[p, i]] over data's flattened free dims (uint32 indices).
void nc_n_gather(const Tensor& dst, const Tensor& data, const Tensor& indices,
                 const Common& common = {}, Loc loc = Loc::current());
// The K = val_dst.shape[1] largest of n bf16 values in each 16-partition snake, ascending.
void topk(const Tensor& val_dst, const Tensor& idx_dst, const Tensor& src, std::uint32_t n,
          const Common& common = {}, Loc loc = Loc::current());
// A registered GpSimd operator (sim::register_custom_op) over SBUF tiles.
void custom_op(const std::string& op, const std::vector<Tensor>& outputs,
               const std::vector<Tensor>& inputs, std::vector<float> params = {},
               std::uint64_t cost_cycles = 0, Loc loc = Loc::current());

struct DmaOptions {
  std::optional<std::uint8_t> queue;  // DMA queue; unset = the compiler's choice
  isa::DmaAccumulate accumulate = isa::DmaAccumulate::kNone;
  isa::OobMode oob = isa::OobMode::kError;  // an indirect view's out-of-range indices
  isa::RoundingMode rounding = isa::RoundingMode::kNearestEven;
  std::string name;
};
// With an indirect view (Tensor::rows_at) as src or dst: a gather or scatter of its rows.
void dma_copy(const Tensor& dst, const Tensor& src, const DmaOptions& options = {},
              Loc loc = Loc::current());
void dma_transpose(const Tensor& dst, const Tensor& src, const DmaOptions& options = {},
                   Loc loc = Loc::current());
void dma_indirect(const Tensor& dst, const Tensor& src, const Tensor& index, isa::IndirectMode mode,
                  const DmaOptions& options = {}, Loc loc = Loc::current());
// dst = srcs[0] + srcs[1] + ... on a DMA engine (fp32 inside, left to right; 1 to 16
// sources of dst's element count; reduce_op add only, as NKI 0.6's dma_compute). With an
// indirect view (Tensor::rows_at) it is NKI's read-modify-write: two sources, one of them
// dst itself; a scatter dst(HBM rows) = dst + src(SBUF) or a gather dst(SBUF) = dst +
// src(HBM rows).
void dma_compute(const Tensor& dst, const std::vector<Tensor>& srcs, AluOp reduce_op = AluOp::kAdd,
                 const DmaOptions& options = {}, Loc loc = Loc::current());

// Barrier across the physical cores of the logical core being traced (LNC >= 2).
void core_barrier(Loc loc = Loc::current());
// NKI 0.6 sendrecv: sends this core's SBUF tile `src` to program `send_to_rank` of the logical
// core and receives program `recv_from_rank`'s into the SBUF tile `dst` (same dtype and shape
// on every side). Calls pair by `pipe_id` in program order: each core's k-th call on a pipe
// meets its peer's k-th. Completes when both transfers have (NeuronCore-v3 on).
void sendrecv(const Tensor& src, const Tensor& dst, int send_to_rank, int recv_from_rank,
              int pipe_id, const DmaOptions& options = {}, Loc loc = Loc::current());

// Registers (NKI 0.6 nisa.register_*): a new register (value, or 0), dst = src or an
// immediate, dst = the one integer element of src, the one integer element of dst = src.
kernel::Register register_alloc(std::optional<std::int32_t> value = std::nullopt,
                                Loc loc = Loc::current());
void register_move(const kernel::Register& dst, const kernel::Register& src,
                   Loc loc = Loc::current());
void register_move(const kernel::Register& dst, std::int32_t value, Loc loc = Loc::current());
void register_load(const kernel::Register& dst, const Tensor& src, Loc loc = Loc::current());
void register_store(const Tensor& dst, const kernel::Register& src, Loc loc = Loc::current());

}  // namespace trnsim::nisa
