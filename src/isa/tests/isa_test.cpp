// Name tables and AccessPattern helpers.
#include "isa/isa.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "isa/asm.h"

namespace trnsim::isa {
namespace {

using numerics::DType;

template <class E, class NameFn, class FromNameFn>
void expect_names_round_trip(int count, NameFn name_of, FromNameFn from_name) {
  std::set<std::string_view> seen;
  for (int i = 0; i < count; ++i) {
    const auto value = static_cast<E>(i);
    const std::string_view name = name_of(value);
    EXPECT_NE(name, "<invalid>") << i;
    EXPECT_TRUE(seen.insert(name).second) << "duplicate name " << name;
    EXPECT_EQ(from_name(name), std::optional<E>(value)) << name;
  }
  EXPECT_EQ(from_name("no_such_name"), std::nullopt);
  EXPECT_EQ(name_of(static_cast<E>(count)), "<invalid>");
}

TEST(IsaNames, EveryEnumeratorHasAUniqueNameThatMapsBack) {
  expect_names_round_trip<Engine>(kNumEngines, engine_name, engine_from_name);
  expect_names_round_trip<Memory>(kNumMemories, memory_name, memory_from_name);
  expect_names_round_trip<AluOp>(kNumAluOps, alu_op_name, alu_op_from_name);
  expect_names_round_trip<ActivationFunc>(kNumActivationFuncs, activation_name,
                                          activation_from_name);
}

TEST(IsaNames, NkiSpellings) {
  EXPECT_EQ(engine_name(Engine::kGpSimd), "gpsimd");
  EXPECT_EQ(memory_name(Memory::kPsum), "psum");
  EXPECT_EQ(alu_op_name(AluOp::kGreaterEqual), "greater_equal");
  EXPECT_EQ(alu_op_name(AluOp::kBitwiseXor), "bitwise_xor");
  EXPECT_EQ(activation_name(ActivationFunc::kGeluApprxTanh), "gelu_apprx_tanh");
  EXPECT_EQ(activation_name(ActivationFunc::kSign), "sign");
  EXPECT_TRUE(is_bitvec_op(AluOp::kLeftShift));
  EXPECT_FALSE(is_bitvec_op(AluOp::kLogicalAnd));
}

TEST(IsaNames, MnemonicsAreUniqueAndMakeTheirOperation) {
  std::set<std::string_view> seen;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          using Op = std::variant_alternative_t<I, Operation>;
          EXPECT_TRUE(seen.insert(Op::kName).second) << Op::kName;
          const auto made = make_operation(Op::kName);
          ASSERT_TRUE(made.has_value()) << Op::kName;
          EXPECT_EQ(made->index(), I);
          EXPECT_EQ(op_name(*made), Op::kName);
          EXPECT_EQ(op_engines(*made), Op::kEngines);
        }(),
        ...);
  }
  (std::make_index_sequence<std::variant_size_v<Operation>>{});
  EXPECT_FALSE(make_operation("nc_matmu").has_value());
}

AccessPattern sbuf(DType dtype, std::uint64_t offset, std::initializer_list<Dim> dims) {
  return access_pattern(Memory::kSbuf, dtype, 0, 128, offset, dims);
}

TEST(AccessPattern, FreeElementsIsTheProductOfCounts) {
  EXPECT_EQ(sbuf(DType::kFloat32, 0, {{512, 2}, {1, 512}}).free_elements(), 1024u);
  EXPECT_EQ(sbuf(DType::kFloat32, 0, {{512, 2}, {1, 512}}).total_elements(), 128u * 1024u);
  EXPECT_EQ(sbuf(DType::kFloat32, 0, {}).free_elements(), 1u);
  // Saturates instead of wrapping.
  const std::uint32_t big = std::numeric_limits<std::uint32_t>::max();
  EXPECT_EQ(sbuf(DType::kFloat32, 0, {{1, big}, {1, big}, {1, big}}).free_elements(),
            std::numeric_limits<std::uint64_t>::max());
}

TEST(AccessPattern, Contiguity) {
  EXPECT_TRUE(sbuf(DType::kFloat32, 0, {{512, 2}, {1, 512}}).is_contiguous());
  EXPECT_FALSE(sbuf(DType::kFloat32, 0, {{1024, 2}, {1, 512}}).is_contiguous());
  EXPECT_FALSE(sbuf(DType::kFloat32, 0, {{2, 512}}).is_contiguous());
  // Count-1 dims are never walked, so their step is irrelevant.
  EXPECT_TRUE(sbuf(DType::kFloat32, 0, {{999, 1}, {1, 64}}).is_contiguous());
  EXPECT_FALSE(sbuf(DType::kFloat32, 0, {{0, 4}, {1, 64}}).is_contiguous());  // broadcast
}

TEST(AccessPattern, ByteSpanCoversEveryElement) {
  // bf16, 2 rows of 512 elements 512 apart, at byte 4096: bytes [4096, 4096 + 2048).
  EXPECT_EQ(sbuf(DType::kBFloat16, 4096, {{512, 2}, {1, 512}}).byte_span(),
            (std::pair<std::int64_t, std::int64_t>{4096, 4096 + 2048}));
  // Negative step walks downwards from the offset.
  EXPECT_EQ(sbuf(DType::kFloat32, 400, {{-1, 100}}).byte_span(),
            (std::pair<std::int64_t, std::int64_t>{4, 404}));
  // Broadcast (step 0) touches one element.
  EXPECT_EQ(sbuf(DType::kFloat32, 8, {{0, 100}}).byte_span(),
            (std::pair<std::int64_t, std::int64_t>{8, 12}));
  // HBM: the partition dim is an outer dimension with partition_step.
  AccessPattern hbm = sbuf(DType::kFloat32, 0x1000, {{1, 1024}});
  hbm.memory = Memory::kHbm;
  hbm.partition_step = 1024;
  EXPECT_EQ(hbm.byte_span(), (std::pair<std::int64_t, std::int64_t>{0x1000, 0x1000 + 128 * 4096}));
  // On-chip patterns ignore partition_step (each partition is its own address space).
  EXPECT_EQ(sbuf(DType::kFloat32, 0, {{1, 1024}}).byte_span().second, 4096);
  // A zero count touches nothing.
  EXPECT_EQ(sbuf(DType::kFloat32, 64, {{1, 0}}).byte_span(),
            (std::pair<std::int64_t, std::int64_t>{64, 64}));
  // Absurd steps saturate instead of overflowing.
  const auto huge = sbuf(DType::kFloat32, 0, {{std::numeric_limits<std::int64_t>::max(), 4}});
  EXPECT_EQ(huge.byte_span().second, std::numeric_limits<std::int64_t>::max());
}

TEST(AccessPattern, EqualityIgnoresUnusedDims) {
  AccessPattern a = sbuf(DType::kFloat32, 0, {{1, 512}});
  AccessPattern b = a;
  b.dims[3] = {7, 7};  // past num_dims
  EXPECT_EQ(a, b);
  b.dims[0].count = 256;
  EXPECT_NE(a, b);
  AffinePattern p, q;
  q.dims[2] = {5, 5};
  EXPECT_EQ(p, q);
  q.num_dims = 3;
  EXPECT_NE(p, q);
}

TEST(AccessPattern, ARegisterTermCountsOnlyWhenPresent) {
  AccessPattern a = sbuf(DType::kFloat32, 0, {{1, 512}});
  AccessPattern b = a;
  b.dyn_scale = 64;  // no register: the scale means nothing
  EXPECT_EQ(a, b);
  b.dyn_reg = Reg{3};
  EXPECT_TRUE(b.is_dynamic());
  EXPECT_NE(a, b);
  AccessPattern c = b;
  c.dyn_scale = 128;
  EXPECT_NE(b, c);
}

TEST(ControlAssembly, RegisterRelativeWaitsAndOffsetsParseToTheirParts) {
  const Program p = parse_program(
      "[dma.0] dma_copy dst=sbuf[p0:1, off=0, fp32, [[1,4]]], "
      "src=hbm[p0:1x4, addr=0x100+r5*-16, fp32, [[1,4]]] wait s2>=r7-3, s4>=9\n"
      "[sync] branch cond=lt, a=r1, imm=-2, target=0\n",
      "t.asm");
  const Instruction& copy = p.instructions[0];
  const AccessPattern& src = std::get<DmaCopy>(copy.op).src;
  EXPECT_EQ(src.offset, 0x100u);
  EXPECT_EQ(src.dyn_reg, Reg{5});
  EXPECT_EQ(src.dyn_scale, -16);
  ASSERT_EQ(copy.waits.size(), 2u);
  EXPECT_EQ(copy.waits[0].base, Reg{7});
  EXPECT_EQ(static_cast<std::int32_t>(copy.waits[0].value), -3);
  EXPECT_FALSE(copy.waits[1].base.present());
  const auto& branch = std::get<Branch>(p.instructions[1].op);
  EXPECT_EQ(branch.cond, BranchCond::kLess);
  EXPECT_EQ(branch.imm, -2);
  EXPECT_FALSE(branch.b.present());
  EXPECT_EQ(print_program(p),
            "[dma.0] dma_copy dst=sbuf[p0:1, off=0, float32, [[1,4]]], src=hbm[p0:1x4, "
            "addr=0x100+r5*-16, float32, [[1,4]]] wait s2>=r7-3, s4>=9 @t.asm:1:9\n"
            "[sync] branch cond=lt, a=r1, imm=-2 @t.asm:2:8\n");
}

}  // namespace
}  // namespace trnsim::isa
