// Selects, patterns and fills: select, range_select, iota, memset and affine_select
// (docs/simulator-ops.md).
#include <array>
#include <cstdint>
#include <vector>

#include "sim/ops_elementwise_detail.h"
#include "sim/ops_math.h"

namespace trnsim::sim::elementwise_detail {

namespace {

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

}  // namespace

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

}  // namespace trnsim::sim::elementwise_detail
