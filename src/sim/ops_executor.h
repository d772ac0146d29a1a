// Semantics the executor runs itself (internal to sim): the tensor engine and DMA.
// Each reads and writes only through the instruction's CoreOperandIO.
#pragma once

#include "sim/core_io.h"

namespace trnsim::sim {

void execute_matmul(const isa::NcMatmul& op, CoreOperandIO& io);       // ops_tensor.cpp
void execute_matmul_mx(const isa::NcMatmulMx& op, CoreOperandIO& io);  // ops_tensor.cpp
void execute_tensor_transpose(const isa::NcTranspose& op, CoreOperandIO& io);
void execute_dma_copy(const isa::DmaCopy& op, CoreOperandIO& io);  // ops_dma.cpp
void execute_dma_transpose(const isa::DmaTranspose& op, CoreOperandIO& io);
void execute_dma_indirect(const isa::DmaIndirect& op, CoreOperandIO& io);

}  // namespace trnsim::sim
