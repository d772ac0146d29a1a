// Print -> parse -> print round trips of the text assembly.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "isa/asm.h"
#include "random_isa.h"

namespace trnsim::isa {
namespace {

using numerics::DType;

Program one(Instruction inst) {
  Program p;
  p.instructions.push_back(std::move(inst));
  return p;
}

// parse(print(p)) == p and print(parse(print(p))) == print(p).
void expect_round_trip(const Program& program) {
  const std::string text = print_program(program);
  Program parsed;
  try {
    parsed = parse_program(text, "roundtrip.asm");
  } catch (const AsmError& e) {
    FAIL() << e.what() << "\n" << text;
  }
  EXPECT_EQ(parsed, program) << text;
  EXPECT_EQ(print_program(parsed), text);
}

template <class Op>
void check_every_field_round_trips(testing::RandomIsa& random) {
  SCOPED_TRACE(std::string(Op::kName));
  Instruction inst;
  inst.op = random.every_field_set<Op>();
  inst.queue = {Engine::kDma, 7};
  inst.waits = {{3, 1}, {255, 0xffffffffu}};
  inst.signals = {{4, 2}};
  inst.rounding = RoundingMode::kStochastic;
  inst.name = "label \"q\"\\";
  inst.origin = {"dir/kernel.py", 40, 3};
  const std::string line = print_instruction(inst);
  // Every field differs from its default, so every field name must appear.
  Op op = std::get<Op>(inst.op);
  op.fields([&](std::string_view name, auto&, Role) {
    const std::string key = std::string(name) + "=";
    const bool present =
        line.find(" " + key) != std::string::npos || line.find(", " + key) != std::string::npos;
    EXPECT_TRUE(present) << "field " << name << " missing from: " << line;
  });
  EXPECT_EQ(line.find('\n'), std::string::npos) << "instruction must print to one line";
  expect_round_trip(one(inst));
}

template <std::size_t... I>
void check_all_operations(testing::RandomIsa& random, std::index_sequence<I...>) {
  (check_every_field_round_trips<std::variant_alternative_t<I, Operation>>(random), ...);
}

TEST(AsmRoundTrip, EveryOperationWithEveryFieldSet) {
  // Several seeds so that each field takes several values (and both ScalarOperand forms).
  for (std::uint32_t seed = 1; seed <= 8; ++seed) {
    testing::RandomIsa random(seed);
    check_all_operations(random, std::make_index_sequence<std::variant_size_v<Operation>>{});
  }
}

template <std::size_t... I>
void check_defaults(std::index_sequence<I...>) {
  (
      [] {
        using Op = std::variant_alternative_t<I, Operation>;
        Instruction inst;
        inst.op.template emplace<Op>();  // (assigning Op{} trips a GCC 12 maybe-uninitialized false
                                         // positive)
        inst.queue = {Engine::kVector, 0};
        inst.origin = {"k.py", 1, 1};
        const std::string line = print_instruction(inst);
        // Only operands (access patterns) appear for a default operation.
        std::size_t fields = 0, operands = 0;
        Op op{};
        op.fields([&](std::string_view, auto& member, Role) {
          ++fields;
          if constexpr (std::is_same_v<std::decay_t<decltype(member)>, AccessPattern>) ++operands;
        });
        const auto equals = static_cast<std::size_t>(std::count(line.begin(), line.end(), '='));
        // Each operand prints "name=" plus "off=" inside the pattern.
        EXPECT_EQ(equals, 2 * operands) << line;
        expect_round_trip(one(inst));
        (void)fields;
      }(),
      ...);
}

TEST(AsmRoundTrip, DefaultFieldsAreOmittedAndRestored) {
  check_defaults(std::make_index_sequence<std::variant_size_v<Operation>>{});
}

TEST(AsmRoundTrip, RandomProgramsRoundTripExactly) {
  for (std::uint32_t seed = 0; seed < 400; ++seed) {
    testing::RandomIsa random(seed);
    expect_round_trip(random.program(6));
    if (HasFailure()) {
      ADD_FAILURE() << "seed " << seed;
      return;
    }
  }
}

TEST(AsmRoundTrip, RandomProgramsWithNansRoundTripAsText) {
  for (std::uint32_t seed = 0; seed < 200; ++seed) {
    testing::RandomIsa random(seed, /*allow_nan=*/true);
    const std::string text = print_program(random.program(6));
    EXPECT_EQ(print_program(parse_program(text)), text) << "seed " << seed;
  }
}

TEST(AsmRoundTrip, FloatsKeepTheirExactBits) {
  const std::uint32_t patterns[] = {
      0x00000000u, 0x80000000u,  // +0, -0
      0x00000001u, 0x807fffffu,  // smallest and largest-magnitude denormals
      0x7f7fffffu, 0xff7fffffu,  // +-max
      0x7f800000u, 0xff800000u,  // +-inf
      0x7fc00000u, 0xffc00000u,  // canonical NaN, negative NaN
      0x7f800001u, 0x7fbfffffu,  // signalling NaN payloads
      0x3dcccccdu,               // 0.1f
      0x3f800001u,               // 1 + ulp
  };
  for (std::uint32_t bits : patterns) {
    Instruction inst;
    Memset memset_op;
    memset_op.value = std::bit_cast<float>(bits);
    inst.op = memset_op;
    inst.queue = {Engine::kVector, 0};
    const std::string text = print_program(one(inst));
    const Program parsed = parse_program(text);
    const float value = std::get<Memset>(parsed.instructions.at(0).op).value;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(value), bits) << text;
  }
}

TEST(AsmParse, AcceptsHandWrittenSyntax) {
  const std::string text =
      "# a comment line\n"
      "\n"
      ".seed 42   # trailing comment\n"
      "  tensor_copy dst=sbuf[p0:128, off=0x100, bf16, [[1,512]]],\tsrc=psum[p0:128, off=0, "
      "fp32, [[1, 512]]]\r\n"
      "[dma.2] dma_copy src=hbm[p0:128x1024, addr=4096, float32, [[1,1024]]], "
      "dst=sbuf[p64:128, off=0, float32, [[1,1024]]], priority=0x3 wait s1>=2 signal s2+=1, "
      "s3+=4\n"
      "[sync] sem @\"gen: kernel.py\":7:9\n";
  const Program p = parse_program(text, "hand.asm");
  EXPECT_EQ(p.seed, 42u);
  ASSERT_EQ(p.instructions.size(), 3u);

  const Instruction& copy = p.instructions[0];
  // No queue prefix: the first engine allowed by the operation.
  EXPECT_EQ(copy.queue, (QueueId{Engine::kVector, 0}));
  EXPECT_EQ(copy.origin, (Origin{"hand.asm", 4, 3}));
  const auto& tc = std::get<TensorCopy>(copy.op);
  EXPECT_EQ(tc.dst.dtype, DType::kBFloat16);
  EXPECT_EQ(tc.dst.offset, 0x100u);
  EXPECT_EQ(tc.dst.partitions, 128u);
  EXPECT_EQ(tc.src.memory, Memory::kPsum);

  const Instruction& dma = p.instructions[1];
  EXPECT_EQ(dma.queue, (QueueId{Engine::kDma, 2}));
  const auto& dc = std::get<DmaCopy>(dma.op);
  EXPECT_EQ(dc.src.partition_step, 1024);
  EXPECT_EQ(dc.src.offset, 4096u);
  EXPECT_EQ(dc.dst.start_partition, 64u);
  EXPECT_EQ(dc.dst.partitions, 64u);
  EXPECT_EQ(dc.priority, 3);
  EXPECT_EQ(dma.waits, (std::vector<SemWait>{{1, 2}}));
  EXPECT_EQ(dma.signals, (std::vector<SemSignal>{{2, 1}, {3, 4}}));
  EXPECT_EQ(dma.origin, (Origin{"hand.asm", 5, 9}));

  EXPECT_EQ(p.instructions[2].origin, (Origin{"gen: kernel.py", 7, 9}));
  // The canonical print parses back to the same program.
  expect_round_trip(p);
}

TEST(AsmParse, PrintsTheDocumentedCanonicalForm) {
  Instruction inst;
  NcMatmul mm;
  mm.dst = {Memory::kPsum, DType::kFloat32, 2048, 0, 128, 0, 1, {Dim{1, 512}}};
  mm.stationary = {Memory::kSbuf, DType::kBFloat16, 0, 0, 128, 0, 1, {Dim{1, 128}}};
  mm.moving = {Memory::kSbuf, DType::kBFloat16, 4096, 0, 128, 0, 2, {Dim{512, 2}, Dim{1, 256}}};
  mm.accumulate = AccumulateMode::kAccumulate;
  inst.op = mm;
  inst.queue = {Engine::kTensor, 0};
  inst.waits = {{3, 1}};
  inst.origin = {"kernel.py", 40, 3};
  EXPECT_EQ(print_instruction(inst),
            "[tensor] nc_matmul dst=psum[p0:128, off=2048, float32, [[1,512]]], "
            "stationary=sbuf[p0:128, off=0, bfloat16, [[1,128]]], moving=sbuf[p0:128, off=4096, "
            "bfloat16, [[512,2],[1,256]]], accumulate=accumulate wait s3>=1 @kernel.py:40:3");
  Instruction dma;
  DmaCopy copy;
  copy.src = {Memory::kHbm, DType::kFloat32, 0x1000, 0, 128, 1024, 1, {Dim{1, 1024}}};
  copy.dst = {Memory::kSbuf, DType::kFloat32, 0, 0, 128, 0, 1, {Dim{1, 1024}}};
  dma.op = copy;
  dma.queue = {Engine::kDma, 0};
  EXPECT_EQ(print_instruction(dma),
            "[dma.0] dma_copy dst=sbuf[p0:128, off=0, float32, [[1,1024]]], "
            "src=hbm[p0:128x1024, addr=0x1000, float32, [[1,1024]]] @?");
}

template <class Op>
void expect_no_clause_named_fields() {
  Op op{};
  op.fields([](std::string_view name, auto&, Role) {
    EXPECT_TRUE(name != "wait" && name != "signal" && name != "rounding" && name != "name")
        << Op::kName << " has a field named like a clause keyword: " << name;
  });
}

template <std::size_t... I>
void expect_no_clause_named_fields(std::index_sequence<I...>) {
  (expect_no_clause_named_fields<std::variant_alternative_t<I, Operation>>(), ...);
}

TEST(AsmParse, NoOperationHasAFieldNamedLikeAClause) {
  expect_no_clause_named_fields(std::make_index_sequence<std::variant_size_v<Operation>>{});
}

TEST(AsmParse, EmptyTextIsAnEmptyProgram) {
  EXPECT_EQ(parse_program(""), Program{});
  EXPECT_EQ(parse_program("\n\n# only comments\n   \n"), Program{});
  EXPECT_EQ(print_program(Program{}), "");
}

}  // namespace
}  // namespace trnsim::isa
