// The NeuronCore instruction set as trnsim models it.
//
// Names, operands and semantics follow NKI 0.6's `nki.isa` (dst first, access patterns,
// x4-packed MX types). A Program is a flat list of instructions, each bound to one queue
// (an engine's instruction stream or a DMA queue); order within a queue is program order,
// order across queues comes only from semaphores.
//
// Every operation is a plain struct that declares its traits and, through `fields()`, its
// operands and attributes by name (isa/operations.h). That one description drives the
// assembly printer and parser, the validator's operand checks, the simulator's read/write
// sets (hazard detection) and every operand walk (isa/operands.h), so a new instruction is
// added in one place.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isa/operands.h"
#include "isa/operations.h"
#include "isa/types.h"
#include "util/diagnostic.h"

namespace trnsim::isa {

// ---------------------------------------------------------------------------------------
// Instructions and programs

// Semaphores are per-core 32-bit counters numbered 0..kNumSemaphores-1.
inline constexpr int kNumSemaphores = 256;
// A wait proceeds once the semaphore is >= value; a wait counting from a register (inside a
// loop: "this iteration's" count) once it is >= that register's value + value, with value a
// signed 32-bit offset.
struct SemWait {
  std::uint16_t sem = 0;
  std::uint32_t value = 0;
  Reg base;  // none: an absolute value
  friend bool operator==(const SemWait&, const SemWait&) = default;
};
struct SemSignal {
  std::uint16_t sem = 0;
  std::uint32_t increment = 1;  // added when the instruction completes
  friend bool operator==(const SemSignal&, const SemSignal&) = default;
};

// Where an instruction came from: a kernel source line or an assembly file position (the one
// location type of every layer's diagnostics).
using Origin = util::SourceLocation;

struct Instruction {
  Operation op;
  QueueId queue;
  std::vector<SemWait> waits;
  std::vector<SemSignal> signals;
  RoundingMode rounding = RoundingMode::kNearestEven;
  std::string name;  // optional user label (NKI name=)
  Origin origin;
  friend bool operator==(const Instruction&, const Instruction&) = default;
};

// An HBM tensor that a program addresses, declared in assembly by a line
//   .hbm NAME@ADDRESS:DTYPE[D0,D1,...]
// (`trnsim run-asm` allocates it at ADDRESS, fills it with --random or --input, prints it
// with --print). Instructions address it by absolute byte address.
struct HbmTensor {
  std::string name;
  std::uint64_t address = 0;
  DType dtype = DType::kFloat32;
  std::vector<std::uint64_t> shape;
  std::uint64_t elements() const;
  std::uint64_t bytes() const;    // elements * storage bytes (x4-packed: per word)
  std::string to_string() const;  // NAME@0xADDRESS:DTYPE[D0,D1,...], as in a .hbm line
  friend bool operator==(const HbmTensor&, const HbmTensor&) = default;
};

struct Program {
  std::vector<Instruction> instructions;
  std::uint32_t seed = 0;      // stochastic rounding and RNG initial state
  std::vector<HbmTensor> hbm;  // the .hbm declarations, in order
  friend bool operator==(const Program&, const Program&) = default;
};

}  // namespace trnsim::isa
