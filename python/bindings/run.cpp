// trnsim.last_run(): the profiler's explorer report and Perfetto trace, the compiled
// assembly and the kernel IR of the last run, made by the same C++ as `trnsim profile`.
#include "run.h"

#include <pybind11/stl.h>

#include "isa/asm.h"
#include "kernel/ir.h"
#include "profile/profile.h"
#include "sim/timing_model.h"

namespace trnsim::python {

namespace {

profile::ProfileInput profile_input(const Run& run) {
  profile::ProfileInput input;
  input.chip = &run.chip;
  input.title = run.title;
  // Every core of every rank, rank k's after rank k - 1's; all run the same programs.
  int core = 0;
  const auto add_rank = [&](const runtime::LaunchResult& rank) {
    for (std::size_t p = 0; p < rank.runs.size(); ++p)
      input.cores.push_back({core++, &run.built.compiled.programs[p], &rank.runs[p],
                             p < rank.timing.size() ? &rank.timing[p] : nullptr});
  };
  add_rank(run.launch);
  for (const runtime::LaunchResult& rank : run.other_ranks) add_rank(rank);
  return input;
}

// Writes the requested files and returns the analysis' headline figures of core 0 and its
// suggestions.
py::dict write_profile(const Run& run, const std::string& html, const std::string& trace) {
  if (run.launch.timing.empty())
    throw py::value_error("the last run was not timed: nothing to profile");
  const profile::ProfileInput input = profile_input(run);
  profile::Analysis analysis;
  {
    const py::gil_scoped_release no_python;
    analysis = profile::write_profile(input, {html, trace, nullptr});
  }
  const profile::Metrics& m = analysis.cores.front().metrics;
  py::dict summary;
  summary["total_ns"] = analysis.total_ns;
  summary["mfu_percent"] = m.mfu_percent;
  summary["mbu_percent"] = m.mbu_percent;
  summary["bounding_engine"] = m.bounding_engine;
  summary["bounding_active_percent"] = m.bounding_active_percent;
  py::list suggestions;
  for (const profile::Suggestion& s : analysis.suggestions) {
    py::dict d;
    d["rule"] = s.rule;
    d["title"] = s.title;
    d["detail"] = s.detail;
    d["source"] = s.source;
    suggestions.append(d);
  }
  summary["suggestions"] = suggestions;
  return summary;
}

std::string assembly(const Run& run) {
  std::string text;
  for (std::size_t p = 0; p < run.built.compiled.programs.size(); ++p) {
    if (run.built.compiled.programs.size() > 1) text += "# program " + std::to_string(p) + "\n";
    text += isa::print_program(run.built.compiled.programs[p]);
  }
  return text;
}

std::string ir(const Run& run) {
  std::string text;
  for (const kernel::KernelIr& k : run.built.ir) text += kernel::format_ir(k);
  return text;
}

}  // namespace

void bind_run(py::module_& m) {
  py::class_<Run, std::shared_ptr<Run>>(m, "Run")
      .def_readonly("title", &Run::title)
      .def("write_profile", &write_profile, py::arg("html") = "", py::arg("trace") = "")
      .def("assembly", &assembly)
      .def("ir", &ir)
      .def_property_readonly("simulated_ns", [](const Run& r) { return r.launch.simulated_ns; });
}

}  // namespace trnsim::python
