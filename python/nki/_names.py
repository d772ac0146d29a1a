"""NKI 0.6's public names (python/reference/nki_0_6_api.json, shipped as _reference.json):
a name of NKI 0.6 that trnsim does not provide yet raises NotImplementedError naming it,
never an AttributeError deep inside a kernel."""

import difflib
import json
import os

from trnsim import _core

_REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_reference.json")
with open(_REFERENCE, encoding="utf-8") as f:
    _MODULES = {module: {e["name"] for e in entries}
                for module, entries in json.load(f)["modules"].items()}


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
    "nki.isa.nc_matmul": "accumulate=None overwrites; NKI: the first write to a PSUM location "
                         "overwrites, later ones add",
    "nki.language.tile_size": "known while a kernel is traced (it depends on the chip)",
    "nki.jit": "runs on trnsim when called with NumPy arrays; other keyword arguments are "
               "ignored",
    "nki.typing.tensor": "an annotation only",
}
for _name in _core.AluOp.__members__:
    DIFFERENCES[f"nki.language.{_name}"] = ("as a tile operation, the result has dtype= or its "
                                            "tile operand's dtype (no promotion; comparisons "
                                            "give 1.0 / 0.0 in it)")


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
