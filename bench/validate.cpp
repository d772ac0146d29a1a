// Fidelity of the timing model against published hardware measurements: runs each case
// with the same kernel and shape the source measured, in timing-only mode, and prints
// predicted vs published with the error (docs/validation.md holds the latest table).
//
//   ./build/bench/validate            all cases
//   ./build/bench/validate --quick    skip the four full-size tutorial matmuls
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "kernel/kernel.h"
#include "kernels/registry.h"
#include "kernels/runner.h"
#include "runtime/runtime.h"

namespace {

using namespace trnsim;
using numerics::DType;
using kernel::Tensor;

struct Case {
  std::string name;
  std::string source;     // where the published figure is
  std::string chip;
  double published = 0;   // in `unit`
  std::string unit;
  double predicted = 0;
};

// Simulated time of a library kernel in timing-only mode, in ms.
double library_ms(const std::string& kernel, const std::vector<std::int64_t>& shape, const arch::ChipConfig& chip) {
  const kernels::KernelInfo* info = kernels::find_kernel(kernel);
  if (info == nullptr) throw std::runtime_error("missing kernel " + kernel);
  kernels::RunProblemOptions options;
  options.functional = false;
  options.check_hazards = false;
  const kernels::ProblemReport r = kernels::run_problem(info->make(shape, DType::kBFloat16, chip), chip, options);
  return r.simulated_ns * 1e-6;
}

// Busy time of the busiest DMA engine over a kernel that issues one transfer (ns): what a
// profile shows as the transfer's activity on its engine (the queue's fixed latency before
// the engine starts is not part of it).
double dma_engine_busy_ns(const kernel::KernelFn& fn, const std::vector<kernel::TensorSpec>& inputs,
                          const arch::ChipConfig& chip) {
  runtime::BuiltKernel built = runtime::build(fn, inputs, chip, {});
  runtime::LaunchOptions options;
  options.functional = false;
  options.check_hazards = false;
  std::vector<runtime::HostTensor> host;
  for (const auto& s : inputs) host.push_back(runtime::HostTensor::zeros(s.name, s.dtype, s.shape));
  const runtime::LaunchResult r = runtime::launch(built, chip, host, options);
  double busiest = 0;
  for (const auto& e : r.timing.at(0).dma_engines) busiest = std::max(busiest, e.busy_ns);
  return busiest;
}

// Issue interval of a chain of dependent [1, 1] ScalarE activations (ns per instruction).
double scalar_chain_ns(const arch::ChipConfig& chip) {
  constexpr int kChain = 64;
  auto fn = [](std::span<const Tensor>) {
    Tensor t = nl::ndarray({1, 1}, DType::kFloat32, nl::sbuf, "t");
    nisa::memset(t, 0.5f);
    for (int i = 0; i < kChain; ++i)
      nisa::activation(t, isa::ActivationFunc::kCopy, t, {.common = {.engine = isa::Engine::kScalar}});
    return std::vector<Tensor>{};
  };
  runtime::BuiltKernel built = runtime::build(fn, {}, chip, {});
  runtime::LaunchOptions options;
  options.functional = false;
  const runtime::LaunchResult r = runtime::launch(built, chip, {}, options);
  const auto& program = built.compiled.programs[0];
  std::vector<double> starts;
  for (std::size_t i = 0; i < program.instructions.size(); ++i)
    if (isa::op_name(program.instructions[i].op) == "activation") starts.push_back(r.runs[0].times[i].start);
  std::sort(starts.begin(), starts.end());
  return (starts.back() - starts.front()) / static_cast<double>(starts.size() - 1);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const arch::ChipConfig trn1 = arch::load_preset("trn1");
  const arch::ChipConfig trn2 = arch::load_preset("trn2");
  std::vector<Case> cases;
  const std::string tutorial = "NKI matmul tutorial (SDK 2.23), trn1, 4096x8192 @ 8192x8192 BF16, nki.benchmark";
  if (!quick) {
    for (const auto& [kernel, ms] : std::vector<std::pair<std::string, double>>{
             {"tutorial_matmul_tiled", 51.80}, {"tutorial_matmul_hoisted", 42.96},
             {"tutorial_matmul_blocked", 22.07}, {"tutorial_matmul_optimized", 6.97}}) {
      Case c{kernel, tutorial, "trn1", ms, "ms"};
      c.predicted = library_ms(kernel, {4096, 8192, 8192}, trn1);
      cases.push_back(c);
    }
  }
  {
    Case c{"dma_copy [4, 4096] bf16 HBM->SBUF, engine activity",
           "nki-dma-overview.rst (trn2 profile: one engine moves the 32 KiB in 1416 ns)", "trn2", 1416, "ns"};
    c.predicted = dma_engine_busy_ns(
        [](std::span<const Tensor> in) {
          Tensor t = nl::ndarray({4, 4096}, DType::kBFloat16, nl::sbuf, "t");
          nisa::dma_copy(t, in[0]);
          return std::vector<Tensor>{};
        },
        {{"x", DType::kBFloat16, {4, 4096}}}, trn2);
    cases.push_back(c);
  }
  {
    Case c{"dependent 1-element ScalarE chain, issue interval", "NKI performance guide (NC-v2: ~189 ns = 264 cycles)",
           "trn1", 189, "ns"};
    c.predicted = scalar_chain_ns(trn1);
    cases.push_back(c);
  }

  fmt::print("| case | chip | published | trnsim | error | source |\n|---|---|---|---|---|---|\n");
  std::vector<double> errors;
  for (const Case& c : cases) {
    const double err = 100.0 * (c.predicted - c.published) / c.published;
    errors.push_back(std::abs(err));
    fmt::print("| {} | {} | {:g} {} | {:.4g} {} | {:+.1f}% | {} |\n", c.name, c.chip, c.published, c.unit,
               c.predicted, c.unit, err, c.source);
  }
  std::sort(errors.begin(), errors.end());
  const double median = errors.size() % 2 ? errors[errors.size() / 2]
                                          : 0.5 * (errors[errors.size() / 2 - 1] + errors[errors.size() / 2]);
  fmt::print("\n{} cases: median |error| {:.1f}%, max {:.1f}%\n", errors.size(), median, errors.back());
  return 0;
}
