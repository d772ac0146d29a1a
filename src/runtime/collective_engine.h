// The collective engine of a launch (internal to the runtime): sim::CollectiveEngine on the
// collective layer. Each collective's data comes from src/collective in the reduction order
// of the algorithm Neuron's runtime would choose for its size and span; its time from the
// event model on the launch's system (the analytical model when the event model would move
// more than kEventChunks chunks), with every replica group running at once (an SPMD kernel's
// groups reach the call together). docs/collectives.md, "In kernels".
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "collective/collective.h"
#include "runtime/runtime.h"
#include "sim/sim.h"
#include "system/system.h"

namespace trnsim::runtime::detail {

class SystemCollectives final : public sim::CollectiveEngine {
 public:
  // About a tenth of a second of host time per collective in the event model.
  static constexpr std::uint64_t kEventChunks = 1'000'000;

  // Ranks fill the system's chips `ranks_per_chip` at a time, chips in the model's ring order.
  // `event_chunks`: the most chunks a collective may move in the event model.
  SystemCollectives(const system::SystemConfig& system, int ranks_per_chip,
                    std::uint64_t event_chunks = kEventChunks);
  std::vector<sim::Duration> run(std::span<sim::CollectiveMember> members, int ranks,
                                 bool functional) override;
  const std::vector<CollectiveRun>& records() const { return records_; }

 private:
  // Fills each member's dst (functional runs) as `algorithm` computes the collective.
  void compute(std::span<sim::CollectiveMember> members, collective::Algorithm algorithm) const;

  collective::CollectiveModel model_;
  std::uint64_t event_chunks_ = kEventChunks;
  // A collective's time, algorithm and the model that timed it.
  struct Timed {
    double time_ns = 0;
    collective::Algorithm algorithm = collective::Algorithm::kRing;
    const char* model = "event";
  };
  // By (op, bytes, groups, group size, pairs): every group of a call asks alike.
  std::map<std::tuple<int, std::uint64_t, std::vector<std::uint32_t>, std::uint32_t,
                      std::vector<std::uint32_t>>,
           Timed>
      timed_;
  std::vector<CollectiveRun> records_;
};

// A system of one chip (no links): what launch_ranks times its collectives on.
system::SystemConfig one_chip_system(const arch::ChipConfig& chip);

}  // namespace trnsim::runtime::detail
