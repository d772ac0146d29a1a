"""`trnsim run|profile FILE.py:FUNCTION`: the C++ command hands Python kernels to the Python
front end, which generates inputs, runs, checks against a reference and profiles."""

import os
import subprocess

import pytest

CLI = os.environ.get("TRNSIM_CLI")
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                        "python")
pytestmark = pytest.mark.skipif(not CLI, reason="TRNSIM_CLI (the trnsim command) is not set")


def trnsim(*args, cwd=None):
    return subprocess.run([CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_run_checks_against_a_reference_in_the_same_file():
    r = trnsim("run", os.path.join(EXAMPLES, "rmsnorm.py:rmsnorm"), "--shape", "256x512",
               "--shape", "512", "--reference", "reference")
    assert r.returncode == 0, r.stderr
    assert "rmsnorm on trn3: simulated" in r.stdout
    assert "0 of 131072 elements outside" in r.stdout


def test_a_wrong_reference_fails_the_check(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def reference(x):\n    return x * 2\n")
    r = trnsim("run", os.path.join(EXAMPLES, "softmax.py:softmax"), "--shape", "128x64",
               "--reference", f"{wrong}:reference")
    assert r.returncode == 1
    assert "elements outside rtol 1e-05" in r.stdout and " 0 of 8192" not in r.stdout


def test_bf16_inputs_reach_the_reference_rounded(tmp_path):
    # A copy kernel's bf16 output equals the reference's input exactly only if the reference
    # sees the rounded values the kernel saw.
    kernel = tmp_path / "copy.py"
    kernel.write_text("import nki.language as nl\n\n"
                      "def copy(x):\n"
                      "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
                      "    nl.store(out, value=nl.load(x))\n"
                      "    return out\n\n"
                      "def same(x):\n    return x\n")
    r = trnsim("run", f"{kernel}:copy", "--shape", "128x64", "--dtype", "bf16", "--reference",
               "same", "--rtol", "0", "--atol", "0")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "max abs error 0, 0 of 8192 elements outside rtol 0" in r.stdout


def test_a_missing_or_failing_reference_is_reported_before_or_after_the_run(tmp_path):
    r = trnsim("run", os.path.join(EXAMPLES, "softmax.py:softmax"), "--shape", "128x64",
               "--reference", "no_such_reference")
    assert r.returncode == 2 and "has no function 'no_such_reference'" in r.stderr
    assert "simulated" not in r.stdout  # found before the kernel runs
    failing = tmp_path / "failing.py"
    failing.write_text("def reference(x):\n    raise ValueError('reference failed')\n")
    r = trnsim("run", os.path.join(EXAMPLES, "softmax.py:softmax"), "--shape", "128x64",
               "--reference", f"{failing}:reference")
    assert r.returncode == 1 and "failing.py" in r.stderr and "reference failed" in r.stderr


def test_profile_writes_the_explorer_report_and_trace(tmp_path):
    r = trnsim("profile", os.path.join(EXAMPLES, "softmax.py:softmax"), "--shape", "256x256",
               "-o", str(tmp_path / "s.html"), "--trace", str(tmp_path / "s.json"), "--lnc", "2")
    assert r.returncode == 0, r.stderr
    assert "bounded by" in r.stdout
    assert "softmax.py" in (tmp_path / "s.html").read_text()
    assert (tmp_path / "s.json").stat().st_size > 0


def test_bad_command_lines_are_usage_errors():
    r = trnsim("run", "no_such_file.py:f", "--shape", "4")
    assert r.returncode == 2 and "no_such_file.py: no such file" in r.stderr
    r = trnsim("run", os.path.join(EXAMPLES, "rmsnorm.py:nope"), "--shape", "4")
    assert r.returncode == 2 and "has no function 'nope'" in r.stderr
    r = trnsim("run", os.path.join(EXAMPLES, "rmsnorm.py:rmsnorm"), "--shape", "4xq")
    assert r.returncode == 2 and "--shape 4xq" in r.stderr


def test_a_kernel_error_names_the_kernels_line():
    r = trnsim("run", os.path.join(EXAMPLES, "rmsnorm.py:rmsnorm"), "--shape", "256x4x4",
               "--shape", "4")
    assert r.returncode == 1
    assert "rmsnorm.py\", line" in r.stderr and "ValueError" in r.stderr
    assert "_kernel.py" not in r.stderr  # the front end's frames are left out
    r = trnsim("run", os.path.join(EXAMPLES, "tensor_add.py:tensor_add"), "--shape", "100x4",
               "--shape", "100x4")
    assert r.returncode == 1
    assert "tensor_add.py:" in r.stderr and "error:" in r.stderr


def test_timing_only_runs_make_no_data():
    # 2 x 16384 x 16384 fp32 inputs would be 2 GiB as NumPy arrays; shapes alone cost nothing.
    r = trnsim("run", os.path.join(EXAMPLES, "tensor_add.py:tensor_add"), "--shape",
               "16384x16384", "--shape", "16384x16384", "--timing-only")
    assert r.returncode == 0, r.stderr
    assert "tensor_add on trn3: simulated" in r.stdout


def test_options_may_come_before_the_kernel():
    r = trnsim("run", "--shape", "128x64", os.path.join(EXAMPLES, "softmax.py:softmax"))
    assert r.returncode == 0, r.stderr
    assert "softmax on trn3: simulated" in r.stdout


ALL_SUM = ("import numpy as np\n"
           "import nki.collectives as ncc\n"
           "import nki.language as nl\n\n"
           "def all_sum(x):\n"
           "    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)\n"
           "    ncc.all_reduce([x], [out], ncc.ReplicaGroup(), op=nl.add)\n"
           "    return out\n\n"
           "def all_sum_ref(x):  # x: every rank's input, stacked\n"
           "    return np.broadcast_to(x.sum(axis=0), x.shape)\n\n"
           "def own(x):\n    return x\n")


def test_ranks_on_a_system_run_their_collectives_and_check_every_rank(tmp_path):
    kernel = tmp_path / "all_sum.py"
    kernel.write_text(ALL_SUM)
    r = trnsim("run", f"{kernel}:all_sum", "--shape", "128x64", "--ranks", "16", "--system",
               "trn2.48xlarge", "--reference", "all_sum_ref")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all_sum x 16 ranks on trn2.48xlarge: simulated" in r.stdout
    assert "collective: all_reduce of 32768 B among 16 ranks (mesh, event model)" in r.stdout
    assert "0 of 131072 elements outside" in r.stdout
    # Each rank has inputs of its own: a reference that ignores the others fails.
    r = trnsim("run", f"{kernel}:all_sum", "--shape", "128x64", "--ranks", "4", "--reference",
               "own")
    assert r.returncode == 1
    assert " 0 of 32768" not in r.stdout
    r = trnsim("run", f"{kernel}:all_sum", "--shape", "8x8", "--ranks", "17", "--system",
               "trn2.48xlarge")
    assert r.returncode == 1
    assert "17 ranks at 1 per chip need 17 chips; the system has 16" in r.stderr
