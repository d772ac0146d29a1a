// nki.language's declarations, data movement and the convenience operations the C++ nl
// namespace has (NKI 0.6's names and defaults); the rest of nki.language is Python over
// nki.isa (python/nki/language.py).
#include <pybind11/stl.h>

#include <memory>

#include "bridge.h"

namespace trnsim::python {

namespace {

using kernel::Tensor;

// nl.ndarray's address=(partition offset, byte offset): tiles start at partition 0 here.
Tensor ndarray(const std::vector<std::int64_t>& shape, DType dtype, kernel::Buffer buffer,
               const std::string& name, const py::object& address) {
  if (address.is_none())
    return at_kernel_line([&] { return nl::ndarray(shape, dtype, buffer, name); });
  const auto where = address.cast<std::pair<std::int64_t, std::int64_t>>();
  return at_kernel_line([&] {
    if (where.first != 0 || where.second < 0)
      throw kernel::KernelError(kernel_line(),
                                "nl.ndarray(address=(" + std::to_string(where.first) + ", " +
                                    std::to_string(where.second) +
                                    ")): trnsim places tiles at partition 0 and a byte offset "
                                    ">= 0 (slice a taller tile for a partition offset)");
    return nl::ndarray_at(shape, dtype, buffer, static_cast<std::uint64_t>(where.second), name);
  });
}

// nl.tile_size.FIELD of the chip being traced for, or outside a kernel of `chip_name` (the
// chip the next kernels run on).
std::int64_t tile_size(const std::string& field, const std::string& chip_name) {
  const nl::TileSizes t =
      kernel::tracing() ? nl::tile_sizes(nl::chip()) : nl::tile_sizes(arch::load(chip_name));
  if (field == "pmax") return t.pmax;
  if (field == "gemm_stationary_fmax") return t.gemm_stationary_fmax;
  if (field == "gemm_moving_fmax") return t.gemm_moving_fmax;
  if (field == "psum_fmax" || field == "psum_bank_fmax") return t.psum_bank_fmax;
  if (field == "psum_bank_fmax_bytes") return t.psum_bank_fmax * 4;
  if (field == "psum_num_banks") return t.psum_num_banks;
  if (field == "bn_stats_fmax") return t.bn_stats_fmax;
  if (field == "sbuf_fmax_bytes" || field == "total_available_sbuf_size")
    return t.sbuf_bytes_per_partition;
  if (field == "sbuf_size_bytes") return t.sbuf_bytes_per_partition * t.pmax;
  throw py::attribute_error("nl.tile_size has no field '" + field + "'");
}

}  // namespace

// nl.no_reorder(): a context manager holding a kernel::NoReorder while its block runs.
struct NoReorderBlock {
  std::unique_ptr<kernel::NoReorder> scope;
};

void bind_language(py::module_& m) {
  py::class_<NoReorderBlock>(m, "NoReorder")
      .def(py::init<>())
      .def("__enter__",
           [](NoReorderBlock& b) -> NoReorderBlock& {
             if (b.scope) throw py::value_error("nl.no_reorder(): this block is already open");
             at_kernel_line([&] { b.scope = std::make_unique<kernel::NoReorder>(); });
             return b;
           })
      .def("__exit__", [](NoReorderBlock& b, const py::args&) {
        b.scope.reset();
        return false;
      });
  const auto name = py::arg("name") = "";
  m.def("ndarray", &ndarray, py::arg("shape"), py::arg("dtype"),
        py::arg("buffer") = kernel::Buffer::kSbuf, name, py::arg("address") = py::none());
  m.def(
      "device_print",
      [](const std::string& prefix, const kernel::Tensor& tensor) {
        at_kernel_line([&] { nl::device_print(prefix, tensor); });
      },
      py::arg("print_prefix"), py::arg("tensor"));
  m.def(
      "full",
      [](const std::vector<std::int64_t>& shape, float fill_value, DType dtype,
         kernel::Buffer buffer, const std::string& n) {
        return at_kernel_line([&] { return nl::full(shape, fill_value, dtype, buffer, n); });
      },
      py::arg("shape"), py::arg("fill_value"), py::arg("dtype"),
      py::arg("buffer") = kernel::Buffer::kSbuf, name);
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
      "copy",
      [](const Tensor& x, std::optional<DType> dtype) {
        return at_kernel_line([&] { return nl::copy(x, dtype); });
      },
      py::arg("x"), py::arg("dtype") = py::none());
  m.def(
      "matmul",
      [](const Tensor& x, const Tensor& y, bool transpose_x) {
        return at_kernel_line([&] { return nl::matmul(x, y, transpose_x); });
      },
      py::arg("x"), py::arg("y"), py::arg("transpose_x") = false);
  m.def(
      "transpose",
      [](const Tensor& x, std::optional<DType> dtype) {
        return at_kernel_line([&] { return nl::transpose(x, dtype); });
      },
      py::arg("x"), py::arg("dtype") = py::none());
  m.def(
      "softmax",
      [](const Tensor& x, int axis, std::optional<DType> dtype) {
        return at_kernel_line([&] {
          if (axis != -1 && axis != x.ndim() - 1)
            throw kernel::KernelError(kernel_line(),
                                      "nl.softmax(axis=" + std::to_string(axis) +
                                          "): trnsim's softmax runs over the last free axis "
                                          "(axis=-1); permute the tile's view for another");
          return nl::softmax(x, dtype);
        });
      },
      py::arg("x"), py::arg("axis") = -1, py::arg("dtype") = py::none());
  // The elementwise operations of nki.language the C++ nl namespace lowers (nl.floor, ...).
  using Unary = kernel::Tensor (*)(const Tensor&, std::optional<DType>, kernel::Loc);
  for (const auto& entry : {std::pair<const char*, Unary>{"floor", &nl::floor},
                            {"ceil", &nl::ceil},
                            {"trunc", &nl::trunc},
                            {"tan", &nl::tan},
                            {"sin", &nl::sin},
                            {"cos", &nl::cos},
                            {"invert", &nl::invert}}) {
    const Unary fn = entry.second;  // a copy to capture (a structured binding cannot be)
    m.def(
        entry.first,
        [fn](const Tensor& x, std::optional<DType> dtype) {
          return at_kernel_line([&] { return fn(x, dtype, kernel::Loc::current()); });
        },
        py::arg("x"), py::arg("dtype") = py::none());
  }
  m.def(
      "program_id", [](int axis) { return at_kernel_line([&] { return nl::program_id(axis); }); },
      py::arg("axis") = 0);
  m.def(
      "num_programs",
      [](int axes) { return at_kernel_line([&] { return nl::num_programs(axes); }); },
      py::arg("axes") = 0);
  m.def("tracing", &kernel::tracing);
  // nl.tile_size of the chip being traced for (a trace must be running).
  m.def("tile_size", &tile_size, py::arg("field"), py::arg("chip"));
  // The NeuronCore generation of the chip being traced for (2, 3, 4: nisa.nc_version).
  m.def("nc_generation", [] {
    return at_kernel_line([] {
      const std::string g = arch::generation_name(nl::chip().generation);  // "gen4"
      return std::stoi(g.substr(3));
    });
  });
}

}  // namespace trnsim::python
