// The matching of collective calls (isa::Collective) between the ranks of a launch (internal
// to the executor). A call of rank r meets the ranks of its replica group (every rank when
// it names none, and for a permute); the k-th call a core makes on a set of ranks meets the
// k-th call of the same program id of every other rank of the set. This class only matches,
// checks that the calls agree and reports who is missing; the runtime's CollectiveEngine
// computes and times the collective.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "isa/isa.h"
#include "sim/core_io.h"
#include "sim/sim.h"

namespace trnsim::sim::detail {

// What a collective call reads from its rank's memory (functional runs): the bytes of src,
// and of src1 and metadata when the op has them.
struct CollectiveInputs {
  std::vector<std::uint8_t> src, src1, metadata;
};
CollectiveInputs load_inputs(CoreOperandIO& io, const isa::Collective& op);
// Writes what the engine gave a member: dst (whole, or the ranges it wrote) and the metadata's
// receive counts.
void store_outputs(CoreOperandIO& io, const isa::Collective& op, const CollectiveMember& m);

// One started collective call.
struct CollectiveArrival {
  std::uint32_t core = 0;  // launch
  std::uint32_t queue = 0;
  std::uint32_t id = 0;  // of the start
  std::size_t index = 0;
  isa::Instruction inst;    // as started (registers applied)
  CollectiveInputs inputs;  // functional runs
  Duration time = 0;        // when it reached the head of its queue
};

class CollectiveCalls {
 public:
  // The ranks a call of `rank` meets, in their order in the group (a rank's place there is its
  // rank within the group: what all_gather orders by). Throws std::invalid_argument for a
  // group naming a rank the launch does not have, or groups that leave `rank` out.
  static std::vector<std::uint32_t> members_of(const isa::Collective& op, std::uint32_t rank,
                                               std::uint32_t ranks);

  // Registers the call of program `program` of rank `rank`. Returns every member's call, in
  // the group's order, when this one completes its set. Throws std::invalid_argument when it does
  // not agree with the calls it meets (the message names the first member's call; its origin
  // is `first_origin`).
  std::optional<std::vector<CollectiveArrival>> arrive(std::uint32_t rank, std::uint32_t program,
                                                       std::uint32_t ranks, CollectiveArrival a,
                                                       isa::Origin* first_origin);

  // For the deadlock report of core `core`'s waiting call `index`: " waits at all_reduce
  // among ranks 0 to 3: ranks 2, 3 have not arrived".
  std::string status(std::uint32_t core, std::size_t index) const;

 private:
  // (program id, members, the call's number among the core's calls on that set)
  using Key = std::tuple<std::uint32_t, std::vector<std::uint32_t>, std::uint64_t>;
  struct Pending {
    std::vector<std::optional<CollectiveArrival>> arrivals;  // by place in the set
    std::size_t arrived = 0;
  };
  std::map<Key, Pending> pending_;
  std::map<std::pair<std::uint32_t, std::vector<std::uint32_t>>, std::uint64_t> calls_;
};

}  // namespace trnsim::sim::detail
