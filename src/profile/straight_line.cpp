// detail::StraightLine: the profiler's view of runs with control flow (detail.h).
#include <algorithm>

#include "profile/detail.h"

namespace trnsim::profile::detail {

StraightLine::StraightLine(const ProfileInput& input) : original_(input) {
  const auto loops = [](const CoreRun& run) {
    return run.result != nullptr && !run.result->executions.empty();
  };
  const auto count = std::count_if(input.cores.begin(), input.cores.end(), loops);
  if (count == 0) return;
  unrolled_.reserve(static_cast<std::size_t>(count));
  copy_ = input;
  for (CoreRun& run : copy_.cores) {
    if (!loops(run)) continue;
    // A null program is the analysis' own error to report.
    if (run.program == nullptr) continue;
    const sim::UnrolledRun& u = unrolled_.emplace_back(sim::unroll(*run.program, *run.result));
    run.program = &u.program;
    run.result = &u.result;
  }
}

}  // namespace trnsim::profile::detail
