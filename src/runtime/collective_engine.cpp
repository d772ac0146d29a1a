#include "runtime/collective_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace trnsim::runtime::detail {

namespace {

using collective::Buffer;

collective::Reduce reduce_of(isa::AluOp op) {
  switch (op) {
    case isa::AluOp::kMaximum:
      return collective::Reduce::kMax;
    case isa::AluOp::kMinimum:
      return collective::Reduce::kMin;
    default:
      return collective::Reduce::kSum;
  }
}

// The operation as the collective model names it, and the bytes it counts (the whole buffer
// for reductions and gathers, one rank's for all-to-all and permute), after checking that
// the member's dst fits what the collective gives it.
std::pair<collective::Op, std::uint64_t> sized(const isa::Collective& op, std::int64_t members) {
  const std::int64_t in = op.src.total_elements(), out = op.dst.total_elements();
  const std::uint64_t word = numerics::storage_bytes(op.src.dtype);
  const auto need = [&](bool ok, std::string what) {
    if (!ok)
      throw std::invalid_argument(
          fmt::format("{} among {} ranks: src has {} elements and dst {}; {}",
                      isa::collective_kind_name(op.kind), members, in, out, what));
  };
  switch (op.kind) {
    case isa::CollectiveKind::kAllReduce:
      need(out == in, "dst needs src's");
      return {collective::Op::kAllReduce, static_cast<std::uint64_t>(in) * word};
    case isa::CollectiveKind::kAllGather:
      need(out == in * members, "dst needs the group size x src's");
      return {collective::Op::kAllGather, static_cast<std::uint64_t>(out) * word};
    case isa::CollectiveKind::kReduceScatter:
      need(in == out * members, "src needs the group size x dst's");
      need(op.split_rows % static_cast<std::uint64_t>(members) == 0,
           fmt::format("src's outermost dimension, {}, must split into a slice per rank",
                       op.split_rows));
      return {collective::Op::kReduceScatter, static_cast<std::uint64_t>(in) * word};
    case isa::CollectiveKind::kAllToAll:
      need(out == in && in % members == 0, "dst needs src's, a multiple of the group size");
      need(op.split_rows % static_cast<std::uint64_t>(members) == 0,
           fmt::format("src's outermost dimension, {}, must split into a slice per rank",
                       op.split_rows));
      return {collective::Op::kAllToAll, static_cast<std::uint64_t>(in) * word};
    case isa::CollectiveKind::kPermute:
    case isa::CollectiveKind::kPermuteReduce:
      need(out == in, "dst needs src's");
      return {collective::Op::kPermute, static_cast<std::uint64_t>(in) * word};
    // The counts are data, which a timing-only run does not read: both modes time the
    // collective that fills dst (all_gather_v) or moves all of src (all_to_all_v), a bound.
    case isa::CollectiveKind::kAllGatherV:
      return {collective::Op::kAllGather, static_cast<std::uint64_t>(out) * word};
    case isa::CollectiveKind::kAllToAllV:
      return {collective::Op::kAllToAll, static_cast<std::uint64_t>(in) * word};
  }
  throw std::logic_error("unknown collective kind");
}

collective::Participants participants(const isa::Collective& op) {
  collective::Participants who;
  for (std::size_t i = 0; op.group_size != 0 && i < op.groups.size(); i += op.group_size)
    who.replica_groups.emplace_back(
        op.groups.begin() + static_cast<std::ptrdiff_t>(i),
        op.groups.begin() + static_cast<std::ptrdiff_t>(i) + op.group_size);
  for (std::size_t i = 0; i + 1 < op.pairs.size(); i += 2)
    who.source_target_pairs.emplace_back(op.pairs[i], op.pairs[i + 1]);
  return who;
}

// A permute's pairs among its members (the engine's inputs, in member order): its own (every
// rank of the launch is a member then), or without them a ring in the group's order.
collective::Pairs member_pairs(const isa::Collective& op, std::size_t members) {
  collective::Pairs pairs;
  for (std::size_t i = 0; i + 1 < op.pairs.size(); i += 2)
    pairs.emplace_back(op.pairs[i], op.pairs[i + 1]);
  if (!pairs.empty()) return pairs;
  const auto n = static_cast<int>(members);
  for (int k = 0; k < n; ++k) pairs.emplace_back(k, (k + 1) % n);
  return pairs;
}

// A member's metadata as uint32 rows of one column per member, checked for size.
std::vector<std::uint32_t> metadata_rows(const sim::CollectiveMember& m, std::size_t members) {
  const isa::Collective& op = *m.op;
  const std::size_t rows = op.has_rdispls ? 4 : 3;
  std::vector<std::uint32_t> words(m.metadata.size() / sizeof(std::uint32_t));
  std::memcpy(words.data(), m.metadata.data(), words.size() * sizeof(std::uint32_t));
  if (words.size() != rows * members)
    throw std::invalid_argument(fmt::format(
        "{} among {} ranks: rank {}'s metadata holds {} values, not {} rows of {} (send counts, "
        "send displacements, receive counts{})",
        isa::collective_kind_name(op.kind), members, m.rank, words.size(), rows, members,
        op.has_rdispls ? ", receive displacements" : ""));
  return words;
}

// all_gather_v and all_to_all_v: the chunks the members' metadata ask for, moved; each
// member's dst gets the ranges it received and (unless recv_counts_known) its metadata the
// receive counts in row 2.
void run_variable(std::span<sim::CollectiveMember> members, std::span<const Buffer> inputs) {
  const isa::Collective& op = *members.front().op;
  const std::size_t n = members.size();
  collective::VariableChunks chunks;
  std::vector<std::vector<std::uint32_t>> meta;
  for (const sim::CollectiveMember& m : members) meta.push_back(metadata_rows(m, n));
  const bool gather = op.kind == isa::CollectiveKind::kAllGatherV;
  chunks.send_counts.assign(n, std::vector<std::uint64_t>(n));
  chunks.send_displs.assign(n, std::vector<std::uint64_t>(n));
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t r = 0; r < n; ++r) {  // all_gather_v reads the first column only
      chunks.send_counts[s][r] = meta[s][gather ? 0 : r];
      chunks.send_displs[s][r] = meta[s][n + (gather ? 0 : r)];
    }
  if (op.has_rdispls)
    for (std::size_t r = 0; r < n; ++r)
      chunks.recv_displs.emplace_back(meta[r].begin() + static_cast<std::ptrdiff_t>(3 * n),
                                      meta[r].begin() + static_cast<std::ptrdiff_t>(4 * n));
  const auto out_elements = static_cast<std::uint64_t>(op.dst.total_elements());
  std::vector<int> ranks;
  for (const sim::CollectiveMember& m : members) ranks.push_back(m.rank);
  collective::VariableResult result =
      collective::all_to_all_v(inputs, op.src.dtype, chunks, out_elements, ranks);
  for (std::size_t r = 0; r < n; ++r) {
    sim::CollectiveMember& m = members[r];
    m.dst.resize(result.outputs[r].size());
    std::memcpy(m.dst.data(), result.outputs[r].data(), result.outputs[r].size());
    m.dst_written = std::move(result.written[r]);
    if (op.recv_counts_known) continue;
    for (std::size_t s = 0; s < n; ++s)
      meta[r][2 * n + s] = static_cast<std::uint32_t>(result.recv_counts[r][s]);
    m.metadata_out.resize(m.metadata.size());
    std::memcpy(m.metadata_out.data(), meta[r].data(), m.metadata_out.size());
  }
}

}  // namespace

void SystemCollectives::compute(std::span<sim::CollectiveMember> members,
                                collective::Algorithm algorithm) const {
  const isa::Collective& op = *members.front().op;
  std::vector<Buffer> inputs(members.size());
  for (std::size_t k = 0; k < members.size(); ++k) {
    inputs[k].resize(members[k].src.size());
    std::memcpy(inputs[k].data(), members[k].src.data(), members[k].src.size());
  }
  if (isa::is_variable_collective(op.kind)) {
    run_variable(members, inputs);
    return;
  }
  std::vector<int> ranks_of;
  for (const sim::CollectiveMember& m : members) ranks_of.push_back(m.rank);
  const std::size_t nodes = algorithm == collective::Algorithm::kHierarchical
                                ? static_cast<std::size_t>(model_.nodes_of_group(ranks_of, true))
                                : 1;
  const numerics::DType dtype = op.src.dtype;
  std::vector<Buffer> out;
  switch (op.kind) {
    case isa::CollectiveKind::kAllReduce:
      out = collective::all_reduce(inputs, dtype, reduce_of(op.op), algorithm, nodes);
      break;
    case isa::CollectiveKind::kReduceScatter:
      out = collective::reduce_scatter(inputs, dtype, reduce_of(op.op), algorithm, nodes);
      break;
    case isa::CollectiveKind::kAllGather:
      out = collective::all_gather(inputs);
      break;
    case isa::CollectiveKind::kAllToAll:
      out = collective::all_to_all(inputs, dtype);
      break;
    case isa::CollectiveKind::kPermuteReduce:
      // Each rank's op(src, src1) first: one combine and one rounding, as a reduction of two.
      for (std::size_t k = 0; k < members.size(); ++k) {
        std::vector<Buffer> pair(2, inputs[k]);
        pair[1].resize(members[k].src1.size());
        std::memcpy(pair[1].data(), members[k].src1.data(), members[k].src1.size());
        inputs[k] = std::move(
            collective::all_reduce(pair, dtype, reduce_of(op.op), collective::Algorithm::kMesh)
                .front());
      }
      [[fallthrough]];
    case isa::CollectiveKind::kPermute:
      out = collective::permute(inputs, member_pairs(op, members.size()));
      break;
    case isa::CollectiveKind::kAllGatherV:
    case isa::CollectiveKind::kAllToAllV:
      break;  // run_variable
  }
  for (std::size_t k = 0; k < members.size(); ++k) {
    members[k].dst.resize(out[k].size());
    std::memcpy(members[k].dst.data(), out[k].data(), out[k].size());
  }
}

SystemCollectives::SystemCollectives(const system::SystemConfig& system, int ranks_per_chip,
                                     std::uint64_t event_chunks)
    : model_(system, ranks_per_chip), event_chunks_(event_chunks) {}

std::vector<sim::Duration> SystemCollectives::run(std::span<sim::CollectiveMember> members,
                                                  int ranks, bool functional) {
  const isa::Collective& op = *members.front().op;
  const auto n = static_cast<std::int64_t>(members.size());
  for (const sim::CollectiveMember& m : members)
    if (m.op->src.total_elements() != op.src.total_elements() ||
        m.op->dst.total_elements() != op.dst.total_elements())
      throw std::invalid_argument(fmt::format(
          "rank {} calls {} with {} and {} elements, rank {} with {} and {} (every member moves "
          "the same sizes)",
          m.rank, isa::collective_kind_name(op.kind), m.op->src.total_elements(),
          m.op->dst.total_elements(), members.front().rank, op.src.total_elements(),
          op.dst.total_elements()));
  const auto [cop, bytes] = sized(op, n);
  const collective::Participants who = participants(op);
  const auto key = std::tuple{static_cast<int>(cop), bytes, op.groups, op.group_size, op.pairs};
  auto it = timed_.find(key);
  if (it == timed_.end()) {
    Timed t;
    if (model_.chunk_count(cop, bytes, ranks, std::nullopt, who) <= event_chunks_) {
      const collective::Simulation run = model_.simulate(cop, bytes, ranks, std::nullopt, who);
      t = {run.time_ns, run.algorithm, "event"};
    } else {
      const collective::Estimate e = model_.estimate(cop, bytes, ranks, std::nullopt, who);
      t = {e.time_ns, e.algorithm, "analytical"};
    }
    it = timed_.emplace(key, t).first;
  }
  const Timed& estimate = it->second;

  if (functional) compute(members, estimate.algorithm);
  sim::Duration start = 0;
  for (const sim::CollectiveMember& m : members) start = std::max(start, m.arrived);
  const sim::Duration end = start + estimate.time_ns;
  records_.push_back({op.kind, std::string(collective::name(estimate.algorithm)), estimate.model,
                      bytes, static_cast<int>(n), start, end});
  return std::vector<sim::Duration>(members.size(), end);
}

system::SystemConfig one_chip_system(const arch::ChipConfig& chip) {
  system::SystemConfig s;
  s.name = chip.name;
  s.description = fmt::format("one {} chip", chip.name);
  s.chip = chip.name;
  s.chip_config = chip;
  s.instances = 1;
  s.shape = {system::Dimension{"chip", 1}};
  // One instance: no EFA in the graph, but the config keeps the field valid.
  s.efa.gbit_per_chip = {200, "unused: a system of one chip has no network", true};
  s.efa.latency_ns = {15000, "unused: a system of one chip has no network", true};
  return s;
}

}  // namespace trnsim::runtime::detail
