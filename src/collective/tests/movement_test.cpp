// All-to-all, permute and replica groups: the data each rank gets, their time in both models,
// and every bad group or pair as a clear error.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "collective/collective.h"

namespace trnsim::collective {
namespace {

constexpr std::uint64_t kMoveMiB = 1 << 20;

Buffer ints(const std::vector<std::int32_t>& values) {
  Buffer b(values.size() * 4);
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

std::vector<std::int32_t> values(const Buffer& b) {
  std::vector<std::int32_t> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(Movement, AllToAllGivesRankRChunkROfEveryRank) {
  // Rank q's element i is 10 q + i; 3 ranks of 6 elements: chunks of 2.
  std::vector<Buffer> in;
  for (int q = 0; q < 3; ++q) {
    std::vector<std::int32_t> v;
    for (int i = 0; i < 6; ++i) v.push_back(10 * q + i);
    in.push_back(ints(v));
  }
  const std::vector<Buffer> out = all_to_all(in, DType::kInt32);
  EXPECT_EQ(values(out[0]), (std::vector<std::int32_t>{0, 1, 10, 11, 20, 21}));
  EXPECT_EQ(values(out[1]), (std::vector<std::int32_t>{2, 3, 12, 13, 22, 23}));
  EXPECT_EQ(values(out[2]), (std::vector<std::int32_t>{4, 5, 14, 15, 24, 25}));
  std::vector<Buffer> four = in;
  four.push_back(in[0]);
  EXPECT_EQ(error_of([&] { (void)all_to_all(four, DType::kInt32); }),
            "all_to_all: 6 elements of int32 do not split into 4 equal chunks, one per rank");
  in[2].resize(20);
  EXPECT_EQ(error_of([&] { (void)all_to_all(in, DType::kInt32); }),
            "all_to_all: rank 2's buffer holds 20 bytes, rank 0's 24 (every rank's must be the "
            "same size)");
}

TEST(Movement, PermuteMovesBuffersAndZeroesRanksNoPairTargets) {
  const std::vector<Buffer> in = {ints({1, 2}), ints({3, 4}), ints({5, 6})};
  const std::vector<Buffer> out = permute(in, {{0, 2}, {2, 0}});
  EXPECT_EQ(values(out[0]), (std::vector<std::int32_t>{5, 6}));
  EXPECT_EQ(values(out[1]), (std::vector<std::int32_t>{0, 0}));
  EXPECT_EQ(values(out[2]), (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(error_of([&] {
              (void)permute(in, {{0, 3}});
            }),
            "permute: pair (0, 3) names rank 3, but there are 3 ranks (0 to 2)");
  EXPECT_EQ(error_of([&] {
              (void)permute(in, {{0, 2}, {1, 2}});
            }),
            "permute: rank 2 is the target of two pairs (0, 2) and (1, 2)");
  EXPECT_EQ(error_of([&] {
              (void)permute(in, {{0, 1}, {0, 2}});
            }),
            "permute: rank 0 is the source of two pairs (0, 1) and (0, 2)");
  EXPECT_EQ(ring_pairs({{0, 1, 2}, {3, 4, 5}}),
            (Pairs{{0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 5}, {5, 3}}));
}

TEST(Movement, BroadcastCopiesTheRootsBufferToEveryRank) {
  const std::vector<Buffer> in = {ints({1, 2}), ints({3, 4}), ints({5})};
  for (const Buffer& b : broadcast(in, 1)) EXPECT_EQ(values(b), (std::vector<std::int32_t>{3, 4}));
  EXPECT_EQ(error_of([&] { (void)broadcast(in, 3); }), "broadcast: root 3 is not a rank (0 to 2)");
}

TEST(Movement, ReplicaGroupsMustSplitTheRanksIntoGroupsOfOneSize) {
  EXPECT_NO_THROW(check_replica_groups({{0, 2}, {1, 3}}, 4));
  EXPECT_EQ(error_of([] {
              check_replica_groups({{0, 1}, {2, 4}}, 4);
            }),
            "replica group 1 names rank 4, but there are 4 ranks (0 to 3)");
  EXPECT_EQ(error_of([] {
              check_replica_groups({{0, 1}, {1, 2}}, 4);
            }),
            "rank 1 is in replica groups 0 and 1 (groups must not overlap)");
  EXPECT_EQ(error_of([] {
              check_replica_groups({{0, 1}, {2, 3}}, 5);
            }),
            "rank 4 is in no replica group (the groups must hold every rank taking part)");
  EXPECT_EQ(error_of([] {
              check_replica_groups({{0, 1}, {2}}, 3);
            }),
            "replica group 1 has 1 ranks, group 0 has 2 (groups of one size: the collective "
            "runs in step in every group)");
  EXPECT_EQ(error_of([] { check_replica_groups({{}, {0}}, 1); }), "replica group 0 is empty");
  EXPECT_EQ(consecutive_groups(6, 3), (ReplicaGroups{{0, 1, 2}, {3, 4, 5}}));
  EXPECT_EQ(format_groups({{0, 1}, {2, 3}}), "[[0, 1], [2, 3]]");
  EXPECT_EQ(error_of([] { (void)consecutive_groups(6, 4); }),
            "groups of 4 ranks do not divide 6 ranks");
}

TEST(Movement, EachReplicaGroupReducesOnItsOwn) {
  std::vector<Buffer> in;
  for (int r = 0; r < 4; ++r) in.push_back(ints({r, 10 * r}));
  const ReplicaGroups groups = {{0, 2}, {3, 1}};
  const std::vector<Buffer> out = in_groups(in, groups, [](std::span<const Buffer> group) {
    return all_reduce(group, DType::kInt32, Reduce::kSum, Algorithm::kRing);
  });
  EXPECT_EQ(values(out[0]), (std::vector<std::int32_t>{2, 20}));
  EXPECT_EQ(values(out[2]), (std::vector<std::int32_t>{2, 20}));
  EXPECT_EQ(values(out[1]), (std::vector<std::int32_t>{4, 40}));
  EXPECT_EQ(values(out[3]), (std::vector<std::int32_t>{4, 40}));
  // A group's order is its ranks' order: all-gather concatenates rank 3 before rank 1.
  const std::vector<Buffer> gathered =
      in_groups(in, groups, [](std::span<const Buffer> group) { return all_gather(group); });
  EXPECT_EQ(values(gathered[1]), (std::vector<std::int32_t>{3, 30, 1, 10}));
}

TEST(Movement, GroupsOnLinksOfTheirOwnTakeAsLongAsOneGroupAlone) {
  // trn2.48xlarge, one rank per chip: ranks 4k..4k+3 are one row of the snake, so four groups
  // of four each ring over links of their own (the row's wrap-around link closes each ring).
  const CollectiveModel model(system::load_preset("trn2.48xlarge"), 1);
  const Participants rows{consecutive_groups(16, 4), {}};
  const std::uint64_t bytes = 64 * kMoveMiB;
  const Estimate alone = model.estimate(Op::kAllReduce, bytes, 4, Algorithm::kRing);
  const Estimate four = model.estimate(Op::kAllReduce, bytes, 16, Algorithm::kRing, rows);
  EXPECT_EQ(four.steps, 6);
  EXPECT_NEAR(four.time_ns, alone.time_ns, 1e-9 * alone.time_ns);
  EXPECT_NEAR(model.simulate(Op::kAllReduce, bytes, 16, Algorithm::kRing, rows).time_ns,
              model.simulate(Op::kAllReduce, bytes, 4, Algorithm::kRing).time_ns,
              1e-9 * alone.time_ns);
  // Groups across the rows (ranks 0, 4, 8, 12, ...) also have links of their own here, but
  // groups of ranks two rows apart share the column links, and take longer.
  const Participants apart{{{0, 8, 1, 9}, {2, 10, 3, 11}, {4, 12, 5, 13}, {6, 14, 7, 15}}, {}};
  EXPECT_GT(model.estimate(Op::kAllReduce, bytes, 16, Algorithm::kRing, apart).time_ns,
            1.2 * alone.time_ns);
  // nccom-test's bus factor counts the ranks of one group.
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kPermute, 16), 1.0);
}

TEST(Movement, PermuteAndAllToAllAreOneStepOfDirectTransfers) {
  const CollectiveModel model(system::load_preset("trn2.48xlarge"), 1);
  const std::uint64_t bytes = 16 * kMoveMiB;
  // The default pairs are a ring over the snake: every transfer one link of its own.
  const Estimate ring = model.estimate(Op::kPermute, bytes, 16);
  EXPECT_EQ(ring.algorithm, Algorithm::kMesh);
  EXPECT_EQ(ring.steps, 1);
  EXPECT_NEAR(ring.time_ns, model.step_ns() + 300 + bytes / 256.0, 1e-9 * ring.time_ns);
  const Simulation events = model.simulate(Op::kPermute, bytes, 16);
  EXPECT_NEAR(events.time_ns, ring.time_ns, 1e-6 * ring.time_ns);
  // One pair: the other ranks sit the step out, and nothing waits for them; rank 1 ends
  // when the transfer reaches it, the others at once.
  const Participants one{{}, {{0, 1}}};
  SimulateOptions traced;
  traced.trace = true;
  const Simulation pair = model.simulate(Op::kPermute, bytes, 16, {}, one, traced);
  EXPECT_NEAR(pair.time_ns, ring.time_ns, 1e-6 * ring.time_ns);
  ASSERT_EQ(pair.rank_steps.size(), 16u);
  for (const RankStep& rs : pair.rank_steps)
    EXPECT_EQ(rs.end_ns, rs.rank <= 1 ? pair.time_ns : 0.0) << "rank " << rs.rank;
  EXPECT_NEAR(model.estimate(Op::kPermute, bytes, 16, {}, one).time_ns, ring.time_ns,
              1e-6 * ring.time_ns);
  // All-to-all: each rank sends S/16 to each of the 15 others at once.
  const Estimate a2a = model.estimate(Op::kAllToAll, bytes, 16);
  EXPECT_EQ(a2a.steps, 1);
  EXPECT_NEAR(model.simulate(Op::kAllToAll, bytes, 16).time_ns / a2a.time_ns, 1.0, 0.05);
  // Broadcast: small, the root sends S to the 15 others at once (its 4 links carry them);
  // large, a scatter then a ring all-gather: 16 steps of S/16, each one link per transfer.
  const Estimate bcast = model.estimate(Op::kBroadcast, bytes, 16);
  EXPECT_EQ(bcast.algorithm, Algorithm::kRing);
  EXPECT_EQ(bcast.steps, 16);
  EXPECT_NEAR(model.simulate(Op::kBroadcast, bytes, 16).time_ns / bcast.time_ns, 1.0, 0.05);
  EXPECT_EQ(model.estimate(Op::kBroadcast, 4096, 16).algorithm, Algorithm::kMesh);
  EXPECT_EQ(model.estimate(Op::kBroadcast, 4096, 16).steps, 1);
  EXPECT_LT(bcast.time_ns, model.estimate(Op::kBroadcast, bytes, 16, Algorithm::kMesh).time_ns);
  EXPECT_EQ(error_of([&] { (void)model.estimate(Op::kBroadcast, bytes, 16, Algorithm::kRdh); }),
            "broadcast runs as mesh (the root sends to every rank) or ring (scatter, then a ring "
            "all-gather), not rdh");
  EXPECT_EQ(error_of([&] {
              (void)model.estimate(Op::kPermute, bytes, 4, {},
                                   Participants{{{0, 1}, {2, 3}}, {{0, 2}, {2, 0}}});
            }),
            "permute pair (0, 2) joins replica groups 0 and 1 (a pair stays within a group)");
  EXPECT_EQ(error_of([&] { (void)model.simulate(Op::kAllReduce, 0, 16); }),
            "a collective of 0 bytes moves nothing to time");
  EXPECT_EQ(error_of([] { (void)CollectiveModel(system::load_preset("trn2.48xlarge"), -3); }),
            "-3 ranks per chip: a positive count (or 0 for the chip's logical cores)");
  EXPECT_EQ(error_of([&] { (void)model.estimate(Op::kAllToAll, bytes, 16, Algorithm::kRing); }),
            "all_to_all runs as one step of direct transfers (mesh), not ring");
  EXPECT_EQ(error_of([&] {
              (void)model.estimate(Op::kAllReduce, bytes, 16, {}, Participants{{}, {{0, 1}}});
            }),
            "source-target pairs belong to permute, not all_reduce");
  EXPECT_EQ(error_of([&] {
              (void)model.estimate(Op::kPermute, bytes, 16, {}, Participants{{}, {{0, 16}}});
            }),
            "permute: pair (0, 16) names rank 16, but there are 16 ranks (0 to 15)");
}

}  // namespace
}  // namespace trnsim::collective
