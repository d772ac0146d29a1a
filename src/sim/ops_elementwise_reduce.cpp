// Reductions and scans: tensor_reduce, tensor_partition_reduce, tensor_tensor_scan,
// bn_stats / bn_aggr, max8 and nc_find_index8 (docs/simulator-ops.md), nc_match_replace8
// (docs/isa.md).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "sim/ops_elementwise_detail.h"
#include "sim/ops_math.h"

namespace trnsim::sim::elementwise_detail {

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

  if (isa::is_bitvec_op(op.op)) {
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

// vals are taken from the last to the first (NKI 0.6, as the hardware): each replaces the
// first element equal to it (fp32 ==: -0 matches +0, NaN matches nothing) that no earlier
// value replaced, so duplicates pair with successive occurrences from the highest slot down.
// dst_idx gets each value's index, all ones when none is left.
bool run(const isa::NcMatchReplace8& op, OperandIO& io) {
  constexpr std::uint64_t kCount = 8;
  Tile data = io.load(op.data);
  const Tile vals = io.load(op.vals);
  require(vals.partitions == data.partitions && vals.free >= kCount, "nc_match_replace8 vals");
  require_shape(op.dst, data.partitions, data.free, "nc_match_replace8 dst shape");
  constexpr std::int64_t kNotFound = -1;
  std::vector<std::int64_t> found(static_cast<std::size_t>(data.partitions) * kCount, kNotFound);
  std::vector<std::uint8_t> replaced(data.free);
  for (std::uint32_t p = 0; p < data.partitions; ++p) {
    float* row = data.values.data() + p * data.free;
    const float* wanted = vals.values.data() + p * vals.free;
    std::fill(replaced.begin(), replaced.end(), std::uint8_t{0});
    for (std::uint64_t k = kCount; k-- > 0;) {
      for (std::uint64_t i = 0; i < data.free; ++i) {
        if (replaced[i] == 0 && row[i] == wanted[k]) {
          replaced[i] = 1;
          found[p * kCount + k] = static_cast<std::int64_t>(i);
          break;
        }
      }
    }
    for (std::uint64_t i = 0; i < data.free; ++i)
      if (replaced[i] != 0) row[i] = op.imm;
  }
  io.store(op.dst, data);
  if (op.dst_idx) {
    require(math::is_integer_dtype(op.dst_idx->dtype), "nc_match_replace8 dst_idx dtype");
    require_shape(*op.dst_idx, data.partitions, kCount, "nc_match_replace8 dst_idx shape");
    const unsigned width = math::storage_bits(op.dst_idx->dtype);
    const std::int64_t all_ones = static_cast<std::int64_t>((std::uint64_t{1} << width) - 1);
    WordTile out = make_word_tile(data.partitions, kCount);
    for (std::size_t i = 0; i < found.size(); ++i)
      out.words[i] = found[i] == kNotFound ? all_ones : found[i];
    io.store_words(*op.dst_idx, out);
  }
  return true;
}

}  // namespace trnsim::sim::elementwise_detail
