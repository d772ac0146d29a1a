// The GpSimd index operations: sequence_bounds, nonzero_with_count, nc_n_gather and topk
// (docs/simulator-ops.md). They move indices and storage words, so they work on words
// wherever the result must be exact (int32 ids, gathered elements of any dtype).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/ops_elementwise_detail.h"

namespace trnsim::sim::elementwise_detail {

namespace {

constexpr std::uint32_t kCorePartitions = isa::kGpSimdPartitionsPerCore;

// An operand's values as doubles: exact for int32 words and for fp32 values alike.
std::vector<double> exact_values(OperandIO& io, const AccessPattern& ap) {
  std::vector<double> out;
  if (ap.dtype == DType::kInt32) {
    const WordTile words = io.load_words(ap);
    out.assign(words.words.begin(), words.words.end());
  } else {
    const Tile tile = io.load(ap);
    out.assign(tile.values.begin(), tile.values.end());
  }
  return out;
}

// Stores whole numbers into an fp32 or int32 operand without rounding them through fp32
// words: int32 goes as words, fp32 as values (|v| <= 2^24 here, so exact).
void store_whole_numbers(OperandIO& io, const AccessPattern& ap, std::uint32_t partitions,
                         const std::vector<std::int64_t>& numbers) {
  if (ap.dtype == DType::kInt32) {
    WordTile words = make_word_tile(partitions, numbers.size() / partitions);
    words.words = numbers;
    io.store_words(ap, words);
    return;
  }
  Tile tile = make_tile(partitions, numbers.size() / partitions);
  std::transform(numbers.begin(), numbers.end(), tile.values.begin(),
                 [](std::int64_t v) { return static_cast<float>(v); });
  io.store(ap, tile);
}

// The first `count` elements of a one-free-dim operand's row `p`.
AccessPattern row_prefix(const AccessPattern& ap, std::uint32_t p, std::uint64_t count) {
  AccessPattern row = partition_slice(ap, p, 1);
  require(row.num_dims == 1, "a row prefix needs one free dim");
  row.dims[0].count = static_cast<std::uint32_t>(count);
  return row;
}

}  // namespace

// A segment is a run of equal, non-zero consecutive ids: each element gets the run's first
// index and one past its last (NKI's reference); padding (id 0) gets [N, -1].
bool run(const isa::SequenceBounds& op, OperandIO& io) {
  const std::vector<double> ids = exact_values(io, op.segment_ids);
  const auto n = static_cast<std::int64_t>(ids.size());
  require(free_count(op.dst) == 2 * ids.size() && op.dst.partitions == 1,
          "sequence_bounds dst must be [1, 2, N]");
  std::vector<std::int64_t> bounds(2 * ids.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const bool padding = ids[i] == 0.0;
    const bool continues = i > 0 && ids[i] == ids[i - 1];
    bounds[i] = padding ? n : (continues ? bounds[i - 1] : i);
  }
  for (std::int64_t i = n - 1; i >= 0; --i) {
    const bool padding = ids[i] == 0.0;
    const bool continues = i + 1 < n && ids[i] == ids[i + 1];
    bounds[n + i] = padding ? -1 : (continues ? bounds[n + i + 1] : i + 1);
  }
  store_whole_numbers(io, op.dst, 1, bounds);
  return true;
}

// Rows 0, 16, 32, ... of the operands (the first partition of each GpSimd core; the
// validator keeps both operands starting on a core boundary). Other rows are not touched.
bool run(const isa::NonzeroWithCount& op, OperandIO& io) {
  const std::uint64_t free = free_count(op.src);
  require(free_count(op.dst) == free + 1 && op.dst.partitions == op.src.partitions,
          "nonzero_with_count dst must be [P, F + 1]");
  for (std::uint32_t p = 0; p < op.src.partitions; p += kCorePartitions) {
    const std::vector<double> row = exact_values(io, partition_slice(op.src, p, 1));
    WordTile out = make_word_tile(1, free + 1);
    std::uint64_t found = 0;
    for (std::uint64_t i = 0; i < free; ++i) {
      if (row[i] != 0.0)  // NaN counts as non-zero; -0.0 as zero
        out.words[found++] =
            static_cast<std::int32_t>(static_cast<std::int64_t>(i) + op.index_offset);
    }
    std::fill(out.words.begin() + static_cast<std::ptrdiff_t>(found), out.words.end() - 1,
              op.padding_val);
    out.words[free] = static_cast<std::int64_t>(found);
    io.store_words(partition_slice(op.dst, p, 1), out);
  }
  return true;
}

bool run(const isa::NcNGather& op, OperandIO& io) {
  const WordTile data = io.load_words(op.data);
  const WordTile indices = io.load_words(op.indices);
  require(indices.partitions == data.partitions && op.dst.partitions == data.partitions &&
              free_count(op.dst) == indices.free,
          "nc_n_gather dst must be [P, indices' free size]");
  WordTile out = make_word_tile(data.partitions, indices.free);
  for (std::uint32_t p = 0; p < data.partitions; ++p) {
    for (std::uint64_t i = 0; i < indices.free; ++i) {
      const auto index = static_cast<std::uint64_t>(
          static_cast<std::uint32_t>(indices.words[p * indices.free + i]));
      if (index >= data.free) {
        throw std::out_of_range("nc_n_gather index " + std::to_string(index) + " in partition " +
                                std::to_string(p) + " is beyond data's " +
                                std::to_string(data.free) + " elements per partition");
      }
      out.words[p * indices.free + i] = data.words[p * data.free + index];
    }
  }
  io.store_words(op.dst, out);
  return true;
}

// One top-K per group of 16 partitions. Snake position s of a group is at partition s % 16,
// column s / 16. The K largest (NaN above +inf; among equal values the lower position
// first) are written ascending, again as a snake: result j goes to partition j % 16,
// column j / 16 of val_dst and idx_dst; the rest of the outputs is left as it was.
bool run(const isa::Topk& op, OperandIO& io) {
  const Tile src = io.load(op.src);
  const std::uint64_t k = free_count(op.val_dst);
  require(op.n >= k && src.free * kCorePartitions >= op.n && src.partitions % kCorePartitions == 0,
          "topk shapes");
  const auto larger = [](float a, float b) {
    if (std::isnan(a)) return !std::isnan(b);
    return !std::isnan(b) && a > b;
  };
  std::vector<std::uint32_t> order(op.n);
  for (std::uint32_t group = 0; group < src.partitions; group += kCorePartitions) {
    const auto value = [&](std::uint32_t s) {
      return src.values[(group + s % kCorePartitions) * src.free + s / kCorePartitions];
    };
    std::iota(order.begin(), order.end(), 0u);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](std::uint32_t a, std::uint32_t b) {
                        const float va = value(a), vb = value(b);
                        if (larger(va, vb)) return true;
                        if (larger(vb, va)) return false;
                        return a < b;
                      });
    for (std::uint32_t q = 0; q < kCorePartitions; ++q) {
      const std::uint64_t count = k > q ? (k - q + kCorePartitions - 1) / kCorePartitions : 0;
      if (count == 0) continue;
      Tile values = make_tile(1, count);
      WordTile positions = make_word_tile(1, count);
      for (std::uint64_t c = 0; c < count; ++c) {
        const std::uint32_t s = order[k - 1 - (q + c * kCorePartitions)];  // ascending
        values.values[c] = value(s);
        positions.words[c] = s;
      }
      io.store(row_prefix(op.val_dst, group + q, count), values);
      io.store_words(row_prefix(op.idx_dst, group + q, count), positions);
    }
  }
  return true;
}

}  // namespace trnsim::sim::elementwise_detail
