// `trnsim ccom OP`: nccom-test for simulated systems. The same words, flags and table as
// Neuron's nccom-test (tools/neuron-sys-tools/nccom-test.rst), timed by the collective event
// model (or the analytical one) on a system preset or file (docs/collectives.md).
#include <fmt/core.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_output.h"
#include "cli/commands.h"
#include "collective/collective.h"
#include "numerics/numerics.h"
#include "system/system.h"
#include "util/diagnostic.h"
#include "util/edit_distance.h"
#include "util/parallel.h"
#include "util/read_file.h"

namespace trnsim::cli {

namespace {

using collective::Algorithm;
using collective::Op;

struct CcomArgs {
  std::string op, system = "trn2.48xlarge", dtype = "fp32", algorithm = "auto", json;
  std::string model = "event", trace;   // the time model; a Chrome trace of the largest size
  std::string groups_file, pairs_file;  // --custom-replica-groups, --custom-src-target-pairs
  int data_parallel = -1;               // --data-parallel-dimension (-1: not given)
  std::string min_bytes = "32M", max_bytes, step_bytes;
  double step_factor = 0;
  int ranks = 0, ranks_per_chip = 0;
  std::string check;  // "", "all_ones" or "random": compute the data and check it
  bool show_algorithm = false;
};

// An nccom-test operation: what the table calls it and the model's operation that times it.
// The -v variants run nccom-test's default metadata, an equal chunk for every rank, so they
// take all-gather's and all-to-all's time; their --check computes through the -v function
// kernels use. sendrecv is each rank to the next of its group: a permute.
struct CcomOp {
  Op op = Op::kAllReduce;
  std::string_view name;
  bool variable = false;
};

// nccom-test's operation names and their aliases.
CcomOp op_named(const std::string& name) {
  static const std::map<std::string, CcomOp> kOps = {
      {"all_reduce", {Op::kAllReduce, "all_reduce"}},
      {"allr", {Op::kAllReduce, "all_reduce"}},
      {"all_gather", {Op::kAllGather, "all_gather"}},
      {"allg", {Op::kAllGather, "all_gather"}},
      {"all_gatherv", {Op::kAllGather, "all_gatherv", true}},
      {"allgv", {Op::kAllGather, "all_gatherv", true}},
      {"reduce_scatter", {Op::kReduceScatter, "reduce_scatter"}},
      {"redsct", {Op::kReduceScatter, "reduce_scatter"}},
      {"alltoall", {Op::kAllToAll, "all_to_all"}},
      {"all_to_all", {Op::kAllToAll, "all_to_all"}},
      {"alltoallv", {Op::kAllToAll, "alltoallv", true}},
      {"permute", {Op::kPermute, "permute"}},
      {"sendrecv", {Op::kPermute, "sendrecv"}},
      {"bcast", {Op::kBroadcast, "broadcast"}},
      {"broadcast", {Op::kBroadcast, "broadcast"}}};
  if (const auto it = kOps.find(name); it != kOps.end()) return it->second;
  std::vector<std::string> names;
  for (const auto& [n, op] : kOps) names.push_back(n);
  const std::string near = util::closest(name, names);
  throw std::invalid_argument(fmt::format(
      "'{}' is not an operation trnsim ccom times{} (allr, allg, allgv, redsct, alltoall, "
      "alltoallv, permute, sendrecv, bcast, or the long names all_reduce, all_gather, "
      "all_gatherv, reduce_scatter, all_to_all, broadcast)",
      name, near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
}

// The -v variants' data with nccom-test's default metadata (an equal chunk for every rank),
// through collective::all_to_all_v, which kernels' all_gather_v and all_to_all_v use.
std::vector<collective::Buffer> equal_chunks_v(std::span<const collective::Buffer> in, Op op,
                                               numerics::DType dtype) {
  const std::size_t n = in.size();
  const std::uint64_t elements = in.front().size() / numerics::storage_bytes(dtype);
  const bool gather = op == Op::kAllGather;
  const std::uint64_t chunk = gather ? elements : elements / n;
  collective::VariableChunks c;
  c.send_counts.assign(n, std::vector<std::uint64_t>(n, chunk));
  c.send_displs.assign(n, std::vector<std::uint64_t>(n, 0));
  for (std::size_t s = 0; s < n && !gather; ++s)
    for (std::size_t r = 0; r < n; ++r) c.send_displs[s][r] = r * chunk;
  return collective::all_to_all_v(in, dtype, c, chunk * n).outputs;
}

// nccom-test's data types (its fp8 is fp8e4: Neuron's IEEE-like E4M3).
numerics::DType dtype_named(const std::string& name) {
  using numerics::DType;
  static const std::map<std::string, DType> kTypes = {
      {"uint8", DType::kUInt8},   {"int8", DType::kInt8},   {"fp8", DType::kFloat8E4M3Ieee},
      {"uint16", DType::kUInt16}, {"int16", DType::kInt16}, {"fp16", DType::kFloat16},
      {"bf16", DType::kBFloat16}, {"int32", DType::kInt32}, {"uint32", DType::kUInt32},
      {"fp32", DType::kFloat32}};
  if (const auto it = kTypes.find(name); it != kTypes.end()) return it->second;
  throw std::invalid_argument(fmt::format(
      "-d {}: nccom-test's types are uint8, int8, uint16, int16, fp8, fp16, bf16, int32, uint32, "
      "fp32",
      name));
}

std::optional<Algorithm> algorithm_named(const std::string& name) {
  if (name == "auto") return std::nullopt;
  if (const std::optional<Algorithm> a = collective::algorithm_named(name)) return a;
  throw std::invalid_argument(
      fmt::format("--algorithm {}: one of auto, ring, mesh, rdh, hier", name));
}

// "32M", "1G", "4096", "8K": bytes (K, M, G = 2^10, 2^20, 2^30, as nccom-test).
std::uint64_t parse_bytes(const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  std::uint64_t value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string suffix = text.substr(used);
  const std::map<std::string, int> kShift = {{"", 0},   {"K", 10}, {"M", 20}, {"G", 30},
                                             {"k", 10}, {"m", 20}, {"g", 30}};
  const auto shift = kShift.find(suffix);
  if (used == 0 || text[0] == '-' || shift == kShift.end() || value == 0 ||
      value > (std::uint64_t{1} << 40) >> shift->second)
    throw std::invalid_argument(fmt::format(
        "{} '{}': a positive byte count up to 1T, with an optional K, M or G suffix", flag, text));
  return value << shift->second;
}

// The sizes nccom-test would run: -b to -e by factor -f, or in steps of -i (default (e-b)/10).
std::vector<std::uint64_t> sizes_of(const CcomArgs& a) {
  const std::uint64_t lo = parse_bytes("-b", a.min_bytes);
  const std::uint64_t hi = a.max_bytes.empty() ? lo : parse_bytes("-e", a.max_bytes);
  if (hi < lo) throw std::invalid_argument(fmt::format("-e {} is below -b {}", hi, lo));
  std::vector<std::uint64_t> sizes;
  if (a.step_factor > 0) {
    if (a.step_factor <= 1) throw std::invalid_argument("-f: a step factor above 1");
    for (double s = static_cast<double>(lo); s <= static_cast<double>(hi) && sizes.size() < 1000;
         s *= a.step_factor)
      sizes.push_back(static_cast<std::uint64_t>(s));
    return sizes;
  }
  const std::uint64_t step = a.step_bytes.empty() ? std::max<std::uint64_t>(1, (hi - lo) / 10)
                                                  : parse_bytes("-i", a.step_bytes);
  for (std::uint64_t s = lo; s <= hi && sizes.size() < 1000; s += step) sizes.push_back(s);
  return sizes;
}

// Host memory a --check may use for one size: every rank's input and output, and the fp32 or
// int64 working copies of the chunks being reduced.
constexpr std::uint64_t kCheckBytes = std::uint64_t{1} << 30;

std::uint64_t check_bytes(std::uint64_t size, std::size_t word, int ranks) {
  const std::uint64_t elements = size / word;
  return 2 * size * static_cast<std::uint64_t>(ranks) + 8 * elements * util::resolve_threads(0);
}

// The largest integer `dtype` holds exactly with every integer below it: 2^(mantissa + 1)
// for a float type, the maximum for an integer type.
double exact_integers(numerics::DType dtype) {
  if (const std::optional<int> m = numerics::mantissa_bits(dtype)) return std::ldexp(1.0, *m + 1);
  return numerics::max_finite(dtype);
}

// Rank r's element i: 1 (all_ones) or a small integer (random), so that every sum of up to
// 255 ranks is exact in every nccom-test type and the expected result is known without
// depending on the order of the additions.
float check_value(const std::string& mode, int rank, std::size_t i) {
  return mode == "all_ones" ? 1.0f
                            : static_cast<float>((static_cast<std::size_t>(rank) * 7 + i * 3) % 5);
}

// Rank r's expected result for element k, given every rank's inputs (as check_value) and
// the group it is in (`members`, r at `local`). Reductions hold sums of small integers, exact
// in every type whatever the order.
double expected_value(const CcomArgs& a, Op op, const std::vector<int>& members, std::size_t local,
                      std::size_t per_rank, std::size_t k, const std::map<int, int>& source_of) {
  const std::size_t n = members.size();
  const auto input = [&](std::size_t member, std::size_t i) {
    return static_cast<double>(check_value(a.check, members[member], i));
  };
  switch (op) {
    case Op::kAllGather:
      return input(k / per_rank, k % per_rank);
    case Op::kAllToAll:  // chunk `local` of member k / chunk
      return input(k / (per_rank / n), local * (per_rank / n) + k % (per_rank / n));
    case Op::kBroadcast:  // from the group's first rank
      return input(0, k);
    case Op::kPermute: {
      const auto it = source_of.find(members[local]);
      return it == source_of.end() ? 0.0 : check_value(a.check, it->second, k);
    }
    case Op::kAllReduce:
    case Op::kReduceScatter: {
      const std::size_t i = op == Op::kReduceScatter ? local * per_rank / n + k : k;
      double sum = 0;
      for (std::size_t q = 0; q < n; ++q) sum += input(q, i);
      return sum;
    }
  }
  return 0;
}

// Computes the collective on every rank's data, group by group, and checks every rank's
// result against what it must hold. Returns "" or the first wrong element.
std::string check_data(const CcomArgs& a, const CcomOp& named, numerics::DType dtype,
                       std::uint64_t size, Algorithm algorithm, std::size_t nodes,
                       const collective::Participants& who) {
  const Op op = named.op;
  const std::size_t word = numerics::storage_bytes(dtype);
  const collective::ReplicaGroups groups = who.replica_groups.empty()
                                               ? collective::consecutive_groups(a.ranks, a.ranks)
                                               : who.replica_groups;
  const std::size_t n = groups.front().size();
  const std::size_t total = size / word;  // the whole buffer
  const std::size_t per_rank = op == Op::kAllGather ? total / n : total;
  std::vector<collective::Buffer> inputs;
  for (int r = 0; r < a.ranks; ++r) {
    std::vector<float> v(per_rank);
    for (std::size_t i = 0; i < per_rank; ++i) v[i] = check_value(a.check, r, i);
    inputs.emplace_back(per_rank * word);
    numerics::encode_bytes(dtype, v, inputs.back());
  }
  using collective::Reduce;
  const std::vector<collective::Buffer> out =
      op == Op::kPermute
          ? collective::permute(inputs, who.source_target_pairs)
          : collective::in_groups(
                inputs, who.replica_groups, [&](std::span<const collective::Buffer> in) {
                  if (named.variable) return equal_chunks_v(in, op, dtype);
                  switch (op) {
                    case Op::kAllGather:
                      return collective::all_gather(in);
                    case Op::kAllToAll:
                      return collective::all_to_all(in, dtype);
                    case Op::kBroadcast:
                      return collective::broadcast(in, 0);
                    case Op::kAllReduce:
                      return collective::all_reduce(in, dtype, Reduce::kSum, algorithm, nodes);
                    case Op::kReduceScatter:
                      return collective::reduce_scatter(in, dtype, Reduce::kSum, algorithm, nodes);
                    case Op::kPermute:
                      break;
                  }
                  throw std::logic_error("check_data: permute is not run by groups");
                });
  std::map<int, int> source_of;
  for (const auto& [source, target] : who.source_target_pairs) source_of[target] = source;
  for (const std::vector<int>& members : groups)
    for (std::size_t local = 0; local < members.size(); ++local) {
      const auto r = static_cast<std::size_t>(members[local]);
      std::vector<float> got(out[r].size() / word);
      numerics::decode_bytes(dtype, out[r], got);
      for (std::size_t k = 0; k < got.size(); ++k) {
        const double want = expected_value(a, op, members, local, per_rank, k, source_of);
        if (got[k] != want)
          return fmt::format("rank {} element {} is {}, not {}", r, k, got[k], want);
      }
    }
  return "";
}

// One size's time from either model, with what that model can say about it for the JSON.
struct Timed {
  double time_ns = 0;
  Algorithm algorithm = Algorithm::kRing;
  nlohmann::json details;
  std::optional<collective::Simulation> simulation;  // kept when traced

  explicit Timed(const collective::Estimate& e)
      : time_ns(e.time_ns),
        algorithm(e.algorithm),
        details({{"steps", e.steps},
                 {"transfer_us", e.transfer_ns * 1e-3},
                 {"latency_us", e.latency_ns * 1e-3},
                 {"busiest", e.bound}}) {}

  Timed(collective::Simulation s, bool keep) : time_ns(s.time_ns), algorithm(s.algorithm) {
    details = {{"steps", s.steps}, {"events", s.events}};
    if (!s.channels.empty())
      details["busiest"] = {{"channel", s.channels.front().name},
                            {"busy_us", s.channels.front().busy_ns * 1e-3},
                            {"utilisation", s.channels.front().busy_ns / s.time_ns}};
    const collective::RankStep& w = s.longest_wait;
    if (w.waited_on >= 0)
      details["longest_wait"] = {{"rank", w.rank},
                                 {"step", w.step},
                                 {"waited_on", w.waited_on},
                                 {"wait_us", (w.end_ns - w.sent_ns) * 1e-3}};
    if (keep) simulation = std::move(s);
  }
};

// A JSON file of nccom-test's form, {"KEY": [VALUE]} (an extra outer list), as VALUE.
nlohmann::json read_nccom_json(const std::string& path, const char* key, const char* flag) {
  const std::string text = util::read_file(path, std::uint64_t{64} << 20, flag);
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains(key) || !j[key].is_array() ||
      j[key].size() != 1)
    throw std::invalid_argument(fmt::format(
        "{}: {} is not {{\"{}\": [[...]]}} (nccom-test's form: one list inside the outer one)",
        flag, path, key));
  return j[key][0];
}

// Replica groups and permute pairs from the flags; a permute without pairs is each rank to the
// next of its group.
collective::Participants participants(const CcomArgs& a, Op op) {
  collective::Participants who;
  if (a.data_parallel >= 0 && !a.groups_file.empty())
    throw std::invalid_argument(
        "--data-parallel-dimension and --custom-replica-groups both give the groups: one of them");
  if (a.data_parallel == 0 || a.data_parallel < -1)
    throw std::invalid_argument(fmt::format(
        "--data-parallel-dimension {}: a positive number of ranks per group", a.data_parallel));
  if (a.data_parallel > 0)
    who.replica_groups = collective::consecutive_groups(a.ranks, a.data_parallel);
  const auto ints = [](const nlohmann::json& j, const std::string& where) {
    std::vector<int> v;
    if (!j.is_array()) throw std::invalid_argument(where + ": a list of ranks");
    for (const nlohmann::json& x : j) {
      if (!x.is_number_integer()) throw std::invalid_argument(where + ": ranks are integers");
      const auto rank = x.get<std::int64_t>();
      if (rank < 0 || rank > std::numeric_limits<int>::max())
        throw std::invalid_argument(fmt::format("{}: rank {} is not a rank", where, rank));
      v.push_back(static_cast<int>(rank));
    }
    return v;
  };
  if (!a.groups_file.empty()) {
    const nlohmann::json groups =
        read_nccom_json(a.groups_file, "replica_groups", "--custom-replica-groups");
    if (!groups.is_array() || groups.empty())
      throw std::invalid_argument(
          fmt::format("--custom-replica-groups {}: a non-empty list of groups", a.groups_file));
    for (std::size_t g = 0; g < groups.size(); ++g)
      who.replica_groups.push_back(
          ints(groups[g], fmt::format("--custom-replica-groups {}: group {}", a.groups_file, g)));
  }
  if (!who.replica_groups.empty()) collective::check_replica_groups(who.replica_groups, a.ranks);
  if (!a.pairs_file.empty()) {
    if (op != Op::kPermute)
      throw std::invalid_argument("--custom-src-target-pairs belongs to permute");
    const nlohmann::json pairs =
        read_nccom_json(a.pairs_file, "src_target_pairs", "--custom-src-target-pairs");
    if (!pairs.is_array() || pairs.empty())
      throw std::invalid_argument(
          fmt::format("--custom-src-target-pairs {}: a non-empty list of [source, target] pairs",
                      a.pairs_file));
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const std::vector<int> pair =
          ints(pairs[k], fmt::format("--custom-src-target-pairs {}: pair {}", a.pairs_file, k));
      if (pair.size() != 2)
        throw std::invalid_argument(
            fmt::format("--custom-src-target-pairs {}: pair {} has {} ranks, not 2", a.pairs_file,
                        k, pair.size()));
      who.source_target_pairs.emplace_back(pair[0], pair[1]);
    }
  } else if (op == Op::kPermute) {
    who.source_target_pairs = collective::ring_pairs(
        who.replica_groups.empty() ? collective::consecutive_groups(a.ranks, a.ranks)
                                   : who.replica_groups);
  }
  return who;
}

// The flags that need no system: --check's mode and exactness, --model and --trace. Then,
// with the groups known, that an all-to-all's data splits.
void check_flags(const CcomArgs& a) {
  if (!a.check.empty() && a.check != "all_ones" && a.check != "random")
    throw std::invalid_argument(fmt::format("--check {}: all_ones or random", a.check));
  if (!a.check.empty()) {
    // Every partial sum must be exact, or a correct reduction would look wrong.
    const double largest = a.check == "all_ones" ? 1.0 : 4.0;
    const double limit = exact_integers(dtype_named(a.dtype));
    if (largest * a.ranks > limit)
      throw std::invalid_argument(fmt::format(
          "--check {} with {} ranks of {}: sums reach {:g}, above {:g}, the largest integer up to "
          "which {} is exact (fewer ranks{})",
          a.check, a.ranks, a.dtype, largest * a.ranks, limit, a.dtype,
          a.check == "random" ? ", or --check all_ones" : ""));
  }
  if (a.model != "event" && a.model != "analytical")
    throw std::invalid_argument(fmt::format("--model {}: event or analytical", a.model));
  if (!a.trace.empty() && a.model != "event")
    throw std::invalid_argument("--trace draws the event model's run (--model event)");
}

void check_splits(const CcomArgs& a, Op op, int group_size, std::span<const std::uint64_t> sizes) {
  if (op != Op::kAllToAll || a.check.empty()) return;
  const std::size_t word = numerics::storage_bytes(dtype_named(a.dtype));
  for (const std::uint64_t size : sizes)
    if (size / word % static_cast<std::uint64_t>(group_size) != 0)
      throw std::invalid_argument(
          fmt::format("--check with {}: {} bytes of {} do not split into {} equal chunks, one per "
                      "rank (sizes that are multiples of {} elements)",
                      op_named(a.op).name, size, a.dtype, group_size, group_size));
}

// --check: computes every size that fits in host memory and checks every rank's result.
void check_every_size(const CcomArgs& a, const CcomOp& op, std::span<const std::uint64_t> sizes,
                      std::span<const Timed> timed, int nodes,
                      const collective::Participants& who) {
  const numerics::DType dtype = dtype_named(a.dtype);
  const std::size_t word = numerics::storage_bytes(dtype);
  int checked = 0, skipped = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (check_bytes(sizes[k], word, a.ranks) > kCheckBytes) {
      ++skipped;
      continue;
    }
    const std::string wrong = check_data(a, op, dtype, sizes[k], timed[k].algorithm,
                                         static_cast<std::size_t>(nodes), who);
    if (!wrong.empty())
      throw std::runtime_error(fmt::format("--check {}: size {} ({}): {}", a.check, sizes[k],
                                           collective::name(timed[k].algorithm), wrong));
    ++checked;
  }
  fmt::print("check ({}): {} size{} computed and correct on every rank{}\n", a.check, checked,
             checked == 1 ? "" : "s",
             skipped > 0 ? fmt::format("; {} skipped (over 1 GiB of host memory)", skipped) : "");
}

void run_ccom(const CcomArgs& a) {
  const CcomOp named = op_named(a.op);
  const Op op = named.op;
  check_flags(a);
  const std::size_t word = numerics::storage_bytes(dtype_named(a.dtype));
  const std::optional<Algorithm> forced = algorithm_named(a.algorithm);
  const system::SystemConfig config = system::load(a.system);
  const collective::CollectiveModel model(config, a.ranks_per_chip);
  const std::vector<std::uint64_t> sizes = sizes_of(a);
  model.check_ranks(a.ranks);
  const collective::Participants who = participants(a, op);
  const collective::ReplicaGroups groups = who.replica_groups.empty()
                                               ? collective::consecutive_groups(a.ranks, a.ranks)
                                               : who.replica_groups;
  const int group_size = static_cast<int>(groups.front().size());
  check_splits(a, op, group_size, sizes);
  // Every size is timed before anything prints: a bad input prints no table.
  std::vector<Timed> timed;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    collective::SimulateOptions options;
    options.trace = !a.trace.empty() && k + 1 == sizes.size();
    timed.push_back(
        a.model == "event"
            ? Timed(model.simulate(op, sizes[k], a.ranks, forced, who, options), options.trace)
            : Timed(model.estimate(op, sizes[k], a.ranks, forced, who)));
  }
  fmt::print("trnsim ccom {} on {} ({} ranks{}, {} per chip; {} model, docs/collectives.md)\n",
             named.name, config.name, a.ranks,
             groups.size() > 1 ? fmt::format(" in {} groups of {}", groups.size(), group_size) : "",
             model.ranks_per_chip(), a.model);
  fmt::print("{:>14}{:>16}{:>8}{:>16}{:>14}{:>14}{}\n", "size(B)", "count(elems)", "type",
             "time:avg(us)", "algbw(GB/s)", "busbw(GB/s)", a.show_algorithm ? "    algorithm" : "");
  nlohmann::json rows = nlohmann::json::array();
  double busbw_sum = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::uint64_t size = sizes[k];
    const Timed& t = timed[k];
    const double us = t.time_ns * 1e-3;
    const double algbw = t.time_ns > 0 ? static_cast<double>(size) / t.time_ns : 0;  // GB/s
    const double busbw = algbw * collective::bus_factor(op, group_size);
    busbw_sum += busbw;
    fmt::print("{:>14}{:>16}{:>8}{:>16.2f}{:>14.2f}{:>14.2f}{}\n", size, size / word, a.dtype, us,
               algbw, busbw,
               a.show_algorithm ? fmt::format("    {}", collective::name(t.algorithm)) : "");
    nlohmann::json row = t.details;
    row.update({{"size_bytes", size},
                {"count", size / word},
                {"time_us", us},
                {"algbw_gbps", algbw},
                {"busbw_gbps", busbw},
                {"algorithm", collective::name(t.algorithm)}});
    rows.push_back(std::move(row));
  }
  fmt::print("Avg bus bandwidth:\t{:.4f} GB/s\n", busbw_sum / static_cast<double>(sizes.size()));
  if (!a.check.empty())
    check_every_size(a, named, sizes, timed, model.nodes_of_group(groups.front()), who);
  if (!a.json.empty()) {
    const nlohmann::json j = {{"op", named.name},
                              {"system", config.name},
                              {"ranks", a.ranks},
                              {"replica_groups", collective::format_groups(groups)},
                              {"ranks_per_chip", model.ranks_per_chip()},
                              {"dtype", a.dtype},
                              {"model", a.model},
                              {"results", rows}};
    write_text_file(a.json, j.dump(2) + "\n");
  }
  if (!a.trace.empty()) {
    std::ostringstream trace;
    const collective::Simulation& traced = *timed.back().simulation;
    collective::write_chrome_trace(traced, trace);
    write_text_file(a.trace, trace.str());
    fmt::print("trace: {} ({} B: {} rank steps, {} channels; open in https://ui.perfetto.dev)\n",
               a.trace, sizes.back(), traced.rank_steps.size(), traced.channels.size());
  }
}

}  // namespace

void register_ccom_command(CLI::App& app) {
  auto args = std::make_shared<CcomArgs>();
  auto* cmd = app.add_subcommand(
      "ccom",
      "nccom-test for simulated systems: time a collective (allr, allg, allgv, redsct, "
      "alltoall, alltoallv, permute, sendrecv, bcast) over a range of "
      "sizes on a system preset or file, with nccom-test's flags and table (docs/collectives.md)");
  cmd->add_option("op", args->op,
                  "allr|all_reduce, allg|all_gather, allgv|all_gatherv, redsct|reduce_scatter, "
                  "alltoall, alltoallv, permute, sendrecv, bcast|broadcast (trnsim's: from each "
                  "group's first rank)")
      ->required();
  cmd->add_option("-r,--nworkers", args->ranks, "Ranks taking part (logical cores)")->required();
  cmd->add_option("--system", args->system, "System preset or JSON file (trnsim system list)");
  cmd->add_option("-b,--minbytes", args->min_bytes, "Smallest size (K, M, G suffixes)");
  cmd->add_option("-e,--maxbytes", args->max_bytes, "Largest size (default: -b)");
  cmd->add_option("-i,--stepbytes", args->step_bytes, "Step between sizes (default (e-b)/10)");
  cmd->add_option("-f,--stepfactor", args->step_factor, "Multiply the size by this instead");
  cmd->add_option("-d,--datatype", args->dtype,
                  "uint8, int8, uint16, int16, fp8, fp16, bf16, "
                  "int32, uint32, fp32");
  cmd->add_option("--algorithm", args->algorithm,
                  "auto (the runtime's choice by size and nodes), ring, mesh, rdh or hier");
  cmd->add_option("--ranks-per-chip", args->ranks_per_chip,
                  "Ranks on each chip (default: its logical cores)");
  cmd->add_flag("--show-algorithm", args->show_algorithm, "Add the algorithm column");
  cmd->add_option("-c,--check", args->check,
                  "Also compute the data (all_ones or random) with the chosen algorithm's "
                  "reduction order and check every rank's result");
  cmd->add_option("--report-to-json-file,--json", args->json, "Write the results as JSON");
  cmd->add_option("--model", args->model,
                  "event (chunks over the links, ranks waiting on their peers) or analytical "
                  "(step by step, for systems too large for events)");
  cmd->add_option("--data-parallel-dimension", args->data_parallel,
                  "Replica groups of this many consecutive ranks");
  cmd->add_option("--custom-replica-groups", args->groups_file,
                  "Replica groups from a JSON file: {\"replica_groups\": [[[0, 1], [2, 3]]]}");
  cmd->add_option("--custom-src-target-pairs", args->pairs_file,
                  "Permute pairs from a JSON file: {\"src_target_pairs\": [[[0, 1], [1, 0]]]}");
  cmd->add_option("--trace", args->trace,
                  "Write a Chrome/Perfetto trace of the largest size's event-model run");
  cmd->callback([args] {
    try {
      run_ccom(*args);
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}\n", util::format_exception(e, "trnsim ccom"));
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace trnsim::cli
