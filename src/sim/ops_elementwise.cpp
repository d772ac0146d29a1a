// Semantics of the Vector, Scalar and GpSimd instructions (see docs/simulator-ops.md,
// "Elementwise semantics", for the rules in prose).
//
// Shape of every operation: one io.load (or io.load_words) per operand, tight loops over the
// dense buffers with the operator chosen once per instruction (templates from ops_math.h),
// one io.store per output. Values are fp32 in between, as inside the engines; the dtype
// conversions on both ends belong to OperandIO.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "numerics/numerics.h"
#include "sim/ops.h"
#include "sim/ops_math.h"

namespace trnsim::sim {
namespace {

using isa::AccessPattern;
using isa::AluOp;
using isa::ScalarOperand;
using numerics::DType;

// ---------------------------------------------------------------------------------------
// Helpers

// Malformed instructions are the validator's to reject; reaching one here is a bug upstream,
// reported loudly rather than producing made-up data.
void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("elementwise semantics: ") + what);
}

std::uint64_t free_count(const AccessPattern& ap) {
  std::uint64_t n = 1;
  for (int k = 0; k < ap.num_dims; ++k) n *= ap.dims[k].count;
  return n;
}

void require_shape(const AccessPattern& ap, std::uint32_t partitions, std::uint64_t free,
                   const char* what) {
  require(ap.partitions == partitions && free_count(ap) == free, what);
}

Tile make_tile(std::uint32_t partitions, std::uint64_t free, float fill = 0.0f) {
  Tile t;
  t.partitions = partitions;
  t.free = free;
  t.values.assign(static_cast<std::size_t>(partitions) * free, fill);
  return t;
}

WordTile make_word_tile(std::uint32_t partitions, std::uint64_t free) {
  WordTile t;
  t.partitions = partitions;
  t.free = free;
  t.words.assign(static_cast<std::size_t>(partitions) * free, 0);
  return t;
}

// The per-partition values of a scalar operand (immediate or [P, 1] tensor).
std::vector<float> scalar_column(OperandIO& io, const ScalarOperand& operand,
                                 std::uint32_t partitions) {
  std::vector<float> column(partitions);
  for (std::uint32_t p = 0; p < partitions; ++p) column[p] = io.scalar(operand, p);
  return column;
}

// The per-partition storage words of a scalar operand for bit-vector operators: a [P, 1]
// tensor's words exactly; an fp32 immediate truncated toward zero to an integer.
std::vector<std::int64_t> scalar_word_column(OperandIO& io, const ScalarOperand& operand,
                                             std::uint32_t partitions) {
  std::vector<std::int64_t> column(partitions);
  if (const float* immediate = std::get_if<float>(&operand)) {
    std::int64_t word = 0;
    if (!math::is_nan(*immediate)) {
      const double clamped = std::clamp(static_cast<double>(*immediate), -0x1.0p63, 0x1.0p62);
      word = static_cast<std::int64_t>(clamped);
    }
    std::fill(column.begin(), column.end(), word);
    return column;
  }
  const WordTile tensor = io.load_words(std::get<AccessPattern>(operand));
  require(tensor.partitions >= partitions && tensor.free >= 1, "scalar operand must be [P, 1]");
  for (std::uint32_t p = 0; p < partitions; ++p) column[p] = tensor.words[p * tensor.free];
  return column;
}

// The sub-range [first, first + count) of an operand's partitions.
AccessPattern partition_slice(const AccessPattern& ap, std::uint32_t first, std::uint32_t count) {
  AccessPattern slice = ap;
  slice.partitions = count;
  if (ap.memory == isa::Memory::kHbm) {
    const std::int64_t element_bytes = math::storage_bits(ap.dtype) / 8;
    const std::int64_t shift = static_cast<std::int64_t>(first) * ap.partition_step * element_bytes;
    slice.offset = static_cast<std::uint64_t>(static_cast<std::int64_t>(ap.offset) + shift);
  } else {
    slice.start_partition = ap.start_partition + first;
  }
  return slice;
}

// Sequential left-to-right fold of each of `chains` runs of `length` consecutive values:
// result[c] = op(...op(op(v[c*length], v[c*length+1]), v[c*length+2])..., v[c*length+length-1]).
// The loop runs over the chains innermost, so independent chains proceed together (ILP,
// vector gathers) while each chain keeps its exact order.
template <AluOp kOp>
std::vector<float> fold_runs(std::span<const float> values, std::uint64_t chains,
                             std::uint64_t length) {
  std::vector<float> acc(chains);
  for (std::uint64_t c = 0; c < chains; ++c) {
    const float first = values[c * length];
    if constexpr (kOp == AluOp::kLogicalAnd || kOp == AluOp::kLogicalOr ||
                  kOp == AluOp::kLogicalXor) {
      acc[c] = first != 0.0f ? 1.0f : 0.0f;  // a one-element logical reduction is a truth value
    } else {
      acc[c] = first;
    }
  }
  for (std::uint64_t j = 1; j < length; ++j) {
    for (std::uint64_t c = 0; c < chains; ++c)
      acc[c] = math::alu<kOp>(acc[c], values[c * length + j]);
  }
  return acc;
}

float sequential_sum(std::span<const float> values) {
  if (values.empty()) return 0.0f;
  float sum = values[0];
  for (std::size_t i = 1; i < values.size(); ++i) sum += values[i];
  return sum;
}

// In-place `values[p, i] = values[p, i] op column[p]` (or `column[p] op values[p, i]`).
void apply_scalar_op(std::vector<float>& values, std::uint32_t partitions, std::uint64_t free,
                     AluOp op, std::span<const float> column, bool reverse) {
  math::with_alu_op(op, [&](auto op_constant) {
    constexpr AluOp kOp = decltype(op_constant)::value;
    for (std::uint32_t p = 0; p < partitions; ++p) {
      const float scalar = column[p];
      float* row = values.data() + p * free;
      if (reverse) {
        for (std::uint64_t i = 0; i < free; ++i) row[i] = math::alu<kOp>(scalar, row[i]);
      } else {
        for (std::uint64_t i = 0; i < free; ++i) row[i] = math::alu<kOp>(row[i], scalar);
      }
    }
  });
}

void apply_scalar_word_op(std::vector<std::int64_t>& words, std::uint32_t partitions,
                          std::uint64_t free, AluOp op, std::span<const std::int64_t> column,
                          bool reverse, unsigned width) {
  math::with_word_op(op, [&](auto op_constant) {
    constexpr AluOp kOp = decltype(op_constant)::value;
    for (std::uint32_t p = 0; p < partitions; ++p) {
      const std::int64_t scalar = column[p];
      std::int64_t* row = words.data() + p * free;
      if (reverse) {
        for (std::uint64_t i = 0; i < free; ++i) row[i] = math::word_op<kOp>(scalar, row[i], width);
      } else {
        for (std::uint64_t i = 0; i < free; ++i) row[i] = math::word_op<kOp>(row[i], scalar, width);
      }
    }
  });
}

// Values of an iota/affine_select pattern, int32 arithmetic (wrapping modulo 2^32):
// offset + c * channel_multiplier + sum_k step_k * i_k, c counting dst partitions from 0.
std::vector<std::int32_t> affine_values(const isa::AffinePattern& pattern, std::int32_t offset,
                                        std::int32_t channel_multiplier, std::uint32_t partitions,
                                        std::uint64_t free) {
  // Pad to four dims (outer dims of count 1) so one loop nest covers every rank.
  std::array<isa::Dim, 4> dims{};
  const int pad = 4 - pattern.num_dims;
  for (int k = 0; k < pattern.num_dims; ++k) dims[pad + k] = pattern.dims[k];
  std::uint64_t pattern_elements = 1;
  for (const isa::Dim& d : dims) pattern_elements *= d.count;
  require(pattern_elements == free, "pattern must have as many elements as dst");

  auto wrap = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  std::vector<std::int32_t> values(static_cast<std::size_t>(partitions) * free);
  std::size_t out = 0;
  for (std::uint32_t c = 0; c < partitions; ++c) {
    const std::uint32_t base = wrap(offset) + wrap(c) * wrap(channel_multiplier);
    for (std::uint32_t i0 = 0; i0 < dims[0].count; ++i0) {
      const std::uint32_t v0 = base + wrap(i0) * wrap(dims[0].step);
      for (std::uint32_t i1 = 0; i1 < dims[1].count; ++i1) {
        const std::uint32_t v1 = v0 + wrap(i1) * wrap(dims[1].step);
        for (std::uint32_t i2 = 0; i2 < dims[2].count; ++i2) {
          const std::uint32_t v2 = v1 + wrap(i2) * wrap(dims[2].step);
          for (std::uint32_t i3 = 0; i3 < dims[3].count; ++i3) {
            values[out++] = static_cast<std::int32_t>(v2 + wrap(i3) * wrap(dims[3].step));
          }
        }
      }
    }
  }
  return values;
}

// Copies rows [first, first + count) of a tile.
template <class T>
T rows_of(const T& tile, std::uint32_t first, std::uint32_t count) {
  T part;
  part.partitions = count;
  part.free = tile.free;
  if constexpr (std::is_same_v<T, Tile>) {
    part.values.assign(tile.values.begin() + first * tile.free,
                       tile.values.begin() + (first + count) * tile.free);
  } else {
    part.words.assign(tile.words.begin() + first * tile.free,
                      tile.words.begin() + (first + count) * tile.free);
  }
  return part;
}

// ---------------------------------------------------------------------------------------
// Vector / GpSimd arithmetic

bool run(const isa::TensorTensor& op, OperandIO& io) {
  if (math::is_bitvec(op.op)) {
    const WordTile a = io.load_words(op.data1);
    const WordTile b = io.load_words(op.data2);
    require(a.partitions == b.partitions && a.free == b.free, "tensor_tensor operand shapes");
    require_shape(op.dst, a.partitions, a.free, "tensor_tensor dst shape");
    WordTile out = make_word_tile(a.partitions, a.free);
    const unsigned width = math::storage_bits(op.data1.dtype);
    math::with_word_op(op.op, [&](auto op_constant) {
      constexpr AluOp kOp = decltype(op_constant)::value;
      for (std::size_t i = 0; i < out.words.size(); ++i)
        out.words[i] = math::word_op<kOp>(a.words[i], b.words[i], width);
    });
    io.store_words(op.dst, out);
    return true;
  }
  const Tile a = io.load(op.data1);
  const Tile b = io.load(op.data2);
  require(a.partitions == b.partitions && a.free == b.free, "tensor_tensor operand shapes");
  require_shape(op.dst, a.partitions, a.free, "tensor_tensor dst shape");
  Tile out = make_tile(a.partitions, a.free);
  math::with_alu_op(op.op, [&](auto op_constant) {
    constexpr AluOp kOp = decltype(op_constant)::value;
    for (std::size_t i = 0; i < out.values.size(); ++i)
      out.values[i] = math::alu<kOp>(a.values[i], b.values[i]);
  });
  io.store(op.dst, out);
  return true;
}

bool run(const isa::TensorScalar& op, OperandIO& io) {
  // An operator stage that is bypass without reverse leaves the data alone and does not read
  // its operand.
  const bool use_op0 = op.op0 != AluOp::kBypass || op.reverse0;
  const bool use_op1 = op.op1 != AluOp::kBypass || op.reverse1;
  const bool bitvec0 = math::is_bitvec(op.op0);
  const bool bitvec1 = math::is_bitvec(op.op1);
  const bool words_only = (bitvec0 || bitvec1) && (bitvec0 || op.op0 == AluOp::kBypass) &&
                          (bitvec1 || op.op1 == AluOp::kBypass);
  if (words_only) {
    WordTile data = io.load_words(op.data);
    require_shape(op.dst, data.partitions, data.free, "tensor_scalar dst shape");
    const unsigned width = math::storage_bits(op.data.dtype);
    if (use_op0) {
      const auto column = scalar_word_column(io, op.operand0, data.partitions);
      apply_scalar_word_op(data.words, data.partitions, data.free, op.op0, column, op.reverse0,
                           width);
    }
    if (use_op1) {
      const auto column = scalar_word_column(io, op.operand1, data.partitions);
      apply_scalar_word_op(data.words, data.partitions, data.free, op.op1, column, op.reverse1,
                           width);
    }
    io.store_words(op.dst, data);
    return true;
  }
  // Two passes give the same bits as one fused pass: the engine rounds the intermediate to
  // fp32 as well.
  Tile data = io.load(op.data);
  require_shape(op.dst, data.partitions, data.free, "tensor_scalar dst shape");
  if (use_op0) {
    const auto column = scalar_column(io, op.operand0, data.partitions);
    apply_scalar_op(data.values, data.partitions, data.free, op.op0, column, op.reverse0);
  }
  if (use_op1) {
    const auto column = scalar_column(io, op.operand1, data.partitions);
    apply_scalar_op(data.values, data.partitions, data.free, op.op1, column, op.reverse1);
  }
  io.store(op.dst, data);
  return true;
}

bool run(const isa::ScalarTensorTensor& op, OperandIO& io) {
  Tile data = io.load(op.data);
  const Tile operand1 = io.load(op.operand1);
  require(operand1.partitions == data.partitions && operand1.free == data.free,
          "scalar_tensor_tensor operand1 shape");
  require_shape(op.dst, data.partitions, data.free, "scalar_tensor_tensor dst shape");
  const auto column = scalar_column(io, op.operand0, data.partitions);
  apply_scalar_op(data.values, data.partitions, data.free, op.op0, column, op.reverse0);
  math::with_alu_op(op.op1, [&](auto op_constant) {
    constexpr AluOp kOp = decltype(op_constant)::value;
    float* values = data.values.data();
    const float* other = operand1.values.data();
    const std::size_t n = data.values.size();
    if (op.reverse1) {
      for (std::size_t i = 0; i < n; ++i) values[i] = math::alu<kOp>(other[i], values[i]);
    } else {
      for (std::size_t i = 0; i < n; ++i) values[i] = math::alu<kOp>(values[i], other[i]);
    }
  });
  io.store(op.dst, data);
  return true;
}

bool run(const isa::TensorReduce& op, OperandIO& io) {
  require(op.axes >= 1 && op.axes <= op.data.num_dims, "tensor_reduce axes out of range");
  std::uint64_t reduced = 1;
  for (int k = op.data.num_dims - static_cast<int>(op.axes); k < op.data.num_dims; ++k)
    reduced *= op.data.dims[k].count;
  const std::uint64_t total = free_count(op.data);
  const std::uint64_t kept = reduced == 0 ? 0 : total / reduced;
  require_shape(op.dst, op.data.partitions, kept, "tensor_reduce dst shape");
  if (kept == 0) return true;
  const std::uint64_t chains = static_cast<std::uint64_t>(op.data.partitions) * kept;

  if (math::is_bitvec(op.op)) {
    const WordTile data = io.load_words(op.data);
    const unsigned width = math::storage_bits(op.data.dtype);
    WordTile out = make_word_tile(data.partitions, kept);
    math::with_word_op(op.op, [&](auto op_constant) {
      constexpr AluOp kOp = decltype(op_constant)::value;
      for (std::uint64_t c = 0; c < chains; ++c) out.words[c] = data.words[c * reduced];
      for (std::uint64_t j = 1; j < reduced; ++j)
        for (std::uint64_t c = 0; c < chains; ++c)
          out.words[c] = math::word_op<kOp>(out.words[c], data.words[c * reduced + j], width);
    });
    if (op.negate) {
      // Two's-complement negation, computed unsigned so INT_MIN does not overflow.
      for (auto& w : out.words) w = static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(w));
    }
    io.store_words(op.dst, out);
    return true;
  }

  const Tile data = io.load(op.data);
  Tile out = make_tile(data.partitions, kept);
  math::with_alu_op(op.op, [&](auto op_constant) {
    out.values = fold_runs<decltype(op_constant)::value>(data.values, chains, reduced);
  });
  if (op.negate) {
    for (float& v : out.values) v = -v;
  }
  io.store(op.dst, out);
  return true;
}

bool run(const isa::TensorPartitionReduce& op, OperandIO& io) {
  const bool bitwise =
      op.op == AluOp::kBitwiseAnd || op.op == AluOp::kBitwiseOr || op.op == AluOp::kBitwiseXor;
  if (bitwise) {
    const WordTile data = io.load_words(op.data);
    require(data.partitions >= 1, "tensor_partition_reduce needs a partition");
    require_shape(op.dst, 1, data.free, "tensor_partition_reduce dst must be [1, F]");
    WordTile out = rows_of(data, 0, 1);
    const unsigned width = math::storage_bits(op.data.dtype);
    math::with_word_op(op.op, [&](auto op_constant) {
      constexpr AluOp kOp = decltype(op_constant)::value;
      for (std::uint32_t p = 1; p < data.partitions; ++p) {
        const std::int64_t* row = data.words.data() + p * data.free;
        for (std::uint64_t i = 0; i < data.free; ++i)
          out.words[i] = math::word_op<kOp>(out.words[i], row[i], width);
      }
    });
    io.store_words(op.dst, out);
    return true;
  }
  const Tile data = io.load(op.data);
  require(data.partitions >= 1, "tensor_partition_reduce needs a partition");
  require_shape(op.dst, 1, data.free, "tensor_partition_reduce dst must be [1, F]");
  Tile out = rows_of(data, 0, 1);
  const AluOp fold_op = op.op == AluOp::kAverage ? AluOp::kAdd : op.op;
  math::with_alu_op(fold_op, [&](auto op_constant) {
    constexpr AluOp kOp = decltype(op_constant)::value;
    for (std::uint32_t p = 1; p < data.partitions; ++p) {
      const float* row = data.values.data() + p * data.free;
      for (std::uint64_t i = 0; i < data.free; ++i)
        out.values[i] = math::alu<kOp>(out.values[i], row[i]);
    }
  });
  if (op.op == AluOp::kAverage) {
    const float count = static_cast<float>(data.partitions);
    for (float& v : out.values) v /= count;
  }
  io.store(op.dst, out);
  return true;
}

bool run(const isa::TensorCopy& op, OperandIO& io) {
  if (op.src.dtype == op.dst.dtype) {
    // Same type: the storage words move unchanged (NaN payloads, -0, x4-packed words).
    const WordTile words = io.load_words(op.src);
    require_shape(op.dst, words.partitions, words.free, "tensor_copy dst shape");
    io.store_words(op.dst, words);
    return true;
  }
  const Tile values = io.load(op.src);
  require_shape(op.dst, values.partitions, values.free, "tensor_copy dst shape");
  io.store(op.dst, values);
  return true;
}

bool run(const isa::TensorTensorScan& op, OperandIO& io) {
  const Tile d0 = io.load(op.data0);
  const Tile d1 = io.load(op.data1);
  require(d0.partitions == d1.partitions && d0.free == d1.free, "tensor_tensor_scan operands");
  require_shape(op.dst, d0.partitions, d0.free, "tensor_tensor_scan dst shape");
  const std::uint32_t partitions = d0.partitions;
  const std::uint64_t free = d0.free;
  std::vector<float> running = scalar_column(io, op.initial, partitions);
  Tile out = make_tile(partitions, free);
  math::with_alu_op(op.op0, [&](auto op0_constant) {
    math::with_alu_op(op.op1, [&](auto op1_constant) {
      constexpr AluOp kOp0 = decltype(op0_constant)::value;
      constexpr AluOp kOp1 = decltype(op1_constant)::value;
      // Free index outermost: each partition's recurrence is serial, the partitions are not.
      for (std::uint64_t i = 0; i < free; ++i) {
        for (std::uint32_t p = 0; p < partitions; ++p) {
          const std::uint64_t at = p * free + i;
          const float r =
              math::alu<kOp1>(math::alu<kOp0>(d0.values[at], running[p]), d1.values[at]);
          running[p] = r;
          out.values[at] = r;
        }
      }
    });
  });
  io.store(op.dst, out);
  return true;
}

// Per partition and per parity (even flat indices, then odd): count, mean, and the sum of
// squared deviations from that mean (= count * population variance). Two passes in fp32,
// each a sequential left-to-right sum.
bool run(const isa::BnStats& op, OperandIO& io) {
  const Tile data = io.load(op.data);
  require_shape(op.dst, data.partitions, 6, "bn_stats dst must have 6 elements per partition");
  Tile out = make_tile(data.partitions, 6);
  const std::uint64_t n = data.free;
  for (std::uint32_t p = 0; p < data.partitions; ++p) {
    const float* row = data.values.data() + p * n;
    for (std::uint64_t parity = 0; parity < 2; ++parity) {
      const std::uint64_t count = n > parity ? (n - parity + 1) / 2 : 0;
      float mean = 0.0f;
      float squared_deviations = 0.0f;
      if (count > 0) {
        float sum = row[parity];
        for (std::uint64_t i = parity + 2; i < n; i += 2) sum += row[i];
        mean = sum / static_cast<float>(count);
        const float first = row[parity] - mean;
        squared_deviations = first * first;
        for (std::uint64_t i = parity + 2; i < n; i += 2) {
          const float deviation = row[i] - mean;
          squared_deviations += deviation * deviation;
        }
      }
      float* stats = out.values.data() + p * 6 + parity * 3;
      stats[0] = static_cast<float>(count);
      stats[1] = mean;
      stats[2] = squared_deviations;
    }
  }
  io.store(op.dst, out);
  return true;
}

// Combines (count, mean, count*variance) triples: mean = sum(n_i mean_i) / N, variance =
// sum(M2_i + n_i (mean_i - mean)^2) / N, sequential over the triples, empty triples skipped.
bool run(const isa::BnAggr& op, OperandIO& io) {
  const Tile data = io.load(op.data);
  require(data.free % 3 == 0, "bn_aggr input must hold (count, mean, M2) triples");
  require_shape(op.dst, data.partitions, 2, "bn_aggr dst must have 2 elements per partition");
  Tile out = make_tile(data.partitions, 2);
  const std::uint64_t triples = data.free / 3;
  for (std::uint32_t p = 0; p < data.partitions; ++p) {
    const float* row = data.values.data() + p * data.free;
    float total = 0.0f;
    float weighted_sum = 0.0f;
    for (std::uint64_t t = 0; t < triples; ++t) {
      const float count = row[3 * t];
      if (count == 0.0f) continue;
      total += count;
      weighted_sum += count * row[3 * t + 1];
    }
    float mean = 0.0f;
    float variance = 0.0f;
    if (total > 0.0f) {
      mean = weighted_sum / total;
      float squared_deviations = 0.0f;
      for (std::uint64_t t = 0; t < triples; ++t) {
        const float count = row[3 * t];
        if (count == 0.0f) continue;
        const float shift = row[3 * t + 1] - mean;
        squared_deviations += row[3 * t + 2] + count * (shift * shift);
      }
      variance = squared_deviations / total;
    }
    out.values[p * 2] = mean;
    out.values[p * 2 + 1] = variance;
  }
  io.store(op.dst, out);
  return true;
}

bool run(const isa::Select& op, OperandIO& io) {
  const Tile predicate = io.load(op.predicate);
  const Tile on_true = io.load(op.on_true);
  require(predicate.partitions == on_true.partitions && predicate.free == on_true.free,
          "select operand shapes");
  require_shape(op.dst, on_true.partitions, on_true.free, "select dst shape");
  const auto on_false = scalar_column(io, op.on_false, on_true.partitions);
  Tile out = make_tile(on_true.partitions, on_true.free);
  for (std::uint32_t p = 0; p < on_true.partitions; ++p) {
    const std::uint64_t row = p * on_true.free;
    for (std::uint64_t i = 0; i < on_true.free; ++i) {
      const bool take_true = (predicate.values[row + i] != 0.0f) != op.reverse_pred;
      out.values[row + i] = take_true ? on_true.values[row + i] : on_false[p];
    }
  }
  io.store(op.dst, out);
  return true;
}

// Keeps on_true where both comparisons of the flat free index (+ range_start, as fp32)
// against the per-partition bounds hold; reduce_res gets the IEEE maximum of each row.
bool run(const isa::RangeSelect& op, OperandIO& io) {
  const Tile on_true = io.load(op.on_true);
  const std::uint32_t partitions = on_true.partitions;
  const std::uint64_t free = on_true.free;
  require_shape(op.dst, partitions, free, "range_select dst shape");
  const auto bound0 = scalar_column(io, op.bound0, partitions);
  const auto bound1 = scalar_column(io, op.bound1, partitions);
  std::vector<float> index(free);
  for (std::uint64_t i = 0; i < free; ++i)
    index[i] = static_cast<float>(static_cast<std::int64_t>(i) + op.range_start);

  std::vector<std::uint8_t> keep(on_true.values.size());
  math::with_alu_op(op.comp_op0, [&](auto op_constant) {
    constexpr AluOp kOp = decltype(op_constant)::value;
    for (std::uint32_t p = 0; p < partitions; ++p)
      for (std::uint64_t i = 0; i < free; ++i)
        keep[p * free + i] = math::alu<kOp>(index[i], bound0[p]) != 0.0f;
  });
  math::with_alu_op(op.comp_op1, [&](auto op_constant) {
    constexpr AluOp kOp = decltype(op_constant)::value;
    for (std::uint32_t p = 0; p < partitions; ++p)
      for (std::uint64_t i = 0; i < free; ++i)
        keep[p * free + i] &= math::alu<kOp>(index[i], bound1[p]) != 0.0f;
  });
  Tile out = make_tile(partitions, free);
  for (std::size_t k = 0; k < keep.size(); ++k)
    out.values[k] = keep[k] ? on_true.values[k] : op.on_false_value;
  io.store(op.dst, out);

  if (op.reduce_res) {
    Tile maxima = make_tile(partitions, 1);
    if (free > 0) maxima.values = fold_runs<AluOp::kMaximum>(out.values, partitions, free);
    io.store(*op.reduce_res, maxima);
  }
  return true;
}

bool run(const isa::Iota& op, OperandIO& io) {
  const std::uint32_t partitions = op.dst.partitions;
  const std::uint64_t free = free_count(op.dst);
  const auto values = affine_values(op.pattern, op.offset, op.channel_multiplier, partitions, free);
  if (math::is_integer_dtype(op.dst.dtype) && math::storage_bits(op.dst.dtype) == 32) {
    // 32-bit integer destinations get the exact int32 result (fp32 would round above 2^24).
    WordTile out = make_word_tile(partitions, free);
    for (std::size_t i = 0; i < values.size(); ++i) out.words[i] = values[i];
    io.store_words(op.dst, out);
    return true;
  }
  Tile out = make_tile(partitions, free);
  for (std::size_t i = 0; i < values.size(); ++i) out.values[i] = static_cast<float>(values[i]);
  io.store(op.dst, out);
  return true;
}

bool run(const isa::Memset& op, OperandIO& io) {
  const std::uint32_t partitions = op.dst.partitions;
  const std::uint64_t free = free_count(op.dst);
  if (math::is_x4_packed(op.dst.dtype)) {
    // NKI allows only 0 for x4-packed types; all-zero words are +0 in every lane.
    require(op.value == 0.0f, "memset of an x4-packed dtype must be 0");
    io.store_words(op.dst, make_word_tile(partitions, free));
    return true;
  }
  io.store(op.dst, make_tile(partitions, free, op.value));
  return true;
}

// The 8 largest values per partition, descending: NaN ranks above +Inf, equal values
// (including -0 and +0) keep their source order; fewer than 8 inputs pad with -Inf.
bool run(const isa::Max8& op, OperandIO& io) {
  constexpr std::uint64_t kCount = 8;
  const Tile src = io.load(op.src);
  require_shape(op.dst, src.partitions, kCount, "max8 dst must be [P, 8]");
  Tile out = make_tile(src.partitions, kCount, -std::numeric_limits<float>::infinity());
  std::vector<std::uint32_t> order(src.free);
  for (std::uint32_t p = 0; p < src.partitions; ++p) {
    const float* row = src.values.data() + p * src.free;
    auto ranks_before = [row](std::uint32_t a, std::uint32_t b) {
      const float x = row[a], y = row[b];
      if (math::is_nan(x) != math::is_nan(y)) return math::is_nan(x);
      if (!math::is_nan(x) && x != y) return x > y;
      return a < b;
    };
    std::iota(order.begin(), order.end(), 0u);
    const std::uint64_t taken = std::min<std::uint64_t>(kCount, src.free);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(taken),
                      order.end(), ranks_before);
    for (std::uint64_t k = 0; k < taken; ++k) out.values[p * kCount + k] = row[order[k]];
  }
  io.store(op.dst, out);
  return true;
}

// For each of the 8 values, the first flat index whose element compares equal (fp32 ==, so
// -0 matches +0 and NaN matches nothing); a value equal to an earlier one continues the
// search after that one's match. Not found: all ones (integer dst) or -1 (float dst).
bool run(const isa::NcFindIndex8& op, OperandIO& io) {
  constexpr std::uint64_t kCount = 8;
  const Tile data = io.load(op.data);
  const Tile vals = io.load(op.vals);
  require(vals.partitions == data.partitions && vals.free >= kCount, "nc_find_index8 vals");
  require_shape(op.dst, data.partitions, kCount, "nc_find_index8 dst must be [P, 8]");
  constexpr std::int64_t kNotFound = -1;
  std::vector<std::int64_t> found(static_cast<std::size_t>(data.partitions) * kCount);
  for (std::uint32_t p = 0; p < data.partitions; ++p) {
    const float* row = data.values.data() + p * data.free;
    const float* wanted = vals.values.data() + p * vals.free;
    std::int64_t* result = found.data() + p * kCount;
    for (std::uint64_t k = 0; k < kCount; ++k) {
      std::uint64_t start = 0;
      for (std::uint64_t j = k; j-- > 0;) {
        if (wanted[j] == wanted[k]) {
          start = result[j] == kNotFound ? data.free : static_cast<std::uint64_t>(result[j]) + 1;
          break;
        }
      }
      result[k] = kNotFound;
      for (std::uint64_t i = start; i < data.free; ++i) {
        if (row[i] == wanted[k]) {
          result[k] = static_cast<std::int64_t>(i);
          break;
        }
      }
    }
  }
  if (math::is_integer_dtype(op.dst.dtype)) {
    const unsigned width = math::storage_bits(op.dst.dtype);
    const std::int64_t all_ones = static_cast<std::int64_t>((std::uint64_t{1} << width) - 1);
    WordTile out = make_word_tile(data.partitions, kCount);
    for (std::size_t i = 0; i < found.size(); ++i)
      out.words[i] = found[i] == kNotFound ? all_ones : found[i];
    io.store_words(op.dst, out);
    return true;
  }
  Tile out = make_tile(data.partitions, kCount);
  for (std::size_t i = 0; i < found.size(); ++i) out.values[i] = static_cast<float>(found[i]);
  io.store(op.dst, out);
  return true;
}

// Per-partition sums for reduce_res: sequential over the fp32 results (before the dst cast).
void store_row_sums(OperandIO& io, const AccessPattern& reduce_res, const Tile& values) {
  Tile sums = make_tile(values.partitions, 1);
  for (std::uint32_t p = 0; p < values.partitions; ++p)
    sums.values[p] =
        sequential_sum(std::span<const float>(values.values).subspan(p * values.free, values.free));
  io.store(reduce_res, sums);
}

bool run(const isa::Exponential& op, OperandIO& io) {
  Tile data = io.load(op.src);
  require_shape(op.dst, data.partitions, data.free, "exponential dst shape");
  const auto max_value = scalar_column(io, op.max_value, data.partitions);
  for (std::uint32_t p = 0; p < data.partitions; ++p) {
    float* row = data.values.data() + p * data.free;
    for (std::uint64_t i = 0; i < data.free; ++i)
      row[i] = math::activate<isa::ActivationFunc::kExp>(row[i] - max_value[p]);
  }
  io.store(op.dst, data);
  if (op.reduce_res) store_row_sums(io, *op.reduce_res, data);
  return true;
}

bool run(const isa::Reciprocal& op, OperandIO& io) {
  Tile data = io.load(op.data);
  require_shape(op.dst, data.partitions, data.free, "reciprocal dst shape");
  for (float& v : data.values) v = 1.0f / v;  // correctly rounded (the Vector engine's is exact)
  io.store(op.dst, data);
  return true;
}

// MXFP8 quantisation in the layout nc_matmul_mx consumes. A block of 32 values is 8
// partitions x 4 consecutive elements: block (quadrant q, row group s in 0..3, word j) covers
// src partitions 32q + 8s .. 32q + 8s + 7, elements 4j .. 4j + 3; its 4 x 8 codes become word j
// of those dst partitions (element 4j + e in lane e) and its E8M0 scale goes to dst_scale
// partition 32q + s, element j. Only those 4 scale partitions per quadrant are written, so
// other scale tensors packed at offsets 4/8/12 of a quadrant survive. The scale follows
// Trainium's rule (2x the OCP scale); elements round to nearest even and saturate.
bool run(const isa::QuantizeMx& op, OperandIO& io) {
  constexpr std::uint32_t kQuadrant = 32;
  constexpr std::uint32_t kRowsPerBlock = 8;
  constexpr std::uint32_t kLanes = 4;
  require(op.dst.dtype == DType::kFloat8E4M3x4 || op.dst.dtype == DType::kFloat8E5M2x4,
          "quantize_mx dst must be float8_e4m3fn_x4 or float8_e5m2_x4");
  const Tile src = io.load(op.src);
  const std::uint32_t partitions = src.partitions;
  require(partitions % kQuadrant == 0 && partitions > 0,
          "quantize_mx src partitions must be a multiple of 32");
  require(src.free % kLanes == 0, "quantize_mx src free size must be a multiple of 4");
  const std::uint64_t words = src.free / kLanes;
  require_shape(op.dst, partitions, words, "quantize_mx dst must be [P, F/4]");
  const std::uint32_t quadrants = partitions / kQuadrant;
  require(op.dst_scale.partitions >= (quadrants - 1) * kQuadrant + kLanes &&
              free_count(op.dst_scale) == words,
          "quantize_mx dst_scale must cover 4 partitions per quadrant and F/4 elements");

  numerics::MxOptions options;
  options.element = op.dst.dtype == DType::kFloat8E4M3x4 ? DType::kFloat8E4M3 : DType::kFloat8E5M2;
  options.scale_rule = numerics::MxScaleRule::kTrainium;
  options.rounding = numerics::RoundingMode::kNearestEven;

  WordTile packed = make_word_tile(partitions, words);
  WordTile scale_rows = make_word_tile(kLanes, words);  // one quadrant's 4 scale partitions
  std::array<float, numerics::kMxBlockSize> block{};
  std::array<std::uint8_t, numerics::kMxBlockSize> codes{};
  for (std::uint32_t q = 0; q < quadrants; ++q) {
    for (std::uint32_t s = 0; s < kLanes; ++s) {
      const std::uint32_t first_row = q * kQuadrant + s * kRowsPerBlock;
      for (std::uint64_t j = 0; j < words; ++j) {
        for (std::uint32_t r = 0; r < kRowsPerBlock; ++r)
          for (std::uint32_t e = 0; e < kLanes; ++e)
            block[r * kLanes + e] = src.values[(first_row + r) * src.free + j * kLanes + e];
        const std::uint8_t scale = numerics::quantize_mx_block(block, codes, options);
        scale_rows.words[s * words + j] = scale;
        for (std::uint32_t r = 0; r < kRowsPerBlock; ++r) {
          std::uint32_t word = 0;
          for (std::uint32_t e = 0; e < kLanes; ++e)
            word |= std::uint32_t{codes[r * kLanes + e]} << (8 * e);
          packed.words[(first_row + r) * words + j] = word;
        }
      }
    }
    io.store_words(partition_slice(op.dst_scale, q * kQuadrant, kLanes), scale_rows);
  }
  io.store_words(op.dst, packed);
  return true;
}

// dst = func(data * scale + bias): the product and the sum are each rounded to fp32 (no
// fused multiply-add), then func is applied.
bool run(const isa::Activation& op, OperandIO& io) {
  Tile data = io.load(op.data);
  require_shape(op.dst, data.partitions, data.free, "activation dst shape");
  const auto scale = scalar_column(io, op.scale, data.partitions);
  const auto bias = scalar_column(io, op.bias, data.partitions);
  math::with_activation(op.func, [&](auto func_constant) {
    constexpr isa::ActivationFunc kFunc = decltype(func_constant)::value;
    for (std::uint32_t p = 0; p < data.partitions; ++p) {
      float* row = data.values.data() + p * data.free;
      const float s = scale[p];
      const float b = bias[p];
      for (std::uint64_t i = 0; i < data.free; ++i) {
        const float scaled = row[i] * s;
        const float shifted = scaled + b;
        row[i] = math::activate<kFunc>(shifted);
      }
    }
  });
  io.store(op.dst, data);
  if (op.reduce_res) store_row_sums(io, *op.reduce_res, data);
  return true;
}

// ---------------------------------------------------------------------------------------
// GpSimd

template <AluOp kOp>
bool holds_against_zero(std::int32_t v) {
  if constexpr (kOp == AluOp::kEqual)
    return v == 0;
  else if constexpr (kOp == AluOp::kNotEqual)
    return v != 0;
  else if constexpr (kOp == AluOp::kGreater)
    return v > 0;
  else if constexpr (kOp == AluOp::kGreaterEqual)
    return v >= 0;
  else if constexpr (kOp == AluOp::kLess)
    return v < 0;
  else if constexpr (kOp == AluOp::kLessEqual)
    return v <= 0;
  else
    return math::alu<kOp>(static_cast<float>(v), 0.0f) != 0.0f;
}

bool run(const isa::AffineSelect& op, OperandIO& io) {
  const Tile on_true = io.load(op.on_true);
  require_shape(op.dst, on_true.partitions, on_true.free, "affine_select dst shape");
  const auto values =
      affine_values(op.pattern, op.offset, op.channel_multiplier, on_true.partitions, on_true.free);
  Tile out = make_tile(on_true.partitions, on_true.free);
  math::with_alu_op(op.cmp_op, [&](auto op_constant) {
    constexpr AluOp kOp = decltype(op_constant)::value;
    for (std::size_t i = 0; i < values.size(); ++i)
      out.values[i] = holds_against_zero<kOp>(values[i]) ? on_true.values[i] : op.on_false_value;
  });
  io.store(op.dst, out);
  return true;
}

// Each core (16 partitions) reads its 16-partition slice of `index`, flattened partition-
// first (index[0,0], index[1,0], ..., index[15,0], index[0,1], ...); index k is an element
// offset inside the partition, and every partition q of the core receives its own
// src[q, v_k .. v_k + n) as dst[q, k*n .. k*n + n). dst's size sets how many indices are used
// (NKI's num_valid_indices). Words are copied, no dtype cast.
bool run(const isa::LocalGather& op, OperandIO& io) {
  constexpr std::uint32_t kCorePartitions = 16;
  const WordTile src = io.load_words(op.src);
  const WordTile index = io.load_words(op.index);
  const std::uint64_t per_index = op.num_elem_per_idx;
  const std::uint32_t partitions = src.partitions;
  require(per_index >= 1, "local_gather num_elem_per_idx must be >= 1");
  require(partitions % kCorePartitions == 0, "local_gather partitions must be a multiple of 16");
  require(index.partitions == partitions, "local_gather index partitions must match src");
  const std::uint64_t dst_free = free_count(op.dst);
  require(op.dst.partitions == partitions && dst_free % per_index == 0, "local_gather dst shape");
  const std::uint64_t used_indices = dst_free / per_index;
  require(used_indices <= kCorePartitions * index.free, "local_gather dst needs more indices");

  WordTile out = make_word_tile(partitions, dst_free);
  for (std::uint32_t core_first = 0; core_first < partitions; core_first += kCorePartitions) {
    for (std::uint64_t k = 0; k < used_indices; ++k) {
      const std::uint64_t index_partition = core_first + k % kCorePartitions;
      const std::uint64_t offset =
          static_cast<std::uint64_t>(
              index.words[index_partition * index.free + k / kCorePartitions]) &
          0xFFFFu;
      if (offset + per_index > src.free)
        throw std::out_of_range("local_gather index " + std::to_string(offset) +
                                " beyond the source partition (" + std::to_string(src.free) +
                                " elements)");
      for (std::uint32_t q = 0; q < kCorePartitions; ++q) {
        const std::uint64_t p = core_first + q;
        const std::int64_t* from = src.words.data() + p * src.free + offset;
        std::copy(from, from + per_index, out.words.data() + p * dst_free + k * per_index);
      }
    }
  }
  io.store_words(op.dst, out);
  return true;
}

// Within each 32-partition quadrant (counted from the operands' first partition), dst
// partition i takes src partition mask[i]; 255 leaves dst untouched (it is not written).
template <class T>
void shuffle_rows(const isa::NcStreamShuffle& op, const T& src, OperandIO& io) {
  constexpr std::uint32_t kQuadrant = 32;
  constexpr std::uint8_t kKeep = 255;
  const std::uint32_t partitions = op.dst.partitions;
  T out;
  out.partitions = partitions;
  out.free = src.free;
  auto& cells = [&]() -> auto& {
    if constexpr (std::is_same_v<T, Tile>)
      return out.values;
    else
      return out.words;
  }
  ();
  const auto& from = [&]() -> const auto& {
    if constexpr (std::is_same_v<T, Tile>)
      return src.values;
    else
      return src.words;
  }
  ();
  cells.resize(static_cast<std::size_t>(partitions) * src.free);
  for (std::uint32_t d = 0; d < partitions; ++d) {
    const std::uint8_t source_in_quadrant = op.mask[d % kQuadrant];
    if (source_in_quadrant == kKeep) continue;
    const std::uint32_t s = d - d % kQuadrant + source_in_quadrant;
    require(source_in_quadrant < kQuadrant && s < src.partitions,
            "nc_stream_shuffle mask selects a partition outside the source");
    std::copy(from.begin() + s * src.free, from.begin() + (s + 1) * src.free,
              cells.begin() + d * src.free);
  }
  // Store each run of written partitions; kept partitions are never touched.
  std::uint32_t d = 0;
  while (d < partitions) {
    if (op.mask[d % kQuadrant] == kKeep) {
      ++d;
      continue;
    }
    std::uint32_t end = d;
    while (end < partitions && op.mask[end % kQuadrant] != kKeep) ++end;
    const T run_rows = rows_of(out, d, end - d);
    if constexpr (std::is_same_v<T, Tile>)
      io.store(partition_slice(op.dst, d, end - d), run_rows);
    else
      io.store_words(partition_slice(op.dst, d, end - d), run_rows);
    d = end;
  }
}

bool run(const isa::NcStreamShuffle& op, OperandIO& io) {
  const std::uint64_t free = free_count(op.dst);
  if (op.src.dtype == op.dst.dtype) {
    const WordTile src = io.load_words(op.src);
    require(src.free == free, "nc_stream_shuffle src/dst free sizes");
    shuffle_rows(op, src, io);
  } else {
    const Tile src = io.load(op.src);
    require(src.free == free, "nc_stream_shuffle src/dst free sizes");
    shuffle_rows(op, src, io);
  }
  return true;
}

// Vector-engine transpose (<= 32 x 32): dst[i, p] = data[p, i], bit-exact for equal dtypes.
// The tensor-engine transpose (PE array into PSUM) is the executor's.
bool run(const isa::NcTranspose& op, OperandIO& io) {
  if (io.instruction().queue.engine != isa::Engine::kVector) return false;
  auto transpose = [&](const auto& cells_in, auto& cells_out, std::uint32_t partitions,
                       std::uint64_t free) {
    for (std::uint32_t p = 0; p < partitions; ++p)
      for (std::uint64_t i = 0; i < free; ++i)
        cells_out[i * partitions + p] = cells_in[p * free + i];
  };
  if (op.data.dtype == op.dst.dtype) {
    const WordTile in = io.load_words(op.data);
    require_shape(op.dst, static_cast<std::uint32_t>(in.free), in.partitions, "nc_transpose dst");
    WordTile out = make_word_tile(static_cast<std::uint32_t>(in.free), in.partitions);
    transpose(in.words, out.words, in.partitions, in.free);
    io.store_words(op.dst, out);
  } else {
    const Tile in = io.load(op.data);
    require_shape(op.dst, static_cast<std::uint32_t>(in.free), in.partitions, "nc_transpose dst");
    Tile out = make_tile(static_cast<std::uint32_t>(in.free), in.partitions);
    transpose(in.values, out.values, in.partitions, in.free);
    io.store(op.dst, out);
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Random numbers. The state belongs to the engine's lane, so it is addressed by absolute
// partition. A lane may hold several XORWOW generators (6 words each: 1 on GpSimd, 4 on the
// gen4 Vector engine); element i of a row draws from generator i mod count.

std::span<std::uint32_t> lane_state(OperandIO& io, const AccessPattern& ap, std::uint32_t p) {
  const std::span<std::uint32_t> state =
      io.rng_state(io.instruction().queue.engine, ap.start_partition + p);
  require(state.size() >= math::kXorwowWords && state.size() % math::kXorwowWords == 0,
          "rng state must be a whole number of 6-word XORWOW generators");
  return state;
}

bool run(const isa::Rand2& op, OperandIO& io) {
  const std::uint32_t partitions = op.dst.partitions;
  const std::uint64_t free = free_count(op.dst);
  Tile out = make_tile(partitions, free);
  for (std::uint32_t p = 0; p < partitions; ++p) {
    const std::span<std::uint32_t> state = lane_state(io, op.dst, p);
    const std::uint64_t generators = state.size() / math::kXorwowWords;
    for (std::uint64_t i = 0; i < free; ++i) {
      const auto generator =
          state.subspan((i % generators) * math::kXorwowWords, math::kXorwowWords);
      out.values[p * free + i] =
          math::uniform_from_bits(math::xorwow_next(generator), op.min, op.max);
    }
  }
  io.store(op.dst, out);
  return true;
}

bool run(const isa::RandSetState& op, OperandIO& io) {
  const WordTile seeds = io.load_words(op.src_seeds);
  for (std::uint32_t p = 0; p < seeds.partitions; ++p) {
    const std::span<std::uint32_t> state = lane_state(io, op.src_seeds, p);
    require(seeds.free == state.size(), "rand_set_state needs exactly one state per partition");
    for (std::size_t w = 0; w < state.size(); ++w)
      state[w] = static_cast<std::uint32_t>(seeds.words[p * seeds.free + w]);
  }
  return true;
}

bool run(const isa::RandGetState& op, OperandIO& io) {
  const std::uint32_t partitions = op.dst.partitions;
  const std::uint64_t free = free_count(op.dst);
  WordTile out = make_word_tile(partitions, free);
  for (std::uint32_t p = 0; p < partitions; ++p) {
    const std::span<std::uint32_t> state = lane_state(io, op.dst, p);
    require(free == state.size(), "rand_get_state needs exactly one state per partition");
    for (std::size_t w = 0; w < state.size(); ++w) out.words[p * free + w] = state[w];
  }
  io.store_words(op.dst, out);
  return true;
}

// Everything else (matmul, tensor-engine transpose, DMA, synchronisation, custom ops) is
// run by the executor.
template <class Op>
bool run(const Op&, OperandIO&) {
  return false;
}

}  // namespace

bool execute_elementwise(const isa::Operation& op, OperandIO& io) {
  return std::visit([&io](const auto& operation) { return run(operation, io); }, op);
}

}  // namespace trnsim::sim
