// Text assembly for trnsim programs: one instruction per line, printed and parsed back
// identically (print(parse(print(p))) == print(p) and parse(print(p)) == p).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "isa/isa.h"

namespace trnsim::isa {

// A parse error at file:line:col with what was expected; what() is
// "file:line:col: error: message".
class AsmError : public util::Error {
 public:
  AsmError(std::string file, std::uint32_t line, std::uint32_t column, std::string message);
  const util::SourceLocation& where() const { return diagnostics().front().where; }
  const std::string& file() const { return where().file; }
  std::uint32_t line() const { return where().line; }
  std::uint32_t column() const { return where().column; }
  const std::string& message() const { return diagnostics().front().message; }
};

std::string print_instruction(const Instruction& inst);
std::string print_program(const Program& program);
// `file` names the text in errors and becomes each instruction's Origin (file:line:col of
// its mnemonic) unless the line carries an explicit origin annotation.
Program parse_program(std::string_view text, const std::string& file = "<asm>");
// Throws AsmError also for I/O errors: a directory, a file that cannot be opened or one larger
// than kMaxProgramFileBytes (a /dev/zero given by mistake must not exhaust host memory).
inline constexpr std::uint64_t kMaxProgramFileBytes = std::uint64_t{256} << 20;
Program parse_program_file(const std::string& path);
// One NAME@ADDRESS:DTYPE[D0,D1,...] (a .hbm line's operand) given on its own, e.g. by
// `run-asm --hbm`; AsmError at `file` (line 1) when it is malformed, has a zero dimension or
// a size that does not fit 64-bit addresses.
HbmTensor parse_hbm_tensor(std::string_view spec, const std::string& file = "--hbm");

}  // namespace trnsim::isa
