// Each trnsim subcommand lives in its own file and registers itself on the app here.
#pragma once

#include <CLI/CLI.hpp>

namespace trnsim::cli {

void register_config_command(CLI::App& app);    // cmd_config.cpp: chip presets and files
void register_system_command(CLI::App& app);    // cmd_system.cpp: system presets and files
void register_ccom_command(CLI::App& app);      // cmd_ccom.cpp: nccom-test for simulated systems
void register_numerics_command(CLI::App& app);  // cmd_numerics.cpp: convert, self-check
void register_run_command(CLI::App& app);       // cmd_run.cpp: run a library kernel
void register_demo_command(CLI::App& app);      // cmd_demo.cpp: the main demo
// The self-check the demo prints: returns true when every check passed.
bool run_numerics_selfcheck();

}  // namespace trnsim::cli
