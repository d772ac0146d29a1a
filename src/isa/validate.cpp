// Static checks of instructions. Every rule is listed, with its source, in docs/isa.md
// ("Validation rules"); keep the two in step.
#include "isa/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>

namespace trnsim::isa {

std::string Violation::to_string() const {
  std::string where = fmt::format("instruction {} ({}", index, op);
  if (origin != Origin{}) {
    where += fmt::format(" at {}:{}:{}", origin.file, origin.line, origin.column);
  }
  where += ')';
  if (!operand.empty()) where += fmt::format(": operand '{}'", operand);
  return where + ": " + message;
}

namespace {

std::string join_messages(const std::vector<Violation>& violations) {
  std::string text =
      fmt::format("{} ISA violation{}", violations.size(), violations.size() == 1 ? "" : "s");
  for (const Violation& v : violations) text += "\n  " + v.to_string();
  return text;
}

}  // namespace

ValidationError::ValidationError(std::vector<Violation> violations)
    : std::runtime_error(join_messages(violations)), violations_(std::move(violations)) {}

namespace {

using arch::Generation;
using numerics::DType;

// Hardware access-pattern fields (ARCH-v2 / nki-aps): dim sizes are uint16, steps int16.
constexpr std::uint64_t kMaxDimCount = 65535;
constexpr std::int64_t kMinDimStep = -32768;
constexpr std::int64_t kMaxDimStep = 32767;
constexpr std::uint64_t kBnStatsFreeMax = 512;  // nl.tile_size.bn_stats_fmax
constexpr std::uint64_t kMax8FreeMin = 8;       // max8 / nc_find_index8 source range
constexpr std::uint64_t kMax8FreeMax = 16384;
constexpr std::uint64_t kRangeSelectIndexLimit = std::uint64_t{1} << 24;
constexpr std::uint32_t kQuadrant = 32;  // partitions per Vector cross-partition bank
constexpr std::uint64_t kVectorTransposeMax = 32;
constexpr std::uint64_t kGpSimdPartitionsPerCore = 16;
constexpr std::uint64_t kLocalGatherIndicesPerCore = 4096;
constexpr std::uint8_t kMaxDmaPriority = 3;

std::uint64_t as_count(double value) {
  return value <= 0 ? 0 : static_cast<std::uint64_t>(value);
}

std::string shape_of(const AccessPattern& ap) {
  return fmt::format("[{}, {}]", ap.partitions, ap.free_elements());
}

bool is_fp32_class(DType t) {
  return t == DType::kFloat32 || t == DType::kTFloat32;
}
bool is_fp8(DType t) {
  return t == DType::kFloat8E4M3 || t == DType::kFloat8E5M2;
}
bool is_unpacked_sub_byte(DType t) {
  return t == DType::kFloat6E3M2 || t == DType::kFloat6E2M3 || t == DType::kFloat4E2M1;
}
bool one_of(DType t, std::initializer_list<DType> allowed) {
  return std::find(allowed.begin(), allowed.end(), t) != allowed.end();
}
bool one_of(AluOp op, std::initializer_list<AluOp> allowed) {
  return std::find(allowed.begin(), allowed.end(), op) != allowed.end();
}
std::string dtype_list(std::initializer_list<DType> allowed) {
  std::string text;
  for (DType t : allowed) {
    if (!text.empty()) text += ", ";
    text += numerics::name(t);
  }
  return text;
}
std::string alu_list(std::initializer_list<AluOp> allowed) {
  std::string text;
  for (AluOp op : allowed) {
    if (!text.empty()) text += ", ";
    text += alu_op_name(op);
  }
  return text;
}
std::string engine_list(std::uint8_t engines) {
  std::string text;
  for (int e = 0; e < kNumEngines; ++e) {
    if ((engines & engine_bit(static_cast<Engine>(e))) == 0) continue;
    if (!text.empty()) text += ", ";
    text += engine_name(static_cast<Engine>(e));
  }
  return text;
}

constexpr std::initializer_list<AluOp> kComparisonOps = {AluOp::kEqual,   AluOp::kNotEqual,
                                                         AluOp::kGreater, AluOp::kGreaterEqual,
                                                         AluOp::kLess,    AluOp::kLessEqual};

class Checker {
 public:
  Checker(const Instruction& inst_in, std::size_t index, const arch::ChipConfig& config)
      : inst(inst_in), chip(config), engine(inst_in.queue.engine), index_(index) {}

  void add(std::string_view operand, std::string message) {
    violations_.push_back(Violation{index_, std::string(op_name(inst.op)), inst.origin,
                                    std::string(operand), std::move(message)});
  }
  std::vector<Violation> take() { return std::move(violations_); }

  Generation generation() const { return chip.generation; }
  std::string core() const { return arch::core_name(chip.generation); }
  bool at_least(Generation g) const {
    return static_cast<int>(chip.generation) >= static_cast<int>(g);
  }

  // "<what> needs NeuronCore-vN or newer".
  void require_generation(Generation g, std::string_view what, std::string_view operand = "") {
    if (!at_least(g)) {
      add(operand,
          fmt::format("{} needs {} or newer (this chip is {})", what, arch::core_name(g), core()));
    }
  }
  void require_memory(std::string_view name, const AccessPattern& ap,
                      std::initializer_list<Memory> allowed) {
    if (std::find(allowed.begin(), allowed.end(), ap.memory) != allowed.end()) return;
    std::string names;
    for (Memory m : allowed) names += std::string(names.empty() ? "" : " or ") += memory_name(m);
    add(std::string(name), fmt::format("must be in {}, not {}", names, memory_name(ap.memory)));
  }
  void require_dtype(std::string_view name, const AccessPattern& ap,
                     std::initializer_list<DType> allowed) {
    if (!one_of(ap.dtype, allowed)) {
      add(std::string(name), fmt::format("dtype {} is not allowed here (allowed: {})",
                                         numerics::name(ap.dtype), dtype_list(allowed)));
    }
  }
  void require_integer(std::string_view name, const AccessPattern& ap, std::string_view why) {
    if (!numerics::is_integer(ap.dtype)) {
      add(std::string(name), fmt::format("dtype {} is not an integer type, as {} requires",
                                         numerics::name(ap.dtype), why));
    }
  }
  // Same partitions and the same number of elements per partition.
  void require_same_shape(std::string_view name, const AccessPattern& ap,
                          std::string_view reference_name, const AccessPattern& reference) {
    if (ap.partitions != reference.partitions || ap.free_elements() != reference.free_elements()) {
      add(std::string(name),
          fmt::format("shape {} does not match {} {} (same partitions and elements per "
                      "partition required)",
                      shape_of(ap), reference_name, shape_of(reference)));
    }
  }
  void require_free(std::string_view name, const AccessPattern& ap, std::uint64_t expected,
                    std::string_view why) {
    if (ap.free_elements() != expected) {
      add(std::string(name), fmt::format("has {} elements per partition; {} needs {}",
                                         ap.free_elements(), why, expected));
    }
  }
  void require_free_at_most(std::string_view name, const AccessPattern& ap, std::uint64_t limit,
                            std::string_view what) {
    if (ap.free_elements() > limit) {
      add(std::string(name), fmt::format("free size {} exceeds the limit {} ({}) of {}",
                                         ap.free_elements(), limit, what, core()));
    }
  }
  void require_partitions(std::string_view name, const AccessPattern& ap, std::uint64_t expected,
                          std::string_view why) {
    if (ap.partitions != expected) {
      add(std::string(name),
          fmt::format("has {} partitions; {} needs {}", ap.partitions, why, expected));
    }
  }
  // A [P, 1] per-partition operand (tensor_scalar operands, activation scale/bias, ...).
  void require_per_partition(std::string_view name, const AccessPattern& ap,
                             std::uint32_t partitions) {
    if (ap.partitions != partitions || ap.free_elements() != 1) {
      add(std::string(name), fmt::format("a per-partition operand must have shape [{}, 1], not {}",
                                         partitions, shape_of(ap)));
    }
  }
  void require_per_partition(std::string_view name, const ScalarOperand& operand,
                             std::uint32_t partitions) {
    if (const auto* ap = std::get_if<AccessPattern>(&operand)) {
      require_per_partition(name, *ap, partitions);
    }
  }
  void require_alu(std::string_view field, AluOp op, std::initializer_list<AluOp> allowed) {
    if (!one_of(op, allowed)) {
      add(std::string(field), fmt::format("operator {} is not allowed here (allowed: {})",
                                          alu_op_name(op), alu_list(allowed)));
    }
  }
  void forbid_alu(std::string_view field, AluOp op, AluOp forbidden, std::string_view why) {
    if (op == forbidden)
      add(std::string(field), fmt::format("operator {} {}", alu_op_name(op), why));
  }
  void forbid_both_psum(std::string_view a_name, const AccessPattern& a, std::string_view b_name,
                        const AccessPattern& b) {
    if (a.memory == Memory::kPsum && b.memory == Memory::kPsum) {
      add(std::string(b_name),
          fmt::format("'{}' and '{}' may not both be in psum", a_name, b_name));
    }
  }
  void require_engine(Engine required, std::string_view why) {
    if (engine != required) {
      add("", fmt::format("{} runs only on {} (queued on {})", why, engine_name(required),
                          engine_name(engine)));
    }
  }

  const Instruction& inst;
  const arch::ChipConfig& chip;
  Engine engine;

 private:
  std::size_t index_;
  std::vector<Violation> violations_;
};

// Operands whose dtype may be an x4-packed MX type: MX matmul data, quantize_mx output,
// memset (of zero) and raw DMA moves. Everywhere else the engines cannot compute on them.
bool accepts_mx_packed(std::string_view mnemonic, std::string_view operand) {
  if (mnemonic == NcMatmulMx::kName) return operand == "stationary" || operand == "moving";
  if (mnemonic == QuantizeMx::kName || mnemonic == Memset::kName) return operand == "dst";
  return mnemonic == DmaCopy::kName && (operand == "dst" || operand == "src");
}

// The start-partition rule of ARCH-v2: 65-128 partitions start at 0; 33-64 at 0 or 64;
// 1-32 at a multiple of 32.
bool start_partition_allowed(std::uint32_t start, std::uint32_t partitions) {
  if (partitions > 64) return start == 0;
  if (partitions > 32) return start == 0 || start == 64;
  return start % 32 == 0;
}

void check_pattern_dims(Checker& c, std::string_view name, std::uint8_t num_dims,
                        const std::array<Dim, kMaxFreeDims>& dims, bool on_chip) {
  if (num_dims < 1 || num_dims > kMaxFreeDims) {
    c.add(name, fmt::format("{} free dimensions; 1 to {} are supported", num_dims, kMaxFreeDims));
    return;
  }
  for (int k = 0; k < num_dims; ++k) {
    const Dim& dim = dims[k];
    if (dim.count == 0) c.add(name, fmt::format("dimension {} has count 0", k));
    if (!on_chip) continue;
    if (dim.count > kMaxDimCount) {
      c.add(name, fmt::format("dimension {} count {} exceeds the hardware limit {} (uint16)", k,
                              dim.count, kMaxDimCount));
    }
    if (dim.step < kMinDimStep || dim.step > kMaxDimStep) {
      c.add(name, fmt::format("dimension {} step {} is outside the hardware range {}..{} (int16)",
                              k, dim.step, kMinDimStep, kMaxDimStep));
    }
  }
}

void check_operand(Checker& c, std::string_view name, const AccessPattern& ap) {
  const bool on_chip = ap.memory != Memory::kHbm;
  check_pattern_dims(c, name, ap.num_dims, ap.dims, on_chip);

  if (on_chip) {
    const bool sbuf = ap.memory == Memory::kSbuf;
    const std::uint64_t partitions =
        as_count(sbuf ? c.chip.sbuf.partitions : c.chip.psum.partitions);
    const std::uint64_t bytes =
        as_count(sbuf ? c.chip.sbuf.bytes_per_partition : c.chip.psum.bytes_per_partition);
    if (ap.partitions == 0 || ap.partitions > partitions) {
      c.add(name, fmt::format("{} partitions; 1 to {} are allowed", ap.partitions, partitions));
    } else if (std::uint64_t{ap.start_partition} + ap.partitions > partitions) {
      c.add(name,
            fmt::format("partitions {}..{} run past the last partition {}", ap.start_partition,
                        std::uint64_t{ap.start_partition} + ap.partitions - 1, partitions - 1));
    } else if (!start_partition_allowed(ap.start_partition, ap.partitions)) {
      c.add(name, fmt::format("start partition {} is not allowed for {} partitions (65-128 "
                              "partitions start at 0, 33-64 at 0 or 64, 1-32 at a multiple of 32)",
                              ap.start_partition, ap.partitions));
    }
    if (ap.partition_step != 0) {
      c.add(name, "partition_step must be 0 on chip (partitions are always consecutive)");
    }
    const auto [lo, hi] = ap.byte_span();
    if (lo < 0 || static_cast<std::uint64_t>(hi) > bytes) {
      c.add(name, fmt::format("bytes [{}, {}) lie outside the {} bytes per partition of {} on {}",
                              lo, hi, bytes, memory_name(ap.memory), c.core()));
    }
    if (ap.offset % ap.element_bytes() != 0) {
      c.add(name, fmt::format("offset {} is not a multiple of the {}-byte {} element", ap.offset,
                              ap.element_bytes(), numerics::name(ap.dtype)));
    }
  } else {
    if (ap.partitions == 0) c.add(name, "0 partitions");
    if (ap.start_partition != 0) {
      c.add(name, "start_partition must be 0 in hbm (the offset is the address)");
    }
    if (ap.byte_span().first < 0) c.add(name, "pattern reaches below address 0");
  }

  // Which engines reach which memory (ARCH-v2; ISA).
  if (c.engine != Engine::kDma && ap.memory == Memory::kHbm) {
    c.add(name,
          fmt::format("the {} engine cannot access hbm (only DMA can)", engine_name(c.engine)));
  }
  if (c.engine == Engine::kGpSimd && ap.memory == Memory::kPsum) {
    c.add(name, "the gpsimd engine cannot access psum");
  }
  if (c.engine == Engine::kDma && ap.memory == Memory::kPsum) {
    c.add(name, "DMA cannot access psum (dma_copy moves between hbm and sbuf)");
  }

  // Per-instruction free size of the elementwise engines (ARCH-v2: 64K from SBUF, 4K from
  // PSUM).
  if (c.engine == Engine::kVector || c.engine == Engine::kScalar) {
    const auto& config = c.engine == Engine::kVector ? c.chip.vector : c.chip.scalar;
    const bool psum = ap.memory == Memory::kPsum;
    const std::uint64_t limit = as_count(psum ? config.free_max_psum : config.free_max_sbuf);
    if (ap.free_elements() > limit) {
      c.add(name, fmt::format("free size {} exceeds the limit {} of the {} engine reading {} on {}",
                              ap.free_elements(), limit, engine_name(c.engine),
                              memory_name(ap.memory), c.core()));
    }
  }

  // Dtypes.
  if (is_unpacked_sub_byte(ap.dtype)) {
    c.add(name, fmt::format("dtype {} is not an NKI tensor dtype (FP4/FP6 exist only x4-packed)",
                            numerics::name(ap.dtype)));
  }
  if (numerics::is_mx_packed(ap.dtype)) {
    c.require_generation(Generation::kGen4, fmt::format("dtype {}", numerics::name(ap.dtype)),
                         name);
    if (!accepts_mx_packed(op_name(c.inst.op), name)) {
      c.add(name, fmt::format("x4-packed dtype {} cannot be used by {}", numerics::name(ap.dtype),
                              op_name(c.inst.op)));
    }
  }
}

// The access patterns among an operation's fields; list operands are named "name[i]".
template <class T>
void check_member(Checker&, std::string_view, const T&) {}
void check_member(Checker& c, std::string_view name, const AccessPattern& ap) {
  check_operand(c, name, ap);
}
void check_member(Checker& c, std::string_view name, const std::optional<AccessPattern>& ap) {
  if (ap) check_operand(c, name, *ap);
}
void check_member(Checker& c, std::string_view name, const ScalarOperand& operand) {
  if (const auto* ap = std::get_if<AccessPattern>(&operand)) check_operand(c, name, *ap);
}
void check_member(Checker& c, std::string_view name, const std::vector<AccessPattern>& aps) {
  for (std::size_t i = 0; i < aps.size(); ++i)
    check_operand(c, fmt::format("{}[{}]", name, i), aps[i]);
}

// PE-array tiling (tile_position / tile_size): sizes 128, 64 or 32 (32 from NeuronCore-v3),
// positions multiples of the size inside the array; 0/0 = whole array.
void check_tiling(Checker& c, std::string_view position_name, std::uint32_t position,
                  std::string_view size_name, std::uint32_t size, std::uint64_t array) {
  if (size == 0) {
    if (position != 0) {
      c.add(std::string(position_name),
            fmt::format("{} {} needs {} to be set", position_name, position, size_name));
    }
    return;
  }
  if (size != 128 && size != 64 && size != 32) {
    c.add(std::string(size_name), fmt::format("tile size {} must be 128, 64 or 32", size));
    return;
  }
  if (size == 32) c.require_generation(Generation::kGen3, "a 32-wide tile", std::string(size_name));
  if (position % size != 0 || std::uint64_t{position} + size > array) {
    c.add(std::string(position_name),
          fmt::format("tile position {} must be a multiple of the tile size {} within the {} PE "
                      "rows/columns",
                      position, size, array));
  }
}

std::uint64_t psum_bank_bytes_of(const arch::ChipConfig& chip) {
  const std::uint64_t banks = as_count(chip.psum.banks);
  return banks == 0 ? 0 : as_count(chip.psum.bytes_per_partition) / banks;
}

// Moving free limit for a PSUM output dtype.
std::uint64_t moving_free_limit(const Checker& c, DType dst) {
  if (dst == DType::kBFloat16 && c.chip.tensor.has_bf16_psum) {
    return as_count(c.chip.tensor.moving_free_max_bf16);
  }
  return as_count(c.chip.tensor.moving_free_max);
}

void check_psum_output_dtype(Checker& c, const AccessPattern& dst, bool allow_input_dtype,
                             DType input) {
  if (dst.dtype == DType::kFloat32) return;
  if (dst.dtype == DType::kBFloat16 && c.chip.tensor.has_bf16_psum) return;
  if (allow_input_dtype && dst.dtype == input) return;
  c.add("dst", fmt::format("matmul output dtype {} is not supported on {} (float32{})",
                           numerics::name(dst.dtype), c.core(),
                           c.chip.tensor.has_bf16_psum ? " or bfloat16" : ""));
}

// v2/v3 matmul output must fit one PSUM bank (the accumulation group); v4 may span banks.
void check_psum_bank(Checker& c, const AccessPattern& dst) {
  if (c.at_least(Generation::kGen4) || dst.memory != Memory::kPsum) return;
  const std::uint64_t bank = psum_bank_bytes_of(c.chip);
  if (bank == 0) return;
  const auto [lo, hi] = dst.byte_span();
  if (lo < 0 || hi <= lo) return;
  if (static_cast<std::uint64_t>(lo) / bank != static_cast<std::uint64_t>(hi - 1) / bank) {
    c.add("dst", fmt::format("bytes [{}, {}) cross a {}-byte psum bank boundary; on {} a matmul "
                             "output must lie within one bank",
                             lo, hi, bank, c.core()));
  }
}

// ---------------------------------------------------------------------------------------
// Per-operation rules. One overload per operation and no generic fallback, so that a new
// operation does not compile until its rules are written (even if there are none).

void check_op(Checker& c, const NcMatmul& op) {
  c.require_memory("stationary", op.stationary, {Memory::kSbuf});
  c.require_memory("moving", op.moving, {Memory::kSbuf});
  c.require_memory("dst", op.dst, {Memory::kPsum});
  const std::initializer_list<DType> kInputs = {DType::kFloat32,    DType::kTFloat32,
                                                DType::kBFloat16,   DType::kFloat16,
                                                DType::kFloat8E4M3, DType::kFloat8E5M2};
  c.require_dtype("stationary", op.stationary, kInputs);
  c.require_dtype("moving", op.moving, kInputs);
  if (is_fp32_class(op.stationary.dtype) != is_fp32_class(op.moving.dtype)) {
    c.add("moving",
          fmt::format("{} stationary with {} moving: a float32/tfloat32 input needs a "
                      "float32/tfloat32 partner",
                      numerics::name(op.stationary.dtype), numerics::name(op.moving.dtype)));
  }
  const std::uint64_t rows = as_count(c.chip.tensor.rows);
  const std::uint64_t cols = as_count(c.chip.tensor.cols);
  check_tiling(c, "tile_row", op.tile_row, "tile_rows", op.tile_rows, rows);
  check_tiling(c, "tile_col", op.tile_col, "tile_cols", op.tile_cols, cols);

  const std::uint32_t k = op.stationary.partitions;
  if (op.moving.partitions != k) {
    c.add("moving", fmt::format("contraction size (partitions) {} differs from the stationary's {}",
                                op.moving.partitions, k));
  }
  const std::uint64_t row_limit = op.tile_rows != 0 ? op.tile_rows : rows;
  if (k > row_limit) {
    c.add("stationary",
          fmt::format("contraction size {} exceeds the {} PE rows in use", k, row_limit));
  }

  std::uint64_t m = op.stationary.free_elements();
  std::uint64_t n = op.moving.free_elements();
  if (op.perf_mode == MatmulPerfMode::kDoubleRow) {
    if (!c.chip.tensor.has_fp8_double_row) {
      c.add("perf_mode", fmt::format("double_row is not available on {}", c.core()));
    }
    if (!is_fp8(op.stationary.dtype) || !is_fp8(op.moving.dtype)) {
      c.add("perf_mode", "double_row needs float8 stationary and moving");
    }
    if (op.tile_cols != 0 && op.tile_cols != cols) {
      c.add("perf_mode", "double_row cannot be combined with column tiling");
    }
    if (op.is_transpose) c.add("perf_mode", "double_row cannot be combined with is_transpose");
    // Layout [K, 2, F]: the most major free dim holds the two row halves.
    for (const auto& [name, ap] :
         {std::pair{"stationary", &op.stationary}, std::pair{"moving", &op.moving}}) {
      if (ap->num_dims < 2 || ap->dims[0].count != 2) {
        c.add(name, "double_row needs the layout [K, 2, F] (most major free dim of count 2)");
      }
    }
    m /= 2;
    n /= 2;
  }
  const std::uint64_t col_limit = op.tile_cols != 0 ? op.tile_cols : cols;
  if (m > col_limit) {
    c.add("stationary", fmt::format("free size {} exceeds the limit {} (PE columns in use) of {}",
                                    m, col_limit, c.core()));
  }
  const std::uint64_t n_limit = moving_free_limit(c, op.dst.dtype);
  if (n > n_limit) {
    c.add("moving", fmt::format("free size {} exceeds the limit {} of {} for a {} output", n,
                                n_limit, c.core(), numerics::name(op.dst.dtype)));
  }
  // Bit-accurate transpose (v3+) writes the 2-byte input type to PSUM unchanged.
  const bool transpose_keeps_dtype = op.is_transpose && c.at_least(Generation::kGen3) &&
                                     numerics::storage_bytes(op.stationary.dtype) == 2;
  check_psum_output_dtype(c, op.dst, transpose_keeps_dtype, op.stationary.dtype);
  if (op.dst.partitions != m || op.dst.free_elements() != n) {
    c.add("dst", fmt::format("shape {} does not match the product shape [{}, {}] (stationary free "
                             "x moving free)",
                             shape_of(op.dst), m, n));
  }
  check_psum_bank(c, op.dst);
}

void check_op(Checker& c, const NcMatmulMx& op) {
  if (!c.chip.tensor.has_mx) {
    c.add("", fmt::format("nc_matmul_mx needs the MX tensor engine of NeuronCore-v4 (not on {})",
                          c.core()));
  }
  for (const auto& [name, ap] :
       {std::pair{"stationary", &op.stationary}, std::pair{"moving", &op.moving},
        std::pair{"stationary_scale", &op.stationary_scale},
        std::pair{"moving_scale", &op.moving_scale}}) {
    c.require_memory(name, *ap, {Memory::kSbuf});
  }
  c.require_memory("dst", op.dst, {Memory::kPsum});
  const std::initializer_list<DType> kData = {DType::kFloat8E5M2x4, DType::kFloat8E4M3x4,
                                              DType::kFloat4E2M1x4};
  const std::initializer_list<DType> kScales = {DType::kFloat8E8M0, DType::kUInt8};
  c.require_dtype("stationary", op.stationary, kData);
  c.require_dtype("moving", op.moving, kData);
  c.require_dtype("stationary_scale", op.stationary_scale, kScales);
  c.require_dtype("moving_scale", op.moving_scale, kScales);
  const std::uint64_t rows = as_count(c.chip.tensor.rows);
  check_tiling(c, "tile_row", op.tile_row, "tile_rows", op.tile_rows, rows);
  const std::uint32_t p = op.stationary.partitions;
  if (p % kQuadrant != 0) {
    c.add("stationary",
          fmt::format("{} partitions; nc_matmul_mx needs a multiple of 32 (8-partition "
                      "scale groups per quadrant)",
                      p));
  }
  if (op.moving.partitions != p) {
    c.add("moving", fmt::format("contraction partitions {} differ from the stationary's {}",
                                op.moving.partitions, p));
  }
  const std::uint64_t row_limit = op.tile_rows != 0 ? op.tile_rows : rows;
  if (p > row_limit) {
    c.add("stationary", fmt::format("{} partitions exceed the {} PE rows in use", p, row_limit));
  }
  const std::uint64_t m = op.stationary.free_elements();
  const std::uint64_t n = op.moving.free_elements();
  c.require_free_at_most("stationary", op.stationary, as_count(c.chip.tensor.cols), "PE columns");
  if (m % 2 != 0) c.add("stationary", fmt::format("free size {} must be even", m));
  const std::uint64_t n_limit = moving_free_limit(c, op.dst.dtype);
  if (n > n_limit) {
    c.add("moving", fmt::format("free size {} exceeds the limit {} of {} for a {} output", n,
                                n_limit, c.core(), numerics::name(op.dst.dtype)));
  }
  check_psum_output_dtype(c, op.dst, false, op.stationary.dtype);
  if (op.dst.partitions != m || op.dst.free_elements() != n) {
    c.add("dst", fmt::format("shape {} does not match the product shape [{}, {}]", shape_of(op.dst),
                             m, n));
  }
  c.require_free("stationary_scale", op.stationary_scale, m, "one scale per stationary column");
  c.require_free("moving_scale", op.moving_scale, n, "one scale per moving column");
}

void check_op(Checker& c, const NcTranspose& op) {
  if (op.dst.dtype != op.data.dtype) {
    c.add("dst", fmt::format("dtype {} differs from the data's {}", numerics::name(op.dst.dtype),
                             numerics::name(op.data.dtype)));
  }
  if (op.dst.partitions != op.data.free_elements() ||
      op.dst.free_elements() != op.data.partitions) {
    c.add("dst", fmt::format("shape {} is not the transpose of the data's {}", shape_of(op.dst),
                             shape_of(op.data)));
  }
  if (c.engine == Engine::kTensor) {
    c.require_memory("data", op.data, {Memory::kSbuf});
    c.require_memory("dst", op.dst, {Memory::kPsum});
    c.require_free_at_most("data", op.data, as_count(c.chip.tensor.cols),
                           "tensor-engine transpose");
  } else {
    for (const auto& [name, ap] : {std::pair{"dst", &op.dst}, std::pair{"data", &op.data}}) {
      if (ap->partitions > kVectorTransposeMax || ap->free_elements() > kVectorTransposeMax) {
        c.add(name, fmt::format("shape {} exceeds the vector-engine transpose limit [32, 32]",
                                shape_of(*ap)));
      }
    }
  }
}

// Shared by the elementwise ALU instructions: 'average' belongs to tensor_partition_reduce.
void forbid_average(Checker& c, std::string_view field, AluOp op) {
  c.forbid_alu(field, op, AluOp::kAverage, "is only available in tensor_partition_reduce");
}

void check_op(Checker& c, const TensorTensor& op) {
  c.require_same_shape("data1", op.data1, "dst", op.dst);
  c.require_same_shape("data2", op.data2, "dst", op.dst);
  c.forbid_both_psum("data1", op.data1, "data2", op.data2);
  forbid_average(c, "op", op.op);
  if (is_bitvec_op(op.op)) {
    const std::string why = fmt::format("bitvec operator {}", alu_op_name(op.op));
    c.require_integer("dst", op.dst, why);
    c.require_integer("data1", op.data1, why);
    c.require_integer("data2", op.data2, why);
  }
  if (op.op == AluOp::kPower) c.require_engine(Engine::kGpSimd, "tensor_tensor with power");
}

void check_op(Checker& c, const TensorScalar& op) {
  c.require_same_shape("data", op.data, "dst", op.dst);
  c.require_per_partition("operand0", op.operand0, op.dst.partitions);
  c.require_per_partition("operand1", op.operand1, op.dst.partitions);
  forbid_average(c, "op0", op.op0);
  forbid_average(c, "op1", op.op1);
  const bool bitvec0 = is_bitvec_op(op.op0);
  const bool bitvec1 = is_bitvec_op(op.op1);
  if (bitvec0 || bitvec1) {
    // Both operators must be of the same class (bypass fits either).
    if ((op.op0 != AluOp::kBypass && !bitvec0) || (op.op1 != AluOp::kBypass && !bitvec1)) {
      c.add("op1", "op0 and op1 must both be bitvec operators or both arithmetic");
    }
    c.require_engine(Engine::kVector, "tensor_scalar with a bitvec operator");
    c.require_integer("dst", op.dst, "a bitvec operator");
    c.require_integer("data", op.data, "a bitvec operator");
  }
  if (c.engine == Engine::kScalar && !c.at_least(Generation::kGen4)) {
    const bool supported = (op.op0 == AluOp::kMultiply && op.op1 == AluOp::kAdd) ||
                           (op.op0 == AluOp::kMultiply && op.op1 == AluOp::kBypass) ||
                           (op.op0 == AluOp::kAdd && op.op1 == AluOp::kBypass);
    if (!supported) {
      c.add("op0", fmt::format("the scalar engine of {} supports only (multiply, add), (multiply, "
                               "bypass) and (add, bypass), not ({}, {})",
                               c.core(), alu_op_name(op.op0), alu_op_name(op.op1)));
    }
  }
}

void check_op(Checker& c, const ScalarTensorTensor& op) {
  c.require_same_shape("data", op.data, "dst", op.dst);
  c.require_same_shape("operand1", op.operand1, "dst", op.dst);
  c.require_per_partition("operand0", op.operand0, op.dst.partitions);
  c.forbid_both_psum("data", op.data, "operand1", op.operand1);
  for (const auto& [field, alu] : {std::pair{"op0", op.op0}, std::pair{"op1", op.op1}}) {
    forbid_average(c, field, alu);
    if (is_bitvec_op(alu)) {
      c.add(field, fmt::format("scalar_tensor_tensor takes arithmetic operators only, not {}",
                               alu_op_name(alu)));
    }
  }
}

void check_op(Checker& c, const TensorReduce& op) {
  const std::initializer_list<AluOp> kReduceOps = {
      AluOp::kAdd,        AluOp::kMultiply,  AluOp::kMaximum,    AluOp::kMinimum,
      AluOp::kBitwiseAnd, AluOp::kBitwiseOr, AluOp::kBitwiseXor, AluOp::kLogicalAnd,
      AluOp::kLogicalOr,  AluOp::kLogicalXor};
  c.require_alu("op", op.op, kReduceOps);
  if (is_bitvec_op(op.op)) {
    c.require_integer("data", op.data, "a bitvec reduction");
    c.require_integer("dst", op.dst, "a bitvec reduction");
  }
  if (op.axes < 1 || op.axes > op.data.num_dims || op.data.num_dims > kMaxFreeDims) {
    c.add("axes", fmt::format("{} reduced axes; data has {} free dims", op.axes, op.data.num_dims));
    return;
  }
  std::uint64_t reduced = 1;
  for (int k = op.data.num_dims - static_cast<int>(op.axes); k < op.data.num_dims; ++k) {
    reduced *= op.data.dims[k].count;
  }
  c.require_partitions("dst", op.dst, op.data.partitions, "tensor_reduce (partitions kept)");
  if (reduced != 0) {
    c.require_free("dst", op.dst, op.data.free_elements() / reduced,
                   "the data's free size over the reduced axes");
  }
}

void check_op(Checker& c, const TensorPartitionReduce& op) {
  c.require_alu(
      "op", op.op,
      {AluOp::kAdd, AluOp::kAverage, AluOp::kMaximum, AluOp::kBitwiseOr, AluOp::kBitwiseAnd});
  if (is_bitvec_op(op.op)) c.require_integer("data", op.data, "a bitvec reduction");
  c.require_partitions("dst", op.dst, 1, "a partition reduction");
  c.require_free("dst", op.dst, op.data.free_elements(), "the data's free size");
}

void check_op(Checker& c, const TensorCopy& op) {
  c.require_same_shape("src", op.src, "dst", op.dst);
  if (c.engine == Engine::kScalar) {
    c.require_generation(Generation::kGen3, "tensor_copy on the scalar engine");
  }
}

void check_op(Checker& c, const TensorTensorScan& op) {
  c.require_same_shape("data0", op.data0, "dst", op.dst);
  c.require_same_shape("data1", op.data1, "dst", op.dst);
  c.require_per_partition("initial", op.initial, op.dst.partitions);
  c.forbid_both_psum("data0", op.data0, "data1", op.data1);
  forbid_average(c, "op0", op.op0);
  forbid_average(c, "op1", op.op1);
}

void check_op(Checker& c, const BnStats& op) {
  c.require_free_at_most("data", op.data, kBnStatsFreeMax, "bn_stats_fmax");
  c.require_partitions("dst", op.dst, op.data.partitions, "bn_stats (partitions kept)");
  c.require_free("dst", op.dst, 6, "bn_stats (count, mean, count*var for even and odd elements)");
}

void check_op(Checker& c, const BnAggr& op) {
  if (op.data.free_elements() % 3 != 0) {
    c.add("data", fmt::format("free size {} is not a multiple of 3 (bn_stats triples)",
                              op.data.free_elements()));
  }
  c.require_partitions("dst", op.dst, op.data.partitions, "bn_aggr (partitions kept)");
  c.require_free("dst", op.dst, 2, "bn_aggr (mean, variance)");
}

void check_op(Checker& c, const Select& op) {
  c.require_same_shape("predicate", op.predicate, "dst", op.dst);
  c.require_same_shape("on_true", op.on_true, "dst", op.dst);
  c.require_per_partition("on_false", op.on_false, op.dst.partitions);
  c.require_dtype("predicate", op.predicate,
                  {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16});
  if (one_of(op.on_true.dtype, {DType::kTFloat32, DType::kInt32, DType::kUInt32})) {
    c.add("on_true",
          fmt::format("dtype {} is not supported by select", numerics::name(op.on_true.dtype)));
  }
  if (const auto* ap = std::get_if<AccessPattern>(&op.on_false)) {
    c.require_dtype("on_false", *ap, {DType::kFloat32});
  }
}

void check_op(Checker& c, const RangeSelect& op) {
  c.require_generation(Generation::kGen3, "range_select");
  c.require_same_shape("on_true", op.on_true, "dst", op.dst);
  const std::initializer_list<AluOp> kComparisons = {AluOp::kEqual, AluOp::kLess, AluOp::kLessEqual,
                                                     AluOp::kGreater, AluOp::kGreaterEqual};
  c.require_alu("comp_op0", op.comp_op0, kComparisons);
  c.require_alu("comp_op1", op.comp_op1, kComparisons);
  for (const auto& [name, bound] :
       {std::pair{"bound0", &op.bound0}, std::pair{"bound1", &op.bound1}}) {
    c.require_per_partition(name, *bound, op.dst.partitions);
    if (const auto* ap = std::get_if<AccessPattern>(bound))
      c.require_dtype(name, *ap, {DType::kFloat32});
  }
  if (op.on_false_value != -std::numeric_limits<float>::max()) {
    c.add("on_false_value",
          "must be the lowest float32 (-3.4028235e+38), as the hardware "
          "reduction assumes");
  }
  const std::int64_t last = static_cast<std::int64_t>(op.on_true.free_elements()) + op.range_start;
  if (op.range_start < 0 || static_cast<std::uint64_t>(last) > kRangeSelectIndexLimit) {
    c.add("range_start",
          fmt::format("index range [{}, {}) must lie within [0, 2^24)", op.range_start, last));
  }
  if (op.reduce_res) c.require_per_partition("reduce_res", *op.reduce_res, op.dst.partitions);
}

void check_affine(Checker& c, const AccessPattern& dst, const AffinePattern& pattern) {
  check_pattern_dims(c, "pattern", pattern.num_dims, pattern.dims, /*on_chip=*/false);
  if (pattern.num_dims < 1 || pattern.num_dims > kMaxFreeDims) return;
  std::uint64_t elements = 1;
  for (int k = 0; k < pattern.num_dims; ++k) elements *= pattern.dims[k].count;
  if (elements != dst.free_elements()) {
    c.add("pattern", fmt::format("covers {} elements per partition; dst has {}", elements,
                                 dst.free_elements()));
  }
}

void check_op(Checker& c, const Iota& op) {
  c.require_memory("dst", op.dst, {Memory::kSbuf});
  check_affine(c, op.dst, op.pattern);
}

void check_op(Checker& c, const Memset& op) {
  if (numerics::is_mx_packed(op.dst.dtype) && op.value != 0.0f) {
    c.add("value", "x4-packed destinations can only be set to 0");
  }
  if (numerics::is_integer(op.dst.dtype)) {
    const auto& info = numerics::info(op.dst.dtype);
    const double bits = info.element_bits - (info.is_signed ? 1 : 0);
    const double high = std::exp2(bits) - 1;
    const double low = info.is_signed ? -std::exp2(bits) : 0.0;
    if (op.value != std::floor(op.value) || op.value < low || op.value > high) {
      c.add("value", fmt::format("{} is not representable in {} (value must match the dst dtype)",
                                 op.value, numerics::name(op.dst.dtype)));
    }
  }
}

void check_op(Checker& c, const Max8& op) {
  const std::uint64_t free = op.src.free_elements();
  if (free < kMax8FreeMin || free > kMax8FreeMax) {
    c.add("src", fmt::format("free size {} must be within 8..16384", free));
  }
  if (op.src.num_dims > 3) c.add("src", "max8 takes at most 3 free dims");
  c.require_partitions("dst", op.dst, op.src.partitions, "max8 (partitions kept)");
  c.require_free("dst", op.dst, 8, "max8");
}

void check_op(Checker& c, const NcFindIndex8& op) {
  const std::uint64_t free = op.data.free_elements();
  if (free < kMax8FreeMin || free > kMax8FreeMax) {
    c.add("data", fmt::format("free size {} must be within 8..16384", free));
  }
  c.require_dtype("dst", op.dst, {DType::kUInt16, DType::kUInt32});
  c.require_partitions("dst", op.dst, op.data.partitions, "nc_find_index8 (partitions kept)");
  c.require_free("dst", op.dst, 8, "nc_find_index8");
  c.require_partitions("vals", op.vals, op.data.partitions, "nc_find_index8 (partitions kept)");
  c.require_free("vals", op.vals, 8, "nc_find_index8");
}

void check_op(Checker& c, const Exponential& op) {
  c.require_generation(Generation::kGen4, "exponential");
  c.require_same_shape("src", op.src, "dst", op.dst);
  c.require_per_partition("max_value", op.max_value, op.dst.partitions);
  if (op.reduce_res) c.require_per_partition("reduce_res", *op.reduce_res, op.dst.partitions);
}

void check_op(Checker& c, const Reciprocal& op) {
  c.require_same_shape("data", op.data, "dst", op.dst);
}

void check_op(Checker& c, const QuantizeMx& op) {
  c.require_generation(Generation::kGen4, "quantize_mx");
  for (const auto& [name, ap] : {std::pair{"dst", &op.dst}, std::pair{"src", &op.src},
                                 std::pair{"dst_scale", &op.dst_scale}}) {
    c.require_memory(name, *ap, {Memory::kSbuf});
  }
  c.require_dtype("src", op.src, {DType::kBFloat16, DType::kFloat16});
  c.require_dtype("dst", op.dst, {DType::kFloat8E4M3x4, DType::kFloat8E5M2x4});
  c.require_dtype("dst_scale", op.dst_scale, {DType::kFloat8E8M0, DType::kUInt8});
  if (op.src.partitions % kQuadrant != 0) {
    c.add("src",
          fmt::format("{} partitions; quantize_mx needs a multiple of 32", op.src.partitions));
  }
  const std::uint64_t free = op.src.free_elements();
  if (free % 4 != 0) c.add("src", fmt::format("free size {} is not a multiple of 4", free));
  c.require_partitions("dst", op.dst, op.src.partitions, "quantize_mx (partitions kept)");
  c.require_free("dst", op.dst, free / 4, "quantize_mx (one x4 word per 4 source elements)");
}

void check_op(Checker& c, const Activation& op) {
  c.require_same_shape("data", op.data, "dst", op.dst);
  c.require_per_partition("scale", op.scale, op.dst.partitions);
  c.require_per_partition("bias", op.bias, op.dst.partitions);
  if (const auto* scale = std::get_if<AccessPattern>(&op.scale)) {
    c.require_dtype("scale", *scale, {DType::kFloat32});
  }
  if (const auto* bias = std::get_if<AccessPattern>(&op.bias)) {
    if (bias->dtype == DType::kTFloat32) c.add("bias", "bias may not be tfloat32");
  } else if (std::get<float>(op.bias) != 0.0f) {
    c.require_generation(Generation::kGen3, "a constant activation bias", "bias");
  }
  if (op.reduce_res) c.require_per_partition("reduce_res", *op.reduce_res, op.dst.partitions);
}

void check_op(Checker& c, const AffineSelect& op) {
  c.require_memory("dst", op.dst, {Memory::kSbuf});
  c.require_memory("on_true", op.on_true, {Memory::kSbuf});
  c.require_same_shape("on_true", op.on_true, "dst", op.dst);
  c.require_alu("cmp_op", op.cmp_op, kComparisonOps);
  check_affine(c, op.dst, op.pattern);
}

void check_op(Checker& c, const LocalGather& op) {
  for (const auto& [name, ap] :
       {std::pair{"dst", &op.dst}, std::pair{"src", &op.src}, std::pair{"index", &op.index}}) {
    if (ap->partitions % kGpSimdPartitionsPerCore != 0) {
      c.add(name, fmt::format("{} partitions; local_gather needs a multiple of 16 (one GpSimd core "
                              "each)",
                              ap->partitions));
    }
  }
  c.require_partitions("src", op.src, op.dst.partitions, "local_gather");
  c.require_partitions("index", op.index, op.dst.partitions, "local_gather");
  c.require_dtype("index", op.index, {DType::kUInt16});
  if (op.dst.dtype != op.src.dtype) {
    c.add("dst", fmt::format("dtype {} differs from the src's {} (local_gather does not cast)",
                             numerics::name(op.dst.dtype), numerics::name(op.src.dtype)));
  }
  const std::uint32_t n = op.num_elem_per_idx;
  if (n == 0 || n > 32 || (n & (n - 1)) != 0) {
    c.add("num_elem_per_idx", fmt::format("{} is not one of 1, 2, 4, 8, 16, 32", n));
  }
  const std::uint64_t indices = op.index.free_elements();
  if (indices * kGpSimdPartitionsPerCore > kLocalGatherIndicesPerCore) {
    c.add("index", fmt::format("{} indices per GpSimd core exceed the limit {}",
                               indices * kGpSimdPartitionsPerCore, kLocalGatherIndicesPerCore));
  }
  c.require_free("dst", op.dst, indices * n, "index elements x num_elem_per_idx");
}

void check_op(Checker& c, const NcStreamShuffle& op) {
  for (std::size_t i = 0; i < op.mask.size(); ++i) {
    if (op.mask[i] >= kQuadrant && op.mask[i] != 255) {
      c.add("mask", fmt::format("entry {} is {}: a source partition 0..31 within the quadrant, "
                                "or 255",
                                i, op.mask[i]));
    }
  }
  if (op.dst.free_elements() != op.src.free_elements()) {
    c.add("src", fmt::format("free size {} differs from the dst's {}", op.src.free_elements(),
                             op.dst.free_elements()));
  }
  // ISA: the start-partition rule applies to ceil(max(src, dst) / 32) * 32 partitions.
  const std::uint32_t span =
      (std::max(op.src.partitions, op.dst.partitions) + kQuadrant - 1) / kQuadrant * kQuadrant;
  for (const auto& [name, ap] : {std::pair{"dst", &op.dst}, std::pair{"src", &op.src}}) {
    if (span <= 128 && !start_partition_allowed(ap->start_partition, span)) {
      c.add(name, fmt::format("start partition {} is not allowed for a {}-partition shuffle",
                              ap->start_partition, span));
    }
  }
}

void check_op(Checker& c, const CustomOp& op) {
  if (op.op.empty()) c.add("op", "a custom operator needs a registered name");
  if (op.outputs.empty()) c.add("outputs", "a custom operator needs at least one output");
  for (std::size_t i = 0; i < op.outputs.size(); ++i) {
    c.require_memory(fmt::format("outputs[{}]", i), op.outputs[i], {Memory::kSbuf});
  }
  for (std::size_t i = 0; i < op.inputs.size(); ++i) {
    c.require_memory(fmt::format("inputs[{}]", i), op.inputs[i], {Memory::kSbuf});
  }
}

void check_op(Checker& c, const Rand2& op) {
  c.require_generation(Generation::kGen4, "rand2");
  if (!(op.min < op.max)) {
    c.add("max", fmt::format("range [{}, {}) is empty", op.min, op.max));
  }
}

// XORWOW state: 6 uint32 per partition on GpSimd, 24 (4 states) on Vector (ISA).
void check_rng_state(Checker& c, std::string_view name, const AccessPattern& ap,
                     std::string_view mnemonic) {
  c.require_generation(Generation::kGen3, std::string(mnemonic));
  if (c.engine == Engine::kVector) {
    c.require_generation(Generation::kGen4, fmt::format("{} on the vector engine", mnemonic));
  }
  c.require_dtype(name, ap, {DType::kUInt32});
  c.require_free(name, ap, c.engine == Engine::kVector ? 24 : 6,
                 fmt::format("the {} engine's XORWOW state", engine_name(c.engine)));
}

void check_op(Checker& c, const RandSetState& op) {
  check_rng_state(c, "src_seeds", op.src_seeds, RandSetState::kName);
}
void check_op(Checker& c, const RandGetState& op) {
  check_rng_state(c, "dst", op.dst, RandGetState::kName);
}

void check_op(Checker& c, const DmaCopy& op) {
  if (op.dst.total_elements() != op.src.total_elements()) {
    c.add("src", fmt::format("{} elements; dst has {} (counts must match)", op.src.total_elements(),
                             op.dst.total_elements()));
  }
  if ((numerics::is_mx_packed(op.dst.dtype) || numerics::is_mx_packed(op.src.dtype)) &&
      op.dst.dtype != op.src.dtype) {
    c.add("dst", "x4-packed data is copied raw: dst and src dtypes must match");
  }
  if (op.accumulate == DmaAccumulate::kAdd) {
    if (!c.chip.dma.has_near_memory_accumulate) {
      c.add("accumulate", fmt::format("near-memory accumulate is not available on {}", c.core()));
    }
    c.require_memory("dst", op.dst, {Memory::kSbuf});
    c.require_dtype("dst", op.dst, {DType::kBFloat16, DType::kFloat32});
  }
  if (op.priority > kMaxDmaPriority) {
    c.add("priority",
          fmt::format("priority {} exceeds the highest class {}", op.priority, kMaxDmaPriority));
  } else if (op.priority != 0 && !c.chip.dma.has_priority) {
    c.add("priority", fmt::format("DMA priorities are not available on {}", c.core()));
  }
}

void check_op(Checker& c, const DmaTranspose& op) {
  c.require_generation(Generation::kGen3, "dma_transpose");
  c.require_memory("dst", op.dst, {Memory::kSbuf});
  if (op.dst.dtype != op.src.dtype) {
    c.add("dst", fmt::format("dtype {} differs from the src's {}", numerics::name(op.dst.dtype),
                             numerics::name(op.src.dtype)));
  }
  const std::size_t bytes = numerics::storage_bytes(op.src.dtype);
  if (bytes != 2 && bytes != 4) {
    c.add("src", fmt::format("dtype {} is not a 2- or 4-byte type", numerics::name(op.src.dtype)));
  }
  if (op.dst.partitions != op.src.free_elements() || op.dst.free_elements() != op.src.partitions) {
    c.add("dst", fmt::format("shape {} is not the transpose of the src's {}", shape_of(op.dst),
                             shape_of(op.src)));
  }
}

void check_op(Checker& c, const DmaIndirect& op) {
  c.require_memory("index", op.index, {Memory::kSbuf});
  c.require_dtype("index", op.index, {DType::kUInt32, DType::kInt32});
  const bool gather = op.mode == IndirectMode::kGather;
  const AccessPattern& indexed_side = gather ? op.dst : op.src;
  if (op.index.total_elements() != indexed_side.partitions) {
    c.add("index",
          fmt::format("{} indices for {} rows of '{}' (one index per row)",
                      op.index.total_elements(), indexed_side.partitions, gather ? "dst" : "src"));
  }
  if (op.dst.free_elements() != op.src.free_elements()) {
    c.add("src", fmt::format("row size {} differs from the dst's {}", op.src.free_elements(),
                             op.dst.free_elements()));
  }
}

void check_op(Checker&, const SemaphoreOp&) {}  // only the generic wait/signal checks

void check_op(Checker& c, const CoreBarrier& op) {
  c.require_generation(Generation::kGen3, "core_barrier");
  const auto& options = c.chip.lnc_options;
  const int largest = options.empty() ? 1 : *std::max_element(options.begin(), options.end());
  if (op.num_cores < 2 || op.num_cores > static_cast<std::uint32_t>(largest)) {
    c.add("num_cores", fmt::format("{} cores; a barrier spans 2 to {} cores (largest logical core "
                                   "of {})",
                                   op.num_cores, largest, c.chip.name));
  }
}

void check_queue_and_sync(Checker& c, const Instruction& inst) {
  const std::uint8_t engines = op_engines(inst.op);
  if ((engines & engine_bit(inst.queue.engine)) == 0) {
    c.add("", fmt::format("the {} engine cannot execute {} (allowed: {})",
                          engine_name(inst.queue.engine), op_name(inst.op), engine_list(engines)));
  }
  if (inst.queue.engine == Engine::kDma) {
    const std::uint64_t queues = as_count(c.chip.dma.queues_per_engine);
    if (inst.queue.index >= queues) {
      c.add("", fmt::format("DMA queue {} does not exist ({} queues on {})", inst.queue.index,
                            queues, c.core()));
    }
  } else if (inst.queue.index != 0) {
    c.add("", fmt::format("the {} engine has a single queue (index 0), not {}",
                          engine_name(inst.queue.engine), inst.queue.index));
  }
  for (const SemWait& wait : inst.waits) {
    if (wait.sem >= kNumSemaphores) {
      c.add("", fmt::format("wait on semaphore {} (semaphores are 0..{})", wait.sem,
                            kNumSemaphores - 1));
    }
  }
  for (const SemSignal& signal : inst.signals) {
    if (signal.sem >= kNumSemaphores) {
      c.add("", fmt::format("signal of semaphore {} (semaphores are 0..{})", signal.sem,
                            kNumSemaphores - 1));
    }
  }
}

}  // namespace

std::vector<Violation> check_instruction(const Instruction& inst, std::size_t index,
                                         const arch::ChipConfig& chip) {
  Checker checker(inst, index, chip);
  check_queue_and_sync(checker, inst);
  std::visit(
      [&](const auto& op) {
        // fields() is non-const because the parser fills operations through it; this visitor
        // only reads (no copy of the operation, no allocation: this runs per instruction).
        using Op = std::decay_t<decltype(op)>;
        const_cast<Op&>(op).fields([&](std::string_view name, const auto& member, Role) {
          check_member(checker, name, member);
        });
        check_op(checker, op);
      },
      inst.op);
  return checker.take();
}

void validate_program(const Program& program, const arch::ChipConfig& chip) {
  std::vector<Violation> all;
  for (std::size_t i = 0; i < program.instructions.size(); ++i) {
    auto violations = check_instruction(program.instructions[i], i, chip);
    all.insert(all.end(), std::make_move_iterator(violations.begin()),
               std::make_move_iterator(violations.end()));
  }
  if (!all.empty()) throw ValidationError(std::move(all));
}

}  // namespace trnsim::isa
