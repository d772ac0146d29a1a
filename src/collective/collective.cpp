#include "collective/collective.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <bit>
#include <stdexcept>
#include <string>
#include <tuple>

#include "numerics/numerics.h"
#include "util/enum_names.h"
#include "util/parallel.h"

namespace trnsim::collective {

namespace {
constexpr std::array<std::string_view, 4> kAlgorithmNames = {"ring", "mesh", "rdh", "hier"};
constexpr std::array<std::string_view, 3> kReduceNames = {"sum", "max", "min"};
}  // namespace

std::string_view name(Algorithm a) {
  return util::enum_name(kAlgorithmNames, a);
}
std::optional<Algorithm> algorithm_named(std::string_view name) {
  return util::enum_from_name<Algorithm>(kAlgorithmNames, name);
}
std::string_view name(Reduce r) {
  return util::enum_name(kReduceNames, r);
}

namespace {

// One step of a reduction: slot `into` = slot `a` (op) slot `b`. Slots start as the ranks'
// values; the result is in slot `result`.
struct Step {
  std::size_t into, a, b;
};
struct Plan {
  std::vector<Step> steps;
  std::size_t result = 0;
};

// The reduction order of one chunk (the documented orders of docs/collectives.md).
Plan plan_of(Algorithm algorithm, std::size_t n, std::size_t chunk) {
  Plan p;
  switch (algorithm) {
    case Algorithm::kRing: {
      // The chunk starts at the rank after its owner and travels round to the owner, each
      // rank adding its own value to the partial it received.
      const std::size_t first = (chunk + 1) % n;
      p.result = first;
      for (std::size_t k = 2; k <= n; ++k) p.steps.push_back({first, first, (chunk + k) % n});
      break;
    }
    case Algorithm::kMesh:
      // The owner receives every rank's chunk and adds them in rank order.
      p.result = 0;
      for (std::size_t r = 1; r < n; ++r) p.steps.push_back({0, 0, r});
      break;
    case Algorithm::kRdh:
      // Partners at distance n/2, then n/4, ..., 1; the lower rank's operand comes first.
      for (std::size_t d = n / 2; d >= 1; d /= 2)
        for (std::size_t r = 0; r < d; ++r) p.steps.push_back({r, r, r + d});
      p.result = 0;
      break;
    case Algorithm::kHierarchical:
      throw std::logic_error("a hierarchical plan needs its nodes (hierarchical_plan)");
  }
  return p;
}

// Piece s of local chunk j of a hierarchical reduction over `nodes` nodes of m ranks: within
// each node, the ring order of chunk j over its ranks; across the nodes, the ring order of
// piece s over the nodes' partial sums.
Plan hierarchical_plan(std::size_t m, std::size_t nodes, std::size_t j, std::size_t s) {
  Plan p;
  const auto local = [&](std::size_t node, std::size_t k) { return node * m + (j + k) % m; };
  for (std::size_t node = 0; node < nodes; ++node)
    for (std::size_t k = 2; k <= m; ++k)
      p.steps.push_back({local(node, 1), local(node, 1), local(node, k)});
  const std::size_t first = local((s + 1) % nodes, 1);
  for (std::size_t k = 2; k <= nodes; ++k)
    p.steps.push_back({first, first, local((s + k) % nodes, 1)});
  p.result = first;
  return p;
}

// The reduction of elements [begin, end) and how (one chunk, or a hierarchical piece).
struct Segment {
  std::size_t begin, end;
  Plan plan;
};

std::vector<Segment> segments(Algorithm algorithm, std::size_t n, std::size_t nodes,
                              std::size_t count) {
  std::vector<Segment> out;
  if (algorithm != Algorithm::kHierarchical) {
    for (std::size_t c = 0; c < n; ++c)
      out.push_back({c * count / n, (c + 1) * count / n, plan_of(algorithm, n, c)});
    return out;
  }
  const std::size_t m = n / nodes;
  for (std::size_t j = 0; j < m; ++j) {
    const std::size_t begin = j * count / m, length = (j + 1) * count / m - begin;
    for (std::size_t s = 0; s < nodes; ++s)
      out.push_back({begin + s * length / nodes, begin + (s + 1) * length / nodes,
                     hierarchical_plan(m, nodes, j, s)});
  }
  return out;
}

void check_nodes(Algorithm algorithm, std::size_t ranks, std::size_t nodes) {
  if (algorithm == Algorithm::kRdh && !std::has_single_bit(ranks))
    throw std::invalid_argument(fmt::format(
        "rdh (recursive halving-doubling) needs a power-of-two number of ranks, not {}", ranks));
  if (algorithm == Algorithm::kHierarchical && (nodes == 0 || ranks % nodes != 0))
    throw std::invalid_argument(fmt::format(
        "hier needs the same number of ranks on every node: {} ranks on {} nodes", ranks, nodes));
}

void check(std::span<const Buffer> inputs, DType dtype, Algorithm algorithm, std::size_t nodes) {
  if (inputs.empty()) throw std::invalid_argument("a collective needs at least one rank");
  if (numerics::is_mx_packed(dtype) || dtype == DType::kFloat8E8M0)
    throw std::invalid_argument(fmt::format(
        "{} cannot be reduced (collectives take float and integer types)", numerics::name(dtype)));
  const std::size_t word = numerics::storage_bytes(dtype);
  for (std::size_t r = 0; r < inputs.size(); ++r) {
    if (inputs[r].size() != inputs[0].size())
      throw std::invalid_argument(fmt::format(
          "rank {}'s buffer holds {} bytes, rank 0's {}: a reduction takes buffers of one size", r,
          inputs[r].size(), inputs[0].size()));
    if (inputs[r].size() % word != 0)
      throw std::invalid_argument(
          fmt::format("rank {}'s buffer of {} bytes is not whole {} elements", r, inputs[r].size(),
                      numerics::name(dtype)));
  }
  check_nodes(algorithm, inputs.size(), nodes);
}

float combine(Reduce op, float a, float b) {
  switch (op) {
    case Reduce::kSum:
      return a + b;
    case Reduce::kMax:
      return numerics::ieee_max(a, b);
    case Reduce::kMin:
      return numerics::ieee_min(a, b);
  }
  return a;
}

// Integers combine exactly and wrap to the type's width (two's complement for the signed
// ones): the choice docs/collectives.md records, the hardware's being unpublished.
std::int64_t read_int(DType dtype, const std::byte* p) {
  std::uint32_t bits = 0;
  const std::size_t word = numerics::storage_bytes(dtype);
  for (std::size_t k = 0; k < word; ++k)
    bits |= static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(p[k])) << (8 * k);
  switch (dtype) {
    case DType::kInt8:
      return static_cast<std::int8_t>(bits);
    case DType::kInt16:
      return static_cast<std::int16_t>(bits);
    case DType::kInt32:
      return static_cast<std::int32_t>(bits);
    default:
      return bits;
  }
}
void write_int(DType dtype, std::int64_t v, std::byte* p) {
  const auto bits = static_cast<std::uint64_t>(v);
  for (std::size_t k = 0; k < numerics::storage_bytes(dtype); ++k)
    p[k] = static_cast<std::byte>((bits >> (8 * k)) & 0xff);
}
std::int64_t combine(Reduce op, std::int64_t a, std::int64_t b) {
  switch (op) {
    case Reduce::kSum:
      return a + b;
    case Reduce::kMax:
      return std::max(a, b);
    case Reduce::kMin:
      return std::min(a, b);
  }
  return a;
}

// Elements [begin, end) reduced by `plan`, written into `out` (storage words).
void reduce_range(std::span<const Buffer> inputs, DType dtype, Reduce op, const Plan& plan,
                  std::size_t begin, std::size_t end, std::byte* out) {
  const std::size_t word = numerics::storage_bytes(dtype);
  const std::size_t count = end - begin;
  if (count == 0) return;
  if (numerics::is_integer(dtype)) {
    std::vector<std::vector<std::int64_t>> slots(inputs.size(), std::vector<std::int64_t>(count));
    for (std::size_t r = 0; r < inputs.size(); ++r)
      for (std::size_t i = 0; i < count; ++i)
        slots[r][i] = read_int(dtype, inputs[r].data() + (begin + i) * word);
    for (const Step& s : plan.steps)
      for (std::size_t i = 0; i < count; ++i)
        slots[s.into][i] = combine(op, slots[s.a][i], slots[s.b][i]);
    for (std::size_t i = 0; i < count; ++i) write_int(dtype, slots[plan.result][i], out + i * word);
    return;
  }
  std::vector<std::vector<float>> slots(inputs.size(), std::vector<float>(count));
  for (std::size_t r = 0; r < inputs.size(); ++r)
    numerics::decode_bytes(dtype, std::span(inputs[r]).subspan(begin * word, count * word),
                           slots[r]);
  std::vector<std::byte> rounded(count * word);
  for (const Step& s : plan.steps) {
    std::vector<float>& into = slots[s.into];
    const std::vector<float>& a = slots[s.a];
    const std::vector<float>& b = slots[s.b];
    for (std::size_t i = 0; i < count; ++i) into[i] = combine(op, a[i], b[i]);
    // Each step's result travels (or is stored) in the collective's dtype (fp32 results
    // already are).
    if (dtype != DType::kFloat32) {
      numerics::encode_bytes(dtype, into, rounded);
      numerics::decode_bytes(dtype, rounded, into);
    }
  }
  numerics::encode_bytes(dtype, slots[plan.result], std::span(out, count * word));
}

// The whole reduction, segment by segment (chunk c: elements [c * count / n, (c + 1) * count /
// n); a hierarchical reduction's pieces within its chunks).
// Segments are independent and write disjoint ranges: they run on `threads` host threads
// with the same bits for any count.
Buffer reduce_all(std::span<const Buffer> inputs, DType dtype, Reduce op, Algorithm algorithm,
                  std::size_t nodes, unsigned threads) {
  check(inputs, dtype, algorithm, nodes);
  const std::size_t word = numerics::storage_bytes(dtype);
  const std::size_t count = inputs[0].size() / word;
  Buffer out(inputs[0].size());
  const std::vector<Segment> parts = segments(algorithm, inputs.size(), nodes, count);
  util::parallel_for(parts.size(), util::resolve_threads(threads), [&](std::size_t k) {
    const Segment& s = parts[k];
    reduce_range(inputs, dtype, op, s.plan, s.begin, s.end, out.data() + s.begin * word);
  });
  return out;
}

}  // namespace

std::vector<Buffer> all_reduce(std::span<const Buffer> inputs, DType dtype, Reduce op,
                               Algorithm algorithm, std::size_t nodes, unsigned threads) {
  return std::vector<Buffer>(inputs.size(),
                             reduce_all(inputs, dtype, op, algorithm, nodes, threads));
}

std::vector<Buffer> reduce_scatter(std::span<const Buffer> inputs, DType dtype, Reduce op,
                                   Algorithm algorithm, std::size_t nodes, unsigned threads) {
  const Buffer whole = reduce_all(inputs, dtype, op, algorithm, nodes, threads);
  const std::size_t word = numerics::storage_bytes(dtype);
  const std::size_t n = inputs.size();
  const std::size_t count = whole.size() / word;
  std::vector<Buffer> out;
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t begin = r * count / n, end = (r + 1) * count / n;
    out.emplace_back(whole.begin() + static_cast<std::ptrdiff_t>(begin * word),
                     whole.begin() + static_cast<std::ptrdiff_t>(end * word));
  }
  return out;
}

std::vector<Buffer> all_gather(std::span<const Buffer> inputs) {
  if (inputs.empty()) throw std::invalid_argument("a collective needs at least one rank");
  Buffer whole;
  for (const Buffer& b : inputs) whole.insert(whole.end(), b.begin(), b.end());
  return std::vector<Buffer>(inputs.size(), whole);
}

std::string reduction_order(Algorithm algorithm, std::size_t ranks, std::size_t chunk,
                            std::size_t nodes) {
  check_nodes(algorithm, ranks, nodes);
  std::vector<std::string> slots;
  for (std::size_t r = 0; r < ranks; ++r) slots.push_back(fmt::format("r{}", r));
  const Plan plan =
      algorithm == Algorithm::kHierarchical
          ? hierarchical_plan(ranks / nodes, nodes, chunk / nodes % (ranks / nodes), chunk % nodes)
          : plan_of(algorithm, ranks, chunk % ranks);
  for (const Step& s : plan.steps) {
    const bool outer = &s == &plan.steps.back();
    slots[s.into] = outer ? fmt::format("{} + {}", slots[s.a], slots[s.b])
                          : fmt::format("({} + {})", slots[s.a], slots[s.b]);
  }
  return slots[plan.result];
}

}  // namespace trnsim::collective
