// Internals of the elementwise semantics shared by their files (not part of sim/ops.h): the
// helpers every family uses and one run() overload per operation that execute_elementwise
// (ops_elementwise.cpp) dispatches to. The operations are split by family:
// ops_elementwise_alu.cpp (tensor_tensor, tensor_scalar, scalar_tensor_tensor, tensor_copy,
// tensor_scalar_reduce, tensor_copy_predicated, tensor_scalar_cumulative),
// ops_elementwise_reduce.cpp (reductions, scans, batch-norm statistics, max8 /
// nc_find_index8 / nc_match_replace8),
// ops_elementwise_select.cpp (select, range_select, iota, memset, affine_select),
// ops_elementwise_activation.cpp (activation, activate2, exponential, reciprocal),
// ops_elementwise_permute.cpp (local_gather, nc_stream_shuffle, Vector transpose),
// ops_elementwise_random.cpp (random numbers, dropout, MX quantisation) and
// ops_gpsimd_index.cpp (sequence_bounds, nonzero_with_count, nc_n_gather, topk).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/ops.h"
#include "sim/ops_math.h"

namespace trnsim::sim::elementwise_detail {

using isa::AccessPattern;
using isa::AluOp;
using isa::ScalarOperand;
using numerics::DType;

// ---------------------------------------------------------------------------------------
// Helpers

// Malformed instructions are the validator's to reject; reaching one here is a bug upstream,
// reported loudly rather than producing made-up data.
inline void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("elementwise semantics: ") + what);
}

inline std::uint64_t free_count(const AccessPattern& ap) {
  std::uint64_t n = 1;
  for (int k = 0; k < ap.num_dims; ++k) n *= ap.dims[k].count;
  return n;
}

inline void require_shape(const AccessPattern& ap, std::uint32_t partitions, std::uint64_t free,
                          const char* what) {
  require(ap.partitions == partitions && free_count(ap) == free, what);
}

inline Tile make_tile(std::uint32_t partitions, std::uint64_t free, float fill = 0.0f) {
  Tile t;
  t.partitions = partitions;
  t.free = free;
  t.values.assign(static_cast<std::size_t>(partitions) * free, fill);
  return t;
}

inline WordTile make_word_tile(std::uint32_t partitions, std::uint64_t free) {
  WordTile t;
  t.partitions = partitions;
  t.free = free;
  t.words.assign(static_cast<std::size_t>(partitions) * free, 0);
  return t;
}

// The per-partition values of a scalar operand (immediate or [P, 1] tensor).
std::vector<float> scalar_column(OperandIO& io, const ScalarOperand& operand,
                                 std::uint32_t partitions);

// In-place `values[p, i] = values[p, i] op column[p]` (or `column[p] op values[p, i]` with
// reverse), vectorised per partition (ops_elementwise_alu.cpp).
void apply_scalar_op(std::vector<float>& values, std::uint32_t partitions, std::uint64_t free,
                     AluOp op, std::span<const float> column, bool reverse);

// reduce_res of the fused reductions: op folded left to right over each partition's fp32
// values (before any dst cast), negated with `negate`, stored as [P, 1].
void store_row_reduction(OperandIO& io, const AccessPattern& reduce_res, const Tile& values,
                         AluOp op, bool negate = false);

// The sub-range [first, first + count) of an operand's partitions.
AccessPattern partition_slice(const AccessPattern& ap, std::uint32_t first, std::uint32_t count);

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
// One overload per operation it runs.

// ops_elementwise_alu.cpp
bool run(const isa::TensorTensor& op, OperandIO& io);
bool run(const isa::TensorScalar& op, OperandIO& io);
bool run(const isa::ScalarTensorTensor& op, OperandIO& io);
bool run(const isa::TensorCopy& op, OperandIO& io);
bool run(const isa::TensorScalarReduce& op, OperandIO& io);
bool run(const isa::TensorCopyPredicated& op, OperandIO& io);
bool run(const isa::TensorScalarCumulative& op, OperandIO& io);
// ops_elementwise_reduce.cpp
bool run(const isa::TensorReduce& op, OperandIO& io);
bool run(const isa::TensorPartitionReduce& op, OperandIO& io);
bool run(const isa::TensorTensorScan& op, OperandIO& io);
bool run(const isa::BnStats& op, OperandIO& io);
bool run(const isa::BnAggr& op, OperandIO& io);
bool run(const isa::Max8& op, OperandIO& io);
bool run(const isa::NcFindIndex8& op, OperandIO& io);
bool run(const isa::NcMatchReplace8& op, OperandIO& io);
// ops_elementwise_select.cpp
bool run(const isa::Select& op, OperandIO& io);
bool run(const isa::RangeSelect& op, OperandIO& io);
bool run(const isa::Iota& op, OperandIO& io);
bool run(const isa::Memset& op, OperandIO& io);
bool run(const isa::AffineSelect& op, OperandIO& io);
// ops_elementwise_activation.cpp
bool run(const isa::Exponential& op, OperandIO& io);
bool run(const isa::Reciprocal& op, OperandIO& io);
bool run(const isa::Activation& op, OperandIO& io);
bool run(const isa::Activate2& op, OperandIO& io);
// ops_elementwise_permute.cpp
bool run(const isa::LocalGather& op, OperandIO& io);
bool run(const isa::NcStreamShuffle& op, OperandIO& io);
bool run(const isa::NcTranspose& op, OperandIO& io);
// ops_elementwise_random.cpp
bool run(const isa::QuantizeMx& op, OperandIO& io);
bool run(const isa::Rand2& op, OperandIO& io);
bool run(const isa::RandSetState& op, OperandIO& io);
bool run(const isa::RandGetState& op, OperandIO& io);
bool run(const isa::Rng& op, OperandIO& io);
bool run(const isa::SetRngSeed& op, OperandIO& io);
bool run(const isa::Dropout& op, OperandIO& io);
// ops_gpsimd_index.cpp
bool run(const isa::SequenceBounds& op, OperandIO& io);
bool run(const isa::NonzeroWithCount& op, OperandIO& io);
bool run(const isa::NcNGather& op, OperandIO& io);
bool run(const isa::Topk& op, OperandIO& io);

// Everything else (matmul, tensor-engine transpose, DMA, synchronisation, custom ops) is
// run by the executor.
template <class Op>
bool run(const Op&, OperandIO&) {
  return false;
}

}  // namespace trnsim::sim::elementwise_detail
