#include "cli/asm_run_options.h"

#include <fmt/core.h>

namespace trnsim::cli {

std::pair<std::string, std::string> split_assignment(const std::string& text, const char* option,
                                                     bool value_optional) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) {
    if (value_optional) return {text, ""};
    throw sim::SimError(fmt::format("{} expects NAME=FILE, got '{}'", option, text));
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

void add_program_options(CLI::App* cmd, AsmRunArgs& args) {
  cmd->add_option("--chip", args.chip, "Chip preset (trn1, trn2, trn3) or JSON config file")
      ->capture_default_str();
  cmd->add_option("--hbm", args.hbm,
                  "Declare an HBM tensor NAME@ADDRESS:DTYPE[D0,D1,...] (in addition to the "
                  "file's '# @hbm' directives)");
  cmd->add_option("--input", args.inputs, "Fill tensor NAME from raw little-endian FILE")
      ->type_name("NAME=FILE");
  cmd->add_option("--random", args.random,
                  "Fill tensor NAME with uniform values in [-1, 1) from SEED (default 0)")
      ->type_name("NAME[=SEED]");
  cmd->add_flag("--no-hazards", args.no_hazards, "Do not check for races between queues");
  cmd->add_flag("--nan-fill", args.nan_fill,
                "Read never-written memory as NaN (floats) / 4 (integers) instead of failing");
}

void add_limit_options(CLI::App* cmd, AsmRunArgs& args) {
  cmd->add_option("--max-steps", args.max_steps,
                  "Stop after this many instructions (0 = no limit)");
  cmd->add_option("--seed", args.seed, "Override the program's .seed");
}

sim::AsmRunRequest make_asm_request(const AsmRunArgs& args, const std::string& path) {
  sim::AsmRunRequest request;
  request.asm_path = path;
  request.chip = args.chip;
  for (const auto& spec : args.hbm) request.extra_tensors.push_back(sim::parse_hbm_tensor(spec));
  for (const auto& text : args.inputs) {
    auto [name, file] = split_assignment(text, "--input", false);
    request.inits.push_back({name, sim::TensorInit::Kind::kFile, file, {}, 0});
  }
  for (const auto& text : args.random) {
    auto [name, seed] = split_assignment(text, "--random", true);
    request.inits.push_back({name,
                             sim::TensorInit::Kind::kRandom,
                             "",
                             {},
                             seed.empty() ? 0 : std::stoull(seed, nullptr, 0)});
  }
  request.options.check_hazards = !args.no_hazards;
  request.options.functional = !args.timing_only;
  request.options.max_steps = args.max_steps;
  if (args.nan_fill) request.options.uninitialized = sim::UninitializedPolicy::kNanFill;
  if (args.seed >= 0) request.options.seed = static_cast<std::uint32_t>(args.seed);
  if (args.no_power_ramp) request.timing.power_ramp = false;
  return request;
}

}  // namespace trnsim::cli
