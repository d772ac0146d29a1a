// nki.collectives (kernel/collectives.h): each call checks what tracing can know (memories,
// dtypes, shapes against the group size, the groups and pairs themselves) and records one
// isa::Collective per tensor pair. What needs the launch (that the groups hold every rank)
// is checked when the collective runs.
#include "kernel/collectives.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "kernel/tracer.h"

namespace trnsim::ncc {

using kernel::KernelError;
using kernel::Tracer;

namespace {

[[noreturn]] void fail(const Loc& loc, std::string why) {
  throw KernelError(kernel::origin_of(loc), std::move(why));
}

struct Call {
  isa::CollectiveKind kind;
  const char* name;  // NKI's
};

// The groups as the instruction holds them (flattened, group_size each), checked.
void put_groups(isa::Collective& c, const ReplicaGroup& g, const Loc& loc, const char* name) {
  std::set<int> seen;
  for (std::size_t k = 0; k < g.groups.size(); ++k) {
    const std::vector<int>& group = g.groups[k];
    if (group.empty()) fail(loc, fmt::format("{}: replica group {} is empty", name, k));
    if (group.size() != g.groups.front().size())
      fail(loc, fmt::format("{}: replica group {} has {} ranks, group 0 has {} (groups of one "
                            "size)",
                            name, k, group.size(), g.groups.front().size()));
    for (const int r : group) {
      if (r < 0) fail(loc, fmt::format("{}: replica group {} names rank {}", name, k, r));
      if (!seen.insert(r).second)
        fail(loc, fmt::format("{}: rank {} is in two replica groups (groups must not overlap)",
                              name, r));
      c.groups.push_back(static_cast<std::uint32_t>(r));
    }
  }
  c.group_size = g.groups.empty() ? 0 : static_cast<std::uint32_t>(g.groups.front().size());
}

// "[8, 16]"
std::string shape_text(const kernel::Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// dst's shape against src's: the same, or (gathers and scatters) the outermost dimension
// times or divided by the group size, when the groups are given (`group` > 0); without them
// the launch decides the size and the run checks the counts.
void check_shapes(const Call& call, const kernel::Shape& s, const kernel::Shape& d,
                  std::uint32_t group, std::size_t i, const Loc& loc) {
  const auto bad = [&](const std::string& why) {
    fail(loc, fmt::format("{}: dst {} is {}, src {} is {} ({})", call.name, i, shape_text(d), i,
                          shape_text(s), why));
  };
  if (s.empty() || d.empty()) bad("collectives move tensors of one dimension or more");
  const bool same_inner = std::equal(s.begin() + 1, s.end(), d.begin() + 1, d.end());
  const std::int64_t g = group, s0 = s.front(), d0 = d.front();
  switch (call.kind) {
    case isa::CollectiveKind::kAllGather:
      if (!same_inner || (g > 0 ? d0 != g * s0 : d0 % s0 != 0))
        bad("dst's outermost dimension is the group size x src's, the others src's");
      return;
    case isa::CollectiveKind::kReduceScatter:
      if (!same_inner || (g > 0 ? s0 % g != 0 || d0 != s0 / g : s0 % d0 != 0))
        bad("dst's outermost dimension is src's / the group size, the others src's");
      return;
    case isa::CollectiveKind::kAllToAll:
      if (s != d) bad("the same shape");
      if (g > 0 && s0 % g != 0)
        bad(fmt::format("the outermost dimension splits into {} equal slices, one per rank", g));
      return;
    default:
      if (s != d) bad("the same shape");
  }
}

// The checks every call shares, then one instruction per (src, dst).
void record(const Call& call, const isa::Collective& prototype, const std::vector<Tensor>& srcs,
            const std::vector<Tensor>& dsts, int collective_dim, const CollectiveOptions& o,
            const Loc& loc) {
  if (srcs.empty() || srcs.size() != dsts.size())
    fail(loc, fmt::format("{}: {} srcs and {} dsts (one dst per src, at least one)", call.name,
                          srcs.size(), dsts.size()));
  const bool hbm_only = call.kind != isa::CollectiveKind::kAllReduce &&
                        call.kind != isa::CollectiveKind::kAllGather &&
                        call.kind != isa::CollectiveKind::kReduceScatter;
  const bool one_tensor = call.kind == isa::CollectiveKind::kPermute ||
                          call.kind == isa::CollectiveKind::kPermuteReduce ||
                          isa::is_variable_collective(call.kind);
  if (one_tensor && srcs.size() != 1)
    fail(loc, fmt::format("{}: {} tensors; it moves exactly one", call.name, srcs.size()));
  if (collective_dim != 0)
    fail(loc, fmt::format("{}: collective_dim {} (trnsim models dimension 0, the outermost; "
                          "NKI allows 1 only for 2D SBUF tiles)",
                          call.name, collective_dim));
  const std::uint32_t group = prototype.group_size;
  for (std::size_t i = 0; i < srcs.size(); ++i) {
    const Tensor& s = srcs[i];
    const Tensor& d = dsts[i];
    for (const Tensor* t : {&s, &d}) {
      const bool hbm = !kernel::is_on_chip(t->buffer());
      if (t->buffer() == kernel::Buffer::kPsum || (hbm_only && !hbm))
        fail(loc,
             fmt::format("{}: a tensor in {} ({})", call.name, kernel::buffer_name(t->buffer()),
                         hbm_only ? "this collective moves HBM tensors only"
                                  : "collectives move HBM or SBUF tensors"));
      if (hbm != !kernel::is_on_chip(srcs.front().buffer()))
        fail(loc,
             fmt::format("{}: tensors in HBM and SBUF at once (NKI mixes no memories)", call.name));
    }
    if (srcs.size() > 1 && kernel::is_on_chip(s.buffer()))
      fail(loc,
           fmt::format("{}: several SBUF tensors (NKI coalesces HBM tensors only)", call.name));
    if (s.dtype() != d.dtype())
      fail(loc, fmt::format("{}: src {} is {}, dst is {} (a collective does not convert)",
                            call.name, i, numerics::name(s.dtype()), numerics::name(d.dtype())));
    // The -v kinds move flat buffers whose sizes the metadata sets when they run.
    if (!isa::is_variable_collective(call.kind))
      check_shapes(call, s.shape(), d.shape(), group, i, loc);
    isa::Collective c = prototype;
    c.split_rows = static_cast<std::uint64_t>(s.shape().front());
    c.src = s.ap(loc);
    c.dst = d.ap(loc);
    Tracer::current(loc).record(c, {std::nullopt, o.queue, isa::RoundingMode::kNearestEven, o.name},
                                loc);
  }
}

// The implicit permutes' channels: 1 to 4, numbered 0, 1, ..., each with its tensor lists.
void check_channels(const Call& call, std::size_t srcs, std::size_t dsts,
                    const std::vector<int>& channel_ids, const Loc& loc) {
  constexpr std::size_t kMaxChannels = 4;  // NKI: 4 within a node, 2 for other groups
  if (channel_ids.empty() || channel_ids.size() > kMaxChannels || srcs != channel_ids.size() ||
      dsts != channel_ids.size())
    fail(loc, fmt::format("{}: {} channel ids, {} srcs and {} dsts lists (one of each per "
                          "channel, 1 to {} channels)",
                          call.name, channel_ids.size(), srcs, dsts, kMaxChannels));
  for (std::size_t c = 0; c < channel_ids.size(); ++c)
    if (channel_ids[c] != static_cast<int>(c))
      fail(loc, fmt::format("{}: channel_ids {} (NKI takes 0, 1, ... in order)", call.name,
                            fmt::join(channel_ids, ", ")));
}

void check_reduce(AluOp op, const char* name, const Loc& loc) {
  if (op != AluOp::kAdd && op != AluOp::kMaximum && op != AluOp::kMinimum)
    fail(loc, fmt::format("{}: op {} (add, maximum or minimum)", name, isa::alu_op_name(op)));
}

}  // namespace

void all_reduce(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                const ReplicaGroup& replica_group, AluOp op, const CollectiveOptions& options,
                Loc loc) {
  const Call call{isa::CollectiveKind::kAllReduce, "all_reduce"};
  check_reduce(op, call.name, loc);
  isa::Collective c;
  c.kind = call.kind;
  c.op = op;
  put_groups(c, replica_group, loc, call.name);
  record(call, c, srcs, dsts, 0, options, loc);
}

void all_gather(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                const ReplicaGroup& replica_group, int collective_dim,
                const CollectiveOptions& options, Loc loc) {
  const Call call{isa::CollectiveKind::kAllGather, "all_gather"};
  isa::Collective c;
  c.kind = call.kind;
  put_groups(c, replica_group, loc, call.name);
  record(call, c, srcs, dsts, collective_dim, options, loc);
}

void reduce_scatter(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                    const ReplicaGroup& replica_group, int collective_dim, AluOp op,
                    const CollectiveOptions& options, Loc loc) {
  const Call call{isa::CollectiveKind::kReduceScatter, "reduce_scatter"};
  check_reduce(op, call.name, loc);
  isa::Collective c;
  c.kind = call.kind;
  c.op = op;
  put_groups(c, replica_group, loc, call.name);
  record(call, c, srcs, dsts, collective_dim, options, loc);
}

void all_to_all(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                const ReplicaGroup& replica_group, int collective_dim,
                const CollectiveOptions& options, Loc loc) {
  const Call call{isa::CollectiveKind::kAllToAll, "all_to_all"};
  isa::Collective c;
  c.kind = call.kind;
  put_groups(c, replica_group, loc, call.name);
  record(call, c, srcs, dsts, collective_dim, options, loc);
}

void collective_permute(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                        const std::vector<std::pair<int, int>>& source_target_pairs,
                        const CollectiveOptions& options, Loc loc) {
  const Call call{isa::CollectiveKind::kPermute, "collective_permute"};
  if (source_target_pairs.empty()) fail(loc, "collective_permute: no source_target_pairs");
  isa::Collective c;
  c.kind = call.kind;
  std::set<int> sources, targets;
  for (const auto& [from, to] : source_target_pairs) {
    if (from < 0 || to < 0)
      fail(loc, fmt::format("collective_permute: pair ({}, {}) names a negative rank", from, to));
    if (!sources.insert(from).second || !targets.insert(to).second)
      fail(loc, fmt::format("collective_permute: pair ({}, {}) repeats a source or a target "
                            "(each rank sends at most once and receives at most once)",
                            from, to));
    c.pairs.push_back(static_cast<std::uint32_t>(from));
    c.pairs.push_back(static_cast<std::uint32_t>(to));
  }
  record(call, c, srcs, dsts, 0, options, loc);
}

void collective_permute_implicit(const std::vector<std::vector<Tensor>>& srcs_by_channel,
                                 const std::vector<std::vector<Tensor>>& dsts_by_channel,
                                 const ReplicaGroup& replica_group,
                                 const std::vector<int>& channel_ids,
                                 const CollectiveOptions& options, Loc loc) {
  const Call call{isa::CollectiveKind::kPermute, "collective_permute_implicit"};
  check_channels(call, srcs_by_channel.size(), dsts_by_channel.size(), channel_ids, loc);
  isa::Collective prototype;
  prototype.kind = call.kind;
  put_groups(prototype, replica_group, loc, call.name);
  for (std::size_t c = 0; c < channel_ids.size(); ++c)
    record(call, prototype, srcs_by_channel[c], dsts_by_channel[c], 0, options, loc);
}

void collective_permute_implicit_reduce(const std::vector<std::vector<Tensor>>& srcs0_by_channel,
                                        const std::vector<std::vector<Tensor>>& srcs1_by_channel,
                                        const std::vector<std::vector<Tensor>>& dsts_by_channel,
                                        const ReplicaGroup& replica_group, AluOp op,
                                        const std::vector<int>& channel_ids,
                                        const CollectiveOptions& options, Loc loc) {
  const Call call{isa::CollectiveKind::kPermuteReduce, "collective_permute_implicit_reduce"};
  check_reduce(op, call.name, loc);
  check_channels(call, srcs0_by_channel.size(), dsts_by_channel.size(), channel_ids, loc);
  if (srcs1_by_channel.size() != srcs0_by_channel.size())
    fail(loc, fmt::format("{}: {} srcs0 and {} srcs1 lists (one of each per channel)", call.name,
                          srcs0_by_channel.size(), srcs1_by_channel.size()));
  isa::Collective prototype;
  prototype.kind = call.kind;
  prototype.op = op;
  put_groups(prototype, replica_group, loc, call.name);
  for (std::size_t c = 0; c < channel_ids.size(); ++c) {
    const std::vector<Tensor>& a = srcs0_by_channel[c];
    const std::vector<Tensor>& b = srcs1_by_channel[c];
    if (a.size() != 1 || b.size() != 1)
      fail(loc, fmt::format("{}: channel {} has {} srcs0 and {} srcs1 tensors (one each)",
                            call.name, c, a.size(), b.size()));
    // One memory (private and shared HBM are both HBM), dtype and shape.
    if (a[0].shape() != b[0].shape() || a[0].dtype() != b[0].dtype() ||
        kernel::is_on_chip(a[0].buffer()) != kernel::is_on_chip(b[0].buffer()))
      fail(loc, fmt::format("{}: channel {}'s srcs0 is {} {} in {}, srcs1 {} {} in {} (the "
                            "reduction's two operands match)",
                            call.name, c, numerics::name(a[0].dtype()), shape_text(a[0].shape()),
                            kernel::buffer_name(a[0].buffer()), numerics::name(b[0].dtype()),
                            shape_text(b[0].shape()), kernel::buffer_name(b[0].buffer())));
    prototype.src1 = b[0].ap(loc);
    record(call, prototype, a, dsts_by_channel[c], 0, options, loc);
  }
}

namespace {

// all_gather_v and all_to_all_v: the metadata tensor checked, then one instruction.
void record_variable(const Call& call, const std::vector<Tensor>& srcs,
                     const std::vector<Tensor>& dsts, const ReplicaGroup& replica_group,
                     const Tensor& metadata, bool recv_counts_known, bool has_rdispls,
                     const CollectiveOptions& options, const Loc& loc) {
  isa::Collective prototype;
  prototype.kind = call.kind;
  put_groups(prototype, replica_group, loc, call.name);
  const std::int64_t rows = has_rdispls ? 4 : 3;
  const kernel::Shape& shape = metadata.shape();
  const std::int64_t columns = shape.empty() ? 0 : shape.back();
  const bool on_chip = kernel::is_on_chip(metadata.buffer());
  const bool shaped = on_chip ? shape.size() == 3 && shape[0] == 1 && shape[1] == rows
                              : shape.size() == 2 && shape[0] == rows;
  if (!shaped || (prototype.group_size != 0 && columns != prototype.group_size))
    fail(loc, fmt::format("{}: metadata_tensor is {} in {}; it is ({}{}, {}) (rows: send counts, "
                          "send displacements, receive counts{}; a column per rank of the group)",
                          call.name, shape_text(shape), kernel::buffer_name(metadata.buffer()),
                          on_chip ? "1, " : "", rows,
                          prototype.group_size != 0 ? std::to_string(prototype.group_size)
                                                    : std::string("group size"),
                          has_rdispls ? ", receive displacements" : ""));
  if (metadata.dtype() != numerics::DType::kUInt32 || metadata.buffer() == kernel::Buffer::kPsum)
    fail(loc,
         fmt::format("{}: metadata_tensor is {} in {} (uint32, in HBM or SBUF)", call.name,
                     numerics::name(metadata.dtype()), kernel::buffer_name(metadata.buffer())));
  prototype.metadata = metadata.ap(loc);
  prototype.recv_counts_known = recv_counts_known;
  prototype.has_rdispls = has_rdispls;
  record(call, prototype, srcs, dsts, 0, options, loc);
}

}  // namespace

void all_gather_v(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                  const ReplicaGroup& replica_group, const Tensor& metadata_tensor,
                  bool recv_counts_known, bool has_rdispls, const CollectiveOptions& options,
                  Loc loc) {
  record_variable({isa::CollectiveKind::kAllGatherV, "all_gather_v"}, srcs, dsts, replica_group,
                  metadata_tensor, recv_counts_known, has_rdispls, options, loc);
}

void all_to_all_v(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                  const ReplicaGroup& replica_group, const Tensor& metadata_tensor,
                  bool recv_counts_known, bool has_rdispls, const CollectiveOptions& options,
                  Loc loc) {
  record_variable({isa::CollectiveKind::kAllToAllV, "all_to_all_v"}, srcs, dsts, replica_group,
                  metadata_tensor, recv_counts_known, has_rdispls, options, loc);
}

namespace {

kernel::Register ring_rank(const isa::Reg& step_reg, int step, const ReplicaGroup& replica_group,
                           int channel_id, const Loc& loc) {
  const char* name = "collective_permute_implicit_current_processing_rank_id";
  if (channel_id < 0 || channel_id >= 4)
    fail(loc, fmt::format("{}: channel_id {} (0 to 3)", name, channel_id));
  isa::Collective groups;  // only for its checked, flattened groups
  put_groups(groups, replica_group, loc, name);
  Tracer& t = Tracer::current(loc);
  const kernel::Register r = t.new_register(loc);
  t.record(isa::RingRankId{r.reg(), step_reg, step, groups.groups, groups.group_size}, {}, loc);
  return r;
}

}  // namespace

kernel::Register current_processing_rank_id(int iteration, const ReplicaGroup& replica_group,
                                            int channel_id, Loc loc) {
  return ring_rank(isa::Reg{}, iteration, replica_group, channel_id, loc);
}

kernel::Register current_processing_rank_id(const kernel::Register& iteration,
                                            const ReplicaGroup& replica_group, int channel_id,
                                            Loc loc) {
  Tracer::current(loc).check_register(iteration, loc);
  return ring_rank(iteration.reg(), 0, replica_group, channel_id, loc);
}

kernel::Register rank_id(Loc loc) {
  Tracer& t = Tracer::current(loc);
  const kernel::Register r = t.new_register(loc);
  t.record(isa::RankId{r.reg()}, {}, loc);
  return r;
}

}  // namespace trnsim::ncc
