#include "cli/asm_run_options.h"

#include <fmt/core.h>

#include <charconv>
#include <cstdint>
#include <string_view>

#include "isa/asm.h"

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
                  "file's .hbm lines)");
  cmd->add_option("--input", args.inputs, "Fill tensor NAME from raw little-endian FILE")
      ->type_name("NAME=FILE");
  cmd->add_option(
         "--random", args.random,
         "Fill tensor NAME with uniform values in [-1, 1) from SEED (default: the option's "
         "position among the --random options, 0, 1, ...)")
      ->type_name("NAME[=SEED]");
  cmd->add_flag("--no-hazards", args.no_hazards, "Do not check for races between queues");
  cmd->add_flag("--nan-fill", args.nan_fill,
                "Read never-written memory as NaN (floats) / 4 (integers) instead of failing");
}

void add_limit_options(CLI::App* cmd, AsmRunArgs& args) {
  cmd->add_option("--max-steps", args.max_steps,
                  "Stop after this many instructions (0 = no limit)");
  cmd->add_option("--seed", args.seed, "Override the program's .seed (0 to 2^32 - 1)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{0xFFFFFFFF}));
}

namespace {

// A --random seed: a whole number 0..2^64 - 1, decimal or 0x-hex (std::stoull would take "-1"
// as 2^64 - 1 and "12abc" as 12).
std::uint64_t parse_seed(std::string_view text, const std::string& option_value) {
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    base = 16;
  }
  std::uint64_t seed = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seed, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw CLI::ValidationError(
        "--random", fmt::format("'{}': the seed must be a whole number 0 to 2^64 - 1, decimal "
                                "or 0x-hex",
                                option_value));
  return seed;
}

}  // namespace

sim::AsmRunRequest make_asm_request(const AsmRunArgs& args, const std::string& path) {
  sim::AsmRunRequest request;
  request.asm_path = path;
  request.chip = args.chip;
  for (const auto& spec : args.hbm)
    request.extra_tensors.push_back(isa::parse_hbm_tensor(spec, "--hbm"));
  for (const auto& text : args.inputs) {
    auto [name, file] = split_assignment(text, "--input", false);
    request.inits.push_back({name, sim::TensorInit::Kind::kFile, file, {}, 0});
  }
  // Without a seed, each --random gets its position (0, 1, ...): two tensors never get the
  // same data by accident.
  for (std::size_t i = 0; i < args.random.size(); ++i) {
    auto [name, seed] = split_assignment(args.random[i], "--random", true);
    request.inits.push_back({name,
                             sim::TensorInit::Kind::kRandom,
                             "",
                             {},
                             seed.empty() ? i : parse_seed(seed, args.random[i])});
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
