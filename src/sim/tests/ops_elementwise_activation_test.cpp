// Tests of exponential, reciprocal, activation and activate2 against reference functions
// written independently here.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/tests/ops_test_util.h"

namespace trnsim::sim {
namespace {

using namespace ops_testing;

TEST(Exponential, SubtractsMaxAndSums) {
  HostIO io;
  constexpr std::uint32_t P = 2, F = 6;
  const auto src_ap = dense(DType::kBFloat16, 0, P, F);
  const auto max_ap = dense(DType::kFloat32, 0, P, 1, 64);
  const auto dst_ap = dense(DType::kFloat32, 0, P, F, 128);
  const auto sum_ap = dense(DType::kFloat32, 0, P, 1, 256);
  io.write(src_ap, {0, 1, 2, 3, -kInf, 88, -1, -2, -3, 4, 5, 6});
  io.write(max_ap, {3, 6});
  ASSERT_TRUE(run_op(isa::Exponential{dst_ap, src_ap, max_ap, sum_ap}, io));
  const auto src = io.read(src_ap);
  std::vector<float> expected;
  std::vector<float> sums(P, 0.0f);
  for (std::uint32_t p = 0; p < P; ++p)
    for (std::uint32_t i = 0; i < F; ++i) {
      const float e =
          static_cast<float>(std::exp(static_cast<double>(src[p * F + i] - (p ? 6.0f : 3.0f))));
      expected.push_back(e);
      sums[p] = i == 0 ? e : sums[p] + e;
    }
  expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "exp");
  expect_codes(DType::kFloat32, io.read_raw(sum_ap), sums, "exp sum");
}

TEST(Reciprocal, CorrectlyRoundedWithSpecials) {
  HostIO io;
  const auto src_ap = dense(DType::kFloat32, 0, 1, 6);
  const auto dst_ap = dense(DType::kFloat32, 0, 1, 6, 64);
  io.write(src_ap, {0.0f, -0.0f, kInf, 3.0f, 1e-40f, kNaN});
  run_op(isa::Reciprocal{dst_ap, src_ap}, io);
  const auto got = io.read(dst_ap);
  EXPECT_EQ(got[0], kInf);
  EXPECT_EQ(got[1], -kInf);
  EXPECT_EQ(got[2], 0.0f);
  EXPECT_EQ(got[3], static_cast<float>(1.0 / 3.0));
  EXPECT_EQ(got[4], kInf);  // 1 / 1e-40 overflows fp32
  EXPECT_TRUE(std::isnan(got[5]));
}

// Reference activation functions, written with other identities where one exists.
double ref_activation(ActivationFunc f, double x) {
  const double pi = std::acos(-1.0);
  switch (f) {
    case ActivationFunc::kCopy:
      return x;
    case ActivationFunc::kExp:
      return std::exp(x);
    case ActivationFunc::kLog:
      return std::log(x);
    case ActivationFunc::kTanh:
      return std::tanh(x);
    case ActivationFunc::kSigmoid:
      return x < 0 ? std::exp(x) / (1.0 + std::exp(x)) : 1.0 / (1.0 + std::exp(-x));
    case ActivationFunc::kRelu:
      return std::isnan(x) ? x : std::max(x, 0.0);
    case ActivationFunc::kGelu:
      return x * 0.5 * std::erfc(-x * 0.70710678118654752440);
    case ActivationFunc::kGeluApprxTanh:
      return x / (1.0 + std::exp(-2.0 * std::sqrt(2.0 / pi) * (x + 0.044715 * std::pow(x, 3))));
    case ActivationFunc::kGeluApprxSigmoid:
      return x / (1.0 + std::exp(-1.702 * x));
    case ActivationFunc::kSilu:
      return x / (1.0 + std::exp(-x));
    case ActivationFunc::kSoftplus:
      return x > 30 ? x + std::exp(-x) : std::log1p(std::exp(x));
    case ActivationFunc::kMish: {
      const double sp = x > 30 ? x + std::exp(-x) : std::log1p(std::exp(x));
      return x * std::tanh(sp);
    }
    case ActivationFunc::kErf:
      return 1.0 - std::erfc(x);
    case ActivationFunc::kSqrt:
      return std::sqrt(x);
    case ActivationFunc::kRsqrt:
      return 1.0 / std::sqrt(x);
    case ActivationFunc::kSquare:
      return x * x;
    case ActivationFunc::kReciprocal:
      return 1.0 / x;
    case ActivationFunc::kSin:
      return std::fabs(x) <= 3.14159274 ? std::sin(x) : std::nan("");
    case ActivationFunc::kCos:
      return std::cos(x);
    case ActivationFunc::kArctan:
      return std::fabs(x) <= 1.57079637 ? std::atan(x) : std::nan("");
    case ActivationFunc::kAbs:
      return std::fabs(x);
    case ActivationFunc::kSign:
      return x > 0 ? 1.0 : (x < 0 ? -1.0 : x);
    case ActivationFunc::kPrelu:  // activation's slope is 0
      return x > 0 ? x : 0.0 * x;
    case ActivationFunc::kGeluDx: {
      if (std::isinf(x)) return x > 0 ? 1.0 : 0.0;
      const double cdf =
          x < 0 ? 0.5 * std::erfc(-x / std::sqrt(2.0)) : 1.0 - 0.5 * std::erfc(x / std::sqrt(2.0));
      return cdf + x * std::exp(-x * x / 2) / std::sqrt(2 * pi);
    }
    case ActivationFunc::kGeluApprxSigmoidDx:
    case ActivationFunc::kSiluDx: {
      const double k = f == ActivationFunc::kSiluDx ? 1.0 : 1.702;
      if (std::isinf(x)) return x > 0 ? 1.0 : -0.0;
      // s + k x s (1 - s), with s and 1 - s each from the side that does not cancel.
      const double e = std::exp(-std::fabs(k * x));
      const double s = k * x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
      const double one_minus_s = k * x >= 0 ? e / (1.0 + e) : 1.0 / (1.0 + e);
      return s + k * x * s * one_minus_s;
    }
    case ActivationFunc::kErfDx:
      return std::exp(-x * x) * 2.0 / std::sqrt(pi);
  }
  return std::nan("");
}

// Distance in units in the last place between two fp32 values of the same sign.
std::int64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0 : 1 << 30;
  if (a == b) return 0;
  auto ordered = [](float v) {
    const auto bits = static_cast<std::int64_t>(std::bit_cast<std::uint32_t>(v));
    return bits & 0x80000000 ? 0x80000000 - bits : bits;
  };
  return std::abs(ordered(a) - ordered(b));
}

TEST(Activation, EveryFunctionWithScaleBiasAndReduce) {
  constexpr std::uint32_t P = 3, F = 40;
  const std::vector<ActivationFunc> funcs = {ActivationFunc::kCopy,
                                             ActivationFunc::kExp,
                                             ActivationFunc::kLog,
                                             ActivationFunc::kTanh,
                                             ActivationFunc::kSigmoid,
                                             ActivationFunc::kRelu,
                                             ActivationFunc::kGelu,
                                             ActivationFunc::kGeluApprxTanh,
                                             ActivationFunc::kGeluApprxSigmoid,
                                             ActivationFunc::kSilu,
                                             ActivationFunc::kSoftplus,
                                             ActivationFunc::kMish,
                                             ActivationFunc::kErf,
                                             ActivationFunc::kSqrt,
                                             ActivationFunc::kRsqrt,
                                             ActivationFunc::kSquare,
                                             ActivationFunc::kReciprocal,
                                             ActivationFunc::kSin,
                                             ActivationFunc::kCos,
                                             ActivationFunc::kArctan,
                                             ActivationFunc::kAbs,
                                             ActivationFunc::kSign,
                                             ActivationFunc::kPrelu,
                                             ActivationFunc::kGeluDx,
                                             ActivationFunc::kGeluApprxSigmoidDx,
                                             ActivationFunc::kSiluDx,
                                             ActivationFunc::kErfDx};
  const std::array<float, P> scales = {1.0f, -0.75f, 2.0f};
  for (ActivationFunc func : funcs) {
    HostIO io(isa::Engine::kScalar);
    const auto data_ap = dense(DType::kFloat32, 4, P, F);
    const auto scale_ap = dense(DType::kFloat32, 4, P, 1, 512);
    const auto dst_ap = dense(DType::kFloat32, 4, P, F, 1024);
    const auto sum_ap = dense(DType::kFloat32, 4, P, 1, 2048);
    auto inputs = test_values(P * F, 81);
    for (std::size_t i = 0; i < inputs.size(); i += 4) inputs[i] *= 6.0f;  // reach the tails
    io.write(data_ap, inputs);
    io.write(scale_ap, {scales[0], scales[1], scales[2]});
    const auto data = io.read(data_ap);
    isa::Activation op{dst_ap, data_ap, func, scale_ap, 0.25f, sum_ap};
    ASSERT_TRUE(run_op(op, io));
    const auto got = io.read(dst_ap);
    const auto sums = io.read(sum_ap);
    const bool exact = func == ActivationFunc::kCopy || func == ActivationFunc::kRelu ||
                       func == ActivationFunc::kAbs || func == ActivationFunc::kSign ||
                       func == ActivationFunc::kSquare || func == ActivationFunc::kReciprocal ||
                       func == ActivationFunc::kSqrt || func == ActivationFunc::kPrelu;
    for (std::uint32_t p = 0; p < P; ++p) {
      float sum = 0;
      for (std::uint32_t i = 0; i < F; ++i) {
        const float pre = data[p * F + i] * scales[p] + 0.25f;
        const float want = static_cast<float>(ref_activation(func, pre));
        EXPECT_LE(ulp_distance(got[p * F + i], want), exact ? 0 : 1)
            << isa::activation_name(func) << "(" << pre << "): got " << got[p * F + i] << " want "
            << want;
        sum = i == 0 ? got[p * F + i] : sum + got[p * F + i];
      }
      EXPECT_EQ(ulp_distance(sums[p], sum), 0) << isa::activation_name(func) << " reduce";
    }
  }
}

TEST(Activation, SinOutsideItsRangeIsNan) {
  HostIO io(isa::Engine::kScalar);
  const auto data_ap = dense(DType::kFloat32, 0, 1, 4);
  const auto dst_ap = dense(DType::kFloat32, 0, 1, 4, 64);
  io.write(data_ap, {3.14159274f, -3.14159274f, 9.0f, 3.2f});
  run_op(isa::Activation{dst_ap, data_ap, ActivationFunc::kSin, 1.0f, 0.0f, std::nullopt}, io);
  const auto got = io.read(dst_ap);
  EXPECT_NEAR(got[0], 0.0f, 1e-6f);
  EXPECT_NEAR(got[1], 0.0f, 1e-6f);
  EXPECT_TRUE(std::isnan(got[2]));
  EXPECT_TRUE(std::isnan(got[3]));
}

// Every (op0, op1) pair activate2 has, with the reverse flags, [P, 1] and immediate operands,
// then the function and each reduction over the fp32 results (before the bf16 dst cast).
TEST(Activate2, EveryStagePairThenFunctionThenReduction) {
  constexpr std::uint32_t P = 2, F = 20;
  const std::vector<std::pair<AluOp, AluOp>> pairs = {
      {AluOp::kMultiply, AluOp::kAdd},    {AluOp::kMultiply, AluOp::kSubtract},
      {AluOp::kMultiply, AluOp::kBypass}, {AluOp::kAdd, AluOp::kBypass},
      {AluOp::kSubtract, AluOp::kBypass}, {AluOp::kBypass, AluOp::kBypass}};
  const std::vector<AluOp> reductions = {AluOp::kAdd, AluOp::kMaximum, AluOp::kMinimum,
                                         AluOp::kAbsMax, AluOp::kAbsMin};
  const std::array<float, P> column = {-1.25f, 0.5f};
  std::size_t round = 0;
  for (const auto& [op0, op1] : pairs) {
    for (int reverse = 0; reverse < 4; ++reverse) {
      const bool reverse0 = (reverse & 1) != 0 && op0 != AluOp::kBypass;
      const bool reverse1 = (reverse & 2) != 0 && op1 != AluOp::kBypass;
      for (ActivationFunc func :
           {ActivationFunc::kCopy, ActivationFunc::kRelu, ActivationFunc::kExp}) {
        const AluOp reduce = reductions[round++ % reductions.size()];
        HostIO io(isa::Engine::kScalar);
        const auto data_ap = dense(DType::kFloat32, 64, P, F);
        const auto imm0_ap = dense(DType::kFloat32, 64, P, 1, 256);
        const auto dst_ap = dense(DType::kBFloat16, 64, P, F, 512);
        const auto res_ap = dense(DType::kFloat32, 64, P, 1, 1024);
        io.write(data_ap, test_values(P * F, 7 + static_cast<std::uint32_t>(round)));
        io.write(imm0_ap, {column[0], column[1]});
        const auto data = io.read(data_ap);
        isa::Activate2 op{dst_ap, data_ap, func,     op0,    imm0_ap, reverse0,
                          op1,    0.75f,   reverse1, reduce, res_ap};
        ASSERT_TRUE(run_op(op, io));
        std::vector<float> want(P * F), reduced(P);
        for (std::uint32_t p = 0; p < P; ++p) {
          for (std::uint32_t i = 0; i < F; ++i) {
            float x = data[p * F + i];
            if (op0 != AluOp::kBypass)
              x = reverse0 ? ref_alu(op0, column[p], x) : ref_alu(op0, x, column[p]);
            if (op1 != AluOp::kBypass)
              x = reverse1 ? ref_alu(op1, 0.75f, x) : ref_alu(op1, x, 0.75f);
            // relu as the IEEE maximum with +0: relu(-0) is +0.
            const float y = static_cast<float>(
                func == ActivationFunc::kRelu ? ref_max(x, 0.0) : ref_activation(func, x));
            want[p * F + i] = y;
            reduced[p] = i == 0 ? y : ref_alu(reduce, reduced[p], y);
          }
        }
        const std::string what = std::string(isa::alu_op_name(op0)) + "," +
                                 std::string(isa::alu_op_name(op1)) + " " +
                                 std::string(isa::activation_name(func)) + " reduce " +
                                 std::string(isa::alu_op_name(reduce));
        // exp through the C library in double, rounded once: the same bits as the reference.
        expect_codes(DType::kBFloat16, io.read_raw(dst_ap), want, what.c_str());
        expect_codes(DType::kFloat32, io.read_raw(res_ap), reduced, what.c_str());
      }
    }
  }
}

// The derivative activations at their special points: exact limits at +-inf (no inf * 0),
// NaN through, and the values at 0.
TEST(Activation, DerivativesAtSpecialPoints) {
  struct Case {
    ActivationFunc func;
    std::array<float, 5> want;  // at 0, -0, inf, -inf, 1
  };
  const float two_over_sqrt_pi = static_cast<float>(2.0 / std::sqrt(std::acos(-1.0)));
  const std::vector<Case> cases = {
      {ActivationFunc::kGeluDx, {0.5f, 0.5f, 1.0f, 0.0f, 1.0833155f}},
      {ActivationFunc::kGeluApprxSigmoidDx, {0.5f, 0.5f, 1.0f, -0.0f, 1.0677797f}},
      {ActivationFunc::kSiluDx, {0.5f, 0.5f, 1.0f, -0.0f, 0.92767054f}},
      {ActivationFunc::kErfDx, {two_over_sqrt_pi, two_over_sqrt_pi, 0.0f, 0.0f, 0.4151075f}},
  };
  for (const auto& c : cases) {
    HostIO io(isa::Engine::kScalar);
    const auto data_ap = dense(DType::kFloat32, 0, 1, 6);
    const auto dst_ap = dense(DType::kFloat32, 0, 1, 6, 64);
    io.write(data_ap, {0.0f, -0.0f, kInf, -kInf, 1.0f, kNaN});
    ASSERT_TRUE(run_op(isa::Activation{dst_ap, data_ap, c.func, 1.0f, 0.0f, std::nullopt}, io));
    const auto got = io.read(dst_ap);
    for (std::size_t i = 0; i < c.want.size(); ++i) {
      EXPECT_EQ(got[i], c.want[i]) << isa::activation_name(c.func) << " case " << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(c.want[i]))
          << isa::activation_name(c.func) << " case " << i;
    }
    EXPECT_TRUE(std::isnan(got[5])) << isa::activation_name(c.func);
  }
}

// prelu is x for x > 0, else relu_param * x in fp32: a [P, 1] slope per partition or an
// immediate; NaN stays NaN, 0 * -inf is NaN, and a zero slope gives -0 for negatives.
TEST(Activate2, PreluWithPerPartitionAndImmediateSlope) {
  const std::vector<float> x = {2.5f, -2.0f, 0.0f, -0.0f, kInf, -kInf, kNaN, -1e-45f};
  constexpr std::uint32_t P = 3;
  const auto F = static_cast<std::uint32_t>(x.size());
  const std::array<float, P> slopes = {0.25f, 0.0f, -3.0f};
  HostIO io(isa::Engine::kScalar);
  const auto data_ap = dense(DType::kFloat32, 0, P, F);
  const auto slope_ap = dense(DType::kFloat32, 0, P, 1, 256);
  const auto dst_ap = dense(DType::kFloat32, 0, P, F, 512);
  std::vector<float> data;
  for (std::uint32_t p = 0; p < P; ++p) data.insert(data.end(), x.begin(), x.end());
  io.write(data_ap, data);
  io.write(slope_ap, {slopes[0], slopes[1], slopes[2]});
  isa::Activate2 op;
  op.dst = dst_ap;
  op.data = data_ap;
  op.func = ActivationFunc::kPrelu;
  op.relu_param = slope_ap;
  ASSERT_TRUE(run_op(op, io));
  std::vector<float> want;
  for (std::uint32_t p = 0; p < P; ++p)
    for (float v : x) want.push_back(v > 0 ? v : slopes[p] * v);
  expect_codes(DType::kFloat32, io.read_raw(dst_ap), want, "prelu [P, 1]");
  const auto got = io.read(dst_ap);
  EXPECT_TRUE(std::signbit(got[F + 1]));  // 0 * -2 = -0
  EXPECT_TRUE(std::isnan(got[F + 5]));    // 0 * -inf
  EXPECT_EQ(got[2 * F + 5], kInf);        // -3 * -inf
  op.relu_param = 0.5f;                   // an immediate slope
  ASSERT_TRUE(run_op(op, io));
  EXPECT_EQ(io.read(dst_ap)[1], -1.0f);
  EXPECT_EQ(io.read(dst_ap)[0], 2.5f);
}

}  // namespace
}  // namespace trnsim::sim
