// nki.isa's random-number operations (rng, set_rng_seed, dropout), its running scan
// (tensor_scalar_cumulative) and its GpSimd index operations (sequence_bounds,
// nonzero_with_count, nc_n_gather, topk), with NKI 0.6's keyword names and defaults, each
// calling the C++ kernel API's function of the same name.
#include <pybind11/stl.h>

#include <string>

#include "bridge.h"

namespace trnsim::python {

namespace {

using kernel::Tensor;

// NKI's reduce_cmd members by name (reduce_cmd.reset_reduce -> kResetReduce).
isa::ReduceCmd reduce_cmd_of(const py::object& o) {
  const std::string name = member(o);
  for (int i = 0; i < isa::kNumReduceCmds; ++i) {
    const auto cmd = static_cast<isa::ReduceCmd>(i);
    if (isa::reduce_cmd_name(cmd) == name) return cmd;
  }
  throw py::value_error("reduce_cmd: expected a nisa.reduce_cmd member, got " +
                        std::string(py::repr(o)));
}

}  // namespace

void bind_isa_gpsimd(py::module_& m) {
  const auto name = py::arg("name") = py::none();
  m.def(
      "tensor_scalar_cumulative",
      [](const Tensor& dst, const Tensor& src, const py::object& op0, const py::object& op1,
         const py::object& imm0, const py::object& imm1, const py::object& reduce_cmd,
         const py::object& n) {
        at_kernel_line([&] {
          nisa::TensorScalarCumulativeOptions o;
          if (!imm1.is_none()) o.imm1 = scalar_of(imm1, "imm1");
          o.reduce_cmd =
              reduce_cmd.is_none() ? isa::ReduceCmd::kResetReduce : reduce_cmd_of(reduce_cmd);
          o.common = common_of(py::none(), n);
          nisa::tensor_scalar_cumulative(dst, src, enum_of<isa::AluOp>(op0, "op0"),
                                         enum_of<isa::AluOp>(op1, "op1"), scalar_of(imm0, "imm0"),
                                         o);
        });
      },
      py::arg("dst"), py::arg("src"), py::arg("op0"), py::arg("op1"), py::arg("imm0"),
      py::arg("imm1") = py::none(), py::arg("reduce_cmd") = py::none(), name);
  m.def(
      "rng",
      [](const Tensor& dst, const py::object& e, const py::object& n) {
        // engine=None (nisa.engine.unknown) is nisa::rng's default, the Vector engine.
        at_kernel_line([&] { nisa::rng(dst, common_of(e, n)); });
      },
      py::arg("dst"), py::arg("engine") = isa::Engine::kVector, name);
  m.def(
      "set_rng_seed",
      [](const Tensor& src_seeds, const py::object& n) {
        at_kernel_line([&] { nisa::set_rng_seed(src_seeds, common_of(py::none(), n)); });
      },
      py::arg("src_seeds"), name);
  m.def(
      "dropout",
      [](const Tensor& dst, const Tensor& data, const py::object& prob, const py::object& n) {
        at_kernel_line(
            [&] { nisa::dropout(dst, data, scalar_of(prob, "prob"), common_of(py::none(), n)); });
      },
      py::arg("dst"), py::arg("data"), py::arg("prob"), name);
  m.def(
      "sequence_bounds",
      [](const Tensor& dst, const Tensor& segment_ids, const py::object& n) {
        at_kernel_line([&] { nisa::sequence_bounds(dst, segment_ids, common_of(py::none(), n)); });
      },
      py::arg("dst"), py::arg("segment_ids"), name);
  m.def(
      "nonzero_with_count",
      [](const Tensor& dst, const Tensor& src, std::int32_t index_offset, std::int32_t padding_val,
         const py::object& n) {
        at_kernel_line([&] {
          nisa::nonzero_with_count(dst, src, index_offset, padding_val, common_of(py::none(), n));
        });
      },
      py::arg("dst"), py::arg("src"), py::arg("index_offset") = 0, py::arg("padding_val") = -1,
      name);
  m.def(
      "nc_n_gather",
      [](const Tensor& dst, const Tensor& data, const Tensor& indices, const py::object& n) {
        at_kernel_line([&] { nisa::nc_n_gather(dst, data, indices, common_of(py::none(), n)); });
      },
      py::arg("dst"), py::arg("data"), py::arg("indices"), name);
  m.def(
      "topk",
      [](const Tensor& val_dst, const Tensor& idx_dst, const Tensor& src, std::uint32_t n_elements,
         const py::object& n) {
        at_kernel_line(
            [&] { nisa::topk(val_dst, idx_dst, src, n_elements, common_of(py::none(), n)); });
      },
      py::arg("val_dst"), py::arg("idx_dst"), py::arg("src"), py::arg("n"), name);
}

}  // namespace trnsim::python
