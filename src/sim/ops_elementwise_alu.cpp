// Elementwise ALU operations of the Vector, Scalar and GpSimd engines: tensor_tensor,
// tensor_scalar, scalar_tensor_tensor, tensor_copy, tensor_scalar_reduce and
// tensor_copy_predicated (docs/simulator-ops.md; the last two in docs/isa.md).
#include <algorithm>
#include <cstdint>
#include <span>
#include <variant>
#include <vector>

#include "numerics/numerics.h"
#include "sim/ops_elementwise_detail.h"
#include "sim/ops_math.h"

namespace trnsim::sim::elementwise_detail {

namespace {

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

}  // namespace

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

bool run(const isa::TensorTensor& op, OperandIO& io) {
  if (isa::is_bitvec_op(op.op)) {
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
  const bool bitvec0 = isa::is_bitvec_op(op.op0);
  const bool bitvec1 = isa::is_bitvec_op(op.op1);
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

// dst = data op0 operand0 as tensor_scalar's first stage; reduce_res folds reduce_op over the
// fp32 results of each partition (before the dst cast), left to right.
bool run(const isa::TensorScalarReduce& op, OperandIO& io) {
  Tile data = io.load(op.data);
  require_shape(op.dst, data.partitions, data.free, "tensor_scalar_reduce dst shape");
  if (op.op0 != AluOp::kBypass || op.reverse0) {
    const auto column = scalar_column(io, op.operand0, data.partitions);
    apply_scalar_op(data.values, data.partitions, data.free, op.op0, column, op.reverse0);
  }
  io.store(op.dst, data);
  if (op.reduce_res)
    store_row_reduction(io, *op.reduce_res, data, op.reduce_op, op.reduce_res_negate);
  return true;
}

// The scan follows NKI's pseudocode literally: acc = op1(op0(x_i, imm0), acc), so with
// subtract acc_i = y_i - acc_{i-1}. The start value comes from reduce_cmd; the final acc
// stays in the lane's accumulator register (fp32, before the dst cast).
bool run(const isa::TensorScalarCumulative& op, OperandIO& io) {
  Tile data = io.load(op.src);
  const std::uint32_t partitions = data.partitions;
  const std::uint64_t free = data.free;
  require_shape(op.dst, partitions, free, "tensor_scalar_cumulative dst shape");
  if (op.op0 != AluOp::kBypass) {
    const auto column = scalar_column(io, op.imm0, partitions);
    apply_scalar_op(data.values, partitions, free, op.op0, column, /*reverse=*/false);
  }
  math::with_alu_op(op.op1, [&](auto op_constant) {
    constexpr AluOp kOp = decltype(op_constant)::value;
    for (std::uint32_t p = 0; p < partitions; ++p) {
      float& accumulator = io.accumulator(op.dst.start_partition + p);
      float acc = 0.0f;
      switch (op.reduce_cmd) {
        case isa::ReduceCmd::kReduce:
          acc = accumulator;
          break;
        case isa::ReduceCmd::kLoadReduce:
          acc = io.scalar(op.imm1, p);
          break;
        default:
          acc = math::reduction_identity(kOp);
          break;
      }
      float* row = data.values.data() + p * free;
      for (std::uint64_t i = 0; i < free; ++i) {
        acc = math::alu<kOp>(row[i], acc);
        row[i] = acc;
      }
      accumulator = acc;
    }
  });
  io.store(op.dst, data);
  return true;
}

// Storage words move unchanged (src and dst share their dtype); an immediate src is encoded
// once into the dst dtype (round to nearest even). dst is read only when the predicate
// leaves some element of it in place.
bool run(const isa::TensorCopyPredicated& op, OperandIO& io) {
  const WordTile predicate = io.load_words(op.predicate);
  const std::uint32_t partitions = predicate.partitions;
  const std::uint64_t free = predicate.free;
  require_shape(op.dst, partitions, free, "tensor_copy_predicated dst shape");
  std::vector<std::uint8_t> take(predicate.words.size());
  for (std::size_t i = 0; i < take.size(); ++i)
    take[i] = (predicate.words[i] != 0) != op.reverse_pred;
  const bool all = std::all_of(take.begin(), take.end(), [](std::uint8_t t) { return t != 0; });

  WordTile out = all ? make_word_tile(partitions, free) : io.load_words(op.dst);
  if (op.src) {
    require(op.src->dtype == op.dst.dtype, "tensor_copy_predicated src and dst dtypes differ");
    const WordTile src = io.load_words(*op.src);
    require(src.partitions == partitions && src.free == free, "tensor_copy_predicated src shape");
    for (std::size_t i = 0; i < take.size(); ++i)
      if (take[i]) out.words[i] = src.words[i];
  } else {
    require(!math::is_x4_packed(op.dst.dtype), "tensor_copy_predicated into an x4-packed dtype");
    const auto word = static_cast<std::int64_t>(numerics::encode(op.dst.dtype, op.src_value));
    for (std::size_t i = 0; i < take.size(); ++i)
      if (take[i]) out.words[i] = word;
  }
  io.store_words(op.dst, out);
  return true;
}

}  // namespace trnsim::sim::elementwise_detail
