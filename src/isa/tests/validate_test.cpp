// Validation errors as exceptions: every violation of a program, each a diagnostic at its
// instruction's origin. The rules themselves (a passing instruction and a failing variant
// per rule) are tested as text in src/isa/tests/diagnostics/validate_*.asm.
#include "isa/validate.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "isa/asm.h"

namespace trnsim::isa {
namespace {

// The preset of a NeuronCore generation: 2 = trn1, 3 = trn2, 4 = trn3.
const arch::ChipConfig& chip(int generation) {
  static const arch::ChipConfig kChips[] = {arch::load_preset("trn1"), arch::load_preset("trn2"),
                                            arch::load_preset("trn3")};
  return kChips[generation - 2];
}

// Access-pattern text: one free dim of `free` elements.
std::string sb(std::uint32_t partitions, std::uint64_t offset, std::string_view dtype,
               std::uint64_t free, std::uint32_t start = 0) {
  return fmt::format("sbuf[p{}:{}, off={}, {}, [[1,{}]]]", start, start + partitions, offset, dtype,
                     free);
}
std::string ps(std::uint32_t partitions, std::uint64_t offset, std::string_view dtype,
               std::uint64_t free) {
  return fmt::format("psum[p0:{}, off={}, {}, [[1,{}]]]", partitions, offset, dtype, free);
}
std::string hbm(std::uint32_t partitions, std::uint64_t address, std::string_view dtype,
                std::uint64_t free) {
  return fmt::format("hbm[p0:{}x{}, addr={}, {}, [[1,{}]]]", partitions, free, address, dtype,
                     free);
}

// Frequently used valid operands (trn2 unless noted).
const std::string kS = sb(128, 0, "fp32", 512);
std::string matmul(const std::string& dst, const std::string& stationary, const std::string& moving,
                   const std::string& extra = "") {
  return "[tensor] nc_matmul dst=" + dst + ", stationary=" + stationary + ", moving=" + moving +
         extra;
}
const std::string kMmDst = ps(128, 0, "fp32", 512);
const std::string kMmStat = sb(128, 0, "bf16", 128);
const std::string kMmMov = sb(128, 256, "bf16", 512);
const std::string kMatmul = matmul(kMmDst, kMmStat, kMmMov);

std::string copy_op(const std::string& dst, const std::string& src,
                    const std::string& queue = "vector") {
  return "[" + queue + "] tensor_copy dst=" + dst + ", src=" + src;
}

std::string dma(const std::string& dst, const std::string& src, const std::string& extra = "",
                int queue = 0) {
  return fmt::format("[dma.{}] dma_copy dst={}, src={}{}", queue, dst, src, extra);
}

TEST(Validation, ViolationNamesIndexOpOriginOperandAndLimit) {
  Program p = parse_program(
      kMatmul + "\n" + matmul(ps(128, 0, "fp32", 1024), kMmStat, sb(128, 256, "bf16", 1024)),
      "kernel.asm");
  try {
    validate_program(p, chip(3));
    FAIL() << "no violation";
  } catch (const ValidationError& e) {
    ASSERT_FALSE(e.violations().empty());
    const Violation& v = e.violations().front();
    EXPECT_EQ(v.index, 1u);
    EXPECT_EQ(v.op, "nc_matmul");
    EXPECT_EQ(v.origin, (Origin{"kernel.asm", 2, 10}));
    const bool listed =
        std::any_of(e.violations().begin(), e.violations().end(), [](const Violation& x) {
          return x.to_string() ==
                 "kernel.asm:2:10: error: instruction 1 (nc_matmul): operand 'moving': free size "
                 "1024 exceeds the limit 512 of NeuronCore-v3 for a float32 output";
        });
    EXPECT_TRUE(listed) << e.what();
    // One diagnostic per violation, one line each.
    EXPECT_EQ(e.diagnostics().size(), e.violations().size());
    EXPECT_EQ(std::string(e.what()).rfind("kernel.asm:2:10: error: instruction 1 (nc_matmul)", 0),
              0u);
  }
}

TEST(Validation, ValidProgramDoesNotThrow) {
  const Program p =
      parse_program(kMatmul + "\n" + copy_op(kS, ps(128, 0, "fp32", 512)) + "\n" +
                    dma(hbm(128, 0, "fp32", 512), kS, "", 3) + "\n[sync] sem wait s1>=1");
  EXPECT_NO_THROW(validate_program(p, chip(2)));
  EXPECT_NO_THROW(validate_program(p, chip(3)));
  EXPECT_NO_THROW(validate_program(p, chip(4)));
}

// HBM addresses are bounded by the chip's HBM, so a huge partition or free step cannot wrap
// around 2^64 back onto the rows it should not reach (it used to run with rc 0).
TEST(Validation, HbmPatternsStayInsideTheChipsHbm) {
  const std::string sb2 = sb(2, 0, "fp32", 4);
  const std::string partition_step =
      dma(sb2, "hbm[p0:2x4611686018427387904, addr=0x0, fp32, [[1,4]]]");
  const std::string free_step =
      dma(sb2, "hbm[p0:2x4, addr=0x0, fp32, [[4611686018427387904,2],[1,2]]]");
  const std::string past_end = dma(sb2, "hbm[p0:2x4, addr=0x23FFFFFFF0, fp32, [[1,4]]]");
  for (const std::string& text : {partition_step, free_step, past_end}) {
    SCOPED_TRACE(text);
    try {
      validate_program(parse_program(text), chip(4));
      FAIL() << "no violation";
    } catch (const ValidationError& e) {
      EXPECT_NE(std::string(e.what()).find("beyond the 154618822656 bytes of HBM of trn3"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_NO_THROW(validate_program(
      parse_program(dma(sb2, "hbm[p0:2x4, addr=0x23FFFFFFE0, fp32, [[1,4]]]")), chip(4)));
}

TEST(Validation, InstructionWithoutOriginOmitsIt) {
  Violation v{3, "memset", Origin{}, "", "something"};
  EXPECT_EQ(v.to_string(), "error: instruction 3 (memset): something");
}

}  // namespace
}  // namespace trnsim::isa
