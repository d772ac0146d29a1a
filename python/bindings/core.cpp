// trnsim._core: the bridge from Python to the C++ kernel API, compiler and simulator. The
// `nki` package (pure Python, python/nki) is a thin layer over it: one tracer, one compiler,
// one simulator for both languages (docs/python.md). Every call that records something in a
// trace is located at the kernel's own Python line (bridge.h).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "bridge.h"
#include "run.h"
#include "runtime/runtime.h"
#include "sim/timing_model.h"
#include "system/system.h"
#include "util/diagnostic.h"

namespace trnsim::python {

namespace {

using kernel::Tensor;

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

// The unsigned NumPy type of a dtype's stored words (trnsim.bits: bf16 as uint16, ...).
py::dtype bits_dtype(DType t) {
  switch (numerics::storage_bytes(t)) {
    case 1:
      return py::dtype("uint8");
    case 2:
      return py::dtype("uint16");
    default:
      return py::dtype("uint32");
  }
}

// A host tensor from a NumPy array: its bytes as they are when the array's dtype is the
// tensor's, or when `bits` (trnsim.bits: unsigned words of the dtype's size); else its values
// (float32) rounded to nearest even into `dtype`.
runtime::HostTensor host_tensor(const std::string& name, const py::array& array, DType dtype,
                                bool bits) {
  kernel::Shape shape(array.shape(), array.shape() + array.ndim());
  const std::optional<py::dtype> native = bits ? bits_dtype(dtype) : numpy_dtype(dtype);
  if (bits && (array.dtype().kind() != 'u' || array.dtype().itemsize() != native->itemsize()))
    throw py::type_error(
        "input '" + name + "': trnsim.bits of " + std::string(numerics::name(dtype)) +
        " takes an array of " + std::string(py::str(static_cast<const py::handle&>(*native))) +
        " words, not " + std::string(py::str(static_cast<const py::handle&>(array.dtype()))));
  if (native && array.dtype().kind() == native->kind() &&
      array.dtype().itemsize() == native->itemsize()) {
    const auto bytes = py::array::ensure(array, py::array::c_style);
    const auto* data = static_cast<const std::uint8_t*>(bytes.data());
    return runtime::HostTensor(name, dtype, shape,
                               std::vector<std::uint8_t>(data, data + bytes.nbytes()));
  }
  const auto values = py::array_t<float, py::array::c_style | py::array::forcecast>(array);
  return runtime::HostTensor::from_floats(name, dtype, shape,
                                          std::span(values.data(), values.size()));
}

// How a host tensor comes back to NumPy: as its values (float32 for the types NumPy lacks),
// as its stored words for the types NumPy lacks (set_options(bit_outputs=True)), or always as
// its stored words (an argument given as trnsim.bits, written in place).
enum class Words { kNever, kForTypesNumpyLacks, kAlways };

// A host tensor as NumPy: the same type where NumPy has it; else its exact values as float32,
// or its stored words (uint8/uint16/uint32) as `words` asks.
py::array numpy_array(const runtime::HostTensor& t, Words words) {
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  std::optional<py::dtype> native =
      words == Words::kAlways ? bits_dtype(t.dtype) : numpy_dtype(t.dtype);
  if (!native && words == Words::kForTypesNumpyLacks) native = bits_dtype(t.dtype);
  if (native) {
    py::array out(*native, shape);
    std::memcpy(out.mutable_data(), t.bytes().data(), t.byte_size());
    return out;
  }
  // x4-packed types: the values of each word along the last dim (4 per word).
  const std::vector<float> values = t.to_floats();
  if (!shape.empty()) shape.back() *= numerics::info(t.dtype).elements_per_word;
  py::array_t<float> out(shape);
  if (static_cast<std::size_t>(out.size()) != values.size())
    throw std::logic_error("numpy_array: value count does not match the shape");
  std::memcpy(out.mutable_data(), values.data(), values.size() * sizeof(float));
  return out;
}

// The traced kernel: calls the Python function with one Tensor per input and collects what
// it returns (a tensor, a tuple or list of them, or None).
kernel::KernelFn traced_kernel(const py::function& fn) {
  return [fn](std::span<const Tensor> in) {
    py::tuple args(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) args[i] = py::cast(in[i]);
    const py::object result = fn(*args);
    std::vector<Tensor> outs;
    if (py::isinstance<Tensor>(result)) {
      outs.push_back(result.cast<Tensor>());
    } else if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
      for (const py::handle r : result) {
        if (!py::isinstance<Tensor>(r))
          throw py::type_error("a kernel returns nl.shared_hbm tensors; it returned " +
                               std::string(py::repr(r)) + " among them");
        outs.push_back(r.cast<Tensor>());
      }
    } else if (!result.is_none()) {
      throw py::type_error(
          "a kernel returns an nl.shared_hbm tensor, a tuple or list of them, "
          "or None; it returned " +
          std::string(py::repr(result)));
    }
    return outs;
  };
}

// Host tensors of the arrays a kernel takes (nki/_kernel.py's host_argument gave their
// NKI dtypes and whether they hold stored words).
std::vector<runtime::HostTensor> host_inputs(const py::list& arrays, const py::list& names,
                                             const py::list& dtypes, const py::list& bits) {
  std::vector<runtime::HostTensor> inputs;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const auto name = names[i].cast<std::string>();
    const auto dtype = dtypes[i].cast<DType>();
    if (py::isinstance<py::array>(arrays[i])) {
      inputs.push_back(host_tensor(name, arrays[i].cast<py::array>(), dtype, bits[i].cast<bool>()));
    } else {  // trnsim.shaped: (shape, seed), values made only if a functional run reads them
      const auto [shape, seed] = arrays[i].cast<std::pair<kernel::Shape, std::uint32_t>>();
      for (const std::int64_t d : shape)
        if (d <= 0)
          throw py::value_error("input '" + name + "': trnsim.shaped dims must be positive");
      inputs.push_back(runtime::random_tensor(name, dtype, shape, seed, -1.0f, 1.0f));
    }
  }
  return inputs;
}

// trnsim.set_options' run options.
runtime::LaunchOptions launch_options(const py::dict& options) {
  runtime::LaunchOptions launch;
  launch.functional = !options["timing_only"].cast<bool>();
  launch.check_hazards = options["check_hazards"].cast<bool>();
  launch.read_back_written_inputs = true;
  const std::string uninitialized = options["uninitialized"].cast<std::string>();
  launch.uninitialized = uninitialized == "nan"      ? sim::UninitializedPolicy::kNanFill
                         : uninitialized == "ignore" ? sim::UninitializedPolicy::kIgnore
                                                     : sim::UninitializedPolicy::kError;
  if (!options["seed"].is_none()) launch.seed = options["seed"].cast<std::uint32_t>();
  return launch;
}

// Traces `fn`, compiles, runs it on the chip and returns (outputs as NumPy arrays, the
// timing report as JSON text or "" when untimed, host times, the inputs the kernel wrote as
// NumPy arrays or None per input, the run kept for profiling, the device_print values).
py::tuple simulate(const py::function& fn, const py::list& arrays, const py::list& names,
                   const py::list& dtypes, const py::list& bits, const std::string& chip_name,
                   int lnc, const py::dict& options) {
  auto run = std::make_shared<Run>();
  run->chip = arch::load(chip_name);
  const std::vector<runtime::HostTensor> inputs = host_inputs(arrays, names, dtypes, bits);
  std::vector<kernel::TensorSpec> specs;
  for (const runtime::HostTensor& t : inputs) specs.push_back(t.spec());
  runtime::BuildOptions build;
  build.name = py::str(fn.attr("__name__")).cast<std::string>();
  run->title = build.name;
  build.lnc = lnc;
  const auto start = std::chrono::steady_clock::now();
  run->built = runtime::build(traced_kernel(fn), specs, run->chip, build);
  const double build_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const runtime::LaunchOptions launch = launch_options(options);
  {
    const py::gil_scoped_release no_python;  // the simulation runs no Python
    run->launch = runtime::launch(run->built, run->chip, inputs, launch);
  }
  const runtime::LaunchResult& result = run->launch;
  for (const sim::RunResult& r : result.runs)
    if (!r.hazards.empty()) throw sim::SimError(r.hazards.front().diagnostic);
  const Words output_words =
      options["bit_outputs"].cast<bool>() ? Words::kForTypesNumpyLacks : Words::kNever;
  py::list outputs;
  for (const runtime::HostTensor& t : result.outputs) outputs.append(numpy_array(t, output_words));
  py::list updated;
  for (std::size_t i = 0; i < result.updated_inputs.size(); ++i) {
    const std::optional<runtime::HostTensor>& t = result.updated_inputs[i];
    const Words words = bits[i].cast<bool>() ? Words::kAlways : Words::kNever;
    updated.append(t ? py::object(numpy_array(*t, words)) : py::none());
  }
  std::string report;
  if (result.chip_timing) {
    report = sim::chip_timing_report_json(*result.chip_timing);
  } else if (!result.timing.empty()) {
    report = sim::timing_report_json(result.timing.front());
  }
  // Host time: tracing (the Python kernel runs here) and compiling, and simulating.
  py::dict host;
  host["trace_ms"] = run->built.trace_ms;
  host["compile_ms"] = run->built.compile_ms;
  host["build_s"] = build_s;
  host["simulation_s"] = result.host_seconds;
  host["instructions"] = run->built.compiled.stats.instructions;
  std::size_t input_bytes = 0;  // 0 for trnsim.shaped inputs a timing-only run never made
  for (const runtime::HostTensor& t : inputs) input_bytes += t.generated() ? t.byte_size() : 0;
  host["input_bytes"] = input_bytes;
  py::list output_dtypes;
  for (const runtime::HostTensor& t : result.outputs) output_dtypes.append(t.dtype);
  host["output_dtypes"] = output_dtypes;
  py::list prints;  // (prefix, program, values) of each device_print
  for (const runtime::DevicePrint& p : result.prints)
    prints.append(py::make_tuple(p.prefix, p.program, numpy_array(p.values, Words::kNever)));
  return py::make_tuple(outputs, report, host, updated, run, prints);
}

// Ranks of a kernel at once (trnsim.simulate_ranks): `rank_arrays[r]` are rank r's inputs.
// On `system` (a preset or file; "" for the ranks of one chip). Returns (per rank its outputs,
// per rank its inputs the kernel wrote (or None each), the launch's collectives, the simulated
// time, the run kept for profiling).
py::tuple simulate_ranks(const py::function& fn, const py::list& rank_arrays, const py::list& names,
                         const py::list& dtypes, const py::list& bits, const std::string& chip_name,
                         int lnc, const py::dict& options, const std::string& system_name,
                         int ranks_per_chip) {
  std::optional<system::SystemConfig> system;
  if (!system_name.empty()) system = system::load(system_name);
  auto run = std::make_shared<Run>();
  run->chip = system ? system->chip_config : arch::load(chip_name);
  const arch::ChipConfig& chip = run->chip;
  std::vector<std::vector<runtime::HostTensor>> inputs;
  for (const py::handle arrays : rank_arrays)
    inputs.push_back(host_inputs(arrays.cast<py::list>(), names, dtypes, bits));
  if (inputs.empty()) throw py::value_error("simulate_ranks: no ranks");
  std::vector<kernel::TensorSpec> specs;
  for (const runtime::HostTensor& t : inputs.front()) specs.push_back(t.spec());
  runtime::BuildOptions build;
  build.name = py::str(fn.attr("__name__")).cast<std::string>();
  build.lnc = lnc;
  run->title = build.name + " x " + std::to_string(inputs.size()) + " ranks" +
               (system ? " on " + system->name : "");
  run->built = runtime::build(traced_kernel(fn), specs, chip, build);
  const runtime::BuiltKernel& built = run->built;
  const runtime::LaunchOptions launch = launch_options(options);
  runtime::RanksResult result;
  {
    const py::gil_scoped_release no_python;
    result = system ? runtime::launch_system(built, *system, inputs, ranks_per_chip, launch)
                    : runtime::launch_ranks(built, chip, inputs, launch);
  }
  for (const runtime::LaunchResult& rank : result.ranks)
    for (const sim::RunResult& r : rank.runs)
      if (!r.hazards.empty()) throw sim::SimError(r.hazards.front().diagnostic);
  py::list ranks, updated;
  for (const runtime::LaunchResult& rank : result.ranks) {
    py::list outputs, written;
    for (const runtime::HostTensor& t : rank.outputs) outputs.append(numpy_array(t, Words::kNever));
    for (std::size_t i = 0; i < rank.updated_inputs.size(); ++i) {
      const std::optional<runtime::HostTensor>& t = rank.updated_inputs[i];
      const Words words = bits[i].cast<bool>() ? Words::kAlways : Words::kNever;
      written.append(t ? py::object(numpy_array(*t, words)) : py::none());
    }
    ranks.append(outputs);
    updated.append(written);
  }
  py::list collectives;
  for (const runtime::CollectiveRun& c : result.collectives) {
    py::dict d;
    d["op"] = std::string(isa::collective_kind_name(c.kind));
    d["algorithm"] = c.algorithm;
    d["model"] = c.model;
    d["bytes"] = c.bytes;
    d["ranks"] = c.members;
    d["start_ns"] = c.start_ns;
    d["end_ns"] = c.end_ns;
    collectives.append(d);
  }
  py::list output_dtypes;
  for (const runtime::HostTensor& t : result.ranks.front().outputs) output_dtypes.append(t.dtype);
  run->launch = std::move(result.ranks.front());
  for (std::size_t k = 1; k < result.ranks.size(); ++k)
    run->other_ranks.push_back(std::move(result.ranks[k]));
  return py::make_tuple(ranks, updated, collectives, result.simulated_ns, run, output_dtypes);
}

}  // namespace
}  // namespace trnsim::python

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  using namespace trnsim;
  m.doc() = "trnsim's C++ kernel API, compiler and simulator for the nki package";
  py::register_exception<util::Error>(m, "Error", PyExc_RuntimeError);
  python::bind_types(m);
  // NumPy dtype -> NKI dtype for the arrays that pass as they are (the nki package's lookup).
  m.def("numpy_dtypes", [] {
    py::dict map;
    for (const numerics::DTypeInfo& info : numerics::all_dtypes())
      if (const std::optional<py::dtype> native = python::numpy_dtype(info.dtype))
        map[*native] = info.dtype;
    return map;
  });
  // The values a kernel sees of float32 `values` given as trnsim.typed(values, dtype).
  m.def(
      "rounded",
      [](const py::array_t<float, py::array::c_style | py::array::forcecast>& values,
         numerics::DType dtype) {
        if (numerics::info(dtype).elements_per_word != 1)
          throw py::value_error("trnsim: rounding to the x4-packed types takes their words");
        kernel::Shape shape(values.shape(), values.shape() + values.ndim());
        const auto t = runtime::HostTensor::from_floats("values", dtype, shape,
                                                        std::span(values.data(), values.size()));
        return python::numpy_array(t, python::Words::kNever);
      },
      py::arg("values"), py::arg("dtype"));
  // nl.shared_constant's data: the array as an input would be given (nki/_kernel.py's
  // host_argument), held by the trace and written into HBM before the run.
  m.def(
      "shared_constant",
      [](const py::array& array, numerics::DType dtype, bool bits, const std::string& name) {
        const runtime::HostTensor t = python::host_tensor("shared_constant", array, dtype, bits);
        return python::at_kernel_line(
            [&] { return nl::shared_constant(t.shape, dtype, t.bytes(), name); });
      },
      py::arg("array"), py::arg("dtype"), py::arg("bits"), py::arg("name") = "");
  python::bind_language(m);
  py::module_ isa = m.def_submodule("isa", "nki.isa's instructions");
  python::bind_isa(isa);
  python::bind_loops(m, isa);
  python::bind_instructions(m);
  m.def(
      "set_package_dirs",
      [](std::vector<std::string> dirs) { python::package_dirs() = std::move(dirs); },
      py::arg("dirs"));
  python::bind_run(m);
  py::module_ collectives = m.def_submodule("collectives", "nki.collectives' calls");
  python::bind_collectives(collectives);
  m.def("simulate_ranks", &python::simulate_ranks, py::arg("fn"), py::arg("rank_arrays"),
        py::arg("names"), py::arg("dtypes"), py::arg("bits"), py::arg("chip"), py::arg("lnc"),
        py::arg("options"), py::arg("system"), py::arg("ranks_per_chip"));
  m.def("simulate", &python::simulate, py::arg("fn"), py::arg("arrays"), py::arg("names"),
        py::arg("dtypes"), py::arg("bits"), py::arg("chip"), py::arg("lnc"), py::arg("options"));
}
