// Semantics of the Vector, Scalar and GpSimd instructions (see docs/simulator-ops.md,
// "Elementwise semantics", for the rules in prose).
//
// Shape of every operation: one io.load (or io.load_words) per operand, tight loops over the
// dense buffers with the operator chosen once per instruction (templates from ops_math.h),
// one io.store per output. Values are fp32 in between, as inside the engines; the dtype
// conversions on both ends belong to OperandIO.
//
// This file holds the helpers shared by the families and the dispatch; the operations are
// in ops_elementwise_*.cpp (see ops_elementwise_detail.h).
#include <cstdint>
#include <variant>
#include <vector>

#include "sim/ops.h"
#include "sim/ops_elementwise_detail.h"
#include "sim/ops_math.h"

namespace trnsim::sim {

namespace elementwise_detail {

std::vector<float> scalar_column(OperandIO& io, const ScalarOperand& operand,
                                 std::uint32_t partitions) {
  std::vector<float> column(partitions);
  for (std::uint32_t p = 0; p < partitions; ++p) column[p] = io.scalar(operand, p);
  return column;
}

void store_row_reduction(OperandIO& io, const AccessPattern& reduce_res, const Tile& values,
                         AluOp op, bool negate) {
  Tile result = make_tile(values.partitions, 1);
  if (values.free > 0) {
    math::with_alu_op(op, [&](auto op_constant) {
      result.values =
          fold_runs<decltype(op_constant)::value>(values.values, values.partitions, values.free);
    });
  }
  if (negate) {
    for (float& v : result.values) v = -v;
  }
  io.store(reduce_res, result);
}

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

}  // namespace elementwise_detail

bool execute_elementwise(const isa::Operation& op, OperandIO& io) {
  return std::visit([&io](const auto& operation) { return elementwise_detail::run(operation, io); },
                    op);
}

}  // namespace trnsim::sim
