"""NKI 0.6's public names (python/reference/nki_0_6_api.json, shipped as _reference.json):
a name of NKI 0.6 that trnsim does not provide yet raises NotImplementedError naming it,
never an AttributeError deep inside a kernel."""

import difflib
import json
import os

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
