// Text for diagnostics (internal to sim): how instructions and queues are named in errors and
// hazard reports.
#pragma once

#include <string>

#include "isa/isa.h"

namespace trnsim::sim {

std::string queue_name(const isa::QueueId& queue);  // "tensor", "dma3"
// "instruction 12 (nc_matmul)" or "instruction 12 (nc_matmul 'mm0')"; its origin is the
// location of the diagnostic or note that names it.
std::string describe_instruction(const isa::Instruction& inst, std::size_t index);

}  // namespace trnsim::sim
