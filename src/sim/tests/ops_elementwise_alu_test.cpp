// Tests of the elementwise ALU operations (tensor_tensor, tensor_scalar,
// scalar_tensor_tensor, tensor_copy, tensor_scalar_reduce, tensor_copy_predicated) against the
// reference ALU of ops_test_util.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/tests/ops_test_util.h"

namespace trnsim::sim {
namespace {

using namespace ops_testing;

const std::vector<AluOp> kArithmeticOps = {
    AluOp::kAdd,        AluOp::kSubtract,  AluOp::kMultiply,     AluOp::kDivide, AluOp::kMaximum,
    AluOp::kMinimum,    AluOp::kAbsMax,    AluOp::kAbsMin,       AluOp::kPower,  AluOp::kEqual,
    AluOp::kNotEqual,   AluOp::kGreater,   AluOp::kGreaterEqual, AluOp::kLess,   AluOp::kLessEqual,
    AluOp::kLogicalAnd, AluOp::kLogicalOr, AluOp::kLogicalXor,   AluOp::kBypass, AluOp::kMod,
    AluOp::kFmod};

// ---------------------------------------------------------------------------------------

struct DTypeCase {
  DType in1, in2, out;
};

TEST(TensorTensor, EveryArithmeticOperatorAcrossDtypes) {
  const std::vector<DTypeCase> cases = {{DType::kFloat32, DType::kFloat32, DType::kFloat32},
                                        {DType::kBFloat16, DType::kFloat32, DType::kBFloat16},
                                        {DType::kFloat16, DType::kBFloat16, DType::kFloat32},
                                        {DType::kFloat8E4M3, DType::kFloat32, DType::kFloat16},
                                        {DType::kFloat32, DType::kFloat32, DType::kInt32}};
  constexpr std::uint32_t P = 5, F = 7;
  for (const auto& c : cases) {
    for (AluOp op : kArithmeticOps) {
      HostIO io;
      const auto a_ap = dense(c.in1, 3, P, F, 0);
      const auto b_ap = dense(c.in2, 3, P, F, 256);
      const auto d_ap = dense(c.out, 10, P, F, 512);
      io.write(a_ap, test_values(P * F, 1));
      io.write(b_ap, test_values(P * F, 2));
      const auto a = io.read(a_ap), b = io.read(b_ap);
      ASSERT_TRUE(run_op(isa::TensorTensor{d_ap, a_ap, b_ap, op}, io));
      std::vector<float> expected(P * F);
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = ref_alu(op, a[i], b[i]);
      expect_codes(c.out, io.read_raw(d_ap), expected, std::string(isa::alu_op_name(op)).c_str());
    }
  }
}

TEST(TensorTensor, IeeeEdgeCases) {
  HostIO io;
  const std::vector<float> a = {1.0f, -1.0f, 0.0f, -0.0f, 0.0f, kNaN, 2.0f, -0.0f};
  const std::vector<float> b = {0.0f, 0.0f, 0.0f, 0.0f, -0.0f, 1.0f, kNaN, -0.0f};
  const auto a_ap = dense(DType::kFloat32, 0, 1, 8, 0), b_ap = dense(DType::kFloat32, 0, 1, 8, 64);
  const auto d_ap = dense(DType::kFloat32, 0, 1, 8, 128);
  io.write(a_ap, a);
  io.write(b_ap, b);
  run_op(isa::TensorTensor{d_ap, a_ap, b_ap, AluOp::kDivide}, io);
  auto d = io.read(d_ap);
  EXPECT_EQ(d[0], kInf);
  EXPECT_EQ(d[1], -kInf);
  EXPECT_TRUE(std::isnan(d[2]));
  run_op(isa::TensorTensor{d_ap, a_ap, b_ap, AluOp::kMaximum}, io);
  d = io.read(d_ap);
  EXPECT_FALSE(std::signbit(d[3]));  // max(-0, +0) = +0
  EXPECT_FALSE(std::signbit(d[4]));
  EXPECT_TRUE(std::isnan(d[5]));
  EXPECT_TRUE(std::isnan(d[6]));
  EXPECT_TRUE(std::signbit(d[7]));
  run_op(isa::TensorTensor{d_ap, a_ap, b_ap, AluOp::kMinimum}, io);
  d = io.read(d_ap);
  EXPECT_TRUE(std::signbit(d[3]));  // min(-0, +0) = -0
  run_op(isa::TensorTensor{d_ap, a_ap, b_ap, AluOp::kNotEqual}, io);
  d = io.read(d_ap);
  EXPECT_EQ(d[5], 1.0f);  // NaN != x
  EXPECT_EQ(d[3], 0.0f);  // -0 == +0
}

// mod takes the divisor's sign (NumPy's float32 mod: the one correction rounds), fmod the
// dividend's (exact); both are NaN for a zero divisor or an infinite dividend.
TEST(TensorTensor, ModAndFmodSignsAndSpecials) {
  struct Case {
    float a, b, mod, fmod;
  };
  const std::vector<Case> cases = {
      {5.5f, 2.0f, 1.5f, 1.5f},     {-5.5f, 2.0f, 0.5f, -1.5f}, {5.5f, -2.0f, -0.5f, 1.5f},
      {-5.5f, -2.0f, -1.5f, -1.5f}, {4.0f, 2.0f, 0.0f, 0.0f},   {-4.0f, 2.0f, 0.0f, -0.0f},
      {4.0f, -2.0f, -0.0f, 0.0f},   {-0.0f, 1.0f, 0.0f, -0.0f}, {-7.0f, 2.5f, 0.5f, -2.0f},
      {3e38f, 7.0f, 1.0f, 1.0f},    {1e30f, 3.0f, 0.0f, 0.0f},  {-1e-30f, 1.0f, 1.0f, -1e-30f},
      {1.0f, kInf, 1.0f, 1.0f},     {-1.0f, kInf, kInf, -1.0f}, {1e-45f, -1e-45f, -0.0f, 0.0f},
      {1.0f, 0.0f, kNaN, kNaN},     {kInf, 1.0f, kNaN, kNaN},   {kNaN, 1.0f, kNaN, kNaN},
      {1.0f, kNaN, kNaN, kNaN},     {-0.0f, -0.0f, kNaN, kNaN},
  };
  const auto n = static_cast<std::uint32_t>(cases.size());
  HostIO io;
  const auto a_ap = dense(DType::kFloat32, 0, 1, n, 0), b_ap = dense(DType::kFloat32, 0, 1, n, 256);
  const auto d_ap = dense(DType::kFloat32, 0, 1, n, 512);
  std::vector<float> a, b, want_mod, want_fmod;
  for (const Case& c : cases) {
    a.push_back(c.a);
    b.push_back(c.b);
    want_mod.push_back(c.mod);
    want_fmod.push_back(c.fmod);
  }
  io.write(a_ap, a);
  io.write(b_ap, b);
  for (const auto& [op, want] : {std::pair{AluOp::kMod, want_mod}, {AluOp::kFmod, want_fmod}}) {
    ASSERT_TRUE(run_op(isa::TensorTensor{d_ap, a_ap, b_ap, op}, io));
    const auto got = io.read(d_ap);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::string what = std::string(isa::alu_op_name(op)) + "(" + std::to_string(a[i]) +
                               ", " + std::to_string(b[i]) + ")";
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << what;
      } else {
        EXPECT_EQ(got[i], want[i]) << what;
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << what << " sign";
      }
    }
  }
}

// x - mod(x, 1), x - mod(x, -1) and x - fmod(x, 1) (nl.floor, nl.ceil, nl.trunc) are the
// integral values exactly for finite x, large and tiny ones included; a zero result is +0
// except floor(-0) = -0, and +-inf gives NaN (inf - NaN).
TEST(ScalarTensorTensor, FloorCeilTruncIdentitiesAreExact) {
  std::vector<float> x = {3.7f,       -3.7f,       3.2f,        -3.2f,  0.5f,   -0.5f,
                          2.0f,       -2.0f,       -1e-30f,     1e-30f, -0.0f,  0.0f,
                          8388607.5f, -8388607.5f, 16777215.0f, -3e38f, 1e-45f, -1e-45f};
  auto rng = test_values(60, 41, false);
  for (float& v : rng) v *= 1000.0f;
  x.insert(x.end(), rng.begin(), rng.end());
  const auto n = static_cast<std::uint32_t>(x.size());
  struct Case {
    AluOp op;
    float divisor;
    double (*ref)(double);
    const char* name;
  };
  const std::vector<Case> cases = {
      {AluOp::kMod, 1.0f, [](double v) { return std::floor(v); }, "floor"},
      {AluOp::kMod, -1.0f, [](double v) { return std::ceil(v); }, "ceil"},
      {AluOp::kFmod, 1.0f, [](double v) { return std::trunc(v); }, "trunc"}};
  for (const Case& c : cases) {
    HostIO io;
    const auto x_ap = dense(DType::kFloat32, 0, 1, n, 0);
    const auto d_ap = dense(DType::kFloat32, 0, 1, n, 1024);
    io.write(x_ap, x);
    isa::ScalarTensorTensor op;
    op.dst = d_ap;
    op.data = x_ap;
    op.op0 = c.op;
    op.operand0 = c.divisor;
    op.op1 = AluOp::kSubtract;
    op.operand1 = x_ap;
    op.reverse1 = true;
    ASSERT_TRUE(run_op(op, io));
    const auto got = io.read(d_ap);
    for (std::uint32_t i = 0; i < n; ++i)
      EXPECT_EQ(got[i], static_cast<float>(c.ref(x[i]))) << c.name << "(" << x[i] << ")";
    const bool is_floor = c.divisor > 0 && c.op == AluOp::kMod;
    EXPECT_EQ(std::signbit(got[10]), is_floor) << c.name << "(-0)";  // -0 - (+0) is -0
    if (!is_floor) {
      EXPECT_FALSE(std::signbit(got[5])) << c.name << "(-0.5)";  // NumPy's is -0
    }
  }
  HostIO io;
  const auto x_ap = dense(DType::kFloat32, 0, 1, 2, 0);
  const auto d_ap = dense(DType::kFloat32, 0, 1, 2, 64);
  io.write(x_ap, {kInf, -kInf});
  isa::ScalarTensorTensor op{d_ap, x_ap, AluOp::kMod, 1.0f, AluOp::kSubtract, x_ap, false, true};
  ASSERT_TRUE(run_op(op, io));
  EXPECT_TRUE(std::isnan(io.read(d_ap)[0]));
  EXPECT_TRUE(std::isnan(io.read(d_ap)[1]));
}

TEST(TensorTensor, BitwiseOnIntegerWords) {
  HostIO io;
  const std::vector<std::int64_t> a = {-1, 0x7FFFFFFF, -2147483648LL, 0x12345678, -16, 5, 1, -1};
  const std::vector<std::int64_t> b = {0x0F0F0F0F, 3, 1, 0xFF, 2, 32, 31, 40};
  const auto a_ap = dense(DType::kInt32, 2, 1, 8, 0), b_ap = dense(DType::kInt32, 2, 1, 8, 64);
  const auto d_ap = dense(DType::kInt32, 2, 1, 8, 128);
  io.write_words(a_ap, a);
  io.write_words(b_ap, b);
  auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  struct Case {
    AluOp op;
    std::uint32_t (*ref)(std::uint32_t, std::uint32_t);
  };
  const std::vector<Case> cases = {
      {AluOp::kBitwiseAnd, [](std::uint32_t x, std::uint32_t y) { return x & y; }},
      {AluOp::kBitwiseOr, [](std::uint32_t x, std::uint32_t y) { return x | y; }},
      {AluOp::kBitwiseXor, [](std::uint32_t x, std::uint32_t y) { return x ^ y; }},
      {AluOp::kLeftShift, [](std::uint32_t x, std::uint32_t y) { return y >= 32 ? 0u : x << y; }},
      {AluOp::kRightShift, [](std::uint32_t x, std::uint32_t y) { return y >= 32 ? 0u : x >> y; }},
  };
  for (const auto& c : cases) {
    ASSERT_TRUE(run_op(isa::TensorTensor{d_ap, a_ap, b_ap, c.op}, io));
    const auto got = io.read_raw(d_ap);
    for (std::size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(got[i], c.ref(u32(a[i]), u32(b[i]))) << isa::alu_op_name(c.op) << " " << i;
  }
  // Logical right shift of int16 shifts zeros in above bit 15.
  const auto h_ap = dense(DType::kInt16, 0, 1, 2, 0), s_ap = dense(DType::kInt16, 0, 1, 2, 32);
  const auto hd_ap = dense(DType::kInt16, 0, 1, 2, 64);
  io.write_words(h_ap, {-2, -32768});
  io.write_words(s_ap, {1, 15});
  run_op(isa::TensorTensor{hd_ap, h_ap, s_ap, AluOp::kRightShift}, io);
  EXPECT_EQ(io.read_raw(hd_ap), (std::vector<std::uint32_t>{0x7FFF, 0x1}));
}

TEST(TensorTensor, StridedAndBroadcastOperands) {
  HostIO io;
  constexpr std::uint32_t P = 3;
  // data1: [P, 2, 3] walking every other element of a row; data2: [P, 2, 3] broadcasting a
  // 3-element row over the outer dim (step 0); dst: dense.
  const auto a_ap = on_chip(DType::kFloat32, 4, P, 0, {{6, 2}, {2, 3}});
  const auto b_ap = on_chip(DType::kBFloat16, 4, P, 256, {{0, 2}, {1, 3}});
  const auto d_ap = on_chip(DType::kFloat32, 4, P, 512, {{3, 2}, {1, 3}});
  io.write(dense(DType::kFloat32, 4, P, 12, 0), test_values(P * 12, 7, false));
  io.write(dense(DType::kBFloat16, 4, P, 3, 256), test_values(P * 3, 8, false));
  const auto row_a = io.read(dense(DType::kFloat32, 4, P, 12, 0));
  const auto row_b = io.read(dense(DType::kBFloat16, 4, P, 3, 256));
  ASSERT_TRUE(run_op(isa::TensorTensor{d_ap, a_ap, b_ap, AluOp::kSubtract}, io));
  std::vector<float> expected;
  for (std::uint32_t p = 0; p < P; ++p)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        expected.push_back(row_a[p * 12 + 6 * i + 2 * j] - row_b[p * 3 + j]);
  expect_codes(DType::kFloat32, io.read_raw(d_ap), expected, "strided subtract");
}

TEST(TensorScalar, TwoOperatorsWithReverseFlagsAndTensorOperands) {
  constexpr std::uint32_t P = 6, F = 9;
  for (int reverse_bits = 0; reverse_bits < 4; ++reverse_bits) {
    HostIO io(isa::Engine::kScalar);
    const auto data_ap = dense(DType::kBFloat16, 1, P, F, 0);
    const auto col_ap = dense(DType::kFloat32, 1, P, 1, 1024);
    const auto dst_ap = dense(DType::kFloat32, 1, P, F, 2048);
    io.write(data_ap, test_values(P * F, 11));
    io.write(col_ap, {2.0f, -0.5f, 0.0f, 3.0f, kInf, -7.0f});
    const auto data = io.read(data_ap), col = io.read(col_ap);
    isa::TensorScalar op;
    op.dst = dst_ap;
    op.data = data_ap;
    op.op0 = AluOp::kSubtract;
    op.operand0 = col_ap;
    op.reverse0 = reverse_bits & 1;
    op.op1 = AluOp::kDivide;
    op.operand1 = 3.0f;
    op.reverse1 = (reverse_bits & 2) != 0;
    ASSERT_TRUE(run_op(op, io));
    std::vector<float> expected;
    for (std::uint32_t p = 0; p < P; ++p)
      for (std::uint32_t i = 0; i < F; ++i) {
        const float x = data[p * F + i];
        const float t = op.reverse0 ? ref_alu(AluOp::kSubtract, col[p], x)
                                    : ref_alu(AluOp::kSubtract, x, col[p]);
        expected.push_back(op.reverse1 ? ref_alu(AluOp::kDivide, 3.0f, t)
                                       : ref_alu(AluOp::kDivide, t, 3.0f));
      }
    expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "tensor_scalar");
  }
}

TEST(TensorScalar, SingleOperatorLeavesSecondStageAlone) {
  HostIO io;
  const auto data_ap = dense(DType::kFloat32, 0, 2, 3);
  const auto dst_ap = dense(DType::kFloat16, 0, 2, 3, 64);
  io.write(data_ap, {1, 2, 3, 4, 5, 6});
  isa::TensorScalar op{dst_ap, data_ap, AluOp::kMultiply, 0.1f, false, AluOp::kBypass,
                       99.0f,  false};
  run_op(op, io);
  expect_codes(DType::kFloat16, io.read_raw(dst_ap),
               {0.1f, 0.2f, 1 * 0.1f * 3, 0.4f, 0.5f, 6 * 0.1f}, "multiply only");
}

TEST(TensorScalar, BitwiseWithImmediateAndTensorOperand) {
  HostIO io;
  const auto data_ap = dense(DType::kInt32, 0, 2, 3);
  const auto mask_ap = dense(DType::kUInt32, 0, 2, 1, 64);
  const auto dst_ap = dense(DType::kInt32, 0, 2, 3, 128);
  io.write_words(data_ap, {-1, 0x12345678, -256, 7, 8, 9});
  io.write_words(mask_ap, {0xFFFF0000LL, 0x0000FFFFLL});
  isa::TensorScalar op{dst_ap, data_ap, AluOp::kBitwiseAnd, mask_ap, false, AluOp::kRightShift,
                       4.0f,   false};
  run_op(op, io);
  const std::vector<std::uint32_t> expected = {0xFFFF0000u >> 4, 0x12340000u >> 4, 0xFFFF0000u >> 4,
                                               7u >> 4,          8u >> 4,          9u >> 4};
  EXPECT_EQ(io.read_raw(dst_ap), expected);
}

// invert flips every bit of the word and ignores its operand (NKI: XOR with all ones); the
// dst keeps the low bits, so in the data's own dtype it is NumPy's ~x.
TEST(TensorScalar, InvertFlipsEveryBitIgnoringItsOperand) {
  struct Case {
    DType dtype;
    std::vector<std::int64_t> in;
    std::vector<std::uint32_t> want;  // the stored words
  };
  const std::vector<Case> cases = {
      {DType::kInt32,
       {0, -1, 5, -2147483648LL, 0x7FFFFFFF},
       {0xFFFFFFFF, 0, 0xFFFFFFFA, 0x7FFFFFFF, 0x80000000}},
      {DType::kUInt32, {0, 0xFFFFFFFFLL, 0x12345678}, {0xFFFFFFFF, 0, 0xEDCBA987}},
      {DType::kInt8, {5, -128, 127, -1}, {0xFA, 0x7F, 0x80, 0x00}},
      {DType::kUInt8, {200, 0, 255}, {55, 255, 0}},
      {DType::kUInt16, {0x00FF, 0xFFFF}, {0xFF00, 0}},
  };
  for (const Case& c : cases) {
    HostIO io;
    const auto n = static_cast<std::uint32_t>(c.in.size());
    const auto data_ap = dense(c.dtype, 0, 1, n);
    const auto dst_ap = dense(c.dtype, 0, 1, n, 64);
    io.write_words(data_ap, c.in);
    for (float operand : {0.0f, 12345.0f}) {
      isa::TensorScalar op{dst_ap, data_ap,        AluOp::kInvert, operand,
                           false,  AluOp::kBypass, 0.0f,           false};
      ASSERT_TRUE(run_op(op, io));
      EXPECT_EQ(io.read_raw(dst_ap), c.want) << numerics::name(c.dtype);
    }
    const auto other_ap = dense(c.dtype, 0, 1, n, 128);
    io.write_words(other_ap, std::vector<std::int64_t>(n, 3));
    ASSERT_TRUE(run_op(isa::TensorTensor{dst_ap, data_ap, other_ap, AluOp::kInvert}, io));
    EXPECT_EQ(io.read_raw(dst_ap), c.want) << numerics::name(c.dtype) << " tensor_tensor";
  }
}

TEST(ScalarTensorTensor, ReverseFlags) {
  constexpr std::uint32_t P = 4, F = 5;
  for (int bits = 0; bits < 4; ++bits) {
    HostIO io;
    const auto data_ap = dense(DType::kFloat32, 0, P, F, 0);
    const auto other_ap = dense(DType::kBFloat16, 0, P, F, 256);
    const auto dst_ap = dense(DType::kFloat32, 0, P, F, 512);
    io.write(data_ap, test_values(P * F, 21));
    io.write(other_ap, test_values(P * F, 22));
    const auto data = io.read(data_ap), other = io.read(other_ap);
    isa::ScalarTensorTensor op;
    op.dst = dst_ap;
    op.data = data_ap;
    op.op0 = AluOp::kDivide;
    op.operand0 = 2.5f;
    op.op1 = AluOp::kSubtract;
    op.operand1 = other_ap;
    op.reverse0 = bits & 1;
    op.reverse1 = (bits & 2) != 0;
    run_op(op, io);
    std::vector<float> expected;
    for (std::size_t i = 0; i < data.size(); ++i) {
      const float t = op.reverse0 ? ref_alu(AluOp::kDivide, 2.5f, data[i])
                                  : ref_alu(AluOp::kDivide, data[i], 2.5f);
      expected.push_back(op.reverse1 ? ref_alu(AluOp::kSubtract, other[i], t)
                                     : ref_alu(AluOp::kSubtract, t, other[i]));
    }
    expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "scalar_tensor_tensor");
  }
}

TEST(TensorCopy, SameDtypeIsBitExactAndCastRounds) {
  HostIO io;
  const auto src_ap = dense(DType::kFloat32, 0, 2, 3);
  const auto dst_ap = dense(DType::kFloat32, 64, 2, 3, 100 * 4);
  // A signalling-NaN payload and -0 survive a same-type copy only if it moves words.
  io.write_words(src_ap, {0x7F800001, 0x80000000, 0x3F800001, 0xFFC12345, 1, 0x7F7FFFFF});
  ASSERT_TRUE(run_op(isa::TensorCopy{dst_ap, src_ap}, io));
  EXPECT_EQ(io.read_raw(dst_ap), io.read_raw(src_ap));

  const auto bf_ap = dense(DType::kBFloat16, 3, 2, 3, 2048);
  run_op(isa::TensorCopy{bf_ap, src_ap}, io);
  const auto src = io.read(src_ap);
  expect_codes(DType::kBFloat16, io.read_raw(bf_ap), src, "fp32 -> bf16");
}

// ---------------------------------------------------------------------------------------

// dst = data op0 operand0, and reduce_res = the left-to-right fold of the fp32 results (not of
// the bf16 dst), negated on request; partitions 4..6, a [P, 1] column or an immediate.
TEST(TensorScalarReduce, EveryReductionOverTheFp32Results) {
  constexpr std::uint32_t P = 3, F = 24;
  for (AluOp reduce : {AluOp::kAdd, AluOp::kMultiply, AluOp::kMaximum, AluOp::kMinimum}) {
    for (AluOp op0 : {AluOp::kSubtract, AluOp::kMultiply, AluOp::kMaximum, AluOp::kDivide}) {
      for (int variant = 0; variant < 4; ++variant) {
        const bool reverse0 = (variant & 1) != 0, negate = (variant & 2) != 0;
        HostIO io;
        const auto data_ap = dense(DType::kFloat32, 4, P, F);
        const auto column_ap = dense(DType::kFloat32, 4, P, 1, 256);
        const auto dst_ap = dense(DType::kBFloat16, 4, P, F, 512);
        const auto res_ap = dense(DType::kFloat32, 4, P, 1, 1024);
        io.write(data_ap, test_values(P * F, 90 + variant, reduce == AluOp::kAdd));
        io.write(column_ap, {1.5f, -0.375f, 3.0f});
        const auto data = io.read(data_ap);
        const isa::ScalarOperand operand0 =
            variant < 2 ? isa::ScalarOperand(column_ap) : isa::ScalarOperand(0.625f);
        ASSERT_TRUE(run_op(isa::TensorScalarReduce{dst_ap, data_ap, op0, operand0, reverse0, reduce,
                                                   res_ap, negate},
                           io));
        const std::vector<float> column = {1.5f, -0.375f, 3.0f};
        std::vector<float> results(P * F), reduced(P);
        for (std::uint32_t p = 0; p < P; ++p) {
          const float s = variant < 2 ? column[p] : 0.625f;
          for (std::uint32_t i = 0; i < F; ++i) {
            const float x = data[p * F + i];
            const float r = reverse0 ? ref_alu(op0, s, x) : ref_alu(op0, x, s);
            results[p * F + i] = r;
            reduced[p] = i == 0 ? r : ref_alu(reduce, reduced[p], r);
          }
          if (negate) reduced[p] = -reduced[p];
        }
        const std::string what =
            std::string(isa::alu_op_name(op0)) + " then " + std::string(isa::alu_op_name(reduce));
        expect_codes(DType::kBFloat16, io.read_raw(dst_ap), results, what.c_str());
        expect_codes(DType::kFloat32, io.read_raw(res_ap), reduced, what.c_str());
      }
    }
  }
}

TEST(TensorScalarReduce, WithoutReduceResOnlyDstIsWritten) {
  HostIO io;
  const auto data_ap = dense(DType::kFloat32, 0, 2, 4);
  const auto dst_ap = dense(DType::kFloat32, 0, 2, 4, 64);
  io.write(data_ap, {1, 2, 3, 4, -1, -2, -3, kNaN});
  ASSERT_TRUE(run_op(isa::TensorScalarReduce{dst_ap, data_ap, AluOp::kAdd, 1.0f, false,
                                             AluOp::kMaximum, std::nullopt, false},
                     io));
  const auto got = io.read(dst_ap);
  EXPECT_EQ(got[0], 2.0f);
  EXPECT_EQ(got[6], -2.0f);
  EXPECT_TRUE(std::isnan(got[7]));
  EXPECT_EQ(io.byte_at(Memory::kSbuf, 0, 96), kSentinel);  // nothing after dst
}

// Words move unchanged where the predicate (any non-zero word, or zero with reverse_pred)
// selects src; elsewhere dst keeps its words: int32 values above 2^24, bf16 NaN payloads.
TEST(TensorCopyPredicated, SelectedWordsMoveBitExactly) {
  constexpr std::uint32_t P = 2, F = 6;
  const std::vector<std::int64_t> pred = {0, 1, 255, 0, 2, 0, 0, 0, 1, 1, 0, 7};
  for (bool reverse : {false, true}) {
    HostIO io;
    const auto pred_ap = dense(DType::kUInt8, 32, P, F);
    const auto src_ap = dense(DType::kInt32, 32, P, F, 64);
    const auto dst_ap = dense(DType::kInt32, 32, P, F, 128);
    io.write_words(pred_ap, pred);
    std::vector<std::int64_t> src(P * F), old(P * F);
    for (std::size_t i = 0; i < src.size(); ++i) {
      src[i] = 16777217 + static_cast<std::int64_t>(i);  // not representable in fp32
      old[i] = -2147483647 + static_cast<std::int64_t>(i);
    }
    io.write_words(src_ap, src);
    io.write_words(dst_ap, old);
    ASSERT_TRUE(run_op(isa::TensorCopyPredicated{dst_ap, src_ap, 0.0f, pred_ap, reverse}, io));
    const auto got = io.read_raw(dst_ap);
    for (std::size_t i = 0; i < got.size(); ++i) {
      const bool take = (pred[i] != 0) != reverse;
      EXPECT_EQ(got[i], static_cast<std::uint32_t>(take ? src[i] : old[i])) << i;
    }
  }
  HostIO io;
  const auto pred_ap = dense(DType::kUInt32, 0, 1, 3);
  const auto src_ap = dense(DType::kBFloat16, 0, 1, 3, 64);
  const auto dst_ap = dense(DType::kBFloat16, 0, 1, 3, 128);
  io.write_words(pred_ap, {0x80000000LL, 0, 1});
  io.write_words(src_ap, {0x7F81, 0xFFC3, 0x8000});  // NaN payloads and -0
  io.write_words(dst_ap, {0x3F80, 0x7FA0, 0x4000});
  ASSERT_TRUE(run_op(isa::TensorCopyPredicated{dst_ap, src_ap, 0.0f, pred_ap, false}, io));
  EXPECT_EQ(io.read_raw(dst_ap), (std::vector<std::uint32_t>{0x7F81, 0x7FA0, 0x8000}));
}

// An immediate is encoded once into the dst dtype; a strided dst keeps its other elements.
TEST(TensorCopyPredicated, ImmediateIntoIntegerAndStridedDst) {
  HostIO io;
  const auto pred_ap = dense(DType::kUInt16, 0, 2, 4);
  const auto dst_ap = on_chip(DType::kInt8, 0, 2, 64, {{2, 4}});  // every other byte
  io.write_words(pred_ap, {1, 0, 0, 1, 0, 0, 0, 0});
  io.write_words(dst_ap, {10, 11, 12, 13, 20, 21, 22, 23});
  ASSERT_TRUE(run_op(isa::TensorCopyPredicated{dst_ap, std::nullopt, -3.0f, pred_ap, false}, io));
  const auto got = io.read(dst_ap);
  EXPECT_EQ(got, (std::vector<float>{-3, 11, 12, -3, 20, 21, 22, 23}));
  EXPECT_EQ(io.byte_at(Memory::kSbuf, 0, 65), kSentinel);  // between the strided elements
  // reverse_pred: the zeros select; a float dst takes the immediate's fp32 -> bf16 rounding.
  const auto fdst = dense(DType::kBFloat16, 0, 2, 4, 256);
  io.write(fdst, {9, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_TRUE(
      run_op(isa::TensorCopyPredicated{fdst, std::nullopt, 1.00390625f, pred_ap, true}, io));
  // 1 + 2^-8 is a tie between bf16 1 and 1 + 2^-7: to even (1).
  EXPECT_EQ(io.read(fdst), (std::vector<float>{9, 1, 1, 4, 1, 1, 1, 1}));
}

}  // namespace
}  // namespace trnsim::sim
