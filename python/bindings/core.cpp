// trnsim._core: the bridge from Python to the C++ kernel API, compiler and simulator. The
// `nki` package (pure Python, python/nki) is a thin layer over it: one tracer, one compiler,
// one simulator for both languages (docs/python.md). Every call that records something in a
// trace is located at the kernel's own Python line (kernel::SourceOverride), found by walking
// the Python stack past the package's own files.
#include <Python.h>
#include <frameobject.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "kernel/kernel.h"
#include "runtime/runtime.h"
#include "sim/timing_model.h"
#include "util/diagnostic.h"

namespace py = pybind11;

namespace trnsim::python {

namespace {

using kernel::Tensor;
using numerics::DType;

// Directories whose frames are the front end's, not the kernel's (set by the nki package).
std::vector<std::string>& package_dirs() {
  static std::vector<std::string> dirs;
  return dirs;
}

bool in_package(const std::string& file) {
  for (const std::string& dir : package_dirs())
    if (file.compare(0, dir.size(), dir) == 0) return true;
  return false;
}

// The innermost Python frame outside the front end's files: the kernel's own line.
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

// Runs `f` with everything it records located at the kernel's line.
template <class F>
auto at_kernel_line(F&& f) {
  const kernel::SourceOverride here(kernel_line());
  return f();
}

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
  if (!py::isinstance<py::int_>(key))
    throw py::type_error("a tensor index is an int, a slice or nl.ds(start, size); got " +
                         py::repr(key).cast<std::string>());
  return kernel::Index(key.cast<std::int64_t>());
}

Tensor index(const Tensor& t, const py::object& key) {
  std::vector<kernel::Index> ix;
  if (py::isinstance<py::tuple>(key)) {
    for (const py::handle k : py::reinterpret_borrow<py::tuple>(key)) ix.push_back(to_index(k));
  } else {
    ix.push_back(to_index(key));
  }
  return at_kernel_line([&] {
    switch (ix.size()) {
      case 1:
        return t(ix[0]);
      case 2:
        return t(ix[0], ix[1]);
      case 3:
        return t(ix[0], ix[1], ix[2]);
      case 4:
        return t(ix[0], ix[1], ix[2], ix[3]);
      case 5:
        return t(ix[0], ix[1], ix[2], ix[3], ix[4]);
      default:
        throw kernel::KernelError(
            kernel_line(), "a view takes 1 to 5 indices, " + std::to_string(ix.size()) + " given");
    }
  });
}

// An ALU op or activation from Python: the enum itself or an nl object carrying it (`_op`).
template <class Enum>
Enum enum_of(const py::object& o, const char* what) {
  if (py::isinstance<Enum>(o)) return o.cast<Enum>();
  if (py::hasattr(o, "_op")) return o.attr("_op").cast<Enum>();
  throw py::type_error(std::string(what) +
                       ": expected an nl operation (nl.add, nl.exp, ...), got " +
                       py::repr(o).cast<std::string>());
}

kernel::Scalar scalar_of(const py::object& o) {
  if (py::isinstance<Tensor>(o)) return o.cast<Tensor>();
  return o.cast<float>();
}

nisa::Common common_of(const py::object& engine, const py::object& name) {
  nisa::Common c;
  if (!engine.is_none()) c.engine = engine.cast<isa::Engine>();
  if (!name.is_none()) c.name = name.cast<std::string>();
  return c;
}

// NumPy dtypes of the types NumPy has; the others (bf16, fp8, ...) travel as float32 values.
std::optional<py::dtype> numpy_dtype(DType t) {
  switch (t) {
    case DType::kFloat32:
      return py::dtype("float32");
    case DType::kFloat16:
      return py::dtype("float16");
    case DType::kInt8:
      return py::dtype("int8");
    case DType::kInt16:
      return py::dtype("int16");
    case DType::kInt32:
      return py::dtype("int32");
    case DType::kUInt8:
      return py::dtype("uint8");
    case DType::kUInt16:
      return py::dtype("uint16");
    case DType::kUInt32:
      return py::dtype("uint32");
    default:
      return std::nullopt;
  }
}

// A host tensor from a C-contiguous NumPy array: its bytes as they are when the array's
// dtype is the tensor's, else its values (float32) rounded to nearest even into `dtype`.
runtime::HostTensor host_tensor(const std::string& name, const py::array& array, DType dtype) {
  kernel::Shape shape(array.shape(), array.shape() + array.ndim());
  const std::optional<py::dtype> native = numpy_dtype(dtype);
  if (native && array.dtype().kind() == native->kind() &&
      array.dtype().itemsize() == native->itemsize()) {
    const auto* data = static_cast<const std::uint8_t*>(array.data());
    return runtime::HostTensor(name, dtype, shape,
                               std::vector<std::uint8_t>(data, data + array.nbytes()));
  }
  const auto values = py::array_t<float, py::array::c_style | py::array::forcecast>(array);
  return runtime::HostTensor::from_floats(name, dtype, shape,
                                          std::span(values.data(), values.size()));
}

py::array numpy_array(const runtime::HostTensor& t) {
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  if (const std::optional<py::dtype> native = numpy_dtype(t.dtype)) {
    py::array out(*native, shape);
    std::memcpy(out.mutable_data(), t.bytes().data(), t.byte_size());
    return out;
  }
  const std::vector<float> values = t.to_floats();
  py::array_t<float> out(shape);
  std::memcpy(out.mutable_data(), values.data(), values.size() * sizeof(float));
  return out;
}

// Traces `fn` (called with one Tensor per input), compiles, runs it on the chip and returns
// (outputs as NumPy arrays, the timing report as JSON text or "" when untimed, host times).
py::tuple simulate(const py::function& fn, const py::list& arrays, const py::list& names,
                   const py::list& dtypes, const std::string& chip_name, int lnc, bool timing_only,
                   bool check_hazards) {
  const arch::ChipConfig chip = arch::load(chip_name);
  std::vector<runtime::HostTensor> inputs;
  std::vector<kernel::TensorSpec> specs;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    inputs.push_back(host_tensor(names[i].cast<std::string>(), arrays[i].cast<py::array>(),
                                 dtypes[i].cast<DType>()));
    specs.push_back(inputs.back().spec());
  }
  const kernel::KernelFn traced = [&](std::span<const Tensor> in) {
    py::tuple args(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) args[i] = py::cast(in[i]);
    const py::object result = fn(*args);
    std::vector<Tensor> outs;
    if (py::isinstance<Tensor>(result)) {
      outs.push_back(result.cast<Tensor>());
    } else if (!result.is_none()) {
      for (const py::handle r : result) outs.push_back(r.cast<Tensor>());
    }
    return outs;
  };
  runtime::BuildOptions build;
  build.name = py::str(fn.attr("__name__")).cast<std::string>();
  build.lnc = lnc;
  const auto start = std::chrono::steady_clock::now();
  const runtime::BuiltKernel built = runtime::build(traced, specs, chip, build);
  const double build_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  runtime::LaunchOptions launch;
  launch.functional = !timing_only;
  launch.check_hazards = check_hazards;
  runtime::LaunchResult result = runtime::launch(built, chip, inputs, launch);
  for (const sim::RunResult& run : result.runs)
    if (!run.hazards.empty()) throw sim::SimError(run.hazards.front().diagnostic);
  py::list outputs;
  for (const runtime::HostTensor& t : result.outputs) outputs.append(numpy_array(t));
  std::string report;
  if (result.chip_timing) {
    report = sim::chip_timing_report_json(*result.chip_timing);
  } else if (!result.timing.empty()) {
    report = sim::timing_report_json(result.timing.front());
  }
  // Host time: tracing (the Python kernel runs here) and compiling, and simulating.
  py::dict host;
  host["trace_ms"] = built.trace_ms;
  host["compile_ms"] = built.compile_ms;
  host["build_s"] = build_s;
  host["simulation_s"] = result.host_seconds;
  host["instructions"] = built.compiled.stats.instructions;
  return py::make_tuple(outputs, report, host);
}

void bind_types(py::module_& m) {
  // NumPy dtype -> NKI dtype for the arrays that pass as they are (the nki package's lookup).
  m.def("numpy_dtypes", [] {
    py::dict map;
    for (const numerics::DTypeInfo& info : numerics::all_dtypes())
      if (const std::optional<py::dtype> native = numpy_dtype(info.dtype))
        map[*native] = info.dtype;
    return map;
  });
  py::enum_<DType> dtype(m, "DType");
  for (const numerics::DTypeInfo& info : numerics::all_dtypes())
    dtype.value(std::string(info.name).c_str(), info.dtype);
  py::enum_<kernel::Buffer>(m, "Buffer")
      .value("sbuf", kernel::Buffer::kSbuf)
      .value("psum", kernel::Buffer::kPsum)
      .value("private_hbm", kernel::Buffer::kPrivateHbm)
      .value("shared_hbm", kernel::Buffer::kSharedHbm);
  py::enum_<isa::AluOp> alu(m, "AluOp");
  for (int i = 0; i < isa::kNumAluOps; ++i) {
    const auto op = static_cast<isa::AluOp>(i);
    alu.value(std::string(isa::alu_op_name(op)).c_str(), op);
  }
  py::enum_<isa::ActivationFunc> act(m, "ActivationFunc");
  for (int i = 0; i < isa::kNumActivationFuncs; ++i) {
    const auto f = static_cast<isa::ActivationFunc>(i);
    act.value(std::string(isa::activation_name(f)).c_str(), f);
  }
  py::enum_<isa::Engine>(m, "Engine")
      .value("tensor", isa::Engine::kTensor)
      .value("vector", isa::Engine::kVector)
      .value("scalar", isa::Engine::kScalar)
      .value("gpsimd", isa::Engine::kGpSimd)
      .value("sync", isa::Engine::kSync)
      .value("dma", isa::Engine::kDma);
  py::class_<Tensor>(m, "Tensor")
      .def_property_readonly("shape",
                             [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("buffer", &Tensor::buffer)
      .def_property_readonly("ndim", &Tensor::ndim)
      .def("__getitem__", &index, py::arg("key"))
      .def("__repr__", [](const Tensor& t) {
        std::string dims;
        for (std::size_t i = 0; i < t.shape().size(); ++i)
          dims += (i > 0 ? ", " : "") + std::to_string(t.shape()[i]);
        return "Tensor([" + dims + "], " + std::string(numerics::name(t.dtype())) + ")";
      });
}

}  // namespace
}  // namespace trnsim::python

namespace trnsim::python {
namespace {

// nki.language's declarations and data movement (the names and defaults of NKI 0.6).
void bind_language(py::module_& m) {
  m.def(
      "ndarray",
      [](const std::vector<std::int64_t>& shape, DType dtype, kernel::Buffer buffer,
         const std::string& name) {
        return at_kernel_line([&] { return nl::ndarray(shape, dtype, buffer, name); });
      },
      py::arg("shape"), py::arg("dtype"), py::arg("buffer") = kernel::Buffer::kSbuf,
      py::arg("name") = "");
  m.def(
      "zeros",
      [](const std::vector<std::int64_t>& shape, DType dtype, kernel::Buffer buffer,
         const std::string& name) {
        return at_kernel_line([&] { return nl::zeros(shape, dtype, buffer, name); });
      },
      py::arg("shape"), py::arg("dtype"), py::arg("buffer") = kernel::Buffer::kSbuf,
      py::arg("name") = "");
  m.def(
      "load",
      [](const Tensor& src, std::optional<DType> dtype) {
        return at_kernel_line([&] { return nl::load(src, dtype); });
      },
      py::arg("src"), py::arg("dtype") = py::none());
  m.def(
      "store",
      [](const Tensor& dst, const Tensor& value) {
        at_kernel_line([&] { nl::store(dst, value); });
      },
      py::arg("dst"), py::arg("value"));
  m.def(
      "program_id", [](int axis) { return at_kernel_line([&] { return nl::program_id(axis); }); },
      py::arg("axis") = 0);
  m.def(
      "num_programs",
      [](int axes) { return at_kernel_line([&] { return nl::num_programs(axes); }); },
      py::arg("axes") = 0);
  m.def("tracing", &kernel::tracing);
  // nl.tile_size of the chip being traced for (a trace must be running).
  m.def("tile_size", [](const std::string& field) -> std::int64_t {
    return at_kernel_line([&]() -> std::int64_t {
      if (field == "pmax") return nl::tile_size::pmax();
      if (field == "gemm_stationary_fmax") return nl::tile_size::gemm_stationary_fmax();
      if (field == "gemm_moving_fmax") return nl::tile_size::gemm_moving_fmax();
      if (field == "psum_fmax" || field == "psum_bank_fmax") return nl::tile_size::psum_bank_fmax();
      if (field == "psum_num_banks") return nl::tile_size::psum_num_banks();
      if (field == "bn_stats_fmax") return nl::tile_size::bn_stats_fmax();
      if (field == "sbuf_fmax_bytes") return nl::tile_size::sbuf_bytes_per_partition();
      throw py::attribute_error("nl.tile_size has no field '" + field + "'");
    });
  });
}

// nki.isa: one function per instruction, dst first, NKI 0.6's keyword names and defaults.
void bind_isa(py::module_& m) {
  const auto engine = py::arg("engine") = py::none();
  const auto name = py::arg("name") = py::none();
  m.def(
      "tensor_tensor",
      [](const Tensor& dst, const Tensor& data1, const Tensor& data2, const py::object& op,
         const py::object& e, const py::object& n) {
        at_kernel_line([&] {
          nisa::tensor_tensor(dst, data1, data2, enum_of<isa::AluOp>(op, "op"), common_of(e, n));
        });
      },
      py::arg("dst"), py::arg("data1"), py::arg("data2"), py::arg("op"), engine, name);
  m.def(
      "tensor_scalar",
      [](const Tensor& dst, const Tensor& data, const py::object& op0, const py::object& operand0,
         bool reverse0, const py::object& op1, const py::object& operand1, bool reverse1,
         const py::object& e, const py::object& n) {
        at_kernel_line([&] {
          nisa::TensorScalarOptions o;
          o.reverse0 = reverse0;
          if (!op1.is_none()) {
            o.op1 = enum_of<isa::AluOp>(op1, "op1");
            o.operand1 = scalar_of(operand1);
          }
          o.reverse1 = reverse1;
          o.common = common_of(e, n);
          nisa::tensor_scalar(dst, data, enum_of<isa::AluOp>(op0, "op0"), scalar_of(operand0), o);
        });
      },
      py::arg("dst"), py::arg("data"), py::arg("op0"), py::arg("operand0"),
      py::arg("reverse0") = false, py::arg("op1") = py::none(), py::arg("operand1") = py::none(),
      py::arg("reverse1") = false, engine, name);
  m.def(
      "activation",
      [](const Tensor& dst, const py::object& op, const Tensor& data, const py::object& bias,
         const py::object& scale, const py::object& reduce_res, const py::object& n) {
        at_kernel_line([&] {
          nisa::ActivationOptions o;
          if (!bias.is_none()) o.bias = scalar_of(bias);
          o.scale = scalar_of(scale);
          if (!reduce_res.is_none()) o.reduce_res = reduce_res.cast<Tensor>();
          o.common = common_of(py::none(), n);
          nisa::activation(dst, enum_of<isa::ActivationFunc>(op, "op"), data, o);
        });
      },
      py::arg("dst"), py::arg("op"), py::arg("data"), py::arg("bias") = py::none(),
      py::arg("scale") = 1.0f, py::arg("reduce_res") = py::none(), name);
  m.def(
      "tensor_copy",
      [](const Tensor& dst, const Tensor& src, const py::object& e, const py::object& n) {
        at_kernel_line([&] { nisa::tensor_copy(dst, src, common_of(e, n)); });
      },
      py::arg("dst"), py::arg("src"), engine, name);
  m.def(
      "memset",
      [](const Tensor& dst, float value, const py::object& e, const py::object& n) {
        at_kernel_line([&] { nisa::memset(dst, value, common_of(e, n)); });
      },
      py::arg("dst"), py::arg("value"), engine, name);
  m.def(
      "dma_copy",
      [](const Tensor& dst, const Tensor& src, const py::object& n) {
        at_kernel_line([&] {
          nisa::DmaOptions o;
          if (!n.is_none()) o.name = n.cast<std::string>();
          nisa::dma_copy(dst, src, o);
        });
      },
      py::arg("dst"), py::arg("src"), name);
  m.def(
      "nc_matmul",
      [](const Tensor& dst, const Tensor& stationary, const Tensor& moving, bool is_transpose,
         const py::object& accumulate, const py::object& n) {
        at_kernel_line([&] {
          nisa::MatmulOptions o;
          o.is_transpose = is_transpose;
          o.accumulate = !accumulate.is_none() && accumulate.cast<bool>();
          if (!n.is_none()) o.name = n.cast<std::string>();
          nisa::nc_matmul(dst, stationary, moving, o);
        });
      },
      py::arg("dst"), py::arg("stationary"), py::arg("moving"), py::arg("is_transpose") = false,
      py::arg("accumulate") = py::none(), name);
  m.def(
      "nc_transpose",
      [](const Tensor& dst, const Tensor& data, const py::object& e, const py::object& n) {
        at_kernel_line([&] { nisa::nc_transpose(dst, data, common_of(e, n)); });
      },
      py::arg("dst"), py::arg("data"), engine, name);
}

}  // namespace
}  // namespace trnsim::python

PYBIND11_MODULE(_core, m) {
  using namespace trnsim;
  m.doc() = "trnsim's C++ kernel API, compiler and simulator for the nki package";
  py::register_exception<util::Error>(m, "Error", PyExc_RuntimeError);
  python::bind_types(m);
  python::bind_language(m);
  py::module_ isa = m.def_submodule("isa", "nki.isa's instructions");
  python::bind_isa(isa);
  m.def(
      "set_package_dirs",
      [](std::vector<std::string> dirs) { python::package_dirs() = std::move(dirs); },
      py::arg("dirs"));
  m.def("simulate", &python::simulate, py::arg("fn"), py::arg("arrays"), py::arg("names"),
        py::arg("dtypes"), py::arg("chip"), py::arg("lnc") = 1, py::arg("timing_only") = false,
        py::arg("check_hazards") = true);
}
