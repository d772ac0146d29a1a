// Static checks of instructions against the ISA rules of a chip generation.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "isa/isa.h"

namespace trnsim::isa {

// One violated rule: which instruction (index in the program, mnemonic, origin), which
// operand or attribute, and the rule with the limit. As a diagnostic:
//   "kernel.cpp:40:3: error: instruction 12 (nc_matmul): operand 'moving': free size 1024
//    exceeds the limit 512 of NeuronCore-v3".
struct Violation {
  std::size_t index = 0;
  std::string op;
  Origin origin;
  std::string operand;  // field name, or "" for the instruction as a whole
  std::string message;
  util::Diagnostic diagnostic() const;
  std::string to_string() const;  // format(diagnostic())
};

// Every violation of a program, one diagnostic each.
class ValidationError : public util::Error {
 public:
  explicit ValidationError(std::vector<Violation> violations);
  const std::vector<Violation>& violations() const { return violations_; }

 private:
  std::vector<Violation> violations_;
};

// How a tensor-engine transpose (nc_transpose, nc_matmul is_transpose) moves an element of
// `from` into `to`; the validator and the simulator both ask this, so what validates runs.
enum class TransposeMove : std::uint8_t {
  kBits,        // same width: the bits, unchanged
  kZeroExtend,  // 1-byte type into 2-byte words, upper byte 0 (FP8 transposes)
  kConvert,     // into float32 by value: the array multiplies by an identity in fp32, exact
                // for every narrower float type
};
// nullopt when no exact move exists (e.g. float32 into bfloat16).
std::optional<TransposeMove> transpose_move(DType from, DType to);

// All violations of one instruction (empty when valid). Checks: engine may run the op,
// partitions within [0, 128) and the start-partition rule, free sizes within the op's limits,
// operands inside the memory they name (SBUF/PSUM sizes from the config; HBM left to the
// runtime), dtypes allowed on that engine and generation, PSUM-only matmul outputs,
// matching shapes, semaphore ids in range.
std::vector<Violation> check_instruction(const Instruction& inst, std::size_t index,
                                         const arch::ChipConfig& chip);
// Throws ValidationError with every violation of the program, if any.
void validate_program(const Program& program, const arch::ChipConfig& chip);

}  // namespace trnsim::isa
