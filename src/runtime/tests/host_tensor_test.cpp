// Host tensors: random inputs generated only when their contents are needed, with the same
// bits whenever and wherever they are generated; launches that do and do not need them.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <thread>

#include "arch/arch.h"
#include "kernel/kernel.h"
#include "runtime/runtime.h"

namespace trnsim::runtime {
namespace {

using kernel::Tensor;

// out = in * 2 over a [256, 64] fp32 tensor, two tiles.
std::vector<Tensor> doubled(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  Tensor y = nl::ndarray({x.dim(0), x.dim(1)}, DType::kFloat32, nl::shared_hbm, "y");
  for (std::int64_t r0 = 0; r0 < x.dim(0); r0 += 128) {
    Tensor t = nl::load(x(nl::ds(r0, 128), nl::all));
    Tensor s = nl::ndarray({128, x.dim(1)}, DType::kFloat32, nl::sbuf, "s");
    nisa::tensor_scalar(s, t, isa::AluOp::kMultiply, 2.0f);
    nl::store(y(nl::ds(r0, 128), nl::all), s);
  }
  return {y};
}

TEST(HostTensor, RandomValuesAreGeneratedOnFirstAccessOnly) {
  const HostTensor t = random_tensor("x", DType::kBFloat16, {64, 48}, 5, -2.0f, 3.0f);
  EXPECT_FALSE(t.generated());
  EXPECT_EQ(t.byte_size(), 64u * 48u * 2u);
  EXPECT_EQ(t.spec().shape, (kernel::Shape{64, 48}));
  EXPECT_FALSE(t.generated());  // neither the size nor the spec generates
  const std::vector<std::uint8_t>& bytes = t.bytes();
  EXPECT_TRUE(t.generated());
  ASSERT_EQ(bytes.size(), t.byte_size());
  for (const float v : t.to_floats()) {
    EXPECT_GE(v, -2.0f);
    EXPECT_LE(v, 3.0f);  // bf16 rounding may reach the bound
  }
  EXPECT_EQ(&t.bytes(), &bytes);  // generated once
}

TEST(HostTensor, SameSeedSameBitsWhenGeneratedAndOtherSeedDiffers) {
  const HostTensor a = random_tensor("a", DType::kFloat8E4M3, {300, 7}, 11);
  const HostTensor b = random_tensor("b", DType::kFloat8E4M3, {300, 7}, 11);
  const HostTensor c = random_tensor("c", DType::kFloat8E4M3, {300, 7}, 12);
  EXPECT_EQ(a.bytes(), b.bytes());
  EXPECT_NE(a.bytes(), c.bytes());
  // The values are those of the documented formula, encoded by from_floats.
  const HostTensor f = random_tensor("f", DType::kFloat32, {3, 5}, 1);
  const HostTensor g = HostTensor::from_floats("g", DType::kBFloat16, {3, 5}, f.to_floats());
  EXPECT_EQ(random_tensor("h", DType::kBFloat16, {3, 5}, 1).bytes(), g.bytes());
}

TEST(HostTensor, CopiesShareGeneratedValuesButEditsStayPrivate) {
  HostTensor original = random_tensor("x", DType::kFloat32, {8, 8}, 3);
  HostTensor copy = original;
  EXPECT_EQ(&copy.bytes(), &original.bytes());  // generated once for both
  const std::vector<std::uint8_t> before = original.bytes();
  copy.mutable_bytes()[0] ^= 0xff;
  EXPECT_EQ(original.bytes(), before);
  EXPECT_NE(copy.bytes(), before);
  EXPECT_TRUE(copy.generated());
}

TEST(HostTensor, ConcurrentFirstAccessGeneratesOnce) {
  const HostTensor t = random_tensor("x", DType::kBFloat16, {512, 512}, 9);
  std::vector<const std::vector<std::uint8_t>*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i)
    threads.emplace_back([&, i] { seen[i] = &t.bytes(); });
  for (auto& th : threads) th.join();
  for (const auto* s : seen) EXPECT_EQ(s, seen.front());
  EXPECT_EQ(t.bytes(), random_tensor("y", DType::kBFloat16, {512, 512}, 9).bytes());
}

TEST(HostTensor, ImpossibleShapeIsAClearError) {
  try {
    (void)random_tensor("bad", DType::kFloat32, {4, -3}, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bad"), std::string::npos);
  }
}

TEST(Launch, TimingOnlyLeavesRandomInputsUngeneratedFunctionalUsesTheirValues) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  const std::vector<HostTensor> inputs = {random_tensor("x", DType::kFloat32, {256, 64}, 4)};
  const BuiltKernel built = build(doubled, std::vector{inputs[0].spec()}, chip);

  const LaunchResult timed = launch(built, chip, inputs, {.functional = false});
  EXPECT_GT(timed.simulated_ns, 0);
  EXPECT_TRUE(timed.outputs.empty());
  EXPECT_FALSE(inputs[0].generated());

  const LaunchResult run = launch(built, chip, inputs);
  EXPECT_TRUE(inputs[0].generated());
  ASSERT_EQ(run.outputs.size(), 1u);
  const std::vector<float> x = inputs[0].to_floats(), y = run.outputs[0].to_floats();
  ASSERT_EQ(x.size(), y.size());
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], 2.0f * x[i]) << "element " << i;
  EXPECT_EQ(run.simulated_ns, timed.simulated_ns);  // the data does not change the time
}

TEST(Launch, InputOfTheWrongSizeIsRejected) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  HostTensor x = HostTensor::zeros("x", DType::kFloat32, {256, 64});
  const BuiltKernel built = build(doubled, std::vector{x.spec()}, chip);
  x.mutable_bytes().pop_back();
  try {
    (void)launch(built, chip, std::vector{x});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("holds 65535 bytes, not 65536"), std::string::npos)
        << e.what();
  }
}

TEST(Launch, RandomInputReshapedAfterItsRecipeIsRejectedUngenerated) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  HostTensor x = random_tensor("x", DType::kFloat32, {128, 64}, 2);
  x.shape = {256, 64};  // the recipe still makes 128 x 64 values
  EXPECT_EQ(x.stored_size(), 128u * 64u * 4u);
  const BuiltKernel built = build(doubled, std::vector{x.spec()}, chip);
  try {
    (void)launch(built, chip, std::vector{x}, {.functional = false});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("holds 32768 bytes, not 65536"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(x.generated());
}

TEST(HostTensor, DeferredContentsAreMadeOnceOnFirstAccessAndSizeChecked) {
  int made = 0;
  const HostTensor t = HostTensor::deferred("t", DType::kUInt8, {2, 3}, [&made] {
    ++made;
    return std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6};
  });
  EXPECT_FALSE(t.generated());
  EXPECT_EQ(made, 0);
  EXPECT_EQ(t.bytes(), (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(t.bytes().size(), 6u);
  EXPECT_EQ(made, 1);
  const HostTensor wrong = HostTensor::deferred("wrong", DType::kFloat32, {2, 3},
                                                [] { return std::vector<std::uint8_t>(5); });
  EXPECT_THROW((void)wrong.bytes(), std::logic_error);
}

TEST(HostTensor, AShapeOfMoreThan2To63ElementsIsAClearError) {
  try {
    (void)random_tensor("huge", DType::kBFloat16, {4'000'000'000, 4'000'000'000}, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("more elements than 2^63"), std::string::npos) << e.what();
  }
}

// out = in[0:128, 0:64]: a tiny program over an input of any size.
std::vector<Tensor> first_tile(std::span<const Tensor> in) {
  Tensor y = nl::ndarray({128, 64}, DType::kFloat32, nl::shared_hbm, "y");
  nl::store(y, nl::load(in[0](nl::ds(0, 128), nl::ds(0, 64))));
  return {y};
}

// 64 TiB of input fits a chip given 1 PiB of HBM but no host: the functional run is refused
// with both figures before anything is allocated, and the timing-only run needs no data.
TEST(Launch, AFunctionalRunLargerThanTheHostIsRefusedBeforeItAllocates) {
  const arch::ChipConfig chip =
      arch::load_json_text(R"({"base":"trn3","hbm":{"capacity_gib":1048576}})", "big.json");
  const std::vector<HostTensor> inputs = {
      random_tensor("x", DType::kFloat32, {std::int64_t{1} << 32, std::int64_t{1} << 12}, 1)};
  const BuiltKernel built = build(first_tile, std::vector{inputs[0].spec()}, chip);
  try {
    (void)launch(built, chip, inputs);
    FAIL() << "expected sim::SimError";
  } catch (const sim::SimError& e) {
    EXPECT_NE(std::string(e.what()).find("of host memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--timing-only"), std::string::npos) << e.what();
  }
  const LaunchResult timed = launch(built, chip, inputs, {.functional = false});
  EXPECT_GT(timed.simulated_ns, 0);
  EXPECT_FALSE(inputs[0].generated());
}

// An uninitialised read names the tile the kernel declared, not only the byte.
TEST(Launch, AnUninitialisedReadNamesTheTileAndItsLine) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  int line = 0;
  const BuiltKernel built = build(
      [&line](std::span<const Tensor>) {
        Tensor y = nl::ndarray({128, 64}, DType::kFloat32, nl::shared_hbm, "y");
        line = __LINE__ + 1;
        Tensor never = nl::ndarray({128, 64}, DType::kFloat32, nl::sbuf, "never_written");
        nl::store(y, never);
        return std::vector<Tensor>{y};
      },
      std::vector{HostTensor::zeros("x", DType::kFloat32, {128, 64}).spec()}, chip);
  try {
    (void)launch(built, chip, std::vector{HostTensor::zeros("x", DType::kFloat32, {128, 64})});
    FAIL() << "expected sim::SimError";
  } catch (const sim::SimError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("reads uninitialised memory"), std::string::npos) << what;
    EXPECT_NE(what.find(fmt::format("(tile 'never_written' (declared at {}", __FILE__)),
              std::string::npos)
        << what;
    EXPECT_NE(what.find(fmt::format(":{}:", line)), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace trnsim::runtime

namespace trnsim::runtime {
namespace {

TEST(Launch, InputsTheKernelWritesAreReadBackOnRequest) {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  // x += 1 in place; y is only read.
  const auto in_place = [](std::span<const Tensor> in) {
    Tensor t = nl::load(in[0]);
    nisa::tensor_scalar(t, t, isa::AluOp::kAdd, 1.0f);
    nl::store(in[0], t);
    Tensor out = nl::ndarray({128, 8}, DType::kFloat32, nl::shared_hbm, "out");
    nl::store(out, nl::load(in[1]));
    return std::vector<Tensor>{out};
  };
  const std::vector<HostTensor> inputs = {random_tensor("x", DType::kFloat32, {128, 8}, 1),
                                          random_tensor("y", DType::kFloat32, {128, 8}, 2)};
  const BuiltKernel built = build(in_place, std::vector{inputs[0].spec(), inputs[1].spec()}, chip);
  EXPECT_TRUE(launch(built, chip, inputs).updated_inputs.empty());  // not asked for
  const LaunchResult run = launch(built, chip, inputs, {.read_back_written_inputs = true});
  ASSERT_EQ(run.updated_inputs.size(), 2u);
  ASSERT_TRUE(run.updated_inputs[0].has_value());
  EXPECT_FALSE(run.updated_inputs[1].has_value());
  const std::vector<float> before = inputs[0].to_floats(),
                           after = run.updated_inputs[0]->to_floats();
  for (std::size_t i = 0; i < before.size(); ++i) ASSERT_EQ(after[i], before[i] + 1.0f) << i;
}

}  // namespace
}  // namespace trnsim::runtime
