// trnsim command-line front end.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

int main(int argc, char** argv) {
  CLI::App app{"trnsim: a simulator and toolchain for Trainium-class accelerators"};
  app.require_subcommand(1);
  auto* demo = app.add_subcommand("demo", "Run the main demo");
  demo->callback([] { fmt::print("trnsim demo\n"); });
  CLI11_PARSE(app, argc, argv);
  return 0;
}
