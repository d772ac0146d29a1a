"""Every nki.isa / nki.language function trnsim provides takes NKI 0.6's parameters: the same
names in the same order, optional where NKI's are (python/reference/nki_0_6_api.json)."""

import ast
import inspect
import json
import os

import pytest

import nki.isa as nisa
import nki.language as nl

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "reference", "nki_0_6_api.json")


def reference_functions():
    with open(REFERENCE, encoding="utf-8") as f:
        modules = json.load(f)["modules"]
    for module_name, module in (("nki.isa", nisa), ("nki.language", nl)):
        for entry in modules[module_name]:
            if entry["kind"] != "function" or not entry["signature"]:
                continue
            try:
                fn = getattr(module, entry["name"])
            except NotImplementedError:
                continue
            yield pytest.param(fn, entry["signature"], id=f"{module_name}.{entry['name']}")


def reference_parameters(signature):
    """(name, has a default) per parameter of an NKI stub signature."""
    tree = ast.parse("def f" + signature[signature.index("("):] + ": pass")
    args = tree.body[0].args
    names = [a.arg for a in args.args]
    first_default = len(names) - len(args.defaults)
    return [(n, i >= first_default) for i, n in enumerate(names)]


def split_top_level(text):
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([<{":
            depth += 1
        elif ch in ")]>}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current)
    return parts


def our_parameters(fn):
    """(name, has a default) per parameter: from inspect for Python functions, from the first
    line of the docstring pybind11 writes for the C++ ones."""
    try:
        return [(p.name, p.default is not inspect.Parameter.empty)
                for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        pass
    first_line = fn.__doc__.splitlines()[0]
    inside = first_line[first_line.index("(") + 1:first_line.rindex(") ->")]
    params = []
    for part in split_top_level(inside):
        name = part.split(":")[0].split("=")[0].strip()
        params.append((name, "=" in part))
    return params


@pytest.mark.parametrize("fn, signature", list(reference_functions()))
def test_parameters_are_nkis(fn, signature):
    assert our_parameters(fn) == reference_parameters(signature)
