// Collective operations computed on host buffers, one per rank, with each algorithm's own
// reduction order (docs/collectives.md). The order decides the rounding: a ring all-reduce
// and a mesh all-reduce of the same bf16 data can differ in the last bit, as they do on
// hardware, and each is reproduced bit for bit. This layer computes the data; timing the
// algorithms on a system's links builds on it (docs/systems.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "numerics/dtype.h"
#include "system/system.h"

namespace trnsim::collective {

using numerics::DType;
namespace detail {
class Layout;
}

// The algorithms the Neuron runtime uses for reductions (RT/explore/intranode-collective-
// comm.rst, internode-collective-comm.rst). KangaRing reduces in ring order over the torus's
// cycles, which the topology decides; it joins when the topology drives collectives.
enum class Algorithm : std::uint8_t {
  kRing,  // reduce-scatter then all-gather around the ranks in order
  kMesh,  // every rank sends chunk c to its owner, which reduces in rank order
  kRdh,   // recursive halving (distances n/2, n/4, ..., 1), then doubling; n a power of 2
  // Several nodes of n / nodes ranks each (ranks numbered node by node): a ring reduce-
  // scatter within each node, a ring all-reduce across the nodes between the ranks of one
  // local index, a ring all-gather within each node. nccom-test calls it "hier".
  kHierarchical,
};
std::string_view name(Algorithm a);
std::optional<Algorithm> algorithm_named(std::string_view name);  // "ring", "mesh", "rdh", "hier"

enum class Reduce : std::uint8_t { kSum, kMax, kMin };
std::string_view name(Reduce r);

// One rank's buffer: `count` elements of the collective's dtype in storage words.
using Buffer = std::vector<std::byte>;

// All-reduce of inputs[r] (each `count` elements of `dtype`) over inputs.size() ranks: every
// rank gets the same result. Float types combine two operands per step in fp32 and round the
// result to `dtype` (round to nearest even), as a DMA engine does; integer types combine
// exactly and wrap to the type's width. Max and min follow IEEE 754-2019 maximum and minimum
// (a NaN operand gives NaN; +0 is above -0). Throws std::invalid_argument for buffers of
// different sizes, x4-packed or E8M0 types, no ranks, RDH on a rank count that is not a
// power of two, or a hierarchical reduction whose `nodes` do not divide the ranks.
// The chunks are computed on `threads` host threads (0: all), with the same bits for any count.
std::vector<Buffer> all_reduce(std::span<const Buffer> inputs, DType dtype, Reduce op,
                               Algorithm algorithm, std::size_t nodes = 1, unsigned threads = 0);

// Reduce-scatter: rank r gets chunk r of the reduction (chunk c holds elements
// [c * count / n, (c + 1) * count / n)), each element reduced in the order the algorithm's
// all-reduce gives it (for hier, the all-reduce's pieces: not necessarily ending at rank r).
std::vector<Buffer> reduce_scatter(std::span<const Buffer> inputs, DType dtype, Reduce op,
                                   Algorithm algorithm, std::size_t nodes = 1,
                                   unsigned threads = 0);

// All-gather: every rank gets the concatenation of every rank's buffer, in rank order (no
// arithmetic: the same for every algorithm). The buffers may differ in size (all-gather-v).
std::vector<Buffer> all_gather(std::span<const Buffer> inputs);

// All-to-all: every rank's buffer is n chunks of equal size (chunk c for rank c); rank r gets
// chunk r of every rank, in rank order. No arithmetic. Throws std::invalid_argument for
// buffers of different sizes, or elements of `dtype` that do not split into n equal chunks.
std::vector<Buffer> all_to_all(std::span<const Buffer> inputs, DType dtype);

// All-to-all-v (and all-gather-v, whose every destination gets the same chunk): flat buffers of
// `dtype` elements, sizes chosen per call. Sender s sends elements
// [send_displs[s][r], + send_counts[s][r]) of its buffer to rank r, which writes them at
// recv_displs[r][s] of its output (`out_elements` elements), or without recv_displs at
// (out_elements / n) x s, the start of an equal slot per sender. Throws
// std::invalid_argument for a chunk outside its sender's buffer, a chunk that does not fit
// its receiver's output or slot, and chunks one receiver gets that overlap.
struct VariableChunks {
  std::vector<std::vector<std::uint64_t>> send_counts, send_displs;  // [sender][receiver]
  std::vector<std::vector<std::uint64_t>> recv_displs;  // [receiver][sender]; empty: slots
};
struct VariableResult {
  std::vector<Buffer> outputs;  // each out_elements elements; only `written` is data
  // Per rank, the [begin, end) element ranges written, in sender order.
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> written;
  std::vector<std::vector<std::uint64_t>> recv_counts;  // [receiver][sender]
};
// `ranks` (optional) names the members in errors (default: 0, 1, ...).
VariableResult all_to_all_v(std::span<const Buffer> inputs, DType dtype,
                            const VariableChunks& chunks, std::uint64_t out_elements,
                            std::span<const int> ranks = {});

// Broadcast: every rank gets a copy of rank `root`'s buffer (the other ranks' buffers are not
// read). Throws std::invalid_argument for a root that is not a rank.
std::vector<Buffer> broadcast(std::span<const Buffer> inputs, int root);

// Collective permute: for each (source, target) pair, the target gets the source's buffer; a
// rank no pair targets gets zeros. Throws std::invalid_argument for a rank out of range, a
// rank that is the source (or the target) of two pairs, or buffers of different sizes.
using Pairs = std::vector<std::pair<int, int>>;
std::vector<Buffer> permute(std::span<const Buffer> inputs, const Pairs& source_target_pairs);
// The checks permute() makes on its pairs, over `ranks` ranks.
void check_pairs(const Pairs& source_target_pairs, int ranks);

// Replica groups: disjoint lists of ranks, each running the collective on its own; a rank's
// place in its list is its rank within the group. Neuron's form: [[0, 1, 2, 3], [4, 5, 6, 7]].
using ReplicaGroups = std::vector<std::vector<int>>;
// Checks that `groups` split ranks 0..ranks-1 into groups of one size: throws
// std::invalid_argument naming a rank out of range, in two groups or in none, an empty group
// or groups of different sizes.
void check_replica_groups(const ReplicaGroups& groups, int ranks);
// `ranks` ranks in groups of `size` consecutive ranks (nccom-test's --data-parallel-dimension).
ReplicaGroups consecutive_groups(int ranks, int size);
// "[[0, 1], [2, 3]]"
std::string format_groups(const ReplicaGroups& groups);
// Each rank of each group to the next rank of its group (a permute's default: a ring).
Pairs ring_pairs(const ReplicaGroups& groups);

// Runs `op` on each group's inputs (in the group's order) and puts each result back at its
// rank. An empty `groups` is one group of every rank.
template <class Op>
std::vector<Buffer> in_groups(std::span<const Buffer> inputs, const ReplicaGroups& groups,
                              Op&& op) {
  if (groups.empty()) return op(inputs);
  check_replica_groups(groups, static_cast<int>(inputs.size()));
  std::vector<Buffer> out(inputs.size());
  for (const std::vector<int>& group : groups) {
    std::vector<Buffer> mine;
    for (const int r : group) mine.push_back(inputs[static_cast<std::size_t>(r)]);
    std::vector<Buffer> result = op(std::span<const Buffer>(mine));
    for (std::size_t k = 0; k < group.size(); ++k)
      out[static_cast<std::size_t>(group[k])] = std::move(result[k]);
  }
  return out;
}

// The order in which chunk `chunk` of an all-reduce over `ranks` ranks combines the ranks'
// values under `algorithm`, as a nested expression: "((r1 + r2) + r3) + r0". What the
// reduction computes, for the docs and the tests that check the arithmetic against it. A
// hierarchical reduction has ranks / nodes chunks, each cut into `nodes` pieces: `chunk` is
// piece s of chunk j as j x nodes + s.
std::string reduction_order(Algorithm algorithm, std::size_t ranks, std::size_t chunk,
                            std::size_t nodes = 1);

// ---- Time on a system: the analytical (alpha-beta) model ----------------------------------

enum class Op : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kPermute,
  kBroadcast,  // from the first rank of each group
};
std::string_view name(Op op);

// nccom-test's bus-bandwidth factor: busbw = algbw x factor (AR 2(r-1)/r; AG, RS and
// all-to-all (r-1)/r; permute 1; broadcast 1, as nccl-tests). `ranks`: the ranks of one
// replica group.
double bus_factor(Op op, int ranks);

// The Neuron runtime's choice by message size (intranode-collective-comm.rst, "sweet
// ranges" on Trn2): mesh below 1 MiB, RDH up to 56 MiB (a power-of-two rank count), ring
// above (the runtime's KangaRing, a ring over the torus's Hamiltonian cycles); across several
// nodes, hierarchical (internode-collective-comm.rst).
Algorithm choose_algorithm(Op op, std::uint64_t bytes, int ranks, int nodes = 1);

// Who takes part: replica groups (empty: one group of every rank) and, for a permute, the
// source-target pairs (empty: each rank to the next of its group, a ring).
struct Participants {
  ReplicaGroups replica_groups;
  Pairs source_target_pairs;
};

struct Estimate {
  double time_ns = 0;
  Algorithm algorithm = Algorithm::kRing;
  int steps = 0;           // transfer steps, one after another
  double transfer_ns = 0;  // of which moving the data (the busiest link of each step)
  double latency_ns = 0;   // of which route latency and the per-step start cost
  std::string bound;       // the link or chip-local path that was busiest most often
};

// What the event model measured (CollectiveModel::simulate).
struct ChannelUse {
  std::string name;  // "chip 3 (row 0, col 3) -> chip 4 (row 1, col 3) (y)", "chip 0's HBM"
  double busy_ns = 0;
  double bytes = 0;
};

// A rank's step as the event model ran it: it started at `start_ns` (its transfers began
// after the step's start cost), its own transfers had all arrived at `sent_ns`, and the
// step ended at `end_ns`, when the last transfer to it arrived, from `waited_on` (-1 when
// its own were last or it received nothing).
struct RankStep {
  int rank = 0, step = 0, waited_on = -1;
  double start_ns = 0, sent_ns = 0, end_ns = 0;
};

// A span of time a channel was busy without a gap.
struct BusySpan {
  int channel = 0;  // index into Simulation::channels
  double start_ns = 0, end_ns = 0;
};

struct SimulateOptions {
  int max_chunks = 8;                    // chunks per transfer, at most
  double min_chunk_bytes = 64.0 * 1024;  // unless the transfer is smaller
  bool trace = false;                    // keep rank steps and busy spans (write_chrome_trace)
  std::uint64_t max_chunks_total = 50'000'000;
};

struct Simulation {
  double time_ns = 0;
  Algorithm algorithm = Algorithm::kRing;
  int ranks = 0, ranks_per_chip = 1, steps = 0;
  std::uint64_t events = 0;             // events processed: a chunk reaching a channel or its end
  std::vector<ChannelUse> channels;     // every channel and chip-local path used, busiest first
  RankStep longest_wait;                // the step whose end waited longest after its sends
  std::string op_name, system_name;     // for the trace
  std::vector<std::string> chip_names;  // the chip of ranks [k x ranks_per_chip, ...), by k
  std::vector<RankStep> rank_steps;     // with options.trace: every rank's every step
  std::vector<BusySpan> busy;           // with options.trace: when each channel was busy
};

// A Chrome/Perfetto trace of a traced simulation: a process per chip with a track per rank
// (its steps and waits, naming the peer it waited on), a "links" process with a track per
// channel (busy spans) and utilisation counters over `buckets` windows of the run.
void write_chrome_trace(const Simulation& s, std::ostream& out, int buckets = 100);

// Collectives on one system, timed step by step: each step is a set of transfers between
// ranks (ranks fill the chips' logical cores, chips in ring order). In the analytical model a
// rank's step takes the start cost, the longest route latency among its transfers (to it and
// from it) and the time the busiest channel of any of them needs for the bytes all transfers
// put on it (transfers sharing a link share its bandwidth); the operation takes the longest
// sum over a rank's steps (ranks wait only for their partners, not for each other). Transfers
// between ranks of one chip use the chip's HBM (read and write: half its bandwidth).
class CollectiveModel {  // not thread-safe: routes are cached on use
 public:
  // `ranks_per_chip` 0: the chip's logical cores at its default logical-core size.
  explicit CollectiveModel(const system::SystemConfig& config, int ranks_per_chip = 0);
  CollectiveModel(const CollectiveModel&) = delete;  // its route cache refers to its topology
  CollectiveModel& operator=(const CollectiveModel&) = delete;
  int max_ranks() const { return ranks_per_chip_ * topology_.chips(); }
  // Throws std::invalid_argument for ranks outside [1, max_ranks()].
  void check_ranks(int ranks) const;
  int ranks_per_chip() const { return ranks_per_chip_; }
  // `bytes`: the whole buffer (all-reduce's input, all-gather's output, reduce-scatter's
  // input). Throws std::invalid_argument for ranks outside [1, max_ranks()] or RDH on a rank
  // count that is not a power of two.
  // `bytes` for all-to-all and permute: one rank's buffer. Also throws for replica groups
  // check_replica_groups() refuses, pairs check_pairs() refuses, or an algorithm other than
  // mesh for all-to-all and permute (one step of direct transfers).
  Estimate estimate(Op op, std::uint64_t bytes, int ranks, std::optional<Algorithm> algorithm = {},
                    const Participants& who = {}) const;
  // The nodes (instances) ranks 0..ranks-1 span; throws unless each holds as many ranks.
  int nodes_of(int ranks) const;
  // The nodes a replica group's ranks span; throws unless each holds as many of them (and,
  // with `node_by_node`, unless they are listed node by node, as hier needs), or for a rank
  // that is not one.
  int nodes_of_group(const std::vector<int>& members, bool node_by_node = false) const;
  // The fixed cost of one step (an estimate: the chip's DMA start latency).
  double step_ns() const { return step_ns_; }

  // The event model (event_model.cpp): the same steps, but each rank moves on when its own
  // transfers of a step have arrived and its peers' have reached it, and every transfer is a
  // stream of chunks through its route's channels, each channel serving chunks in the order
  // they reach it (cut-through: a chunk's head goes on after the channel's latency). Throws
  // what estimate() throws, and std::invalid_argument when the run would move more than
  // options.max_chunks_total chunks (naming the analytical model).
  Simulation simulate(Op op, std::uint64_t bytes, int ranks,
                      std::optional<Algorithm> algorithm = {}, const Participants& who = {},
                      const SimulateOptions& options = {}) const;
  // The chunks simulate() would move (each passes every channel of its route): what host
  // time and memory grow with, and what max_chunks_total limits.
  std::uint64_t chunk_count(Op op, std::uint64_t bytes, int ranks,
                            std::optional<Algorithm> algorithm = {}, const Participants& who = {},
                            const SimulateOptions& options = {}) const;

 private:
  struct Plan {
    Algorithm algorithm = Algorithm::kRing;
    std::shared_ptr<const detail::Layout> layout;  // who sends to whom
  };
  // Checks the ranks, groups, pairs and algorithm, and chooses the algorithm when not given.
  Plan plan(Op op, std::uint64_t bytes, int ranks, std::optional<Algorithm> algorithm,
            const Participants& who) const;
  // The chunks a planned run moves (chunk_count's answer, without planning again).
  std::uint64_t chunks_in(const Plan& p, Op op, std::uint64_t bytes,
                          const SimulateOptions& options) const;
  // The chip-local path's name and a channel's: "chip 0's HBM", "chip 1 (...) -> ... (x)".
  std::string path_name(int chip_or_channel, bool local) const;
  struct Flow {
    int from_rank, to_rank;
    double bytes;
  };
  // A step shape's cost to each rank, for one byte per transfer: the longest route latency
  // among the transfers from it and to it, and the most time per byte any of them needs on
  // its busiest channel (transfers sharing a channel share its bandwidth).
  struct ShapeCost {
    std::vector<double> latency_ns, ns_per_byte;  // by rank
    std::vector<unsigned char> takes_part;        // by rank: sends or receives in the step
    std::string busiest;                          // the busiest channel's name
  };
  ShapeCost shape_cost(const std::vector<Flow>& flows, int ranks) const;
  const system::Route& route(int from_chip, int to_chip) const;

  int chip_of(int rank) const {
    return chip_order_[static_cast<std::size_t>(rank / ranks_per_chip_)];
  }

  system::SystemConfig config_;
  system::Topology topology_;
  int ranks_per_chip_ = 1;
  double step_ns_ = 0;
  double local_bytes_per_ns_ = 0;
  mutable system::RouteCache routes_;  // filled on use
  // The chips in ring order: a snake over the dimensions (on a torus each step is one link,
  // and so is the way back), ranks filling each chip's logical cores in turn.
  std::vector<int> chip_order_;
};

}  // namespace trnsim::collective
