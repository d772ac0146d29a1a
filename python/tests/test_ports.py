"""Python ports of library kernels compile to the same program as their C++ versions: the
same simulated time (the time does not depend on the data), and a correct result."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import trnsim

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "python"))
import matmul_tiled  # noqa: E402  (examples/python/matmul_tiled.py)

CLI = os.environ.get("TRNSIM_CLI")


@pytest.mark.skipif(not CLI, reason="TRNSIM_CLI (the trnsim command) is not set")
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_matmul_tiled_matches_the_library_kernel(tmp_path, dtype):
    k, m, n = 512, 512, 1024
    rng = np.random.default_rng(4)
    a_t = rng.uniform(-1, 1, (k, m)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    if dtype == "bf16":
        c = matmul_tiled.matmul_tiled(trnsim.typed(a_t, trnsim._core.DType.bfloat16),
                                      trnsim.typed(b, trnsim._core.DType.bfloat16))
    else:
        c = matmul_tiled.matmul_tiled(a_t, b)
        want = a_t.astype(np.float64).T @ b.astype(np.float64)
        np.testing.assert_allclose(c, want, rtol=0, atol=k * 2.0**-23)
    python_ns = trnsim.last_report()["total_ns"]
    python_instructions = trnsim.last_host_times()["instructions"]

    out = tmp_path / "run.json"
    subprocess.run([CLI, "run", "tutorial_matmul_tiled", "--shape", f"{m}x{n}x{k}",
                    "--dtype", dtype, "--json", str(out)], check=True, capture_output=True)
    library = json.loads(out.read_text())["run"]
    assert library["check"]["ok"]
    assert python_instructions == library["compiled"]["instructions"]
    assert python_ns == library["simulated_ns"]
