// Validation rules of the PE-array operations: nc_matmul, nc_matmul_mx and nc_transpose
// (listed, with their sources, in docs/isa.md "Validation rules").
#include <fmt/format.h>

#include "isa/validate_detail.h"

namespace trnsim::isa::validate_detail {

namespace {

constexpr std::uint64_t kVectorTransposeMax = 32;

bool is_fp32_class(DType t) {
  return t == DType::kFloat32 || t == DType::kTFloat32;
}
bool is_fp8(DType t) {
  return t == DType::kFloat8E4M3 || t == DType::kFloat8E4M3Ieee || t == DType::kFloat8E5M2;
}

// ISA: the OCP float8_e4m3fn is a matmul input from NeuronCore-v4 on, and may not meet the
// legacy float8_e4m3 in one matmul (the PE array reads both inputs with one E4M3 decoder).
void check_fp8_e4m3_flavours(Checker& c, const AccessPattern& stationary,
                             const AccessPattern& moving) {
  for (const auto& [name, ap] :
       {std::pair{"stationary", &stationary}, std::pair{"moving", &moving}}) {
    if (ap->dtype == DType::kFloat8E4M3) {
      c.require_generation(Generation::kGen4, "a float8_e4m3fn (OCP) matmul input", name);
    }
  }
  const auto legacy_with_ocp = [](DType a, DType b) {
    return a == DType::kFloat8E4M3Ieee && b == DType::kFloat8E4M3;
  };
  if (legacy_with_ocp(stationary.dtype, moving.dtype) ||
      legacy_with_ocp(moving.dtype, stationary.dtype)) {
    c.add("moving", fmt::format("{} stationary with {} moving: the legacy float8_e4m3 and the OCP "
                                "float8_e4m3fn cannot be mixed in one matmul",
                                numerics::name(stationary.dtype), numerics::name(moving.dtype)));
  }
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

}  // namespace

void check_op(Checker& c, const NcMatmul& op) {
  c.require_memory("stationary", op.stationary, {Memory::kSbuf});
  c.require_memory("moving", op.moving, {Memory::kSbuf});
  c.require_memory("dst", op.dst, {Memory::kPsum});
  const std::initializer_list<DType> kInputs = {
      DType::kFloat32,    DType::kTFloat32,       DType::kBFloat16,  DType::kFloat16,
      DType::kFloat8E4M3, DType::kFloat8E4M3Ieee, DType::kFloat8E5M2};
  c.require_dtype("stationary", op.stationary, kInputs);
  c.require_dtype("moving", op.moving, kInputs);
  check_fp8_e4m3_flavours(c, op.stationary, op.moving);
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
  if (op.is_transpose && !transpose_move(op.stationary.dtype, op.dst.dtype)) {
    c.add("dst", fmt::format("a transpose cannot move {} into {} exactly",
                             numerics::name(op.stationary.dtype), numerics::name(op.dst.dtype)));
  }
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
  c.require_same_dtype("dst", op.dst, "data", op.data, "a transpose does not cast");
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

}  // namespace trnsim::isa::validate_detail

namespace trnsim::isa {

std::optional<TransposeMove> transpose_move(DType from, DType to) {
  const std::size_t in = numerics::storage_bytes(from), out = numerics::storage_bytes(to);
  if (in == out) return TransposeMove::kBits;
  if (in == 1 && out == 2) return TransposeMove::kZeroExtend;
  // Every float type narrower than fp32 converts to it exactly; MX x4 words are not values.
  if (to == DType::kFloat32 && numerics::is_float(from) && !numerics::is_mx_packed(from))
    return TransposeMove::kConvert;
  return std::nullopt;
}

}  // namespace trnsim::isa
