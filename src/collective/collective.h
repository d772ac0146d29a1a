// Collective operations computed on host buffers, one per rank, with each algorithm's own
// reduction order (docs/collectives.md). The order decides the rounding: a ring all-reduce
// and a mesh all-reduce of the same bf16 data can differ in the last bit, as they do on
// hardware, and each is reproduced bit for bit. This layer computes the data; timing the
// algorithms on a system's links builds on it (docs/systems.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numerics/dtype.h"
#include "system/system.h"

namespace trnsim::collective {

using numerics::DType;

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

// The order in which chunk `chunk` of an all-reduce over `ranks` ranks combines the ranks'
// values under `algorithm`, as a nested expression: "((r1 + r2) + r3) + r0". What the
// reduction computes, for the docs and the tests that check the arithmetic against it. A
// hierarchical reduction has ranks / nodes chunks, each cut into `nodes` pieces: `chunk` is
// piece s of chunk j as j x nodes + s.
std::string reduction_order(Algorithm algorithm, std::size_t ranks, std::size_t chunk,
                            std::size_t nodes = 1);

// ---- Time on a system: the analytical (alpha-beta) model ----------------------------------

enum class Op : std::uint8_t { kAllReduce, kAllGather, kReduceScatter };
std::string_view name(Op op);

// nccom-test's bus-bandwidth factor: busbw = algbw x factor (AR 2(r-1)/r, AG and RS (r-1)/r).
double bus_factor(Op op, int ranks);

// The Neuron runtime's choice by message size (intranode-collective-comm.rst, "sweet
// ranges" on Trn2): mesh below 1 MiB, RDH up to 56 MiB (a power-of-two rank count), ring
// above (the runtime's KangaRing, a ring over the torus's Hamiltonian cycles); across several
// nodes, hierarchical (internode-collective-comm.rst).
Algorithm choose_algorithm(Op op, std::uint64_t bytes, int ranks, int nodes = 1);

struct Estimate {
  double time_ns = 0;
  Algorithm algorithm = Algorithm::kRing;
  int steps = 0;           // transfer steps, one after another
  double transfer_ns = 0;  // of which moving the data (the busiest link of each step)
  double latency_ns = 0;   // of which route latency and the per-step start cost
  std::string bound;       // the link or chip-local path that was busiest most often
};

// Collectives on one system, timed step by step: each step is a set of transfers between
// ranks (ranks fill the chips' logical cores, chips in ring order); a step takes its start cost,
// the longest route latency among its transfers and the time its busiest channel needs for the
// bytes all transfers put on it (transfers sharing a link share its bandwidth). Transfers
// between ranks of one chip use the chip's HBM (read and write: half its bandwidth).
class CollectiveModel {  // not thread-safe: routes are cached on use
 public:
  // `ranks_per_chip` 0: the chip's logical cores at its default logical-core size.
  explicit CollectiveModel(const system::SystemConfig& config, int ranks_per_chip = 0);
  int max_ranks() const { return ranks_per_chip_ * topology_.chips(); }
  int ranks_per_chip() const { return ranks_per_chip_; }
  // `bytes`: the whole buffer (all-reduce's input, all-gather's output, reduce-scatter's
  // input). Throws std::invalid_argument for ranks outside [1, max_ranks()] or RDH on a rank
  // count that is not a power of two.
  Estimate estimate(Op op, std::uint64_t bytes, int ranks,
                    std::optional<Algorithm> algorithm = {}) const;
  // The nodes (instances) ranks 0..ranks-1 span; throws unless each holds as many ranks.
  int nodes_of(int ranks) const;
  // The fixed cost of one step (an estimate: the chip's DMA start latency).
  double step_ns() const { return step_ns_; }

 private:
  struct Flow {
    int from_rank, to_rank;
    double bytes;
  };
  // One step's time given its transfers; `busiest` gets the busiest path's name.
  double step_time(const std::vector<Flow>& flows, std::string* busiest, double* transfer_ns,
                   double* latency_ns) const;
  const system::Route& route(int from_chip, int to_chip) const;

  int chip_of(int rank) const {
    return chip_order_[static_cast<std::size_t>(rank / ranks_per_chip_)];
  }

  system::SystemConfig config_;
  system::Topology topology_;
  int ranks_per_chip_ = 1;
  double step_ns_ = 0;
  double local_bytes_per_ns_ = 0;
  mutable std::vector<std::vector<system::Route>> routes_;  // by source chip, filled on use
  // The chips in ring order: a snake over the dimensions (on a torus each step is one link,
  // and so is the way back), ranks filling each chip's logical cores in turn.
  std::vector<int> chip_order_;
};

}  // namespace trnsim::collective
