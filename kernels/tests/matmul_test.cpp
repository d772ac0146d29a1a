// The library matmul beyond the correctness cases (correctness_test.cpp): simulated time
// (tensor bound, scheduling), determinism, validation of timing-only launches, the logical
// core of two, and the shapes it refuses.
#include <gtest/gtest.h>

#include "arch/arch.h"
#include "kernels/tests/kernel_test_util.h"

namespace trnsim::kernels {
namespace {

using numerics::DType;

TEST(MatmulKernel, DmaOverlapsComputeSoTheTensorEngineBounds) {
  // Simulated time, not host time: the loads of the next K step run ahead on the DMA queues
  // while the tensor engine works, so a 2048^3 BF16 matmul is tensor bound (issue #5 asks
  // for >= 85% of peak at 4096^3; BENCHMARKS.md has that figure).
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const Problem p = trn3_problem("matmul", {2048, 2048, 2048}, DType::kBFloat16);
  RunProblemOptions timing_only;
  timing_only.functional = false;
  const ProblemReport r = run_problem(p, chip, timing_only);
  EXPECT_EQ(r.bound_queue, "tensor") << format_report(r);
  EXPECT_GT(r.percent_of_peak(), 85.0) << format_report(r);
  EXPECT_LE(r.percent_of_peak(), 100.0) << format_report(r);
}

TEST(MatmulKernel, ListScheduleIsNoSlowerThanProgramOrder) {
  // Simulated time: the list scheduler once put a load needed early behind a busy DMA queue
  // while later prefetches took the DMA engines first, 2.8 us slower than program order at
  // 1024^3 on trn3 (36.6 vs 33.8 us).
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const Problem p = trn3_problem("matmul", {1024, 1024, 1024}, DType::kBFloat16);
  RunProblemOptions scheduled, in_order;
  scheduled.functional = in_order.functional = false;
  in_order.compile.schedule = false;
  const ProblemReport s = run_problem(p, chip, scheduled);
  const ProblemReport o = run_problem(p, chip, in_order);
  EXPECT_LE(s.simulated_ns, o.simulated_ns) << format_report(s) << "\n" << format_report(o);
}

TEST(MatmulKernel, DeterministicBitsAndTime) {
  const ProblemReport a = run_kernel("matmul", "trn3", {256, 512, 384}, DType::kBFloat16);
  const ProblemReport b = run_kernel("matmul", "trn3", {256, 512, 384}, DType::kBFloat16);
  ASSERT_EQ(a.launch.outputs.size(), 1u);
  EXPECT_EQ(a.launch.outputs[0].bytes(), b.launch.outputs[0].bytes());
  EXPECT_EQ(a.simulated_ns, b.simulated_ns);
}

TEST(MatmulKernel, TimingOnlyLaunchTrustsTheCompilersValidationOnlyOnItsChip) {
  // The compiler validates its programs against the chip it compiled for; a timing-only
  // launch on that chip skips the check, on any other chip (or once the record is dropped
  // after editing a program) it validates again.
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const Problem p = trn3_problem("matmul", {256, 512, 256}, DType::kBFloat16);
  RunProblemOptions timing_only;
  timing_only.functional = false;
  ProblemReport r = build_problem(p, chip, timing_only);
  ASSERT_TRUE(r.built.compiled.validated_for.has_value());
  EXPECT_EQ(*r.built.compiled.validated_for, chip);
  launch_problem(r, p, chip, timing_only);
  const double simulated_ns = r.simulated_ns;

  // An edited program: a DMA queue the chip does not have.
  isa::Instruction& edited = r.built.compiled.programs[0].instructions.front();
  ASSERT_EQ(edited.queue.engine, isa::Engine::kDma);
  edited.queue.index = 99;
  arch::ChipConfig other = chip;
  other.hbm.bandwidth_gbps.value += 1;
  const auto expect_rejected = [&](const arch::ChipConfig& on) {
    try {
      launch_problem(r, p, on, timing_only);
      ADD_FAILURE() << "the edited program ran on " << on.name;
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("DMA queue 99 does not exist"), std::string::npos)
          << e.what();
    }
  };
  // On the chip it was validated for the record is trusted: the edit goes unchecked.
  EXPECT_NO_THROW(launch_problem(r, p, chip, timing_only));
  expect_rejected(other);
  r.built.compiled.validated_for.reset();
  expect_rejected(chip);
  EXPECT_GT(simulated_ns, 0);
}

TEST(MatmulKernel, RejectsBadShapes) {
  expect_rejected("matmul", {128, 128}, DType::kBFloat16);
}

TEST(MatmulKernel, LogicalCoreOfTwoSplitsTheWorkAndAgrees) {
  const std::vector<std::int64_t> shape = {1024, 1024, 512};
  const ProblemReport one = run_kernel("matmul", "trn3", shape, DType::kBFloat16);
  const ProblemReport two = run_kernel("matmul", "trn3", shape, DType::kBFloat16, {}, /*lnc=*/2);
  ASSERT_TRUE(two.check && one.check);
  EXPECT_TRUE(two.check->ok) << format_report(two);
  EXPECT_EQ(two.launch.runs.size(), 2u);
  EXPECT_EQ(one.launch.outputs[0].bytes(), two.launch.outputs[0].bytes());
  // Half the blocks per core: clearly faster, and no faster than perfect scaling.
  EXPECT_LT(two.simulated_ns, 0.75 * one.simulated_ns) << format_report(one) << format_report(two);
  EXPECT_GT(two.simulated_ns, 0.45 * one.simulated_ns);
  // trn3 allows LNC 1 and 2 only.
  EXPECT_THROW(run_kernel("matmul", "trn3", shape, DType::kBFloat16, {}, /*lnc=*/3),
               kernel::KernelError);
}

}  // namespace
}  // namespace trnsim::kernels
