// Data movement between partitions and elements: local_gather, nc_stream_shuffle and the
// Vector-engine transpose (docs/simulator-ops.md).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "sim/ops_elementwise_detail.h"
#include "sim/ops_math.h"

namespace trnsim::sim::elementwise_detail {

namespace {

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

}  // namespace

// Each core (16 partitions) reads its 16-partition slice of `index`, flattened partition-
// first (index[0,0], index[1,0], ..., index[15,0], index[0,1], ...); index k is an element
// offset inside the partition, and every partition q of the core receives its own
// src[q, v_k .. v_k + n) as dst[q, k*n .. k*n + n). dst's size sets how many indices are used
// (NKI's num_valid_indices). Words are copied, no dtype cast.
bool run(const isa::LocalGather& op, OperandIO& io) {
  constexpr std::uint32_t kCorePartitions = isa::kGpSimdPartitionsPerCore;
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

}  // namespace trnsim::sim::elementwise_detail
