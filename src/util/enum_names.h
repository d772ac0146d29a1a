// Enumerations and their names: one table of names per enumeration, indexed by enumerator
// value and read both ways, instead of a switch of cases per enumeration (and a second one
// for parsing). Header-only; the bottom of the layer stack.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace trnsim::util {

// The name of `value` in `names`, or "<invalid>" for a value outside the enumeration.
template <class E, std::size_t N>
constexpr std::string_view enum_name(const std::array<std::string_view, N>& names, E value) {
  const auto index = static_cast<std::size_t>(value);
  return index < N ? names[index] : std::string_view("<invalid>");
}

// The enumerator whose name is `name`, or nullopt.
template <class E, std::size_t N>
constexpr std::optional<E> enum_from_name(const std::array<std::string_view, N>& names,
                                          std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<E>(i);
  return std::nullopt;
}

}  // namespace trnsim::util
