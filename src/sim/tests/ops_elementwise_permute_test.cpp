// Tests of local_gather, nc_stream_shuffle and the Vector-engine transpose.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/tests/ops_test_util.h"

namespace trnsim::sim {
namespace {

using namespace ops_testing;

TEST(LocalGather, PerCorePartitionFirstIndices) {
  HostIO io(isa::Engine::kGpSimd);
  constexpr std::uint32_t P = 32, F = 20, kIdx = 2, kPer = 2;
  const auto src_ap = dense(DType::kBFloat16, 0, P, F);
  const auto index_ap = dense(DType::kUInt16, 0, P, kIdx, 1024);
  // 24 of the 32 indices per core are used (NKI num_valid_indices = 24).
  constexpr std::uint32_t kUsed = 24;
  const auto dst_ap = dense(DType::kBFloat16, 0, P, kUsed * kPer, 2048);
  std::vector<std::int64_t> src(P * F), index(P * kIdx);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::int64_t>(0x3F00 + i);
  for (std::size_t i = 0; i < index.size(); ++i)
    index[i] = static_cast<std::int64_t>((i * 7) % (F - 1));
  io.write_words(src_ap, src);
  io.write_words(index_ap, index);
  ASSERT_TRUE(run_op(isa::LocalGather{dst_ap, src_ap, index_ap, kPer}, io));
  const auto got = io.read_raw(dst_ap);
  for (std::uint32_t p = 0; p < P; ++p) {
    const std::uint32_t core = p / 16;
    for (std::uint32_t k = 0; k < kUsed; ++k) {
      // k-th index of the core: column k / 16 of partition core*16 + k % 16.
      const auto v = static_cast<std::uint32_t>(index[(core * 16 + k % 16) * kIdx + k / 16]);
      for (std::uint32_t j = 0; j < kPer; ++j)
        EXPECT_EQ(got[p * kUsed * kPer + k * kPer + j],
                  static_cast<std::uint32_t>(src[p * F + v + j]))
            << p << " " << k;
    }
  }
  index[5] = F - 1;  // its second element would be beyond the partition
  io.write_words(index_ap, index);
  EXPECT_THROW(run_op(isa::LocalGather{dst_ap, src_ap, index_ap, kPer}, io), std::out_of_range);
}

TEST(NcStreamShuffle, QuadrantMaskAndKeep) {
  HostIO io;
  constexpr std::uint32_t P = 64, F = 3;
  const auto src_ap = dense(DType::kFloat32, 0, P, F);
  const auto dst_ap = dense(DType::kFloat32, 64, P, F, 512);
  std::vector<std::int64_t> src(P * F);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::int64_t>(i + 1);
  io.write_words(src_ap, src);
  isa::NcStreamShuffle op{dst_ap, src_ap, {}};
  for (std::uint32_t i = 0; i < 32; ++i) op.mask[i] = static_cast<std::uint8_t>(31 - i);
  op.mask[3] = 255;
  op.mask[4] = 255;
  op.mask[10] = 0;
  ASSERT_TRUE(run_op(op, io));
  const auto got = io.read_raw(dst_ap);
  const std::uint32_t sentinel_word = 0xA5A5A5A5u;
  for (std::uint32_t d = 0; d < P; ++d) {
    const std::uint8_t m = op.mask[d % 32];
    for (std::uint32_t f = 0; f < F; ++f) {
      const std::uint32_t want =
          m == 255 ? sentinel_word : static_cast<std::uint32_t>(src[((d / 32) * 32 + m) * F + f]);
      EXPECT_EQ(got[d * F + f], want) << "dst partition " << d;
    }
  }
}

TEST(NcTranspose, VectorEngineTransposesWordsTensorEngineIsNotOurs) {
  HostIO io(isa::Engine::kVector);
  const auto data_ap = dense(DType::kBFloat16, 0, 3, 5);
  const auto dst_ap = dense(DType::kBFloat16, 0, 5, 3, 512);
  std::vector<std::int64_t> words(15);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::int64_t>(0x7F81 + i);
  io.write_words(data_ap, words);
  ASSERT_TRUE(run_op(isa::NcTranspose{dst_ap, data_ap}, io));
  const auto got = io.read_raw(dst_ap);
  for (std::uint32_t p = 0; p < 3; ++p)
    for (std::uint32_t i = 0; i < 5; ++i) EXPECT_EQ(got[i * 3 + p], words[p * 5 + i]);
  HostIO tensor_io(isa::Engine::kTensor);
  EXPECT_FALSE(run_op(isa::NcTranspose{dst_ap, data_ap}, tensor_io));
}

}  // namespace
}  // namespace trnsim::sim
