// nki.isa.NkiInstruction's plumbing: where the trace is (trace_position), what a call
// recorded since (recorded_since) and an explicit dependency between two such records
// (depends_on), over the C++ kernel API's nl::Recorded. nki/isa.py wraps every instruction
// call to return its record.
#include <pybind11/stl.h>

#include "bridge.h"

namespace trnsim::python {

void bind_instructions(py::module_& m) {
  py::class_<nl::Recorded>(m, "Recorded", "The IR instructions one nki.isa call recorded.")
      .def_readonly("first", &nl::Recorded::first)
      .def_readonly("end", &nl::Recorded::end)
      .def("__repr__", [](const nl::Recorded& r) {
        return "Recorded(" + std::to_string(r.first) + ", " + std::to_string(r.end) + ")";
      });
  // Called around every nki.isa call, so neither walks the Python stack for the kernel's line
  // (at_kernel_line): outside a trace the wrapped call itself raises the located error.
  m.def("trace_position", [] {
    try {
      return nl::trace_position();
    } catch (const kernel::KernelError&) {
      return std::size_t{0};
    }
  });
  m.def(
      "recorded_since", [](std::size_t position) { return nl::recorded_since(position); },
      py::arg("position"));
  m.def(
      "depends_on",
      [](const nl::Recorded& consumer, const nl::Recorded& producer) {
        at_kernel_line([&] { nl::depends_on(consumer, producer); });
      },
      py::arg("consumer"), py::arg("producer"));
}

}  // namespace trnsim::python
