"""NKI's two E4M3 types: the legacy nl.float8_e4m3 (Neuron's FP8_EXP4, IEEE-style: Inf and
NaN, largest finite 240) and the OCP nl.float8_e4m3fn (no Inf, largest finite 448), through
casts, matmuls on NeuronCore-v3 and v4, and the rule that the two do not mix in a matmul."""

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim
from helpers import expect_error_at, line_of

F32 = np.float32


def cast_through(dtype):
    """A kernel that rounds its fp32 input into `dtype` on VectorE and returns that tile."""
    def kernel(x):
        out = nl.ndarray(x.shape, dtype=dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.copy(nl.load(x), dtype=dtype))
        return out
    return kernel


def test_the_two_e4m3_types_are_different_dtypes():
    assert nl.float8_e4m3 != nl.float8_e4m3fn
    assert str(nl.float8_e4m3) != str(nl.float8_e4m3fn)
    assert len({nl.float8_e4m3, nl.float8_e4m3fn, nl.float8_e5m2}) == 3


def test_legacy_e4m3_rounds_to_240_then_overflows_to_inf():
    x = np.array([1.0, 1.1875, 240.0, 247.9, 248.0, 300.0, -1000.0, 2.0**-9, 2.0**-10, np.nan],
                 F32)
    want_legacy = [1.0, 1.25, 240.0, 240.0, np.inf, np.inf, -np.inf, 2.0**-9, 0.0, np.nan]
    # The OCP type goes on past 240 (248 ties to 256, 300 rounds to 288) and has no Inf:
    # -1000 overflows to its NaN.
    want_ocp = [1.0, 1.25, 240.0, 240.0, 256.0, 288.0, np.nan, 2.0**-9, 0.0, np.nan]
    x = np.tile(x, (128, 1))
    legacy = nki.simulate(cast_through(nl.float8_e4m3))(x)
    ocp = nki.simulate(cast_through(nl.float8_e4m3fn))(x)
    np.testing.assert_array_equal(legacy, np.tile(np.array(want_legacy, F32), (128, 1)))
    np.testing.assert_array_equal(ocp, np.tile(np.array(want_ocp, F32), (128, 1)))


def test_legacy_e4m3_inputs_pass_as_values_or_as_bits():
    def copy(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(x))
        return out

    # Code 0x77 is 240, 0x78 +Inf, 0xF8 -Inf, 0x7C a NaN; 0x7E is 448 only in the OCP type.
    words = np.tile(np.array([0x38, 0x77, 0x78, 0xF8, 0x7C, 0x01], np.uint8), (128, 1))
    got = nki.simulate(copy)(trnsim.bits(words, nl.float8_e4m3))
    np.testing.assert_array_equal(
        got, np.tile(np.array([1.0, 240.0, np.inf, -np.inf, np.nan, 2.0**-9], F32), (128, 1)))
    rounded = nki.simulate(copy)(trnsim.typed(np.full((128, 2), 250.0, F32), nl.float8_e4m3))
    assert np.isposinf(rounded).all()


def fp8_matmul(stationary_dtype, moving_dtype):
    def kernel(a_t, b):
        out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.psum)
        stationary = nl.copy(nl.load(a_t), dtype=stationary_dtype)
        moving = nl.copy(nl.load(b), dtype=moving_dtype)
        nisa.nc_matmul(dst=acc, stationary=stationary, moving=moving)  # the matmul
        nl.store(out, value=nl.copy(acc))
        return out
    return kernel


@pytest.mark.parametrize("chip", ["trn2", "trn3"])
def test_a_legacy_e4m3_matmul_runs_on_v3_and_v4(monkeypatch, chip):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", chip)
    rng = np.random.default_rng(7)
    # Small integers are exact in both fp8 types and their products sum exactly in fp32.
    a_t = rng.integers(-8, 9, (128, 128)).astype(F32)
    b = rng.integers(-8, 9, (128, 256)).astype(F32)
    got = nki.simulate(fp8_matmul(nl.float8_e4m3, nl.float8_e5m2))(a_t, b)
    np.testing.assert_array_equal(got, a_t.T @ b)


def test_the_ocp_e4m3_is_a_matmul_input_from_v4_on(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn2")
    kernel = fp8_matmul(nl.float8_e4m3fn, nl.float8_e5m2)
    expect_error_at(kernel, line_of(kernel, "# the matmul"),
                    r"float8_e4m3fn \(OCP\) matmul input needs NeuronCore-v4",
                    np.ones((128, 128), F32), np.ones((128, 256), F32))


def test_legacy_and_ocp_e4m3_do_not_mix_in_a_matmul(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    kernel = fp8_matmul(nl.float8_e4m3, nl.float8_e4m3fn)
    expect_error_at(kernel, line_of(kernel, "# the matmul"), r"cannot be mixed in one matmul",
                    np.ones((128, 128), F32), np.ones((128, 256), F32))
