// Dynamic loops end to end (docs/dynamic-loops.md): nl::fori_loop and nl::while_loop traced
// once, compiled to loops of the instruction stream on every queue, run functionally and
// timed; and the tracer's rules as located errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "arch/tests/test_presets.h"
#include "runtime/runtime.h"

namespace trnsim::runtime {
namespace {

using kernel::Register;
using kernel::Tensor;
using numerics::DType;

constexpr std::int64_t kRows = 128, kCols = 256, kTiles = 6;

// y[t] = 2 x[t] + 1 for t in range(lower, upper): the loop loads, computes and stores tile t
// by register-relative views of the [kTiles * 128, kCols] tensors.
kernel::KernelFn scale_tiles(nl::LoopBound lower, nl::LoopBound upper) {
  return [lower, upper](std::span<const Tensor> in) {
    const Tensor y = nl::ndarray({kTiles * kRows, kCols}, DType::kFloat32, nl::shared_hbm, "y");
    // The rows outside the loop's range stay 0.
    const Tensor zero = nl::zeros({kRows, kCols}, DType::kFloat32);
    for (std::int64_t t = 0; t < kTiles; ++t) nl::store(y(nl::ds(t * kRows, kRows), nl::all), zero);
    nl::fori_loop(lower, upper, [&](const Register& i) {
      const Tensor x_tile = in[0](nl::ds(0, kRows), nl::all).offset_by(i, kRows * kCols);
      const Tensor tile = nl::load(x_tile);
      const Tensor out = nl::ndarray({kRows, kCols}, DType::kFloat32);
      nisa::tensor_scalar(out, tile, isa::AluOp::kMultiply, 2.0f,
                          {.op1 = isa::AluOp::kAdd, .operand1 = 1.0f});
      nl::store(y(nl::ds(0, kRows), nl::all).offset_by(i, kRows * kCols), out);
    });
    return std::vector<Tensor>{y};
  };
}

std::vector<float> expected(const HostTensor& x, std::int64_t lower, std::int64_t upper) {
  const std::vector<float> v = x.to_floats();
  std::vector<float> e(v.size(), 0.0f);
  for (std::int64_t t = lower; t < upper; ++t)
    for (std::int64_t k = t * kRows * kCols; k < (t + 1) * kRows * kCols; ++k)
      e[static_cast<std::size_t>(k)] = 2.0f * v[static_cast<std::size_t>(k)] + 1.0f;
  return e;
}

TEST(DynamicLoop, ForiLoopRunsItsBodyOnTheDeviceOncePerTrip) {
  const arch::ChipConfig chip = arch::testing::trn3();
  const HostTensor x = random_tensor("x", DType::kFloat32, {kTiles * kRows, kCols}, 7);
  const std::vector<kernel::TensorSpec> specs = {x.spec()};
  const BuiltKernel k = build(scale_tiles(1, 5), specs, chip, {.name = "loop"});
  // Traced once: one load, one tensor_scalar, one store in the body, whatever the trips.
  ASSERT_EQ(k.ir[0].loops.size(), 1u);
  const kernel::Loop& loop = k.ir[0].loops[0];
  EXPECT_EQ(loop.end - loop.begin, 3u);
  const LaunchResult r = launch(k, chip, std::span<const HostTensor>(&x, 1));
  EXPECT_TRUE(r.runs[0].hazards.empty());
  EXPECT_EQ(r.outputs[0].to_floats(), expected(x, 1, 5));
  // The data-path instructions of the body ran 4 times each.
  std::size_t scalar_starts = 0;
  for (const sim::Execution& e : r.runs[0].executions)
    if (std::holds_alternative<isa::TensorScalar>(k.compiled.programs[0].instructions[e.index].op))
      ++scalar_starts;
  EXPECT_EQ(scalar_starts, 4u);
  EXPECT_GT(r.simulated_ns, 0);
}

TEST(DynamicLoop, ABodyWithoutRegisterOperationsOverlapsItsTrips) {
  // The same loop twice: plain, and with a register operation in its body, which makes the
  // body two pieces with a fence each trip. Both compute the same bits without a race; the
  // plain one overlaps trip k + 1's load (into the tile trip k's multiply has read) with trip
  // k's store (simulated time, deterministic).
  const arch::ChipConfig chip = arch::testing::trn3();
  const HostTensor x = random_tensor("x", DType::kFloat32, {kTiles * kRows, kCols}, 5);
  const std::vector<kernel::TensorSpec> specs = {x.spec()};
  const auto with_register_op = [](std::span<const Tensor> in) {
    const Tensor y = nl::ndarray({kTiles * kRows, kCols}, DType::kFloat32, nl::shared_hbm, "y");
    nl::fori_loop(0, static_cast<std::int32_t>(kTiles), [&](const Register& i) {
      const Tensor tile = nl::load(in[0](nl::ds(0, kRows), nl::all).offset_by(i, kRows * kCols));
      const Register unused = nisa::register_alloc(1);  // splits the body in two pieces
      (void)unused;
      const Tensor out = nl::ndarray({kRows, kCols}, DType::kFloat32);
      nisa::tensor_scalar(out, tile, isa::AluOp::kMultiply, 2.0f);
      nl::store(y(nl::ds(0, kRows), nl::all).offset_by(i, kRows * kCols), out);
    });
    return std::vector<Tensor>{y};
  };
  const auto plain = [](std::span<const Tensor> in) {
    const Tensor y = nl::ndarray({kTiles * kRows, kCols}, DType::kFloat32, nl::shared_hbm, "y");
    nl::fori_loop(0, static_cast<std::int32_t>(kTiles), [&](const Register& i) {
      const Tensor tile = nl::load(in[0](nl::ds(0, kRows), nl::all).offset_by(i, kRows * kCols));
      const Tensor out = nl::ndarray({kRows, kCols}, DType::kFloat32);
      nisa::tensor_scalar(out, tile, isa::AluOp::kMultiply, 2.0f);
      nl::store(y(nl::ds(0, kRows), nl::all).offset_by(i, kRows * kCols), out);
    });
    return std::vector<Tensor>{y};
  };
  const LaunchResult fenced = launch(build(with_register_op, specs, chip, {.name = "fenced"}), chip,
                                     std::span<const HostTensor>(&x, 1));
  const LaunchResult overlapped = launch(build(plain, specs, chip, {.name = "overlapped"}), chip,
                                         std::span<const HostTensor>(&x, 1));
  EXPECT_TRUE(fenced.runs[0].hazards.empty());
  EXPECT_TRUE(overlapped.runs[0].hazards.empty());
  std::vector<float> doubled = x.to_floats();
  for (float& v : doubled) v *= 2.0f;
  EXPECT_EQ(fenced.outputs[0].to_floats(), doubled);
  EXPECT_EQ(overlapped.outputs[0].to_floats(), doubled);
  EXPECT_LT(overlapped.simulated_ns, fenced.simulated_ns);
}

TEST(DynamicLoop, BarriersInAnOverlappedBodyStillOrderTheTrips) {
  // Two cores swap rows through a shared slot each trip: write my row, barrier, read the
  // other core's, barrier. Trip i + 1's write may not pass the other core's read of trip i.
  constexpr std::int64_t trips = 4, cols = 64;
  const arch::ChipConfig chip = arch::testing::trn3();
  const HostTensor x = random_tensor("x", DType::kFloat32, {2, trips, cols}, 9);
  const std::vector<kernel::TensorSpec> specs = {x.spec()};
  const kernel::KernelFn swap = [](std::span<const Tensor> in) {
    const int c = nl::program_id();
    const Tensor slot = nl::ndarray({2, cols}, DType::kFloat32, nl::shared_hbm, "slot");
    const Tensor out = nl::ndarray({2, trips, cols}, DType::kFloat32, nl::shared_hbm, "out");
    nl::fori_loop(0, static_cast<std::int32_t>(trips), [&](const Register& i) {
      const Tensor mine = nl::load(in[0](c, nl::ds(0, 1), nl::all).offset_by(i, cols));
      nl::store(slot(nl::ds(c, 1), nl::all), mine);
      nisa::core_barrier();
      const Tensor theirs = nl::load(slot(nl::ds(1 - c, 1), nl::all));
      nl::store(out(c, nl::ds(0, 1), nl::all).offset_by(i, cols), theirs);
      nisa::core_barrier();
    });
    return std::vector<Tensor>{out};
  };
  const LaunchResult r = launch(build(swap, specs, chip, {.name = "swap", .lnc = 2}), chip,
                                std::span<const HostTensor>(&x, 1));
  for (const sim::RunResult& run : r.runs) EXPECT_TRUE(run.hazards.empty());
  const std::vector<float> v = x.to_floats();
  std::vector<float> want(v.size());
  const auto half = static_cast<std::ptrdiff_t>(v.size() / 2);
  std::copy(v.begin() + half, v.end(), want.begin());
  std::copy(v.begin(), v.begin() + half, want.begin() + half);
  EXPECT_EQ(r.outputs[0].to_floats(), want);
}

TEST(DynamicLoop, TripCountsFromRegistersAndAWhileLoop) {
  const arch::ChipConfig chip = arch::testing::trn3();
  const HostTensor x = random_tensor("x", DType::kFloat32, {kTiles * kRows, kCols}, 3);
  // A lower bound loaded from a tile the kernel wrote, an upper bound moved in: [2, 6).
  const kernel::KernelFn fn = [](std::span<const Tensor> in) {
    const Tensor two = nl::full({1, 1}, 2.0f, DType::kInt32);
    const Tensor nine = nl::full({1, 1}, 9.0f, DType::kInt32);
    const Register lo = nisa::register_alloc();
    const Register hi = nisa::register_alloc();
    nisa::register_load(lo, two);
    nisa::register_load(hi, nine);
    nisa::register_move(hi, 6);  // the last write wins
    return scale_tiles(lo, hi)(in);
  };
  const std::vector<kernel::TensorSpec> specs = {x.spec()};
  const BuiltKernel k = build(fn, specs, chip, {.name = "bounds"});
  const LaunchResult r = launch(k, chip, std::span<const HostTensor>(&x, 1));
  EXPECT_TRUE(r.runs[0].hazards.empty());
  EXPECT_EQ(r.outputs[0].to_floats(), expected(x, 2, 6));

  // while_loop: count down from 3, storing the counter each trip into its own element.
  const kernel::KernelFn countdown = [](std::span<const Tensor>) {
    const Tensor out = nl::ndarray({1, 4}, DType::kInt32, nl::shared_hbm, "out");
    const Tensor zeros = nl::zeros({1, 4}, DType::kInt32);
    nl::store(out, zeros);
    const Register n = nisa::register_alloc(3);
    nl::while_loop(n, [&](const Register& count) {
      const Tensor value = nl::ndarray({1, 1}, DType::kInt32);
      nisa::register_store(value, count);
      nl::store(out(0, nl::ds(0, 1)).offset_by(count, 1), value);
      const Register next = nisa::register_alloc();
      // next = count - 1, through memory: registers have no arithmetic in NKI 0.6.
      const Tensor t = nl::ndarray({1, 1}, DType::kInt32);
      nisa::register_store(t, count);
      nisa::tensor_scalar(t, t, isa::AluOp::kSubtract, 1.0f);
      nisa::register_load(next, t);
      return next;
    });
    return std::vector<Tensor>{out};
  };
  const BuiltKernel w = build(countdown, {}, chip, {.name = "countdown"});
  const LaunchResult wr = launch(w, chip, {});
  EXPECT_TRUE(wr.runs[0].hazards.empty());
  const std::vector<float> got = wr.outputs[0].to_floats();
  EXPECT_EQ(got, (std::vector<float>{0, 1, 2, 3}));
}

// Loops nest: the inner loop runs all its trips on every trip of the outer one, and its
// bounds may be the outer loop's variable. Outer i in [0, 4), inner j in [0, i): acc += x[j],
// then y[i] = acc, so y[i] holds the running sum over 0 + 1 + ... + i inner trips.
TEST(DynamicLoop, AnInnerLoopRunsAllItsTripsOnEveryOuterTrip) {
  static constexpr std::int32_t kOuter = 4;
  const arch::ChipConfig chip = arch::testing::trn3();
  const HostTensor x = random_tensor("x", DType::kFloat32, {kTiles * kRows, kCols}, 11);
  const kernel::KernelFn fn = [](std::span<const Tensor> in) {
    const Tensor y = nl::ndarray({kOuter * kRows, kCols}, DType::kFloat32, nl::shared_hbm, "y");
    const Tensor acc = nl::zeros({kRows, kCols}, DType::kFloat32);
    nl::fori_loop(0, kOuter, [&](const Register& i) {
      nl::fori_loop(0, i, [&](const Register& j) {
        const Tensor tile = nl::load(in[0](nl::ds(0, kRows), nl::all).offset_by(j, kRows * kCols));
        nisa::tensor_tensor(acc, acc, tile, isa::AluOp::kAdd);
      });
      nl::store(y(nl::ds(0, kRows), nl::all).offset_by(i, kRows * kCols), acc);
    });
    return std::vector<Tensor>{y};
  };
  const std::vector<kernel::TensorSpec> specs = {x.spec()};
  const BuiltKernel k = build(fn, specs, chip, {.name = "nested"});
  ASSERT_EQ(k.ir[0].loops.size(), 2u);
  EXPECT_EQ(k.ir[0].loops[1].parent, 1u);  // the inner loop sits in the outer one
  const LaunchResult r = launch(k, chip, std::span<const HostTensor>(&x, 1));
  EXPECT_TRUE(r.runs[0].hazards.empty());
  const std::vector<float> v = x.to_floats();
  std::vector<float> sum(static_cast<std::size_t>(kRows * kCols), 0.0f), want;
  for (std::int64_t i = 0; i < kOuter; ++i) {
    for (std::int64_t j = 0; j < i; ++j)
      for (std::size_t e = 0; e < sum.size(); ++e)
        sum[e] += v[static_cast<std::size_t>(j * kRows * kCols) + e];
    want.insert(want.end(), sum.begin(), sum.end());
  }
  EXPECT_EQ(r.outputs[0].to_floats(), want);
  std::size_t adds = 0;
  for (const sim::Execution& e : r.runs[0].executions)
    if (std::holds_alternative<isa::TensorTensor>(k.compiled.programs[0].instructions[e.index].op))
      ++adds;
  EXPECT_EQ(adds, 0u + 1u + 2u + 3u);
}

// The shapes of programs the compiler's pieces must get right: loops first and last,
// back to back, empty, of zero trips, a register operation between them, registers without
// a loop, and two programs of a logical core.
TEST(DynamicLoop, EdgeShapesOfPiecesCompileAndRun) {
  const arch::ChipConfig chip = arch::testing::trn3();
  // out[p, k] counts the trips of loop k of program p, through a tile each trip adds 1 to.
  const auto fn = [](int lnc) -> kernel::KernelFn {
    return [lnc](std::span<const Tensor>) {
      const Register trips = nisa::register_alloc(3);  // registers first
      const Tensor counts = nl::zeros({1, 4}, DType::kFloat32);
      nl::fori_loop(0, 2, [&](const Register&) {  // a loop right after
        nisa::tensor_scalar(counts(0, nl::ds(0, 1)), counts(0, nl::ds(0, 1)), isa::AluOp::kAdd,
                            1.0f);
      });
      nl::fori_loop(0, trips, [&](const Register&) {  // back to back, register bound
        nisa::tensor_scalar(counts(0, nl::ds(1, 1)), counts(0, nl::ds(1, 1)), isa::AluOp::kAdd,
                            1.0f);
      });
      nisa::register_move(trips, 0);                  // a register operation between loops
      nl::fori_loop(0, trips, [&](const Register&) {  // zero trips
        nisa::tensor_scalar(counts(0, nl::ds(2, 1)), counts(0, nl::ds(2, 1)), isa::AluOp::kAdd,
                            1.0f);
      });
      nl::fori_loop(5, 1, [](const Register&) {});  // empty, zero trips
      nl::fori_loop(0, 4, [](const Register&) {});  // empty, four trips
      const Register none = nisa::register_alloc(0);
      nl::while_loop(none, [](const Register& r) { return r; });  // a while loop of zero trips
      const Tensor out = nl::ndarray({lnc, 4}, DType::kFloat32, nl::shared_hbm, "out");
      nl::store(out(nl::ds(nl::program_id(), 1), nl::all), counts);
      nl::fori_loop(0, 1, [&](const Register&) {  // a loop last
        nisa::tensor_scalar(counts(0, nl::ds(3, 1)), counts(0, nl::ds(3, 1)), isa::AluOp::kAdd,
                            1.0f);
      });
      return std::vector<Tensor>{out};
    };
  };
  for (const int lnc : {1, 2}) {
    const BuiltKernel k = build(fn(lnc), {}, chip, {.name = "shapes", .lnc = lnc});
    const LaunchResult r = launch(k, chip, {});
    for (const sim::RunResult& run : r.runs) EXPECT_TRUE(run.hazards.empty());
    // The last loop ran after the store: its count is not in out.
    std::vector<float> want;
    for (int p = 0; p < lnc; ++p) want.insert(want.end(), {2, 3, 0, 0});
    EXPECT_EQ(r.outputs[0].to_floats(), want) << "lnc " << lnc;
  }
  // Registers without a loop take the same path.
  const BuiltKernel plain = build(
      [](std::span<const Tensor>) {
        const Tensor v = nl::full({1, 1}, 41.0f, DType::kInt32);
        const Register r = nisa::register_alloc();
        nisa::register_load(r, v);
        const Tensor w = nl::ndarray({1, 1}, DType::kInt32);
        nisa::register_store(w, r);
        const Tensor out = nl::ndarray({1, 1}, DType::kInt32, nl::shared_hbm, "out");
        nl::store(out, w);
        return std::vector<Tensor>{out};
      },
      {}, chip, {.name = "registers"});
  EXPECT_EQ(launch(plain, chip, {}).outputs[0].to_floats(), (std::vector<float>{41}));
}

// Nesting shapes: an inner loop that is its outer loop's whole body (both start and end
// together), an empty inner loop last in a body, three levels, and a while loop inside a
// fori_loop. out[k] counts the trips of the innermost body k.
TEST(DynamicLoop, NestedShapesCompileAndRun) {
  const arch::ChipConfig chip = arch::testing::trn3();
  const auto bump = [](const Tensor& counts, std::int64_t k) {
    nisa::tensor_scalar(counts(0, nl::ds(k, 1)), counts(0, nl::ds(k, 1)), isa::AluOp::kAdd, 1.0f);
  };
  const kernel::KernelFn fn = [&](std::span<const Tensor>) {
    const Tensor counts = nl::zeros({1, 3}, DType::kFloat32);
    nl::fori_loop(0, 3, [&](const Register&) {  // the inner loop is the whole body
      nl::fori_loop(0, 2, [&](const Register&) { bump(counts, 0); });
    });
    nl::fori_loop(0, 2, [&](const Register&) {  // three levels, an empty loop last
      nl::fori_loop(0, 2, [&](const Register&) {
        nl::fori_loop(0, 3, [&](const Register&) { bump(counts, 1); });
      });
      nl::fori_loop(0, 5, [](const Register&) {});
    });
    nl::fori_loop(0, 2, [&](const Register&) {  // a while loop counting down from 3 inside
      const Register n = nisa::register_alloc();
      nisa::register_move(n, 3);
      nl::while_loop(n, [&](const Register& count) {
        bump(counts, 2);
        const Tensor t = nl::ndarray({1, 1}, DType::kInt32);
        nisa::register_store(t, count);
        nisa::tensor_scalar(t, t, isa::AluOp::kSubtract, 1.0f);
        const Register next = nisa::register_alloc();
        nisa::register_load(next, t);
        return next;
      });
    });
    const Tensor out = nl::ndarray({1, 3}, DType::kFloat32, nl::shared_hbm, "out");
    nl::store(out, counts);
    return std::vector<Tensor>{out};
  };
  const BuiltKernel k = build(fn, {}, chip, {.name = "nested_shapes"});
  const LaunchResult r = launch(k, chip, {});
  EXPECT_TRUE(r.runs[0].hazards.empty());
  EXPECT_EQ(r.outputs[0].to_floats(), (std::vector<float>{6, 12, 6}));
}

std::string trace_error(const kernel::KernelFn& fn) {
  try {
    (void)kernel::trace(fn, {}, arch::testing::trn3(), {.name = "bad"});
  } catch (const kernel::KernelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a KernelError";
  return "";
}

TEST(DynamicLoop, TheTracersRulesAreErrorsAtTheKernelsLine) {
  // The loop variable is read-only.
  std::string what = trace_error([](std::span<const Tensor>) {
    nl::fori_loop(0, 4, [](const Register& i) { nisa::register_move(i, 3); });
    return std::vector<Tensor>{};
  });
  EXPECT_NE(what.find("dynamic_loop_test.cpp:"), std::string::npos) << what;
  EXPECT_NE(what.find("loop variable and the bounds of fori_loop are read-only"), std::string::npos)
      << what;
  // So are its bounds: the loop reads them on every trip.
  what = trace_error([](std::span<const Tensor>) {
    const Register hi = nisa::register_alloc(4);
    nl::fori_loop(0, hi, [&](const Register&) { nisa::register_move(hi, 2); });
    return std::vector<Tensor>{};
  });
  EXPECT_NE(what.find("bounds of fori_loop are read-only"), std::string::npos) << what;
  // A variable that would wrap past 2^31 - 1 after the last trip.
  what = trace_error([](std::span<const Tensor>) {
    nl::fori_loop(
        2147483600, 2147483647, [](const Register&) {}, 100);
    return std::vector<Tensor>{};
  });
  EXPECT_NE(what.find("would pass 2^31 - 1"), std::string::npos) << what;
  // A tile of the body is not visible after the loop.
  what = trace_error([](std::span<const Tensor>) {
    Tensor kept;
    nl::fori_loop(0, 2, [&](const Register&) { kept = nl::zeros({128, 8}, DType::kFloat32); });
    nisa::memset(kept, 1.0f);
    return std::vector<Tensor>{};
  });
  EXPECT_NE(what.find("not visible after the loop"), std::string::npos) << what;
  // In a nested loop the outer loop's variable stays read-only, and a tile of the inner body
  // is not visible after the inner loop; the step is positive.
  what = trace_error([](std::span<const Tensor>) {
    nl::fori_loop(0, 2, [](const Register& i) {
      nl::fori_loop(0, 2, [&](const Register&) { nisa::register_move(i, 1); });
    });
    return std::vector<Tensor>{};
  });
  EXPECT_NE(what.find("loop variable and the bounds of fori_loop are read-only"), std::string::npos)
      << what;
  what = trace_error([](std::span<const Tensor>) {
    nl::fori_loop(0, 2, [](const Register&) {
      Tensor kept;
      nl::fori_loop(0, 2, [&](const Register&) { kept = nl::zeros({128, 8}, DType::kFloat32); });
      nisa::memset(kept, 1.0f);
    });
    return std::vector<Tensor>{};
  });
  EXPECT_NE(what.find("not visible after the loop"), std::string::npos) << what;
  what = trace_error([](std::span<const Tensor>) {
    nl::fori_loop(
        0, 2, [](const Register&) {}, 0);
    return std::vector<Tensor>{};
  });
  EXPECT_NE(what.find("step is a positive int"), std::string::npos) << what;
  // With known bounds, a view the loop moves out of its tensor is an error at its line.
  what = trace_error([](std::span<const Tensor>) {
    const Tensor t = nl::ndarray({4, 8}, DType::kFloat32, nl::shared_hbm, "t");
    const Tensor z = nl::zeros({1, 8}, DType::kFloat32);
    nl::fori_loop(
        0, 5, [&](const Register& i) { nl::store(t(nl::ds(0, 1), nl::all).offset_by(i, 8), z); });
    return std::vector<Tensor>{t};
  });
  EXPECT_NE(what.find("reaches outside 't' when the loop variable is 4"), std::string::npos)
      << what;
}

}  // namespace
}  // namespace trnsim::runtime
