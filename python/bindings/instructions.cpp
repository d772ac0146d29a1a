// nki.isa.NkiInstruction: the C++ kernel API's nl::Recorded (the instructions one call
// recorded) with NKI's depends_on. nki/isa.py wraps every instruction call in
// call_recording, which returns it.
#include <pybind11/stl.h>

#include "bridge.h"

namespace trnsim::python {

void bind_instructions(py::module_& m) {
  py::class_<nl::Recorded>(
      m, "NkiInstruction",
      "What an nki.isa call returns: the instructions it recorded. depends_on(*producers) "
      "makes them run after every producer's even where no data orders them (a semaphore wait "
      "the compiler inserts); producers are recorded earlier, in the same dynamic loop or "
      "outside every loop. Returns self, so calls chain.")
      .def("depends_on",
           [](const py::object& self, const py::args& producers) {
             const auto& consumer = self.cast<const nl::Recorded&>();
             for (const py::handle p : producers) {
               if (!py::isinstance<nl::Recorded>(p))
                 throw py::type_error(
                     "depends_on takes the NkiInstruction values nki.isa calls return, not " +
                     std::string(py::str(p.get_type().attr("__name__"))));
               at_kernel_line([&] { nl::depends_on(consumer, p.cast<const nl::Recorded&>()); });
             }
             return self;
           })
      .def("__repr__", [](const nl::Recorded& r) {
        return "NkiInstruction(" + std::to_string(r.first) + ".." + std::to_string(r.end) + ")";
      });
  // Runs fn(*args, **kwargs), an nki.isa call, and returns what it recorded. Called around
  // every such call, so it does not walk the Python stack for the kernel's line (outside a
  // trace fn itself raises the located error).
  m.def("call_recording",
        [](const py::function& fn, const py::tuple& args, const py::dict& kwargs) {
          std::size_t start = 0;
          try {
            start = nl::trace_position();
          } catch (const kernel::KernelError&) {
            fn(*args, **kwargs);  // raises the located error
            throw;
          }
          fn(*args, **kwargs);
          return nl::recorded_since(start);
        });
}

}  // namespace trnsim::python
