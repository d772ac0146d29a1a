// `trnsim run-asm`: run a text-assembly program on the functional simulator.
#pragma once

#include <CLI/CLI.hpp>

namespace trnsim::cli {

void register_run_asm_command(CLI::App& app);  // cmd_run_asm.cpp

}  // namespace trnsim::cli
