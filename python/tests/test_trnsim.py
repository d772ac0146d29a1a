"""The trnsim module: run options, the last run's report, profile, assembly and IR."""

import json

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim
from helpers import uniform


def scaled(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nisa.activation(dst=t, op=nl.exp, data=t, scale=0.5)
    nl.store(out, value=t)
    return out


def test_the_profile_and_trace_of_the_last_run(tmp_path):
    nki.simulate(scaled)(uniform((128, 512)))
    summary = trnsim.write_profile(html=tmp_path / "k.html", trace=tmp_path / "k.json")
    assert summary["total_ns"] == trnsim.last_report()["total_ns"]
    assert summary["bounding_engine"]
    html = (tmp_path / "k.html").read_text()
    assert "test_trnsim.py" in html  # the source view names the kernel's Python file
    events = json.loads((tmp_path / "k.json").read_text())
    names = {e.get("name") for e in (events["traceEvents"] if isinstance(events, dict) else events)}
    assert "activation" in names


def test_assembly_and_ir_of_the_last_run():
    nki.simulate(scaled)(uniform((128, 64)))
    run = trnsim.last_run()
    assert run.title == "scaled"
    asm = run.assembly()
    assert "activation" in asm and ".hbm" in asm
    assert "test_trnsim.py" in run.ir()


def test_timing_only_runs_return_no_data():
    try:
        trnsim.set_options(timing_only=True)
        assert nki.simulate(scaled)(uniform((128, 64))) is None
        assert trnsim.last_report()["total_ns"] > 0
    finally:
        trnsim.reset_options()


def test_uninitialized_reads_are_errors_or_nan():
    def reads_garbage(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)  # never written
        nl.store(out, value=t)
        return out

    with pytest.raises(RuntimeError, match="never written|uninitiali"):
        nki.simulate(reads_garbage)(np.zeros((128, 4), np.float32))
    try:
        trnsim.set_options(uninitialized="nan")
        assert np.isnan(nki.simulate(reads_garbage)(np.zeros((128, 4), np.float32))).all()
    finally:
        trnsim.reset_options()
    with pytest.raises(ValueError, match="one of error, nan, ignore"):
        trnsim.set_options(uninitialized="zero")


def test_the_seed_picks_the_random_numbers():
    def noise(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.rand2(dst=t, min=0.0, max=1.0)
        nl.store(out, value=t)
        return out

    x = np.zeros((1, 1), np.float32)
    try:
        trnsim.set_options(seed=1)
        first = nki.simulate(noise)(x)
        trnsim.set_options(seed=2)
        second = nki.simulate(noise)(x)
        trnsim.set_options(seed=1)
        np.testing.assert_array_equal(nki.simulate(noise)(x), first)
        assert not np.array_equal(first, second)
    finally:
        trnsim.reset_options()


def test_shaped_inputs_need_no_data_in_timing_only_runs(monkeypatch):
    import os
    import sys

    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                             "..", "examples", "python"))
    import matmul_tiled

    k = m = 1024
    n = 2048
    try:
        trnsim.set_options(timing_only=True)
        assert matmul_tiled.matmul_tiled(trnsim.shaped((k, m), nl.bfloat16),
                                          trnsim.shaped((k, n), nl.bfloat16)) is None
        shaped_ns = trnsim.last_report()["total_ns"]
        assert trnsim.last_host_times()["input_bytes"] == 0  # no input was made
    finally:
        trnsim.reset_options()
    zeros = trnsim.typed(np.zeros((k, m), np.float32), nl.bfloat16)
    matmul_tiled.matmul_tiled(zeros, trnsim.typed(np.zeros((k, n), np.float32), nl.bfloat16))
    assert trnsim.last_host_times()["input_bytes"] == 2 * (k * m + k * n)
    assert trnsim.last_report()["total_ns"] == shaped_ns  # the time does not depend on data


def test_shaped_inputs_in_functional_runs_are_seeded_values():
    first = nki.simulate(scaled)(trnsim.shaped((128, 64), nl.float32, seed=3))
    again = nki.simulate(scaled)(trnsim.shaped((128, 64), nl.float32, seed=3))
    other = nki.simulate(scaled)(trnsim.shaped((128, 64), nl.float32, seed=4))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    x = np.log(first) / 0.5  # scaled() is exp(0.5 x): the inputs were uniform in [-1, 1)
    assert x.min() >= -1.0001 and x.max() < 1.0001
    assert trnsim.last_host_times()["input_bytes"] == 128 * 64 * 4
    with pytest.raises(ValueError, match="dims must be positive"):
        nki.simulate(scaled)(trnsim.shaped((128, 0), nl.float32))
    with pytest.raises(TypeError, match="a shape is a sequence of integers"):
        trnsim.shaped((128, 6.5), nl.float32)


@pytest.mark.parametrize("seed, error", [(-1, ValueError), (2**32, ValueError),
                                         (1.5, TypeError), ("7", TypeError)])
def test_a_seed_out_of_range_is_named(seed, error):
    with pytest.raises(error, match=r"a seed is"):
        trnsim.set_options(seed=seed)
    with pytest.raises(error, match=r"trnsim.shaped\(seed=...\): a seed is"):
        trnsim.shaped((128, 4), nl.float32, seed=seed)
    assert trnsim.options()["seed"] is None
    trnsim.set_options(seed=np.uint32(2**32 - 1))  # NumPy integers are integers
    try:
        assert trnsim.options()["seed"] == 2**32 - 1
    finally:
        trnsim.reset_options()
