// nki.collectives' calls (_core.collectives): each maps to its C++ kernel API call
// (kernel/collectives.h), located at the kernel's Python line.
#include "kernel/collectives.h"

#include <pybind11/stl.h>

#include "bridge.h"

namespace trnsim::python {

namespace {

// A ReplicaGroup: nki.collectives.ReplicaGroup (its `groups`), or the lists themselves.
ncc::ReplicaGroup replica_group_of(const py::object& o, const char* call) {
  const py::object lists = py::hasattr(o, "groups") ? o.attr("groups") : o;
  ncc::ReplicaGroup g;
  if (lists.is_none()) return g;
  const auto refuse = [&]() -> ncc::ReplicaGroup {
    throw kernel::KernelError(kernel_line(),
                              std::string(call) +
                                  ": replica_group is a ReplicaGroup or a list of rank lists "
                                  "([[0, 1, 2, 3]]), not " +
                                  std::string(py::repr(o)));
  };
  if (!py::isinstance<py::sequence>(lists) || py::isinstance<py::str>(lists)) return refuse();
  for (const py::handle group : lists) {
    if (!py::isinstance<py::sequence>(group) || py::isinstance<py::str>(group)) return refuse();
    std::vector<int> ranks;
    for (const py::handle r : group) {
      if (!py::isinstance<py::int_>(r)) return refuse();
      ranks.push_back(r.cast<int>());
    }
    g.groups.push_back(std::move(ranks));
  }
  return g;
}

ncc::CollectiveOptions options_of(const py::object& priority, const py::object& name) {
  if (!priority.is_none()) {
    const int p = priority.cast<int>();
    if (p < 0 || p > 3)
      throw py::value_error("priority " + std::to_string(p) + ": a DMA class 0 to 3");
  }
  ncc::CollectiveOptions o;
  if (!name.is_none()) o.name = name.cast<std::string>();
  return o;
}

isa::AluOp op_of(const py::object& op) {
  return enum_of<isa::AluOp>(op, "op");
}

// The ring permute of a reduction and the -v collectives (sizes from a metadata tensor).
void bind_variable_collectives(py::module_& m) {
  const auto none = py::none();
  m.def(
      "collective_permute_implicit_reduce",
      [](const std::vector<std::vector<Tensor>>& srcs0,
         const std::vector<std::vector<Tensor>>& srcs1,
         const std::vector<std::vector<Tensor>>& dsts, const py::object& replica_group,
         const py::object& op, const std::vector<int>& channel_ids, const py::object& priority,
         const py::object& name) {
        at_kernel_line([&] {
          ncc::collective_permute_implicit_reduce(
              srcs0, srcs1, dsts,
              replica_group_of(replica_group, "collective_permute_implicit_reduce"), op_of(op),
              channel_ids, options_of(priority, name));
        });
      },
      py::arg("srcs0_by_channel"), py::arg("srcs1_by_channel"), py::arg("dsts_by_channel"),
      py::arg("replica_group"), py::arg("op"), py::arg("channel_ids"), py::arg("priority") = none,
      py::arg("name") = none);
  for (const bool gather : {true, false}) {
    const char* call = gather ? "all_gather_v" : "all_to_all_v";
    m.def(
        call,
        [gather, call](const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
                       const py::object& replica_group, const Tensor& metadata,
                       bool recv_counts_known, bool has_rdispls, const py::object& priority,
                       const py::object& name) {
          at_kernel_line([&] {
            const auto run = gather ? &ncc::all_gather_v : &ncc::all_to_all_v;
            run(srcs, dsts, replica_group_of(replica_group, call), metadata, recv_counts_known,
                has_rdispls, options_of(priority, name), ncc::Loc::current());
          });
        },
        py::arg("srcs"), py::arg("dsts"), py::arg("replica_group"), py::arg("metadata_tensor"),
        py::arg("recv_counts_known"), py::arg("has_rdispls"), py::arg("priority") = none,
        py::arg("name") = none);
  }
}

}  // namespace

void bind_collectives(py::module_& m) {
  bind_variable_collectives(m);
  const auto none = py::none();
  m.def(
      "all_reduce",
      [](const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
         const py::object& replica_group, const py::object& op, const py::object& priority,
         const py::object& name) {
        at_kernel_line([&] {
          ncc::all_reduce(srcs, dsts, replica_group_of(replica_group, "all_reduce"), op_of(op),
                          options_of(priority, name));
        });
      },
      py::arg("srcs"), py::arg("dsts"), py::arg("replica_group"), py::arg("op"),
      py::arg("priority") = none, py::arg("name") = none);
  m.def(
      "all_gather",
      [](const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
         const py::object& replica_group, int collective_dim, const py::object& priority,
         const py::object& name) {
        at_kernel_line([&] {
          ncc::all_gather(srcs, dsts, replica_group_of(replica_group, "all_gather"), collective_dim,
                          options_of(priority, name));
        });
      },
      py::arg("srcs"), py::arg("dsts"), py::arg("replica_group"), py::arg("collective_dim"),
      py::arg("priority") = none, py::arg("name") = none);
  m.def(
      "reduce_scatter",
      [](const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
         const py::object& replica_group, int collective_dim, const py::object& op,
         const py::object& priority, const py::object& name) {
        at_kernel_line([&] {
          ncc::reduce_scatter(srcs, dsts, replica_group_of(replica_group, "reduce_scatter"),
                              collective_dim, op_of(op), options_of(priority, name));
        });
      },
      py::arg("srcs"), py::arg("dsts"), py::arg("replica_group"), py::arg("collective_dim"),
      py::arg("op"), py::arg("priority") = none, py::arg("name") = none);
  m.def(
      "all_to_all",
      [](const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
         const py::object& replica_group, int collective_dim, const py::object& priority,
         const py::object& name) {
        at_kernel_line([&] {
          ncc::all_to_all(srcs, dsts, replica_group_of(replica_group, "all_to_all"), collective_dim,
                          options_of(priority, name));
        });
      },
      py::arg("srcs"), py::arg("dsts"), py::arg("replica_group"), py::arg("collective_dim"),
      py::arg("priority") = none, py::arg("name") = none);
  m.def(
      "collective_permute_implicit",
      [](const std::vector<std::vector<Tensor>>& srcs, const std::vector<std::vector<Tensor>>& dsts,
         const py::object& replica_group, const std::vector<int>& channel_ids,
         const py::object& priority, const py::object& name) {
        at_kernel_line([&] {
          ncc::collective_permute_implicit(
              srcs, dsts, replica_group_of(replica_group, "collective_permute_implicit"),
              channel_ids, options_of(priority, name));
        });
      },
      py::arg("srcs_by_channel"), py::arg("dsts_by_channel"), py::arg("replica_group"),
      py::arg("channel_ids"), py::arg("priority") = none, py::arg("name") = none);
  m.def(
      "current_processing_rank_id",
      [](const py::object& iteration, const py::object& replica_group, int channel_id,
         const py::object& name) {
        (void)options_of(py::none(), name);
        const ncc::ReplicaGroup g = replica_group_of(
            replica_group, "collective_permute_implicit_current_processing_rank_id");
        if (py::isinstance<kernel::Register>(iteration)) {
          const auto r = iteration.cast<kernel::Register>();
          return at_kernel_line([&] { return ncc::current_processing_rank_id(r, g, channel_id); });
        }
        const int step = iteration.cast<int>();
        return at_kernel_line([&] { return ncc::current_processing_rank_id(step, g, channel_id); });
      },
      py::arg("iteration_id"), py::arg("replica_group"), py::arg("channel_id"), py::arg("name"));
  m.def(
      "rank_id",
      [](const py::object& name) {
        (void)options_of(py::none(), name);
        return at_kernel_line([] { return ncc::rank_id(); });
      },
      py::arg("name") = none);
  m.def(
      "collective_permute",
      [](const std::vector<Tensor>& srcs, const std::vector<Tensor>& dsts,
         const std::vector<std::pair<int, int>>& source_target_pairs, const py::object& priority,
         const py::object& name) {
        at_kernel_line([&] {
          ncc::collective_permute(srcs, dsts, source_target_pairs, options_of(priority, name));
        });
      },
      py::arg("srcs"), py::arg("dsts"), py::arg("source_target_pairs"), py::arg("priority") = none,
      py::arg("name") = none);
}

}  // namespace trnsim::python
