// The NeuronCore operations, one plain struct each, with NKI 0.6's names and operands.
//
// An operation declares everything generic code needs to know about it, once, here:
//   kName     the assembly mnemonic (= the NKI name)
//   kClass    what kind of work it is (isa::OpClass): which cost formula times it, whether
//             it is a DMA transfer
//   kEngines  the engines that may execute it (a mask of engine_bit)
//   fields(v) calls v(name, member, role) for every operand and attribute, in assembly
//             order: the printer, the parser, the validator's operand checks and every
//             operand walk (isa/operands.h) are written over it.
// The DMA and synchronisation operations are declared in isa/operations_dma.h, the control
// operations in isa/operations_control.h; the Operation variant below lists them all. Part of
// the public header isa/isa.h; include that.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "isa/operations_control.h"  // registers and branches (reg_*, branch)
#include "isa/operations_dma.h"      // DMA transfers and synchronisation (sem, core_barrier)
#include "isa/operations_gpsimd.h"   // random numbers and the GpSimd index operations
#include "isa/types.h"

namespace trnsim::isa {

// Tensor engine ------------------------------------------------------------------------

// dst[M, N] (+)= stationary[K, M]^T @ moving[K, N]; K is the partition dim of both inputs.
struct NcMatmul {
  static constexpr std::string_view kName = "nc_matmul";
  static constexpr OpClass kClass = OpClass::kMatmul;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kTensor);
  friend bool operator==(const NcMatmul&, const NcMatmul&) = default;
  AccessPattern dst, stationary, moving;
  AccumulateMode accumulate = AccumulateMode::kOverwrite;
  bool is_transpose = false;
  MatmulPerfMode perf_mode = MatmulPerfMode::kNone;
  std::uint32_t tile_row = 0, tile_col = 0;    // tile_position (PE row/column offset)
  std::uint32_t tile_rows = 0, tile_cols = 0;  // tile_size; 0 = whole array
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kReadWrite);
    v("stationary", stationary, Role::kRead);
    v("moving", moving, Role::kRead);
    v("accumulate", accumulate, Role::kAttr);
    v("is_transpose", is_transpose, Role::kAttr);
    v("perf_mode", perf_mode, Role::kAttr);
    v("tile_row", tile_row, Role::kAttr);
    v("tile_col", tile_col, Role::kAttr);
    v("tile_rows", tile_rows, Role::kAttr);
    v("tile_cols", tile_cols, Role::kAttr);
  }
};

// MX matmul (gen4): x4-packed data, E8M0 scales, K = 4 x partitions per instruction.
struct NcMatmulMx {
  static constexpr std::string_view kName = "nc_matmul_mx";
  static constexpr OpClass kClass = OpClass::kMatmul;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kTensor);
  friend bool operator==(const NcMatmulMx&, const NcMatmulMx&) = default;
  AccessPattern dst, stationary, moving, stationary_scale, moving_scale;
  AccumulateMode accumulate = AccumulateMode::kOverwrite;
  std::uint32_t tile_row = 0, tile_rows = 0;  // row tiling only
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kReadWrite);
    v("stationary", stationary, Role::kRead);
    v("moving", moving, Role::kRead);
    v("stationary_scale", stationary_scale, Role::kRead);
    v("moving_scale", moving_scale, Role::kRead);
    v("accumulate", accumulate, Role::kAttr);
    v("tile_row", tile_row, Role::kAttr);
    v("tile_rows", tile_rows, Role::kAttr);
  }
};

// Swap partition and (flattened) free dims. Tensor engine: <= [128,128], SBUF -> PSUM;
// Vector engine: <= [32,32].
struct NcTranspose {
  static constexpr std::string_view kName = "nc_transpose";
  static constexpr OpClass kClass = OpClass::kTranspose;
  static constexpr std::uint8_t kEngines =
      engine_bit(Engine::kTensor) | engine_bit(Engine::kVector);
  friend bool operator==(const NcTranspose&, const NcTranspose&) = default;
  AccessPattern dst, data;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
  }
};

// Vector / Scalar / GpSimd elementwise ------------------------------------------------

struct TensorTensor {
  static constexpr std::string_view kName = "tensor_tensor";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines =
      engine_bit(Engine::kVector) | engine_bit(Engine::kGpSimd);
  friend bool operator==(const TensorTensor&, const TensorTensor&) = default;
  AccessPattern dst, data1, data2;
  AluOp op = AluOp::kAdd;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data1", data1, Role::kRead);
    v("data2", data2, Role::kRead);
    v("op", op, Role::kAttr);
  }
};

// dst = (data op0 operand0) op1 operand1; reverseK swaps the operands of opK.
struct TensorScalar {
  static constexpr std::string_view kName = "tensor_scalar";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = kComputeEngines;
  friend bool operator==(const TensorScalar&, const TensorScalar&) = default;
  AccessPattern dst, data;
  AluOp op0 = AluOp::kMultiply;
  ScalarOperand operand0 = 1.0f;
  bool reverse0 = false;
  AluOp op1 = AluOp::kBypass;  // bypass = single op
  ScalarOperand operand1 = 0.0f;
  bool reverse1 = false;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
    v("op0", op0, Role::kAttr);
    v("operand0", operand0, Role::kRead);
    v("reverse0", reverse0, Role::kAttr);
    v("op1", op1, Role::kAttr);
    v("operand1", operand1, Role::kRead);
    v("reverse1", reverse1, Role::kAttr);
  }
};

// dst = data op0 operand0 (operand0 op0 data with reverse0), one arithmetic operator;
// reduce_res[P, 1] gets reduce_op (add, multiply, maximum, minimum) over each partition's
// fp32 results, negated with reduce_res_negate, when present (one reduction per instruction).
struct TensorScalarReduce {
  static constexpr std::string_view kName = "tensor_scalar_reduce";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const TensorScalarReduce&, const TensorScalarReduce&) = default;
  AccessPattern dst, data;
  AluOp op0 = AluOp::kMultiply;
  ScalarOperand operand0 = 1.0f;
  bool reverse0 = false;
  AluOp reduce_op = AluOp::kAdd;
  std::optional<AccessPattern> reduce_res;
  bool reduce_res_negate = false;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
    v("op0", op0, Role::kAttr);
    v("operand0", operand0, Role::kRead);
    v("reverse0", reverse0, Role::kAttr);
    v("reduce_op", reduce_op, Role::kAttr);
    v("reduce_res", reduce_res, Role::kWrite);
    v("reduce_res_negate", reduce_res_negate, Role::kAttr);
  }
};

// A running scan along each partition's free elements: acc = op1(op0(data_i, imm0), acc),
// dst_i = acc. reduce_cmd starts acc at op1's identity (reset_reduce), at imm1
// (load_reduce) or where the lane's accumulator register was left by the previous
// cumulative instruction (reduce); the final acc stays in that register.
struct TensorScalarCumulative {
  static constexpr std::string_view kName = "tensor_scalar_cumulative";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  static constexpr EngineState kState = EngineState::kAccumulator;
  friend bool operator==(const TensorScalarCumulative&, const TensorScalarCumulative&) = default;
  AccessPattern dst, src;
  AluOp op0 = AluOp::kAdd;
  ScalarOperand imm0 = 0.0f;
  AluOp op1 = AluOp::kAdd;
  ScalarOperand imm1 = 0.0f;
  ReduceCmd reduce_cmd = ReduceCmd::kResetReduce;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("src", src, Role::kRead);
    v("op0", op0, Role::kAttr);
    v("imm0", imm0, Role::kRead);
    v("op1", op1, Role::kAttr);
    v("imm1", imm1, Role::kRead);
    v("reduce_cmd", reduce_cmd, Role::kAttr);
  }
};

// dst = (data op0 operand0) op1 operand1, operand0 scalar/[P,1], operand1 a full tile.
struct ScalarTensorTensor {
  static constexpr std::string_view kName = "scalar_tensor_tensor";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines =
      engine_bit(Engine::kVector) | engine_bit(Engine::kGpSimd);
  friend bool operator==(const ScalarTensorTensor&, const ScalarTensorTensor&) = default;
  AccessPattern dst, data;
  AluOp op0 = AluOp::kMultiply;
  ScalarOperand operand0 = 1.0f;
  AluOp op1 = AluOp::kAdd;
  AccessPattern operand1;
  bool reverse0 = false, reverse1 = false;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
    v("op0", op0, Role::kAttr);
    v("operand0", operand0, Role::kRead);
    v("op1", op1, Role::kAttr);
    v("operand1", operand1, Role::kRead);
    v("reverse0", reverse0, Role::kAttr);
    v("reverse1", reverse1, Role::kAttr);
  }
};

// Reduce the innermost `axes` free dims of data with op (add, multiply, max, min, bitwise,
// logical); dst has the remaining dims. negate multiplies the result by -1.
struct TensorReduce {
  static constexpr std::string_view kName = "tensor_reduce";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines =
      engine_bit(Engine::kVector) | engine_bit(Engine::kGpSimd);
  friend bool operator==(const TensorReduce&, const TensorReduce&) = default;
  AccessPattern dst, data;
  AluOp op = AluOp::kAdd;
  std::uint32_t axes = 1;  // number of innermost free dims reduced
  bool negate = false;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
    v("op", op, Role::kAttr);
    v("axes", axes, Role::kAttr);
    v("negate", negate, Role::kAttr);
  }
};

// Reduce across partitions: dst[1, F] = op over p of data[p, F] (add, average, max, or, and).
struct TensorPartitionReduce {
  static constexpr std::string_view kName = "tensor_partition_reduce";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kGpSimd);
  friend bool operator==(const TensorPartitionReduce&, const TensorPartitionReduce&) = default;
  AccessPattern dst, data;
  AluOp op = AluOp::kAdd;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
    v("op", op, Role::kAttr);
  }
};

struct TensorCopy {
  static constexpr std::string_view kName = "tensor_copy";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = kComputeEngines;
  friend bool operator==(const TensorCopy&, const TensorCopy&) = default;
  AccessPattern dst, src;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("src", src, Role::kRead);
  }
};

// dst = src where the predicate is non-zero (zero with reverse_pred), else dst keeps its
// value (dst is read and written). src is a tile, or none for the immediate src_value.
struct TensorCopyPredicated {
  static constexpr std::string_view kName = "tensor_copy_predicated";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const TensorCopyPredicated&, const TensorCopyPredicated&) = default;
  AccessPattern dst;
  std::optional<AccessPattern> src;
  float src_value = 0.0f;
  AccessPattern predicate;
  bool reverse_pred = false;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kReadWrite);
    v("src", src, Role::kRead);
    v("src_value", src_value, Role::kAttr);
    v("predicate", predicate, Role::kRead);
    v("reverse_pred", reverse_pred, Role::kAttr);
  }
};

// r[:,0] = op1(op0(d0[:,0], initial), d1[:,0]); r[:,i] = op1(op0(d0[:,i], r[:,i-1]), d1[:,i]).
struct TensorTensorScan {
  static constexpr std::string_view kName = "tensor_tensor_scan";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const TensorTensorScan&, const TensorTensorScan&) = default;
  AccessPattern dst, data0, data1;
  ScalarOperand initial = 0.0f;
  AluOp op0 = AluOp::kMultiply, op1 = AluOp::kAdd;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data0", data0, Role::kRead);
    v("data1", data1, Role::kRead);
    v("initial", initial, Role::kRead);
    v("op0", op0, Role::kAttr);
    v("op1", op1, Role::kAttr);
  }
};

// Per partition, over <= 512 elements: (count, mean, count*var) of the even-indexed and of
// the odd-indexed elements -> 6 fp32 values.
struct BnStats {
  static constexpr std::string_view kName = "bn_stats";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const BnStats&, const BnStats&) = default;
  AccessPattern dst, data;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
  }
};

// Combine bn_stats triples (count, mean, count*var) into (mean, variance).
struct BnAggr {
  static constexpr std::string_view kName = "bn_aggr";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const BnAggr&, const BnAggr&) = default;
  AccessPattern dst, data;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
  }
};

// dst = predicate != 0 ? on_true : on_false (NKI select_reduce without the reduction).
struct Select {
  static constexpr std::string_view kName = "select";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const Select&, const Select&) = default;
  AccessPattern dst, predicate, on_true;
  ScalarOperand on_false = 0.0f;
  bool reverse_pred = false;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("predicate", predicate, Role::kRead);
    v("on_true", on_true, Role::kRead);
    v("on_false", on_false, Role::kRead);
    v("reverse_pred", reverse_pred, Role::kAttr);
  }
};

// Keep on_true where the flat free index i + range_start satisfies
// (i comp_op0 bound0) && (i comp_op1 bound1), else on_false_value; reduce_res gets the
// per-partition max of the result when present.
struct RangeSelect {
  static constexpr std::string_view kName = "range_select";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const RangeSelect&, const RangeSelect&) = default;
  AccessPattern dst, on_true;
  AluOp comp_op0 = AluOp::kGreaterEqual, comp_op1 = AluOp::kLess;
  ScalarOperand bound0 = 0.0f, bound1 = 0.0f;
  float on_false_value = -3.4028234663852886e38f;
  std::int32_t range_start = 0;
  std::optional<AccessPattern> reduce_res;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("on_true", on_true, Role::kRead);
    v("comp_op0", comp_op0, Role::kAttr);
    v("comp_op1", comp_op1, Role::kAttr);
    v("bound0", bound0, Role::kRead);
    v("bound1", bound1, Role::kRead);
    v("on_false_value", on_false_value, Role::kAttr);
    v("range_start", range_start, Role::kAttr);
    v("reduce_res", reduce_res, Role::kWrite);
  }
};

// Pattern dimensions of iota / affine_select: value = offset + c * channel_multiplier +
// sum_k step_k * i_k over the dst's free index.
struct AffinePattern {
  std::uint8_t num_dims = 1;
  std::array<Dim, kMaxFreeDims> dims{};
  // Like AccessPattern, compares only the dims in use.
  friend bool operator==(const AffinePattern& a, const AffinePattern& b);
};

struct Iota {
  static constexpr std::string_view kName = "iota";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines =
      engine_bit(Engine::kGpSimd) | engine_bit(Engine::kVector);
  friend bool operator==(const Iota&, const Iota&) = default;
  AccessPattern dst;
  AffinePattern pattern;
  std::int32_t offset = 0;
  std::int32_t channel_multiplier = 0;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("pattern", pattern, Role::kAttr);
    v("offset", offset, Role::kAttr);
    v("channel_multiplier", channel_multiplier, Role::kAttr);
  }
};

struct Memset {
  static constexpr std::string_view kName = "memset";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines =
      engine_bit(Engine::kVector) | engine_bit(Engine::kGpSimd);
  friend bool operator==(const Memset&, const Memset&) = default;
  AccessPattern dst;
  float value = 0.0f;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("value", value, Role::kAttr);
  }
};

// The 8 largest values of each partition, descending.
struct Max8 {
  static constexpr std::string_view kName = "max8";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const Max8&, const Max8&) = default;
  AccessPattern dst, src;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("src", src, Role::kRead);
  }
};

// Index of the first occurrence of each of the 8 vals per partition (all ones if absent;
// duplicates map to successive occurrences).
struct NcFindIndex8 {
  static constexpr std::string_view kName = "nc_find_index8";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const NcFindIndex8&, const NcFindIndex8&) = default;
  AccessPattern dst, data, vals;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
    v("vals", vals, Role::kRead);
  }
};

// Per partition, vals processed from the last to the first: the first not yet replaced
// element equal to vals[k] becomes imm in dst (the other elements are copied); dst_idx[k]
// gets its index (all ones if there is none).
struct NcMatchReplace8 {
  static constexpr std::string_view kName = "nc_match_replace8";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const NcMatchReplace8&, const NcMatchReplace8&) = default;
  AccessPattern dst, data, vals;
  float imm = 0.0f;
  std::optional<AccessPattern> dst_idx;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
    v("vals", vals, Role::kRead);
    v("imm", imm, Role::kAttr);
    v("dst_idx", dst_idx, Role::kWrite);
  }
};

// dst = exp(src - max_value), optional running sum per partition into reduce_res (gen4).
struct Exponential {
  static constexpr std::string_view kName = "exponential";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const Exponential&, const Exponential&) = default;
  AccessPattern dst, src;
  ScalarOperand max_value = 0.0f;
  std::optional<AccessPattern> reduce_res;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("src", src, Role::kRead);
    v("max_value", max_value, Role::kRead);
    v("reduce_res", reduce_res, Role::kWrite);
  }
};

struct Reciprocal {
  static constexpr std::string_view kName = "reciprocal";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const Reciprocal&, const Reciprocal&) = default;
  AccessPattern dst, data;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
  }
};

// BF16/FP16 [P, F] -> x4-packed MXFP8 [P, F/4] + E8M0 scales (gen4; Trainium's scale rule).
struct QuantizeMx {
  static constexpr std::string_view kName = "quantize_mx";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kVector);
  friend bool operator==(const QuantizeMx&, const QuantizeMx&) = default;
  AccessPattern dst, src, dst_scale;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("src", src, Role::kRead);
    v("dst_scale", dst_scale, Role::kWrite);
  }
};

// Scalar engine ------------------------------------------------------------------------

// dst = func(data * scale + bias); reduce_res[P,1] gets the per-partition sum when present
// (activation_reduce).
struct Activation {
  static constexpr std::string_view kName = "activation";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kScalar);
  friend bool operator==(const Activation&, const Activation&) = default;
  AccessPattern dst, data;
  ActivationFunc func = ActivationFunc::kCopy;
  ScalarOperand scale = 1.0f;
  ScalarOperand bias = 0.0f;
  std::optional<AccessPattern> reduce_res;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
    v("func", func, Role::kAttr);
    v("scale", scale, Role::kRead);
    v("bias", bias, Role::kRead);
    v("reduce_res", reduce_res, Role::kWrite);
  }
};

// dst = func((data op0 imm0) op1 imm1) (reverseK: immK opK x), gen4 Scalar engine;
// reduce_res[P, 1] gets reduce_op (add, maximum, minimum, abs_max, abs_min) over each
// partition's results when present. relu_param is prelu's slope (NKI's relu_param).
struct Activate2 {
  static constexpr std::string_view kName = "activate2";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kScalar);
  friend bool operator==(const Activate2&, const Activate2&) = default;
  AccessPattern dst, data;
  ActivationFunc func = ActivationFunc::kCopy;
  AluOp op0 = AluOp::kBypass;
  ScalarOperand imm0 = 0.0f;
  bool reverse0 = false;
  AluOp op1 = AluOp::kBypass;
  ScalarOperand imm1 = 0.0f;
  bool reverse1 = false;
  AluOp reduce_op = AluOp::kAdd;
  std::optional<AccessPattern> reduce_res;
  ScalarOperand relu_param = 0.0f;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("data", data, Role::kRead);
    v("func", func, Role::kAttr);
    v("op0", op0, Role::kAttr);
    v("imm0", imm0, Role::kRead);
    v("reverse0", reverse0, Role::kAttr);
    v("op1", op1, Role::kAttr);
    v("imm1", imm1, Role::kRead);
    v("reverse1", reverse1, Role::kAttr);
    v("reduce_op", reduce_op, Role::kAttr);
    v("reduce_res", reduce_res, Role::kWrite);
    v("relu_param", relu_param, Role::kRead);
  }
};

// GpSimd engine ------------------------------------------------------------------------

// dst = cmp_op(affine_value, 0) ? on_true : on_false_value (causal masks).
struct AffineSelect {
  static constexpr std::string_view kName = "affine_select";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kGpSimd);
  friend bool operator==(const AffineSelect&, const AffineSelect&) = default;
  AccessPattern dst, on_true;
  AffinePattern pattern;
  std::int32_t offset = 0;
  std::int32_t channel_multiplier = 0;
  AluOp cmp_op = AluOp::kGreaterEqual;
  float on_false_value = 0.0f;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("on_true", on_true, Role::kRead);
    v("pattern", pattern, Role::kAttr);
    v("offset", offset, Role::kAttr);
    v("channel_multiplier", channel_multiplier, Role::kAttr);
    v("cmp_op", cmp_op, Role::kAttr);
    v("on_false_value", on_false_value, Role::kAttr);
  }
};

// Each GpSimd core gathers within its 16 partitions: every partition of the core reads
// uint16 element offsets from the core's index tile (flattened partition-first) and copies
// num_elem_per_idx consecutive elements of its own src row per offset (docs/simulator-ops.md).
struct LocalGather {
  static constexpr std::string_view kName = "local_gather";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kGpSimd);
  friend bool operator==(const LocalGather&, const LocalGather&) = default;
  AccessPattern dst, src, index;
  std::uint32_t num_elem_per_idx = 1;
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kWrite);
    v("src", src, Role::kRead);
    v("index", index, Role::kRead);
    v("num_elem_per_idx", num_elem_per_idx, Role::kAttr);
  }
};

// Within each 32-partition quadrant, dst partition i takes src partition mask[i]
// (255 = leave dst unchanged).
struct NcStreamShuffle {
  static constexpr std::string_view kName = "nc_stream_shuffle";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines =
      engine_bit(Engine::kVector) | engine_bit(Engine::kGpSimd);
  friend bool operator==(const NcStreamShuffle&, const NcStreamShuffle&) = default;
  AccessPattern dst, src;
  std::array<std::uint8_t, 32> mask{};
  template <class V>
  void fields(V&& v) {
    v("dst", dst, Role::kReadWrite);
    v("src", src, Role::kRead);
    v("mask", mask, Role::kAttr);
  }
};

// A user-registered C++ operator running on GpSimd over SBUF views. `op` names the
// registration; cost_cycles = 0 asks the timing model to estimate it from the elements
// touched over 8 x 512-bit lanes.
struct CustomOp {
  static constexpr std::string_view kName = "custom_op";
  static constexpr OpClass kClass = OpClass::kElementwise;
  static constexpr std::uint8_t kEngines = engine_bit(Engine::kGpSimd);
  friend bool operator==(const CustomOp&, const CustomOp&) = default;
  std::string op;
  std::vector<AccessPattern> outputs, inputs;
  std::vector<float> params;
  std::uint64_t cost_cycles = 0;
  template <class V>
  void fields(V&& v) {
    v("op", op, Role::kAttr);
    v("outputs", outputs, Role::kWrite);
    v("inputs", inputs, Role::kRead);
    v("params", params, Role::kAttr);
    v("cost_cycles", cost_cycles, Role::kAttr);
  }
};

using Operation =
    std::variant<NcMatmul, NcMatmulMx, NcTranspose, TensorTensor, TensorScalar, ScalarTensorTensor,
                 TensorReduce, TensorPartitionReduce, TensorCopy, TensorTensorScan, BnStats, BnAggr,
                 Select, RangeSelect, Iota, Memset, Max8, NcFindIndex8, Exponential, Reciprocal,
                 QuantizeMx, Activation, AffineSelect, LocalGather, NcStreamShuffle, CustomOp,
                 Rand2, RandSetState, RandGetState, DmaCopy, DmaTranspose, DmaIndirect, SemaphoreOp,
                 CoreBarrier, TensorScalarReduce, TensorCopyPredicated, NcMatchReplace8, Activate2,
                 RegSet, RegAdd, RegLoad, RegStore, Branch, TensorScalarCumulative, Rng, SetRngSeed,
                 Dropout, SequenceBounds, NonzeroWithCount, NcNGather, Topk, DmaCompute, SendRecv,
                 Collective, RankId, RingRankId>;

std::string_view op_name(const Operation& op);
// The engine-held state `op` reads or writes (its kState trait; kNone when it declares none).
EngineState engine_state(const Operation& op);
// Whether `op` meets other cores' calls in the order each core makes them (sendrecv,
// collective): a schedule must keep such calls in program order, and a core waiting at one
// waits for its peers.
bool meets_other_cores(const Operation& op);
// Engines allowed to execute `op` (its kEngines bit set).
std::uint8_t op_engines(const Operation& op);
// A default-constructed operation for a mnemonic (kName), or nullopt if there is none.
std::optional<Operation> make_operation(std::string_view mnemonic);
namespace detail {
template <std::size_t... I>
constexpr std::array<OpClass, sizeof...(I)> op_class_table(std::index_sequence<I...>) {
  return {std::variant_alternative_t<I, Operation>::kClass...};
}
inline constexpr auto kOpClasses =
    op_class_table(std::make_index_sequence<std::variant_size_v<Operation>>{});
}  // namespace detail

// What kind of work `op` is (its kClass). A table lookup: hot paths ask it per instruction.
inline OpClass op_class(const Operation& op) {
  return detail::kOpClasses[op.index()];
}
// True for the operations the DMA engines run (OpClass::kDmaTransfer).
inline bool is_dma_transfer(const Operation& op) {
  return op_class(op) == OpClass::kDmaTransfer;
}
// The two sides of a DMA transfer, or nullopt for any other operation.
struct DmaSides {
  const AccessPattern* dst = nullptr;
  const AccessPattern* src = nullptr;
};
std::optional<DmaSides> dma_sides(const Operation& op);

}  // namespace trnsim::isa
