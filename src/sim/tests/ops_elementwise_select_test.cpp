// Tests of select, range_select, iota, memset and affine_select.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/tests/ops_test_util.h"

namespace trnsim::sim {
namespace {

using namespace ops_testing;

TEST(Select, PredicateReverseAndPerPartitionOnFalse) {
  HostIO io;
  const auto pred_ap = dense(DType::kUInt8, 0, 2, 4);
  const auto true_ap = dense(DType::kFloat32, 0, 2, 4, 64);
  const auto false_ap = dense(DType::kFloat32, 0, 2, 1, 128);
  const auto dst_ap = dense(DType::kBFloat16, 0, 2, 4, 256);
  io.write(pred_ap, {1, 0, 255, 0, 0, 3, 0, 1});
  io.write(true_ap, {1, 2, 3, 4, 5, 6, 7, 8});
  io.write(false_ap, {-1, -2});
  for (bool reverse : {false, true}) {
    run_op(isa::Select{dst_ap, pred_ap, true_ap, false_ap, reverse}, io);
    const std::vector<float> forward = {1, -1, 3, -1, -2, 6, -2, 8};
    const std::vector<float> backward = {-1, 2, -1, 4, 5, -2, 7, -2};
    expect_codes(DType::kBFloat16, io.read_raw(dst_ap), reverse ? backward : forward, "select");
  }
}

TEST(RangeSelect, KeepsIndexRangeAndReducesMax) {
  HostIO io;
  constexpr std::uint32_t P = 3, F = 10;
  const auto true_ap = dense(DType::kFloat32, 0, P, F);
  const auto dst_ap = dense(DType::kFloat32, 0, P, F, 256);
  const auto lo_ap = dense(DType::kFloat32, 0, P, 1, 512);
  const auto hi_ap = dense(DType::kFloat32, 0, P, 1, 576);
  const auto max_ap = dense(DType::kFloat32, 0, P, 1, 640);
  const auto values = test_values(P * F, 71, false);
  io.write(true_ap, values);
  io.write(lo_ap, {2, 0, 20});
  io.write(hi_ap, {6, 100, 30});
  isa::RangeSelect op;
  op.dst = dst_ap;
  op.on_true = true_ap;
  op.comp_op0 = AluOp::kGreaterEqual;
  op.comp_op1 = AluOp::kLess;
  op.bound0 = lo_ap;
  op.bound1 = hi_ap;
  op.range_start = 3;
  op.reduce_res = max_ap;
  ASSERT_TRUE(run_op(op, io));
  const float lowest = -3.4028234663852886e38f;
  std::vector<float> expected, maxima;
  const std::array<float, 3> lo = {2, 0, 20}, hi = {6, 100, 30};
  for (std::uint32_t p = 0; p < P; ++p) {
    float m = -kInf;
    for (std::uint32_t i = 0; i < F; ++i) {
      const float index = static_cast<float>(i + 3);
      const float v = (index >= lo[p] && index < hi[p]) ? values[p * F + i] : lowest;
      expected.push_back(v);
      m = std::max(m, v);
    }
    maxima.push_back(m);
  }
  expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "range_select");
  expect_codes(DType::kFloat32, io.read_raw(max_ap), maxima, "range_select max");
}

TEST(Iota, Int32ExactWrapsAndCastsForFloatDst) {
  HostIO io(isa::Engine::kGpSimd);
  isa::AffinePattern pattern;
  pattern.num_dims = 2;
  pattern.dims[0] = {-7, 3};
  pattern.dims[1] = {1000003, 4};
  const std::int32_t offset = 2147483000;    // wraps for several elements
  const std::int32_t multiplier = 16777217;  // not representable in fp32
  auto expected_int = [&](std::uint32_t c, std::uint32_t i, std::uint32_t j) {
    const std::int64_t exact = std::int64_t{offset} + std::int64_t{c} * multiplier -
                               7 * std::int64_t{i} + 1000003 * std::int64_t{j};
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(exact & 0xFFFFFFFF));
  };
  const auto int_ap = dense(DType::kInt32, 8, 3, 12);
  ASSERT_TRUE(run_op(isa::Iota{int_ap, pattern, offset, multiplier}, io));
  const auto words = io.read_raw(int_ap);
  for (std::uint32_t c = 0; c < 3; ++c)
    for (std::uint32_t i = 0; i < 3; ++i)
      for (std::uint32_t j = 0; j < 4; ++j)
        EXPECT_EQ(static_cast<std::int32_t>(words[c * 12 + i * 4 + j]), expected_int(c, i, j));

  const auto bf_ap = dense(DType::kBFloat16, 8, 3, 12, 1024);
  run_op(isa::Iota{bf_ap, pattern, 5, -3}, io);
  std::vector<float> expected;
  for (std::int32_t c = 0; c < 3; ++c)
    for (std::int32_t i = 0; i < 3; ++i)
      for (std::int32_t j = 0; j < 4; ++j)
        expected.push_back(static_cast<float>(5 - 3 * c - 7 * i + 1000003 * j));
  expect_codes(DType::kBFloat16, io.read_raw(bf_ap), expected, "iota bf16");
}

TEST(Memset, FillsEveryDtypeIncludingPackedZero) {
  HostIO io;
  const auto f_ap = on_chip(DType::kFloat16, 1, 2, 0, {{2, 3}});  // strided: gaps keep sentinel
  run_op(isa::Memset{f_ap, 1.0f / 3.0f}, io);
  expect_codes(DType::kFloat16, io.read_raw(f_ap), std::vector<float>(6, 1.0f / 3.0f), "memset");
  EXPECT_EQ(io.byte_at(Memory::kSbuf, 1, 2), kSentinel);
  const auto i_ap = dense(DType::kInt32, 0, 1, 2, 64);
  run_op(isa::Memset{i_ap, -5.0f}, io);
  EXPECT_EQ(io.read_raw(i_ap), (std::vector<std::uint32_t>{0xFFFFFFFBu, 0xFFFFFFFBu}));
  const auto x4_ap = dense(DType::kFloat8E4M3x4, 0, 1, 2, 128);
  run_op(isa::Memset{x4_ap, 0.0f}, io);
  EXPECT_EQ(io.read_raw(x4_ap), (std::vector<std::uint32_t>{0, 0}));
  EXPECT_THROW(run_op(isa::Memset{x4_ap, 1.0f}, io), std::invalid_argument);
}

TEST(AffineSelect, CausalMask) {
  HostIO io(isa::Engine::kGpSimd);
  constexpr std::uint32_t P = 4, F = 6;
  const auto true_ap = dense(DType::kFloat32, 0, P, F);
  const auto dst_ap = dense(DType::kBFloat16, 0, P, F, 256);
  const auto values = test_values(P * F, 91, false);
  io.write(true_ap, values);
  isa::AffinePattern pattern;
  pattern.num_dims = 1;
  pattern.dims[0] = {-1, F};
  // keep where c - i >= 0 (lower triangle), else -1e4.
  ASSERT_TRUE(
      run_op(isa::AffineSelect{dst_ap, true_ap, pattern, 0, 1, AluOp::kGreaterEqual, -1e4f}, io));
  std::vector<float> expected;
  for (std::uint32_t c = 0; c < P; ++c)
    for (std::uint32_t i = 0; i < F; ++i) expected.push_back(i <= c ? values[c * F + i] : -1e4f);
  expect_codes(DType::kBFloat16, io.read_raw(dst_ap), expected, "affine_select");
}

}  // namespace
}  // namespace trnsim::sim
