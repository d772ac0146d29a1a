// Tests of the operations NKI 0.6 added to the ISA here: the GpSimd index operations
// (sequence_bounds, nonzero_with_count, nc_n_gather, topk), the random ones (rng,
// set_rng_seed, dropout) and tensor_scalar_cumulative, each against a reference written in
// the test from NKI's documented behaviour.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "sim/tests/ops_test_util.h"

namespace trnsim::sim {
namespace {

using namespace ops_testing;

// NKI's reference (its sequence_bounds test): ids [0, 1, 1, 2, 2, 2, 0, 3, 3] give starts
// [9, 1, 1, 3, 3, 3, 9, 7, 7] and ends [-1, 3, 3, 6, 6, 6, -1, 9, 9].
TEST(SequenceBounds, NkiExampleInBothDtypes) {
  const std::vector<float> ids = {0, 1, 1, 2, 2, 2, 0, 3, 3};
  const std::vector<float> want = {9, 1, 1, 3, 3, 3, 9, 7, 7, -1, 3, 3, 6, 6, 6, -1, 9, 9};
  for (DType dtype : {DType::kFloat32, DType::kInt32}) {
    HostIO io(isa::Engine::kGpSimd);
    const auto src = dense(dtype, 0, 1, 9);
    const auto dst = on_chip(dtype, 0, 1, 256, {{9, 2}, {1, 9}});
    io.write(src, ids);
    ASSERT_TRUE(run_op(isa::SequenceBounds{dst, src}, io));
    EXPECT_EQ(io.read(dst), want) << numerics::name(dtype);
  }
}

TEST(SequenceBounds, LargeInt32IdsAreComparedExactly) {
  HostIO io(isa::Engine::kGpSimd);
  // 2^24 + 1 and 2^24 round to the same fp32: a float comparison would merge the runs.
  const auto src = dense(DType::kInt32, 0, 1, 4);
  const auto dst = dense(DType::kInt32, 0, 1, 8, 256);
  io.write_words(src, {16777217, 16777217, 16777216, 5});
  ASSERT_TRUE(run_op(isa::SequenceBounds{dst, src}, io));
  const auto got = io.read_raw(dst);
  EXPECT_EQ(std::vector<std::uint32_t>(got.begin(), got.begin() + 4),
            (std::vector<std::uint32_t>{0, 0, 2, 3}));
  EXPECT_EQ(std::vector<std::uint32_t>(got.begin() + 4, got.end()),
            (std::vector<std::uint32_t>{2, 2, 3, 4}));
}

// NKI's example: [0, 1, 1, 0, 0, 1, 0, 0] with offset 16 -> [17, 18, 21, -1 x 5, 3], on the
// first partition of each GpSimd core only.
TEST(NonzeroWithCount, FirstPartitionOfEachCore) {
  HostIO io(isa::Engine::kGpSimd);
  constexpr std::uint32_t P = 32, F = 8;
  const auto src = dense(DType::kFloat32, 0, P, F);
  const auto dst = dense(DType::kInt32, 0, P, F + 1, 256);
  std::vector<float> values(P * F, 7.0f);
  const std::vector<float> row0 = {0, 1, 1, 0, 0, 1, 0, 0};
  const std::vector<float> row16 = {-0.0f, kNaN, 0, 0, 0, 0, 0, 2};
  std::copy(row0.begin(), row0.end(), values.begin());
  std::copy(row16.begin(), row16.end(), values.begin() + 16 * F);
  io.write(src, values);
  ASSERT_TRUE(run_op(isa::NonzeroWithCount{dst, src, 16, -1}, io));
  const auto got = io.read_raw(dst);
  const auto row = [&](std::uint32_t p) {
    std::vector<std::int32_t> r;
    for (std::uint32_t i = 0; i <= F; ++i)
      r.push_back(static_cast<std::int32_t>(got[p * (F + 1) + i]));
    return r;
  };
  EXPECT_EQ(row(0), (std::vector<std::int32_t>{17, 18, 21, -1, -1, -1, -1, -1, 3}));
  // -0.0 is zero, NaN is not.
  EXPECT_EQ(row(16), (std::vector<std::int32_t>{17, 23, -1, -1, -1, -1, -1, -1, 2}));
  // Partition 1 was not written: it still holds the test memory's sentinel bytes.
  EXPECT_EQ(got[1 * (F + 1)], 0xA5A5A5A5u);
}

TEST(NcNGather, GathersFlattenedFreeDimsPerPartition) {
  HostIO io(isa::Engine::kGpSimd);
  constexpr std::uint32_t P = 3;
  // data [P, 2, 5] with a gap between the rows of the free dims (a strided view).
  const auto data = on_chip(DType::kBFloat16, 4, P, 0, {{8, 2}, {1, 5}});
  const auto indices = dense(DType::kUInt32, 4, P, 4, 512);
  const auto dst = dense(DType::kBFloat16, 4, P, 4, 1024);
  std::vector<float> values(P * 10);
  std::iota(values.begin(), values.end(), 1.0f);
  io.write(data, values);
  io.write_words(indices, {9, 0, 5, 5, 1, 2, 3, 4, 0, 0, 0, 9});
  ASSERT_TRUE(run_op(isa::NcNGather{dst, data, indices}, io));
  EXPECT_EQ(io.read(dst), (std::vector<float>{10, 1, 6, 6, 12, 13, 14, 15, 21, 21, 21, 30}));

  io.write_words(indices, {9, 0, 5, 5, 1, 2, 3, 10, 0, 0, 0, 9});
  EXPECT_THROW(run_op(isa::NcNGather{dst, data, indices}, io), std::out_of_range);
}

// Reference top-K of one snake: descending by value (NaN first), ties to the lower position.
std::vector<std::uint32_t> reference_topk(const std::vector<float>& snake, std::uint32_t k) {
  std::vector<std::uint32_t> order(snake.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (std::isnan(snake[a]) || std::isnan(snake[b]))
      return std::isnan(snake[a]) && !std::isnan(snake[b]);
    return snake[a] > snake[b];
  });
  order.resize(k);
  std::reverse(order.begin(), order.end());  // ascending
  return order;
}

TEST(Topk, SnakeInSnakeOutAscendingPerGroup) {
  HostIO io(isa::Engine::kGpSimd);
  constexpr std::uint32_t P = 32, X = 3, n = 42, K = 20;
  const auto src = dense(DType::kBFloat16, 0, P, X);
  const auto val = dense(DType::kBFloat16, 0, P, K, 256);
  const auto idx = dense(DType::kUInt32, 0, P, K, 1024);
  std::vector<float> values = test_values(P * X, 7, false);
  values[5 * X + 1] = values[9 * X + 0];  // a tie inside group 0 (positions 21 and 9)
  values[16 * X + 2] = kNaN;              // group 1's position 32 is NaN: it ranks first
  io.write(src, values);
  const std::vector<float> stored = io.read(src);  // bf16-rounded
  ASSERT_TRUE(run_op(isa::Topk{val, idx, src, n}, io));
  const auto got_val = io.read_raw(val);
  const auto got_idx = io.read_raw(idx);
  for (std::uint32_t group = 0; group < P; group += 16) {
    std::vector<float> snake(n);
    for (std::uint32_t s = 0; s < n; ++s) snake[s] = stored[(group + s % 16) * X + s / 16];
    const auto want = reference_topk(snake, K);
    for (std::uint32_t j = 0; j < K; ++j) {
      const std::uint32_t at = (group + j % 16) * K + j / 16;
      EXPECT_EQ(got_idx[at], want[j]) << "group " << group << " result " << j;
      EXPECT_EQ(got_val[at], numerics::encode(DType::kBFloat16, snake[want[j]]));
    }
    // Column 1 of partitions 4..15 of the group holds no result: untouched.
    EXPECT_EQ(got_idx[(group + 4) * K + 1], 0xA5A5A5A5u);
  }
}

TEST(Rng, LowBitsOfEachDrawInTheDtypeWidth) {
  for (DType dtype : {DType::kUInt8, DType::kInt16, DType::kUInt32}) {
    HostIO io(isa::Engine::kVector, 4);
    const auto dst = dense(dtype, 2, 2, 9);
    const std::vector<std::uint32_t> before = io.rng(isa::Engine::kVector);
    ASSERT_TRUE(run_op(isa::Rng{dst}, io));
    std::vector<std::uint32_t> state = before;
    const auto got = io.read_raw(dst);
    const unsigned bits = static_cast<unsigned>(8 * bytes_of(dtype));
    for (std::uint32_t p = 0; p < 2; ++p)
      for (std::uint32_t i = 0; i < 9; ++i) {
        const std::span<std::uint32_t> lane(state.data() + ((2 + p) * 4 + i % 4) * 6, 6);
        std::uint32_t word = math::xorwow_next(lane);
        if (bits < 32) word &= (1u << bits) - 1;
        EXPECT_EQ(got[p * 9 + i], word) << numerics::name(dtype);
      }
  }
}

TEST(SetRngSeed, SameSeedSameStreamOnEveryLane) {
  HostIO io(isa::Engine::kVector, 4);
  const auto seed = dense(DType::kUInt32, 0, 1, 1);
  io.write_words(seed, {1234});
  const auto dst = dense(DType::kUInt32, 0, 128, 4, 64);
  ASSERT_TRUE(run_op(isa::SetRngSeed{seed}, io));
  ASSERT_TRUE(run_op(isa::Rng{dst}, io));
  const auto first = io.read_raw(dst);
  ASSERT_TRUE(run_op(isa::SetRngSeed{seed}, io));
  ASSERT_TRUE(run_op(isa::Rng{dst}, io));
  EXPECT_EQ(io.read_raw(dst), first);
  // Lanes are decorrelated: partition 0 and 1 draw different words.
  EXPECT_NE(std::vector<std::uint32_t>(first.begin(), first.begin() + 4),
            std::vector<std::uint32_t>(first.begin() + 4, first.begin() + 8));
  io.write_words(seed, {1235});
  ASSERT_TRUE(run_op(isa::SetRngSeed{seed}, io));
  ASSERT_TRUE(run_op(isa::Rng{dst}, io));
  EXPECT_NE(io.read_raw(dst), first);
}

TEST(Dropout, KeepsBitsWhereTheDrawIsAtLeastProb) {
  for (DType dtype : {DType::kBFloat16, DType::kInt32}) {
    HostIO io(isa::Engine::kVector);
    constexpr std::uint32_t P = 4, F = 64;
    const auto data = dense(dtype, 0, P, F);
    const auto dst = dense(dtype, 0, P, F, 1024);
    const auto prob = dense(DType::kFloat32, 0, P, 1, 2048);
    std::vector<float> values(P * F);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 13) - 6.0f;
    io.write(data, values);
    io.write(prob, {0.0f, 1.0f, 0.25f, 0.75f});
    std::vector<std::uint32_t> state = io.rng(isa::Engine::kVector);
    ASSERT_TRUE(run_op(isa::Dropout{dst, data, prob}, io));
    const auto in = io.read_raw(data);
    const auto out = io.read_raw(dst);
    const std::vector<float> probs = {0.0f, 1.0f, 0.25f, 0.75f};
    for (std::uint32_t p = 0; p < P; ++p)
      for (std::uint32_t i = 0; i < F; ++i) {
        const std::uint32_t bits = math::xorwow_next(std::span(state.data() + p * 6, 6));
        const bool keep = math::uniform_from_bits(bits, 0.0f, 1.0f) >= probs[p];
        EXPECT_EQ(out[p * F + i], keep ? in[p * F + i] : 0u) << p << "," << i;
      }
    // prob 0 keeps everything, prob 1 drops everything.
    EXPECT_TRUE(std::equal(out.begin(), out.begin() + F, in.begin()));
    EXPECT_TRUE(std::all_of(out.begin() + F, out.begin() + 2 * F, [](auto w) { return w == 0; }));
  }
}

TEST(TensorScalarCumulative, ScanFromEachStartAndCarriedAccumulator) {
  HostIO io(isa::Engine::kVector);
  constexpr std::uint32_t P = 2, F = 6;
  const auto src = dense(DType::kFloat32, 8, P, F);
  const auto dst = dense(DType::kFloat32, 8, P, F, 256);
  const std::vector<float> x = {1, 2, 3, -4, 5, 0.5f, 2, 2, 2, 2, 2, 2};
  io.write(src, x);
  // reset_reduce, add after multiply by 2: a running sum of 2x.
  isa::TensorScalarCumulative op{
      dst, src, AluOp::kMultiply, 2.0f, AluOp::kAdd, 0.0f, isa::ReduceCmd::kResetReduce};
  ASSERT_TRUE(run_op(op, io));
  EXPECT_EQ(io.read(dst), (std::vector<float>{2, 6, 12, 4, 14, 15, 4, 8, 12, 16, 20, 24}));
  // reduce: continues from the accumulator the previous instruction left (15 and 24).
  op.reduce_cmd = isa::ReduceCmd::kReduce;
  ASSERT_TRUE(run_op(op, io));
  EXPECT_EQ(io.read(dst), (std::vector<float>{17, 21, 27, 19, 29, 30, 28, 32, 36, 40, 44, 48}));
  // load_reduce from imm1, max: a running maximum starting at 3.
  op = {dst, src, AluOp::kBypass, 0.0f, AluOp::kMaximum, 3.0f, isa::ReduceCmd::kLoadReduce};
  ASSERT_TRUE(run_op(op, io));
  EXPECT_EQ(io.read(dst), (std::vector<float>{3, 3, 3, 3, 5, 5, 3, 3, 3, 3, 3, 3}));
  // subtract as NKI's pseudocode has it: acc = y_i - acc.
  op = {dst, src, AluOp::kBypass, 0.0f, AluOp::kSubtract, 0.0f, isa::ReduceCmd::kResetReduce};
  ASSERT_TRUE(run_op(op, io));
  EXPECT_EQ(io.read(dst), (std::vector<float>{1, 1, 2, -6, 11, -10.5f, 2, 0, 2, 0, 2, 0}));
  // multiply resets to 1.
  op = {dst, src, AluOp::kBypass, 0.0f, AluOp::kMultiply, 0.0f, isa::ReduceCmd::kResetReduce};
  ASSERT_TRUE(run_op(op, io));
  EXPECT_EQ(io.read(dst), (std::vector<float>{1, 2, 6, -24, -120, -60, 2, 4, 8, 16, 32, 64}));
}

}  // namespace
}  // namespace trnsim::sim
