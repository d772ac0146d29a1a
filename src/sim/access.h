// Geometry of access patterns (internal to sim): which bytes an operand touches.
//
// Computed here rather than taken from isa's helpers so bounds checks, gathers and the
// hazard detector agree on one definition, with signed arithmetic for negative steps.
#pragma once

#include <cstdint>
#include <vector>

#include "isa/isa.h"

namespace trnsim::sim {

std::uint64_t free_element_count(const isa::AccessPattern& ap);
std::size_t element_bytes(const isa::AccessPattern& ap);

// Element offsets (in elements, relative to the operand's offset) of every free element, in
// row-major order of the free dims (major to minor).
std::vector<std::int64_t> free_element_offsets(const isa::AccessPattern& ap);

// True when the free elements are consecutive and ascending (offsets 0, 1, 2, ...).
bool free_dims_contiguous(const isa::AccessPattern& ap);

// Bytes touched, as a rectangle: partitions [partition_lo, partition_hi) x bytes
// [byte_lo, byte_hi) inside every partition (SBUF/PSUM), or partition range [0, 1) x the
// absolute byte range (HBM, where the partition dim is an ordinary stride). Empty operands
// have byte_lo == byte_hi.
struct Footprint {
  isa::Memory memory = isa::Memory::kSbuf;
  std::uint32_t partition_lo = 0, partition_hi = 0;
  std::int64_t byte_lo = 0, byte_hi = 0;
  bool empty() const { return byte_lo >= byte_hi || partition_lo >= partition_hi; }
  bool overlaps(const Footprint& o) const {
    return memory == o.memory && partition_lo < o.partition_hi && o.partition_lo < partition_hi &&
           byte_lo < o.byte_hi && o.byte_lo < byte_hi;
  }
  bool contains(const Footprint& o) const {
    return memory == o.memory && partition_lo <= o.partition_lo && o.partition_hi <= partition_hi &&
           byte_lo <= o.byte_lo && o.byte_hi <= byte_hi;
  }
};
Footprint footprint(const isa::AccessPattern& ap);

// Byte offset of row r's first element relative to the operand's offset: 0 on SBUF/PSUM (a
// row is a partition), r * partition_step * element size on HBM.
std::int64_t hbm_row_offset(const isa::AccessPattern& ap, std::uint32_t r);

// The single row r of an operand as an operand of its own (partitions = 1).
isa::AccessPattern row_of(const isa::AccessPattern& ap, std::uint32_t r);

}  // namespace trnsim::sim
