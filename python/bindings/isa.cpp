// nki.isa: one function per instruction, dst first, with NKI 0.6's keyword names and
// defaults, each calling the C++ kernel API's function of the same name. Arguments NKI has
// and trnsim does not model yet raise NotImplementedError naming them (docs/python.md).
#include <pybind11/stl.h>

#include <algorithm>
#include <string>

#include "bridge.h"

namespace trnsim::python {

namespace {

using kernel::Tensor;

// reduce_res with NKI's reduce_cmd: trnsim reduces within the one instruction (idle or
// reset_reduce); carrying the engine's accumulator from one instruction to the next is not
// modelled.
void require_fresh_reduce(const py::object& reduce_cmd, const char* op) {
  const std::string cmd = member(reduce_cmd);
  if (cmd != "idle" && cmd != "reset_reduce")
    not_implemented(std::string(op) + "(reduce_cmd=reduce_cmd." + cmd +
                    ") (an accumulator carried across instructions)");
}

// A reduce_op: an nl operation (nl.add, nl.maximum, ...) or one of nl's reductions NKI's
// documentation names there (nl.sum, nl.prod, nl.max, nl.min).
isa::AluOp reduce_op_of(const py::object& o) {
  if (py::hasattr(o, "__module__") && py::hasattr(o, "__name__") &&
      py::str(o.attr("__module__")).cast<std::string>() == "nki.language") {
    const std::string fn = o.attr("__name__").cast<std::string>();
    if (fn == "sum") return isa::AluOp::kAdd;
    if (fn == "prod") return isa::AluOp::kMultiply;
    if (fn == "max") return isa::AluOp::kMaximum;
    if (fn == "min") return isa::AluOp::kMinimum;
  }
  return enum_of<isa::AluOp>(o, "reduce_op");
}

nisa::Common named(const py::object& name) {
  return common_of(py::none(), name);
}

std::vector<isa::Dim> pattern_of(const std::vector<std::array<std::int64_t, 2>>& pattern) {
  std::vector<isa::Dim> dims;
  for (const auto& [step, count] : pattern) {
    if (count < 1 || count > UINT32_MAX)
      throw py::value_error("a pattern count must be in [1, 2^32), not " + std::to_string(count));
    dims.push_back({step, static_cast<std::uint32_t>(count)});
  }
  return dims;
}

// tensor_reduce's axis (an int or a tuple of free axes) as a view whose reduced axes are its
// innermost ones, and how many they are.
std::pair<Tensor, std::uint32_t> reduced_innermost(const Tensor& data, const py::object& axis) {
  std::vector<int> axes;
  if (py::isinstance<py::int_>(axis)) {
    axes.push_back(axis.cast<int>());
  } else {
    axes = axis.cast<std::vector<int>>();
  }
  const int n = data.ndim();
  std::vector<bool> reduced(static_cast<std::size_t>(n), false);
  for (int a : axes) {
    const int d = a < 0 ? a + n : a;
    if (d <= 0 || d >= n)
      throw kernel::KernelError(
          kernel_line(), "tensor_reduce axis " + std::to_string(a) + " of a " + std::to_string(n) +
                             "-dim tile: the axes are free axes 1.." + std::to_string(n - 1) +
                             " (axis 0 is the partition axis: tensor_partition_reduce)");
    if (reduced[static_cast<std::size_t>(d)])
      throw kernel::KernelError(kernel_line(),
                                "tensor_reduce axis " + std::to_string(a) + " twice");
    reduced[static_cast<std::size_t>(d)] = true;
  }
  std::vector<int> order{0};
  for (int d = 1; d < n; ++d)
    if (!reduced[static_cast<std::size_t>(d)]) order.push_back(d);
  for (int d = 1; d < n; ++d)
    if (reduced[static_cast<std::size_t>(d)]) order.push_back(d);
  return {data.permute(order), static_cast<std::uint32_t>(axes.size())};
}

// accumulate=None: NKI's per-location rule (the first write overwrites, later ones add).
std::optional<bool> accumulate_of(const py::object& accumulate) {
  return accumulate.is_none() ? std::nullopt : std::optional<bool>(accumulate.cast<bool>());
}

// A matmul's tile_position and tile_size: both () or both (row, column) pairs.
void set_tiles(nisa::MatmulOptions& o, const std::vector<std::uint32_t>& tile_position,
               const std::vector<std::uint32_t>& tile_size, const char* what) {
  if (tile_position.size() != tile_size.size() ||
      (!tile_position.empty() && tile_position.size() != 2))
    throw kernel::KernelError(kernel_line(), std::string(what) +
                                                 ": tile_position and tile_size are both () or "
                                                 "both (row, column) pairs");
  if (tile_position.empty()) return;
  o.tile_row = tile_position[0];
  o.tile_col = tile_position[1];
  o.tile_rows = tile_size[0];
  o.tile_cols = tile_size[1];
}

void bind_matmul(py::module_& m) {
  m.def(
      "nc_matmul",
      [](const Tensor& dst, const Tensor& stationary, const Tensor& moving, bool, bool,
         bool is_transpose, const py::object& accumulate,
         const std::vector<std::uint32_t>& tile_position,
         const std::vector<std::uint32_t>& tile_size, isa::MatmulPerfMode perf_mode,
         const py::object& name) {
        at_kernel_line([&] {
          nisa::MatmulOptions o;
          o.is_transpose = is_transpose;
          o.accumulate = accumulate_of(accumulate);
          o.perf_mode = perf_mode;
          set_tiles(o, tile_position, tile_size, "nc_matmul");
          if (!name.is_none()) o.name = name.cast<std::string>();
          nisa::nc_matmul(dst, stationary, moving, o);
        });
      },
      py::arg("dst"), py::arg("stationary"), py::arg("moving"),
      py::arg("is_stationary_onezero") = false, py::arg("is_moving_onezero") = false,
      py::arg("is_transpose") = false, py::arg("accumulate") = py::none(),
      py::arg("tile_position") = std::vector<std::uint32_t>{},
      py::arg("tile_size") = std::vector<std::uint32_t>{},
      py::arg("perf_mode") = isa::MatmulPerfMode::kNone, py::arg("name") = py::none());
  m.def(
      "nc_matmul_mx",
      [](const Tensor& dst, const Tensor& stationary, const Tensor& moving,
         const Tensor& stationary_scale, const Tensor& moving_scale,
         const std::vector<std::uint32_t>& tile_position,
         const std::vector<std::uint32_t>& tile_size, const py::object& accumulate,
         const py::object& name) {
        at_kernel_line([&] {
          nisa::MatmulOptions o;
          o.accumulate = accumulate_of(accumulate);
          set_tiles(o, tile_position, tile_size, "nc_matmul_mx");
          // The MX matmul tiles the PE array's rows only: a column tile must hold the
          // whole stationary from column 0 (the same result; no concurrency is modelled).
          const std::int64_t columns = stationary.size() / stationary.shape()[0];
          if (!tile_position.empty() && (o.tile_col != 0 || o.tile_cols < columns))
            throw kernel::KernelError(
                kernel_line(), "nc_matmul_mx: tile_position column " + std::to_string(o.tile_col) +
                                   ", tile_size column " + std::to_string(o.tile_cols) +
                                   " tiles columns; trnsim's MX matmul tiles rows only (column "
                                   "0, a tile as wide as the stationary's " +
                                   std::to_string(columns) + " columns)");
          if (!name.is_none()) o.name = name.cast<std::string>();
          nisa::nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, o);
        });
      },
      py::arg("dst"), py::arg("stationary"), py::arg("moving"), py::arg("stationary_scale"),
      py::arg("moving_scale"), py::arg("tile_position") = std::vector<std::uint32_t>{},
      py::arg("tile_size") = std::vector<std::uint32_t>{}, py::arg("accumulate") = py::none(),
      py::arg("name") = py::none());
  m.def(
      "nc_transpose",
      [](const Tensor& dst, const Tensor& data, const py::object& e, const py::object& n) {
        at_kernel_line([&] { nisa::nc_transpose(dst, data, common_of(e, n)); });
      },
      py::arg("dst"), py::arg("data"), py::arg("engine") = py::none(),
      py::arg("name") = py::none());
}

void bind_activation(py::module_& m) {
  const auto activation = [](const Tensor& dst, const py::object& op, const Tensor& data,
                             const py::object& bias, const py::object& scale,
                             const py::object& reduce_op, const py::object& reduce_res,
                             const char* what, const py::object& name) {
    at_kernel_line([&] {
      nisa::ActivationOptions o;
      if (!bias.is_none()) o.bias = scalar_of(bias, "bias");
      o.scale = scalar_of(scale, "scale");
      if (!reduce_res.is_none()) {
        if (!reduce_op.is_none() && reduce_op_of(reduce_op) != isa::AluOp::kAdd)
          not_implemented(std::string(what) + "(reduce_op=" + std::string(py::repr(reduce_op)) +
                          "): the ScalarE reduction here is a sum (reduce_op=nl.add)");
        o.reduce_res = reduce_res.cast<Tensor>();
      }
      o.common = named(name);
      nisa::activation(dst, enum_of<isa::ActivationFunc>(op, "op"), data, o);
    });
  };
  m.def(
      "activation",
      [activation](const Tensor& dst, const py::object& op, const Tensor& data,
                   const py::object& bias, const py::object& scale, const py::object& reduce_op,
                   const py::object& reduce_res, const py::object& reduce_cmd,
                   const py::object& name) {
        if (!reduce_res.is_none()) require_fresh_reduce(reduce_cmd, "activation");
        activation(dst, op, data, bias, scale, reduce_op, reduce_res, "activation", name);
      },
      py::arg("dst"), py::arg("op"), py::arg("data"), py::arg("bias") = py::none(),
      py::arg("scale") = 1.0f, py::arg("reduce_op") = py::none(),
      py::arg("reduce_res") = py::none(), py::arg("reduce_cmd") = py::none(),
      py::arg("name") = py::none());
  m.def(
      "activation_reduce",
      [activation](const Tensor& dst, const py::object& op, const Tensor& data,
                   const py::object& reduce_op, const Tensor& reduce_res, const py::object& bias,
                   const py::object& scale, const py::object& name) {
        activation(dst, op, data, bias, scale, reduce_op, py::cast(reduce_res), "activation_reduce",
                   name);
      },
      py::arg("dst"), py::arg("op"), py::arg("data"), py::arg("reduce_op"), py::arg("reduce_res"),
      py::arg("bias") = py::none(), py::arg("scale") = 1.0f, py::arg("name") = py::none());
  m.def(
      "exponential",
      [](const Tensor& dst, const Tensor& src, const py::object& max_value,
         const py::object& reduce_res, const py::object& reduce_cmd, const py::object& reduce_init,
         const py::object& name) {
        at_kernel_line([&] {
          nisa::ExponentialOptions o;
          o.max_value = scalar_of(max_value, "max_value");
          if (!reduce_res.is_none()) {
            require_fresh_reduce(reduce_cmd, "exponential");
            if (!py::isinstance<py::float_>(reduce_init) && !py::isinstance<py::int_>(reduce_init))
              not_implemented("exponential(reduce_init=<a tile>)");
            if (reduce_init.cast<float>() != 0.0f) not_implemented("exponential(reduce_init != 0)");
            o.reduce_res = reduce_res.cast<Tensor>();
          }
          o.common = named(name);
          nisa::exponential(dst, src, o);
        });
      },
      py::arg("dst"), py::arg("src"), py::arg("max_value") = 0.0f,
      py::arg("reduce_res") = py::none(), py::arg("reduce_cmd") = py::none(),
      py::arg("reduce_init") = 0.0f, py::arg("name") = py::none());
  // relu_param is the slope of nl.prelu (a number or a [P, 1] tile).
  m.def(
      "activate2",
      [](const Tensor& dst, const py::object& op, const Tensor& data, const py::object& imm0,
         const py::object& imm1, const py::object& op0, const py::object& op1,
         const py::object& relu_param, bool reverse0, bool reverse1, const py::object& reduce_op,
         const py::object& reduce_res, const py::object& reduce_cmd, const py::object& name) {
        require_fresh_reduce(reduce_cmd, "activate2");
        at_kernel_line([&] {
          nisa::Activate2Options o;
          o.reverse0 = reverse0;
          o.reverse1 = reverse1;
          o.relu_param = scalar_of(relu_param, "relu_param");
          if (!reduce_op.is_none()) o.reduce_op = reduce_op_of(reduce_op);
          if (!reduce_res.is_none()) o.reduce_res = reduce_res.cast<Tensor>();
          o.common = named(name);
          const auto alu = [](const py::object& v, const char* what) {
            return v.is_none() ? isa::AluOp::kBypass : enum_of<isa::AluOp>(v, what);
          };
          nisa::activate2(dst, enum_of<isa::ActivationFunc>(op, "op"), data,
                          scalar_of(imm0, "imm0"), scalar_of(imm1, "imm1"), alu(op0, "op0"),
                          alu(op1, "op1"), o);
        });
      },
      py::arg("dst"), py::arg("op"), py::arg("data"), py::arg("imm0"), py::arg("imm1"),
      py::arg("op0"), py::arg("op1"), py::arg("relu_param") = 0.0f, py::arg("reverse0") = false,
      py::arg("reverse1") = false, py::arg("reduce_op") = py::none(),
      py::arg("reduce_res") = py::none(), py::arg("reduce_cmd") = py::none(),  // idle
      py::arg("name") = py::none());
}

void bind_elementwise(py::module_& m) {
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
            o.operand1 = scalar_of(operand1, "operand1");
          }
          o.reverse1 = reverse1;
          o.common = common_of(e, n);
          nisa::tensor_scalar(dst, data, enum_of<isa::AluOp>(op0, "op0"),
                              scalar_of(operand0, "operand0"), o);
        });
      },
      py::arg("dst"), py::arg("data"), py::arg("op0"), py::arg("operand0"),
      py::arg("reverse0") = false, py::arg("op1") = py::none(), py::arg("operand1") = py::none(),
      py::arg("reverse1") = false, engine, name);
  m.def(
      "scalar_tensor_tensor",
      [](const Tensor& dst, const Tensor& data, const py::object& op0, const py::object& operand0,
         const py::object& op1, const Tensor& operand1, bool reverse0, bool reverse1,
         const py::object& n) {
        at_kernel_line([&] {
          nisa::scalar_tensor_tensor(
              dst, data, enum_of<isa::AluOp>(op0, "op0"), scalar_of(operand0, "operand0"),
              enum_of<isa::AluOp>(op1, "op1"), operand1,
              {.reverse0 = reverse0, .reverse1 = reverse1, .common = named(n)});
        });
      },
      py::arg("dst"), py::arg("data"), py::arg("op0"), py::arg("operand0"), py::arg("op1"),
      py::arg("operand1"), py::arg("reverse0") = false, py::arg("reverse1") = false, name);
  m.def(
      "tensor_copy",
      [](const Tensor& dst, const Tensor& src, const py::object& e, const py::object& n) {
        at_kernel_line([&] { nisa::tensor_copy(dst, src, common_of(e, n)); });
      },
      py::arg("dst"), py::arg("src"), engine, name);
  m.def(
      "tensor_copy_predicated",
      [](const Tensor& dst, const py::object& src, const Tensor& predicate, bool reverse_pred,
         const py::object& n) {
        at_kernel_line([&] {
          nisa::tensor_copy_predicated(dst, scalar_of(src, "src"), predicate,
                                       {.reverse_pred = reverse_pred, .common = named(n)});
        });
      },
      py::arg("dst"), py::arg("src"), py::arg("predicate"), py::arg("reverse_pred") = false, name);
  m.def(
      "memset",
      [](const Tensor& dst, float value, const py::object& e, const py::object& n) {
        at_kernel_line([&] { nisa::memset(dst, value, common_of(e, n)); });
      },
      py::arg("dst"), py::arg("value"), engine, name);
  m.def(
      "reciprocal",
      [](const Tensor& dst, const Tensor& data, const py::object& n) {
        at_kernel_line([&] { nisa::reciprocal(dst, data, named(n)); });
      },
      py::arg("dst"), py::arg("data"), name);
  m.def(
      "tensor_tensor_scan",
      [](const Tensor& dst, const Tensor& data0, const Tensor& data1, const py::object& initial,
         const py::object& op0, const py::object& op1, bool reverse0, bool reverse1,
         const py::object& n) {
        if (reverse0 || reverse1) not_implemented("tensor_tensor_scan(reverse0/reverse1=True)");
        at_kernel_line([&] {
          nisa::tensor_tensor_scan(dst, data0, data1, scalar_of(initial, "initial"),
                                   enum_of<isa::AluOp>(op0, "op0"), enum_of<isa::AluOp>(op1, "op1"),
                                   named(n));
        });
      },
      py::arg("dst"), py::arg("data0"), py::arg("data1"), py::arg("initial"), py::arg("op0"),
      py::arg("op1"), py::arg("reverse0") = false, py::arg("reverse1") = false, name);
}

void bind_reductions(py::module_& m) {
  const auto name = py::arg("name") = py::none();
  m.def(
      "tensor_scalar_reduce",
      [](const Tensor& dst, const Tensor& data, const py::object& op0, const py::object& operand0,
         const py::object& reduce_op, const py::object& reduce_res, bool reverse0,
         const py::object& reduce_cmd, const py::object& reduce_init, bool reduce_res_negate,
         const py::object& n) {
        require_fresh_reduce(reduce_cmd, "tensor_scalar_reduce");
        const isa::AluOp reduce = reduce_op_of(reduce_op);
        if (!reduce_init.is_none()) {
          if (py::isinstance<Tensor>(reduce_init))
            not_implemented("tensor_scalar_reduce(reduce_init=<a tile>)");
          // 0 is the identity of a sum only: for other reductions an initial value would change
          // the result, and trnsim starts each reduction afresh.
          if (reduce_init.cast<float>() != 0.0f || reduce != isa::AluOp::kAdd)
            not_implemented(
                "tensor_scalar_reduce(reduce_init=" + std::string(py::repr(reduce_init)) +
                ") (None, or 0 with reduce_op=nl.add, is)");
        }
        at_kernel_line([&] {
          nisa::TensorScalarReduceOptions o;
          if (!reduce_res.is_none()) o.reduce_res = reduce_res.cast<Tensor>();
          o.reverse0 = reverse0;
          o.reduce_res_negate = reduce_res_negate;
          o.common = named(n);
          nisa::tensor_scalar_reduce(dst, data, enum_of<isa::AluOp>(op0, "op0"),
                                     scalar_of(operand0, "operand0"), reduce, o);
        });
      },
      py::arg("dst"), py::arg("data"), py::arg("op0"), py::arg("operand0"), py::arg("reduce_op"),
      py::arg("reduce_res") = py::none(), py::arg("reverse0") = false,
      py::arg("reduce_cmd") = py::none(),  // reset_reduce
      py::arg("reduce_init") = py::none(), py::arg("reduce_res_negate") = false, name);
  m.def(
      "tensor_reduce",
      [](const Tensor& dst, const py::object& op, const Tensor& data, const py::object& axis,
         bool negate, bool, const py::object& n) {
        at_kernel_line([&] {
          const auto [view, axes] = reduced_innermost(data, axis);
          nisa::tensor_reduce(dst, view, enum_of<isa::AluOp>(op, "op"),
                              {.axes = axes, .negate = negate, .common = named(n)});
        });
      },
      py::arg("dst"), py::arg("op"), py::arg("data"), py::arg("axis"), py::arg("negate") = false,
      py::arg("keepdims") = false, name);
  m.def(
      "tensor_partition_reduce",
      [](const Tensor& dst, const py::object& op, const Tensor& data, const py::object& n) {
        at_kernel_line([&] {
          nisa::tensor_partition_reduce(dst, data, enum_of<isa::AluOp>(op, "op"), named(n));
        });
      },
      py::arg("dst"), py::arg("op"), py::arg("data"), name);
  m.def(
      "bn_stats",
      [](const Tensor& dst, const Tensor& data, const py::object& n) {
        at_kernel_line([&] { nisa::bn_stats(dst, data, named(n)); });
      },
      py::arg("dst"), py::arg("data"), name);
  m.def(
      "bn_aggr",
      [](const Tensor& dst, const Tensor& data, const py::object& n) {
        at_kernel_line([&] { nisa::bn_aggr(dst, data, named(n)); });
      },
      py::arg("dst"), py::arg("data"), name);
  m.def(
      "max8",
      [](const Tensor& dst, const Tensor& src, const py::object& n) {
        at_kernel_line([&] { nisa::max8(dst, src, named(n)); });
      },
      py::arg("dst"), py::arg("src"), name);
  m.def(
      "nc_find_index8",
      [](const Tensor& dst, const Tensor& data, const Tensor& vals, const py::object& n) {
        at_kernel_line([&] { nisa::nc_find_index8(dst, data, vals, named(n)); });
      },
      py::arg("dst"), py::arg("data"), py::arg("vals"), name);
  m.def(
      "nc_match_replace8",
      [](const Tensor& dst, const Tensor& data, const Tensor& vals, float imm,
         const std::optional<Tensor>& dst_idx, const py::object& n) {
        at_kernel_line([&] { nisa::nc_match_replace8(dst, data, vals, imm, dst_idx, named(n)); });
      },
      py::arg("dst"), py::arg("data"), py::arg("vals"), py::arg("imm"),
      py::arg("dst_idx") = py::none(), name);
}

void bind_selection(py::module_& m) {
  const auto name = py::arg("name") = py::none();
  using Pattern = std::vector<std::array<std::int64_t, 2>>;
  m.def(
      "iota",
      [](const Tensor& dst, const Pattern& pattern, std::int32_t offset,
         std::int32_t channel_multiplier, const py::object& n) {
        at_kernel_line([&] {
          nisa::iota(dst, {.pattern = pattern_of(pattern),
                           .offset = offset,
                           .channel_multiplier = channel_multiplier,
                           .common = named(n)});
        });
      },
      py::arg("dst"), py::arg("pattern"), py::arg("offset") = 0, py::arg("channel_multiplier") = 0,
      name);
  m.def(
      "affine_select",
      [](const Tensor& dst, const Pattern& pattern, std::int32_t channel_multiplier,
         const Tensor& on_true_tile, float on_false_value, const py::object& cmp_op,
         std::int32_t offset, const py::object& n) {
        at_kernel_line([&] {
          const isa::AluOp cmp =
              cmp_op.is_none() ? isa::AluOp::kEqual : enum_of<isa::AluOp>(cmp_op, "cmp_op");
          nisa::affine_select(dst, on_true_tile, cmp, on_false_value,
                              {.pattern = pattern_of(pattern),
                               .offset = offset,
                               .channel_multiplier = channel_multiplier,
                               .common = named(n)});
        });
      },
      py::arg("dst"), py::arg("pattern"), py::arg("channel_multiplier"), py::arg("on_true_tile"),
      py::arg("on_false_value"), py::arg("cmp_op") = py::none(), py::arg("offset") = 0, name);
  m.def(
      "range_select",
      [](const Tensor& dst, const Tensor& on_true_tile, const py::object& comp_op0,
         const py::object& comp_op1, const py::object& bound0, const py::object& bound1,
         const py::object& reduce_cmd, const py::object& reduce_res, const py::object& reduce_op,
         std::int32_t range_start, float on_false_value, const py::object& n) {
        at_kernel_line([&] {
          nisa::RangeSelectOptions o;
          if (!reduce_res.is_none()) {
            require_fresh_reduce(reduce_cmd, "range_select");
            if (!reduce_op.is_none() &&
                enum_of<isa::AluOp>(reduce_op, "reduce_op") != isa::AluOp::kMaximum)
              not_implemented("range_select(reduce_op other than nl.maximum)");
            o.reduce_res = reduce_res.cast<Tensor>();
          }
          o.range_start = range_start;
          o.on_false_value = on_false_value;
          o.common = named(n);
          nisa::range_select(dst, on_true_tile, enum_of<isa::AluOp>(comp_op0, "comp_op0"),
                             enum_of<isa::AluOp>(comp_op1, "comp_op1"), scalar_of(bound0, "bound0"),
                             scalar_of(bound1, "bound1"), o);
        });
      },
      py::arg("dst"), py::arg("on_true_tile"), py::arg("comp_op0"), py::arg("comp_op1"),
      py::arg("bound0"), py::arg("bound1"), py::arg("reduce_cmd") = py::none(),  // reset_reduce
      py::arg("reduce_res") = py::none(), py::arg("reduce_op") = py::none(),
      py::arg("range_start") = 0,
      py::arg("on_false_value") = nisa::RangeSelectOptions{}.on_false_value, name);
  m.def(
      "select_reduce",
      [](const Tensor& dst, const Tensor& predicate, const Tensor& on_true,
         const py::object& on_false, const py::object& reduce_res, const py::object&,
         const py::object&, bool reverse_pred, const py::object& n) {
        if (!reduce_res.is_none()) not_implemented("select_reduce(reduce_res=...)");
        if (reverse_pred) not_implemented("select_reduce(reverse_pred=True)");
        at_kernel_line([&] {
          nisa::select(dst, predicate, on_true, scalar_of(on_false, "on_false"), named(n));
        });
      },
      py::arg("dst"), py::arg("predicate"), py::arg("on_true"), py::arg("on_false"),
      py::arg("reduce_res") = py::none(), py::arg("reduce_cmd") = py::none(),
      py::arg("reduce_op") = py::none(), py::arg("reverse_pred") = false, name);
}

// nisa.oob_mode: what an indirect DMA does with an index outside the rows it may reach.
isa::OobMode oob_mode_of(const py::object& o) {
  if (o.is_none()) return isa::OobMode::kError;
  const std::string m = member(o);
  for (int i = 0; i < isa::kNumOobModes; ++i)
    if (isa::oob_mode_name(static_cast<isa::OobMode>(i)) == m) return static_cast<isa::OobMode>(i);
  throw py::value_error("oob_mode: expected nisa.oob_mode.error or .skip, got " +
                        std::string(py::repr(o)));
}

void bind_data_movement(py::module_& m) {
  const auto name = py::arg("name") = py::none();
  const auto dma_options = [](const py::object& n, const py::object& oob = py::none()) {
    nisa::DmaOptions o;
    if (!n.is_none()) o.name = n.cast<std::string>();
    o.oob = oob_mode_of(oob);
    return o;
  };
  // priority, dge_mode and engine choose among DMA resources trnsim models as one pool of
  // queues (docs/python.md): accepted, not modelled.
  m.def(
      "dma_copy",
      [dma_options](const Tensor& dst, const Tensor& src, const py::object&, const py::object& oob,
                    const py::object&, const py::object&, const py::object& n) {
        at_kernel_line([&] { nisa::dma_copy(dst, src, dma_options(n, oob)); });
      },
      py::arg("dst"), py::arg("src"), py::arg("priority") = py::none(),
      py::arg("oob_mode") = py::none(), py::arg("dge_mode") = py::none(),
      py::arg("engine") = py::none(), name);
  m.def(
      "dma_compute",
      [dma_options](const Tensor& dst, const std::vector<Tensor>& srcs, const py::object& reduce_op,
                    const py::object& scales, bool unique_indices, const py::object& oob,
                    const py::object& n) {
        // NKI 0.6: one scale per source, all 1.0; the read-modify-write forms (a vector
        // offset) need unique_indices=True.
        if (!scales.is_none()) {
          if (py::len(scales) != srcs.size())
            throw kernel::KernelError(
                kernel_line(), "dma_compute: " + std::to_string(py::len(scales)) + " scales for " +
                                   std::to_string(srcs.size()) + " sources (one each)");
          for (const py::handle s : scales)
            if (s.cast<double>() != 1.0)
              throw kernel::KernelError(kernel_line(),
                                        "dma_compute: every scale must be 1.0 "
                                        "(NKI 0.6), not " +
                                            std::string(py::repr(s)));
        }
        const bool indirect =
            dst.is_indirect() ||
            std::any_of(srcs.begin(), srcs.end(), [](const Tensor& s) { return s.is_indirect(); });
        if (indirect && !unique_indices)
          not_implemented(
              "dma_compute(unique_indices=False) (NKI 0.6 does not support "
              "non-unique indices either)");
        at_kernel_line([&] {
          nisa::dma_compute(dst, srcs, enum_of<isa::AluOp>(reduce_op, "reduce_op"),
                            dma_options(n, oob));
        });
      },
      py::arg("dst"), py::arg("srcs"), py::arg("reduce_op"), py::arg("scales") = py::none(),
      py::arg("unique_indices") = true, py::arg("oob_mode") = py::none(), name);
  m.def(
      "dma_transpose",
      [dma_options](const Tensor& dst, const Tensor& src, const py::object& axes, const py::object&,
                    const py::object&, const py::object& oob, const py::object& n) {
        if (!axes.is_none() && axes.cast<std::vector<int>>() != std::vector<int>{1, 0})
          not_implemented("dma_transpose(axes=" + std::string(py::repr(axes)) +
                          ") (a 2-D transpose, axes=(1, 0), is)");
        at_kernel_line([&] { nisa::dma_transpose(dst, src, dma_options(n, oob)); });
      },
      py::arg("dst"), py::arg("src"), py::arg("axes") = py::none(),
      py::arg("priority") = py::none(), py::arg("dge_mode") = py::none(),
      py::arg("oob_mode") = py::none(), name);
  m.def(
      "local_gather",
      [](const Tensor& dst, const Tensor& src_buffer, const Tensor& index,
         std::uint32_t num_elem_per_idx, const py::object& num_valid_indices, const py::object& n) {
        if (!num_valid_indices.is_none()) not_implemented("local_gather(num_valid_indices=...)");
        at_kernel_line(
            [&] { nisa::local_gather(dst, src_buffer, index, num_elem_per_idx, named(n)); });
      },
      py::arg("dst"), py::arg("src_buffer"), py::arg("index"), py::arg("num_elem_per_idx") = 1,
      py::arg("num_valid_indices") = py::none(), name);
  m.def(
      "nc_stream_shuffle",
      [](const Tensor& dst, const Tensor& src, const std::vector<int>& shuffle_mask,
         const py::object& n) {
        at_kernel_line([&] {
          if (shuffle_mask.size() != 32)
            throw kernel::KernelError(kernel_line(),
                                      "nc_stream_shuffle: shuffle_mask has 32 entries, not " +
                                          std::to_string(shuffle_mask.size()));
          std::array<std::uint8_t, 32> mask{};
          for (std::size_t k = 0; k < 32; ++k) {
            const int v = shuffle_mask[k];
            if (v < 0 || v > 255)
              throw kernel::KernelError(kernel_line(), "nc_stream_shuffle: mask entry " +
                                                           std::to_string(v) + " (0..31, or 255)");
            mask[k] = static_cast<std::uint8_t>(v);
          }
          nisa::nc_stream_shuffle(dst, src, mask, named(n));
        });
      },
      py::arg("dst"), py::arg("src"), py::arg("shuffle_mask"), name);
  m.def(
      "quantize_mx",
      [](const Tensor& dst, const Tensor& src, const Tensor& dst_scale, const py::object& n) {
        at_kernel_line([&] { nisa::quantize_mx(dst, src, dst_scale, named(n)); });
      },
      py::arg("dst"), py::arg("src"), py::arg("dst_scale"), name);
}

void bind_random_and_sync(py::module_& m) {
  const auto name = py::arg("name") = py::none();
  m.def(
      "rand2",
      [](const Tensor& dst, const py::object& min, const py::object& max, const py::object& n) {
        if (py::isinstance<Tensor>(min) || py::isinstance<Tensor>(max))
          not_implemented("rand2 with tile bounds (number bounds are)");
        at_kernel_line([&] { nisa::rand2(dst, min.cast<float>(), max.cast<float>(), named(n)); });
      },
      py::arg("dst"), py::arg("min"), py::arg("max"), name);
  m.def(
      "rand_set_state",
      [](const Tensor& src_seeds, const py::object& e, const py::object& n) {
        at_kernel_line([&] { nisa::rand_set_state(src_seeds, common_of(e, n)); });
      },
      py::arg("src_seeds"), py::arg("engine") = isa::Engine::kGpSimd, name);
  m.def(
      "rand_get_state",
      [](const Tensor& dst, const py::object& e, const py::object& n) {
        at_kernel_line([&] { nisa::rand_get_state(dst, common_of(e, n)); });
      },
      py::arg("dst"), py::arg("engine") = isa::Engine::kGpSimd, name);
  // NKI's barrier names a semaphore tile and the cores; here it joins the logical core's
  // physical cores (the tile is not touched).
  m.def(
      "core_barrier",
      [](const Tensor&, const py::object& cores, const py::object&, const py::object&) {
        at_kernel_line([&] {
          const int lnc = nl::num_programs();
          if (py::len(cores) != static_cast<std::size_t>(lnc))
            throw kernel::KernelError(kernel_line(),
                                      "core_barrier(cores=" + std::string(py::repr(cores)) +
                                          "): trnsim joins all " + std::to_string(lnc) +
                                          " cores of the logical core");
          nisa::core_barrier();
        });
      },
      py::arg("data"), py::arg("cores"), py::arg("engine") = isa::Engine::kGpSimd, name);
  // dma_engine: nisa.dma_engine.dma (1); gpsimd_dma's software DGE is not modelled.
  m.def(
      "sendrecv",
      [](const Tensor& src, const Tensor& dst, int send_to_rank, int recv_from_rank, int pipe_id,
         const py::object& dma_engine, const py::object& n) {
        at_kernel_line([&] {
          if (!dma_engine.is_none() && py::int_(dma_engine.attr("value")).cast<int>() != 1)
            not_implemented("sendrecv(dma_engine=dma_engine.gpsimd_dma) (dma_engine.dma is)");
          nisa::DmaOptions o;
          if (!n.is_none()) o.name = n.cast<std::string>();
          nisa::sendrecv(src, dst, send_to_rank, recv_from_rank, pipe_id, o);
        });
      },
      py::arg("src"), py::arg("dst"), py::arg("send_to_rank"), py::arg("recv_from_rank"),
      py::arg("pipe_id"), py::arg("dma_engine") = py::none(), name);
}

}  // namespace

void bind_isa(py::module_& m) {
  bind_matmul(m);
  bind_activation(m);
  bind_elementwise(m);
  bind_reductions(m);
  bind_selection(m);
  bind_data_movement(m);
  bind_random_and_sync(m);
  bind_isa_gpsimd(m);
}

}  // namespace trnsim::python
