"""The nki.isa instructions added after the first set (tensor_scalar_reduce, activate2,
nc_match_replace8, tensor_copy_predicated) against NumPy references written here, and one
error each at the kernel's own line."""

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim
from helpers import expect_error_at, line_of, on_tiles, uniform

F32 = np.float32


def sequential_sum(x):
    """Each row summed left to right in float32 (NumPy's cumsum is sequential, sum is not)."""
    return np.cumsum(x, axis=1, dtype=F32)[:, -1]


# tensor_scalar_reduce ----------------------------------------------------------------------

@pytest.mark.parametrize("reduce_op, ref, negate", [(nl.add, sequential_sum, False),
                                                    (nl.max, lambda r: r.max(axis=1), True),
                                                    (nl.minimum, lambda r: r.min(axis=1), False)])
def test_tensor_scalar_reduce_writes_the_result_and_its_reduction(reduce_op, ref, negate):
    a = uniform((128, 64), seed=30)
    col = uniform((128, 1), seed=31)

    def kernel(x, c):
        out = nl.ndarray((128, 65), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 65), dtype=nl.float32, buffer=nl.sbuf)
        # c - x, reduced into the last column
        nisa.tensor_scalar_reduce(dst=t[:, 0:64], data=nl.load(x), op0=nl.subtract,
                                  operand0=nl.load(c), reverse0=True, reduce_op=reduce_op,
                                  reduce_res=t[:, 64:65], reduce_res_negate=negate)
        nl.store(out, value=t)
        return out

    got = nki.simulate(kernel)(a, col)
    result = col - a
    np.testing.assert_array_equal(got[:, :64], result)
    np.testing.assert_array_equal(got[:, 64], -ref(result) if negate else ref(result))


def test_tensor_scalar_reduce_errors():
    def kernel(x):
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_reduce(dst=t, data=nl.load(x), op0=nl.add, operand0=1.0,  # bad
                                  reduce_op=nl.subtract, reduce_res=t[:, 0:1])
        nl.store(out, value=t)
        return out

    expect_error_at(kernel, line_of(kernel, "# bad"), r"reduce_op.*subtract is not allowed",
                    uniform((128, 8)))

    def accumulating(out, x):
        nisa.tensor_scalar_reduce(dst=out, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.add,
                                  reduce_cmd=nisa.reduce_cmd.reduce)

    with pytest.raises(NotImplementedError, match=r"reduce_cmd=reduce_cmd\.reduce"):
        on_tiles(accumulating, uniform((128, 8)))
    with pytest.raises(NotImplementedError, match="reduce_init"):
        on_tiles(lambda out, x: nisa.tensor_scalar_reduce(
            dst=out, data=x, op0=nl.add, operand0=1.0, reduce_op=nl.maximum, reduce_res=out[:, 0:1],
            reduce_init=0.0), uniform((128, 8)))


# activate2 ----------------------------------------------------------------------------------

def test_activate2_scales_shifts_then_applies_and_reduces():
    a = uniform((128, 48), -3.0, 3.0, seed=32)
    scale = uniform((128, 1), 0.5, 2.0, seed=33)

    def kernel(x, s):
        out = nl.ndarray((128, 98), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 98), dtype=nl.float32, buffer=nl.sbuf)
        data, column = nl.load(x), nl.load(s)
        # relu(0.25 - x * s) with the row maximum
        nisa.activate2(dst=t[:, 0:48], op=nl.relu, data=data, imm0=column, imm1=0.25,
                       op0=nl.multiply, op1=nl.subtract, reverse1=True, reduce_op=nl.maximum,
                       reduce_res=t[:, 48:49])
        # exp(x - 0.5) with the row sum (reduce_op=None sums)
        nisa.activate2(dst=t[:, 49:97], op=nl.exp, data=data, imm0=0.5, imm1=0.0,
                       op0=nl.subtract, op1=nl.bypass, reduce_res=t[:, 97:98])
        nl.store(out, value=t)
        return out

    got = nki.simulate(kernel)(a, scale)
    relu = np.maximum(F32(0.25) - a * scale, F32(0))
    np.testing.assert_array_equal(got[:, 0:48], relu)
    np.testing.assert_array_equal(got[:, 48], relu.max(axis=1))
    exp = np.exp((a - F32(0.5)).astype(np.float64)).astype(F32)
    np.testing.assert_allclose(got[:, 49:97], exp, rtol=2.0**-23)
    np.testing.assert_allclose(got[:, 97], sequential_sum(got[:, 49:97]), rtol=0)


def test_activate2_errors():
    def kernel(x):
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activate2(dst=t, op=nl.exp, data=nl.load(x), imm0=1.0, imm1=2.0,  # bad
                       op0=nl.add, op1=nl.multiply)
        nl.store(out, value=t)
        return out

    expect_error_at(kernel, line_of(kernel, "# bad"), r"\(add, multiply\) is not one of",
                    uniform((128, 8)))

    def bad_slope(x):  # prelu's slope is a number or a [P, 1] tile
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        slope = nl.full((128, 2), 0.5, dtype=nl.float32)
        nisa.activate2(dst=t, op=nl.prelu, data=nl.load(x), imm0=1.0, imm1=0.0,  # bad
                       op0=nl.multiply, op1=nl.bypass, relu_param=slope)
        nl.store(out, value=t)
        return out

    expect_error_at(bad_slope, line_of(bad_slope, "# bad"), r"relu_param", uniform((128, 8)))


# nc_match_replace8 --------------------------------------------------------------------------

def match_replace8(data, vals, imm):
    """NKI 0.6's rule: vals from the last to the first, each replacing the first element equal
    to it that no other value replaced; indices all ones when none is left."""
    out = data.copy()
    idx = np.full(vals.shape, 0xFFFFFFFF, np.uint32)
    for p in range(data.shape[0]):
        taken = np.zeros(data.shape[1], bool)
        for k in reversed(range(8)):
            hits = np.flatnonzero((data[p] == vals[p, k]) & ~taken)
            if hits.size:
                taken[hits[0]] = True
                idx[p, k] = hits[0]
        out[p, taken] = imm
    return out, idx


def test_nc_match_replace8_replaces_from_the_last_value():
    rng = np.random.default_rng(34)
    data = rng.integers(0, 12, (128, 40)).astype(F32)  # many duplicates
    vals = rng.integers(0, 14, (128, 8)).astype(F32)  # some absent (12, 13)
    vals[0] = [3, 8, 8, 8, 8, 8, 8, 8]
    data[0, :11] = [1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8]
    data[0, 11:] = 0

    def kernel(d, v):
        out = nl.ndarray((128, 48), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 48), dtype=nl.float32, buffer=nl.sbuf)
        idx = nl.ndarray((128, 8), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.nc_match_replace8(dst=t[:, 0:40], data=nl.load(d), vals=nl.load(v), imm=-1.0,
                               dst_idx=idx)
        nisa.tensor_copy(dst=t[:, 40:48], src=idx)
        nl.store(out, value=t)
        return out

    got = nki.simulate(kernel)(data, vals)
    want, idx = match_replace8(data, vals, F32(-1))
    np.testing.assert_array_equal(got[:, :40], want)
    # the indices through an fp32 copy: all ones rounds to 2^32
    np.testing.assert_array_equal(got[:, 40:], idx.astype(F32))
    np.testing.assert_array_equal(idx[0], [2, 10, 9, 8, 7, 6, 5, 4])  # NKI's documented example


def test_nc_match_replace8_errors():
    def kernel(d, v):
        out = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
        nisa.nc_match_replace8(dst=t, data=nl.load(d), vals=nl.load(v), imm=0.0)  # bad
        nl.store(out, value=t)
        return out

    expect_error_at(kernel, line_of(kernel, "# bad"), r"operand 'vals'.* needs 8",
                    uniform((128, 16)), uniform((128, 4)))


# tensor_copy_predicated ---------------------------------------------------------------------

@pytest.mark.parametrize("reverse_pred", [False, True])
def test_tensor_copy_predicated_keeps_dst_where_not_selected(reverse_pred):
    old, new = uniform((128, 32), seed=35), uniform((128, 32), seed=36)
    mask = (np.random.default_rng(37).integers(0, 4, (128, 32)) * 85).astype(np.uint8)

    def kernel(o, n, m):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=t[:, 0:32], src=nl.load(o))
        nisa.tensor_copy(dst=t[:, 32:64], src=nl.load(o))
        pred = nl.load(m)
        nisa.tensor_copy_predicated(dst=t[:, 0:32], src=nl.load(n), predicate=pred,
                                    reverse_pred=reverse_pred)
        nisa.tensor_copy_predicated(dst=t[:, 32:64], src=-7.5, predicate=pred,
                                    reverse_pred=reverse_pred)
        nl.store(out, value=t)
        return out

    got = nki.simulate(kernel)(old, new, mask)
    take = (mask != 0) != reverse_pred
    np.testing.assert_array_equal(got[:, :32], np.where(take, new, old))
    np.testing.assert_array_equal(got[:, 32:], np.where(take, F32(-7.5), old))


def test_tensor_copy_predicated_errors():
    def kernel(o, m):
        out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(o)
        nisa.tensor_copy_predicated(dst=t, src=1.0, predicate=nl.load(m))  # bad
        nl.store(out, value=t)
        return out

    expect_error_at(kernel, line_of(kernel, "# bad"),
                    r"operand 'predicate': dtype float32 is not allowed", uniform((128, 8)),
                    uniform((128, 8)))


# nc_matmul_mx tiles -------------------------------------------------------------------------

@pytest.mark.parametrize("tile_position, tile_size, error", [
    ((0, 0), (128, 128), None),  # a row tile as wide as the array: the untiled result
    ((0, 32), (128, 64), r"tiles rows only \(column 0"),
    ((0, 0), (128, 32), r"tiles rows only"),
    ((0,), (128,), r"both \(\) or both \(row, column\) pairs"),
])
def test_nc_matmul_mx_tiles_rows_only(monkeypatch, tile_position, tile_size, error):
    import os
    monkeypatch.syspath_prepend(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                             "..", "examples", "python"))
    import matmul_mxfp8

    def kernel(a_t, b):
        c = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.psum)
        a_words, a_scales = matmul_mxfp8._quantized(a_t, 64, "a")
        b_words, b_scales = matmul_mxfp8._quantized(b, 64, "b")
        nisa.nc_matmul_mx(dst=acc, stationary=a_words, moving=b_words,  # tiled
                          stationary_scale=a_scales, moving_scale=b_scales,
                          tile_position=tile_position, tile_size=tile_size)
        nl.store(c, value=nl.copy(acc))
        return c

    a = trnsim.typed(uniform((512, 64), seed=40), nl.bfloat16)
    b = trnsim.typed(uniform((512, 64), seed=41), nl.bfloat16)
    if error is not None:
        expect_error_at(kernel, line_of(kernel, "# tiled"), error, a, b)
        return
    got = nki.simulate(kernel)(a, b)
    np.testing.assert_array_equal(got, matmul_mxfp8.matmul_mxfp8(a, b))


# sendrecv -----------------------------------------------------------------------------------

def test_sendrecv_swaps_tiles_between_the_cores_of_a_logical_core():
    @nki.jit
    def kernel(x):
        out = nl.ndarray((256, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        me = nl.program_id(0)
        other = 1 - me
        mine = nl.load(x[128 * me:128 * me + 128])
        theirs = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.sendrecv(src=mine, dst=theirs, send_to_rank=other, recv_from_rank=other,
                      pipe_id=0, dma_engine=nisa.dma_engine.dma)
        nl.store(out[128 * me:128 * me + 128], value=theirs)
        return out

    x = uniform((256, 32), seed=70)
    np.testing.assert_array_equal(kernel[2](x), np.concatenate([x[128:], x[:128]]))


def test_sendrecv_errors():
    def outside(x):
        t = nl.load(x)
        u = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.sendrecv(t, u, send_to_rank=1, recv_from_rank=0, pipe_id=0)  # bad
        return None

    expect_error_at(outside, line_of(outside, "# bad"),
                    r"sendrecv send_to_rank 1: the logical core has programs 0 to 0",
                    uniform((128, 8)))

    def gpsimd(x):
        t = nl.load(x)
        u = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.sendrecv(t, u, 0, 0, 0, dma_engine=nisa.dma_engine.gpsimd_dma)
        return None

    with pytest.raises(NotImplementedError, match="gpsimd_dma"):
        nki.simulate(gpsimd)(uniform((128, 8)))
