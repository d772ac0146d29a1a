// Collectives that move data without arithmetic (all-to-all, permute) and replica groups.
#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "collective/collective.h"
#include "numerics/numerics.h"

namespace trnsim::collective {

namespace {

void check_equal_sizes(std::span<const Buffer> inputs, const char* what) {
  for (std::size_t r = 1; r < inputs.size(); ++r)
    if (inputs[r].size() != inputs[0].size())
      throw std::invalid_argument(
          fmt::format("{}: rank {}'s buffer holds {} bytes, rank 0's {} (every rank's must be "
                      "the same size)",
                      what, r, inputs[r].size(), inputs[0].size()));
}

}  // namespace

std::vector<Buffer> all_to_all(std::span<const Buffer> inputs, DType dtype) {
  if (inputs.empty()) throw std::invalid_argument("all_to_all: no ranks");
  check_equal_sizes(inputs, "all_to_all");
  const std::size_t n = inputs.size();
  const std::size_t word = numerics::storage_bytes(dtype);
  const std::size_t elements = inputs[0].size() / word;
  if (elements % n != 0)
    throw std::invalid_argument(
        fmt::format("all_to_all: {} elements of {} do not split into {} equal chunks, one per "
                    "rank",
                    elements, numerics::name(dtype), n));
  const std::size_t chunk = elements / n * word;
  std::vector<Buffer> out(n, Buffer(inputs[0].size()));
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t q = 0; q < n; ++q)
      if (chunk > 0) std::memcpy(out[r].data() + q * chunk, inputs[q].data() + r * chunk, chunk);
  return out;
}

std::vector<Buffer> broadcast(std::span<const Buffer> inputs, int root) {
  const int n = static_cast<int>(inputs.size());
  if (root < 0 || root >= n)
    throw std::invalid_argument(
        fmt::format("broadcast: root {} is not a rank (0 to {})", root, n - 1));
  return std::vector<Buffer>(inputs.size(), inputs[static_cast<std::size_t>(root)]);
}

void check_pairs(const Pairs& pairs, int n) {
  std::vector<int> source_of(static_cast<std::size_t>(std::max(0, n)), -1);
  std::vector<int> target_of(source_of.size(), -1);
  for (const auto& [source, target] : pairs) {
    for (const int r : {source, target})
      if (r < 0 || r >= n)
        throw std::invalid_argument(
            fmt::format("permute: pair ({}, {}) names rank {}, but there are {} ranks (0 to {})",
                        source, target, r, n, n - 1));
    int& from = source_of[static_cast<std::size_t>(target)];
    int& to = target_of[static_cast<std::size_t>(source)];
    if (from >= 0)
      throw std::invalid_argument(
          fmt::format("permute: rank {} is the target of two pairs ({}, {}) and ({}, {})", target,
                      from, target, source, target));
    if (to >= 0)
      throw std::invalid_argument(
          fmt::format("permute: rank {} is the source of two pairs ({}, {}) and ({}, {})", source,
                      source, to, source, target));
    from = source;
    to = target;
  }
}

std::vector<Buffer> permute(std::span<const Buffer> inputs, const Pairs& pairs) {
  check_equal_sizes(inputs, "permute");
  check_pairs(pairs, static_cast<int>(inputs.size()));
  std::vector<Buffer> out;
  for (const Buffer& b : inputs) out.emplace_back(b.size());
  for (const auto& [source, target] : pairs)
    out[static_cast<std::size_t>(target)] = inputs[static_cast<std::size_t>(source)];
  return out;
}

void check_replica_groups(const ReplicaGroups& groups, int ranks) {
  std::vector<int> group_of(static_cast<std::size_t>(std::max(0, ranks)), -1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) throw std::invalid_argument(fmt::format("replica group {} is empty", g));
    if (groups[g].size() != groups[0].size())
      throw std::invalid_argument(fmt::format(
          "replica group {} has {} ranks, group 0 has {} (groups of one size: the collective "
          "runs in step in every group)",
          g, groups[g].size(), groups[0].size()));
    for (const int r : groups[g]) {
      if (r < 0 || r >= ranks)
        throw std::invalid_argument(
            fmt::format("replica group {} names rank {}, but there are {} ranks (0 to {})", g, r,
                        ranks, ranks - 1));
      int& owner = group_of[static_cast<std::size_t>(r)];
      if (owner >= 0)
        throw std::invalid_argument(fmt::format(
            "rank {} is in replica groups {} and {} (groups must not overlap)", r, owner, g));
      owner = static_cast<int>(g);
    }
  }
  for (int r = 0; r < ranks; ++r)
    if (group_of[static_cast<std::size_t>(r)] < 0)
      throw std::invalid_argument(fmt::format(
          "rank {} is in no replica group (the groups must hold every rank taking part)", r));
}

ReplicaGroups consecutive_groups(int ranks, int size) {
  if (size < 1 || ranks % size != 0)
    throw std::invalid_argument(
        fmt::format("groups of {} ranks do not divide {} ranks", size, ranks));
  ReplicaGroups groups(static_cast<std::size_t>(ranks / size));
  for (int r = 0; r < ranks; ++r) groups[static_cast<std::size_t>(r / size)].push_back(r);
  return groups;
}

Pairs ring_pairs(const ReplicaGroups& groups) {
  Pairs pairs;
  for (const std::vector<int>& group : groups)
    for (std::size_t k = 0; group.size() > 1 && k < group.size(); ++k)
      pairs.emplace_back(group[k], group[(k + 1) % group.size()]);
  return pairs;
}

std::string format_groups(const ReplicaGroups& groups) {
  std::string s = "[";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    s += g == 0 ? "[" : ", [";
    for (std::size_t k = 0; k < groups[g].size(); ++k)
      s += fmt::format("{}{}", k == 0 ? "" : ", ", groups[g][k]);
    s += "]";
  }
  return s + "]";
}

VariableResult all_to_all_v(std::span<const Buffer> inputs, DType dtype,
                            const VariableChunks& chunks, std::uint64_t out_elements,
                            std::span<const int> ranks) {
  const std::size_t n = inputs.size();
  const auto rank = [&](std::size_t k) {
    return ranks.size() == n ? ranks[k] : static_cast<int>(k);
  };
  if (n == 0) throw std::invalid_argument("all_to_all_v: no ranks");
  const std::uint64_t word = numerics::storage_bytes(dtype);
  const std::uint64_t slot = out_elements / n;
  VariableResult result;
  result.outputs.assign(n, Buffer(out_elements * word));
  result.written.resize(n);
  result.recv_counts.assign(n, std::vector<std::uint64_t>(n, 0));
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> taken;  // (begin, sender)
    for (std::size_t s = 0; s < n; ++s) {
      const std::uint64_t count = chunks.send_counts[s][r], from = chunks.send_displs[s][r];
      const std::uint64_t in_elements = inputs[s].size() / word;
      if (from > in_elements || count > in_elements - from)
        throw std::invalid_argument(
            fmt::format("rank {} sends elements [{}, {}) to rank {}, but its src holds {}", rank(s),
                        from, from + count, rank(r), in_elements));
      const std::uint64_t at = chunks.recv_displs.empty() ? slot * s : chunks.recv_displs[r][s];
      const std::uint64_t room = chunks.recv_displs.empty() ? slot : out_elements;
      const std::uint64_t start = chunks.recv_displs.empty() ? 0 : at;
      if (start > room || count > room - start)
        throw std::invalid_argument(
            chunks.recv_displs.empty()
                ? fmt::format("rank {} sends {} elements to rank {}, whose dst has slots of {} "
                              "per sender (its {} elements / {} ranks)",
                              rank(s), count, rank(r), slot, out_elements, n)
                : fmt::format("rank {} receives elements [{}, {}) from rank {}, but its dst "
                              "holds {}",
                              rank(r), at, at + count, rank(s), out_elements));
      result.recv_counts[r][s] = count;
      if (count == 0) continue;
      std::memcpy(result.outputs[r].data() + at * word, inputs[s].data() + from * word,
                  count * word);
      result.written[r].emplace_back(at, at + count);
      taken.emplace_back(at, s);
    }
    std::sort(taken.begin(), taken.end());
    for (std::size_t k = 1; k < taken.size(); ++k) {
      const auto [begin, s] = taken[k];
      const auto [prev_begin, prev] = taken[k - 1];
      if (begin < prev_begin + chunks.send_counts[prev][r])
        throw std::invalid_argument(fmt::format(
            "rank {} receives the chunks of ranks {} and {} at overlapping elements (from {} "
            "and {})",
            rank(r), rank(prev), rank(s), prev_begin, begin));
    }
  }
  return result;
}

}  // namespace trnsim::collective
