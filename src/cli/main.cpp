// trnsim command-line front end: each subcommand lives in its own cmd_*.cpp.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <exception>

#include "arch/arch.h"
#include "cli/commands.h"
#include "cli/run_asm.h"
#include "util/diagnostic.h"

namespace trnsim::cli {
void register_profile_command(CLI::App& app);  // cmd_profile.cpp: trnsim profile-asm
}  // namespace trnsim::cli

int main(int argc, char** argv) {
  CLI::App app{"trnsim: a simulator and toolchain for Trainium-class accelerators"};
  app.require_subcommand(1);
  trnsim::cli::register_config_command(app);
  trnsim::cli::register_numerics_command(app);
  trnsim::cli::register_run_asm_command(app);
  trnsim::cli::register_profile_command(app);
  trnsim::cli::register_run_command(app);

  trnsim::cli::register_demo_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", trnsim::util::format_exception(e, "trnsim"));
    return 1;
  }
  return 0;
}
