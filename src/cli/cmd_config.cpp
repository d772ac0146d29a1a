#include "cli/commands.h"
namespace trnsim::cli {
void register_config_command(CLI::App& app) { app.add_subcommand("config", "Chip presets and config files"); }
}  // namespace trnsim::cli
