// Reading a user's file whole, with the checks every reader needs: a directory, a file that
// cannot be opened and a file larger than the caller's limit (a /dev/zero given by mistake)
// are errors located at the path, never a crash or an unbounded allocation. Header-only, like
// the rest of util.
#pragma once

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "util/diagnostic.h"

namespace trnsim::util {

// The bytes of the file at `path` (a regular file, a pipe or a device), at most `max_bytes`;
// `what` names the file's role in errors ("assembly file", "input for tensor a").
// Throws util::Error located at `path`.
inline std::string read_file(const std::string& path, std::uint64_t max_bytes,
                             std::string_view what) {
  const auto failure = [&](const std::string& why) {
    Diagnostic d;
    d.where.file = path;
    d.message = std::string(what) + ": " + why;
    return Error(std::move(d));
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw failure("cannot read a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw failure(std::string("cannot open (") + std::strerror(errno) + ")");
  std::string data;
  std::array<char, 1 << 16> buffer{};
  while (in) {
    in.read(buffer.data(), buffer.size());
    const auto got = static_cast<std::size_t>(in.gcount());
    if (data.size() + got > max_bytes)
      throw failure("more than " + std::to_string(max_bytes) +
                    " bytes (the most it can hold; is it the right file?)");
    data.append(buffer.data(), got);
  }
  if (in.bad()) throw failure("read error");
  return data;
}

}  // namespace trnsim::util
