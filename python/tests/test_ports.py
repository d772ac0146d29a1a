"""Python ports of library kernels compile to the same program as their C++ versions: the
same instructions and simulated time (the time does not depend on the data), and results
that agree with NumPy."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trnsim
from trnsim import _core

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "python"))
import matmul_tiled  # noqa: E402  (examples/python/)
import rmsnorm  # noqa: E402
import softmax  # noqa: E402

CLI = os.environ.get("TRNSIM_CLI")
BF16 = _core.DType.bfloat16


def library_run(tmp_path, kernel, shape, dtype):
    """The library kernel run by the CLI: its JSON report ("run")."""
    out = tmp_path / "run.json"
    subprocess.run([CLI, "run", kernel, "--shape", "x".join(map(str, shape)), "--dtype", dtype,
                    "--json", str(out)], check=True, capture_output=True)
    run = json.loads(out.read_text())["run"]
    assert run["check"]["ok"]
    return run


def same_program(tmp_path, kernel, shape, dtype):
    library = library_run(tmp_path, kernel, shape, dtype)
    assert trnsim.last_host_times()["instructions"] == library["compiled"]["instructions"]
    assert trnsim.last_report()["total_ns"] == library["simulated_ns"]


def typed(array, dtype):
    return trnsim.typed(array, BF16) if dtype == "bf16" else array


@pytest.mark.skipif(not CLI, reason="TRNSIM_CLI (the trnsim command) is not set")
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_matmul_tiled(tmp_path, dtype):
    k, m, n = 512, 512, 1024
    rng = np.random.default_rng(4)
    a_t = rng.uniform(-1, 1, (k, m)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    c = matmul_tiled.matmul_tiled(typed(a_t, dtype), typed(b, dtype))
    if dtype == "fp32":
        want = a_t.astype(np.float64).T @ b.astype(np.float64)
        np.testing.assert_allclose(c, want, rtol=0, atol=k * 2.0**-23)
    same_program(tmp_path, "tutorial_matmul_tiled", (m, n, k), dtype)


@pytest.mark.skipif(not CLI, reason="TRNSIM_CLI (the trnsim command) is not set")
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_rmsnorm(tmp_path, dtype):
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (640, 1024)).astype(np.float32)  # a ragged last tile of 0 rows
    weight = rng.uniform(0.5, 1.5, 1024).astype(np.float32)
    got = rmsnorm.rmsnorm(typed(x, dtype), typed(weight, dtype))
    if dtype == "fp32":
        want = rmsnorm.reference(x, weight)
        np.testing.assert_allclose(got, want, rtol=1e-5)
    same_program(tmp_path, "rmsnorm", x.shape, dtype)


# fp32 only: for bf16 the library pins its row-sum reduction to VectorE, which NKI 0.6's
# tensor_reduce cannot say (it has no engine=), so the port leaves it to the compiler.
@pytest.mark.skipif(not CLI, reason="TRNSIM_CLI (the trnsim command) is not set")
@pytest.mark.parametrize("shape", [(1024, 512), (1000, 384)])
def test_softmax(tmp_path, shape):
    x = np.random.default_rng(6).uniform(-4, 4, shape).astype(np.float32)
    got = softmax.softmax(x)
    np.testing.assert_allclose(got, softmax.reference(x), rtol=1e-5, atol=1e-9)
    same_program(tmp_path, "softmax", shape, "fp32")
