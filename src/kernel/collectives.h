// NKI 0.6's nki.collectives in C++ (namespace ncc, NKI's usual alias): collectives among the
// ranks of an SPMD launch (runtime::launch_ranks, runtime::launch_system), called inside a
// kernel. Each call records one isa::Collective per (src, dst) pair; the runtime's collective
// engine computes the data in the algorithm's reduction order and times it on the launch's
// system (docs/collectives.md, "In kernels").
//
//   void tp_mlp(...) {  // rank r holds its shard of the weights
//     ...
//     ncc::all_reduce({partial}, {summed}, ncc::ReplicaGroup{}, AluOp::kAdd);
//   }
#pragma once

#include <utility>
#include <vector>

#include "kernel/kernel.h"

namespace trnsim::ncc {

using kernel::Loc;
using kernel::Tensor;
using AluOp = isa::AluOp;

// NKI's ReplicaGroup([[0, 1], [2, 3]]): disjoint lists of ranks of one size, together every
// rank of the launch; each runs the collective on its own, a rank's place in its list being
// its rank within the group. No lists: one group of every rank.
struct ReplicaGroup {
  std::vector<std::vector<int>> groups;
};

struct CollectiveOptions {
  std::optional<std::uint8_t> queue;  // DMA queue; unset = the compiler's choice
  std::string name;
};

// dsts[i] = op over the group's srcs[i] (add, maximum or minimum); same shapes.
void all_reduce(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                const ReplicaGroup& replica_group, AluOp op, const CollectiveOptions& options = {},
                Loc loc = Loc::current());
// dsts[i] = the group's srcs[i] concatenated along collective_dim (0: the outermost).
void all_gather(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                const ReplicaGroup& replica_group, int collective_dim,
                const CollectiveOptions& options = {}, Loc loc = Loc::current());
// dsts[i] = this rank's slice along collective_dim of op over the group's srcs[i].
void reduce_scatter(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                    const ReplicaGroup& replica_group, int collective_dim, AluOp op,
                    const CollectiveOptions& options = {}, Loc loc = Loc::current());
// Slice j of srcs[i] (along collective_dim) goes to the group's rank j; slice k of dsts[i]
// comes from its rank k. HBM only.
void all_to_all(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                const ReplicaGroup& replica_group, int collective_dim,
                const CollectiveOptions& options = {}, Loc loc = Loc::current());
// For each (source, target) pair, the target's dsts[0] receives the source's srcs[0] (a rank
// no pair targets gets zeros). HBM only, one tensor each.
void collective_permute(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                        const std::vector<std::pair<int, int>>& source_target_pairs,
                        const CollectiveOptions& options = {}, Loc loc = Loc::current());

// NKI's collective_permute_implicit: on each channel, every rank sends srcs_by_channel[c][0]
// to the next rank of its replica group and receives the previous rank's into
// dsts_by_channel[c][0] (a ring; no groups: every rank in rank order). channel_ids are 0, 1,
// ... (at most 4); each channel is a collective of its own. HBM only.
void collective_permute_implicit(const std::vector<std::vector<Tensor>>& srcs_by_channel,
                                 const std::vector<std::vector<Tensor>>& dsts_by_channel,
                                 const ReplicaGroup& replica_group,
                                 const std::vector<int>& channel_ids = {0},
                                 const CollectiveOptions& options = {}, Loc loc = Loc::current());
// NKI's collective_permute_implicit_reduce: as collective_permute_implicit, each rank sending
// op(srcs0_by_channel[c][0], srcs1_by_channel[c][0]) (add, maximum or minimum; one rounding to
// the dtype) to the next rank of its group.
void collective_permute_implicit_reduce(const std::vector<std::vector<Tensor>>& srcs0_by_channel,
                                        const std::vector<std::vector<Tensor>>& srcs1_by_channel,
                                        const std::vector<std::vector<Tensor>>& dsts_by_channel,
                                        const ReplicaGroup& replica_group, AluOp op,
                                        const std::vector<int>& channel_ids = {0},
                                        const CollectiveOptions& options = {},
                                        Loc loc = Loc::current());

// NKI's all_gather_v and all_to_all_v: flat buffers (one src, one dst, HBM) sized when the
// call runs by `metadata_tensor`, uint32 of shape (rows, group size) in HBM or (1, rows,
// group size) in SBUF: row 0 send counts, 1 send displacements (all_gather_v reads the first
// column of each: one chunk for every rank), 2 receive counts (written by the call unless
// recv_counts_known), 3 receive displacements (with has_rdispls; without, the chunk from
// rank k lands at (dst's elements / group size) x k). Elements of dst no chunk writes keep
// their data.
void all_gather_v(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                  const ReplicaGroup& replica_group, const Tensor& metadata_tensor,
                  bool recv_counts_known = false, bool has_rdispls = false,
                  const CollectiveOptions& options = {}, Loc loc = Loc::current());
void all_to_all_v(const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                  const ReplicaGroup& replica_group, const Tensor& metadata_tensor,
                  bool recv_counts_known = false, bool has_rdispls = false,
                  const CollectiveOptions& options = {}, Loc loc = Loc::current());

// NKI's collective_permute_implicit_current_processing_rank_id: a new register holding the
// rank whose data the ring has brought here after `iteration` steps (0: this rank; k: the
// rank k places before it in its group). `iteration` an int, or a register (a loop's
// counter) with `iteration` added.
kernel::Register current_processing_rank_id(int iteration, const ReplicaGroup& replica_group,
                                            int channel_id = 0, Loc loc = Loc::current());
kernel::Register current_processing_rank_id(const kernel::Register& iteration,
                                            const ReplicaGroup& replica_group, int channel_id = 0,
                                            Loc loc = Loc::current());

// A new register holding this rank's number in the launch (0 to ranks - 1; 0 when launched
// alone), for register arithmetic and register-relative views (NKI's rank_id()).
kernel::Register rank_id(Loc loc = Loc::current());

}  // namespace trnsim::ncc
