// trnsim._core's types: NKI's dtypes, buffers, operations and engines as enums, and the
// tensor (NKI's NkiTensor) with its views, each the C++ kernel::Tensor's.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <string>

#include "bridge.h"
#include "numerics/dtype.h"

namespace trnsim::python {

namespace {

using kernel::Tensor;

std::string tensor_repr(const Tensor& t) {
  std::string dims;
  for (std::size_t i = 0; i < t.shape().size(); ++i)
    dims += (i > 0 ? ", " : "") + std::to_string(t.shape()[i]);
  return "Tensor([" + dims + "], " + std::string(numerics::name(t.dtype())) + ", " +
         std::string(kernel::buffer_name(t.buffer())) + ")";
}

// t's elements as a whole number of `view` elements (what .ap(dtype=) counts in).
std::int64_t in_view_elements(std::int64_t elements, DType from, DType view, const char* what) {
  const auto bytes = elements * static_cast<std::int64_t>(numerics::storage_bytes(from));
  const auto unit = static_cast<std::int64_t>(numerics::storage_bytes(view));
  if (bytes % unit != 0)
    throw kernel::KernelError(kernel_line(), std::string(".ap(): ") + what +
                                                 " is not a whole number of the view's elements");
  return bytes / unit;
}

// NKI's .ap(indirect_dim=d): a scalar or vector offset moves the start by the stride of t's
// dim d (for a whole tensor, the product of its later dims), counted in `view`'s elements.
std::int64_t indirect_step(const Tensor& t, int indirect_dim, DType view) {
  const std::int64_t stride = t.strides()[static_cast<std::size_t>(indirect_dim)];
  if (stride <= 0)
    throw kernel::KernelError(kernel_line(), ".ap(): indirect_dim " + std::to_string(indirect_dim) +
                                                 " has stride " + std::to_string(stride) +
                                                 "; a dynamic offset moves along a dim with a "
                                                 "positive stride");
  return in_view_elements(stride, t.dtype(), view, "one step along indirect_dim");
}

// NKI's .ap(offset=): elements after the view's own start (None: the view's start).
std::int64_t ap_start(const Tensor& t, const py::object& offset, std::optional<DType> dtype) {
  const std::int64_t base = in_view_elements(t.storage_offset(), t.dtype(),
                                             dtype.value_or(t.dtype()), "the view's start");
  return base + (offset.is_none() ? 0 : offset.cast<std::int64_t>());
}

// A dynamic scalar offset as NKI takes it: a register, or a (1, 1) SBUF tensor whose integer
// the device reads into a fresh register (register_load) when the kernel gets there.
kernel::Register scalar_offset_register(const py::object& offset, const char* what) {
  if (py::isinstance<kernel::Register>(offset)) return offset.cast<kernel::Register>();
  if (!py::isinstance<Tensor>(offset))
    throw py::type_error(std::string(what) +
                         " is a register (nisa.register_alloc) or a (1, 1) SBUF tensor, not " +
                         std::string(py::repr(offset)));
  const kernel::Register r = nisa::register_alloc();
  nisa::register_load(r, offset.cast<Tensor>());
  return r;
}

// NKI's select(dim, index): index an int statically, or a (1, 1) SBUF tensor at run time
// (the view at 0, moved by the value times dim's stride); the dim goes away either way.
Tensor select(const Tensor& t, int dim, const py::object& index_value) {
  const int d = dim < 0 ? dim + t.ndim() : dim;
  if (d < 0 || d >= t.ndim())
    throw py::index_error("select: dim " + std::to_string(dim) + " of a " +
                          std::to_string(t.ndim()) + "-dim tensor");
  const bool dynamic = !py::isinstance<py::int_>(index_value);
  py::list key;
  for (int k = 0; k < d; ++k) key.append(py::slice(py::none(), py::none(), py::none()));
  key.append(dynamic ? py::int_(0) : index_value);
  const Tensor picked = index(t, py::tuple(key));
  if (!dynamic) return picked;
  if (kernel::is_on_chip(t.buffer()) && d == 0)
    throw kernel::KernelError(kernel_line(),
                              "select: a dynamic index of an on-chip tensor "
                              "cannot pick a partition (dim 0)");
  return at_kernel_line([&] {
    const kernel::Register r = scalar_offset_register(index_value, "select(index=)");
    return picked.offset_by(r, t.strides()[static_cast<std::size_t>(d)]);
  });
}

// .ap(pattern, vector_offset=index): the pattern's first pair is [step, rows], one row per
// index element; row r starts index[r] steps along indirect_dim after the start.
Tensor vector_offset_view(const Tensor& t, std::vector<std::array<std::int64_t, 2>> pattern,
                          std::int64_t start, std::optional<DType> dtype, int indirect_dim,
                          const Tensor& index) {
  if (kernel::is_on_chip(t.buffer()))
    throw kernel::KernelError(
        kernel_line(),
        ".ap(vector_offset=) indexes rows of an HBM tensor; '" + t.name() + "' is on chip");
  if (pattern.size() < 2)
    throw kernel::KernelError(kernel_line(),
                              ".ap(vector_offset=): the pattern needs a row pair and "
                              "at least one free pair");
  if (pattern[0][1] != index.size())
    throw kernel::KernelError(
        kernel_line(), ".ap(vector_offset=): the pattern has " + std::to_string(pattern[0][1]) +
                           " rows and the index " + std::to_string(index.size()) +
                           " elements (one index per row)");
  pattern[0][1] = 1;  // the rows are the index's: check the bounds of one row here
  const Tensor row = t.pattern(pattern, start, dtype.value_or(t.dtype()));
  // An index past the indexed dim is out of range (NKI: "exceed the dimensions").
  return row.rows_at(index, indirect_step(t, indirect_dim, row.dtype()), t.dim(indirect_dim));
}

// NKI's `t[key] = value`: a tile copied into the view, or a number filling it (nl::assign).
void bind_tensor_assignment(py::class_<Tensor>& tensor) {
  tensor.def(
      "__setitem__",
      [](const Tensor& t, const py::object& key, const py::object& value) {
        const Tensor view = index(t, key);
        // A tile or a number (Python's or NumPy's); anything else is a TypeError.
        if (!py::isinstance<Tensor>(value) &&
            !py::isinstance(value, py::module_::import("numbers").attr("Real")))
          throw py::type_error("t[key] = value takes a tile of the view's shape or a number, not " +
                               std::string(py::repr(value)));
        const kernel::Scalar v = scalar_of(value, "t[key] = value");
        at_kernel_line([&] {
          if (const auto* tile = std::get_if<Tensor>(&v))
            nl::assign(view, *tile);
          else
            nl::assign(view, std::get<float>(v));
        });
      },
      py::arg("key"), py::arg("value"));
}

// The NkiTensor methods that make views (views cost nothing at run time).
void bind_tensor_views(py::class_<Tensor>& tensor) {
  bind_tensor_assignment(tensor);
  tensor
      .def("__getitem__", &index, py::arg("key"))

      .def(
          "permute",
          [](const Tensor& t, const std::vector<int>& dims) {
            return at_kernel_line([&] { return t.permute(dims); });
          },
          py::arg("dims"))
      .def(
          "broadcast",
          [](const Tensor& t, int dim, std::int64_t size) {
            return at_kernel_line([&] { return t.broadcast(dim, size); });
          },
          py::arg("dim"), py::arg("size"))
      .def(
          "expand_dim",
          [](const Tensor& t, int dim) {
            return at_kernel_line([&] { return t.expand_dim(dim); });
          },
          py::arg("dim"))
      .def(
          "squeeze_dim",
          [](const Tensor& t, int dim) {
            return at_kernel_line([&] { return t.squeeze_dim(dim); });
          },
          py::arg("dim"))
      .def(
          "reshape",
          [](const Tensor& t, const std::vector<std::int64_t>& shape) {
            return at_kernel_line([&] { return t.reshape(shape); });
          },
          py::arg("shape"))
      .def(
          "slice",
          [](const Tensor& t, int dim, std::int64_t start, std::int64_t end, std::int64_t step) {
            return at_kernel_line([&] { return t.slice(dim, start, end, step); });
          },
          py::arg("dim"), py::arg("start"), py::arg("end"), py::arg("step") = 1)
      .def(
          "view",
          [](const Tensor& t, DType dtype) {
            return at_kernel_line([&] { return t.view(dtype); });
          },
          py::arg("dtype"))
      .def(
          "reshape_dim",
          [](const Tensor& t, int dim, const std::vector<std::int64_t>& shape) {
            return at_kernel_line([&] { return t.reshape_dim(dim, shape); });
          },
          py::arg("dim"), py::arg("shape"))
      .def(
          "flatten_dims",
          [](const Tensor& t, int start_dim, int end_dim) {
            return at_kernel_line([&] { return t.flatten_dims(start_dim, end_dim); });
          },
          py::arg("start_dim"), py::arg("end_dim"))
      .def("get_pattern",
           [](const Tensor& t) {
             const auto pairs = at_kernel_line([&] { return t.pattern_pairs(); });
             py::list out;
             for (const auto& [stride, count] : pairs) {
               py::list pair;
               pair.append(stride);
               pair.append(count);
               out.append(pair);
             }
             return out;
           })
      .def("select", &select, py::arg("dim"), py::arg("index"))
      .def(
          "vector_select",
          // NKI: dim 0 of an HBM tensor, one row per index element, each index[r] rows in.
          [](const Tensor& t, int dim, const Tensor& vector_offset) {
            if (dim != 0) throw py::value_error("vector_select: dim must be 0 (NKI 0.6)");
            return at_kernel_line(
                [&] { return t.rows_at(vector_offset, t.strides()[0], t.dim(0)); });
          },
          py::arg("dim"), py::arg("vector_offset"))
      .def("is_indirect",
           // NKI: a view with a scalar or vector offset (a register or an index tensor).
           [](const Tensor& t) { return t.is_indirect() || t.is_dynamic(); })
      .def(
          "reinterpret_cast",
          [](const Tensor& t, DType dtype) {
            return at_kernel_line([&] { return t.view(dtype); });
          },
          py::arg("dtype"))
      .def(
          "ap",
          [](const Tensor& t, const std::vector<std::array<std::int64_t, 2>>& pattern,
             const py::object& offset, const py::object& scalar_offset,
             const py::object& vector_offset, int indirect_dim, std::optional<DType> dtype) {
            const bool moved = !scalar_offset.is_none();
            const bool indexed = !vector_offset.is_none();
            if (moved && indexed)
              throw py::value_error(
                  ".ap(): vector_offset and scalar_offset are mutually exclusive");
            if (indexed && !py::isinstance<Tensor>(vector_offset))
              throw py::type_error(".ap(vector_offset=) is an SBUF tensor of row indices");
            if (indirect_dim < 0 || indirect_dim >= t.ndim())
              throw py::value_error(".ap(indirect_dim=" + std::to_string(indirect_dim) +
                                    "): the tensor has " + std::to_string(t.ndim()) + " dims");
            if (moved && kernel::is_on_chip(t.buffer()) && indirect_dim == 0)
              throw py::value_error(
                  ".ap(scalar_offset=, indirect_dim=0) of an on-chip tensor: a register moves "
                  "inside the partitions, not across them (use indirect_dim >= 1)");
            return at_kernel_line([&] {
              const std::int64_t start = ap_start(t, offset, dtype);
              if (indexed)
                return vector_offset_view(t, pattern, start, dtype, indirect_dim,
                                          vector_offset.cast<Tensor>());
              const Tensor view = t.pattern(pattern, start, dtype.value_or(t.dtype()));
              if (!moved) return view;
              return view.offset_by(scalar_offset_register(scalar_offset, ".ap(scalar_offset=)"),
                                    indirect_step(t, indirect_dim, view.dtype()));
            });
          },
          py::arg("pattern"), py::arg("offset") = py::none(), py::arg("scalar_offset") = py::none(),
          py::arg("vector_offset") = py::none(), py::arg("indirect_dim") = 0,
          py::arg("dtype") = py::none());
}

}  // namespace

void bind_types(py::module_& m) {
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
  py::enum_<isa::MatmulPerfMode>(m, "MatmulPerfMode")
      .value("none", isa::MatmulPerfMode::kNone)
      .value("double_row", isa::MatmulPerfMode::kDoubleRow);

  py::class_<Tensor> tensor(m, "Tensor");
  tensor
      .def_property_readonly("shape",
                             [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("strides",
                             [](const Tensor& t) { return py::tuple(py::cast(t.strides())); })
      // NKI: elements from the storage's start (on chip, partitions before it count whole).
      .def_property_readonly(
          "offset",
          [](const Tensor& t) { return at_kernel_line([&] { return t.storage_offset(); }); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("buffer", &Tensor::buffer)
      .def_property_readonly("ndim", &Tensor::ndim)
      .def_property_readonly("size", &Tensor::size)
      .def_property_readonly(
          "name", [](const Tensor& t) { return at_kernel_line([&] { return t.name(); }); })
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("__repr__", &tensor_repr);
  bind_tensor_views(tensor);
}

}  // namespace trnsim::python
