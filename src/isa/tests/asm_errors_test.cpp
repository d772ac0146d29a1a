// Parse errors as exceptions: the diagnostic shape, files, overlong lines, garbage. The
// position and message of each kind of malformed line: diagnostics/asm_errors.asm.
#include <gtest/gtest.h>

#include <random>

#include "isa/asm.h"

namespace trnsim::isa {
namespace {

// A valid SBUF pattern to build lines around.
const std::string kAp = "sbuf[p0:128, off=0, fp32, [[1,512]]]";

// The position and message of each malformed line are tested as text, in
// src/isa/tests/diagnostics/asm_errors.asm (driver: diagnostics_test.cpp). Here: the shape of
// the error, files, and garbage.
TEST(AsmErrorsShape, WhatIsTheOneDiagnosticShape) {
  try {
    parse_program("sem\n  tensor_copy dst=" + kAp, "bad.asm");
    FAIL() << "parsed";
  } catch (const AsmError& e) {
    EXPECT_EQ(e.where(), (util::SourceLocation{"bad.asm", 2, 3}));
    EXPECT_EQ(e.message(), "missing operand 'src' of tensor_copy");
    EXPECT_EQ(std::string(e.what()), "bad.asm:2:3: error: missing operand 'src' of tensor_copy");
  }
}

TEST(AsmErrorsFile, MissingFileIsAnAsmError) {
  try {
    parse_program_file("/nonexistent/dir/program.asm");
    FAIL();
  } catch (const AsmError& e) {
    EXPECT_EQ(e.file(), "/nonexistent/dir/program.asm");
    EXPECT_NE(e.message().find("assembly file: cannot open"), std::string::npos) << e.what();
  }
}

// A directory or an endless device is a located error, not a stream message or bad_alloc.
TEST(AsmErrorsFile, DirectoryAndEndlessDeviceAreAsmErrors) {
  for (const auto& [path, why] :
       {std::pair<std::string, std::string>{"/tmp", "cannot read a directory"},
        {"/dev/zero", "more than 268435456 bytes"}}) {
    try {
      parse_program_file(path);
      FAIL() << path;
    } catch (const AsmError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_NE(e.message().find(why), std::string::npos) << e.what();
    }
  }
}

// A NUL used to end the line silently, dropping what followed (here the wait).
TEST(AsmErrorsFile, ControlCharactersAreRejectedWhereTheyStand) {
  const std::string nul_line = std::string("[sync] sem signal s1+=1") + '\0' + " wait s2>=1";
  for (const auto& [text, column] :
       {std::pair<std::string, std::uint32_t>{nul_line, 24}, {"[sync] sem\x1b[31m", 11}}) {
    try {
      parse_program("# ok\n" + text);
      FAIL() << "parsed";
    } catch (const AsmError& e) {
      EXPECT_EQ(e.where(), (util::SourceLocation{"<asm>", 2, column}));
      EXPECT_NE(e.message().find("control character"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(parse_program("[sync]\tsem\t# tabs are blanks"));
}

TEST(AsmErrorsFile, OverlongLineIsRejected) {
  const std::string line(2u << 20, 'a');
  try {
    parse_program("sem\n" + line);
    FAIL();
  } catch (const AsmError& e) {
    EXPECT_EQ(e.line(), 2u);
    EXPECT_NE(e.message().find("line longer than"), std::string::npos);
  }
}

// Random bytes and random mutations of valid text: the parser either parses or throws
// AsmError, and whatever it parses prints and parses back to the same text.
TEST(AsmErrorsFile, GarbageNeverEscapesAsAnythingButAsmError) {
  const std::string valid =
      "[dma.1] dma_copy dst=sbuf[p0:128, off=0, float32, [[1,1024]]], src=hbm[p0:128x1024, "
      "addr=0x1000, float32, [[1,1024]]], priority=2 wait s1>=1 signal s2+=1 name=\"x\" "
      "@k.py:1:2\n[vector] tensor_scalar dst=" +
      kAp + ", data=" + kAp + ", operand0=psum[p0:128, off=0, float32, [[1,1]]], op1=add\n";
  std::mt19937 rng(7);
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          text.erase(at, 1 + rng() % 5);
          break;
        default:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at),
                      "[],=:.@\"#-x0 p"[rng() % 14]);
      }
      if (text.empty()) text.push_back('x');
    }
    try {
      const Program p = parse_program(text);
      const std::string printed = print_program(p);
      ASSERT_EQ(print_program(parse_program(printed)), printed) << text;
      ++parsed;
    } catch (const AsmError&) {
    }
  }
  EXPECT_GT(parsed, 0);  // some mutations (e.g. inside the name) stay valid
}

}  // namespace
}  // namespace trnsim::isa
