#include "sim/collective_calls.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace trnsim::sim::detail {

namespace {

const isa::Collective& collective(const isa::Instruction& inst) {
  return std::get<isa::Collective>(inst.op);
}

// "0 to 3" or "0, 2, 5"
std::string rank_list(const std::vector<std::uint32_t>& ranks) {
  bool consecutive = ranks.size() > 2;
  for (std::size_t i = 1; i < ranks.size(); ++i)
    consecutive = consecutive && ranks[i] == ranks[i - 1] + 1;
  if (consecutive) return fmt::format("{} to {}", ranks.front(), ranks.back());
  return fmt::format("{}", fmt::join(ranks, ", "));
}

// What two calls that meet disagree on, or "".
std::string disagreement(const isa::Collective& a, const isa::Collective& b) {
  if (a.kind != b.kind)
    return fmt::format("it is {}, the other {}", isa::collective_kind_name(b.kind),
                       isa::collective_kind_name(a.kind));
  if (a.op != b.op)
    return fmt::format("it reduces with {}, the other with {}", isa::alu_op_name(b.op),
                       isa::alu_op_name(a.op));
  if (a.groups != b.groups || a.group_size != b.group_size)
    return "its replica groups differ from the other's";
  if (a.pairs != b.pairs) return "its source-target pairs differ from the other's";
  if (a.recv_counts_known != b.recv_counts_known || a.has_rdispls != b.has_rdispls)
    return "its recv_counts_known or has_rdispls differ from the other's";
  if (a.src.dtype != b.src.dtype)
    return fmt::format("it moves {}, the other {}", numerics::name(b.src.dtype),
                       numerics::name(a.src.dtype));
  return "";
}

}  // namespace

CollectiveInputs load_inputs(CoreOperandIO& io, const isa::Collective& op) {
  CollectiveInputs in;
  in.src = io.load_bytes(op.src);
  if (op.src1) in.src1 = io.load_bytes(*op.src1);
  if (op.metadata) {
    // Row 2, the receive counts, is never read (NKI: the call's output, or left alone with
    // recv_counts_known): only the other rows must have been written.
    std::vector<bool> missing;
    in.metadata = io.load_bytes_unchecked(*op.metadata, missing);
    static constexpr std::array<const char*, 4> kRows = {"send counts", "send displacements",
                                                         "receive counts", "receive displacements"};
    const std::uint64_t n = std::max<std::uint64_t>(1, missing.size() / (op.has_rdispls ? 4 : 3));
    for (std::uint64_t e = 0; e < missing.size(); ++e)
      if (missing[e] && e / n != 2 && e / n < 4 && io.policy() == UninitializedPolicy::kError)
        io.fail(
            fmt::format("operand 'metadata' reads uninitialised memory: row {} ({}) column "
                        "{} was never written (if an instruction on another queue writes "
                        "it, this one needs to wait for it)",
                        e / n, kRows[e / n], e % n));
  }
  return in;
}

void store_outputs(CoreOperandIO& io, const isa::Collective& op, const CollectiveMember& m) {
  if (isa::is_variable_collective(op.kind))
    io.store_bytes(op.dst, m.dst, m.dst_written);
  else
    io.store_bytes(op.dst, m.dst);
  if (op.metadata && !m.metadata_out.empty()) {  // row 2 only: the receive counts
    const std::uint64_t n =
        m.metadata_out.size() / sizeof(std::uint32_t) / (op.has_rdispls ? 4 : 3);
    const std::pair<std::uint64_t, std::uint64_t> row2{2 * n, 3 * n};
    io.store_bytes(*op.metadata, m.metadata_out, std::span(&row2, 1));
  }
}

std::vector<std::uint32_t> CollectiveCalls::members_of(const isa::Collective& op,
                                                       std::uint32_t rank, std::uint32_t ranks) {
  for (const std::uint32_t r : op.groups)
    if (r >= ranks)
      throw std::invalid_argument(
          fmt::format("its replica groups name rank {}, but the launch has {} rank{} (0 to {})", r,
                      ranks, ranks == 1 ? "" : "s", ranks - 1));
  for (const std::uint32_t r : op.pairs)
    if (r >= ranks)
      throw std::invalid_argument(
          fmt::format("its source-target pairs name rank {}, but the launch has {} rank{} (0 "
                      "to {})",
                      r, ranks, ranks == 1 ? "" : "s", ranks - 1));
  if (!op.groups.empty() && op.groups.size() != ranks)
    throw std::invalid_argument(
        fmt::format("its replica groups hold {} ranks, but the launch has {} (the groups must "
                    "hold every rank)",
                    op.groups.size(), ranks));
  std::vector<std::uint32_t> members;
  if (op.groups.empty() || op.group_size == 0) {
    for (std::uint32_t r = 0; r < ranks; ++r) members.push_back(r);
    return members;
  }
  const auto at = std::find(op.groups.begin(), op.groups.end(), rank);
  const auto first = (at - op.groups.begin()) / op.group_size * op.group_size;
  members.assign(op.groups.begin() + first, op.groups.begin() + first + op.group_size);
  return members;
}

std::optional<std::vector<CollectiveArrival>> CollectiveCalls::arrive(std::uint32_t rank,
                                                                      std::uint32_t program,
                                                                      std::uint32_t ranks,
                                                                      CollectiveArrival a,
                                                                      isa::Origin* first_origin) {
  std::vector<std::uint32_t> members = members_of(collective(a.inst), rank, ranks);
  const std::uint64_t number = calls_[{a.core, members}]++;
  const auto place =
      static_cast<std::size_t>(std::find(members.begin(), members.end(), rank) - members.begin());
  Key key{program, std::move(members), number};
  Pending& p = pending_[key];
  if (p.arrivals.empty()) p.arrivals.resize(std::get<1>(key).size());
  for (const auto& other : p.arrivals) {
    if (!other) continue;
    const std::string why = disagreement(collective(other->inst), collective(a.inst));
    if (why.empty()) break;
    if (first_origin != nullptr) *first_origin = other->inst.origin;
    throw std::invalid_argument(
        fmt::format("this collective meets call {} of ranks {} on that set, but {}", number,
                    rank_list(std::get<1>(key)), why));
  }
  p.arrivals[place] = std::move(a);
  if (++p.arrived < p.arrivals.size()) return std::nullopt;
  std::vector<CollectiveArrival> all;
  for (auto& arrival : p.arrivals) all.push_back(std::move(*arrival));
  pending_.erase(key);
  return all;
}

std::string CollectiveCalls::status(std::uint32_t core, std::size_t index) const {
  for (const auto& [key, p] : pending_) {
    const auto mine = std::find_if(p.arrivals.begin(), p.arrivals.end(), [&](const auto& a) {
      return a && a->core == core && a->index == index;
    });
    if (mine == p.arrivals.end()) continue;
    const std::vector<std::uint32_t>& members = std::get<1>(key);
    std::vector<std::uint32_t> missing;
    for (std::size_t k = 0; k < members.size(); ++k)
      if (!p.arrivals[k]) missing.push_back(members[k]);
    return fmt::format(" waits at {} among ranks {}: rank{} {} {} not arrived",
                       isa::collective_kind_name(collective((*mine)->inst).kind),
                       rank_list(members), missing.size() == 1 ? "" : "s", rank_list(missing),
                       missing.size() == 1 ? "has" : "have");
  }
  return " waits at a collective";
}

}  // namespace trnsim::sim::detail
