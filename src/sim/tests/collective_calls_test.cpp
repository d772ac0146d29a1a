// The simulator's side of kernels' collectives (isa::Collective): calls meet by rank set and
// order, every member's dst takes what the engine computed and completes when it says, and
// calls that cannot meet are errors naming both lines or a deadlock naming the missing ranks.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/tests/test_util.h"

namespace trnsim::sim {
namespace {

using namespace trnsim::sim::testing;
using isa::Memory;

constexpr std::uint32_t kCollRows = 4, kCollCols = 8;

// A collective of the [4, 8] fp32 tile at SBUF byte 0 into the one at byte 256.
isa::Instruction collective(isa::CollectiveKind kind, isa::AluOp op = isa::AluOp::kAdd,
                            std::vector<std::uint32_t> groups = {}, std::uint32_t group_size = 0,
                            int line = 1) {
  isa::Collective c;
  c.kind = kind;
  c.op = op;
  c.groups = std::move(groups);
  c.group_size = group_size;
  c.src = sbuf(DType::kFloat32, 0, kCollRows, 0, {{1, kCollCols}});
  c.dst = sbuf(DType::kFloat32, 0, kCollRows, 256, {{1, kCollCols}});
  isa::Instruction inst = make(dma_q(0), c);
  inst.origin = {"k.py", static_cast<std::uint32_t>(line), 5};
  return inst;
}

// Gives every member its own rank in every byte, each completing `took` after the last
// arrival; counts its calls.
class StampEngine final : public CollectiveEngine {
 public:
  double took = 50;
  int calls = 0;
  std::vector<int> sizes;
  std::vector<Duration> run(std::span<CollectiveMember> members, int /*ranks*/,
                            bool functional) override {
    ++calls;
    sizes.push_back(static_cast<int>(members.size()));
    Duration last = 0;
    for (CollectiveMember& m : members) {
      last = std::max(last, m.arrived);
      if (functional) m.dst.assign(m.src.size(), static_cast<std::uint8_t>(m.rank));
    }
    return std::vector<Duration>(members.size(), last + took);
  }
};

MultiRunResult run_ranks(Device& device, const std::vector<isa::Program>& programs,
                         CollectiveEngine* engine) {
  std::vector<CoreProgram> launches;
  for (std::size_t r = 0; r < programs.size(); ++r)
    launches.push_back({static_cast<int>(r), &programs[r], nullptr, static_cast<int>(r)});
  RunOptions options;
  options.collectives = engine;
  return run_cores(device, launches, options);
}

std::vector<isa::Program> every_rank(int ranks, const isa::Instruction& inst) {
  std::vector<isa::Program> programs(static_cast<std::size_t>(ranks));
  for (isa::Program& p : programs) p.instructions.push_back(inst);
  return programs;
}

TEST(CollectiveCalls, GroupsMeetApartAndEachMemberGetsItsData) {
  Device device(trn3(), 4);
  for (int c = 0; c < 4; ++c)
    fill_onchip(device.core(c), Memory::kSbuf, 0, kCollRows, 0,
                std::vector<std::uint8_t>(kCollRows * kCollCols * 4, 1));
  StampEngine engine;
  const MultiRunResult r = run_ranks(
      device,
      every_rank(4, collective(isa::CollectiveKind::kAllReduce, isa::AluOp::kAdd, {0, 2, 1, 3}, 2)),
      &engine);
  EXPECT_EQ(engine.calls, 2);  // the groups {0, 2} and {1, 3}
  EXPECT_EQ(engine.sizes, (std::vector<int>{2, 2}));
  for (int c = 0; c < 4; ++c) {
    const auto got = read_rows(device.core(c), Memory::kSbuf, 0, kCollRows, 256, kCollCols * 4);
    EXPECT_EQ(got, std::vector<std::uint8_t>(got.size(), static_cast<std::uint8_t>(c)));
    EXPECT_DOUBLE_EQ(r.cores[static_cast<std::size_t>(c)].times[0].end, 50.0);
  }
}

TEST(CollectiveCalls, CallsThatDisagreeNameBothLines) {
  Device device(trn3(), 2);
  for (int c = 0; c < 2; ++c)
    fill_onchip(device.core(c), Memory::kSbuf, 0, kCollRows, 0,
                std::vector<std::uint8_t>(kCollRows * kCollCols * 4, 1));
  std::vector<isa::Program> programs(2);
  programs[0].instructions.push_back(
      collective(isa::CollectiveKind::kAllReduce, isa::AluOp::kAdd, {}, 0, 10));
  programs[1].instructions.push_back(
      collective(isa::CollectiveKind::kAllReduce, isa::AluOp::kMaximum, {}, 0, 20));
  StampEngine engine;
  try {
    run_ranks(device, programs, &engine);
    FAIL() << "expected a SimError";
  } catch (const SimError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("k.py:20:5: error"), std::string::npos) << what;
    EXPECT_NE(what.find("it reduces with maximum, the other with add"), std::string::npos) << what;
    EXPECT_NE(what.find("k.py:10:5: note: the call it meets"), std::string::npos) << what;
  }
}

TEST(CollectiveCalls, ARankThatNeverComesIsADeadlockNamingIt) {
  Device device(trn3(), 3);
  for (int c = 0; c < 3; ++c)
    fill_onchip(device.core(c), Memory::kSbuf, 0, kCollRows, 0,
                std::vector<std::uint8_t>(kCollRows * kCollCols * 4, 1));
  std::vector<isa::Program> programs = every_rank(3, collective(isa::CollectiveKind::kAllGather));
  programs[2].instructions.clear();  // rank 2 skips it
  programs[2].instructions.push_back(make(dma_q(0), isa::SemaphoreOp{}));
  StampEngine engine;
  try {
    run_ranks(device, programs, &engine);
    FAIL() << "expected a deadlock";
  } catch (const SimError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("deadlock"), std::string::npos) << what;
    EXPECT_NE(what.find("waits at all_gather among ranks 0 to 2: rank 2 has not arrived"),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(engine.calls, 0);
}

TEST(CollectiveCalls, WithoutAnEngineACollectiveIsAnError) {
  Device device(trn3(), 1);
  fill_onchip(device.core(0), Memory::kSbuf, 0, kCollRows, 0,
              std::vector<std::uint8_t>(kCollRows * kCollCols * 4, 1));
  isa::Program p;
  p.instructions.push_back(collective(isa::CollectiveKind::kAllReduce));
  try {
    run(device, p);
    FAIL() << "expected a SimError";
  } catch (const SimError& e) {
    EXPECT_NE(std::string(e.what()).find("a collective needs a launch of ranks"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace trnsim::sim
