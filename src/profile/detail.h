// Internals shared by the analysis and the trace writer (not part of the public header).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isa/isa.h"
#include "profile/profile.h"
#include "sim/sim.h"
#include "timing/timing.h"

namespace trnsim::profile::detail {

// The input with each run that has control flow unrolled (sim::unroll): the profiler reads
// straight-line runs, so a loop shows one instruction per start ("name#k"). Without loops
// it is the input itself, not a copy.
class StraightLine {
 public:
  explicit StraightLine(const ProfileInput& input);
  StraightLine(const StraightLine&) = delete;
  StraightLine& operator=(const StraightLine&) = delete;
  const ProfileInput& input() const { return unrolled_.empty() ? original_ : copy_; }

 private:
  const ProfileInput& original_;
  std::vector<sim::UnrolledRun> unrolled_;  // sized once: copy_ points into it
  ProfileInput copy_;
};

// Queues of a program in display order (tensor, vector, scalar, gpsimd, sync, dma.0, ...)
// and each instruction's track.
struct Tracks {
  std::vector<isa::QueueId> queues;
  std::vector<std::uint16_t> of_instruction;
};
Tracks assign_tracks(const isa::Program& program);
std::string queue_name(const isa::QueueId& q);  // "tensor", "dma.3"

// Stall attribution of one core run, replayed from the times (docs/profiler.md).
struct Attribution {
  std::vector<double> queue_free;         // when the instruction's queue became free
  std::vector<std::int64_t> released_by;  // releaser of the wait satisfied last, or -1
  std::vector<std::int16_t> wait_sem;     // that wait's semaphore, or -1
  // Releasers of every wait (for dependency edges): flattened, offsets per instruction.
  std::vector<std::uint32_t> wait_offsets;  // size n + 1
  std::vector<std::int64_t> wait_releasers;
  std::vector<std::int16_t> wait_sems;
};
Attribution attribute_stalls(const isa::Program& program, const sim::RunResult& result,
                             const Tracks& tracks);

// Per-instruction costs recomputed in program order (tensor state in tensor-queue order).
struct Costs {
  double flops = 0, transpose_flops = 0;
  std::uint64_t bytes = 0, hbm_bytes = 0, sbuf_read = 0, sbuf_write = 0, psum_read = 0,
                psum_write = 0, descriptors = 0;
  double min_contiguous_bytes = 0;
  std::uint32_t partitions = 0;
  std::uint64_t elements = 0;
  timing::Bound bound = timing::Bound::kNone;
  bool dma = false;
};
class CostReplay {
 public:
  explicit CostReplay(const arch::ChipConfig& chip) : model_(chip) {}
  Costs next(const isa::Instruction& inst);  // call in program order
  const timing::CostModel& model() const { return model_; }

 private:
  timing::CostModel model_;
  timing::TensorEngineState tensor_;
};

// Mode of the tensor engine's peak for a report ("bf16" when unknown).
std::string tensor_mode(const sim::TimingReport* report);

// Writes `s` as a JSON string literal (quotes included) to `out`.
void json_string(std::string& out, std::string_view s);

// Adds `amount`, spread evenly over [lo, hi), to buckets of `w` ns (all of it to lo's bucket
// when hi <= lo); times past the last bucket count in it.
void spread(std::vector<double>& buckets, double w, double lo, double hi, double amount);

}  // namespace trnsim::profile::detail
