// trnsim command-line front end.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"trnsim: a simulator and toolchain for Trainium-class accelerators"};
  app.require_subcommand(1);
  trnsim::cli::register_config_command(app);
  trnsim::cli::register_numerics_command(app);

  auto* demo = app.add_subcommand("demo", "Run the main demo: the trn3 chip summary and a numerics self-check");
  demo->callback([] {
    fmt::print("trnsim demo\n");
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
