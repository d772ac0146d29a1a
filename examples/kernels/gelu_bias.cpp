// A complete user kernel: y = gelu(x * scale + bias[col]) over x [R, C], written with the
// C++ kernel API, compiled, run on a simulated trn3 core, checked, and timed.
//
//   ./build/examples/kernels/gelu_bias [R C]
//
// docs/user-guide.md walks through this file.
#include <fmt/core.h>

#include <cmath>
#include <cstdlib>

#include "arch/arch.h"
#include "kernel/kernel.h"
#include "runtime/runtime.h"

using namespace trnsim;
using kernel::Tensor;
using numerics::DType;

// The kernel: inputs in HBM, output declared in shared HBM and returned.
std::vector<Tensor> gelu_bias(std::span<const Tensor> in) {
  const Tensor& x = in[0];     // [R, C] bf16
  const Tensor& bias = in[1];  // [1, C] fp32
  const std::int64_t rows = x.dim(0), cols = x.dim(1);
  const std::int64_t p = nl::tile_size::pmax();
  Tensor y = nl::ndarray({rows, cols}, DType::kBFloat16, nl::shared_hbm, "y");

  // The bias row, broadcast to every partition once: a [p, C] tile filled by one DMA whose
  // source view repeats row 0 (a zero-stride partition dim costs nothing to describe).
  Tensor bias_tile = nl::ndarray({p, cols}, DType::kFloat32, nl::sbuf, "bias");
  nisa::dma_copy(bias_tile, bias.broadcast(0, p));

  for (std::int64_t r0 = 0; r0 < rows; r0 += p) {
    const std::int64_t n = std::min(p, rows - r0);
    Tensor t = nl::load(x(nl::ds(r0, n), nl::all));  // HBM -> SBUF
    Tensor s = nl::ndarray({n, cols}, DType::kFloat32, nl::sbuf, "scaled");
    nisa::scalar_tensor_tensor(s, t, isa::AluOp::kMultiply, 0.5f,  // x * 0.5 + bias
                               isa::AluOp::kAdd, bias_tile(nl::ds(0, n), nl::all));
    Tensor g = nl::ndarray({n, cols}, DType::kBFloat16, nl::sbuf, "gelu");
    nisa::activation(g, isa::ActivationFunc::kGelu, s);  // ScalarE
    nl::store(y(nl::ds(r0, n), nl::all), g);             // SBUF -> HBM
  }
  return {y};
}

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

    // Check against a double-precision reference: the bf16 input is exact, the fp32 affine
    // step and ScalarE's fp32 gelu add errors of order 2^-24, and the output rounds once to
    // bf16 (half an ulp, 2^-8 relative); 1.5 x 2^-8 bounds the sum with room to spare.
    const std::vector<float> x = inputs[0].to_floats(), b = inputs[1].to_floats();
    const std::vector<float> y = result.outputs[0].to_floats();
    double worst = 0;
    for (std::int64_t i = 0; i < rows * cols; ++i) {
      const double v = 0.5 * x[static_cast<std::size_t>(i)] + b[static_cast<std::size_t>(i % cols)];
      const double want = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      const double err = std::abs(y[static_cast<std::size_t>(i)] - want) / (std::abs(want) + 1e-3);
      // Not std::max: it would skip a NaN (an output never written, say). A NaN error makes
      // `worst` NaN, which no bound accepts.
      if (!(err <= worst)) worst = err;
    }
    const sim::TimingReport& t = result.timing[0];
    fmt::print("gelu_bias [{}, {}] on {}: {} instructions, {} semaphore waits\n", rows, cols,
               chip.name, built.compiled.stats.instructions, built.compiled.stats.waits);
    const bool correct = worst <= 1.5 * 0x1p-8;
    fmt::print("max relative error {:.3g} ({})\n", worst, correct ? "correct" : "WRONG");
    fmt::print("simulated {:.3f} us, HBM {:.1f} GB/s\n", t.total_ns * 1e-3,
               t.achieved_hbm_bytes_per_s * 1e-9);
    return correct ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
