// What every part of trnsim._core shares: locating what a Python kernel records at its own
// line, and converting NKI's Python arguments (indices, operations, scalars, engines) to the
// C++ kernel API's.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "kernel/kernel.h"

namespace trnsim::python {

namespace py = pybind11;
using numerics::DType;

// Directories whose frames are the front end's, not the kernel's (set by the nki package).
std::vector<std::string>& package_dirs();

// The innermost Python frame outside the front end's files: the kernel's own line.
isa::Origin kernel_line();

// Runs `f` with everything it records located at the kernel's line.
template <class F>
auto at_kernel_line(F&& f) {
  const kernel::SourceOverride here(kernel_line());
  return f();
}

// t[key] for a Python key: an int, a slice (nl.ds gives one) or a tuple of them.
kernel::Tensor index(const kernel::Tensor& t, const py::object& key);

// An ALU op or activation from Python: the enum itself or an nl object carrying it (`_op`).
template <class Enum>
Enum enum_of(const py::object& o, const char* what) {
  if (py::isinstance<Enum>(o)) return o.cast<Enum>();
  if (py::hasattr(o, "_op") && py::isinstance<Enum>(o.attr("_op")))
    return o.attr("_op").cast<Enum>();
  throw py::type_error(std::string(what) +
                       ": expected an nl operation (nl.add, nl.exp, ...), got " +
                       std::string(py::repr(o)));
}

// A number or a [P, 1] tile (NKI's `float | NkiTensor` operands).
kernel::Scalar scalar_of(const py::object& o, const char* what);

// NotImplementedError naming what of NKI 0.6 trnsim does not model yet (docs/python.md).
[[noreturn]] void not_implemented(const std::string& what);

// The member name of one of nki.isa's Python enums (reduce_cmd.idle -> "idle"; None ->
// "idle").
std::string member(const py::object& o);

// The options every instruction takes: engine (None or nisa.engine.unknown: the compiler's
// choice) and name.
nisa::Common common_of(const py::object& engine, const py::object& name);

void bind_types(py::module_& m);
void bind_language(py::module_& m);
void bind_isa(py::module_& isa);
void bind_isa_gpsimd(py::module_& isa);  // random numbers, scans and the GpSimd index ops
void bind_loops(py::module_& m, py::module_& isa);
void bind_instructions(py::module_& m);  // NkiInstruction's records and depends_on
void bind_collectives(py::module_& m);   // nki.collectives' calls

}  // namespace trnsim::python
