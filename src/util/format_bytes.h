// A byte count for people: "2.0 GiB", "512 B". Header-only; the bottom of the layer stack.
#pragma once

#include <fmt/core.h>

#include <array>
#include <cstdint>
#include <string>

namespace trnsim::util {

// IEC units (powers of 1024) with three significant digits, the exact count below 1 KiB.
inline std::string format_bytes(std::uint64_t bytes) {
  static constexpr std::array<const char*, 6> kUnits = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  auto value = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < kUnits.size()) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.3g} {}", value, kUnits[unit]);
}

}  // namespace trnsim::util
