// SPMD launches (runtime::launch_ranks): each rank computes what a launch of its own would,
// with HBM tensors of its own, barriers that stay within the rank and the chip's HBM shared.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "arch/arch.h"
#include "kernel/kernel.h"
#include "runtime/runtime.h"

namespace trnsim::runtime {
namespace {

using kernel::Tensor;

// out = exp(x) + 1 over [256, 64] fp32 in two tiles.
std::vector<Tensor> exp_plus_one(std::span<const Tensor> in) {
  Tensor y = nl::ndarray({256, 64}, DType::kFloat32, nl::shared_hbm, "y");
  for (std::int64_t r0 = 0; r0 < 256; r0 += 128) {
    Tensor t = nl::load(in[0](nl::ds(r0, 128), nl::all));
    Tensor s = nl::ndarray({128, 64}, DType::kFloat32, nl::sbuf, "s");
    nisa::tensor_scalar(s, nl::exp(t), isa::AluOp::kAdd, 1.0f);
    nl::store(y(nl::ds(r0, 128), nl::all), s);
  }
  return {y};
}

// A logical core of two that swaps halves through an HBM tensor of the logical core (shared_hbm,
// not returned): program p writes rows [128p, 128p + 128) of `scratch`, both meet at a barrier,
// then p copies the other program's rows to its own rows of the output. Without the barrier (or
// with one that let another rank's core through) the read would race the other core's write.
std::vector<Tensor> swap_halves(std::span<const Tensor> in) {
  const std::int64_t p = nl::program_id();
  Tensor scratch = nl::ndarray({256, 32}, DType::kFloat32, nl::shared_hbm, "scratch");
  Tensor out = nl::ndarray({256, 32}, DType::kFloat32, nl::shared_hbm, "out");
  nl::store(scratch(nl::ds(p * 128, 128), nl::all), nl::load(in[0](nl::ds(p * 128, 128), nl::all)));
  nisa::core_barrier();
  const std::int64_t other = 1 - p;
  nl::store(out(nl::ds(p * 128, 128), nl::all),
            nl::load(scratch(nl::ds(other * 128, 128), nl::all)));
  return {out};
}

std::vector<std::vector<HostTensor>> inputs_of(int ranks, kernel::Shape shape) {
  std::vector<std::vector<HostTensor>> inputs;
  for (int r = 0; r < ranks; ++r)
    inputs.push_back({random_tensor("x", DType::kFloat32, shape, 100 + r)});
  return inputs;
}

TEST(LaunchRanks, EachRankComputesWhatALaunchOfItsOwnWould) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const std::vector<std::vector<HostTensor>> inputs = inputs_of(3, {256, 64});
  const BuiltKernel built = build(exp_plus_one, std::vector{inputs[0][0].spec()}, chip);
  const RanksResult all = launch_ranks(built, chip, inputs);
  ASSERT_EQ(all.ranks.size(), 3u);
  ASSERT_TRUE(all.chip_timing.has_value());
  EXPECT_EQ(all.chip_timing->cores.size(), 3u);
  for (std::size_t r = 0; r < inputs.size(); ++r) {
    SCOPED_TRACE(r);
    const LaunchResult alone = launch(built, chip, inputs[r]);
    ASSERT_EQ(all.ranks[r].outputs.size(), 1u);
    EXPECT_EQ(all.ranks[r].outputs[0].bytes(), alone.outputs[0].bytes());
    EXPECT_GT(all.ranks[r].simulated_ns, 0);
    EXPECT_LE(all.ranks[r].simulated_ns, all.simulated_ns);
    // Sharing HBM never makes a rank faster than it runs alone.
    EXPECT_GE(all.ranks[r].simulated_ns, alone.simulated_ns);
  }
  // Different inputs, different outputs: the ranks did not all read rank 0's tensors.
  EXPECT_NE(all.ranks[0].outputs[0].bytes(), all.ranks[1].outputs[0].bytes());
  // Deterministic: the same bits and time again.
  const RanksResult again = launch_ranks(built, chip, inputs);
  EXPECT_EQ(again.simulated_ns, all.simulated_ns);
  for (std::size_t r = 0; r < inputs.size(); ++r)
    EXPECT_EQ(again.ranks[r].outputs[0].bytes(), all.ranks[r].outputs[0].bytes());
}

TEST(LaunchRanks, BarriersAndInternalHbmTensorsStayWithinTheRank) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const std::vector<std::vector<HostTensor>> inputs = inputs_of(4, {256, 32});
  const BuiltKernel built =
      build(swap_halves, std::vector{inputs[0][0].spec()}, chip, {.name = "swap", .lnc = 2});
  const RanksResult all = launch_ranks(built, chip, inputs);  // 4 ranks x 2 cores: the chip
  ASSERT_EQ(all.ranks.size(), 4u);
  ASSERT_TRUE(all.chip_timing.has_value());
  EXPECT_EQ(all.chip_timing->cores.size(), 8u);
  for (std::size_t r = 0; r < inputs.size(); ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(all.ranks[r].runs.size(), 2u);
    ASSERT_TRUE(all.ranks[r].chip_timing.has_value());  // the rank's two cores
    const std::vector<float> x = inputs[r][0].to_floats();
    const std::vector<float> y = all.ranks[r].outputs.at(0).to_floats();
    ASSERT_EQ(y.size(), x.size());
    for (std::size_t i = 0; i < y.size(); ++i) {
      const std::size_t swapped = (i + 128 * 32) % (256 * 32);
      ASSERT_EQ(y[i], x[swapped]) << "element " << i;
    }
  }
}

TEST(LaunchRanks, RanksThatDoNotFitTheChipAreAClearError) {
  const arch::ChipConfig chip = arch::load_preset("trn1");  // 2 cores
  const std::vector<std::vector<HostTensor>> inputs = inputs_of(3, {256, 64});
  const BuiltKernel built = build(exp_plus_one, std::vector{inputs[0][0].spec()}, chip);
  try {
    (void)launch_ranks(built, chip, inputs);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("3 ranks of 1 core from core 0 need 3 cores; trn1 has 2"),
              std::string::npos)
        << e.what();
  }
  // A rank's input of the wrong size names the rank.
  std::vector<std::vector<HostTensor>> wrong = inputs_of(2, {256, 64});
  wrong[1][0] = HostTensor::zeros("x", DType::kFloat32, {128, 64});
  try {
    (void)launch_ranks(built, chip, wrong);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("rank 1: ", 0), 0u) << e.what();
  }
  // No ranks at all.
  EXPECT_THROW((void)launch_ranks(built, chip, std::vector<std::vector<HostTensor>>{}),
               std::invalid_argument);
}

TEST(LaunchRanks, RanksWhoseHbmDoesNotFitAreRefusedBeforeTheyRun) {
  // A chip of 64 MiB HBM: 8 ranks of a kernel with 16 MiB of HBM tensors need 128 MiB.
  arch::ChipConfig chip = arch::load_preset("trn3");
  chip.hbm.capacity_gib.value = 1.0 / 16;
  const kernel::Shape shape{2048, 1024};  // 8 MiB in, 8 MiB out
  std::vector<std::vector<HostTensor>> inputs;
  for (int r = 0; r < 8; ++r) inputs.push_back({HostTensor::zeros("x", DType::kFloat32, shape)});
  const BuiltKernel built = build(
      [](std::span<const Tensor> in) {
        Tensor y = nl::ndarray({2048, 1024}, DType::kFloat32, nl::shared_hbm, "y");
        nl::store(y(nl::ds(0, 128), nl::ds(0, 8)), nl::load(in[0](nl::ds(0, 128), nl::ds(0, 8))));
        return std::vector<Tensor>{y};
      },
      std::vector{inputs[0][0].spec()}, chip);
  try {
    (void)launch_ranks(built, chip, inputs, {.functional = false});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("8 ranks of kernel"), std::string::npos) << what;
    EXPECT_NE(what.find("of HBM"), std::string::npos) << what;
  }
}

// Program p loads its half of x, swaps it with the other program by sendrecv and stores what
// it received as its half of the output: out = x with halves swapped, and no HBM in between.
std::vector<Tensor> swap_by_sendrecv(std::span<const Tensor> in) {
  const std::int64_t p = nl::program_id();
  Tensor out = nl::ndarray({256, 32}, DType::kFloat32, nl::shared_hbm, "out");
  Tensor mine = nl::load(in[0](nl::ds(p * 128, 128), nl::all));
  Tensor theirs = nl::ndarray({128, 32}, DType::kFloat32, nl::sbuf, "theirs");
  const int other = static_cast<int>(1 - p);
  nisa::sendrecv(mine, theirs, other, other, /*pipe_id=*/0);
  nl::store(out(nl::ds(p * 128, 128), nl::all), theirs);
  return {out};
}

TEST(LaunchRanks, SendRecvSwapsTilesWithinEachRank) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const std::vector<std::vector<HostTensor>> inputs = inputs_of(3, {256, 32});
  const BuiltKernel built = build(swap_by_sendrecv, std::vector{inputs[0][0].spec()}, chip,
                                  {.name = "sendrecv", .lnc = 2});
  const RanksResult all = launch_ranks(built, chip, inputs);
  for (std::size_t r = 0; r < inputs.size(); ++r) {
    SCOPED_TRACE(r);
    const std::vector<float> x = inputs[r][0].to_floats();
    const std::vector<float> y = all.ranks[r].outputs.at(0).to_floats();
    for (std::size_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(y[i], x[(i + 128 * 32) % (256 * 32)]) << "element " << i;
    for (const sim::RunResult& run : all.ranks[r].runs) EXPECT_TRUE(run.hazards.empty());
  }
  // A peer outside the logical core is an error at the kernel's line.
  try {
    (void)build(
        [](std::span<const Tensor> in) {
          Tensor t = nl::load(in[0](nl::ds(0, 128), nl::all));
          Tensor u = nl::ndarray({128, 32}, DType::kFloat32, nl::sbuf, "u");
          nisa::sendrecv(t, u, 2, 0, 0);
          return std::vector<Tensor>{};
        },
        std::vector{inputs[0][0].spec()}, chip, {.name = "bad", .lnc = 2});
    FAIL() << "expected kernel::KernelError";
  } catch (const kernel::KernelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("sendrecv send_to_rank 2: the logical core has programs 0 to 1"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("ranks_test.cpp:"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace trnsim::runtime
