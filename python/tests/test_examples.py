"""Every example in examples/python runs and agrees with its NumPy reference (each main()
returns 0 only when it does)."""

import importlib
import os
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                        "python")
sys.path.insert(0, EXAMPLES)


@pytest.mark.parametrize("name", sorted(f[:-3] for f in os.listdir(EXAMPLES) if f.endswith(".py")))
def test_example_runs_and_is_right(name, capsys):
    assert importlib.import_module(name).main() == 0
    assert "simulated" in capsys.readouterr().out
