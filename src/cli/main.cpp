// trnsim command-line front end: each subcommand lives in its own cmd_*.cpp.
#include <CLI/CLI.hpp>
#include <exception>
#include <fmt/core.h>

#include "arch/arch.h"
#include "cli/chip_summary.h"
#include "cli/commands.h"
#include "cli/run_asm.h"

namespace {

// The main demo: what the modelled chip is, and proof that the numerics are sound.
int run_demo() {
  fmt::print("== trnsim demo: the modelled chip\n\n");
  trnsim::cli::print_chip_summary(trnsim::arch::load_preset("trn3"));
  fmt::print("\n== numerics self-check\n\n");
  const bool ok = trnsim::cli::run_numerics_selfcheck();
  fmt::print("\n{}\n", ok ? "demo: all checks passed" : "demo: SELF-CHECK FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"trnsim: a simulator and toolchain for Trainium-class accelerators"};
  app.require_subcommand(1);
  trnsim::cli::register_config_command(app);
  trnsim::cli::register_numerics_command(app);
  trnsim::cli::register_run_asm_command(app);
  trnsim::cli::register_run_command(app);

  int exit_code = 0;
  auto* demo = app.add_subcommand(
      "demo", "Run the main demo: the trn3 chip summary and a numerics self-check");
  demo->callback([&] { exit_code = run_demo(); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    fmt::print(stderr, "trnsim: error: {}\n", e.what());
    return 1;
  }
  return exit_code;
}
