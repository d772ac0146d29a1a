// Backing stores: initialisation bits, HBM allocation and host access rules.
#include "sim/memory.h"

#include <gtest/gtest.h>

#include "sim/tests/test_util.h"

namespace trnsim::sim::testing {
namespace {

TEST(InitMap, TracksRangesAcrossWordBoundaries) {
  InitMap init(300);
  EXPECT_EQ(init.first_unset(0, 300), 0u);
  init.set(5, 130);
  EXPECT_EQ(init.first_unset(5, 130), 130u);
  EXPECT_EQ(init.first_unset(0, 10), 0u);
  EXPECT_EQ(init.first_unset(100, 200), 130u);
  init.set(0, 5);
  init.set(130, 300);
  EXPECT_TRUE(init.all_set(0, 300));
}

TEST(Hbm, FirstFitAlignedAllocationAndFree) {
  Hbm hbm(1 << 20);
  const auto a = hbm.allocate(100, 64);
  const auto b = hbm.allocate(10, 256);
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 256u);
  hbm.free(a);
  EXPECT_EQ(hbm.allocate(64, 64), 0u);                // the freed gap is reused
  EXPECT_THROW(hbm.allocate_at(200, 100), SimError);  // overlaps b
  EXPECT_THROW(hbm.allocate(2 << 20, 64), SimError);  // larger than the capacity
  EXPECT_EQ(hbm.find(256, 266), hbm.find(260, 261));
  EXPECT_EQ(hbm.find(256, 267), nullptr);  // runs past b's end
}

TEST(Device, HbmCapacityFromConfigWithoutBackingIt) {
  Device device(trn3());
  // 144 GiB (or whatever the preset says) of address space, none of it allocated up front.
  EXPECT_EQ(device.hbm_capacity(),
            static_cast<std::uint64_t>(trn3().hbm.capacity_gib.value * 1024 * 1024 * 1024));
  const auto high = device.hbm_capacity() - 4096;
  device.allocate_at(high, 4096);
  device.write(high + 8, std::vector<std::uint8_t>{1, 2, 3});
  EXPECT_EQ(device.read(high + 8, 3), (std::vector<std::uint8_t>{1, 2, 3}));
  EXPECT_TRUE(device.is_initialized(high + 8, 3));
  EXPECT_FALSE(device.is_initialized(high, 16));
  EXPECT_EQ(device.read(high, 1)[0], kPoisonByte);
}

TEST(Device, HostAccessOutsideAnAllocationIsAnError) {
  Device device(trn3());
  const auto a = device.allocate(64);
  const std::optional<SimError> e =
      sim_error_of([&] { device.write(a + 60, std::vector<std::uint8_t>(8, 0)); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("past the end of the allocation"), std::string::npos)
      << e->what();
  EXPECT_THROW(device.read(1 << 30, 4), SimError);
}

TEST(Core, MemoriesSizedFromConfig) {
  Device device(trn3());
  const Core& core = device.core(0);
  EXPECT_EQ(core.sbuf().partitions(), static_cast<std::uint32_t>(trn3().sbuf.partitions.value));
  EXPECT_EQ(core.sbuf().bytes_per_partition(),
            static_cast<std::uint64_t>(trn3().sbuf.bytes_per_partition.value));
  EXPECT_EQ(core.psum().bytes_per_partition(), 16u * 1024u);
  Device trn2_device(trn2());
  EXPECT_LT(trn2_device.core(0).sbuf().bytes_per_partition(), core.sbuf().bytes_per_partition());
}

}  // namespace
}  // namespace trnsim::sim::testing
