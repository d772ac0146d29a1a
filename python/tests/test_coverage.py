"""docs/python.md's coverage table is the package's: every NKI 0.6 name with its status,
regenerated here and compared with the document."""

import os
import sys

import nki.language as nl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import coverage_table  # noqa: E402  (python/tools/coverage_table.py)

DOC = os.path.join(HERE, "..", "..", "docs", "python.md")


def test_the_documents_table_is_up_to_date():
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    assert coverage_table.replace_table(text, coverage_table.table()) == text, (
        "docs/python.md's coverage table is out of date: run PYTHONPATH=build/python "
        "/usr/bin/python3 python/tools/coverage_table.py --write docs/python.md")


def test_the_table_lists_every_name_and_tells_the_truth():
    table = coverage_table.table()
    assert "| `nki.language.load` | works |" in table
    assert "| `nki.collectives.all_reduce` | works with a difference |" in table
    assert "| `nki.collectives.rank_id` | works |" in table
    assert "| `nki.collectives.all_to_all_v` | works with a difference |" in table
    assert "| `nki.language.NkiTensor.indirect` | not yet |" in table
    assert "| `nki.collectives.collective_permute_implicit` | works |" in table
    assert "| `nki.isa.sendrecv` | works with a difference |" in table
    assert "| `nki.isa.nc_matmul` | works with a difference |" in table
    assert nl.ndarray is not None
