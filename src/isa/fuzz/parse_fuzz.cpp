// libFuzzer target: any input either fails with AsmError or parses; a parsed program must
// print and parse back to the same program (and the same text).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "isa/asm.h"

namespace {

[[noreturn]] void mismatch(const char* what, const std::string& first, const std::string& second) {
  std::fprintf(stderr, "round-trip mismatch (%s)\n--- first\n%s\n--- second\n%s\n", what,
               first.c_str(), second.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trnsim::isa;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Program first;
  try {
    first = parse_program(text, "fuzz.asm");
  } catch (const AsmError&) {
    return 0;  // rejecting is fine; crashing, hanging or throwing anything else is not
  }
  const std::string printed = print_program(first);
  Program second;
  try {
    second = parse_program(printed, "fuzz.asm");
  } catch (const AsmError& e) {
    mismatch(e.what(), std::string(text), printed);
  }
  const std::string reprinted = print_program(second);
  if (reprinted != printed) mismatch("text", printed, reprinted);
  // NaN immediates compare unequal to themselves; the text comparison above already
  // checked their bits.
  if (!(first == second) && printed.find("nan") == std::string::npos) {
    mismatch("program", printed, reprinted);
  }
  return 0;
}
