// DMA semantics: copies with casts and strides, near-memory accumulate, transpose, indirect
// gather/scatter, and the bounds rules of HBM allocations.
#include <gtest/gtest.h>

#include "sim/memory.h"
#include "sim/tests/test_util.h"

namespace trnsim::sim::testing {
namespace {

isa::Program one(isa::QueueId q, isa::Operation op) {
  isa::Program program;
  program.instructions.push_back(make(q, std::move(op)));
  return program;
}

TEST(DmaCopy, HbmToSbufSameTypeIsBitExactThroughStrides) {
  Device device(trn3());
  const std::uint32_t rows = 16, cols = 24;
  const auto base = device.allocate(rows * cols * 4);
  std::vector<std::uint32_t> host(rows * cols);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = 0x7FC00001u + static_cast<std::uint32_t>(i) * 0x01010101u;
  device.write(base, to_bytes(host));
  // Read every other column of rows 0..15 (row step = cols elements), in reverse column
  // order: a negative step from the last even column.
  isa::DmaCopy copy;
  copy.src = hbm(DType::kFloat32, base + (cols - 2) * 4, rows, cols, {{-2, cols / 2}});
  copy.dst = sbuf(DType::kFloat32, 0, rows, 128, {{1, cols / 2}});
  run(device, one(dma_q(0), copy));
  const auto out = from_bytes<std::uint32_t>(
      read_rows(device.core(0), isa::Memory::kSbuf, 0, rows, 128, cols / 2 * 4));
  for (std::uint32_t r = 0; r < rows; ++r)
    for (std::uint32_t j = 0; j < cols / 2; ++j)
      ASSERT_EQ(out[r * (cols / 2) + j], host[r * cols + (cols - 2 - 2 * j)]);
}

TEST(DmaCopy, CastsThroughFp32WithRoundToNearestEven) {
  Device device(trn3());
  const std::vector<float> values = {1.0f,
                                     1.00390625f /* 1 + 2^-8: tie -> even 1.0 */,
                                     1.01171875f /* 1 + 3*2^-8: tie -> up */,
                                     -3.14159f,
                                     65504.0f,
                                     1e-3f,
                                     -0.0f,
                                     3.0e38f};
  const auto base = device.allocate(values.size() * 4);
  device.write(base, to_bytes(values));
  isa::DmaCopy copy;
  copy.src = hbm(DType::kFloat32, base, 2, 4, {{1, 4}});
  copy.dst = sbuf(DType::kBFloat16, 0, 2, 0, {{1, 4}});
  run(device, one(dma_q(0), copy));
  const auto out =
      from_bytes<std::uint16_t>(read_rows(device.core(0), isa::Memory::kSbuf, 0, 2, 0, 8));
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(out[i], f32_to_bf16_rne(values[i])) << i;
}

TEST(DmaCopy, ReshapesRowMajorAndCopiesHbmToHbm) {
  Device device(trn3());
  std::vector<std::uint16_t> host(64);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::uint16_t>(i * 3 + 1);
  const auto src = device.allocate(128), dst = device.allocate(128);
  device.write(src, to_bytes(host));
  isa::DmaCopy copy;  // [8, 8] -> [4, 16] (same element order)
  copy.src = hbm(DType::kBFloat16, src, 8, 8, {{1, 8}});
  copy.dst = hbm(DType::kBFloat16, dst, 4, 16, {{1, 16}});
  run(device, one(dma_q(2), copy));
  EXPECT_EQ(from_bytes<std::uint16_t>(device.read(dst, 128)), host);
}

TEST(DmaCopy, NearMemoryAccumulateAddsIntoSbuf) {
  Device device(trn3());
  Core& core = device.core(0);
  const std::vector<float> a = {1.5f, -2.0f, 1e-8f, 100.0f}, b = {0.25f, 2.0f, 1.0f, -0.5f};
  const auto src = device.allocate(16);
  device.write(src, to_bytes(a));
  fill_onchip(core, isa::Memory::kSbuf, 0, 1, 0, to_bytes(b));
  isa::DmaCopy copy = dma_load(DType::kFloat32, src, 1, 4, 0);
  copy.accumulate = isa::DmaAccumulate::kAdd;
  run(device, one(dma_q(0), copy));
  const auto out = from_bytes<float>(read_rows(core, isa::Memory::kSbuf, 0, 1, 0, 16));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], a[i] + b[i]);
}

TEST(DmaTranspose, SwapsPartitionAndFreeBitExact) {
  Device device(trn3());
  const std::uint32_t p = 16, f = 8;
  std::vector<std::uint16_t> host(p * f);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::uint16_t>(0xFF00 + i);
  const auto src = device.allocate(host.size() * 2);
  device.write(src, to_bytes(host));
  isa::DmaTranspose tr;
  tr.src = hbm(DType::kBFloat16, src, p, f, {{1, f}});
  tr.dst = sbuf(DType::kBFloat16, 0, f, 0, {{1, p}});
  run(device, one(dma_q(0), tr));
  const auto out =
      from_bytes<std::uint16_t>(read_rows(device.core(0), isa::Memory::kSbuf, 0, f, 0, p * 2));
  for (std::uint32_t i = 0; i < f; ++i)
    for (std::uint32_t j = 0; j < p; ++j) ASSERT_EQ(out[i * p + j], host[j * f + i]);
}

struct IndirectFixture {
  Device device{trn3()};
  static constexpr std::uint32_t kTableRows = 10, kWidth = 6, kPicked = 4;
  std::uint64_t table = 0;
  std::vector<float> host;
  IndirectFixture() {
    host.resize(kTableRows * kWidth);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f;
    table = device.allocate(host.size() * 4);
    device.write(table, to_bytes(host));
  }
  void set_index(const std::vector<std::int32_t>& rows) {
    fill_onchip(device.core(0), isa::Memory::kSbuf, 0, static_cast<std::uint32_t>(rows.size()),
                4096, to_bytes(rows));
  }
  isa::AccessPattern index() const { return sbuf(DType::kInt32, 0, kPicked, 4096, {{1, 1}}); }
  isa::AccessPattern table_ap() const {
    return hbm(DType::kFloat32, table, kTableRows, kWidth, {{1, kWidth}});
  }
  isa::AccessPattern tile() const { return sbuf(DType::kFloat32, 0, kPicked, 0, {{1, kWidth}}); }
  // The indirect DMA of `mode` on the table rows the index picks: gathered into the tile or
  // scattered from it.
  isa::DmaIndirect indirect(isa::IndirectMode mode) const {
    isa::DmaIndirect op;
    op.mode = mode;
    const bool gather = mode == isa::IndirectMode::kGather;
    op.src = gather ? table_ap() : tile();
    op.dst = gather ? tile() : table_ap();
    op.index = index();
    return op;
  }
};

TEST(DmaIndirect, GatherRowsByIndex) {
  IndirectFixture fx;
  const std::vector<std::int32_t> rows = {7, 0, 7, 3};
  fx.set_index(rows);
  run(fx.device, one(dma_q(0), fx.indirect(isa::IndirectMode::kGather)));
  const auto out = from_bytes<float>(
      read_rows(fx.device.core(0), isa::Memory::kSbuf, 0, fx.kPicked, 0, fx.kWidth * 4));
  for (std::uint32_t r = 0; r < fx.kPicked; ++r)
    for (std::uint32_t j = 0; j < fx.kWidth; ++j)
      ASSERT_EQ(out[r * fx.kWidth + j], fx.host[static_cast<std::size_t>(rows[r]) * fx.kWidth + j]);
}

TEST(DmaIndirect, ScatterRowsByIndex) {
  IndirectFixture fx;
  const std::vector<std::int32_t> rows = {9, 2, 5, 1};
  fx.set_index(rows);
  std::vector<float> tile(fx.kPicked * fx.kWidth);
  for (std::size_t i = 0; i < tile.size(); ++i) tile[i] = -1.0f - static_cast<float>(i);
  fill_onchip(fx.device.core(0), isa::Memory::kSbuf, 0, fx.kPicked, 0, to_bytes(tile));
  run(fx.device, one(dma_q(0), fx.indirect(isa::IndirectMode::kScatter)));
  auto expected = fx.host;
  for (std::uint32_t r = 0; r < fx.kPicked; ++r)
    for (std::uint32_t j = 0; j < fx.kWidth; ++j)
      expected[static_cast<std::size_t>(rows[r]) * fx.kWidth + j] = tile[r * fx.kWidth + j];
  EXPECT_EQ(from_bytes<float>(fx.device.read(fx.table, fx.host.size() * 4)), expected);
}

TEST(DmaIndirect, IndexOutOfRangeNamesTheRow) {
  IndirectFixture fx;
  fx.set_index({1, 2, 10, 0});
  const std::optional<SimError> e =
      sim_error_of([&] { run(fx.device, one(dma_q(0), fx.indirect(isa::IndirectMode::kGather))); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->index(), 0u);
  EXPECT_NE(e->why().find("index entry 2 is 10"), std::string::npos) << e->what();
}

TEST(DmaIndirect, ScatterAddAddsIntoTheRowsAndSkipsOutOfRangeOnes) {
  IndirectFixture fx;
  const std::vector<std::int32_t> rows = {9, 2, 40, 1};  // row 40 does not exist: skipped
  fx.set_index(rows);
  std::vector<float> tile(fx.kPicked * fx.kWidth);
  for (std::size_t i = 0; i < tile.size(); ++i) tile[i] = 0.25f + static_cast<float>(i);
  fill_onchip(fx.device.core(0), isa::Memory::kSbuf, 0, fx.kPicked, 0, to_bytes(tile));
  isa::DmaIndirect op = fx.indirect(isa::IndirectMode::kScatter);
  op.accumulate = isa::DmaAccumulate::kAdd;
  op.oob = isa::OobMode::kSkip;
  run(fx.device, one(dma_q(0), op));
  auto expected = fx.host;
  for (std::uint32_t r = 0; r < fx.kPicked; ++r) {
    if (rows[r] >= static_cast<std::int32_t>(fx.kTableRows)) continue;
    for (std::uint32_t j = 0; j < fx.kWidth; ++j)
      expected[static_cast<std::size_t>(rows[r]) * fx.kWidth + j] += tile[r * fx.kWidth + j];
  }
  EXPECT_EQ(from_bytes<float>(fx.device.read(fx.table, fx.host.size() * 4)), expected);
}

TEST(DmaIndirect, GatherAddAddsTheRowsToTheTile) {
  IndirectFixture fx;
  const std::vector<std::int32_t> rows = {7, 0, 7, 3};  // a repeated row is fine to read
  fx.set_index(rows);
  const std::vector<float> tile(fx.kPicked * fx.kWidth, 0.5f);
  fill_onchip(fx.device.core(0), isa::Memory::kSbuf, 0, fx.kPicked, 0, to_bytes(tile));
  isa::DmaIndirect op = fx.indirect(isa::IndirectMode::kGather);
  op.accumulate = isa::DmaAccumulate::kAdd;
  run(fx.device, one(dma_q(0), op));
  const auto out = from_bytes<float>(
      read_rows(fx.device.core(0), isa::Memory::kSbuf, 0, fx.kPicked, 0, fx.kWidth * 4));
  for (std::uint32_t r = 0; r < fx.kPicked; ++r)
    for (std::uint32_t j = 0; j < fx.kWidth; ++j)
      ASSERT_EQ(out[r * fx.kWidth + j],
                0.5f + fx.host[static_cast<std::size_t>(rows[r]) * fx.kWidth + j]);
}

TEST(DmaIndirect, AScatterAddWithARepeatedIndexIsAnError) {
  IndirectFixture fx;
  fx.set_index({4, 6, 4, 0});
  fill_onchip(fx.device.core(0), isa::Memory::kSbuf, 0, fx.kPicked, 0,
              to_bytes(std::vector<float>(fx.kPicked * fx.kWidth, 1.0f)));
  isa::DmaIndirect op = fx.indirect(isa::IndirectMode::kScatter);
  op.accumulate = isa::DmaAccumulate::kAdd;
  const std::optional<SimError> e = sim_error_of([&] { run(fx.device, one(dma_q(0), op)); });
  ASSERT_TRUE(e);
  EXPECT_NE(e->why().find("index entries 0 and 2 both name row 4"), std::string::npos) << e->what();
}

TEST(DmaIndirect, AGatheringTransposeReadsTheIndexByColumnsAndSkipsOutOfRangeRows) {
  // A bf16 table of 10 rows of 6 words; index [128 partitions, 2 per partition]: gathered row
  // j = k * 128 + p is table row index[p, k] (the columns one after another); indices 10 and
  // 11 are past the table and skipped, so their dst columns keep what dst held.
  Device device(trn3());
  constexpr std::uint32_t kTable = 10, kWidth = 6, kParts = 128, kCols = 2, kRows = kParts * kCols;
  std::vector<std::uint16_t> table(kTable * kWidth);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<std::uint16_t>(0x3F80 + i);
  const std::uint64_t at = device.allocate(table.size() * 2);
  device.write(at, to_bytes(table));
  std::vector<std::uint32_t> index(kRows);
  for (std::uint32_t p = 0; p < kParts; ++p)
    for (std::uint32_t k = 0; k < kCols; ++k) index[p * kCols + k] = (p * 3 + k * 5) % 12;
  fill_onchip(device.core(0), isa::Memory::kSbuf, 0, kParts, 4096, to_bytes(index));
  fill_onchip(device.core(0), isa::Memory::kSbuf, 0, kWidth, 0,
              to_bytes(std::vector<std::uint16_t>(std::size_t{kWidth} * kRows, 0xBF80)));
  isa::DmaIndirect op;
  op.src = hbm(DType::kBFloat16, at, kTable, kWidth, {{1, kWidth}});
  op.dst = sbuf(DType::kBFloat16, 0, kWidth, 0, {{1, kRows}});
  op.index = sbuf(DType::kUInt32, 0, kParts, 4096, {{1, kCols}});
  op.transpose = true;
  op.oob = isa::OobMode::kSkip;
  run(device, one(dma_q(0), op));
  const auto out = from_bytes<std::uint16_t>(
      read_rows(device.core(0), isa::Memory::kSbuf, 0, kWidth, 0, kRows * 2));
  for (std::uint32_t f = 0; f < kWidth; ++f)
    for (std::uint32_t j = 0; j < kRows; ++j) {
      const std::uint32_t row = index[(j % kParts) * kCols + j / kParts];
      const std::uint16_t want = row >= kTable ? std::uint16_t{0xBF80} : table[row * kWidth + f];
      ASSERT_EQ(out[f * kRows + j], want) << "f " << f << " j " << j;
    }
}

TEST(HbmStorage, ATimingOnlyRunNeedsNoHostMemoryForItsAllocations) {
  // 64 GiB of HBM allocated: a timing-only run touches no data, so no host storage is made;
  // the bytes read as never written. The first functional access creates it.
  Device device(trn3());
  constexpr std::uint64_t kBig = std::uint64_t{64} << 30;
  device.allocate_at(0, kBig);
  isa::DmaCopy load = dma_load(DType::kBFloat16, kBig - 128 * 256, 128, 128, 0);
  isa::Program program;
  program.instructions.push_back(make(dma_q(0), load));
  RunOptions timing_only;
  timing_only.functional = false;
  EXPECT_EQ(run(device, program, timing_only).instructions_executed, 1u);
  EXPECT_FALSE(device.hbm().find(0, kBig)->materialized());
  EXPECT_FALSE(device.is_initialized(kBig - 16, 16));
  EXPECT_EQ(device.read(kBig - 4, 4), std::vector<std::uint8_t>(4, kPoisonByte));

  Device small(trn3());
  small.allocate_at(0, 128 * 256);
  load.src = hbm(DType::kBFloat16, 0, 128, 128, {{1, 128}});
  program.instructions[0] = make(dma_q(0), load);
  EXPECT_FALSE(small.hbm().find(0, 1)->materialized());
  // A functional run reads it: never written, an error naming the uninitialised bytes.
  EXPECT_THROW(run(small, program), SimError);
  EXPECT_TRUE(small.hbm().find(0, 1)->materialized());
  small.write(0, std::vector<std::uint8_t>(128 * 256, 0x3f));
  EXPECT_TRUE(small.is_initialized(0, 128 * 256));
  EXPECT_EQ(run(small, program).instructions_executed, 1u);
}

TEST(DmaCopy, ReadingPastAnHbmAllocationIsAnError) {
  Device device(trn3());
  const auto base = device.allocate(64);
  device.write(base, std::vector<std::uint8_t>(64, 0));
  isa::DmaCopy copy = dma_load(DType::kFloat32, base, 2, 16, 0);  // 128 bytes from a 64-byte buffer
  const std::optional<SimError> e = sim_error_of([&] { run(device, one(dma_q(0), copy)); });
  ASSERT_TRUE(e);
  EXPECT_NE(e->why().find("operand 'src'"), std::string::npos) << e->what();
  EXPECT_NE(e->why().find("past the end of the allocation"), std::string::npos) << e->what();
}

}  // namespace
}  // namespace trnsim::sim::testing
