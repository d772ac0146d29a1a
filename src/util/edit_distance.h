// Levenshtein distance and the closest name, for "did you mean ...?" suggestions in error
// messages (chip config fields, assembly mnemonics and names, kernels and their options).
// Header-only; the bottom of the layer stack.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
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

// The candidate closest to `name` within a small edit distance (at most max(2, |name| / 3)),
// or "" when none is that close: what a "did you mean" suggests. With `prefixes_are_close`,
// a candidate that `name` starts or ends (clock / clock_ghz) counts as one edit away. Names
// longer than 64 bytes are not compared (garbage is not worth a quadratic comparison).
template <class Range>
std::string closest(std::string_view name, const Range& candidates,
                    bool prefixes_are_close = false) {
  if (name.empty() || name.size() > 64) return "";
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  std::string_view best;
  std::size_t best_distance = limit + 1;
  for (std::string_view candidate : candidates) {
    std::size_t distance = 0;
    if (prefixes_are_close && (candidate.substr(0, name.size()) == name ||
                               name.substr(0, candidate.size()) == candidate)) {
      distance = 1;
    } else if (std::max(name.size(), candidate.size()) - std::min(name.size(), candidate.size()) >
               limit) {
      continue;  // too far apart in length to be close
    } else {
      distance = edit_distance(name, candidate);
    }
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return std::string(best);
}

}  // namespace trnsim::util
