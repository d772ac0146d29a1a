// Tests of the reductions and scans (tensor_reduce, tensor_partition_reduce,
// tensor_tensor_scan, bn_stats / bn_aggr, max8, nc_find_index8, nc_match_replace8) against
// references written independently here.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/tests/ops_test_util.h"

namespace trnsim::sim {
namespace {

using namespace ops_testing;

// Reference reduction: indices of data [P, 3, 4, 5] reduced over the last `axes` dims in
// row-major order, folding left to right.
std::vector<float> ref_reduce(const std::vector<float>& data, std::uint32_t partitions,
                              std::uint32_t axes, AluOp op, bool negate) {
  const std::array<std::uint32_t, 3> shape = {3, 4, 5};
  std::uint32_t block = 1;
  for (std::uint32_t k = 3 - axes; k < 3; ++k) block *= shape[k];
  const std::uint32_t total = 60;
  std::vector<float> out;
  for (std::uint32_t p = 0; p < partitions; ++p)
    for (std::uint32_t start = 0; start < total; start += block) {
      float acc = data[p * total + start];
      if (op == AluOp::kLogicalOr) acc = acc != 0 ? 1.0f : 0.0f;
      for (std::uint32_t j = 1; j < block; ++j) acc = ref_alu(op, acc, data[p * total + start + j]);
      out.push_back(negate ? -acc : acc);
    }
  return out;
}

TEST(TensorReduce, InnermostAxesSequentialOrder) {
  constexpr std::uint32_t P = 3;
  for (std::uint32_t axes = 1; axes <= 3; ++axes) {
    for (AluOp op :
         {AluOp::kAdd, AluOp::kMultiply, AluOp::kMaximum, AluOp::kMinimum, AluOp::kLogicalOr}) {
      for (bool negate : {false, true}) {
        HostIO io;
        const auto data_ap = on_chip(DType::kFloat32, 5, P, 0, {{20, 3}, {5, 4}, {1, 5}});
        std::uint32_t kept = 1;
        const std::array<std::uint32_t, 3> shape = {3, 4, 5};
        for (std::uint32_t k = 0; k < 3 - axes; ++k) kept *= shape[k];
        const auto dst_ap = dense(DType::kFloat32, 5, P, kept, 1024);
        auto values = test_values(P * 60, 31 + axes, op != AluOp::kMultiply);
        // Values where the summation order shows: a large term cancels later.
        values[0] = 1e8f;
        values[1] = 1.0f;
        values[2] = -1e8f;
        io.write(data_ap, values);
        ASSERT_TRUE(run_op(isa::TensorReduce{dst_ap, data_ap, op, axes, negate}, io));
        expect_codes(DType::kFloat32, io.read_raw(dst_ap), ref_reduce(values, P, axes, op, negate),
                     "tensor_reduce");
      }
    }
  }
}

TEST(TensorReduce, AddIsLeftToRight) {
  HostIO io;
  const auto data_ap = dense(DType::kFloat32, 0, 1, 4);
  const auto dst_ap = dense(DType::kFloat32, 0, 1, 1, 64);
  io.write(data_ap, {1e8f, 1.0f, -1e8f, 1.0f});
  run_op(isa::TensorReduce{dst_ap, data_ap, AluOp::kAdd, 1, false}, io);
  // ((1e8 + 1) - 1e8) + 1 = 0 + 1 in fp32 (1e8 + 1 rounds back to 1e8); pairwise would give 0.
  EXPECT_EQ(io.read(dst_ap)[0], 1.0f);
}

TEST(TensorReduce, BitwiseOrOnWords) {
  HostIO io;
  const auto data_ap = dense(DType::kInt32, 0, 2, 4);
  const auto dst_ap = dense(DType::kInt32, 0, 2, 1, 64);
  io.write_words(data_ap, {1, 2, 4, -2147483648LL, 0x10, 0x10, 0x100, 0});
  run_op(isa::TensorReduce{dst_ap, data_ap, AluOp::kBitwiseOr, 1, false}, io);
  EXPECT_EQ(io.read_raw(dst_ap), (std::vector<std::uint32_t>{0x80000007u, 0x110u}));
  run_op(isa::TensorReduce{dst_ap, data_ap, AluOp::kBitwiseOr, 1, true}, io);
  EXPECT_EQ(io.read_raw(dst_ap), (std::vector<std::uint32_t>{0x7FFFFFF9u, 0xFFFFFEF0u}));
}

TEST(TensorPartitionReduce, AddAverageMaxAndBitwise) {
  constexpr std::uint32_t P = 7, F = 5;
  HostIO io(isa::Engine::kGpSimd);
  const auto data_ap = dense(DType::kBFloat16, 9, P, F);
  const auto dst_ap = dense(DType::kFloat32, 0, 1, F, 512);
  io.write(data_ap, test_values(P * F, 41));
  const auto data = io.read(data_ap);
  for (AluOp op : {AluOp::kAdd, AluOp::kAverage, AluOp::kMaximum}) {
    run_op(isa::TensorPartitionReduce{dst_ap, data_ap, op}, io);
    std::vector<float> expected;
    for (std::uint32_t i = 0; i < F; ++i) {
      float acc = data[i];
      const AluOp fold = op == AluOp::kAverage ? AluOp::kAdd : op;
      for (std::uint32_t p = 1; p < P; ++p) acc = ref_alu(fold, acc, data[p * F + i]);
      expected.push_back(op == AluOp::kAverage ? acc / 7.0f : acc);
    }
    expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "partition reduce");
  }
  const auto int_ap = dense(DType::kUInt16, 0, 3, 2, 1024);
  const auto int_dst = dense(DType::kUInt16, 0, 1, 2, 2048);
  io.write_words(int_ap, {0x0F01, 0xFFFF, 0x00F1, 0x1234, 0xF001, 0x00FF});
  run_op(isa::TensorPartitionReduce{int_dst, int_ap, AluOp::kBitwiseOr}, io);
  EXPECT_EQ(io.read_raw(int_dst), (std::vector<std::uint32_t>{0xFFF1, 0xFFFF}));
  run_op(isa::TensorPartitionReduce{int_dst, int_ap, AluOp::kBitwiseAnd}, io);
  EXPECT_EQ(io.read_raw(int_dst), (std::vector<std::uint32_t>{0x0001, 0x0034}));
}

TEST(TensorTensorScan, RecurrenceWithPerPartitionInitial) {
  constexpr std::uint32_t P = 4, F = 11;
  for (auto ops :
       {std::pair{AluOp::kMultiply, AluOp::kAdd}, std::pair{AluOp::kSubtract, AluOp::kMaximum}}) {
    HostIO io;
    const auto d0_ap = dense(DType::kFloat32, 0, P, F, 0);
    const auto d1_ap = dense(DType::kBFloat16, 0, P, F, 256);
    const auto init_ap = dense(DType::kFloat32, 0, P, 1, 512);
    const auto dst_ap = dense(DType::kFloat32, 0, P, F, 1024);
    io.write(d0_ap, test_values(P * F, 51, false));
    io.write(d1_ap, test_values(P * F, 52, false));
    io.write(init_ap, {0.5f, -1.0f, 2.0f, 0.0f});
    const auto d0 = io.read(d0_ap), d1 = io.read(d1_ap), init = io.read(init_ap);
    ASSERT_TRUE(
        run_op(isa::TensorTensorScan{dst_ap, d0_ap, d1_ap, init_ap, ops.first, ops.second}, io));
    std::vector<float> expected;
    for (std::uint32_t p = 0; p < P; ++p) {
      float previous = init[p];
      for (std::uint32_t i = 0; i < F; ++i) {
        previous = ref_alu(ops.second, ref_alu(ops.first, d0[p * F + i], previous), d1[p * F + i]);
        expected.push_back(previous);
      }
    }
    expect_codes(DType::kFloat32, io.read_raw(dst_ap), expected, "scan");
  }
}

TEST(BnStats, EvenOddCountsMeansAndSquaredDeviationsThenAggregate) {
  for (std::uint32_t F : {7u, 1u, 512u}) {
    constexpr std::uint32_t P = 3;
    HostIO io;
    const auto data_ap = dense(DType::kBFloat16, 2, P, F, 0);
    const auto stats_ap = dense(DType::kFloat32, 2, P, 6, 2048);
    const auto aggr_ap = dense(DType::kFloat32, 2, P, 2, 4096);
    io.write(data_ap, test_values(P * F, 61 + F, false));
    const auto data = io.read(data_ap);
    ASSERT_TRUE(run_op(isa::BnStats{stats_ap, data_ap}, io));
    std::vector<float> expected;
    for (std::uint32_t p = 0; p < P; ++p) {
      for (std::uint32_t parity = 0; parity < 2; ++parity) {
        std::vector<float> picked;
        for (std::uint32_t i = parity; i < F; i += 2) picked.push_back(data[p * F + i]);
        float mean = 0, m2 = 0;
        if (!picked.empty()) {
          float sum = picked[0];
          for (std::size_t k = 1; k < picked.size(); ++k) sum = sum + picked[k];
          mean = sum / static_cast<float>(picked.size());
          for (std::size_t k = 0; k < picked.size(); ++k) {
            const float dev = picked[k] - mean;
            m2 = k == 0 ? dev * dev : m2 + dev * dev;
          }
        }
        expected.insert(expected.end(), {static_cast<float>(picked.size()), mean, m2});
      }
    }
    expect_codes(DType::kFloat32, io.read_raw(stats_ap), expected, "bn_stats");

    ASSERT_TRUE(run_op(isa::BnAggr{aggr_ap, stats_ap}, io));
    const auto aggr = io.read(aggr_ap);
    for (std::uint32_t p = 0; p < P; ++p) {
      double sum = 0, sq = 0;
      for (std::uint32_t i = 0; i < F; ++i) sum += data[p * F + i];
      const double mean = sum / F;
      for (std::uint32_t i = 0; i < F; ++i)
        sq += (data[p * F + i] - mean) * (data[p * F + i] - mean);
      EXPECT_NEAR(aggr[p * 2], mean, 1e-5) << "F=" << F;
      EXPECT_NEAR(aggr[p * 2 + 1], sq / F, 1e-4) << "population variance, F=" << F;
    }
  }
}

TEST(BnAggr, CombinesSeveralStatsTilesExactly) {
  HostIO io;
  const auto stats_ap = dense(DType::kFloat32, 0, 1, 9);
  const auto dst_ap = dense(DType::kFloat32, 0, 1, 2, 64);
  // Tuples (2, 1, 2), (0, 123, 5) [empty: ignored], (2, 5, 0): data {0, 2, 5, 5}.
  io.write(stats_ap, {2, 1, 2, 0, 123, 5, 2, 5, 0});
  run_op(isa::BnAggr{dst_ap, stats_ap}, io);
  const float mean = (2 * 1.0f + 2 * 5.0f) / 4.0f;
  const float m2 = (2.0f + 2 * (1 - mean) * (1 - mean)) + (0.0f + 2 * (5 - mean) * (5 - mean));
  EXPECT_EQ(io.read(dst_ap), (std::vector<float>{mean, m2 / 4.0f}));
}

TEST(Max8, DescendingWithDuplicatesNanAndSignedZeros) {
  HostIO io;
  const auto src_ap = dense(DType::kFloat32, 0, 2, 12);
  const auto dst_ap = dense(DType::kFloat32, 0, 2, 8, 256);
  io.write(src_ap, {3, 9,    9,     -1, 0, -0.0f, 7, 9, 2, 1, -5, 8,  //
                    1, kNaN, -kInf, 4,  4, 4,     4, 4, 4, 4, 4,  4});
  ASSERT_TRUE(run_op(isa::Max8{dst_ap, src_ap}, io));
  const auto got = io.read(dst_ap);
  const std::vector<float> row0 = {9, 9, 9, 8, 7, 3, 2, 1};
  for (int k = 0; k < 8; ++k) EXPECT_EQ(got[k], row0[k]) << k;
  EXPECT_TRUE(std::isnan(got[8]));
  for (int k = 1; k < 8; ++k) EXPECT_EQ(got[8 + k], 4.0f);
  // Zeros: ties keep source order, so +0 (index 4) precedes -0 (index 5).
  io.write(dense(DType::kFloat32, 0, 1, 12), {0, -0.0f, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10});
  run_op(isa::Max8{dense(DType::kFloat32, 0, 1, 8, 256), dense(DType::kFloat32, 0, 1, 12)}, io);
  const auto zeros = io.read_raw(dense(DType::kFloat32, 0, 1, 2, 256));
  EXPECT_EQ(zeros, (std::vector<std::uint32_t>{0x00000000u, 0x80000000u}));
}

TEST(NcFindIndex8, FirstOccurrencesDuplicatesAndMisses) {
  HostIO io;
  const auto data_ap = dense(DType::kFloat32, 0, 1, 10);
  const auto vals_ap = dense(DType::kFloat32, 0, 1, 8, 64);
  io.write(data_ap, {5, 9, 5, 1, 9, 9, 2, -0.0f, kNaN, 5});
  io.write(vals_ap, {9, 9, 5, 9, 9, 0.0f, 42, kNaN});
  const std::vector<std::uint32_t> expected16 = {1, 4, 0, 5, 0xFFFF, 7, 0xFFFF, 0xFFFF};
  const auto dst16 = dense(DType::kUInt16, 0, 1, 8, 128);
  ASSERT_TRUE(run_op(isa::NcFindIndex8{dst16, data_ap, vals_ap}, io));
  EXPECT_EQ(io.read_raw(dst16), expected16);
  const auto dst32 = dense(DType::kUInt32, 0, 1, 8, 256);
  run_op(isa::NcFindIndex8{dst32, data_ap, vals_ap}, io);
  const auto got32 = io.read_raw(dst32);
  EXPECT_EQ(got32[4], 0xFFFFFFFFu);
  EXPECT_EQ(got32[3], 5u);
}

// NKI 0.6's example: vals are processed from the last to the first, so the seven 8s pair with
// positions 4..10 from the highest slot down. Partitions 32..33, bf16 data, uint16 indices.
TEST(NcMatchReplace8, ReverseOrderPairsDuplicatesFromTheLastSlot) {
  HostIO io;
  const auto data_ap = dense(DType::kBFloat16, 32, 2, 11);
  const auto vals_ap = dense(DType::kFloat32, 32, 2, 8, 64);
  const auto dst_ap = dense(DType::kBFloat16, 32, 2, 11, 128);
  const auto idx_ap = dense(DType::kUInt16, 32, 2, 8, 256);
  io.write(data_ap, {1, 2,     3,    4, 8, 8, 8, 8, 8, 8, 8,  //
                     5, -0.0f, kNaN, 5, 7, 1, 1, 1, 9, 9, 9});
  io.write(vals_ap, {3, 8, 8, 8, 8, 8, 8, 8,  //
                     5, 0.0f, kNaN, 42, 5, 5, 1, 7});
  ASSERT_TRUE(run_op(isa::NcMatchReplace8{dst_ap, data_ap, vals_ap, -1.5f, idx_ap}, io));
  // Row 1, last to first: 7 -> 4, 1 -> 5, 5 -> 0, 5 -> 3, 42 and NaN -> none, +0 matches -0
  // at 1, and the first 5 finds no 5 left.
  EXPECT_EQ(io.read_raw(idx_ap),
            (std::vector<std::uint32_t>{2, 10, 9, 8, 7, 6, 5, 4,  //
                                        0xFFFF, 1, 0xFFFF, 0xFFFF, 3, 0, 5, 4}));
  const float r = -1.5f;
  const auto got = io.read(dst_ap);
  const std::vector<float> want = {1, 2, r,    4, r, r, r, r, r, r, r,  //
                                   r, r, kNaN, r, r, r, 1, 1, 9, 9, 9};
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << i;
    }
  }
}

// Without dst_idx only dst is written; an imm equal to a value does not make a replaced
// element match again, and uint32 indices miss with 0xFFFFFFFF.
TEST(NcMatchReplace8, ReplacedElementsAreNotMatchedAgain) {
  HostIO io;
  const auto data_ap = dense(DType::kFloat32, 0, 1, 8);
  const auto vals_ap = dense(DType::kFloat32, 0, 1, 8, 64);
  const auto dst_ap = dense(DType::kFloat32, 0, 1, 8, 128);
  const auto idx_ap = dense(DType::kUInt32, 0, 1, 8, 256);
  io.write(data_ap, {6, 6, 0, 0, 0, 0, 0, 0});
  io.write(vals_ap, {6, 6, 6, 0, 0, 0, 0, 0});
  ASSERT_TRUE(run_op(isa::NcMatchReplace8{dst_ap, data_ap, vals_ap, 6.0f, std::nullopt}, io));
  EXPECT_EQ(io.read(dst_ap), (std::vector<float>{6, 6, 6, 6, 6, 6, 6, 0}));
  EXPECT_EQ(io.byte_at(Memory::kSbuf, 0, 256), kSentinel);
  ASSERT_TRUE(run_op(isa::NcMatchReplace8{dst_ap, data_ap, vals_ap, 6.0f, idx_ap}, io));
  EXPECT_EQ(io.read_raw(idx_ap), (std::vector<std::uint32_t>{0xFFFFFFFFu, 1, 0, 6, 5, 4, 3, 2}));
}

}  // namespace
}  // namespace trnsim::sim
