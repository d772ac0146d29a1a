// NKI semantics the tracer decides: explicit access-pattern views (t.ap(pattern, offset,
// dtype)) and nc_matmul's accumulate=None (the first matmul write to a PSUM location
// overwrites, later ones add).
#include <gtest/gtest.h>

#include "arch/tests/test_presets.h"
#include "kernel/kernel.h"

namespace trnsim::kernel {
namespace {

using numerics::DType;

void trace_body(const std::function<void()>& body) {
  (void)trace(
      [&](std::span<const Tensor>) {
        body();
        return std::vector<Tensor>{};
      },
      {}, arch::testing::trn3(), {.name = "test"});
}

TEST(PatternView, OnChipPatternStartsAtThePartitionItsOffsetNames) {
  trace_body([] {
    const Tensor t = nl::ndarray({128, 64}, DType::kFloat32, nl::sbuf, "t");
    // partitions 32..63, every other element of each from element 4
    const Tensor v = t(nl::ds(0, 8), nl::all).pattern({{64, 32}, {2, 16}}, 32 * 64 + 4);
    EXPECT_EQ(v.shape(), (Shape{32, 16}));
    EXPECT_EQ(v.partition_offset(), 32u);
    const isa::AccessPattern ap = v.ap();
    EXPECT_EQ(ap.start_partition, 32u);
    EXPECT_EQ(offset_in_storage(ap.offset), 16u);  // 4 fp32 elements
    EXPECT_EQ(ap.dims[0].step, 2);
    EXPECT_EQ(ap.dims[0].count, 16u);
  });
}

TEST(PatternView, ADtypeReadsTheSameBytesAsAnotherType) {
  trace_body([] {
    const Tensor t = nl::ndarray({128, 64}, DType::kFloat32, nl::sbuf, "t");
    const Tensor v = t.pattern({{128, 128}, {1, 128}}, 0, DType::kBFloat16);
    EXPECT_EQ(v.dtype(), DType::kBFloat16);
    EXPECT_EQ(v.shape(), (Shape{128, 128}));
  });
}

TEST(PatternView, PatternsOutsideTheStorageAreLocatedErrors) {
  trace_body([] {
    const Tensor t = nl::ndarray({128, 64}, DType::kFloat32, nl::sbuf, "t");
    EXPECT_THROW((void)t.pattern({{32, 128}, {1, 32}}), KernelError);          // not [64, P]
    EXPECT_THROW((void)t.pattern({{64, 64}, {1, 64}}, 65 * 64), KernelError);  // partition 65+64
    EXPECT_THROW((void)t.pattern({{64, 128}, {1, 65}}), KernelError);          // one past a row
    EXPECT_THROW((void)t.pattern({{64, 128}, {-1, 2}}), KernelError);          // element -1
    EXPECT_THROW((void)t.pattern({{64, 64}, {1, 4}}, std::int64_t{64} << 32), KernelError);
    EXPECT_THROW(
        (void)t.pattern({{64, 1}, {-(std::int64_t{1} << 62), 3}, {std::int64_t{1} << 62, 3}}),
        KernelError);  // reaches beyond 64-bit element offsets
    const Tensor h = nl::ndarray({4, 8}, DType::kFloat32, nl::shared_hbm, "h");
    EXPECT_EQ(h.pattern({{1, 8}, {8, 4}}).shape(), (Shape{8, 4}));  // a transposed view
    try {
      (void)h.pattern({{8, 4}, {1, 9}});
      FAIL() << "expected KernelError";
    } catch (const KernelError& e) {
      EXPECT_NE(e.why().find("reaches elements [0, 32] of 'h', which has 32"), std::string::npos)
          << e.why();
    }
  });
}

// The accumulate mode of each traced matmul, in program order.
std::vector<isa::AccumulateMode> matmul_modes(const std::vector<KernelIr>& ir) {
  std::vector<isa::AccumulateMode> modes;
  for (const IrInstruction& inst : ir[0].instructions)
    if (const auto* mm = std::get_if<isa::NcMatmul>(&inst.inst.op)) modes.push_back(mm->accumulate);
  return modes;
}

TEST(AccumulateNone, ModesFollowEachLocationsHistory) {
  const auto ir = trace(
      [](std::span<const Tensor>) {
        const Tensor a = nl::zeros({128, 128}, DType::kBFloat16);
        const Tensor b = nl::zeros({128, 512}, DType::kBFloat16);
        const Tensor acc = nl::ndarray({128, 512}, DType::kFloat32, nl::psum, "acc");
        nisa::nc_matmul(acc, a, b, {.accumulate = std::nullopt});  // overwrite
        nisa::nc_matmul(acc, a, b, {.accumulate = std::nullopt});  // accumulate
        const Tensor other = nl::ndarray({128, 512}, DType::kFloat32, nl::psum, "other");
        nisa::nc_matmul(other, a, b, {.accumulate = std::nullopt});  // overwrite: a new tile
        nisa::nc_matmul(other(nl::all, nl::ds(0, 256)), a, b(nl::all, nl::ds(0, 256)),
                        {.accumulate = std::nullopt});  // accumulate: written before
        return std::vector<Tensor>{};
      },
      {}, arch::testing::trn3(), {.name = "test"});
  using enum isa::AccumulateMode;
  EXPECT_EQ(matmul_modes(ir), (std::vector{kOverwrite, kAccumulate, kOverwrite, kAccumulate}));
}

// A PSUM location is its bytes: a bfloat16 view of float32 accumulators sees what the
// float32 matmul wrote.
TEST(AccumulateNone, ViewsInAnotherDtypeShareTheHistory) {
  const auto ir = trace(
      [](std::span<const Tensor>) {
        const Tensor a = nl::zeros({128, 128}, DType::kBFloat16);
        const Tensor b = nl::zeros({128, 512}, DType::kBFloat16);
        const Tensor acc = nl::ndarray({128, 512}, DType::kFloat32, nl::psum, "acc");
        nisa::nc_matmul(acc(nl::all, nl::ds(0, 256)), a, b(nl::all, nl::ds(0, 256)),
                        {.accumulate = std::nullopt});  // overwrite: bytes [0, 1024)
        // 1024 bfloat16 words per partition; the first 512 are the bytes written above.
        const Tensor low = acc.pattern({{1024, 128}, {1, 512}}, 0, DType::kBFloat16);
        const Tensor high = acc.pattern({{1024, 128}, {1, 512}}, 512, DType::kBFloat16);
        nisa::nc_matmul(low, a, b, {.accumulate = std::nullopt});   // accumulate
        nisa::nc_matmul(high, a, b, {.accumulate = std::nullopt});  // overwrite
        return std::vector<Tensor>{};
      },
      {}, arch::testing::trn3(), {.name = "test"});
  using enum isa::AccumulateMode;
  EXPECT_EQ(matmul_modes(ir), (std::vector{kOverwrite, kAccumulate, kOverwrite}));
}

TEST(AccumulateNone, ADstPartlyWrittenBeforeIsALocatedError) {
  try {
    trace_body([] {
      const Tensor a = nl::zeros({128, 128}, DType::kBFloat16);
      const Tensor b = nl::zeros({128, 512}, DType::kBFloat16);
      const Tensor acc = nl::ndarray({128, 512}, DType::kFloat32, nl::psum, "acc");
      nisa::nc_matmul(acc(nl::all, nl::ds(0, 256)), a, b(nl::all, nl::ds(0, 256)),
                      {.accumulate = true});
      nisa::nc_matmul(acc, a, b, {.accumulate = std::nullopt});
    });
    FAIL() << "expected KernelError";
  } catch (const KernelError& e) {
    EXPECT_NE(e.where().file.find("nki_rules_test.cpp"), std::string::npos);
    EXPECT_NE(e.why().find("into 'acc': some of its PSUM locations were written"),
              std::string::npos)
        << e.why();
  }
}

}  // namespace
}  // namespace trnsim::kernel
