// A complete program around a user kernel: y = gelu(x * 0.5 + bias[col]) over x [R, C]
// (gelu_bias_kernel.cpp, written with the C++ kernel API) is compiled, run on a simulated
// trn3 core, checked, and timed.
//
//   ./build/examples/kernels/gelu_bias [R C]
//
// docs/user-guide.md walks through these files.
#include <fmt/core.h>

#include <cmath>
#include <cstdlib>

#include "arch/arch.h"
#include "gelu_bias_kernel.h"
#include "runtime/runtime.h"

using namespace trnsim;
using numerics::DType;

int main(int argc, char** argv) {
  const std::int64_t rows = argc > 2 ? std::atoll(argv[1]) : 1000;
  const std::int64_t cols = argc > 2 ? std::atoll(argv[2]) : 512;
  const arch::ChipConfig chip = arch::load_preset("trn3");

  // Host data: deterministic random inputs.
  std::vector<runtime::HostTensor> inputs = {
      runtime::random_tensor("x", DType::kBFloat16, {rows, cols}, 7, -3.0f, 3.0f),
      runtime::random_tensor("bias", DType::kFloat32, {1, cols}, 8, -1.0f, 1.0f)};
  std::vector<kernel::TensorSpec> specs = {inputs[0].spec(), inputs[1].spec()};

  try {
    const runtime::BuiltKernel built =
        runtime::build(gelu_bias, specs, chip, {.name = "gelu_bias"});
    const runtime::LaunchResult result = runtime::launch(built, chip, inputs);

    // Check against the double-precision reference (gelu_bias_kernel.h gives the bound).
    const std::vector<float> x = inputs[0].to_floats(), b = inputs[1].to_floats();
    const std::vector<float> y = result.outputs[0].to_floats();
    double worst = 0;
    for (std::int64_t i = 0; i < rows * cols; ++i) {
      const double want = gelu_bias_reference(x[static_cast<std::size_t>(i)],
                                              b[static_cast<std::size_t>(i % cols)]);
      const double err = std::abs(y[static_cast<std::size_t>(i)] - want) / (std::abs(want) + 1e-3);
      // Not std::max: it would skip a NaN (an output never written, say). A NaN error makes
      // `worst` NaN, which no bound accepts.
      if (!(err <= worst)) worst = err;
    }
    const sim::TimingReport& t = result.timing[0];
    fmt::print("gelu_bias [{}, {}] on {}: {} instructions, {} semaphore waits\n", rows, cols,
               chip.name, built.compiled.stats.instructions, built.compiled.stats.waits);
    const bool correct = worst <= kGeluBiasTolerance;
    fmt::print("max relative error {:.3g} ({})\n", worst, correct ? "correct" : "WRONG");
    fmt::print("simulated {:.3f} us, HBM {:.1f} GB/s\n", t.total_ns * 1e-3,
               t.achieved_hbm_bytes_per_s * 1e-9);
    return correct ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
