"""NKI 0.6 kernels on trnsim from NumPy: results, errors at the kernel's line, logical cores,
the timing report, and NKI names trnsim does not have yet."""

import inspect
import os
import sys

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples", "python"))
from tensor_add import tensor_add  # noqa: E402  (examples/python/tensor_add.py)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_tensor_add_is_bit_exact(dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((256, 512)).astype(dtype)
    b = rng.standard_normal((256, 512)).astype(dtype)
    got = tensor_add(a, b)
    assert got.dtype == dtype and got.shape == a.shape
    # fp32 adds rounded once into the output type: what NumPy computes in float32.
    want = (a.astype(np.float32) + b.astype(np.float32)).astype(dtype)
    np.testing.assert_array_equal(got, want)
    report = trnsim.last_report()
    assert report is not None and report["total_ns"] > 0


def test_simulate_takes_a_plain_function_and_scalar_arguments():
    def scale_rows(x, factor):
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=factor)
        nl.store(out, value=t)
        return out

    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    np.testing.assert_array_equal(nki.simulate(scale_rows)(x, 0.5), x * np.float32(0.5))


def test_matmul_matches_numpy():
    @nki.jit
    def matmul(a_t, b):  # a_t [K, M], b [K, N] -> a_t.T @ b
        k, m = a_t.shape
        n = b.shape[1]
        out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=nl.load(a_t), moving=nl.load(b))
        res = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=acc)
        nl.store(out, value=res)
        return out

    rng = np.random.default_rng(2)
    a_t = rng.uniform(-1, 1, (128, 128)).astype(np.float32)
    b = rng.uniform(-1, 1, (128, 512)).astype(np.float32)
    want = a_t.astype(np.float64).T @ b.astype(np.float64)
    # fp32 products and sums over K = 128 terms of |x| <= 1: |error| <= K * 2^-23.
    np.testing.assert_allclose(matmul(a_t, b), want, rtol=0, atol=128 * 2.0**-23)


def test_a_logical_core_of_two_splits_by_program_id():
    @nki.jit
    def double(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        half = x.shape[0] // nl.num_programs()
        rows = nl.ds(nl.program_id(0) * half, half)
        t = nl.load(x[rows, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=t.shape[1])
        nl.store(out[rows, :], value=t)
        return out

    x = np.ones((256, 32), dtype=np.float32)
    np.testing.assert_array_equal(double[2](x), x + 32)
    assert len(trnsim.last_report()["cores"]) == 2


def test_errors_name_the_kernels_own_line():
    def too_many_partitions(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((256, 4), dtype=nl.float32, buffer=nl.sbuf)  # the bad line
        nl.store(out, value=t)
        return out

    bad_line = inspect.getsourcelines(too_many_partitions)[1] + 2
    with pytest.raises(trnsim.Error) as e:
        nki.simulate(too_many_partitions)(np.zeros((256, 4), np.float32))
    assert f"{__file__}:{bad_line}:" in str(e.value), str(e.value)
    assert "error:" in str(e.value)
    # The interpreter is fine for the next kernel.
    assert tensor_add(np.ones((128, 8), np.float32), np.ones((128, 8), np.float32))[0, 0] == 2


def test_a_python_error_in_the_kernel_keeps_its_traceback():
    def broken(x):
        raise ValueError("from the kernel")

    with pytest.raises(ValueError, match="from the kernel"):
        nki.simulate(broken)(np.zeros((128, 4), np.float32))


def test_names_of_nki_0_6_not_here_yet_say_so():
    # Every nki.isa name is provided now; the rule that raises for one that is not:
    from nki import _names
    error = _names.missing("nki.isa", "sendrecv", {"dma_copy"})
    assert isinstance(error, NotImplementedError)
    assert "nki.isa.sendrecv (NKI 0.6) is not implemented in trnsim yet" in str(error)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        nl.not_a_name  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'all_gather_vv'"):
        nki.collectives.all_gather_vv  # noqa: B018


def test_unsupported_array_dtypes_are_refused_clearly():
    with pytest.raises(TypeError, match="argument 'a' is a NumPy array of float64, which trnsim"):
        tensor_add(np.ones((128, 8)), np.ones((128, 8)))


def test_nl_operations_return_new_tiles():
    @nki.jit
    def ops(x):
        out = nl.ndarray((3,) + x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        e = nl.exp(t)
        nl.store(out[0], value=e)
        nl.store(out[1], value=nl.multiply(nl.add(e, e), 0.5))  # (e + e) / 2 = e exactly
        nl.store(out[2], value=nl.subtract(1.0, t))  # the number first: reversed operands
        return out

    x = np.linspace(-4, 4, 128 * 16, dtype=np.float32).reshape(128, 16)
    got = ops(x)
    # ScalarE's exp is fp32 (docs/simulator-ops.md); a few ulp from NumPy's.
    np.testing.assert_allclose(got[0], np.exp(x.astype(np.float64)), rtol=4 * 2.0**-23)
    np.testing.assert_array_equal(got[1], got[0])
    np.testing.assert_array_equal(got[2], np.float32(1) - x)


def test_nl_operations_need_a_tile():
    def numbers_only(x):
        nl.add(1.0, 2.0)
        return x

    with pytest.raises(TypeError, match="at least one operand must be a tile"):
        nki.simulate(numbers_only)(np.zeros((128, 4), np.float32))


def bf16(x):
    """float32 values rounded to nearest even into bfloat16 (as float32)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def test_bfloat16_inputs_with_trnsim_typed():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((128, 256)).astype(np.float32)
    b = rng.standard_normal((128, 256)).astype(np.float32)
    got = tensor_add(trnsim.typed(a, nl.bfloat16), trnsim.typed(b, nl.bfloat16))
    # bf16 outputs come back as float32 arrays of their exact values.
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, bf16(bf16(a) + bf16(b)))
    with pytest.raises(TypeError, match="not an NKI dtype"):
        trnsim.typed(a, np.float32)


def test_a_bad_index_is_a_type_error():
    def bad_index(x):
        return x[0.5, 0]

    with pytest.raises(TypeError, match="a tensor index is an int, a slice or nl.ds"):
        nki.simulate(bad_index)(np.zeros((128, 4), np.float32))


def test_every_collective_of_nki_0_6_is_here():
    import nki.collectives as cc

    for name in ("all_gather_v", "all_to_all_v", "collective_permute_implicit_reduce"):
        assert callable(getattr(cc, name))


def copy_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    rows = x.shape[0] // nl.num_programs()
    part = nl.ds(nl.program_id(0) * rows, rows)
    nl.store(out[part, :], value=nl.load(x[part, :]))
    return out


def test_the_environment_variables_nki_reads(monkeypatch):
    seen = []

    @nki.jit
    def kernel(x):
        seen.append((nisa.get_nc_version(), nl.num_programs()))
        return copy_kernel(x)

    x = np.ones((128, 4), np.float32)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", "2")
    np.testing.assert_array_equal(kernel(x), x)
    assert trnsim.chip() == "trn2"
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE")
    monkeypatch.delenv("NEURON_LOGICAL_NC_CONFIG")
    kernel(x)
    assert seen == [(nisa.nc_version.gen3, 2), (nisa.nc_version.gen3, 2),
                    (nisa.nc_version.gen4, 1)]


def test_nki_simulator_routes_calls_without_arrays(monkeypatch):
    @nki.jit
    def iota_kernel():
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 8), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(dst=t, pattern=[[1, 8]], offset=0, channel_multiplier=8)
        nl.store(out, value=nl.copy(t, dtype=nl.float32))
        return out

    monkeypatch.delenv("NKI_SIMULATOR", raising=False)
    with pytest.raises(NotImplementedError, match="NumPy arrays"):
        iota_kernel()
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    np.testing.assert_array_equal(iota_kernel(), np.arange(128 * 8, dtype=np.float32).reshape(128, 8))
