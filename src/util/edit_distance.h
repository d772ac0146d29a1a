// Levenshtein distance, for "did you mean ...?" suggestions in error messages (chip config
// fields, assembly mnemonics and names). Header-only; the bottom of the layer stack.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

namespace trnsim::util {

// Insertions, deletions and substitutions needed to turn `a` into `b`; O(|a| |b|) time,
// O(|b|) memory. Callers bound the lengths they compare.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];  // distance of a[0, i-1) to b[0, j-1)
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace trnsim::util
