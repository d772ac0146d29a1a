// nki.collectives inside kernels (kernel/collectives.h): launched on ranks of one chip
// (launch_ranks) or of a system (launch_system), each collective computes what its
// definition says on every rank, is timed as the collective model times it, and a call that
// cannot run names the kernel's line.
#include "kernel/collectives.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "collective/collective.h"
#include "kernel/kernel.h"
#include "runtime/collective_engine.h"
#include "runtime/runtime.h"
#include "system/system.h"

namespace trnsim::runtime {
namespace {

using kernel::Tensor;

constexpr int kCollectiveRanks = 4;

// Integer-valued floats: every sum below is exact, whatever the order.
HostTensor rank_tensor(int rank, kernel::Shape shape) {
  std::vector<float> v(static_cast<std::size_t>(shape[0] * shape[1]));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(static_cast<int>(i % 13) - 6 + 100 * rank);
  return HostTensor::from_floats("x", DType::kFloat32, shape, v);
}

std::vector<std::vector<HostTensor>> rank_inputs(int ranks, kernel::Shape shape) {
  std::vector<std::vector<HostTensor>> inputs;
  for (int r = 0; r < ranks; ++r) inputs.push_back({rank_tensor(r, shape)});
  return inputs;
}

std::vector<Tensor> sum_over_ranks(std::span<const Tensor> in) {
  Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm, "out");
  ncc::all_reduce({in[0]}, {out}, {}, isa::AluOp::kAdd);
  return {out};
}

// The same through SBUF tiles: load, all-reduce the tiles (maximum), store.
std::vector<Tensor> max_of_tiles(std::span<const Tensor> in) {
  Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm, "out");
  Tensor t = nl::load(in[0]);
  Tensor m = nl::ndarray(in[0].shape(), in[0].dtype(), nl::sbuf, "m");
  ncc::all_reduce({t}, {m}, {}, isa::AluOp::kMaximum);
  nl::store(out, m);
  return {out};
}

const ncc::ReplicaGroup kPairs{{{0, 1}, {2, 3}}};

std::vector<Tensor> gather_in_pairs(std::span<const Tensor> in) {
  Tensor out = nl::ndarray({2 * in[0].dim(0), in[0].dim(1)}, in[0].dtype(), nl::shared_hbm, "out");
  ncc::all_gather({in[0]}, {out}, kPairs, 0);
  return {out};
}

std::vector<Tensor> scatter_sums(std::span<const Tensor> in) {
  Tensor out = nl::ndarray({in[0].dim(0) / kCollectiveRanks, in[0].dim(1)}, in[0].dtype(),
                           nl::shared_hbm, "out");
  ncc::reduce_scatter({in[0]}, {out}, {}, 0, isa::AluOp::kAdd);
  return {out};
}

std::vector<Tensor> exchange_all(std::span<const Tensor> in) {
  Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm, "out");
  ncc::all_to_all({in[0]}, {out}, {}, 0);
  return {out};
}

std::vector<Tensor> pass_right(std::span<const Tensor> in) {
  Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm, "out");
  ncc::collective_permute({in[0]}, {out}, {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
  return {out};
}

RanksResult run_on_chip(const kernel::KernelFn& fn, kernel::Shape shape,
                        int ranks = kCollectiveRanks, const LaunchOptions& options = {}) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const auto inputs = rank_inputs(ranks, shape);
  const BuiltKernel built = build(fn, std::vector{inputs[0][0].spec()}, chip);
  return launch_ranks(built, chip, inputs, options);
}

std::vector<float> values(const RanksResult& r, int rank) {
  return r.ranks[static_cast<std::size_t>(rank)].outputs.at(0).to_floats();
}

TEST(KernelCollectives, AllReduceGivesEveryRankTheSum) {
  const kernel::Shape shape{128, 64};
  const RanksResult r = run_on_chip(sum_over_ranks, shape);
  std::vector<float> expected(static_cast<std::size_t>(128 * 64), 0.0f);
  for (int k = 0; k < kCollectiveRanks; ++k) {
    const std::vector<float> x = rank_tensor(k, shape).to_floats();
    for (std::size_t i = 0; i < x.size(); ++i) expected[i] += x[i];
  }
  for (int k = 0; k < kCollectiveRanks; ++k) EXPECT_EQ(values(r, k), expected) << "rank " << k;
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].kind, isa::CollectiveKind::kAllReduce);
  EXPECT_EQ(r.collectives[0].members, kCollectiveRanks);
  EXPECT_EQ(r.collectives[0].bytes, 128u * 64 * 4);
  EXPECT_GT(r.collectives[0].end_ns, r.collectives[0].start_ns);
  EXPECT_GE(r.simulated_ns, r.collectives[0].end_ns);
}

TEST(KernelCollectives, SbufTilesReduceWithMaximum) {
  const kernel::Shape shape{128, 32};
  const RanksResult r = run_on_chip(max_of_tiles, shape);
  const std::vector<float> top = rank_tensor(kCollectiveRanks - 1, shape).to_floats();
  for (int k = 0; k < kCollectiveRanks; ++k) EXPECT_EQ(values(r, k), top) << "rank " << k;
}

TEST(KernelCollectives, AllGatherStaysInItsReplicaGroup) {
  const kernel::Shape shape{16, 8};
  const RanksResult r = run_on_chip(gather_in_pairs, shape);
  for (int k = 0; k < kCollectiveRanks; ++k) {
    std::vector<float> expected = rank_tensor(k / 2 * 2, shape).to_floats();
    const std::vector<float> second = rank_tensor(k / 2 * 2 + 1, shape).to_floats();
    expected.insert(expected.end(), second.begin(), second.end());
    EXPECT_EQ(values(r, k), expected) << "rank " << k;
  }
  EXPECT_EQ(r.collectives.size(), 2u);  // one per group
}

// A rank's place in its group's list is its rank in the group: [[1, 0], [3, 2]] gathers rank
// 1's data first.
std::vector<Tensor> gather_listed_backwards(std::span<const Tensor> in) {
  Tensor out = nl::ndarray({2 * in[0].dim(0), in[0].dim(1)}, in[0].dtype(), nl::shared_hbm, "out");
  ncc::all_gather({in[0]}, {out}, ncc::ReplicaGroup{{{1, 0}, {3, 2}}}, 0);
  return {out};
}

TEST(KernelCollectives, AGroupsListOrderIsItsRankOrder) {
  const kernel::Shape shape{16, 8};
  const RanksResult r = run_on_chip(gather_listed_backwards, shape);
  for (int k = 0; k < kCollectiveRanks; ++k) {
    const int first = k / 2 * 2 + 1;  // listed first
    std::vector<float> expected = rank_tensor(first, shape).to_floats();
    const std::vector<float> second = rank_tensor(first - 1, shape).to_floats();
    expected.insert(expected.end(), second.begin(), second.end());
    EXPECT_EQ(values(r, k), expected) << "rank " << k;
  }
}

TEST(KernelCollectives, ReduceScatterGivesEachRankItsSlice) {
  const kernel::Shape shape{64, 8};
  const RanksResult r = run_on_chip(scatter_sums, shape);
  const std::size_t slice = 64 / kCollectiveRanks * 8;
  for (int k = 0; k < kCollectiveRanks; ++k) {
    std::vector<float> expected(slice, 0.0f);
    for (int j = 0; j < kCollectiveRanks; ++j) {
      const std::vector<float> x = rank_tensor(j, shape).to_floats();
      for (std::size_t i = 0; i < slice; ++i)
        expected[i] += x[static_cast<std::size_t>(k) * slice + i];
    }
    EXPECT_EQ(values(r, k), expected) << "rank " << k;
  }
}

TEST(KernelCollectives, AllToAllAndPermuteMoveSlicesAndWholes) {
  const kernel::Shape shape{32, 4};
  const RanksResult a2a = run_on_chip(exchange_all, shape);
  const std::size_t slice = 32 / kCollectiveRanks * 4;
  for (int k = 0; k < kCollectiveRanks; ++k) {
    std::vector<float> expected;
    for (int j = 0; j < kCollectiveRanks; ++j) {
      const std::vector<float> x = rank_tensor(j, shape).to_floats();
      expected.insert(expected.end(), x.begin() + static_cast<std::ptrdiff_t>(k * slice),
                      x.begin() + static_cast<std::ptrdiff_t>((k + 1) * slice));
    }
    EXPECT_EQ(values(a2a, k), expected) << "rank " << k;
  }
  const RanksResult ring = run_on_chip(pass_right, shape);
  for (int k = 0; k < kCollectiveRanks; ++k)
    EXPECT_EQ(values(ring, k),
              rank_tensor((k + kCollectiveRanks - 1) % kCollectiveRanks, shape).to_floats())
        << "rank " << k;
}

TEST(KernelCollectives, TimingOnlyRunsTakeTheSameTimeAndRepeatBitForBit) {
  const kernel::Shape shape{128, 64};
  const RanksResult a = run_on_chip(sum_over_ranks, shape);
  const RanksResult b = run_on_chip(sum_over_ranks, shape);
  const RanksResult timed =
      run_on_chip(sum_over_ranks, shape, kCollectiveRanks, {.functional = false});
  EXPECT_EQ(a.simulated_ns, b.simulated_ns);
  EXPECT_EQ(a.simulated_ns, timed.simulated_ns);
  for (int k = 0; k < kCollectiveRanks; ++k)
    EXPECT_EQ(a.ranks[static_cast<std::size_t>(k)].outputs[0].bytes(),
              b.ranks[static_cast<std::size_t>(k)].outputs[0].bytes());
}

// A group naming a rank the launch lacks is an error at the kernel's line, at run time (the
// launch's size is not known when tracing).
std::vector<Tensor> group_beyond_the_launch(std::span<const Tensor> in) {
  Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm, "out");
  ncc::all_reduce({in[0]}, {out}, ncc::ReplicaGroup{{{0, 1}, {2, 9}}}, isa::AluOp::kAdd);
  return {out};
}

TEST(KernelCollectives, AGroupBeyondTheLaunchNamesTheKernelLine) {
  try {
    (void)run_on_chip(group_beyond_the_launch, {8, 8});
    FAIL() << "expected a SimError";
  } catch (const sim::SimError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("collectives_test.cpp"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 9"), std::string::npos) << what;
  }
}

std::vector<Tensor> gather_into_too_small(std::span<const Tensor> in) {
  Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm, "out");
  ncc::all_gather({in[0]}, {out}, kPairs, 0);
  return {out};
}

std::vector<Tensor> reduce_into_transposed(std::span<const Tensor> in) {
  Tensor out = nl::ndarray({in[0].dim(1), in[0].dim(0)}, in[0].dtype(), nl::shared_hbm, "out");
  ncc::all_reduce({in[0]}, {out}, {}, isa::AluOp::kAdd);
  return {out};
}

// Six rows cannot go to four ranks a whole number of rows each: known only at run time,
// when the launch gives the group its size.
std::vector<Tensor> exchange_six_rows(std::span<const Tensor> in) {
  Tensor out = nl::ndarray(in[0].shape(), in[0].dtype(), nl::shared_hbm, "out");
  ncc::all_to_all({in[0]}, {out}, {}, 0);
  return {out};
}

TEST(KernelCollectives, SlicesMustBeWholeRowsAndShapesMustMatch) {
  try {
    (void)run_on_chip(exchange_six_rows, {6, 16});
    FAIL() << "expected a SimError";
  } catch (const sim::SimError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("collectives_test.cpp"), std::string::npos) << what;
    EXPECT_NE(what.find("outermost dimension, 6, must split into a slice per rank"),
              std::string::npos)
        << what;
  }
  const arch::ChipConfig chip = arch::load_preset("trn3");
  try {
    (void)build(reduce_into_transposed, std::vector{rank_tensor(0, {8, 16}).spec()}, chip);
    FAIL() << "expected a KernelError";
  } catch (const kernel::KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("dst 0 is [16, 8], src 0 is [8, 16] (the same shape)"),
              std::string::npos)
        << e.what();
  }
}

TEST(KernelCollectives, ShapesThatCannotFitAreTracingErrors) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const HostTensor x = rank_tensor(0, {8, 8});
  try {
    (void)build(gather_into_too_small, std::vector{x.spec()}, chip);
    FAIL() << "expected a KernelError";
  } catch (const kernel::KernelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("collectives_test.cpp"), std::string::npos) << what;
    EXPECT_NE(what.find("the group size x src's"), std::string::npos) << what;
  }
}

TEST(KernelCollectives, RanksOnASystemsChipsReduceAndTakeTheModelsTime) {
  const system::SystemConfig trn2 = system::load_preset("trn2.48xlarge");
  const kernel::Shape shape{128, 64};
  const int ranks = 16;
  const auto inputs = rank_inputs(ranks, shape);
  const BuiltKernel built =
      build(sum_over_ranks, std::vector{inputs[0][0].spec()}, trn2.chip_config);
  const RanksResult r = launch_system(built, trn2, inputs, 1);
  std::vector<float> expected(static_cast<std::size_t>(128 * 64), 0.0f);
  for (int k = 0; k < ranks; ++k) {
    const std::vector<float> x = rank_tensor(k, shape).to_floats();
    for (std::size_t i = 0; i < x.size(); ++i) expected[i] += x[i];
  }
  for (int k = 0; k < ranks; ++k) EXPECT_EQ(values(r, k), expected) << "rank " << k;
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.chips.size(), static_cast<std::size_t>(ranks));
  const collective::CollectiveModel model(trn2, 1);
  const collective::Simulation e = model.simulate(collective::Op::kAllReduce, 128 * 64 * 4, ranks);
  EXPECT_EQ(r.collectives[0].algorithm, collective::name(e.algorithm));
  EXPECT_EQ(r.collectives[0].model, "event");
  EXPECT_DOUBLE_EQ(r.collectives[0].end_ns - r.collectives[0].start_ns, e.time_ns);
  // Across chips the same collective takes longer than among four ranks of one chip.
  const RanksResult local = run_on_chip(sum_over_ranks, shape);
  EXPECT_GT(r.collectives[0].end_ns - r.collectives[0].start_ns,
            local.collectives[0].end_ns - local.collectives[0].start_ns);
}

TEST(KernelCollectives, TooManyRanksForTheSystemIsAClearError) {
  const system::SystemConfig trn2 = system::load_preset("trn2.48xlarge");
  const auto inputs = rank_inputs(17, {8, 8});
  const BuiltKernel built =
      build(sum_over_ranks, std::vector{inputs[0][0].spec()}, trn2.chip_config);
  try {
    (void)launch_system(built, trn2, inputs, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("need 17 chips; the system has 16"), std::string::npos)
        << e.what();
  }
}

// Each rank stores its rank_id; a timing-only run takes the same time (no data needed).
std::vector<Tensor> store_my_rank(std::span<const Tensor> in) {
  (void)in;
  Tensor out = nl::ndarray({1, 1}, DType::kInt32, nl::shared_hbm, "out");
  Tensor t = nl::ndarray({1, 1}, DType::kInt32, nl::sbuf, "t");
  nisa::register_store(t, ncc::rank_id());
  nl::store(out, t);
  return {out};
}

TEST(KernelCollectives, RankIdIsTheRanksNumber) {
  const RanksResult r = run_on_chip(store_my_rank, {8, 8}, 3);
  for (int k = 0; k < 3; ++k) {
    const auto& bytes = r.ranks[static_cast<std::size_t>(k)].outputs.at(0).bytes();
    std::int32_t value = -1;
    ASSERT_EQ(bytes.size(), sizeof value);
    std::memcpy(&value, bytes.data(), sizeof value);
    EXPECT_EQ(value, k);
  }
  const RanksResult timed = run_on_chip(store_my_rank, {8, 8}, 3, {.functional = false});
  EXPECT_EQ(timed.simulated_ns, r.simulated_ns);
}

// Above its chunk budget the engine times a collective with the analytical model.
TEST(KernelCollectives, LargeCollectivesFallBackToTheAnalyticalModel) {
  const system::SystemConfig trn2 = system::load_preset("trn2.48xlarge");
  isa::Collective op;
  op.kind = isa::CollectiveKind::kAllGather;
  op.src = isa::AccessPattern{};
  op.src.memory = isa::Memory::kHbm;
  op.src.dtype = DType::kFloat32;
  op.src.dims[0] = {1, 1024};
  op.dst = op.src;
  op.dst.dims[0] = {1, 1024 * 16};
  std::vector<sim::CollectiveMember> members(16);
  for (int k = 0; k < 16; ++k) {
    members[static_cast<std::size_t>(k)].rank = k;
    members[static_cast<std::size_t>(k)].op = &op;
    members[static_cast<std::size_t>(k)].arrived = 10.0 * k;
  }
  detail::SystemCollectives analytical(trn2, 1, 0);
  const std::vector<sim::Duration> ends = analytical.run(members, 16, false);
  const collective::CollectiveModel model(trn2, 1);
  const double expected =
      150.0 + model.estimate(collective::Op::kAllGather, 1024 * 16 * 4, 16).time_ns;
  for (const sim::Duration end : ends) EXPECT_DOUBLE_EQ(end, expected);
  EXPECT_EQ(analytical.records().at(0).model, "analytical");
  detail::SystemCollectives event(trn2, 1);
  (void)event.run(members, 16, false);
  EXPECT_EQ(event.records().at(0).model, "event");
}

}  // namespace
}  // namespace trnsim::runtime
