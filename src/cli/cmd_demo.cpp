// `trnsim demo`: the README's run command. Shows the modelled chip, checks the numerics,
// then compiles and runs a few library kernels on the trn3 preset, checks each against its
// reference and prints what it achieved and what bounded it.
#include <fmt/core.h>

#include "arch/arch.h"
#include "cli/chip_summary.h"
#include "cli/commands.h"
#include "kernels/registry.h"
#include "kernels/runner.h"
#include "util/diagnostic.h"

namespace trnsim::cli {

namespace {

struct DemoCase {
  const char* kernel;
  std::vector<std::int64_t> shape;
  numerics::DType dtype;
};

// Shapes chosen so the functional runs take seconds on a laptop core.
const std::vector<DemoCase>& demo_cases() {
  static const std::vector<DemoCase> cases = {
      {"matmul", {2048, 2048, 2048}, numerics::DType::kBFloat16},
      {"attention", {2048, 128}, numerics::DType::kBFloat16},
      {"matmul_mx", {2048, 2048, 2048}, numerics::DType::kFloat8E4M3x4},
  };
  return cases;
}

bool run_kernel_demo(const arch::ChipConfig& chip) {
  bool ok = true;
  for (const DemoCase& c : demo_cases()) {
    const kernels::KernelInfo* info = kernels::find_kernel(c.kernel);
    if (info == nullptr) {
      fmt::print("{}: not in the kernel library\n\n", c.kernel);
      ok = false;
      continue;
    }
    try {
      const kernels::ProblemReport r =
          kernels::run_problem(info->make(c.shape, c.dtype, chip), chip);
      fmt::print("{}\n", kernels::format_report(r));
      ok &= r.ok();
    } catch (const std::exception& e) {
      fmt::print("{}\n\n", util::format_exception(e, c.kernel));
      ok = false;
    }
  }
  return ok;
}

int run_demo() {
  const arch::ChipConfig chip = arch::load_preset("trn3");
  fmt::print("== trnsim demo: the modelled chip\n\n");
  print_chip_summary(chip);
  fmt::print("\n== numerics self-check\n\n");
  bool ok = run_numerics_selfcheck();
  fmt::print("\n== library kernels on one {} core: compiled, simulated, checked\n\n", chip.name);
  ok &= run_kernel_demo(chip);
  fmt::print("{}\n", ok ? "demo: all checks passed" : "demo: A CHECK FAILED");
  return ok ? 0 : 1;
}

}  // namespace

void register_demo_command(CLI::App& app) {
  auto* demo = app.add_subcommand(
      "demo",
      "The main demo: the trn3 chip, a numerics self-check and library kernels run and checked");
  demo->callback([] {
    const int code = run_demo();
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace trnsim::cli
