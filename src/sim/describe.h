// Text for diagnostics (internal to sim): how instructions, queues and origins are named in
// errors and hazard reports.
#pragma once

#include <string>

#include "isa/isa.h"

namespace trnsim::sim {

std::string origin_string(const isa::Origin& origin);  // "file:line:col", "" when unknown
std::string queue_name(const isa::QueueId& queue);     // "tensor", "dma3"
// "instruction 12 (nc_matmul at k.s:40:3)" or "instruction 12 (nc_matmul 'mm0')".
std::string describe_instruction(const isa::Instruction& inst, std::size_t index);

}  // namespace trnsim::sim
