// How instruction semantics read and write their operands. The executor (executor.cpp)
// implements this over the core's memories with bounds, initialisation and rounding
// handled in one place; the per-engine semantics (ops_*.cpp) see only dense buffers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "isa/isa.h"

namespace trnsim::sim {

// Dense operand data: `partitions` rows of `free` elements, row-major.
struct Tile {
  std::uint32_t partitions = 0;
  std::uint64_t free = 0;
  std::vector<float> values;
  float& at(std::uint32_t p, std::uint64_t i) { return values[p * free + i]; }
  float at(std::uint32_t p, std::uint64_t i) const { return values[p * free + i]; }
};

// Raw storage words of an operand (for bit-exact integer/bitwise ops and same-type copies):
// each element's storage word zero-extended (or sign-extended for signed integer types).
struct WordTile {
  std::uint32_t partitions = 0;
  std::uint64_t free = 0;
  std::vector<std::int64_t> words;
};

class OperandIO {
 public:
  virtual ~OperandIO() = default;
  // Decode an operand to fp32 (x4-packed MX types are rejected: they have no scale here).
  virtual Tile load(const isa::AccessPattern& ap) = 0;
  // Encode fp32 values into the operand's dtype with the instruction's rounding mode
  // (stochastic rounding seeded from the program seed and the instruction index).
  virtual void store(const isa::AccessPattern& ap, const Tile& values) = 0;
  virtual WordTile load_words(const isa::AccessPattern& ap) = 0;
  virtual void store_words(const isa::AccessPattern& ap, const WordTile& words) = 0;
  // Value of a scalar operand for partition p of the instruction (p counts from 0 at the
  // operand's start partition): the immediate, or element [p, 0] of a [P, 1] tensor.
  virtual float scalar(const isa::ScalarOperand& operand, std::uint32_t p) = 0;
  // Per-partition XORWOW state of the executing engine (6 words per partition).
  virtual std::span<std::uint32_t> rng_state(isa::Engine engine, std::uint32_t partition) = 0;
  // Re-seeds every lane of an engine's generators from one 32-bit value (math::seed_xorwow).
  virtual void seed_rng(isa::Engine engine, std::uint32_t seed) = 0;
  // The Vector engine's accumulator register of one lane (an absolute partition, as for
  // rng_state: the register belongs to the lane, not to an operand).
  virtual float& accumulator(std::uint32_t partition) = 0;
  virtual const isa::Instruction& instruction() const = 0;
};

}  // namespace trnsim::sim
