"""nki.language's rounding, remainder, tangent, bitwise NOT and derivative activations, nl.prelu
with activate2's relu_param, nl.bool_, and nki.isa's get_nc_sub_version and
NkiValidationError, against NumPy references written here."""

import math

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim
from helpers import on_tiles, uniform

F32 = np.float32


def unary(fn, x, out_dtype=nl.float32):
    """Runs `fn` (tile -> tile) on trnsim and returns the stored result."""

    def kernel(a):
        t = fn(nl.load(a))
        out = nl.ndarray(t.shape, dtype=out_dtype, buffer=nl.shared_hbm)
        nl.store(out, value=t if t.dtype == out_dtype else nl.copy(t, dtype=out_dtype))
        return out

    return nki.simulate(kernel)(x)


def binary(fn, x, y, out_dtype=nl.float32):
    """Runs `fn` (tile, tile -> tile) on trnsim and returns the stored result."""

    def kernel(a, b):
        t = fn(nl.load(a), nl.load(b))
        out = nl.ndarray(t.shape, dtype=out_dtype, buffer=nl.shared_hbm)
        nl.store(out, value=t)
        return out

    return nki.simulate(kernel)(x, y)


def finite_values(seed):
    """[128, 64] fp32: uniform in [-1000, 1000) with halves, integers, tiny and huge values."""
    x = uniform((128, 64), -1000.0, 1000.0, seed=seed)
    special = [3.7, -3.7, 3.2, -3.2, 0.5, -0.5, 2.0, -2.0, -1e-30, 1e-30, 0.0, -0.0,
               8388607.5, -8388607.5, 16777215.0, -3e38, 3e38, 1e-45, -1e-45, 1.5, -2.5]
    x[0, :len(special)] = special
    return x


@pytest.mark.parametrize("name, ref", [("floor", np.floor), ("ceil", np.ceil),
                                       ("trunc", np.trunc)])
def test_rounding_to_integral_values_is_exact_for_finite_values(name, ref):
    x = finite_values(1)
    got = unary(getattr(nl, name), x)
    np.testing.assert_array_equal(got, ref(x))  # -0 and +0 compare equal here
    # dtype= casts the integral values (exactly, they are integers) into an integer tile.
    small = uniform((128, 32), -100.0, 100.0, seed=2)
    got = unary(lambda t: getattr(nl, name)(t, dtype=nl.int32), small, out_dtype=nl.int32)
    np.testing.assert_array_equal(got, ref(small).astype(np.int32))


def test_rounding_zeros_and_infinities_follow_the_lowering():
    """x - mod(x, +-1), x - fmod(x, 1): a zero result is +0 except floor(-0) = -0, where NumPy
    keeps x's sign (ceil(-0.5) = -0); +-inf gives NaN (inf - NaN). docs/python.md says so."""
    x = np.zeros((128, 4), F32)
    x[:, 0] = -0.5
    x[:, 1] = -0.0
    x[:, 2] = np.inf
    x[:, 3] = -np.inf
    for name, zero_signs in (("floor", (True, True)), ("ceil", (False, False)),
                             ("trunc", (False, False))):
        got = unary(getattr(nl, name), x)
        if name != "floor":  # floor(-0.5) is -1
            assert np.signbit(got[0, 0]) == zero_signs[0] and got[0, 0] == 0, name
        assert np.signbit(got[0, 1]) == zero_signs[1] and got[0, 1] == 0, name
        assert np.isnan(got[:, 2:]).all(), name


def mod_operands(seed):
    """Dividends and divisors of both signs with zeros, infinities and NaN among them."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-50, 50, (128, 48)).astype(F32)
    y = rng.choice(np.array([-7.5, -3, -1, -0.25, 0.25, 1, 2.5, 3, 1e-3], F32), (128, 48))
    x[0, :12] = [5.5, -5.5, 5.5, -5.5, 4, -4, 4, -0.0, 3e38, -1e-30, np.inf, np.nan]
    y[0, :12] = [2, 2, -2, -2, 2, 2, -2, 1, 7, 1, 1, 1]
    x[1, :5] = [1, -1, 1, 0.0, -0.0]
    y[1, :5] = [np.inf, np.inf, 0.0, 0.0, np.nan]
    return x, y


@pytest.mark.parametrize("name, ref", [("mod", np.mod), ("fmod", np.fmod)])
@np.errstate(invalid="ignore", divide="ignore")
def test_mod_and_fmod_match_numpy_bit_for_bit(name, ref):
    x, y = mod_operands(3)
    want = ref(x, y)
    got = binary(getattr(nl, name), x, y)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # zeros' signs too
    # A number on either side: a tensor_scalar (reversed when the number is the dividend).
    np.testing.assert_array_equal(unary(lambda t: getattr(nl, name)(t, -2.5), x),
                                  ref(x, F32(-2.5)))
    np.testing.assert_array_equal(unary(lambda t: getattr(nl, name)(7.0, t), y),
                                  ref(F32(7.0), y))


def test_mod_of_integers_and_as_an_isa_operator():
    rng = np.random.default_rng(4)
    x = rng.integers(-1000, 1000, (128, 32), dtype=np.int32)
    y = rng.integers(1, 20, (128, 32), dtype=np.int32) * rng.choice([-1, 1], (128, 32))
    y = y.astype(np.int32)
    np.testing.assert_array_equal(binary(nl.mod, x, y, out_dtype=nl.int32), np.mod(x, y))
    np.testing.assert_array_equal(binary(nl.fmod, x, y, out_dtype=nl.int32), np.fmod(x, y))

    def body(out, a):  # nl.mod as the op= of an instruction
        nisa.tensor_scalar(dst=out, data=a, op0=nl.mod, operand0=3.0, op1=nl.fmod, operand1=2.0)

    xf = uniform((128, 16), -20, 20, seed=5)
    np.testing.assert_array_equal(on_tiles(body, xf), np.fmod(np.mod(xf, F32(3)), F32(2)))


def test_tan_against_numpy():
    x = uniform((128, 64), -1.4, 1.4, seed=6)
    x[0, :3] = [0.0, -0.0, 1e-30]
    got = unary(nl.tan, x)
    np.testing.assert_allclose(got, np.tan(x.astype(np.float64)), rtol=1e-6, atol=1e-37)
    assert np.signbit(got[0, 1])  # tan(-0) = -0
    # Beyond (-pi, pi) through fmod(x, pi): the reduction's error is that of fp32 pi.
    wide = uniform((128, 64), -10.0, 10.0, seed=7)
    wide = np.where(np.abs(np.cos(wide.astype(np.float64))) > 0.1, wide, F32(0.5))
    np.testing.assert_allclose(unary(nl.tan, wide), np.tan(wide.astype(np.float64)),
                               rtol=1e-5, atol=1e-6)
    special = np.array([[np.inf, -np.inf, np.nan, 0.0]] * 128, F32)
    got = unary(nl.tan, special)
    assert np.isnan(got[:, :3]).all() and (got[:, 3] == 0).all()
    # dtype= rounds the result once into it.
    got = unary(lambda t: nl.tan(t, dtype=nl.float16), x, out_dtype=nl.float16)
    np.testing.assert_allclose(got, np.tan(x.astype(np.float64)), rtol=1e-3, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int16, np.uint16, np.int8, np.uint8])
def test_invert_is_numpys(dtype):
    info = np.iinfo(dtype)
    x = np.random.default_rng(8).integers(info.min, info.max, (128, 16), dtype=dtype,
                                          endpoint=True)
    x[0, :3] = [info.min, info.max, 0]
    nki_dtype = getattr(nl, np.dtype(dtype).name)
    np.testing.assert_array_equal(unary(nl.invert, x, out_dtype=nki_dtype), np.invert(x))

    def body(out, a):  # nl.invert as an op= constant: the operand is ignored
        nisa.tensor_scalar(dst=out, data=a, op0=nl.invert, operand0=0)

    np.testing.assert_array_equal(on_tiles(body, x, out_dtype=nki_dtype), np.invert(x))


def test_invert_of_a_float_tile_is_a_validation_error_at_the_kernel_line():
    x = uniform((128, 8), seed=9)
    with pytest.raises(nisa.NkiValidationError, match=r"test_language_math\.py:\d+"):
        unary(nl.invert, x)
    assert nisa.NkiValidationError is trnsim.Error


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # no overflow for large |z|


DERIVATIVES = {
    "gelu_dx": lambda x: (0.5 * np.vectorize(math.erfc)(-x / math.sqrt(2.0))
                          + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)),
    "gelu_apprx_sigmoid_dx": lambda x: (_sigmoid(1.702 * x)
                                        + 1.702 * x * _sigmoid(1.702 * x) * _sigmoid(-1.702 * x)),
    "silu_dx": lambda x: _sigmoid(x) * (1.0 + x * _sigmoid(-x)),
    "erf_dx": lambda x: 2.0 / math.sqrt(math.pi) * np.exp(-x * x),
}


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_derivative_activations(name):
    x = uniform((128, 64), -6.0, 6.0, seed=10)
    want = DERIVATIVES[name](x.astype(np.float64))
    # A tile operation (ScalarE activation) and the op= of nisa.activation with a scale.
    np.testing.assert_allclose(unary(getattr(nl, name), x), want, rtol=2e-6, atol=1e-30)

    def body(out, a):
        nisa.activation(dst=out, op=getattr(nl, name), data=a, scale=0.5)

    np.testing.assert_allclose(on_tiles(body, x),
                               DERIVATIVES[name]((x * F32(0.5)).astype(np.float64)),
                               rtol=2e-6, atol=1e-30)
    # The slope of the derivative itself: a finite difference of the function.
    h = 1e-4
    base = x.astype(np.float64)[:4, :8]
    fn = {"gelu_dx": lambda v: 0.5 * v * np.vectorize(math.erfc)(-v / math.sqrt(2.0)),
          "gelu_apprx_sigmoid_dx": lambda v: v * _sigmoid(1.702 * v),
          "silu_dx": lambda v: v * _sigmoid(v),
          "erf_dx": np.vectorize(math.erf)}[name]
    np.testing.assert_allclose((fn(base + h) - fn(base - h)) / (2 * h), want[:4, :8],
                               rtol=1e-6, atol=1e-8)


def test_prelu_is_an_activate2_operator_with_relu_param():
    x = uniform((128, 64), -4.0, 4.0, seed=11)
    x[0, :4] = [-0.0, 0.0, -np.inf, np.nan]
    slopes = uniform((128, 1), -1.0, 1.0, seed=12)

    def with_tile(out, a, s):
        nisa.activate2(dst=out, op=nl.prelu, data=a, imm0=0.0, imm1=0.0, op0=None, op1=None,
                       relu_param=s)

    with np.errstate(invalid="ignore"):
        want = np.where(x > 0, x, slopes * x)
    np.testing.assert_array_equal(on_tiles(with_tile, x, slopes), want)

    def with_number(out, a):  # scale, then prelu with slope 0.1
        nisa.activate2(dst=out, op=nl.prelu, data=a, imm0=2.0, imm1=0.0, op0=nl.multiply,
                       op1=nl.bypass, relu_param=0.1)

    y = x * F32(2)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(on_tiles(with_number, x), np.where(y > 0, y, F32(0.1) * y))

    def in_activation(out, a):  # nisa.activation has no relu_param: the slope is 0
        nisa.activation(dst=out, op=nl.prelu, data=a)

    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(on_tiles(in_activation, x[1:]), np.where(x[1:] > 0, x[1:],
                                                                                F32(0) * x[1:]))
    with pytest.raises(TypeError):
        nl.prelu(x)  # an operator constant, not a tile operation (as NKI's)


def test_bool_is_a_byte_of_zero_or_one():
    assert nl.bool_ == nl.uint8
    a = uniform((128, 32), seed=13)
    b = uniform((128, 32), seed=14)
    got = binary(lambda s, t: nl.greater(s, t, dtype=nl.bool_), a, b, out_dtype=nl.bool_)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, (a > b).astype(np.uint8))

    def kernel(mask, x):  # a NumPy bool array passes as nl.bool_, bit for bit
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.where(nl.load(mask), nl.load(x), 0.0))
        return out

    mask = np.random.default_rng(15).uniform(size=(128, 32)) > 0.5
    np.testing.assert_array_equal(nki.simulate(kernel)(mask, a), np.where(mask, a, F32(0)))


def test_get_nc_sub_version_is_the_first_revision():
    versions = {}

    def kernel(a):
        versions["sub"] = nisa.get_nc_sub_version()
        versions["gen"] = nisa.get_nc_version()
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(a))
        return out

    nki.simulate(kernel)(uniform((128, 4), seed=16))
    assert versions == {"sub": 0, "gen": nisa.nc_version.gen4}
    assert nisa.get_nc_sub_version() == 0


@pytest.mark.parametrize("fn, ref", [(nl.sin, np.sin), (nl.cos, np.cos)])
def test_sin_and_cos_take_any_finite_input(fn, ref):
    # ScalarE's sin and cos take [-pi, pi]; nl.sin/nl.cos reduce modulo 2 pi first.
    x = uniform((128, 64), -50.0, 50.0, seed=30)
    x[0, :4] = [0.0, -0.0, 1e-30, np.float32(np.pi)]
    got = unary(fn, x)
    # A few ulp of 1: the reduction is exact, the half-angle identities round a few times.
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=0, atol=2e-6)
    if fn is nl.sin:
        assert np.signbit(got[0, 1]) and got[0, 2] == np.float32(1e-30)  # -0 and tiny stay
    assert np.isnan(unary(fn, np.full((128, 1), np.inf, np.float32))).all()
