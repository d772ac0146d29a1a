// Builders the benchmarks share.
#pragma once

#include <cstdint>

#include "isa/isa.h"
#include "numerics/numerics.h"

namespace trnsim::bench {

// `partitions` partitions from byte `offset`, each `free` contiguous elements of `dtype`.
inline isa::AccessPattern tile_pattern(isa::Memory memory, numerics::DType dtype,
                                       std::uint32_t partitions, std::uint64_t offset,
                                       std::uint32_t free) {
  return isa::access_pattern(memory, dtype, 0, partitions, offset, {{1, free}});
}

}  // namespace trnsim::bench
