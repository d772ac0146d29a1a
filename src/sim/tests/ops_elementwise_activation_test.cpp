// Tests of exponential, reciprocal and activation against reference functions written
// independently here.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
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
  const std::vector<ActivationFunc> funcs = {
      ActivationFunc::kCopy,   ActivationFunc::kExp,           ActivationFunc::kLog,
      ActivationFunc::kTanh,   ActivationFunc::kSigmoid,       ActivationFunc::kRelu,
      ActivationFunc::kGelu,   ActivationFunc::kGeluApprxTanh, ActivationFunc::kGeluApprxSigmoid,
      ActivationFunc::kSilu,   ActivationFunc::kSoftplus,      ActivationFunc::kMish,
      ActivationFunc::kErf,    ActivationFunc::kSqrt,          ActivationFunc::kRsqrt,
      ActivationFunc::kSquare, ActivationFunc::kReciprocal,    ActivationFunc::kSin,
      ActivationFunc::kCos,    ActivationFunc::kArctan,        ActivationFunc::kAbs,
      ActivationFunc::kSign};
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
                       func == ActivationFunc::kSqrt;
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

}  // namespace
}  // namespace trnsim::sim
