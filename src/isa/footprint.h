// The exact bytes an access pattern touches, as a util::ByteSet: what the compiler's
// dependency pass and the simulator's hazard detector compare, so that disjoint strided
// blocks of one tensor (column blocks of a row-major matrix, say) are not taken to overlap.
#pragma once

#include <cstdint>

#include "isa/isa.h"
#include "util/strided_overlap.h"

namespace trnsim::isa {

// Bytes of `ap` inside each partition (SBUF/PSUM) or in HBM (the partition dimension is an
// outer dimension there). [lo, hi) is its byte span (AccessPattern::byte_span); the set
// falls back to that range when the strides leave the int64 range. A pattern with no
// partitions touches nothing.
util::ByteSet exact_byte_set(const AccessPattern& ap, std::int64_t lo, std::int64_t hi);

}  // namespace trnsim::isa
