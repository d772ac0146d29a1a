// Locating a Python kernel's operations at its own lines, and converting NKI's arguments.
#include "bridge.h"

#include <Python.h>
#include <frameobject.h>

namespace trnsim::python {

std::vector<std::string>& package_dirs() {
  static std::vector<std::string> dirs;
  return dirs;
}

namespace {

bool in_package(const std::string& file) {
  for (const std::string& dir : package_dirs())
    if (file.compare(0, dir.size(), dir) == 0) return true;
  return false;
}

}  // namespace

isa::Origin kernel_line() {
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  isa::Origin where;
  while (frame != nullptr) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    const std::string file = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(code))
                                 .attr("co_filename")
                                 .cast<std::string>();
    if (!in_package(file)) {
      where.file = file;
      where.line = static_cast<std::uint32_t>(PyFrame_GetLineNumber(frame));
#if PY_VERSION_HEX >= 0x030B0000
      int line = 0, column = 0, end_line = 0, end_column = 0;
      if (PyCode_Addr2Location(code, PyFrame_GetLasti(frame), &line, &column, &end_line,
                               &end_column) != 0 &&
          column >= 0)
        where.column = static_cast<std::uint32_t>(column) + 1;
#endif
      Py_DECREF(code);
      break;
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  return where;
}

namespace {

// One index of a view from Python: an int or a slice (nl.ds gives a slice).
kernel::Index to_index(const py::handle& key) {
  if (py::isinstance<py::slice>(key)) {
    const auto s = py::reinterpret_borrow<py::slice>(key);
    const auto field = [&](const char* name, std::int64_t fallback) {
      const py::object v = s.attr(name);
      return v.is_none() ? fallback : v.cast<std::int64_t>();
    };
    const std::int64_t step = field("step", 1);
    return kernel::Slice{field("start", step < 0 ? -1 : 0), field("stop", kernel::kEnd), step};
  }
  // An int or anything with __index__ (NumPy's integers); not a bool, which is an int too.
  if (py::isinstance<py::bool_>(key) || PyIndex_Check(key.ptr()) == 0)
    throw py::type_error("a tensor index is an int, a slice or nl.ds(start, size); got " +
                         std::string(py::repr(key)));
  PyObject* as_int = PyNumber_Index(key.ptr());  // new reference
  if (as_int == nullptr) throw py::error_already_set();
  return kernel::Index(py::reinterpret_steal<py::int_>(as_int).cast<std::int64_t>());
}

}  // namespace

kernel::Tensor index(const kernel::Tensor& t, const py::object& key) {
  const py::tuple keys =
      py::isinstance<py::tuple>(key) ? py::reinterpret_borrow<py::tuple>(key) : py::make_tuple(key);
  std::size_t ellipses = 0;
  for (const py::handle k : keys) ellipses += k.is(py::ellipsis()) ? 1 : 0;
  if (ellipses > 1) throw py::index_error("a tensor index has at most one '...'");
  std::vector<kernel::Index> ix;
  for (const py::handle k : keys) {
    if (!k.is(py::ellipsis())) {
      ix.push_back(to_index(k));
      continue;
    }
    // '...': full slices of the dims the other indices leave out.
    const auto others = static_cast<std::int64_t>(keys.size()) - 1;
    for (std::int64_t d = others; d < t.ndim(); ++d)
      ix.emplace_back(kernel::Slice{0, kernel::kEnd, 1});
  }
  return at_kernel_line([&] { return t.index(ix); });
}

kernel::Scalar scalar_of(const py::object& o, const char* what) {
  if (py::isinstance<kernel::Tensor>(o)) return o.cast<kernel::Tensor>();
  // Python's numbers and NumPy's scalars (numbers.Real takes both).
  static const py::handle real = py::object(py::module_::import("numbers").attr("Real")).release();
  if (py::isinstance(o, real)) {
    PyObject* as_float = PyNumber_Float(o.ptr());  // new reference
    if (as_float == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::float_>(as_float).cast<float>();
  }
  throw py::type_error(std::string(what) + ": expected a number or a [P, 1] tile, got " +
                       std::string(py::repr(o)));
}

nisa::Common common_of(const py::object& engine, const py::object& name) {
  nisa::Common c;
  if (!engine.is_none()) c.engine = engine.cast<isa::Engine>();
  if (!name.is_none()) c.name = name.cast<std::string>();
  return c;
}

[[noreturn]] void not_implemented(const std::string& what) {
  PyErr_SetString(PyExc_NotImplementedError,
                  (what + " is not implemented in trnsim yet (docs/python.md)").c_str());
  throw py::error_already_set();
}

std::string member(const py::object& o) {
  if (o.is_none()) return "idle";
  return py::hasattr(o, "name") ? o.attr("name").cast<std::string>() : std::string(py::str(o));
}

}  // namespace trnsim::python
