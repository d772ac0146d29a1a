// Validation rules: for each rule a passing instruction and a failing variant whose
// violation names the operand and the limit.
#include "isa/validate.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "isa/asm.h"

namespace trnsim::isa {
namespace {

// Chip configs built by hand (values of the trn1/trn2/trn3 presets that validation reads),
// so these tests do not depend on the preset loader.
arch::ChipConfig chip(int generation) {
  arch::ChipConfig c;
  c.generation = static_cast<arch::Generation>(generation);
  c.name = fmt::format("test-gen{}", generation);
  c.lnc_options = generation == 2 ? std::vector<int>{1} : std::vector<int>{1, 2};
  c.tensor.rows.value = 128;
  c.tensor.cols.value = 128;
  c.tensor.moving_free_max.value = generation == 4 ? 4096 : 512;
  c.tensor.moving_free_max_bf16.value = generation == 4 ? 8192 : 0;
  c.tensor.has_mx = generation == 4;
  c.tensor.has_bf16_psum = generation == 4;
  c.tensor.has_fp8_double_row = generation >= 3;
  for (auto* engine : {&c.vector, &c.scalar}) {
    engine->free_max_sbuf.value = 65536;
    engine->free_max_psum.value = 4096;
  }
  c.sbuf.partitions.value = 128;
  c.sbuf.bytes_per_partition.value = generation == 2 ? 196608 : generation == 3 ? 229376 : 262144;
  c.psum.partitions.value = 128;
  c.psum.bytes_per_partition.value = 16384;
  c.psum.banks.value = 8;
  c.dma.queues_per_engine.value = 16;
  c.dma.has_near_memory_accumulate = generation == 4;
  c.dma.has_priority = generation == 4;
  return c;
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

std::vector<Violation> violations_of(const std::string& line, int generation) {
  const Program p = parse_program(line, "t.asm");
  EXPECT_EQ(p.instructions.size(), 1u) << line;
  if (p.instructions.size() != 1) return {};
  return check_instruction(p.instructions[0], 0, chip(generation));
}

std::string describe(const std::vector<Violation>& violations) {
  std::string text;
  for (const auto& v : violations) text += "\n  " + v.to_string();
  return text;
}

struct Rule {
  std::string name;
  int generation;
  std::string valid;    // no violations
  std::string invalid;  // at least one violation with this operand and message
  std::string operand;
  std::string message;
  int invalid_generation = 0;  // generation for `invalid` when it differs (0 = same)
};

void PrintTo(const Rule& rule, std::ostream* os) {
  *os << rule.name;
}

class ValidationRule : public ::testing::TestWithParam<Rule> {};

TEST_P(ValidationRule, PassesTheValidCaseAndNamesTheViolation) {
  const Rule& rule = GetParam();
  const auto good = violations_of(rule.valid, rule.generation);
  EXPECT_TRUE(good.empty()) << rule.valid << describe(good);
  const int bad_generation =
      rule.invalid_generation != 0 ? rule.invalid_generation : rule.generation;
  const auto bad = violations_of(rule.invalid, bad_generation);
  const bool found = std::any_of(bad.begin(), bad.end(), [&](const Violation& v) {
    return v.operand == rule.operand && v.message.find(rule.message) != std::string::npos;
  });
  EXPECT_TRUE(found) << rule.invalid << "\nexpected operand '" << rule.operand
                     << "': " << rule.message << "\ngot:" << describe(bad);
}

// Frequently used valid operands (trn2 unless noted).
const std::string kS = sb(128, 0, "fp32", 512);
const std::string kS2 = sb(128, 4096, "fp32", 512);
const std::string kI = sb(128, 8192, "int32", 512);
const std::string kI2 = sb(128, 12288, "int32", 512);
const std::string kCol = sb(128, 16384, "fp32", 1);

std::string matmul(const std::string& dst, const std::string& stationary, const std::string& moving,
                   const std::string& extra = "") {
  return "[tensor] nc_matmul dst=" + dst + ", stationary=" + stationary + ", moving=" + moving +
         extra;
}
const std::string kMmDst = ps(128, 0, "fp32", 512);
const std::string kMmStat = sb(128, 0, "bf16", 128);
const std::string kMmMov = sb(128, 256, "bf16", 512);
const std::string kMatmul = matmul(kMmDst, kMmStat, kMmMov);

std::string matmul_mx(std::uint32_t p, const std::string& scale_dtype = "uint8",
                      const std::string& dst_dtype = "fp32") {
  return "[tensor] nc_matmul_mx dst=" + ps(128, 0, dst_dtype, 512) +
         ", stationary=" + sb(p, 0, "float8_e4m3fn_x4", 128) +
         ", moving=" + sb(p, 512, "float8_e5m2_x4", 512) +
         ", stationary_scale=" + sb(p, 2560, scale_dtype, 128) +
         ", moving_scale=" + sb(p, 3072, scale_dtype, 512);
}

std::string copy_op(const std::string& dst, const std::string& src,
                    const std::string& queue = "vector") {
  return "[" + queue + "] tensor_copy dst=" + dst + ", src=" + src;
}

std::string tensor_tensor(const std::string& dst, const std::string& a, const std::string& b,
                          const std::string& op, const std::string& queue = "vector") {
  return "[" + queue + "] tensor_tensor dst=" + dst + ", data1=" + a + ", data2=" + b +
         ", op=" + op;
}

std::string dma(const std::string& dst, const std::string& src, const std::string& extra = "",
                int queue = 0) {
  return fmt::format("[dma.{}] dma_copy dst={}, src={}{}", queue, dst, src, extra);
}

const std::string kReduceData = "sbuf[p0:128, off=0, fp32, [[512,2],[1,512]]]";
const std::string kMaskIdentity =
    "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31]";

INSTANTIATE_TEST_SUITE_P(
    Rules, ValidationRule,
    ::testing::Values(
        // General instruction rules.
        Rule{"EngineMayRunTheOp", 3, copy_op(kS, kS2), copy_op(kS, kS2, "tensor"), "",
             "the tensor engine cannot execute tensor_copy (allowed: vector, scalar, gpsimd)"},
        Rule{"DmaQueueExists", 3, dma(kS, hbm(128, 0, "fp32", 512), "", 15),
             dma(kS, hbm(128, 0, "fp32", 512), "", 16), "",
             "DMA queue 16 does not exist (16 queues on NeuronCore-v3)"},
        Rule{"ComputeEngineHasOneQueue", 3, copy_op(kS, kS2), copy_op(kS, kS2, "vector.1"), "",
             "the vector engine has a single queue (index 0), not 1"},
        Rule{"SemaphoreIdsInRange", 3, copy_op(kS, kS2) + " wait s255>=1 signal s0+=1",
             copy_op(kS, kS2) + " wait s256>=1", "",
             "wait on semaphore 256 (semaphores are 0..255)"},
        Rule{"SignalSemaphoreInRange", 3, copy_op(kS, kS2) + " signal s7+=1",
             copy_op(kS, kS2) + " signal s1000+=1", "", "signal of semaphore 1000"},
        // Access patterns.
        Rule{"AtMost128Partitions", 3, copy_op(kS, kS2),
             copy_op(sb(129, 0, "fp32", 512), sb(129, 4096, "fp32", 512)), "dst",
             "129 partitions; 1 to 128 are allowed"},
        Rule{"StartPartitionRule64", 3,
             copy_op(sb(64, 0, "fp32", 8, 64), sb(64, 64, "fp32", 8, 64)),
             copy_op(sb(64, 0, "fp32", 8, 32), sb(64, 64, "fp32", 8, 64)), "dst",
             "start partition 32 is not allowed for 64 partitions"},
        Rule{"StartPartitionRule32", 3,
             copy_op(sb(32, 0, "fp32", 8, 96), sb(32, 64, "fp32", 8, 96)),
             copy_op(sb(32, 0, "fp32", 8, 16), sb(32, 64, "fp32", 8, 96)), "dst",
             "start partition 16 is not allowed for 32 partitions"},
        Rule{"StartPartitionRuleFull", 3, copy_op(kS, kS2),
             copy_op(sb(100, 0, "fp32", 8, 0), sb(100, 64, "fp32", 8, 28)), "src",
             "start partition 28 is not allowed for 100 partitions"},
        Rule{"PartitionsWithinTheArray", 3,
             copy_op(sb(32, 0, "fp32", 8, 96), sb(32, 64, "fp32", 8, 96)),
             copy_op(sb(64, 0, "fp32", 8, 96), sb(64, 64, "fp32", 8, 96)), "dst",
             "partitions 96..159 run past the last partition 127"},
        Rule{"InsideSbuf", 3, copy_op(sb(128, 229376 - 2048, "fp32", 512), kS2),
             copy_op(sb(128, 229376 - 1024, "fp32", 512), kS2), "dst",
             "bytes [228352, 230400) lie outside the 229376 bytes per partition of sbuf on "
             "NeuronCore-v3"},
        Rule{"InsideSbufOfTheGeneration", 4, copy_op(sb(128, 229376, "fp32", 512), kS2),
             copy_op(sb(128, 229376, "fp32", 512), kS2), "dst", "196608 bytes per partition", 2},
        Rule{"InsidePsum", 3, copy_op(kS, ps(128, 16384 - 2048, "fp32", 512)),
             copy_op(kS, ps(128, 16384 - 1024, "fp32", 512)), "src",
             "lie outside the 16384 bytes per partition of psum"},
        Rule{"NaturalAlignment", 3, copy_op(sb(128, 2, "bf16", 8), sb(128, 4096, "fp32", 8)),
             copy_op(sb(128, 2, "fp32", 8), sb(128, 4096, "fp32", 8)), "dst",
             "offset 2 is not a multiple of the 4-byte float32 element"},
        Rule{"NoZeroCounts", 3, copy_op(kS, kS2),
             copy_op("sbuf[p0:128, off=0, fp32, [[8,0],[1,8]]]", kS2), "dst",
             "dimension 0 has count 0"},
        Rule{"StepsFitInt16", 3,
             copy_op("sbuf[p0:128, off=0, fp32, [[32767,2],[1,4]]]", sb(128, 4096, "fp32", 8)),
             copy_op("sbuf[p0:128, off=0, fp32, [[32768,2],[1,4]]]", kS2), "dst",
             "dimension 0 step 32768 is outside the hardware range -32768..32767 (int16)"},
        Rule{"OneToFourFreeDims", 3, copy_op(kS, kS2),
             copy_op("sbuf[p0:128, off=0, fp32, []]", kS2), "dst",
             "0 free dimensions; 1 to 4 are supported"},
        Rule{"ComputeEnginesCannotReachHbm", 3, copy_op(kS, kS2),
             copy_op(kS, hbm(128, 0, "fp32", 512)), "src",
             "the vector engine cannot access hbm (only DMA can)"},
        Rule{"GpSimdCannotReachPsum", 3, copy_op(kS, kS2, "gpsimd"),
             copy_op(kS, ps(128, 0, "fp32", 512), "gpsimd"), "src",
             "the gpsimd engine cannot access psum"},
        Rule{"DmaCannotReachPsum", 3, dma(kS, hbm(128, 0, "fp32", 512)),
             dma(kS, ps(128, 0, "fp32", 512)), "src", "DMA cannot access psum"},
        Rule{"VectorFreeSizeFromPsum", 3,
             copy_op(sb(128, 0, "fp32", 4096), ps(128, 0, "fp32", 4096)),
             copy_op(sb(128, 0, "fp32", 8192), ps(2, 0, "bf16", 8192 * 64)), "src",
             "exceeds the limit 4096 of the vector engine reading psum on NeuronCore-v3"},
        Rule{"NoUnpackedFp6", 3, copy_op(kS, kS2), copy_op(sb(128, 0, "float6_e3m2fn", 512), kS2),
             "dst", "dtype float6_e3m2fn is not an NKI tensor dtype"},
        Rule{"PackedMxOnlyWhereAllowed", 4,
             "[vector] memset dst=" + sb(128, 0, "float8_e4m3fn_x4", 128) + ", value=0",
             copy_op(sb(128, 0, "float8_e4m3fn_x4", 128), sb(128, 4096, "float8_e4m3fn_x4", 128)),
             "dst", "x4-packed dtype float8_e4m3fn_x4 cannot be used by tensor_copy"},
        Rule{"PackedMxNeedsGen4", 4,
             "[vector] memset dst=" + sb(128, 0, "float8_e4m3fn_x4", 128) + ", value=0",
             "[vector] memset dst=" + sb(128, 0, "float8_e4m3fn_x4", 128) + ", value=0", "dst",
             "dtype float8_e4m3fn_x4 needs NeuronCore-v4 or newer (this chip is NeuronCore-v3)", 3},
        // nc_matmul.
        Rule{"MatmulMovingFreeLimitGen3", 3, kMatmul,
             matmul(ps(128, 0, "fp32", 1024), kMmStat, sb(128, 256, "bf16", 1024)), "moving",
             "free size 1024 exceeds the limit 512 of NeuronCore-v3"},
        Rule{"MatmulMovingFreeLimitGen4", 4,
             matmul(ps(128, 0, "fp32", 4096), kMmStat, sb(128, 256, "bf16", 4096)),
             matmul(ps(128, 0, "bf16", 8192), kMmStat, sb(128, 256, "bf16", 8192)) +
                 ", tile_rows=128",
             "moving", "free size 8192 exceeds the limit 512", 3},
        Rule{"MatmulBf16OutputGen4", 4,
             matmul(ps(128, 0, "bf16", 8192), kMmStat, sb(128, 256, "bf16", 8192)),
             matmul(ps(128, 0, "bf16", 512), kMmStat, kMmMov), "dst",
             "matmul output dtype bfloat16 is not supported on NeuronCore-v3 (float32)", 3},
        Rule{"MatmulDstInOnePsumBank", 3, matmul(ps(128, 2048, "fp32", 512), kMmStat, kMmMov),
             matmul(ps(128, 1024, "fp32", 512), kMmStat, kMmMov), "dst",
             "bytes [1024, 3072) cross a 2048-byte psum bank boundary"},
        Rule{"MatmulSameContraction", 3, kMatmul, matmul(kMmDst, kMmStat, sb(64, 256, "bf16", 512)),
             "moving", "contraction size (partitions) 64 differs from the stationary's 128"},
        Rule{"MatmulStationaryFree", 3, kMatmul,
             matmul(ps(128, 0, "fp32", 512), sb(128, 0, "bf16", 256), sb(128, 1024, "bf16", 512)),
             "stationary", "free size 256 exceeds the limit 128"},
        Rule{"MatmulDstInPsum", 3, kMatmul, matmul(sb(128, 8192, "fp32", 512), kMmStat, kMmMov),
             "dst", "must be in psum, not sbuf"},
        Rule{"MatmulInputsInSbuf", 3, kMatmul, matmul(kMmDst, ps(128, 4096, "bf16", 128), kMmMov),
             "stationary", "must be in sbuf, not psum"},
        Rule{"MatmulInputDtypes", 3, kMatmul,
             matmul(kMmDst, sb(128, 0, "int8", 128), sb(128, 256, "int8", 512)), "stationary",
             "dtype int8 is not allowed here"},
        Rule{"MatmulFp32NeedsFp32Partner", 3,
             matmul(kMmDst, sb(128, 0, "fp32", 128), sb(128, 512, "tf32", 512)),
             matmul(kMmDst, sb(128, 0, "fp32", 128), sb(128, 512, "bf16", 512)), "moving",
             "a float32/tfloat32 input needs a float32/tfloat32 partner"},
        Rule{"MatmulDstShape", 3, kMatmul, matmul(ps(64, 0, "fp32", 512), kMmStat, kMmMov), "dst",
             "shape [64, 512] does not match the product shape [128, 512]"},
        Rule{"MatmulRowTiling", 3,
             matmul(ps(32, 0, "fp32", 512), sb(32, 0, "bf16", 32, 32), sb(32, 256, "bf16", 512, 32),
                    ", tile_row=32, tile_col=96, tile_rows=32, tile_cols=32"),
             matmul(ps(64, 0, "fp32", 512), sb(64, 0, "bf16", 64), sb(64, 256, "bf16", 512),
                    ", tile_row=32, tile_rows=64"),
             "tile_row", "tile position 32 must be a multiple of the tile size 64"},
        Rule{"Matmul32TilesNeedGen3", 3,
             matmul(ps(32, 0, "fp32", 512), sb(32, 0, "bf16", 32), sb(32, 256, "bf16", 512),
                    ", tile_rows=32, tile_cols=32"),
             matmul(ps(32, 0, "fp32", 512), sb(32, 0, "bf16", 32), sb(32, 256, "bf16", 512),
                    ", tile_rows=32, tile_cols=32"),
             "tile_rows", "a 32-wide tile needs NeuronCore-v3 or newer", 2},
        Rule{"MatmulContractionWithinRowTile", 3,
             matmul(ps(64, 0, "fp32", 512), sb(64, 0, "bf16", 64), sb(64, 256, "bf16", 512),
                    ", tile_rows=64"),
             matmul(kMmDst, kMmStat, kMmMov, ", tile_rows=64"), "stationary",
             "contraction size 128 exceeds the 64 PE rows in use"},
        Rule{"MatmulDoubleRowFp8", 3,
             matmul(kMmDst, "sbuf[p0:128, off=0, fp8_e4m3, [[128,2],[1,128]]]",
                    "sbuf[p0:128, off=256, fp8_e5m2, [[512,2],[1,512]]]", ", perf_mode=double_row"),
             matmul(kMmDst, "sbuf[p0:128, off=0, bf16, [[128,2],[1,128]]]",
                    "sbuf[p0:128, off=512, bf16, [[512,2],[1,512]]]", ", perf_mode=double_row"),
             "perf_mode", "double_row needs float8 stationary and moving"},
        Rule{"MatmulDoubleRowGeneration", 3,
             matmul(kMmDst, "sbuf[p0:128, off=0, fp8_e4m3, [[128,2],[1,128]]]",
                    "sbuf[p0:128, off=256, fp8_e5m2, [[512,2],[1,512]]]", ", perf_mode=double_row"),
             matmul(kMmDst, "sbuf[p0:128, off=0, fp8_e4m3, [[128,2],[1,128]]]",
                    "sbuf[p0:128, off=256, fp8_e5m2, [[512,2],[1,512]]]", ", perf_mode=double_row"),
             "perf_mode", "double_row is not available on NeuronCore-v2", 2},
        Rule{"MatmulTransposeKeepsBf16", 3,
             matmul(ps(128, 0, "bf16", 128), sb(128, 0, "bf16", 128), sb(128, 256, "bf16", 128),
                    ", is_transpose=true"),
             matmul(ps(128, 0, "bf16", 128), sb(128, 0, "bf16", 128), sb(128, 256, "bf16", 128)),
             "dst", "matmul output dtype bfloat16 is not supported"},
        // One rule for validator and simulator (isa::transpose_move): bf16 into an fp32 PSUM
        // tile is exact; fp32 into bf16 is not, though bf16 PSUM output is allowed on v4.
        Rule{"MatmulTransposeMovesExactly", 4,
             matmul(ps(128, 0, "fp32", 128), sb(128, 0, "bf16", 128), sb(128, 256, "bf16", 128),
                    ", is_transpose=true"),
             matmul(ps(128, 0, "bf16", 128), sb(128, 0, "fp32", 128), sb(128, 512, "fp32", 128),
                    ", is_transpose=true"),
             "dst", "a transpose cannot move float32 into bfloat16 exactly"},
        // nc_matmul_mx.
        Rule{"MatmulMxNeedsGen4", 4, matmul_mx(128), matmul_mx(128), "",
             "nc_matmul_mx needs the MX tensor engine of NeuronCore-v4 (not on NeuronCore-v3)", 3},
        Rule{"MatmulMxPartitionsMultipleOf32", 4, matmul_mx(64), matmul_mx(48), "stationary",
             "48 partitions; nc_matmul_mx needs a multiple of 32"},
        Rule{"MatmulMxScaleDtype", 4, matmul_mx(128, "float8_e8m0fnu"), matmul_mx(128, "fp32"),
             "stationary_scale",
             "dtype float32 is not allowed here (allowed: float8_e8m0fnu, uint8)"},
        // Elementwise.
        Rule{"ShapesMatch", 3, tensor_tensor(kS, kS2, kS2, "add"),
             tensor_tensor(kS, kS2, sb(64, 4096, "fp32", 512), "add"), "data2",
             "shape [64, 512] does not match dst [128, 512]"},
        Rule{"BitvecNeedsIntegers", 3, tensor_tensor(kI, kI2, kI2, "bitwise_and"),
             tensor_tensor(kS, kS2, kS2, "bitwise_and"), "data1",
             "dtype float32 is not an integer type, as bitvec operator bitwise_and requires"},
        Rule{"PowerRunsOnGpSimd", 3, tensor_tensor(kS, kS2, kS2, "power", "gpsimd"),
             tensor_tensor(kS, kS2, kS2, "power"), "",
             "tensor_tensor with power runs only on gpsimd"},
        Rule{"InputsNotBothInPsum", 3, tensor_tensor(kS, ps(128, 0, "fp32", 512), kS2, "add"),
             tensor_tensor(kS, ps(128, 0, "fp32", 512), ps(128, 2048, "fp32", 512), "add"), "data2",
             "'data1' and 'data2' may not both be in psum"},
        Rule{"AverageOnlyInPartitionReduce", 3,
             "[gpsimd] tensor_partition_reduce dst=" + sb(1, 0, "fp32", 512) + ", data=" + kS2 +
                 ", op=average",
             tensor_tensor(kS, kS2, kS2, "average"), "op", "operator average is only available"},
        Rule{"PartitionReduceOps", 3,
             "[gpsimd] tensor_partition_reduce dst=" + sb(1, 0, "fp32", 512) + ", data=" + kS2,
             "[gpsimd] tensor_partition_reduce dst=" + sb(1, 0, "fp32", 512) + ", data=" + kS2 +
                 ", op=multiply",
             "op", "operator multiply is not allowed here (allowed: add, average, maximum"},
        Rule{"ScalarEngineTensorScalarPairs", 3,
             "[scalar] tensor_scalar dst=" + kS + ", data=" + kS2 +
                 ", op0=multiply, operand0=2, op1=add",
             "[scalar] tensor_scalar dst=" + kS + ", data=" + kS2 + ", op0=subtract, operand0=2",
             "op0",
             "supports only (multiply, add), (multiply, bypass) and (add, bypass), not "
             "(subtract, bypass)"},
        Rule{"PerPartitionOperand", 3,
             "[vector] tensor_scalar dst=" + kS + ", data=" + kS2 + ", operand0=" + kCol,
             "[vector] tensor_scalar dst=" + kS + ", data=" + kS2 +
                 ", operand0=" + sb(128, 16384, "fp32", 2),
             "operand0", "a per-partition operand must have shape [128, 1], not [128, 2]"},
        Rule{"BitvecTensorScalarOnVector", 3,
             "[vector] tensor_scalar dst=" + kI + ", data=" + kI2 + ", op0=left_shift, operand0=1",
             "[gpsimd] tensor_scalar dst=" + kI + ", data=" + kI2 + ", op0=left_shift, operand0=1",
             "", "tensor_scalar with a bitvec operator runs only on vector"},
        Rule{"TensorReduceAxes", 3,
             "[vector] tensor_reduce dst=" + sb(128, 8192, "fp32", 2) + ", data=" + kReduceData,
             "[vector] tensor_reduce dst=" + sb(128, 8192, "fp32", 2) + ", data=" + kReduceData +
                 ", axes=3",
             "axes", "3 reduced axes; data has 2 free dims"},
        Rule{"TensorReduceDstShape", 3,
             "[vector] tensor_reduce dst=" + sb(128, 8192, "fp32", 1) + ", data=" + kReduceData +
                 ", axes=2",
             "[vector] tensor_reduce dst=" + sb(128, 8192, "fp32", 4) + ", data=" + kReduceData,
             "dst",
             "has 4 elements per partition; the data's free size over the reduced axes needs 2"},
        Rule{"BnStatsFreeLimit", 3,
             "[vector] bn_stats dst=" + sb(128, 8192, "fp32", 6) + ", data=" + kS,
             "[vector] bn_stats dst=" + sb(128, 8192, "fp32", 6) +
                 ", data=" + sb(128, 0, "fp32", 1024),
             "data", "free size 1024 exceeds the limit 512 (bn_stats_fmax)"},
        Rule{"BnStatsSixOutputs", 3,
             "[vector] bn_stats dst=" + sb(128, 8192, "fp32", 6) + ", data=" + kS,
             "[vector] bn_stats dst=" + sb(128, 8192, "fp32", 4) + ", data=" + kS, "dst",
             "has 4 elements per partition; bn_stats"},
        Rule{
            "BnAggrTriples", 3,
            "[vector] bn_aggr dst=" + sb(128, 8192, "fp32", 2) + ", data=" + sb(128, 0, "fp32", 12),
            "[vector] bn_aggr dst=" + sb(128, 8192, "fp32", 2) + ", data=" + sb(128, 0, "fp32", 10),
            "data", "free size 10 is not a multiple of 3"},
        Rule{"MemsetValueFitsDtype", 3,
             "[vector] memset dst=" + sb(128, 0, "int8", 16) + ", value=-128",
             "[vector] memset dst=" + sb(128, 0, "int8", 16) + ", value=300", "value",
             "300 is not representable in int8"},
        Rule{"MemsetPackedOnlyZero", 4,
             "[vector] memset dst=" + sb(128, 0, "float8_e4m3fn_x4", 16) + ", value=0",
             "[vector] memset dst=" + sb(128, 0, "float8_e4m3fn_x4", 16) + ", value=1", "value",
             "x4-packed destinations can only be set to 0"},
        Rule{"RangeSelectNeedsGen3", 3,
             "[vector] range_select dst=" + kS + ", on_true=" + kS2 + ", bound0=" + kCol,
             "[vector] range_select dst=" + kS + ", on_true=" + kS2, "",
             "range_select needs NeuronCore-v3 or newer (this chip is NeuronCore-v2)", 2},
        Rule{"RangeSelectOnFalseIsFp32Min", 3,
             "[vector] range_select dst=" + kS + ", on_true=" + kS2,
             "[vector] range_select dst=" + kS + ", on_true=" + kS2 + ", on_false_value=0",
             "on_false_value", "must be the lowest float32"},
        Rule{"ExponentialNeedsGen4", 4, "[vector] exponential dst=" + kS + ", src=" + kS2,
             "[vector] exponential dst=" + kS + ", src=" + kS2, "",
             "exponential needs NeuronCore-v4", 3},
        Rule{"ActivationConstantBiasGen3", 3,
             "[scalar] activation dst=" + kS + ", data=" + kS2 + ", func=exp, bias=1.5",
             "[scalar] activation dst=" + kS + ", data=" + kS2 + ", func=exp, bias=1.5", "bias",
             "a constant activation bias needs NeuronCore-v3 or newer", 2},
        Rule{"ActivationScaleFp32", 3,
             "[scalar] activation dst=" + kS + ", data=" + kS2 + ", scale=" + kCol,
             "[scalar] activation dst=" + kS + ", data=" + kS2 +
                 ", scale=" + sb(128, 16384, "bf16", 1),
             "scale", "dtype bfloat16 is not allowed here (allowed: float32)"},
        Rule{"ScalarTensorCopyNeedsGen3", 3, copy_op(kS, kS2, "scalar"), copy_op(kS, kS2, "scalar"),
             "", "tensor_copy on the scalar engine needs NeuronCore-v3", 2},
        Rule{"VectorTransposeLimit", 3,
             "[vector] nc_transpose dst=" + sb(32, 0, "fp32", 16) +
                 ", data=" + sb(16, 4096, "fp32", 32),
             "[vector] nc_transpose dst=" + sb(64, 0, "fp32", 16) +
                 ", data=" + sb(16, 4096, "fp32", 64),
             "data", "exceeds the vector-engine transpose limit [32, 32]"},
        Rule{"TensorTransposeShape", 3,
             "[tensor] nc_transpose dst=" + ps(64, 0, "bf16", 128) +
                 ", data=" + sb(128, 0, "bf16", 64),
             "[tensor] nc_transpose dst=" + ps(128, 0, "bf16", 64) +
                 ", data=" + sb(128, 0, "bf16", 64),
             "dst", "shape [128, 64] is not the transpose of the data's [128, 64]"},
        Rule{"SelectPredicateDtype", 3,
             "[vector] select dst=" + kS + ", predicate=" + sb(128, 8192, "uint8", 512) +
                 ", on_true=" + kS2,
             "[vector] select dst=" + kS + ", predicate=" + sb(128, 8192, "fp32", 512) +
                 ", on_true=" + kS2,
             "predicate", "dtype float32 is not allowed here"},
        Rule{"FindIndex8Outputs", 3,
             "[vector] nc_find_index8 dst=" + sb(128, 8192, "uint32", 8) + ", data=" + kS +
                 ", vals=" + sb(128, 4096, "fp32", 8),
             "[vector] nc_find_index8 dst=" + sb(128, 8192, "fp32", 8) + ", data=" + kS +
                 ", vals=" + sb(128, 4096, "fp32", 8),
             "dst", "dtype float32 is not allowed here (allowed: uint16, uint32)"},
        Rule{"Max8SourceSize", 3, "[vector] max8 dst=" + sb(128, 8192, "fp32", 8) + ", src=" + kS,
             "[vector] max8 dst=" + sb(128, 8192, "fp32", 8) + ", src=" + sb(128, 0, "fp32", 4),
             "src", "free size 4 must be within 8..16384"},
        Rule{"IotaPatternCoversDst", 3,
             "[gpsimd] iota dst=" + sb(128, 0, "int32", 512) + ", pattern=[[1,512]]",
             "[gpsimd] iota dst=" + sb(128, 0, "int32", 512) + ", pattern=[[1,256]]", "pattern",
             "covers 256 elements per partition; dst has 512"},
        Rule{"LocalGatherElementsPerIndex", 3,
             "[gpsimd] local_gather dst=" + sb(128, 0, "fp32", 64) + ", src=" + kS2 +
                 ", index=" + sb(128, 8192, "uint16", 16) + ", num_elem_per_idx=4",
             "[gpsimd] local_gather dst=" + sb(128, 0, "fp32", 48) + ", src=" + kS2 +
                 ", index=" + sb(128, 8192, "uint16", 16) + ", num_elem_per_idx=3",
             "num_elem_per_idx", "3 is not one of 1, 2, 4, 8, 16, 32"},
        Rule{"ShuffleMaskEntries", 3,
             "[vector] nc_stream_shuffle dst=" + kS + ", src=" + kS2 + ", mask=" + kMaskIdentity,
             "[vector] nc_stream_shuffle dst=" + kS + ", src=" + kS2 +
                 ", mask=[40,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,"
                 "27,28,29,30,255]",
             "mask", "entry 0 is 40"},
        Rule{"QuantizeMxSource", 4,
             "[vector] quantize_mx dst=" + sb(32, 0, "float8_e4m3fn_x4", 128) +
                 ", src=" + sb(32, 4096, "bf16", 512) + ", dst_scale=" + sb(32, 8192, "uint8", 128),
             "[vector] quantize_mx dst=" + sb(32, 0, "float8_e4m3fn_x4", 128) +
                 ", src=" + sb(32, 4096, "fp32", 512) + ", dst_scale=" + sb(32, 8192, "uint8", 128),
             "src", "dtype float32 is not allowed here (allowed: bfloat16, float16)"},
        Rule{"RngStateNeedsGen3", 3, "[gpsimd] rand_get_state dst=" + sb(128, 0, "uint32", 6),
             "[gpsimd] rand_get_state dst=" + sb(128, 0, "uint32", 6), "",
             "rand_get_state needs NeuronCore-v3", 2},
        Rule{"CustomOpInSbuf", 3,
             "[gpsimd] custom_op op=\"topk\", outputs=[" + kS + "], inputs=[" + kS2 + "]",
             "[gpsimd] custom_op op=\"topk\", outputs=[" + kS + "], inputs=[" +
                 hbm(128, 0, "fp32", 512) + "]",
             "inputs[0]", "must be in sbuf, not hbm"},
        // DMA.
        Rule{"DmaElementCounts", 3, dma(kS, hbm(128, 0, "fp32", 512)),
             dma(kS, hbm(128, 0, "fp32", 256)), "src",
             "32768 elements; dst has 65536 (counts must match)"},
        Rule{"DmaPriorityGen4", 4, dma(kS, hbm(128, 0, "fp32", 512), ", priority=3"),
             dma(kS, hbm(128, 0, "fp32", 512), ", priority=2"), "priority",
             "DMA priorities are not available on NeuronCore-v3", 3},
        Rule{"DmaPriorityRange", 4, dma(kS, hbm(128, 0, "fp32", 512), ", priority=3"),
             dma(kS, hbm(128, 0, "fp32", 512), ", priority=4"), "priority",
             "priority 4 exceeds the highest class 3"},
        Rule{"DmaAccumulateGen4", 4, dma(kS, hbm(128, 0, "fp32", 512), ", accumulate=add"),
             dma(kS, hbm(128, 0, "fp32", 512), ", accumulate=add"), "accumulate",
             "near-memory accumulate is not available on NeuronCore-v3", 3},
        Rule{"DmaTransposeDtype", 3,
             "[dma.0] dma_transpose dst=" + sb(64, 0, "bf16", 128) +
                 ", src=" + hbm(128, 0, "bf16", 64),
             "[dma.0] dma_transpose dst=" + sb(64, 0, "int8", 128) +
                 ", src=" + hbm(128, 0, "int8", 64),
             "src", "dtype int8 is not a 2- or 4-byte type"},
        Rule{"DmaIndirectIndexCount", 3,
             "[dma.0] dma_indirect dst=" + kS + ", src=" + hbm(4096, 0, "fp32", 512) +
                 ", index=" + sb(128, 8192, "uint32", 1),
             "[dma.0] dma_indirect dst=" + kS + ", src=" + hbm(4096, 0, "fp32", 512) +
                 ", index=" + sb(128, 8192, "uint32", 2),
             "index", "256 indices for 128 rows of 'dst'"},
        Rule{"CoreBarrierCores", 3, "[sync] core_barrier num_cores=2",
             "[sync] core_barrier num_cores=4", "num_cores",
             "4 cores; a barrier spans 2 to 2 cores"}),
    [](const ::testing::TestParamInfo<Rule>& param_info) { return param_info.param.name; });

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
                 "instruction 1 (nc_matmul at kernel.asm:2:10): operand 'moving': free size 1024 "
                 "exceeds the limit 512 of NeuronCore-v3 for a float32 output";
        });
    EXPECT_TRUE(listed) << e.what();
    EXPECT_NE(std::string(e.what()).find("ISA violation"), std::string::npos);
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

TEST(Validation, InstructionWithoutOriginOmitsIt) {
  Violation v{3, "memset", Origin{}, "", "something"};
  EXPECT_EQ(v.to_string(), "instruction 3 (memset): something");
}

TEST(Validation, PresetsAgreeWithTheHandBuiltConfigs) {
  // The validator reads these preset fields; a preset change that would alter rule outcomes
  // shows up here.
  const Program p =
      parse_program(matmul(ps(128, 0, "fp32", 4096), kMmStat, sb(128, 256, "bf16", 4096)) + "\n" +
                    matmul_mx(128));
  for (const auto& [preset, generation] :
       {std::pair{"trn1", 2}, std::pair{"trn2", 3}, std::pair{"trn3", 4}}) {
    const arch::ChipConfig loaded = arch::load_preset(preset);
    for (std::size_t i = 0; i < p.instructions.size(); ++i) {
      EXPECT_EQ(describe(check_instruction(p.instructions[i], i, loaded)),
                describe(check_instruction(p.instructions[i], i, chip(generation))))
          << preset;
    }
  }
}

}  // namespace
}  // namespace trnsim::isa
