#include "isa/footprint.h"

#include <algorithm>
#include <array>
#include <limits>
#include <span>

namespace trnsim::isa {

util::ByteSet exact_byte_set(const AccessPattern& ap, std::int64_t lo, std::int64_t hi) {
  if (ap.partitions == 0) return util::ByteSet::interval(lo, lo);
  // Contiguous rows of an on-chip operand (the common case) are one run per partition.
  if (ap.memory != Memory::kHbm && ap.is_contiguous()) return util::ByteSet::interval(lo, hi);
  const auto es = static_cast<std::int64_t>(ap.element_bytes());
  std::array<util::StridedDim, kMaxFreeDims + 1> dims{};
  std::size_t n = 0;
  bool overflow = ap.offset > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  auto add = [&](std::int64_t step, std::int64_t count) {
    std::int64_t stride = 0;
    overflow |= __builtin_mul_overflow(step, es, &stride);
    dims[n++] = {stride, count};
  };
  for (int k = 0; k < std::min<int>(ap.num_dims, kMaxFreeDims); ++k)
    add(ap.dims[k].step, ap.dims[k].count);
  if (ap.memory == Memory::kHbm) add(ap.partition_step, ap.partitions);
  if (overflow) return util::ByteSet::interval(lo, hi);  // the bounding range
  return util::ByteSet::make(static_cast<std::int64_t>(ap.offset), es, std::span(dims.data(), n));
}

}  // namespace trnsim::isa
