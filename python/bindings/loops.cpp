// Registers and dynamic loops for Python (NKI 0.6's nisa.register_*, nl.fori_loop,
// nl.while_loop and the deprecated nl.dynamic_range): the C++ kernel API's calls
// (src/kernel/loops.cpp), located at the kernel's Python line.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bridge.h"

namespace trnsim::python {

namespace {

using kernel::Register;
using kernel::Tensor;

// An int or a register, as NKI's loop bounds and register_move's source are.
nl::LoopBound bound_of(const py::object& value, const char* what) {
  if (py::isinstance<Register>(value)) return value.cast<Register>();
  if (py::isinstance<py::bool_>(value) || !PyIndex_Check(value.ptr()))
    throw py::type_error(std::string(what) +
                         " is an int or a register (nisa.register_alloc), not " +
                         std::string(py::str(value.get_type().attr("__name__"))));
  const auto v = value.cast<std::int64_t>();
  if (v < INT32_MIN || v > INT32_MAX)
    throw py::value_error(std::string(what) + " = " + std::to_string(v) +
                          " does not fit a 32-bit register");
  return static_cast<std::int32_t>(v);
}

}  // namespace

constexpr const char* kNoHostValue =
    "a register's value exists only on the device while the kernel runs: use nl.fori_loop / "
    "nl.while_loop for control flow over it, not if / while / int() / range()";

void bind_loops(py::module_& m, py::module_& isa) {
  py::class_<Register>(m, "Register", "A 32-bit sequencer register (NKI's VirtualRegister).")
      .def("__repr__",
           [](const Register& r) { return "Register(r" + std::to_string(r.reg().index) + ")"; })
      // Its value exists only on the device: Python control flow over it (if/while, int(),
      // range()) is a TypeError at once, as in NKI's tracer, not a loop that never ends.
      .def("__bool__", [](const Register&) -> bool { throw py::type_error(kNoHostValue); })
      .def("__index__", [](const Register&) -> std::int64_t { throw py::type_error(kNoHostValue); })
      .def("__int__", [](const Register&) -> std::int64_t { throw py::type_error(kNoHostValue); });

  isa.def(
      "register_alloc",
      [](const py::object& x) {
        std::optional<std::int32_t> value;
        if (py::isinstance<Register>(x))
          throw py::type_error(
              "register_alloc(x) is an int; copy a register with register_move(dst, src)");
        if (!x.is_none()) value = std::get<std::int32_t>(bound_of(x, "register_alloc(x)"));
        return at_kernel_line([&] { return nisa::register_alloc(value); });
      },
      py::arg("x") = py::none());
  isa.def(
      "register_move",
      [](const Register& dst, const py::object& src) {
        const nl::LoopBound from = bound_of(src, "register_move(src)");
        at_kernel_line([&] {
          if (const auto* r = std::get_if<Register>(&from)) {
            nisa::register_move(dst, *r);
          } else {
            nisa::register_move(dst, std::get<std::int32_t>(from));
          }
        });
      },
      py::arg("dst"), py::arg("src"));
  isa.def(
      "register_load",
      [](const Register& dst, const Tensor& src) {
        at_kernel_line([&] { nisa::register_load(dst, src); });
      },
      py::arg("dst"), py::arg("src"));
  isa.def(
      "register_store",
      [](const Tensor& dst, const Register& src) {
        at_kernel_line([&] { nisa::register_store(dst, src); });
      },
      py::arg("dst"), py::arg("src"));

  m.def(
      "fori_loop",
      [](const py::object& lower, const py::object& upper, const py::function& body,
         const py::object& step) {
        const nl::LoopBound lo = bound_of(lower, "fori_loop(lower)");
        const nl::LoopBound hi = bound_of(upper, "fori_loop(upper)");
        const nl::LoopBound by = bound_of(step, "fori_loop(step)");
        if (!std::holds_alternative<std::int32_t>(by))
          throw py::type_error("fori_loop(step) is a compile-time int (NKI 0.6), not a register");
        at_kernel_line([&] {
          nl::fori_loop(
              lo, hi,
              [&](const Register& i) {
                const py::object returned = body(i);
                if (!returned.is_none())
                  throw py::type_error("fori_loop's body returns nothing (NKI 0.6)");
              },
              std::get<std::int32_t>(by));
        });
      },
      py::arg("lower"), py::arg("upper"), py::arg("body_fun"), py::arg("step") = 1);
  m.def(
      "while_loop",
      [](const Register& init, const py::function& body) {
        at_kernel_line([&] {
          nl::while_loop(init, [&](const Register& r) {
            const py::object next = body(r);
            if (!py::isinstance<Register>(next))
              throw py::type_error(
                  "while_loop's body returns the next condition register (NKI 0.6), not " +
                  std::string(py::str(next.get_type().attr("__name__"))));
            return next.cast<Register>();
          });
        });
      },
      py::arg("init"), py::arg("body_fun"));
  m.def(
      "begin_fori_loop",
      [](const py::object& lower, const py::object& upper, std::int32_t step) {
        const nl::LoopBound lo = bound_of(lower, "dynamic_range(start)");
        const nl::LoopBound hi = bound_of(upper, "dynamic_range(stop)");
        return at_kernel_line([&] { return nl::begin_fori_loop(lo, hi, step); });
      },
      py::arg("lower"), py::arg("upper"), py::arg("step") = 1);
  m.def("end_dynamic_loop", [] { at_kernel_line([&] { nl::end_dynamic_loop(); }); });
}

}  // namespace trnsim::python
