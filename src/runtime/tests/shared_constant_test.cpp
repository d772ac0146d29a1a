// nl::shared_constant: a shared HBM tensor whose bytes the kernel carries and the runtime
// writes before the run, read like an input, the same for every program of a logical core.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "arch/tests/test_presets.h"
#include "kernel/kernel.h"
#include "runtime/runtime.h"

namespace trnsim::runtime {
namespace {

using kernel::Tensor;

constexpr std::int64_t kTableRows = 128, kTableCols = 16;

std::vector<std::uint8_t> table_bytes() {
  std::vector<float> values(kTableRows * kTableCols);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f;
  std::vector<std::uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// out = x + table, each program of the logical core adding its own half of the rows.
std::vector<Tensor> add_table(std::span<const Tensor> in) {
  const Tensor table =
      nl::shared_constant({kTableRows, kTableCols}, DType::kFloat32, table_bytes(), "table");
  Tensor out = nl::ndarray({kTableRows, kTableCols}, DType::kFloat32, nl::shared_hbm, "out");
  const std::int64_t rows = kTableRows / nl::num_programs();
  const std::int64_t r0 = rows * nl::program_id();
  const auto block = [&](const Tensor& t) { return t(nl::ds(r0, rows), nl::all); };
  nl::store(block(out), nl::add(nl::load(block(in[0])), nl::load(block(table))));
  return {out};
}

TEST(SharedConstant, IsWrittenBeforeTheRunAndReadLikeAnInput) {
  const arch::ChipConfig chip = arch::testing::trn3();
  const HostTensor x = random_tensor("x", DType::kFloat32, {kTableRows, kTableCols}, 3);
  const std::vector<kernel::TensorSpec> specs = {x.spec()};
  for (int lnc : {1, 2}) {
    const BuiltKernel k = build(add_table, specs, chip, {.name = "add_table", .lnc = lnc});
    const LaunchResult r = launch(k, chip, std::span<const HostTensor>(&x, 1));
    const std::vector<float> got = r.outputs[0].to_floats();
    const std::vector<float> xs = x.to_floats();
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], xs[i] + static_cast<float>(i) * 0.5f) << "lnc " << lnc << " at " << i;
    for (const sim::RunResult& run : r.runs) EXPECT_TRUE(run.hazards.empty());
  }
}

TEST(SharedConstant, DataOfTheWrongSizeIsAnErrorAtTheKernelLine) {
  const arch::ChipConfig chip = arch::testing::trn3();
  const auto wrong = [](std::span<const Tensor>) -> std::vector<Tensor> {
    nl::shared_constant({4, 4}, DType::kBFloat16, std::vector<std::uint8_t>(31), "small");
    return {};
  };
  try {
    (void)build(wrong, {}, chip, {.name = "wrong"});
    FAIL() << "no error";
  } catch (const kernel::KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("shared_constant 'small' [4, 4] of bfloat16 holds 32 "
                                         "bytes; its data has 31"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("shared_constant_test.cpp:"), std::string::npos);
  }
}

TEST(SharedConstant, ProgramsGivingDifferentDataDiverge) {
  const arch::ChipConfig chip = arch::testing::trn3();
  const auto per_program = [](std::span<const Tensor>) -> std::vector<Tensor> {
    std::vector<std::uint8_t> bytes(64, static_cast<std::uint8_t>(nl::program_id()));
    const Tensor c = nl::shared_constant({4, 4}, DType::kFloat32, bytes, "c");
    Tensor out = nl::ndarray({4, 4}, DType::kFloat32, nl::shared_hbm, "out");
    if (nl::program_id() == 0) nl::store(out, nl::load(c));
    return {out};
  };
  EXPECT_THROW((void)build(per_program, {}, chip, {.name = "diverge", .lnc = 2}),
               kernel::KernelError);
}

}  // namespace
}  // namespace trnsim::runtime
