// DMA semantics: dma_copy (with cast and gen4 near-memory accumulate), dma_transpose,
// dma_indirect gather/scatter and dma_compute (a sum of sources).
//
// Elements are matched in row-major order (partition, then free index) on both sides, so a
// copy may reshape as long as the element counts agree. Same dtype = raw storage bytes
// (bit-exact, any type including x4-packed); different dtypes go through fp32 with one
// rounding into the destination type (the instruction's rounding mode).
#include <fmt/core.h>

#include <algorithm>
#include <cstring>

#include "numerics/numerics.h"
#include "sim/access.h"
#include "sim/ops_executor.h"

namespace trnsim::sim {

namespace {

std::uint64_t total_elements(const isa::AccessPattern& ap) {
  return free_element_count(ap) * ap.partitions;
}

void copy_elements(const isa::AccessPattern& dst, const isa::AccessPattern& src,
                   isa::DmaAccumulate accumulate, CoreOperandIO& io) {
  if (total_elements(dst) != total_elements(src))
    io.fail(fmt::format("dst has {} elements and src {}: counts must match", total_elements(dst),
                        total_elements(src)));
  if (accumulate == isa::DmaAccumulate::kAdd) {
    // The engine adds in fp32 and rounds once into dst's type.
    const Tile addend = io.load(src);
    Tile sum = io.load(dst);
    for (std::size_t i = 0; i < sum.values.size(); ++i) sum.values[i] += addend.values[i];
    io.store(dst, sum);
    return;
  }
  if (dst.dtype == src.dtype) {
    io.store_bytes(dst, io.load_bytes(src));
    return;
  }
  if (numerics::is_mx_packed(dst.dtype) || numerics::is_mx_packed(src.dtype))
    io.fail(fmt::format("DMA cannot cast {} to {}: x4-packed MX data moves only as raw words",
                        numerics::name(src.dtype), numerics::name(dst.dtype)));
  Tile values = io.load(src);
  values.partitions = dst.partitions;
  values.free = free_element_count(dst);
  io.store(dst, values);
}

// Row indices of a dma_indirect, in row-major order of the index operand.
std::vector<std::int64_t> load_indices(const isa::AccessPattern& index, CoreOperandIO& io) {
  if (index.dtype != numerics::DType::kUInt32 && index.dtype != numerics::DType::kInt32)
    io.fail(
        fmt::format("index operand must be uint32 or int32, not {}", numerics::name(index.dtype)));
  return io.load_words(index).words;
}

}  // namespace

void execute_op(const isa::DmaCopy& op, CoreOperandIO& io) {
  if (op.accumulate == isa::DmaAccumulate::kAdd && op.dst.dtype != numerics::DType::kFloat32 &&
      op.dst.dtype != numerics::DType::kBFloat16)
    io.fail(fmt::format("near-memory accumulate needs a float32 or bfloat16 dst, not {}",
                        numerics::name(op.dst.dtype)));
  copy_elements(op.dst, op.src, op.accumulate, io);
}

void execute_op(const isa::DmaTranspose& op, CoreOperandIO& io) {
  if (op.dst.dtype != op.src.dtype)
    io.fail(fmt::format("dma_transpose keeps the dtype: src is {}, dst {}",
                        numerics::name(op.src.dtype), numerics::name(op.dst.dtype)));
  const std::uint32_t p_count = op.src.partitions;
  const std::uint64_t f_count = free_element_count(op.src);
  if (op.dst.partitions != f_count || free_element_count(op.dst) != p_count)
    io.fail(fmt::format("transpose of a [{}, {}] src needs a [{}, {}] dst, got [{}, {}]", p_count,
                        f_count, f_count, p_count, op.dst.partitions, free_element_count(op.dst)));
  const std::size_t esize = element_bytes(op.src);
  const std::vector<std::uint8_t> in = io.load_bytes(op.src);
  std::vector<std::uint8_t> out(in.size());
  for (std::uint32_t p = 0; p < p_count; ++p)
    for (std::uint64_t f = 0; f < f_count; ++f)
      std::memcpy(out.data() + (f * p_count + p) * esize, in.data() + (p * f_count + f) * esize,
                  esize);
  io.store_bytes(op.dst, out);
}

// dma_transpose of gathered rows: row j of the gather is src row flat[j], the index read in
// column-major order (NKI: indices.T.flatten()); dst[f, j] = that row's element f.
void gather_transpose(const isa::DmaIndirect& op, CoreOperandIO& io) {
  const std::vector<std::int64_t> words = load_indices(op.index, io);
  const std::uint64_t per_partition = free_element_count(op.index);
  const std::uint32_t partitions = op.index.partitions;
  const std::uint64_t row_elements = free_element_count(op.src);
  const std::size_t esize = element_bytes(op.src);
  const std::size_t rows = words.size();
  if (op.dst.partitions != row_elements || free_element_count(op.dst) != rows)
    io.fail(fmt::format("a transpose of {} gathered rows of {} needs a [{}, {}] dst, got [{}, {}]",
                        rows, row_elements, row_elements, rows, op.dst.partitions,
                        free_element_count(op.dst)));
  std::vector<std::uint8_t> out(rows * row_elements * esize);
  const bool skip = op.oob == isa::OobMode::kSkip;
  if (skip) out = io.load_bytes(op.dst);  // skipped columns keep what dst held
  for (std::size_t j = 0; j < rows; ++j) {
    const std::size_t p = j % partitions, k = j / partitions;
    const std::int64_t target = words[p * per_partition + k];
    if (target < 0 || target >= static_cast<std::int64_t>(op.src.partitions)) {
      if (skip) continue;
      io.fail(
          fmt::format("index [{}, {}] (gathered row {}) is {}, outside the {} rows [0, {}) "
                      "of 'src'",
                      p, k, j, target, op.src.partitions, op.src.partitions));
    }
    const std::vector<std::uint8_t> row =
        io.load_bytes(row_of(op.src, static_cast<std::uint32_t>(target)));
    for (std::uint64_t f = 0; f < row_elements; ++f)
      std::memcpy(out.data() + (f * rows + j) * esize, row.data() + f * esize, esize);
  }
  io.store_bytes(op.dst, out);
}

void execute_op(const isa::DmaIndirect& op, CoreOperandIO& io) {
  if (op.transpose) {
    gather_transpose(op, io);
    return;
  }
  const std::vector<std::int64_t> rows = load_indices(op.index, io);
  const bool gather = op.mode == isa::IndirectMode::kGather;
  // Gather: dst row r <- src row rows[r]. Scatter: dst row rows[r] <- src row r.
  const isa::AccessPattern& indexed = gather ? op.src : op.dst;
  const isa::AccessPattern& direct = gather ? op.dst : op.src;
  if (direct.partitions != rows.size())
    io.fail(fmt::format("{} has {} rows but the index holds {} entries", gather ? "dst" : "src",
                        direct.partitions, rows.size()));
  const auto in_range = [&](std::int64_t target) {
    return target >= 0 && target < static_cast<std::int64_t>(indexed.partitions);
  };
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (!in_range(rows[r]) && op.oob == isa::OobMode::kError)
      io.fail(fmt::format("index entry {} is {}, outside the {} rows [0, {}) of '{}'", r, rows[r],
                          indexed.partitions, indexed.partitions, gather ? "src" : "dst"));
  }
  if (!gather && op.accumulate == isa::DmaAccumulate::kAdd) {
    // The rows are read, added to and written back concurrently: NKI requires unique indices
    // (unique_indices=True), and a repeated one would lose an update on the device.
    std::vector<std::pair<std::int64_t, std::size_t>> sorted;
    for (std::size_t r = 0; r < rows.size(); ++r)
      if (in_range(rows[r])) sorted.emplace_back(rows[r], r);
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t k = 1; k < sorted.size(); ++k)
      if (sorted[k].first == sorted[k - 1].first)
        io.fail(
            fmt::format("index entries {} and {} both name row {}: a read-modify-write "
                        "scatter needs unique indices",
                        sorted[k - 1].second, sorted[k].second, sorted[k].first));
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (!in_range(rows[r])) continue;  // oob=skip
    const auto direct_row = row_of(direct, static_cast<std::uint32_t>(r));
    const auto indexed_row = row_of(indexed, static_cast<std::uint32_t>(rows[r]));
    if (gather)
      copy_elements(direct_row, indexed_row, op.accumulate, io);
    else
      copy_elements(indexed_row, direct_row, op.accumulate, io);
  }
}

// The engine's fp32 sum, left to right: ((s0 + s1) + s2) + ..., rounded once into dst
// (elements matched in row-major order, as for dma_copy).
void execute_op(const isa::DmaCompute& op, CoreOperandIO& io) {
  if (op.srcs.empty()) io.fail("dma_compute needs at least one source");
  Tile sum = io.load(op.srcs.front());
  for (std::size_t s = 1; s < op.srcs.size(); ++s) {
    const Tile addend = io.load(op.srcs[s]);
    if (addend.values.size() != sum.values.size())
      io.fail(fmt::format("srcs[{}] has {} elements and srcs[0] {}: counts must match", s,
                          addend.values.size(), sum.values.size()));
    for (std::size_t i = 0; i < sum.values.size(); ++i) sum.values[i] += addend.values[i];
  }
  if (total_elements(op.dst) != sum.values.size())
    io.fail(fmt::format("dst has {} elements and the sources {}: counts must match",
                        total_elements(op.dst), sum.values.size()));
  sum.partitions = op.dst.partitions;
  sum.free = free_element_count(op.dst);
  io.store(op.dst, sum);
}

}  // namespace trnsim::sim
