// The analytical collective model on system presets: step counts, the busiest channel of each
// step, transfers sharing a link, ranks on one chip, the algorithm choice and its errors.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "collective/collective.h"

namespace trnsim::collective {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

TEST(CollectiveTime, BusFactorsAreNccomTests) {
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 16), 2.0 * 15 / 16);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kReduceScatter, 2), 0.5);
}

TEST(CollectiveTime, TheAlgorithmFollowsTheRuntimesSweetRanges) {
  EXPECT_EQ(choose_algorithm(Op::kAllReduce, 512 * 1024, 16), Algorithm::kMesh);
  EXPECT_EQ(choose_algorithm(Op::kAllReduce, 2 * kMiB, 16), Algorithm::kRdh);
  EXPECT_EQ(choose_algorithm(Op::kAllReduce, 2 * kMiB, 12), Algorithm::kRing);  // not 2^k
  EXPECT_EQ(choose_algorithm(Op::kAllReduce, 512 * kMiB, 16), Algorithm::kRing);
}

TEST(CollectiveTime, ARingOverTheTorusUsesEachLinkOnce) {
  // One rank per chip of trn2.48xlarge's 4x4 torus, chips in ring order (a snake: row 0
  // left to right, row 1 right to left, ..., and back up over the column's wrap-around
  // link): every transfer of a step has a link of its own, so each step moves S/16 over one
  // 256 GB/s link in one hop.
  const CollectiveModel model(system::load_preset("trn2.48xlarge"), 1);
  const std::uint64_t bytes = 256 * kMiB;
  const Estimate e = model.estimate(Op::kAllReduce, bytes, 16, Algorithm::kRing);
  EXPECT_EQ(e.steps, 30);
  EXPECT_NEAR(e.transfer_ns, 30 * (bytes / 16.0) / 256, 1e-6 * e.transfer_ns);
  EXPECT_NEAR(e.latency_ns, 30 * (model.step_ns() + 300.0), 1e-9 * e.latency_ns);
  EXPECT_DOUBLE_EQ(e.time_ns, e.transfer_ns + e.latency_ns);
  // The bus bandwidth approaches the link's 256 GB/s.
  const double busbw = bus_factor(Op::kAllReduce, 16) * bytes / e.time_ns;
  EXPECT_GT(busbw, 0.95 * 256);
  EXPECT_LE(busbw, 256);
}

TEST(CollectiveTime, MeshOversubscribesLinksAndRdhHalves) {
  const CollectiveModel model(system::load_preset("trn2.48xlarge"), 1);
  const std::uint64_t bytes = 64 * kMiB;
  const Estimate ring = model.estimate(Op::kAllReduce, bytes, 16, Algorithm::kRing);
  const Estimate mesh = model.estimate(Op::kAllReduce, bytes, 16, Algorithm::kMesh);
  const Estimate rdh = model.estimate(Op::kAllReduce, bytes, 16, Algorithm::kRdh);
  EXPECT_EQ(mesh.steps, 2);
  EXPECT_EQ(rdh.steps, 8);
  // Every rank sends 15 chunks at once: the busiest link carries several of them.
  EXPECT_GT(mesh.transfer_ns, 2 * (bytes / 16.0) / 256 * 2);
  // Few steps: mesh and RDH pay less start cost than the ring's 30 steps.
  EXPECT_LT(mesh.latency_ns, ring.latency_ns);
  EXPECT_LT(rdh.latency_ns, ring.latency_ns);
  // A small message is latency-bound: mesh wins there.
  EXPECT_LT(model.estimate(Op::kAllReduce, 4096, 16, Algorithm::kMesh).time_ns,
            model.estimate(Op::kAllReduce, 4096, 16, Algorithm::kRing).time_ns);
}

TEST(CollectiveTime, RanksOfOneChipShareItsHbm) {
  // trn2 at its default logical-core size of 2 has 4 ranks per chip: 4 ranks all on chip 0,
  // every transfer through its HBM (read and write: half of 2.9 TB/s).
  const CollectiveModel model(system::load_preset("trn2.48xlarge"));
  EXPECT_EQ(model.ranks_per_chip(), 4);
  EXPECT_EQ(model.max_ranks(), 64);
  const std::uint64_t bytes = 64 * kMiB;
  const Estimate e = model.estimate(Op::kAllGather, bytes, 4, Algorithm::kRing);
  EXPECT_EQ(e.steps, 3);
  EXPECT_NEAR(e.transfer_ns, 3 * 4 * (bytes / 4.0) / 1450, 1e-6 * e.transfer_ns);
  EXPECT_EQ(e.bound, "chip 0's HBM");
}

TEST(CollectiveTime, AcrossNodesTheChoiceIsHierarchical) {
  // Two trn2.48xlarge over EFA, 2 ranks per chip: 32 ranks per node.
  system::SystemConfig two = system::load_preset("trn2.48xlarge");
  two.instances = 2;
  const CollectiveModel model(two, 2);
  EXPECT_EQ(model.nodes_of(64), 2);
  EXPECT_EQ(model.nodes_of(32), 1);
  const Estimate e = model.estimate(Op::kAllReduce, 256 * kMiB, 64);
  EXPECT_EQ(e.algorithm, Algorithm::kHierarchical);
  // 31 steps within the nodes, 2 across them, 31 within again.
  EXPECT_EQ(e.steps, 31 + 2 + 31);
  // Every chip's EFA link works at once: far faster than one ring through one of them.
  const Estimate ring = model.estimate(Op::kAllReduce, 256 * kMiB, 64, Algorithm::kRing);
  EXPECT_LT(e.time_ns, ring.time_ns / 3);
  // Ranks must spread evenly over the nodes.
  EXPECT_THROW((void)model.estimate(Op::kAllReduce, kMiB, 40), std::invalid_argument);
}

TEST(CollectiveTime, BadRankCountsAreClearErrors) {
  const CollectiveModel model(system::load_preset("trn2.48xlarge"));
  const auto message = [&](int ranks, std::optional<Algorithm> a) {
    try {
      (void)model.estimate(Op::kAllReduce, kMiB, ranks, a);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(65, {}), "65 ranks on trn2.48xlarge: it holds 1 to 64 (16 chips of 4 ranks)");
  EXPECT_EQ(message(0, {}), "0 ranks on trn2.48xlarge: it holds 1 to 64 (16 chips of 4 ranks)");
  EXPECT_EQ(message(12, Algorithm::kRdh),
            "rdh (recursive halving-doubling) needs a power-of-two number of ranks, not 12");
  EXPECT_THROW(CollectiveModel(system::load_preset("trn2.48xlarge"), 9), std::invalid_argument);
}

}  // namespace
}  // namespace trnsim::collective
