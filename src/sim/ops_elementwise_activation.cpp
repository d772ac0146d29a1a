// Per-element functions: exponential, reciprocal, activation (docs/simulator-ops.md) and
// activate2 (docs/isa.md).
#include <cstdint>
#include <span>

#include "sim/ops_elementwise_detail.h"
#include "sim/ops_math.h"

namespace trnsim::sim::elementwise_detail {

namespace {

float sequential_sum(std::span<const float> values) {
  if (values.empty()) return 0.0f;
  float sum = values[0];
  for (std::size_t i = 1; i < values.size(); ++i) sum += values[i];
  return sum;
}

// Per-partition sums for reduce_res: sequential over the fp32 results (before the dst cast).
void store_row_sums(OperandIO& io, const AccessPattern& reduce_res, const Tile& values) {
  Tile sums = make_tile(values.partitions, 1);
  for (std::uint32_t p = 0; p < values.partitions; ++p)
    sums.values[p] =
        sequential_sum(std::span<const float>(values.values).subspan(p * values.free, values.free));
  io.store(reduce_res, sums);
}

}  // namespace

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

// dst = func((data op0 imm0) op1 imm1): each stage rounded to fp32 (a bypass stage without
// reverse is skipped), then func (prelu with the partition's relu_param); reduce_res folds
// reduce_op over the fp32 results.
bool run(const isa::Activate2& op, OperandIO& io) {
  Tile data = io.load(op.data);
  require_shape(op.dst, data.partitions, data.free, "activate2 dst shape");
  const struct {
    AluOp op;
    const ScalarOperand& imm;
    bool reverse;
  } stages[] = {{op.op0, op.imm0, op.reverse0}, {op.op1, op.imm1, op.reverse1}};
  for (const auto& stage : stages) {
    if (stage.op == AluOp::kBypass && !stage.reverse) continue;
    const auto column = scalar_column(io, stage.imm, data.partitions);
    apply_scalar_op(data.values, data.partitions, data.free, stage.op, column, stage.reverse);
  }
  const auto relu_param = scalar_column(io, op.relu_param, data.partitions);
  math::with_activation(op.func, [&](auto func_constant) {
    constexpr isa::ActivationFunc kFunc = decltype(func_constant)::value;
    for (std::uint32_t p = 0; p < data.partitions; ++p) {
      float* row = data.values.data() + p * data.free;
      for (std::uint64_t i = 0; i < data.free; ++i)
        row[i] = math::activate<kFunc>(row[i], relu_param[p]);
    }
  });
  io.store(op.dst, data);
  if (op.reduce_res) store_row_reduction(io, *op.reduce_res, data, op.reduce_op);
  return true;
}

}  // namespace trnsim::sim::elementwise_detail
