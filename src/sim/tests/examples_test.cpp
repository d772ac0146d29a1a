// The shipped assembly examples, run through sim::run_asm (the code path of
// `trnsim run-asm`) and compared with references computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "isa/asm.h"
#include "sim/asm_runner.h"
#include "sim/tests/test_util.h"

namespace trnsim::sim::testing {
namespace {

std::string example_path(const std::string& name) {
  const char* root = std::getenv("TRNSIM_SOURCE_DIR");
  return std::string(root != nullptr ? root : TRNSIM_SOURCE_DIR_DEFAULT) + "/examples/asm/" + name;
}

TEST(Examples, Matmul256Bf16MatchesReference) {
  const std::uint32_t n = 256;
  TestRng rng(2024);
  std::vector<std::uint16_t> a_t(n * n), b(n * n);  // a_t[k][m] = A[m][k]
  for (auto& v : a_t) v = f32_to_bf16_rne(rng.uniform(-2, 2));
  for (auto& v : b) v = f32_to_bf16_rne(rng.uniform(-2, 2));

  AsmRunRequest request;
  request.asm_path = example_path("matmul_256_bf16.s");
  request.inits = {{"a_t", TensorInit::Kind::kBytes, "", to_bytes(a_t), 0},
                   {"b", TensorInit::Kind::kBytes, "", to_bytes(b), 0}};
  const AsmRunOutcome outcome = run_asm(request);
  EXPECT_EQ(outcome.result.instructions_executed, 12u);
  EXPECT_TRUE(outcome.result.hazards.empty());
  const auto c = from_bytes<float>(outcome.contents.at("c"));
  ASSERT_EQ(c.size(), std::size_t{n} * n);

  // Two K tiles: each an fp32 left-to-right sum of exact products; the second accumulates
  // onto the first in PSUM. Also within 1e-5 relative of the exact double result.
  for (std::uint32_t m = 0; m < n; ++m) {
    for (std::uint32_t j = 0; j < n; ++j) {
      float tile_sum[2] = {0, 0};
      double exact = 0;
      for (std::uint32_t k = 0; k < n; ++k) {
        const float p = bf16_to_f32(a_t[k * n + m]) * bf16_to_f32(b[k * n + j]);
        float& s = tile_sum[k / 128];
        s = k % 128 == 0 ? p : s + p;
        exact += static_cast<double>(p);
      }
      const float expected = tile_sum[0] + tile_sum[1];
      ASSERT_EQ(f32_bits(c[m * n + j]), f32_bits(expected)) << m << "," << j;
      ASSERT_NEAR(c[m * n + j], exact, 1e-4 * (1 + std::abs(exact)));
    }
  }
}

TEST(Examples, SoftmaxRowMatchesReference) {
  const std::uint32_t n = 512;
  TestRng rng(7);
  std::vector<float> x(n);
  for (auto& v : x) v = rng.uniform(-6, 6);
  AsmRunRequest request;
  request.asm_path = example_path("softmax_row.s");
  request.inits = {{"x", TensorInit::Kind::kBytes, "", to_bytes(x), 0}};
  const AsmRunOutcome outcome = run_asm(request);
  EXPECT_TRUE(outcome.result.hazards.empty());
  const auto y = from_bytes<float>(outcome.contents.at("y"));
  double max = x[0];
  for (float v : x) max = std::max<double>(max, v);
  double sum = 0;
  for (float v : x) sum += std::exp(v - max);
  double total = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const double expected = std::exp(x[i] - max) / sum;
    ASSERT_NEAR(y[i], expected, 1e-6 * expected + 1e-9) << i;
    total += y[i];
  }
  EXPECT_NEAR(total, 1.0, 1e-5);
}

TEST(Examples, LoopTilesRunsItsLoopOnTheDevice) {
  // 8 trips of a loop compiled once per queue: each trip's tile of y is 2x + 1.
  const std::uint32_t rows = 1024, cols = 512, trips = 8;
  TestRng rng(11);
  std::vector<float> x(std::size_t{rows} * cols);
  for (auto& v : x) v = rng.uniform(-4, 4);
  AsmRunRequest request;
  request.asm_path = example_path("loop_tiles.s");
  request.inits = {{"x", TensorInit::Kind::kBytes, "", to_bytes(x), 0}};
  const AsmRunOutcome outcome = run_asm(request);
  EXPECT_TRUE(outcome.result.hazards.empty());
  const auto y = from_bytes<float>(outcome.contents.at("y"));
  ASSERT_EQ(y.size(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], 2.0f * x[i] + 1.0f) << i;
  // Per queue: its reg_set once, then load/compute/store, reg_add and branch per trip.
  const RunResult& r = outcome.result;
  EXPECT_EQ(r.instructions_executed, 3 * (1 + 3 * trips));
  ASSERT_EQ(r.queues.size(), 3u);
  for (const QueueCount& q : r.queues) EXPECT_EQ(q.instructions, 1 + 3 * trips);
  ASSERT_EQ(r.executions.size(), r.instructions_executed);
  std::uint32_t computes = 0;
  for (const Execution& e : r.executions) {
    if (e.index != 5) continue;
    EXPECT_EQ(e.run, computes++);
  }
  EXPECT_EQ(computes, trips);
  EXPECT_EQ(r.semaphores[1], trips);
  EXPECT_EQ(r.semaphores[3], trips);
}

TEST(Examples, ParseAndPrintRoundTrip) {
  // The examples are canonical enough that printing the parsed program parses back equal.
  for (const char* name : {"matmul_256_bf16.s", "softmax_row.s", "loop_tiles.s"}) {
    const isa::Program program = isa::parse_program_file(example_path(name));
    EXPECT_EQ(isa::parse_program(isa::print_program(program)), program) << name;
  }
}

TEST(AsmRunner, HbmDirectivesAndSpecs) {
  const isa::Program program = isa::parse_program(
      ".hbm a@0x100:bfloat16[2,3]\n.hbm b@4096:float32[8] # comment\n[sync] sem\n");
  ASSERT_EQ(program.hbm.size(), 2u);
  EXPECT_EQ(program.hbm[0].name, "a");
  EXPECT_EQ(program.hbm[0].address, 0x100u);
  EXPECT_EQ(program.hbm[0].bytes(), 12u);
  EXPECT_EQ(program.hbm[1].to_string(), "b@0x1000:float32[8]");
  // The declarations are part of the program: printed, and parsed back equal.
  EXPECT_EQ(isa::parse_program(isa::print_program(program)), program);
  EXPECT_EQ(isa::parse_hbm_tensor("c@0x0:bf16[4, 5]"),
            (isa::HbmTensor{"c", 0, numerics::DType::kBFloat16, {4, 5}}));
  // A comment is only a comment (the old '# @hbm' convention declares nothing).
  EXPECT_TRUE(isa::parse_program("# @hbm a@0x0:float32[4]\n").hbm.empty());
}

// Each bad declaration is an assembly error at its line and column.
TEST(AsmRunner, BadHbmDeclarationsAreLocatedErrors) {
  const struct {
    const char* line;
    std::uint32_t column;
    const char* why;
  } cases[] = {
      // Sizes that wrap 64 bits used to become tiny allocations (2^62 + 1 fp32: 4 bytes).
      {".hbm a@0x0:float32[4611686018427387905]", 6, "does not fit in 64-bit addresses"},
      {".hbm a@0x0:float32[4294967296,4294967296]", 6, "does not fit in 64-bit addresses"},
      {".hbm a@0xFFFFFFFFFFFFFFF0:float32[8]", 6, "does not fit in 64-bit addresses"},
      {".hbm a:float32[4]", 7, "expected '@'"},
      {".hbm a@0x0:notatype[4]", 12, "unknown dtype 'notatype'"},
      {".hbm a@0x0:float32[0]", 20, "a zero dimension"},
      {".hbm a@0x0:float32[4", 21, "expected ',' and a dimension, or ']'"},
      {".hbm a@0x0:float32[4] extra", 23, "expected the end of the line"},
      {".hbm b@0x0:float32[4]\n.hbm b@0x100:float32[4]", 6, "'b' is declared twice"},
      {".tensor a@0x0:float32[4]", 1, "unknown directive '.tensor'"},
  };
  for (const auto& c : cases) {
    try {
      (void)isa::parse_program(std::string("[sync] sem\n") + c.line + "\n", "k.s");
      ADD_FAILURE() << c.line;
    } catch (const isa::AsmError& e) {
      const std::uint32_t line =
          std::string_view(c.line).find('\n') == std::string_view::npos ? 2 : 3;
      EXPECT_EQ(e.where(), (util::SourceLocation{"k.s", line, c.column})) << e.what();
      EXPECT_NE(e.message().find(c.why), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(isa::parse_hbm_tensor("a@0x0:float32[4]junk"), isa::AsmError);
}

TEST(AsmRunner, UnfilledInputIsAnUninitialisedReadAndWrongSizeIsRejected) {
  AsmRunRequest request;
  request.asm_path = example_path("softmax_row.s");
  const std::optional<SimError> e =
      sim_error_of([&] { run_asm(request); }, "an uninitialised read");
  ASSERT_TRUE(e);
  EXPECT_NE(e->why().find("operand 'src' reads uninitialised memory: hbm address 0x0"),
            std::string::npos)
      << e->what();
  request.inits = {{"x", TensorInit::Kind::kBytes, "", std::vector<std::uint8_t>(12), 0}};
  EXPECT_THROW(run_asm(request), SimError);
  request.inits = {{"x", TensorInit::Kind::kRandom, "", {}, 3}};
  EXPECT_NO_THROW(run_asm(request));
}

// A timing-only run computes no data, so a tensor it never touches (64 GiB here: more than
// the host has) costs no host memory: nothing reads it back and its storage is never made.
TEST(Examples, TimingOnlyRunsGiveUntouchedHbmTensorsNoHostMemory) {
  AsmRunRequest request;
  request.asm_path = example_path("softmax_row.s");
  request.extra_tensors = {
      {"weights", 0x100000000, numerics::DType::kFloat32, {std::uint64_t{1} << 34}}};
  request.options.functional = false;
  request.timed = true;
  const AsmRunOutcome outcome = run_asm(request);
  ASSERT_TRUE(outcome.timing.has_value());
  EXPECT_GT(outcome.timing->total_ns, 0);
  EXPECT_TRUE(outcome.contents.empty());
}

}  // namespace
}  // namespace trnsim::sim::testing
