// Parse errors: position (line:col of the offending token) and message.
#include <gtest/gtest.h>

#include <random>

#include "isa/asm.h"

namespace trnsim::isa {
namespace {

struct BadInput {
  std::string text;
  std::uint32_t line;
  std::uint32_t column;
  std::string message;  // expected substring of the message
};

// A valid SBUF pattern to build lines around.
const std::string kAp = "sbuf[p0:128, off=0, fp32, [[1,512]]]";

class AsmErrors : public ::testing::TestWithParam<BadInput> {};

TEST_P(AsmErrors, ReportsPositionAndExpectation) {
  const BadInput& bad = GetParam();
  try {
    parse_program(bad.text, "bad.asm");
    FAIL() << "parsed without error: " << bad.text;
  } catch (const AsmError& e) {
    EXPECT_EQ(e.file(), "bad.asm");
    EXPECT_EQ(e.line(), bad.line) << e.what();
    EXPECT_EQ(e.column(), bad.column) << e.what();
    EXPECT_NE(e.message().find(bad.message), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()), "bad.asm:" + std::to_string(bad.line) + ":" +
                                         std::to_string(bad.column) + ": " + e.message());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, AsmErrors,
    ::testing::Values(
        BadInput{"nc_matmu dst=" + kAp, 1, 1,
                 "unknown mnemonic 'nc_matmu' (did you mean 'nc_matmul'?)"},
        BadInput{
            "# header\n[vector] tensor_copy dst=sbuf[p0:1, off=0, bfloat17, [[1,1]]], src=" + kAp,
            2, 44, "unknown dtype 'bfloat17' (did you mean 'bfloat16'?)"},
        BadInput{"tensor_copy dst=sbuf[p0:1, off=0, bf17, [[1,1]]], src=" + kAp, 1, 35,
                 "unknown dtype 'bf17' (did you mean 'bf16'?)"},
        BadInput{"tensor_copy dst=sbuf[p0:1, off=0, fp32, [[1,1] [2,2]]], src=" + kAp, 1, 48,
                 "expected ',' or ']' after dimension"},
        BadInput{"dma_copy dst=" + kAp + ", src=" + kAp + ", priority=300", 1, 103,
                 "integer 300 out of range for field 'priority' (0..255)"},
        BadInput{"tensor_copy dst=sbuf[p0:1, off=99999999999999999999, fp32, [[1,1]]], src=" + kAp,
                 1, 32, "integer overflow"},
        BadInput{"\n\n  tensor_copy dst=" + kAp, 3, 3, "missing operand 'src' of tensor_copy"},
        BadInput{"tensor_copy dts=" + kAp, 1, 13,
                 "unknown field 'dts' for tensor_copy (did you mean 'dst'?)"},
        BadInput{"tensor_copy dst=" + kAp + ", dst=" + kAp, 1, 55, "duplicate field 'dst'"},
        BadInput{"[vectr] tensor_copy", 1, 2, "unknown engine 'vectr' (did you mean 'vector'?)"},
        BadInput{"tensor_copy dst=sbuf[p64:32, off=0, fp32, [[1,1]]]", 1, 23,
                 "partition range end 32 is before its start 64"},
        BadInput{"tensor_copy dst=sbuf[p0:1, addr=0, fp32, [[1,1]]]", 1, 28,
                 "expected 'off=' (byte offset within each partition)"},
        BadInput{"tensor_copy dst=sbuf[p0:1, off=0, fp32, [[1,1],[1,1],[1,1],[1,1],[1,1]]]", 1, 66,
                 "at most 4 free dimensions"},
        BadInput{"memset dst=" + kAp + ", value=1.5.2", 1, 56, "invalid number '1.5.2'"},
        BadInput{"memset dst=" + kAp + ", value=1e39", 1, 56, "out of the float range"},
        BadInput{"tensor_copy dst=" + kAp + ", src=" + kAp + " name=\"abc", 1, 101,
                 "unterminated string"},
        BadInput{"tensor_tensor dst=" + kAp + ", data1=" + kAp + ", data2=" + kAp + ", op=ad", 1,
                 148, "unknown ALU operator 'ad' for field 'op' (did you mean 'add'?)"},
        BadInput{"sem wait s1>1", 1, 12, "expected '>=' after the semaphore id"},
        BadInput{"sem wait s70000>=1", 1, 11, "out of range for a semaphore id"},
        BadInput{"sem @kernel.py:3", 1, 17, "expected ':' after the origin line"},
        BadInput{"sem @k.py:1:2 name=\"x\"", 1, 15,
                 "expected the end of the line after the origin"},
        BadInput{".seed 1\n.seed 2", 2, 1, "duplicate .seed directive"},
        BadInput{".sed 1", 1, 1, "unknown directive '.sed'"},
        BadInput{"sem rounding=nearest", 1, 14, "unknown rounding mode 'nearest'"},
        BadInput{"sem wait s1>=1 wait s2>=2", 1, 16, "duplicate 'wait' clause"},
        BadInput{"nc_stream_shuffle dst=" + kAp + ", src=" + kAp + ", mask=[1,2,3]", 1, 108,
                 "takes exactly 32 entries, got 3"},
        BadInput{"tensor_copy dst=" + kAp + " src=" + kAp, 1, 54,
                 "unexpected 'src': expected ',' before a field"},
        BadInput{"custom_op op=\"a\\qb\"", 1, 16, "unknown escape in string"},
        BadInput{"tensor_copy dst=sbuf [p0:1, off=0, fp32, [[1,1]]]", 1, 21,
                 "expected '[' right after 'sbuf'"}));

TEST(AsmErrorsFile, MissingFileIsAnAsmError) {
  try {
    parse_program_file("/nonexistent/dir/program.asm");
    FAIL();
  } catch (const AsmError& e) {
    EXPECT_EQ(e.file(), "/nonexistent/dir/program.asm");
    EXPECT_NE(e.message().find("cannot open file"), std::string::npos) << e.what();
  }
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
          text.insert(at, 1, "[],=:.@\"#-x0 p"[rng() % 14]);
      }
      if (text.empty()) text = "x";
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
