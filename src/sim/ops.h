// Semantics of the Vector, Scalar and GpSimd instructions over dense operand buffers.
// Internal to sim; the executor calls execute_elementwise for every op it does not run
// itself (matmul, transpose on the tensor engine, DMA and synchronisation stay in the
// executor). Each function reads through `io`, computes in fp32 as the engines do, and
// writes through `io`.
#pragma once

#include "sim/operand_io.h"

namespace trnsim::sim {

// Returns false when `op` is not an elementwise/reduction/GpSimd operation.
bool execute_elementwise(const isa::Operation& op, OperandIO& io);

}  // namespace trnsim::sim
