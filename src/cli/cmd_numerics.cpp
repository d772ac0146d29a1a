#include "cli/commands.h"
namespace trnsim::cli {
void register_numerics_command(CLI::App& app) { app.add_subcommand("numerics", "Data types and conversions"); }
bool run_numerics_selfcheck() { return true; }
}  // namespace trnsim::cli
