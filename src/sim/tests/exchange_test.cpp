// sendrecv between the cores of a logical core: the data each core receives, when the
// transfers start and end, and the errors of exchanges that cannot complete.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "isa/validate.h"
#include "sim/tests/test_util.h"
#include "sim/tests/timing_test_util.h"
#include "sim/timing_model.h"

namespace trnsim::sim {
namespace {

using namespace trnsim::sim::testing;
using isa::Memory;

constexpr std::uint32_t kRows = 4, kCols = 8;
constexpr std::uint64_t kRowBytes = kCols * 4;

// A sendrecv of the [4, 8] fp32 tile at SBUF byte `src` into the one at byte `dst`, after
// `waits`.
isa::Instruction sendrecv(std::uint32_t send_to, std::uint32_t recv_from, std::uint32_t pipe = 0,
                          std::vector<isa::SemWait> waits = {}, std::uint64_t src = 0,
                          std::uint64_t dst = 256) {
  isa::SendRecv x;
  x.src = sbuf(DType::kFloat32, 0, kRows, src, {{1, kCols}});
  x.dst = sbuf(DType::kFloat32, 0, kRows, dst, {{1, kCols}});
  x.send_to = send_to;
  x.recv_from = recv_from;
  x.pipe = pipe;
  return make(dma_q(0), x, std::move(waits));
}

// Distinct floats per core: core c's element i is 100 c + i.
std::vector<std::uint8_t> tile_of(int core) {
  std::vector<float> v(kRows * kCols);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = 100.0f * static_cast<float>(core) + static_cast<float>(i);
  return to_bytes(v);
}

std::vector<float> received(const Device& device, int core, std::uint64_t offset = 256) {
  return from_bytes<float>(
      read_rows(device.core(core), Memory::kSbuf, 0, kRows, offset, kRowBytes));
}

TEST(SendRecv, TwoCoresSwapTheirTiles) {
  Device device(trn3(), 2);
  for (int c = 0; c < 2; ++c) fill_onchip(device.core(c), Memory::kSbuf, 0, kRows, 0, tile_of(c));
  isa::Program p0, p1;
  p0.instructions.push_back(sendrecv(1, 1));
  p1.instructions.push_back(sendrecv(0, 0));
  const MultiRunResult r = run_cores(device, {{{0, &p0, nullptr}, {1, &p1, nullptr}}});
  EXPECT_EQ(received(device, 0), from_bytes<float>(tile_of(1)));
  EXPECT_EQ(received(device, 1), from_bytes<float>(tile_of(0)));
  EXPECT_TRUE(r.cores[0].hazards.empty());
  // The source tiles are untouched.
  EXPECT_EQ(received(device, 0, 0), from_bytes<float>(tile_of(0)));
}

TEST(SendRecv, TheTransferStartsWhenBothCoresHaveStartedAndTakesADmaTime) {
  // Core 1 reaches its sendrecv only after a 6.9 us vector op: core 0 waits (stall, not busy)
  // and both transfers then take the sender's DMA time.
  const arch::ChipConfig& chip = trn3();
  const isa::TensorScalar longer = sbuf_tensor_scalar(DType::kFloat32, 128, 16384, 0, 65536);
  isa::Program p0, p1;
  p0.instructions.push_back(sendrecv(1, 1));
  p1.instructions.push_back(make(vector_q(), longer, {}, {{0, 1}}));
  p1.instructions.push_back(sendrecv(0, 0, 0, {{0, 1}}));
  Device device(chip, 2);
  ChipTimingModel timing(chip, 2);
  const std::vector<CoreProgram> launches = {{0, &p0, timing.core(0)}, {1, &p1, timing.core(1)}};
  const MultiRunResult r = run_cores(device, launches, timing_only_options());
  const Duration arrives = r.cores[1].times[0].end;
  EXPECT_GT(arrives, 5000.0);
  EXPECT_DOUBLE_EQ(r.cores[0].times[0].start, arrives);  // waiting is not the transfer
  EXPECT_DOUBLE_EQ(r.cores[1].times[1].start, arrives);
  const Duration took = r.cores[0].times[0].end - arrives;
  EXPECT_GE(took, chip.dma.fixed_latency_ns);          // a DMA: at least its fixed latency
  EXPECT_LT(took, chip.dma.fixed_latency_ns + 200.0);  // of a 128-byte-per-row tile
  EXPECT_DOUBLE_EQ(r.cores[1].times[1].end, r.cores[0].times[0].end);
  const ChipTimingReport report = timing.chip_report(launches, r);
  const QueueTiming& dma0 = report.cores[0].queues.at(0);
  EXPECT_DOUBLE_EQ(dma0.stalled_ns, arrives);
  EXPECT_NEAR(dma0.busy_ns, took, 1e-9);
}

TEST(SendRecv, PipesPairInOrderAndACoreMayExchangeWithItself) {
  // Two exchanges on pipe 0, then one on pipe 5: each meets its own counterpart.
  Device device(trn3(), 2);
  for (int c = 0; c < 2; ++c) {
    fill_onchip(device.core(c), Memory::kSbuf, 0, kRows, 0, tile_of(c));
    fill_onchip(device.core(c), Memory::kSbuf, 0, kRows, 512, tile_of(10 + c));
  }
  isa::Program p0, p1;
  p0.instructions.push_back(sendrecv(1, 1, 0, {}, 0, 256));
  p0.instructions.push_back(sendrecv(1, 1, 5, {}, 512, 768));
  p1.instructions.push_back(sendrecv(0, 0, 5, {}, 512, 768));  // on another queue order
  p1.instructions.back().queue = dma_q(1);
  p1.instructions.push_back(sendrecv(0, 0, 0, {}, 0, 256));
  run_cores(device, {{{0, &p0, nullptr}, {1, &p1, nullptr}}});
  EXPECT_EQ(received(device, 0, 256), from_bytes<float>(tile_of(1)));
  EXPECT_EQ(received(device, 0, 768), from_bytes<float>(tile_of(11)));
  EXPECT_EQ(received(device, 1, 768), from_bytes<float>(tile_of(10)));

  // A core may exchange with itself: a copy that pairs like any other.
  Device one(trn3(), 1);
  fill_onchip(one.core(0), Memory::kSbuf, 0, kRows, 0, tile_of(7));
  isa::Program self;
  self.instructions.push_back(sendrecv(0, 0));
  run(one, self);
  EXPECT_EQ(received(one, 0), from_bytes<float>(tile_of(7)));
}

TEST(SendRecv, OrdersWhatTheSenderDidBeforeAfterWhatTheReceiverDoesAfter) {
  // Core 0 stores a tile to HBM, then exchanges; core 1 exchanges, then loads that HBM. The
  // exchange orders them: no race between the cores.
  Device device(trn3(), 2);
  device.allocate_at(0, 4096);
  for (int c = 0; c < 2; ++c) fill_onchip(device.core(c), Memory::kSbuf, 0, kRows, 0, tile_of(c));
  isa::DmaCopy store;
  store.src = sbuf(DType::kFloat32, 0, kRows, 0, {{1, kCols}});
  store.dst = hbm(DType::kFloat32, 0, kRows, kCols, {{1, kCols}});
  isa::DmaCopy load;
  load.src = store.dst;
  load.dst = sbuf(DType::kFloat32, 0, kRows, 1024, {{1, kCols}});
  isa::Program p0, p1;
  p0.instructions.push_back(make(dma_q(1), store, {}, {{0, 1}}));
  p0.instructions.push_back(sendrecv(1, 1, 0, {{0, 1}}));
  p1.instructions.push_back(sendrecv(0, 0));
  p1.instructions.back().signals.push_back({1, 1});
  p1.instructions.push_back(make(dma_q(1), load, {{1, 1}}));
  const MultiRunResult r = run_cores(device, {{{0, &p0, nullptr}, {1, &p1, nullptr}}});
  EXPECT_TRUE(r.cores[0].hazards.empty());
  EXPECT_TRUE(r.cores[1].hazards.empty()) << r.cores[1].hazards.front().diagnostic.message;
  EXPECT_EQ(received(device, 1, 1024), from_bytes<float>(tile_of(0)));
}

TEST(SendRecv, ARankIsAPlaceInTheGroupNotAPhysicalCore) {
  // Two groups (ranks of an SPMD launch) on cores 0-3: rank 1 of group 1 is core 3.
  Device device(trn3(), 4);
  for (int c = 0; c < 4; ++c) fill_onchip(device.core(c), Memory::kSbuf, 0, kRows, 0, tile_of(c));
  isa::Program first, second;
  first.instructions.push_back(sendrecv(1, 1));
  second.instructions.push_back(sendrecv(0, 0));
  run_cores(device, {{{0, &first, nullptr, 0},
                      {1, &second, nullptr, 0},
                      {2, &first, nullptr, 1},
                      {3, &second, nullptr, 1}}});
  EXPECT_EQ(received(device, 2), from_bytes<float>(tile_of(3)));
  EXPECT_EQ(received(device, 3), from_bytes<float>(tile_of(2)));
}

TEST(SendRecv, AnExchangeThatCannotCompleteIsAClearError) {
  Device device(trn3(), 2);
  fill_onchip(device.core(0), Memory::kSbuf, 0, kRows, 0, tile_of(0));
  isa::Program p0, p1;
  p0.instructions.push_back(sendrecv(1, 1));
  p1.instructions.push_back(make(sync_q(), isa::SemaphoreOp{}));
  const std::vector<CoreProgram> launches = {{0, &p0, nullptr}, {1, &p1, nullptr}};
  std::optional<SimError> e = sim_error_of([&] { run_cores(device, launches); }, "a deadlock");
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("waits at sendrecv on pipe 0: core 1 has not posted "
                                        "the matching receive; core 1 has not sent to it"),
            std::string::npos)
      << e->what();

  // A peer outside the launch, and shapes that differ between the two sides.
  const std::vector<CoreProgram> alone = {{0, &p0, nullptr}};
  e = sim_error_of([&] { run_cores(device, alone); });
  ASSERT_TRUE(e);
  EXPECT_NE(e->why().find("sendrecv send_to core 1 of its logical core, but 1 core is launched"),
            std::string::npos)
      << e->what();
  isa::Program narrow;
  isa::Instruction x = sendrecv(0, 0);
  std::get<isa::SendRecv>(x.op).src.dims[0].count = 4;
  std::get<isa::SendRecv>(x.op).dst.dims[0].count = 4;
  narrow.instructions.push_back(x);
  fill_onchip(device.core(1), Memory::kSbuf, 0, kRows, 0, tile_of(1));
  e = sim_error_of([&] { run_cores(device, {{{0, &p0, nullptr}, {1, &narrow, nullptr}}}); });
  ASSERT_TRUE(e);
  EXPECT_NE(e->why().find("the sent and received tiles must have the same dtype and shape"),
            std::string::npos)
      << e->what();
}

TEST(SendRecv, ValidationRefusesWhatNkiRefuses) {
  isa::SendRecv x = std::get<isa::SendRecv>(sendrecv(1, 1).op);
  x.dst.memory = Memory::kPsum;
  x.recv_from = 2;
  isa::Instruction inst = make(dma_q(0), x);
  const std::vector<isa::Violation> v = isa::check_instruction(inst, 0, trn3());
  std::string all;
  for (const isa::Violation& one : v) all += one.operand + ": " + one.message + "\n";
  EXPECT_NE(all.find("dst"), std::string::npos) << all;
  EXPECT_NE(all.find("recv_from: core 2 of a logical core; trn3's largest has 2"),
            std::string::npos)
      << all;
  // NeuronCore-v2 has no sendrecv.
  EXPECT_FALSE(isa::check_instruction(sendrecv(1, 1), 0, arch::load_preset("trn1")).empty());
}

}  // namespace
}  // namespace trnsim::sim
