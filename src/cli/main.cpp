// trnsim command-line front end: each subcommand lives in its own cmd_*.cpp.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <exception>
#include <string>

#include "arch/arch.h"
#include "cli/commands.h"
#include "cli/python_kernel.h"
#include "cli/run_asm.h"
#include "cli/version.h"
#include "util/diagnostic.h"
#include "util/host_memory.h"

namespace trnsim::cli {
void register_profile_command(CLI::App& app);  // cmd_profile.cpp: trnsim profile-asm
}  // namespace trnsim::cli

namespace {

// CLI11 takes an argument for a number only when a digit follows the '-': "-inf" and "-nan"
// are read as (unknown) options. True when such a value comes before any "--".
bool has_non_finite_negative(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") return false;
    std::transform(arg.begin(), arg.end(), arg.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (arg == "-inf" || arg == "-infinity" || arg == "-nan") return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (trnsim::cli::names_python_kernel(argc, argv))
    return trnsim::cli::run_python_kernel(argc, argv);
  trnsim::util::keep_freed_memory_for_reuse();
  CLI::App app{"trnsim: a simulator and toolchain for Trainium-class accelerators"};
  app.set_version_flag("--version",
                       fmt::format("trnsim {} (git {}, {} build)", trnsim::cli::kVersion,
                                   trnsim::cli::kGitRevision, trnsim::cli::kBuildType));
  app.require_subcommand(1);
  trnsim::cli::register_config_command(app);
  trnsim::cli::register_system_command(app);
  trnsim::cli::register_ccom_command(app);
  trnsim::cli::register_numerics_command(app);
  trnsim::cli::register_run_asm_command(app);
  trnsim::cli::register_profile_command(app);
  trnsim::cli::register_run_command(app);

  trnsim::cli::register_demo_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    if (status != 0 && has_non_finite_negative(argc, argv))
      fmt::print(stderr,
                 "note: a value that starts with '-' but not with a digit (-inf, -nan) must "
                 "follow '--', e.g. trnsim numerics convert --to bf16 -- -inf -nan\n");
    return status;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", trnsim::util::format_exception(e, "trnsim"));
    return 1;
  }
  return 0;
}
