// One simulated run kept for Python after it returns: its compiled programs, results and
// timing, for trnsim.last_run() (the explorer report, the Perfetto trace, compiler dumps).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "bridge.h"
#include "runtime/runtime.h"

namespace trnsim::python {

struct Run {
  arch::ChipConfig chip;
  runtime::BuiltKernel built;
  runtime::LaunchResult launch;
  // A run of several ranks (trnsim.simulate_ranks): the ranks after the first, whose cores
  // follow rank 0's in profiles.
  std::vector<runtime::LaunchResult> other_ranks;
  std::string title;
};

// _core.Run: write_profile(html, trace), assembly(), ir(), report().
void bind_run(py::module_& m);

}  // namespace trnsim::python
