// Semantics the executor runs itself (internal to sim): the tensor engine, DMA and custom
// operators, one execute_op overload per operation (the executor calls the overload that
// exists for an operation, and execute_elementwise for the others). Each reads and writes
// only through the instruction's CoreOperandIO.
#pragma once

#include "sim/core_io.h"

namespace trnsim::sim {

void execute_op(const isa::NcMatmul& op, CoreOperandIO& io);      // ops_tensor.cpp
void execute_op(const isa::NcMatmulMx& op, CoreOperandIO& io);    // ops_tensor.cpp
void execute_op(const isa::NcTranspose& op, CoreOperandIO& io);   // ops_tensor.cpp (tensor engine)
void execute_op(const isa::DmaCopy& op, CoreOperandIO& io);       // ops_dma.cpp
void execute_op(const isa::DmaTranspose& op, CoreOperandIO& io);  // ops_dma.cpp
void execute_op(const isa::DmaIndirect& op, CoreOperandIO& io);   // ops_dma.cpp
void execute_op(const isa::DmaCompute& op, CoreOperandIO& io);    // ops_dma.cpp
void execute_op(const isa::CustomOp& op, CoreOperandIO& io);      // executor.cpp

}  // namespace trnsim::sim
