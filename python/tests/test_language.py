"""nki.language's operations, declarations and views against NumPy references written here,
and the calling conventions: in-place arguments, returned tuples, errors."""

import re

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim
from helpers import bf16, on_tiles, uniform

F32 = np.float32


def unary(fn, x, out_shape=None, out_dtype=nl.float32):
    """Runs `fn` (tile -> tile) on trnsim and returns the result."""

    def kernel(a):
        t = fn(nl.load(a))
        out = nl.ndarray(out_shape or t.shape, dtype=out_dtype, buffer=nl.shared_hbm)
        nl.store(out, value=t if t.dtype == out_dtype else nl.copy(t, dtype=out_dtype))
        return out

    return nki.simulate(kernel)(x)


@pytest.mark.parametrize("name, ref", [("sum", np.sum), ("max", np.max), ("min", np.min),
                                       ("prod", np.prod)])
@pytest.mark.parametrize("axis", [1, 2, (1, 2)])
def test_reductions_over_free_axes(name, ref, axis):
    x = uniform((128, 4, 8), 0.5, 1.5, seed=1)
    got = unary(lambda t: getattr(nl, name)(t, axis=axis, keepdims=True), x)
    want = ref(x.astype(np.float64), axis=axis, keepdims=True)
    if name in ("max", "min"):
        np.testing.assert_array_equal(got, want.astype(F32))
    else:  # fp32 accumulation over <= 32 terms
        np.testing.assert_allclose(got, want, rtol=32 * 2.0**-23)


def test_mean_and_var_over_all_free_axes():
    x = uniform((128, 256), seed=2)
    np.testing.assert_allclose(unary(lambda t: nl.mean(t, axis=1), x)[:, 0],
                               x.astype(np.float64).mean(axis=1), atol=256 * 2.0**-24)
    np.testing.assert_allclose(unary(lambda t: nl.var(t, axis=1), x)[:, 0],
                               x.astype(np.float64).var(axis=1), rtol=1e-5)


def test_all_and_logical_not():
    x = (np.random.default_rng(3).uniform(size=(128, 16)) > 0.1).astype(F32)
    np.testing.assert_array_equal(unary(lambda t: nl.all(t, axis=1), x)[:, 0],
                                  x.all(axis=1).astype(F32))
    np.testing.assert_array_equal(unary(nl.logical_not, x), (x == 0).astype(F32))


def test_negative_and_elementwise_tile_operations():
    x = uniform((128, 64), seed=4)
    np.testing.assert_array_equal(unary(nl.negative, x), -x)
    np.testing.assert_array_equal(unary(lambda t: nl.multiply(nl.add(t, 1.0), t), x),
                                  (x + F32(1)) * x)


@pytest.mark.parametrize("y_kind", ["number", "column", "tile"])
def test_where(y_kind):
    x = uniform((128, 32), seed=5)
    cond = (uniform((128, 32), seed=6) > 0).astype(F32)
    y = {"number": F32(7.0), "column": uniform((128, 1), seed=7),
         "tile": uniform((128, 32), seed=8)}[y_kind]

    def kernel(c, a, *rest):
        other = 7.0 if y_kind == "number" else nl.load(rest[0])
        out = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.where(nl.load(c), nl.load(a), other))
        return out

    args = (cond, x) if y_kind == "number" else (cond, x, y)
    np.testing.assert_array_equal(nki.simulate(kernel)(*args), np.where(cond != 0, x, y))


def test_where_of_two_tiles_is_exact_for_any_dtype():
    rng = np.random.default_rng(23)
    x = rng.integers(-2**30, 2**30, (128, 32), dtype=np.int32)  # beyond float32's 2**24
    y = rng.integers(-2**30, 2**30, (128, 32), dtype=np.int32)
    cond = rng.integers(0, 2, (128, 32), dtype=np.int32)

    def kernel(c, a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.where(nl.load(c), nl.load(a), nl.load(b)))
        return out

    np.testing.assert_array_equal(nki.simulate(kernel)(cond, x, y), np.where(cond != 0, x, y))
    zeros = np.full((128, 32), -0.0, F32)  # -0.0 stays -0.0
    got = nki.simulate(kernel)(cond.astype(F32), zeros, zeros)
    assert np.signbit(got).all()


def test_softmax_matmul_and_transpose():
    x = uniform((128, 512), -4, 4, seed=9)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(unary(nl.softmax, x), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-9)
    a, b = uniform((128, 128), seed=10), uniform((128, 256), seed=11)

    def kernel(x_, y_):
        out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.copy(nl.matmul(nl.load(x_), nl.load(y_))))  # x @ y
        return out

    np.testing.assert_allclose(nki.simulate(kernel)(a, b), a.astype(np.float64) @ b,
                               atol=128 * 2.0**-23)
    np.testing.assert_array_equal(unary(nl.transpose, a), a.T)


def test_declarations():
    def kernel(x):
        out = nl.ndarray((128, 4, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        parts = [nl.zeros((128, 8), nl.float32), nl.ones((128, 8), nl.float32),
                 nl.full((128, 8), 2.5, nl.float32), nl.zeros_like(t)]
        for i, p in enumerate(parts):
            nl.store(out[:, i, :], value=p)
        assert nl.is_sbuf(t) and nl.is_on_chip(t.buffer) and nl.is_hbm(out)
        assert not nl.is_psum(nl.sbuf) and nl.empty_like(t).shape == t.shape
        return out

    got = nki.simulate(kernel)(np.ones((128, 8), F32))
    np.testing.assert_array_equal(got[:, 0], 0)
    np.testing.assert_array_equal(got[:, 1], 1)
    np.testing.assert_array_equal(got[:, 2], 2.5)
    np.testing.assert_array_equal(got[:, 3], 0)


def test_broadcast_to_along_free_dims_and_across_partitions():
    row = uniform((1, 64), seed=12)
    col = uniform((128, 1), seed=13)
    np.testing.assert_array_equal(unary(lambda t: nl.broadcast_to(t, (128, 64)), row),
                                  np.broadcast_to(row, (128, 64)))
    np.testing.assert_array_equal(unary(lambda t: nl.broadcast_to(t, (128, 64)), col),
                                  np.broadcast_to(col, (128, 64)))
    np.testing.assert_array_equal(unary(lambda t: nl.expand_dims(t, 1), col, out_shape=(128, 1, 1)),
                                  col.reshape(128, 1, 1))


def test_load_transpose2d_and_load_with_a_cast():
    x = uniform((64, 128), seed=14)

    def kernel(a):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.copy(nl.load_transpose2d(a, dtype=nl.bfloat16), nl.float32))
        return out

    np.testing.assert_array_equal(nki.simulate(kernel)(x), bf16(x.T))


def test_views_reshape_permute_slice_and_ap():
    x = uniform((128, 64), seed=15)

    def kernel(a):
        out = nl.ndarray((128, 4, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        # [128, 64] -> [128, 16, 4] -> [128, 4, 16]: a column-block transpose in one copy
        u = nl.ndarray((128, 4, 16), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=u, src=t.reshape((128, 16, 4)).permute((0, 2, 1)))
        nl.store(out, value=u)
        return out

    np.testing.assert_array_equal(nki.simulate(kernel)(x),
                                  x.reshape(128, 16, 4).transpose(0, 2, 1))

    def pattern(a):
        out = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        # rows 64.. of the HBM tensor, every other column, by a raw access pattern
        t = nl.load(a.ap(pattern=[[64, 64], [2, 32]], offset=64 * 64))
        nl.store(out, value=t)
        return out

    np.testing.assert_array_equal(nki.simulate(pattern)(x), x[64:, ::2])

    def bits(a):
        out = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.shared_hbm)
        t = nl.load(a)
        as_int = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=as_int.view(nl.float32), src=t)
        nl.store(out, value=as_int)
        src = t.ap(pattern=[[64, 128], [1, 64]], dtype=nl.int32)  # the same bytes as int32
        assert src.dtype == nl.int32 and src.shape == (128, 64)
        return out

    np.testing.assert_array_equal(nki.simulate(bits)(x), x.view(np.int32))


def test_an_ap_outside_the_tensor_is_an_error_at_the_kernel_line():
    def kernel(a):
        t = nl.load(a.ap(pattern=[[64, 128], [1, 65]]))  # one element past each row's end
        out = nl.ndarray((128, 65), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=t)
        return out

    with pytest.raises(RuntimeError, match=r"test_language\.py:\d+:\d+: error: \.ap\(\): the "
                                           r"pattern reaches elements \[0, 8192\]"):
        nki.simulate(kernel)(uniform((128, 64)))


def test_indexing_with_negative_integers_numpy_integers_and_ellipsis():
    x = uniform((128, 4, 16), seed=24)

    def kernel(a):
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        nl.store(out, value=t[..., -1, np.int64(8):])  # [:, 3, 8:16]
        return out

    np.testing.assert_array_equal(nki.simulate(kernel)(x), x[:, -1, 8:])

    def reversed_view(a):
        out = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(a)[:, 0, ::-1])  # refused

    with pytest.raises(RuntimeError, match=r"test_language\.py:\d+:\d+: error: slice step -1"):
        nki.simulate(reversed_view)(x)
    with pytest.raises(IndexError, match=r"at most one '\.\.\.'"):
        nki.simulate(lambda a: nl.load(a)[..., ...])(x)


def test_arguments_written_in_place_are_copied_back():
    def add_one_in_place(a, b):
        t = nl.load(a)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
        nl.store(a, value=t)  # written in place
        out = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(b))
        return out

    a = uniform((128, 16), seed=16)
    b = uniform((128, 16), seed=17)
    a_before, b_before = a.copy(), b.copy()
    got = nki.simulate(add_one_in_place)(a, b)
    np.testing.assert_array_equal(a, a_before + F32(1))
    np.testing.assert_array_equal(b, b_before)  # only read: untouched
    np.testing.assert_array_equal(got, b_before)


def test_a_kernel_returns_a_tuple_and_takes_a_non_contiguous_array():
    def split(a):
        lo = nl.ndarray((128, 8), dtype=a.dtype, buffer=nl.shared_hbm)
        hi = nl.ndarray((128, 8), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        nl.store(lo, value=t[:, 0:8])
        nl.store(hi, value=t[:, 8:16])
        return lo, hi

    x = uniform((16, 128), seed=18).T  # a transposed (Fortran-order) view
    lo, hi = nki.simulate(split)(x)
    np.testing.assert_array_equal(lo, x[:, :8])
    np.testing.assert_array_equal(hi, x[:, 8:])


def test_a_kernel_returning_something_else_is_a_type_error():
    def bad(a):
        return 3

    with pytest.raises(TypeError, match="returned 3"):
        nki.simulate(bad)(np.zeros((128, 4), F32))


def test_too_many_partitions_names_the_line_and_the_interpreter_goes_on():
    def too_tall(a):
        t = nl.ndarray((256, 4), dtype=nl.float32, buffer=nl.sbuf)  # the line named
        nl.store(a, value=t)

    with pytest.raises(RuntimeError, match=r"test_language\.py:\d+:\d+: error: .*256"):
        nki.simulate(too_tall)(np.zeros((256, 4), F32))
    np.testing.assert_array_equal(
        on_tiles(lambda out, x: nisa.tensor_copy(dst=out, src=x), np.ones((128, 4), F32)), 1)


def test_program_ndim_follows_the_launch():
    seen = []

    @nki.jit
    def kernel(a):
        seen.append(nl.program_ndim())
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        rows = nl.ds(nl.program_id(0) * (128 // nl.num_programs()), 128 // nl.num_programs())
        nl.store(out[rows, :], value=nl.load(a[rows, :]))
        return out

    kernel(np.zeros((128, 4), F32))
    kernel[2](np.zeros((128, 4), F32))
    assert seen == [0, 1, 1]
    assert trnsim.last_report() is not None


def test_bf16_inputs_and_outputs_as_their_stored_words():
    words = np.random.default_rng(19).integers(0, 0x7F80, (128, 32), dtype=np.uint16)  # finite

    def copy_and_add_one(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        nl.store(out, value=t)  # moved bit for bit
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
        nl.store(x, value=t)  # in place: back into the caller's words
        return out

    arg = trnsim.bits(words.copy(), nl.bfloat16)
    try:
        trnsim.set_options(bit_outputs=True)
        got = nki.simulate(copy_and_add_one)(arg)
    finally:
        trnsim.reset_options()
    assert got.dtype == np.uint16
    np.testing.assert_array_equal(got, words)
    values = (words.astype(np.uint32) << 16).view(np.float32)
    want = (bf16(values + F32(1)).view(np.uint32) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(arg.array, want)
    with pytest.raises(TypeError, match="trnsim.bits of bfloat16 takes an array of uint16"):
        nki.simulate(copy_and_add_one)(trnsim.bits(words.astype(np.int16), nl.bfloat16))


def test_float32_inputs_as_words_come_back_as_words():
    words = np.random.default_rng(22).integers(0, 0x7E000000, (128, 8), dtype=np.uint32)

    def double_in_place(x):
        t = nl.load(x)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        nl.store(x, value=t)

    arg = trnsim.bits(words.copy(), nl.float32)
    nki.simulate(double_in_place)(arg)
    assert arg.array.dtype == np.uint32
    np.testing.assert_array_equal(arg.array.view(np.float32), words.view(np.float32) * F32(2))


@pytest.mark.parametrize("y_shape", [(128, 64), (128, 1), (1, 64), (1, 1)])
def test_binary_tile_operations_broadcast_like_numpy(y_shape):
    x = uniform((128, 64), seed=20)
    y = uniform(y_shape, seed=21)

    def kernel(a, b):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.subtract(nl.load(a), nl.load(b)))
        return out

    np.testing.assert_array_equal(nki.simulate(kernel)(x, y), x - y)


def test_mixed_dtypes_promote():
    seen = {}

    def kernel(a):
        t32 = nl.load(a)
        t16 = nl.copy(t32, dtype=nl.bfloat16)
        h16 = nl.copy(t32, dtype=nl.float16)
        i32 = nl.copy(t32, dtype=nl.int32)
        seen["bf16+fp32"] = nl.add(t16, t32).dtype
        seen["bf16+fp16"] = nl.add(t16, h16).dtype
        seen["int32+bf16"] = nl.add(i32, t16).dtype
        seen["bf16*number"] = nl.multiply(t16, 3.0).dtype
        total = nl.add(t16, t32)
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=total)
        return out

    x = uniform((128, 16), seed=22)
    got = nki.simulate(kernel)(x)
    assert seen == {"bf16+fp32": nl.float32, "bf16+fp16": nl.float32,
                    "int32+bf16": nl.bfloat16, "bf16*number": nl.bfloat16}
    np.testing.assert_array_equal(got, bf16(x) + x)  # the fp32 sum of the exact inputs


def test_sbuf_overflow_lists_the_live_tiles_at_their_python_lines():
    def too_much(x):
        out = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        tiles = []
        for i in range(8):
            t = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.sbuf, name=f"big{i}")
            nisa.memset(dst=t, value=1.0)
            tiles.append(t)
        acc = nl.zeros((128, 4), nl.float32)  # no room left: the error's line
        for t in tiles:
            nisa.tensor_tensor(dst=acc, data1=acc, data2=t[:, 0:4], op=nl.add)
        nl.store(out, value=acc)
        return out

    with pytest.raises(RuntimeError) as caught:
        nki.simulate(too_much)(np.zeros((128, 4), F32))
    message = str(caught.value)
    assert "error: SBUF tile" in message and "does not fit" in message
    for i in range(8):
        assert re.search(rf"test_language\.py:\d+:\d+: note: live tile 'big{i}'", message)


def test_a_race_between_the_cores_of_a_logical_core_names_both_lines():
    @nki.jit
    def both_write_everything(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(x))  # every program writes all of out
        return out

    with pytest.raises(RuntimeError, match=r"(?s)test_language\.py:\d+:\d+: error: WAW hazard.*"
                                           r"test_language\.py:\d+:\d+: note: the earlier"):
        both_write_everything[2](np.zeros((128, 4), F32))


def test_identity_rms_norm_rand_and_dropout():
    x = uniform((128, 256), seed=23)
    w = uniform((1, 256), 0.5, 1.5, seed=24)

    def kernel(a, weight):
        out = nl.ndarray((128, 4, 256), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        nl.store(out[:, 0, 0:128], value=nl.shared_identity_matrix(128, dtype=nl.float32))
        nl.store(out[:, 1, :], value=nl.rms_norm(t, nl.load(weight), axis=1, n=256))
        nl.store(out[:, 2, :], value=nl.rand((128, 256), nl.float32))
        nl.store(out[:, 3, :], value=nl.dropout(t, 0.25))
        return out

    got = nki.simulate(kernel)(x, w)
    np.testing.assert_array_equal(got[:, 0, :128], np.eye(128, dtype=F32))
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt((x64 * x64).sum(axis=1, keepdims=True) / 256 + 1e-6) * w
    np.testing.assert_allclose(got[:, 1, :], want, rtol=1e-5)
    r = got[:, 2, :]
    assert r.min() >= 0 and r.max() < 1 and abs(r.mean() - 0.5) < 0.01
    dropped = got[:, 3, :] == 0
    kept = ~dropped
    np.testing.assert_array_equal(got[:, 3, :][kept], x[kept])
    assert abs(dropped.mean() - 0.25) < 0.02


def test_nki_objects_carry_configuration_into_a_kernel():
    class Config(nl.NKIObject):
        pass

    def kernel(a, config):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        assert isinstance(a, nl.NkiTensor)
        nl.store(out, value=nl.multiply(nl.load(a), config.scale))
        return out

    x = uniform((128, 8), seed=25)
    np.testing.assert_array_equal(nki.simulate(kernel)(x, Config(scale=2.0)), x * F32(2))


def test_no_reorder_keeps_a_blocks_order():
    def kernel(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        y = nl.zeros(a.shape, nl.float32)
        first = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        second = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        with nl.no_reorder():
            nisa.activation(dst=first, op=nl.exp, data=x, name="late")  # waits for the load
            nisa.activation(dst=second, op=nl.exp, data=y, name="early")
        nl.store(out, value=nl.add(first, second))
        return out

    x = uniform((128, 512), seed=26)
    got = nki.simulate(kernel)(x)
    np.testing.assert_allclose(got, np.exp(x.astype(np.float64)) + 1.0, rtol=1e-6)
    asm = trnsim.last_run().assembly()
    assert asm.index('"late"') < asm.index('"early"')


def test_tile_size_is_the_chips_inside_and_outside_a_kernel():
    assert nl.tile_size.pmax == 128 and nl.tile_size.gemm_moving_fmax == 512
    assert nl.tile_size.psum_bank_fmax_bytes == 2048
    inside = []

    def kernel(a):
        inside.append((nl.tile_size.pmax, nl.tile_size.sbuf_fmax_bytes))
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(a))
        return out

    nki.simulate(kernel)(np.zeros((128, 4), F32))
    assert inside == [(128, nl.tile_size.sbuf_fmax_bytes)]
    with pytest.raises(AttributeError, match="no field 'not_a_limit'"):
        nl.tile_size.not_a_limit  # noqa: B018


def test_typing_annotations_annotate():
    import nki.typing as nt

    def kernel(a: nt.tensor[128, 8], b: nt.mutable_tensor):
        nl.store(b, value=nl.load(a))

    a, b = uniform((128, 8), seed=27), np.zeros((128, 8), F32)
    assert nki.simulate(kernel)(a, b) is None
    np.testing.assert_array_equal(b, a)


def test_an_x4_packed_output_comes_back_as_its_values():
    def copy_words(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(x))
        return out

    words = np.full((128, 4), 0x38383838, np.uint32)  # four e4m3 1.0 values per word
    got = nki.simulate(copy_words)(trnsim.bits(words, nl.float8_e4m3fn_x4))
    assert got.shape == (128, 16) and got.dtype == F32
    np.testing.assert_array_equal(got, 1.0)
