#include "sim/access.h"

#include <algorithm>
#include <array>

namespace trnsim::sim {

std::uint64_t free_element_count(const isa::AccessPattern& ap) {
  std::uint64_t n = 1;
  for (int k = 0; k < ap.num_dims; ++k) n *= ap.dims[k].count;
  return n;
}

std::size_t element_bytes(const isa::AccessPattern& ap) {
  return numerics::storage_bytes(ap.dtype);
}

std::vector<std::int64_t> free_element_offsets(const isa::AccessPattern& ap) {
  const std::uint64_t n = free_element_count(ap);
  std::vector<std::int64_t> offsets(n);
  if (n == 0) return offsets;
  // Odometer over the dims, minor dim fastest.
  std::array<std::uint32_t, isa::kMaxFreeDims> index{};
  std::int64_t offset = 0;
  const int dims = ap.num_dims;
  for (std::uint64_t i = 0; i < n; ++i) {
    offsets[i] = offset;
    for (int k = dims - 1; k >= 0; --k) {
      const isa::Dim& d = ap.dims[k];
      if (++index[k] < d.count) {
        offset += d.step;
        break;
      }
      offset -= d.step * static_cast<std::int64_t>(d.count - 1);
      index[k] = 0;
    }
  }
  return offsets;
}

bool free_dims_contiguous(const isa::AccessPattern& ap) {
  std::int64_t expected_step = 1;
  for (int k = ap.num_dims - 1; k >= 0; --k) {
    const isa::Dim& d = ap.dims[k];
    if (d.count == 1) continue;  // a size-1 dim's step never matters
    if (d.step != expected_step) return false;
    expected_step *= d.count;
  }
  return true;
}

namespace {

// Element offset range [lo, hi] (inclusive) spanned by the free dims.
std::pair<std::int64_t, std::int64_t> free_extent(const isa::AccessPattern& ap) {
  std::int64_t lo = 0, hi = 0;
  for (int k = 0; k < ap.num_dims; ++k) {
    const std::int64_t reach = ap.dims[k].step * (static_cast<std::int64_t>(ap.dims[k].count) - 1);
    lo += std::min<std::int64_t>(0, reach);
    hi += std::max<std::int64_t>(0, reach);
  }
  return {lo, hi};
}

}  // namespace

Footprint footprint(const isa::AccessPattern& ap) {
  Footprint f;
  f.memory = ap.memory;
  const auto esize = static_cast<std::int64_t>(element_bytes(ap));
  const auto base = static_cast<std::int64_t>(ap.offset);
  if (free_element_count(ap) == 0 || ap.partitions == 0) {
    f.byte_lo = f.byte_hi = base;
    return f;
  }
  auto [lo, hi] = free_extent(ap);
  if (ap.memory == isa::Memory::kHbm) {
    const std::int64_t reach = ap.partition_step * (static_cast<std::int64_t>(ap.partitions) - 1);
    lo += std::min<std::int64_t>(0, reach);
    hi += std::max<std::int64_t>(0, reach);
    f.partition_lo = 0;
    f.partition_hi = 1;
  } else {
    f.partition_lo = ap.start_partition;
    f.partition_hi = ap.start_partition + ap.partitions;
  }
  f.byte_lo = base + lo * esize;
  f.byte_hi = base + (hi + 1) * esize;
  return f;
}

std::int64_t hbm_row_offset(const isa::AccessPattern& ap, std::uint32_t r) {
  if (ap.memory != isa::Memory::kHbm) return 0;
  return ap.partition_step * static_cast<std::int64_t>(r) *
         static_cast<std::int64_t>(element_bytes(ap));
}

isa::AccessPattern row_of(const isa::AccessPattern& ap, std::uint32_t r) {
  isa::AccessPattern row = ap;
  row.partitions = 1;
  if (ap.memory == isa::Memory::kHbm) {
    row.offset =
        static_cast<std::uint64_t>(static_cast<std::int64_t>(ap.offset) + hbm_row_offset(ap, r));
  } else {
    row.start_partition = ap.start_partition + r;
  }
  return row;
}

}  // namespace trnsim::sim
