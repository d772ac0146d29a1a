"""NKI 0.6's public names (python/reference/nki_0_6_api.json, shipped as _reference.json):
a name of NKI 0.6 that trnsim does not provide yet raises NotImplementedError naming it,
never an AttributeError deep inside a kernel."""

import difflib
import json
import os

from trnsim import _core

_REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_reference.json")
with open(_REFERENCE, encoding="utf-8") as f:
    _REFERENCE_MODULES = json.load(f)["modules"]
_MODULES = {module: {e["name"] for e in entries} for module, entries in _REFERENCE_MODULES.items()}
# NkiTensor's methods and attributes, as a module of their own in the coverage table.
for _entry in _REFERENCE_MODULES["nki.language"]:
    if _entry["name"] == "NkiTensor":
        _MODULES["nki.language.NkiTensor"] = {
            m["name"] for m in _entry.get("methods", []) + _entry.get("attributes", [])}


def missing(module, name, provided):
    """The error for `module.name` when the module lacks it (for a module __getattr__)."""
    if name.startswith("__"):
        return AttributeError(name)
    known = _MODULES.get(module, set())
    closest = difflib.get_close_matches(name, sorted(provided), n=1)
    hint = f"; the closest trnsim has is {module}.{closest[0]}" if closest else ""
    if name in known:
        return NotImplementedError(
            f"{module}.{name} (NKI 0.6) is not implemented in trnsim yet{hint} "
            "(docs/python.md lists what is)")
    return AttributeError(f"module '{module}' has no attribute '{name}'{hint}")


# Names that work with a difference from NKI 0.6 worth knowing (docs/python.md's table).
DIFFERENCES = {
    "nki.isa.nc_matmul": "is_stationary_onezero and is_moving_onezero (hints) are accepted, not "
                         "modelled",
    "nki.isa.activation": "reduce_res gets a sum (reduce_op=nl.add) within the instruction; "
                          "reduce_cmd reduce / load_reduce are not implemented",
    "nki.isa.activation_reduce": "reduce_op=nl.add only",
    "nki.isa.exponential": "reduce_cmd idle / reset_reduce and reduce_init=0 only",
    "nki.isa.range_select": "reduce_cmd idle / reset_reduce and reduce_op=nl.maximum only",
    "nki.isa.select_reduce": "without reduce_res and reverse_pred (a plain select); on_false is "
                             "a number or a [P, 1] tile",
    "nki.isa.tensor_tensor_scan": "reverse0 / reverse1 are not implemented",
    "nki.isa.tensor_scalar_reduce": "reduce_cmd idle / reset_reduce (a reduction within the "
                                    "instruction); reduce_init None, or 0 with reduce_op=nl.add",
    "nki.isa.activate2": "reduce_cmd idle / reset_reduce; reduce_op=None with reduce_res sums",
    "nki.isa.get_nc_sub_version": "always 0: trnsim's chips have one silicon revision each",
    "nki.isa.NkiValidationError": "an alias of trnsim.Error, which trnsim raises for a broken "
                                  "hardware rule and for every other error of a kernel",
    "nki.isa.nc_match_replace8": "a value with no match left gets all ones in dst_idx (NKI: "
                                 "undefined)",
    "nki.isa.tensor_copy_predicated": "dst is read unless the predicate selects all of it, so "
                                      "an uninitialised dst is an error",
    "nki.isa.dma_copy": "priority, dge_mode and engine are accepted, not modelled (one pool of "
                        "DMA queues)",
    "nki.isa.dma_transpose": "2-D (axes=(1, 0)), also of a vector-offset view (a gathering "
                             "transpose); priority and dge_mode are accepted, not modelled",
    "nki.isa.local_gather": "num_valid_indices is not implemented",
    "nki.isa.rand2": "number bounds only",
    "nki.isa.nc_matmul_mx": "tiles rows only: tile_position's column is 0 and tile_size's "
                            "column at least the stationary's width",
    "nki.isa.core_barrier": "joins all cores of the logical core; the semaphore tile is not used",
    "nki.isa.sendrecv": "dma_engine.gpsimd_dma raises NotImplementedError; the transfer is "
                        "timed as an SBUF-to-SBUF DMA on the sender's engines (the fabric "
                        "between cores is not published)",
    "nki.isa.reduce_cmd": "tensor_scalar_cumulative takes every command; elsewhere reduce and "
                          "load_reduce raise NotImplementedError",
    "nki.isa.topk": "results in an ascending snake over each group's 16 partitions (NKI's own "
                    "simulator's order; hardware's order is unspecified); ties to the lower "
                    "snake position, NaN largest; the snake's other positions are not "
                    "written",
    "nki.isa.dma_compute": "a read-modify-write scatter with repeated indices is a run-time "
                           "error (NKI requires unique indices; hardware would lose updates)",
    "nki.isa.nonzero_with_count": "rows other than 0, 16, ... of dst are not written, so "
                                  "storing them unwritten is an uninitialised read",
    "nki.isa.set_rng_seed": "the seed expands to every lane's generators as trnsim's --seed "
                            "does (hardware's expansion is not public)",
    "nki.language.gather_flattened": "axis=0 only",
    "nki.language.device_print": "prints once the run has computed the values (a DMA snapshot "
                                 "taken at that point, costing simulated time, so a view "
                                 "follows DMA's start-partition rule); not inside a dynamic "
                                 "loop; nothing in timing-only runs",
    "nki.language.shared_constant": "the array's dtype is taken as a kernel argument's "
                                    "(trnsim.typed / trnsim.bits for bf16, fp8, ...); writing "
                                    "it is an error",
    "nki.isa.dge_mode": "accepted, not modelled",
    "nki.language.ndarray": "address= places a tile at partition 0 only",
    "nki.language.var": "over all free axes of a tile",
    "nki.language.softmax": "over the last axis",
    "nki.language.broadcast_to": "a partition dim of 1 goes through a scratch HBM row (two DMAs)",
    "nki.language.program_ndim": "0 without a grid, else 1 (a grid is one logical core)",
    "nki.language.DType": "the dtypes' enum type (NKI: an alias of str)",
    "nki.language.bool_": "an alias of nl.uint8 (a byte; nothing keeps it 0 or 1); NumPy bool "
                          "arrays pass as it",
    "nki.language.prelu": "nisa.activation has no relu_param: there the slope is 0 (a guess)",
    "nki.language.floor": "x - mod(x, 1): exact for finite x, but a zero result is +0 except "
                          "floor(-0), and +-inf gives NaN (a guess at NKI's lowering)",
    "nki.language.ceil": "x - mod(x, -1): exact for finite x, but a zero result is +0 (NumPy: "
                         "ceil(-0.5) is -0), and +-inf gives NaN (a guess at NKI's lowering)",
    "nki.language.trunc": "x - fmod(x, 1): exact for finite x, but a zero result is +0 (NumPy "
                          "keeps x's sign), and +-inf gives NaN (a guess at NKI's lowering)",
    "nki.language.tile_size": "inside a kernel the traced chip's, outside it trnsim.chip()'s; "
                              "no psum_min_align / sbuf_min_align",
    "nki.jit": "runs on trnsim when called with NumPy arrays; other keyword arguments are "
               "ignored",
    "nki.typing.tensor": "an annotation only",
    "nki.language.NkiTensor.select": "a dynamic index is read into a register where the view "
                                      "is made; the simulator checks it against the memory's "
                                      "bounds, not the dim's",
    "nki.language.NkiTensor.strides": "on chip, dim 0's stride is 0 (get_pattern gives the "
                                       "elements of a partition there, as .ap takes them)",
    "nki.collectives.all_reduce": "runs between ranks of trnsim.simulate_ranks; priority is "
                                  "checked (0 to 3), not modelled",
    "nki.collectives.all_gather": "collective_dim 0 only; priority is checked, not modelled",
    "nki.collectives.reduce_scatter": "collective_dim 0 only; priority is checked, not modelled",
    "nki.collectives.all_to_all": "collective_dim 0 only; priority is checked, not modelled",
    "nki.collectives.collective_permute": "priority is checked (0 to 3), not modelled",
    "nki.language.NkiTensor.__setitem__": "an instruction of its own (tensor_copy, a DMA or "
                                           "memset), where Neuron's compiler may write the "
                                           "value in place",
    "nki.collectives.all_gather_v": "any group size and has_rdispls=True work (NKI 0.6: four "
                                    "ranks of one chip, no has_rdispls); timed as the "
                                    "all_gather that fills dst, a bound",
    "nki.collectives.all_to_all_v": "any replica group works (NKI 0.6 limits them per "
                                    "fabric); timed as the all_to_all of all of src, a bound",
}
for _name in _core.AluOp.__members__:
    if _name != "invert":  # a one-tile operation: its result has x's dtype, as NKI's
        DIFFERENCES[f"nki.language.{_name}"] = (
            "as a tile operation, the result has dtype= or the promoted dtype of its tiles (a "
            "guess: docs/python.md); comparisons give 1 / 0 in it")


def coverage(modules):
    """(module, name, status, note) for every NKI 0.6 name: status "works", "works with a
    difference" or "not yet", found by looking the name up in the module as a kernel would."""
    rows = []
    for module_name, names in sorted(_MODULES.items()):
        module = modules[module_name]
        for name in sorted(names, key=str.lower):
            try:
                getattr(module, name)
                status = "works"
            except (NotImplementedError, AttributeError):
                status = "not yet"
            note = DIFFERENCES.get(f"{module_name}.{name}", "")
            if status == "works" and note:
                status = "works with a difference"
            rows.append((module_name, name, status, note))
    return rows


def coverage_markdown(modules):
    """The coverage table of docs/python.md (between its coverage markers)."""
    rows = coverage(modules)
    counts = {}
    for module_name, _, status, _ in rows:
        counts.setdefault(module_name, {}).setdefault(status, 0)
        counts[module_name][status] += 1
    lines = ["| module | works | works with a difference | not yet |", "|---|---|---|---|"]
    for module_name in sorted(counts):
        c = counts[module_name]
        lines.append(f"| `{module_name}` | {c.get('works', 0)} | "
                     f"{c.get('works with a difference', 0)} | {c.get('not yet', 0)} |")
    lines += ["", "| name | status | difference |", "|---|---|---|"]
    for module_name, name, status, note in rows:
        lines.append(f"| `{module_name}.{name}` | {status} | {note} |")
    return "\n".join(lines) + "\n"
