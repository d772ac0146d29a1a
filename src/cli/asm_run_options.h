// What `trnsim run-asm` and `trnsim profile-asm` share: the options that say how an assembly
// program is run (chip, HBM tensors, inputs, checks, limits) and the sim::run_asm request
// they make.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/asm_runner.h"

namespace trnsim::cli {

struct AsmRunArgs {
  std::string file;
  std::string chip = "trn3";
  std::vector<std::string> hbm, inputs, random;
  bool no_hazards = false, nan_fill = false, timing_only = false, no_power_ramp = false;
  std::uint64_t max_steps = 0;
  std::int64_t seed = -1;
};

// "NAME=VALUE" -> {NAME, VALUE}; VALUE may be empty when `value_optional`, otherwise a
// missing '=' is an error naming `option`.
std::pair<std::string, std::string> split_assignment(const std::string& text, const char* option,
                                                     bool value_optional);

// --chip, --hbm, --input, --random, --no-hazards and --nan-fill.
void add_program_options(CLI::App* cmd, AsmRunArgs& args);
// --max-steps and --seed.
void add_limit_options(CLI::App* cmd, AsmRunArgs& args);

// The request running `path` with the options of `args` (untimed: the caller decides).
sim::AsmRunRequest make_asm_request(const AsmRunArgs& args, const std::string& path);

}  // namespace trnsim::cli
