"""Host time of tracing and compiling a kernel from Python against the same kernel in C++:
the NKI tutorial's tiled matmul at 4096^3 BF16, examples/python/matmul_tiled.py through the
nki package, and the library's tutorial_matmul_tiled through `trnsim run`, both timing only
(no data), in one run:

    PYTHONPATH=build/python /usr/bin/python3 bench/python_trace.py build/trnsim
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "python"))
import matmul_tiled  # noqa: E402
import trnsim  # noqa: E402

SIZE = 4096


def python_run():
    a_t = np.zeros((SIZE, SIZE), np.float32)
    b = np.zeros((SIZE, SIZE), np.float32)
    trnsim.set_options(timing_only=True, check_hazards=False)
    start = time.perf_counter()
    matmul_tiled.matmul_tiled(trnsim.typed(a_t, trnsim._core.DType.bfloat16),
                              trnsim.typed(b, trnsim._core.DType.bfloat16))
    wall = time.perf_counter() - start
    host = trnsim.last_host_times()
    return host["trace_ms"], host["compile_ms"], host["instructions"], \
        trnsim.last_report()["total_ns"], wall


def cli_run(cli):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        start = time.perf_counter()
        subprocess.run([cli, "run", "tutorial_matmul_tiled", "--shape", f"{SIZE}x{SIZE}x{SIZE}",
                        "--timing-only", "--no-hazards", "--json", out], check=True,
                       capture_output=True)
        wall = time.perf_counter() - start
        with open(out, encoding="utf-8") as f:
            run = json.load(f)["run"]
    host = run["host_seconds"]
    return host["trace"] * 1e3, host["compile"] * 1e3, run["compiled"]["instructions"], \
        run["simulated_ns"], wall


def main(argv):
    cli = argv[1] if len(argv) > 1 else "build/trnsim"
    cpu0 = time.process_time()
    py = python_run()
    py_cpu = time.process_time() - cpu0
    cpp = cli_run(cli)
    print(f"tiled matmul {SIZE}^3 bf16, timing only, trace + compile (ms):")
    print(f"  {'':8} {'trace':>9} {'compile':>9} {'instructions':>13} {'simulated us':>13} "
          f"{'wall s':>7}")
    for label, r in (("python", py), ("c++", cpp)):
        print(f"  {label:8} {r[0]:9.0f} {r[1]:9.0f} {r[2]:13d} {r[3] / 1000:13.1f} {r[4]:7.2f}")
    print(f"  python / c++, trace + compile: {(py[0] + py[1]) / (cpp[0] + cpp[1]):.2f}x "
          f"(python process CPU {py_cpu:.2f} s)")
    return 0 if py[2] == cpp[2] and py[3] == cpp[3] else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
