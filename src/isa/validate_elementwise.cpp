// Validation rules of the elementwise operations of the Vector, Scalar and GpSimd engines,
// tensor_tensor to affine_select and tensor_scalar_reduce to activate2 (listed, with their
// sources, in docs/isa.md "Validation rules").
#include <fmt/format.h>

#include <cmath>

#include "isa/validate_detail.h"

namespace trnsim::isa::validate_detail {

namespace {

constexpr std::uint64_t kBnStatsFreeMax = 512;  // nl.tile_size.bn_stats_fmax
constexpr std::uint64_t kMax8FreeMin = 8;       // max8 / nc_find_index8 source range
constexpr std::uint64_t kMax8FreeMax = 16384;
constexpr std::uint64_t kRangeSelectIndexLimit = std::uint64_t{1} << 24;
constexpr int kTensorScalarReduceMaxDims = 3;  // ISA: at most three free dimensions

constexpr std::initializer_list<AluOp> kComparisonOps = {AluOp::kEqual,   AluOp::kNotEqual,
                                                         AluOp::kGreater, AluOp::kGreaterEqual,
                                                         AluOp::kLess,    AluOp::kLessEqual};

// Shared by the elementwise ALU instructions: 'average' belongs to tensor_partition_reduce.
void forbid_average(Checker& c, std::string_view field, AluOp op) {
  c.forbid_alu(field, op, AluOp::kAverage, "is only available in tensor_partition_reduce");
}

// A float immediate written into an integer dst must be one of the dtype's values (memset's
// value, tensor_copy_predicated's src_value).
void check_immediate_fits(Checker& c, std::string_view field, float value, DType dst) {
  if (!numerics::is_integer(dst)) return;
  const auto& info = numerics::info(dst);
  const double bits = info.element_bits - (info.is_signed ? 1 : 0);
  const double high = std::exp2(bits) - 1;
  const double low = info.is_signed ? -std::exp2(bits) : 0.0;
  if (value != std::floor(value) || value < low || value > high) {
    c.add(field, fmt::format("{} is not representable in {} (value must match the dst dtype)",
                             value, numerics::name(dst)));
  }
}

// tensor_scalar_reduce's op0 and activate2's stages: arithmetic operators only.
void require_arithmetic(Checker& c, std::string_view field, AluOp op) {
  forbid_average(c, field, op);
  if (is_bitvec_op(op)) {
    c.add(field, fmt::format("{} takes arithmetic operators only, not {}", op_name(c.inst.op),
                             alu_op_name(op)));
  }
}

void check_affine(Checker& c, const AccessPattern& dst, const AffinePattern& pattern) {
  check_pattern_dims(c, "pattern", pattern.num_dims, pattern.dims, /*on_chip=*/false);
  if (pattern.num_dims < 1 || pattern.num_dims > kMaxFreeDims) return;
  std::uint64_t elements = 1;
  for (int k = 0; k < pattern.num_dims; ++k) elements *= pattern.dims[k].count;
  if (elements != dst.free_elements()) {
    c.add("pattern", fmt::format("covers {} elements per partition; dst has {}", elements,
                                 dst.free_elements()));
  }
}

}  // namespace

void check_op(Checker& c, const TensorTensor& op) {
  c.require_same_shape("data1", op.data1, "dst", op.dst);
  c.require_same_shape("data2", op.data2, "dst", op.dst);
  c.forbid_both_psum("data1", op.data1, "data2", op.data2);
  forbid_average(c, "op", op.op);
  if (is_bitvec_op(op.op)) {
    const std::string why = fmt::format("bitvec operator {}", alu_op_name(op.op));
    c.require_integer("dst", op.dst, why);
    c.require_integer("data1", op.data1, why);
    c.require_integer("data2", op.data2, why);
  }
  if (op.op == AluOp::kPower) c.require_engine(Engine::kGpSimd, "tensor_tensor with power");
}

void check_op(Checker& c, const TensorScalar& op) {
  c.require_same_shape("data", op.data, "dst", op.dst);
  c.require_per_partition("operand0", op.operand0, op.dst.partitions);
  c.require_per_partition("operand1", op.operand1, op.dst.partitions);
  forbid_average(c, "op0", op.op0);
  forbid_average(c, "op1", op.op1);
  const bool bitvec0 = is_bitvec_op(op.op0);
  const bool bitvec1 = is_bitvec_op(op.op1);
  if (bitvec0 || bitvec1) {
    // Both operators must be of the same class (bypass fits either).
    if ((op.op0 != AluOp::kBypass && !bitvec0) || (op.op1 != AluOp::kBypass && !bitvec1)) {
      c.add("op1", "op0 and op1 must both be bitvec operators or both arithmetic");
    }
    c.require_engine(Engine::kVector, "tensor_scalar with a bitvec operator");
    c.require_integer("dst", op.dst, "a bitvec operator");
    c.require_integer("data", op.data, "a bitvec operator");
  }
  if (c.engine == Engine::kScalar && !c.at_least(Generation::kGen4)) {
    const bool supported = (op.op0 == AluOp::kMultiply && op.op1 == AluOp::kAdd) ||
                           (op.op0 == AluOp::kMultiply && op.op1 == AluOp::kBypass) ||
                           (op.op0 == AluOp::kAdd && op.op1 == AluOp::kBypass);
    if (!supported) {
      c.add("op0", fmt::format("the scalar engine of {} supports only (multiply, add), (multiply, "
                               "bypass) and (add, bypass), not ({}, {})",
                               c.core(), alu_op_name(op.op0), alu_op_name(op.op1)));
    }
  }
}

void check_op(Checker& c, const ScalarTensorTensor& op) {
  c.require_same_shape("data", op.data, "dst", op.dst);
  c.require_same_shape("operand1", op.operand1, "dst", op.dst);
  c.require_per_partition("operand0", op.operand0, op.dst.partitions);
  c.forbid_both_psum("data", op.data, "operand1", op.operand1);
  for (const auto& [field, alu] : {std::pair{"op0", op.op0}, std::pair{"op1", op.op1}}) {
    forbid_average(c, field, alu);
    if (is_bitvec_op(alu)) {
      c.add(field, fmt::format("scalar_tensor_tensor takes arithmetic operators only, not {}",
                               alu_op_name(alu)));
    }
  }
}

void check_op(Checker& c, const TensorReduce& op) {
  const std::initializer_list<AluOp> kReduceOps = {
      AluOp::kAdd,        AluOp::kMultiply,  AluOp::kMaximum,    AluOp::kMinimum,
      AluOp::kBitwiseAnd, AluOp::kBitwiseOr, AluOp::kBitwiseXor, AluOp::kLogicalAnd,
      AluOp::kLogicalOr,  AluOp::kLogicalXor};
  c.require_alu("op", op.op, kReduceOps);
  if (is_bitvec_op(op.op)) {
    c.require_integer("data", op.data, "a bitvec reduction");
    c.require_integer("dst", op.dst, "a bitvec reduction");
  }
  if (op.axes < 1 || op.axes > op.data.num_dims || op.data.num_dims > kMaxFreeDims) {
    c.add("axes", fmt::format("{} reduced axes; data has {} free dims", op.axes, op.data.num_dims));
    return;
  }
  std::uint64_t reduced = 1;
  for (int k = op.data.num_dims - static_cast<int>(op.axes); k < op.data.num_dims; ++k) {
    reduced *= op.data.dims[k].count;
  }
  c.require_partitions("dst", op.dst, op.data.partitions, "tensor_reduce (partitions kept)");
  if (reduced != 0) {
    c.require_free("dst", op.dst, op.data.free_elements() / reduced,
                   "the data's free size over the reduced axes");
  }
}

void check_op(Checker& c, const TensorPartitionReduce& op) {
  c.require_alu(
      "op", op.op,
      {AluOp::kAdd, AluOp::kAverage, AluOp::kMaximum, AluOp::kBitwiseOr, AluOp::kBitwiseAnd});
  if (is_bitvec_op(op.op)) c.require_integer("data", op.data, "a bitvec reduction");
  c.require_partitions("dst", op.dst, 1, "a partition reduction");
  c.require_free("dst", op.dst, op.data.free_elements(), "the data's free size");
}

void check_op(Checker& c, const TensorCopy& op) {
  c.require_same_shape("src", op.src, "dst", op.dst);
  if (c.engine == Engine::kScalar) {
    c.require_generation(Generation::kGen3, "tensor_copy on the scalar engine");
  }
}

void check_op(Checker& c, const TensorTensorScan& op) {
  c.require_same_shape("data0", op.data0, "dst", op.dst);
  c.require_same_shape("data1", op.data1, "dst", op.dst);
  c.require_per_partition("initial", op.initial, op.dst.partitions);
  c.forbid_both_psum("data0", op.data0, "data1", op.data1);
  forbid_average(c, "op0", op.op0);
  forbid_average(c, "op1", op.op1);
}

void check_op(Checker& c, const BnStats& op) {
  c.require_free_at_most("data", op.data, kBnStatsFreeMax, "bn_stats_fmax");
  c.require_partitions("dst", op.dst, op.data.partitions, "bn_stats (partitions kept)");
  c.require_free("dst", op.dst, 6, "bn_stats (count, mean, count*var for even and odd elements)");
}

void check_op(Checker& c, const BnAggr& op) {
  if (op.data.free_elements() % 3 != 0) {
    c.add("data", fmt::format("free size {} is not a multiple of 3 (bn_stats triples)",
                              op.data.free_elements()));
  }
  c.require_partitions("dst", op.dst, op.data.partitions, "bn_aggr (partitions kept)");
  c.require_free("dst", op.dst, 2, "bn_aggr (mean, variance)");
}

void check_op(Checker& c, const Select& op) {
  c.require_same_shape("predicate", op.predicate, "dst", op.dst);
  c.require_same_shape("on_true", op.on_true, "dst", op.dst);
  c.require_per_partition("on_false", op.on_false, op.dst.partitions);
  c.require_dtype("predicate", op.predicate,
                  {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16});
  if (one_of(op.on_true.dtype, {DType::kTFloat32, DType::kInt32, DType::kUInt32})) {
    c.add("on_true",
          fmt::format("dtype {} is not supported by select", numerics::name(op.on_true.dtype)));
  }
  if (const auto* ap = std::get_if<AccessPattern>(&op.on_false)) {
    c.require_dtype("on_false", *ap, {DType::kFloat32});
  }
}

void check_op(Checker& c, const RangeSelect& op) {
  c.require_generation(Generation::kGen3, "range_select");
  c.require_same_shape("on_true", op.on_true, "dst", op.dst);
  const std::initializer_list<AluOp> kComparisons = {AluOp::kEqual, AluOp::kLess, AluOp::kLessEqual,
                                                     AluOp::kGreater, AluOp::kGreaterEqual};
  c.require_alu("comp_op0", op.comp_op0, kComparisons);
  c.require_alu("comp_op1", op.comp_op1, kComparisons);
  for (const auto& [name, bound] :
       {std::pair{"bound0", &op.bound0}, std::pair{"bound1", &op.bound1}}) {
    c.require_per_partition(name, *bound, op.dst.partitions);
    if (const auto* ap = std::get_if<AccessPattern>(bound))
      c.require_dtype(name, *ap, {DType::kFloat32});
  }
  if (op.on_false_value != -std::numeric_limits<float>::max()) {
    c.add("on_false_value",
          "must be the lowest float32 (-3.4028235e+38), as the hardware "
          "reduction assumes");
  }
  const std::int64_t last = static_cast<std::int64_t>(op.on_true.free_elements()) + op.range_start;
  if (op.range_start < 0 || static_cast<std::uint64_t>(last) > kRangeSelectIndexLimit) {
    c.add("range_start",
          fmt::format("index range [{}, {}) must lie within [0, 2^24)", op.range_start, last));
  }
  if (op.reduce_res) c.require_per_partition("reduce_res", *op.reduce_res, op.dst.partitions);
}

void check_op(Checker& c, const Iota& op) {
  c.require_memory("dst", op.dst, {Memory::kSbuf});
  check_affine(c, op.dst, op.pattern);
}

void check_op(Checker& c, const Memset& op) {
  if (numerics::is_mx_packed(op.dst.dtype) && op.value != 0.0f) {
    c.add("value", "x4-packed destinations can only be set to 0");
  }
  check_immediate_fits(c, "value", op.value, op.dst.dtype);
}

void check_op(Checker& c, const Max8& op) {
  const std::uint64_t free = op.src.free_elements();
  if (free < kMax8FreeMin || free > kMax8FreeMax) {
    c.add("src", fmt::format("free size {} must be within 8..16384", free));
  }
  if (op.src.num_dims > 3) c.add("src", "max8 takes at most 3 free dims");
  c.require_partitions("dst", op.dst, op.src.partitions, "max8 (partitions kept)");
  c.require_free("dst", op.dst, 8, "max8");
}

void check_op(Checker& c, const NcFindIndex8& op) {
  const std::uint64_t free = op.data.free_elements();
  if (free < kMax8FreeMin || free > kMax8FreeMax) {
    c.add("data", fmt::format("free size {} must be within 8..16384", free));
  }
  c.require_dtype("dst", op.dst, {DType::kUInt16, DType::kUInt32});
  c.require_partitions("dst", op.dst, op.data.partitions, "nc_find_index8 (partitions kept)");
  c.require_free("dst", op.dst, 8, "nc_find_index8");
  c.require_partitions("vals", op.vals, op.data.partitions, "nc_find_index8 (partitions kept)");
  c.require_free("vals", op.vals, 8, "nc_find_index8");
}

void check_op(Checker& c, const Exponential& op) {
  c.require_generation(Generation::kGen4, "exponential");
  c.require_same_shape("src", op.src, "dst", op.dst);
  c.require_per_partition("max_value", op.max_value, op.dst.partitions);
  if (op.reduce_res) c.require_per_partition("reduce_res", *op.reduce_res, op.dst.partitions);
}

void check_op(Checker& c, const Reciprocal& op) {
  c.require_same_shape("data", op.data, "dst", op.dst);
}

void check_op(Checker& c, const QuantizeMx& op) {
  c.require_generation(Generation::kGen4, "quantize_mx");
  for (const auto& [name, ap] : {std::pair{"dst", &op.dst}, std::pair{"src", &op.src},
                                 std::pair{"dst_scale", &op.dst_scale}}) {
    c.require_memory(name, *ap, {Memory::kSbuf});
  }
  c.require_dtype("src", op.src, {DType::kBFloat16, DType::kFloat16});
  c.require_dtype("dst", op.dst, {DType::kFloat8E4M3x4, DType::kFloat8E5M2x4});
  c.require_dtype("dst_scale", op.dst_scale, {DType::kFloat8E8M0, DType::kUInt8});
  if (op.src.partitions % kQuadrant != 0) {
    c.add("src",
          fmt::format("{} partitions; quantize_mx needs a multiple of 32", op.src.partitions));
  }
  const std::uint64_t free = op.src.free_elements();
  if (free % 4 != 0) c.add("src", fmt::format("free size {} is not a multiple of 4", free));
  c.require_partitions("dst", op.dst, op.src.partitions, "quantize_mx (partitions kept)");
  c.require_free("dst", op.dst, free / 4, "quantize_mx (one x4 word per 4 source elements)");
}

void check_op(Checker& c, const Activation& op) {
  c.require_same_shape("data", op.data, "dst", op.dst);
  c.require_per_partition("scale", op.scale, op.dst.partitions);
  c.require_per_partition("bias", op.bias, op.dst.partitions);
  if (const auto* scale = std::get_if<AccessPattern>(&op.scale)) {
    c.require_dtype("scale", *scale, {DType::kFloat32});
  }
  if (const auto* bias = std::get_if<AccessPattern>(&op.bias)) {
    if (bias->dtype == DType::kTFloat32) c.add("bias", "bias may not be tfloat32");
  } else if (std::get<float>(op.bias) != 0.0f) {
    c.require_generation(Generation::kGen3, "a constant activation bias", "bias");
  }
  if (op.reduce_res) c.require_per_partition("reduce_res", *op.reduce_res, op.dst.partitions);
}

void check_op(Checker& c, const AffineSelect& op) {
  c.require_memory("dst", op.dst, {Memory::kSbuf});
  c.require_memory("on_true", op.on_true, {Memory::kSbuf});
  c.require_same_shape("on_true", op.on_true, "dst", op.dst);
  c.require_alu("cmp_op", op.cmp_op, kComparisonOps);
  check_affine(c, op.dst, op.pattern);
}

void check_op(Checker& c, const TensorScalarReduce& op) {
  c.require_same_shape("data", op.data, "dst", op.dst);
  c.require_per_partition("operand0", op.operand0, op.dst.partitions);
  require_arithmetic(c, "op0", op.op0);
  c.require_alu("reduce_op", op.reduce_op,
                {AluOp::kAdd, AluOp::kMultiply, AluOp::kMaximum, AluOp::kMinimum});
  if (op.data.num_dims > kTensorScalarReduceMaxDims) {
    c.add("data", fmt::format("{} free dims; tensor_scalar_reduce takes at most {}",
                              op.data.num_dims, kTensorScalarReduceMaxDims));
  }
  if (op.reduce_res) c.require_per_partition("reduce_res", *op.reduce_res, op.dst.partitions);
}

// ISA: the scan's dtypes exclude the 32-bit integers; op1 is one of the five accumulators.
void check_op(Checker& c, const TensorScalarCumulative& op) {
  c.require_same_shape("src", op.src, "dst", op.dst);
  c.require_per_partition("imm0", op.imm0, op.dst.partitions);
  c.require_per_partition("imm1", op.imm1, op.dst.partitions);
  require_arithmetic(c, "op0", op.op0);
  c.require_alu(
      "op1", op.op1,
      {AluOp::kAdd, AluOp::kSubtract, AluOp::kMultiply, AluOp::kMaximum, AluOp::kMinimum});
  const std::initializer_list<DType> kScanTypes = {
      DType::kBFloat16,       DType::kFloat16,    DType::kFloat32, DType::kFloat8E4M3,
      DType::kFloat8E4M3Ieee, DType::kFloat8E5M2, DType::kUInt8,   DType::kUInt16,
      DType::kInt8,           DType::kInt16};
  c.require_dtype("dst", op.dst, kScanTypes);
  c.require_dtype("src", op.src, kScanTypes);
  if (op.reduce_cmd == ReduceCmd::kIdle || op.reduce_cmd == ReduceCmd::kReset) {
    c.add("reduce_cmd", fmt::format("{} does not accumulate; a cumulative scan needs reset_reduce, "
                                    "reduce or load_reduce",
                                    reduce_cmd_name(op.reduce_cmd)));
  }
  const bool has_imm1 =
      std::holds_alternative<AccessPattern>(op.imm1) || std::get<float>(op.imm1) != 0.0f;
  if (has_imm1 && op.reduce_cmd != ReduceCmd::kLoadReduce)
    c.add("imm1", "imm1 is the accumulator's start value; it needs reduce_cmd=load_reduce");
}

void check_op(Checker& c, const TensorCopyPredicated& op) {
  c.require_same_shape("predicate", op.predicate, "dst", op.dst);
  c.require_dtype("predicate", op.predicate, {DType::kUInt8, DType::kUInt16, DType::kUInt32});
  if (op.src) {
    c.require_same_shape("src", *op.src, "dst", op.dst);
    c.require_same_dtype("src", *op.src, "dst", op.dst, "tensor_copy_predicated does not cast");
    c.forbid_both_psum("predicate", op.predicate, "src", *op.src);
    if (op.src_value != 0.0f) c.add("src_value", "an immediate and a src tensor both given");
  } else {
    check_immediate_fits(c, "src_value", op.src_value, op.dst.dtype);
  }
}

void check_op(Checker& c, const NcMatchReplace8& op) {
  c.require_free_at_most("data", op.data, kMax8FreeMax, "nc_match_replace8 data");
  c.require_same_shape("dst", op.dst, "data", op.data);
  c.require_partitions("vals", op.vals, op.data.partitions, "nc_match_replace8 (partitions kept)");
  c.require_free("vals", op.vals, 8, "nc_match_replace8");
  if (op.dst_idx) {
    c.require_dtype("dst_idx", *op.dst_idx, {DType::kUInt16, DType::kUInt32});
    c.require_partitions("dst_idx", *op.dst_idx, op.data.partitions,
                         "nc_match_replace8 (partitions kept)");
    c.require_free("dst_idx", *op.dst_idx, 8, "nc_match_replace8");
  }
}

void check_op(Checker& c, const Activate2& op) {
  c.require_generation(Generation::kGen4, "activate2");
  c.require_same_shape("data", op.data, "dst", op.dst);
  c.require_per_partition("imm0", op.imm0, op.dst.partitions);
  c.require_per_partition("imm1", op.imm1, op.dst.partitions);
  c.require_per_partition("relu_param", op.relu_param, op.dst.partitions);
  const auto* imm0 = std::get_if<AccessPattern>(&op.imm0);
  const auto* imm1 = std::get_if<AccessPattern>(&op.imm1);
  if (imm0 != nullptr && imm1 != nullptr && imm0->dtype != imm1->dtype) {
    c.add("imm1", fmt::format("dtype {} differs from imm0's {} (tensor immediates share a dtype)",
                              numerics::name(imm1->dtype), numerics::name(imm0->dtype)));
  }
  using enum AluOp;
  const bool supported = (op.op0 == kMultiply && one_of(op.op1, {kAdd, kSubtract, kBypass})) ||
                         (one_of(op.op0, {kAdd, kSubtract, kBypass}) && op.op1 == kBypass);
  if (!supported) {
    c.add("op0",
          fmt::format("({}, {}) is not one of activate2's stages (multiply, add), (multiply, "
                      "subtract), (multiply, bypass), (add, bypass), (subtract, bypass), "
                      "(bypass, bypass)",
                      alu_op_name(op.op0), alu_op_name(op.op1)));
  }
  if (op.reverse0 && op.op0 == kBypass)
    c.add("reverse0", "reverse0 needs an op0 other than bypass");
  if (op.reverse1 && op.op1 == kBypass)
    c.add("reverse1", "reverse1 needs an op1 other than bypass");
  c.require_alu("reduce_op", op.reduce_op, {kAdd, kMaximum, kMinimum, kAbsMax, kAbsMin});
  if (op.reduce_res) c.require_per_partition("reduce_res", *op.reduce_res, op.dst.partitions);
}

}  // namespace trnsim::isa::validate_detail
