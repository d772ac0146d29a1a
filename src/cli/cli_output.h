// What several subcommands write: text files (or stdout), the `trnsim` object of every
// --json result, and before -> after changes of a comparison.
#pragma once

#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "cli/version.h"

namespace trnsim::cli {

// Writes `text` to `path`; "" or "-" is stdout.
inline void write_text_file(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    fmt::print("{}", text);
    return;
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", path));
}

// write_text_file, then "wrote PATH" on stderr when it went to a file.
inline void write_text_file_announced(const std::string& path, const std::string& text) {
  write_text_file(path, text);
  if (!path.empty() && path != "-") fmt::print(stderr, "wrote {}\n", path);
}

// {"version", "git", "build"}: which trnsim made a --json result.
inline nlohmann::json version_json() {
  return {{"version", kVersion}, {"git", kGitRevision}, {"build", kBuildType}};
}

// "+12.5%" from before to after; "-" when before is not positive.
inline std::string percent_change(double before, double after) {
  if (before <= 0) return "-";
  return fmt::format("{:+.1f}%", 100.0 * (after - before) / before);
}

}  // namespace trnsim::cli
