"""nki.isa operations against NumPy references written here: values (bit-exact where the
operation is exact in fp32), partition offsets, strided and broadcast views, dtypes."""

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from helpers import bf16, on_tiles, uniform

F32 = np.float32


@pytest.mark.parametrize("op, ref", [(nl.add, np.add), (nl.subtract, np.subtract),
                                     (nl.multiply, np.multiply), (nl.maximum, np.maximum),
                                     (nl.minimum, np.minimum)])
def test_tensor_tensor_is_exact(op, ref):
    a, b = uniform((128, 256), seed=1), uniform((128, 256), seed=2)
    got = on_tiles(lambda out, x, y: nisa.tensor_tensor(dst=out, data1=x, data2=y, op=op), a, b)
    np.testing.assert_array_equal(got, ref(a, b))


def test_tensor_tensor_rounds_once_into_bf16():
    a, b = uniform((128, 64), seed=3), uniform((128, 64), seed=4)
    got = on_tiles(lambda out, x, y: nisa.tensor_tensor(dst=out, data1=x, data2=y, op=nl.add),
                   a, b, out_dtype=nl.bfloat16)
    np.testing.assert_array_equal(got, bf16(a + b))


def test_views_partition_offset_stride_and_broadcast():
    a = uniform((128, 64), seed=5)
    col = uniform((128, 1), seed=6)

    def body(out, x, c):
        # rows 64..127 of x, every other column, times a column broadcast along the free dim
        nisa.tensor_tensor(dst=out, data1=x[64:128, 0:64:2], data2=c[64:128, :].broadcast(1, 32),
                           op=nl.multiply)

    got = on_tiles(body, a, col, out_shape=(64, 32))
    np.testing.assert_array_equal(got, a[64:128, 0:64:2] * col[64:128])


def test_tensor_scalar_two_ops_reverse_and_a_column_operand():
    a = uniform((128, 32), seed=7)
    col = uniform((128, 1), 0.5, 2.0, seed=8)

    def body(out, x, c):
        # (2 - x) * c
        nisa.tensor_scalar(dst=out, data=x, op0=nl.subtract, operand0=2.0, reverse0=True,
                           op1=nl.multiply, operand1=c)

    np.testing.assert_array_equal(on_tiles(body, a, col), (F32(2) - a) * col)


def test_scalar_tensor_tensor_with_reverse():
    a, b = uniform((128, 32), seed=9), uniform((128, 32), seed=10)

    def body(out, x, y):
        # y - (x * 3)
        nisa.scalar_tensor_tensor(dst=out, data=x, op0=nl.multiply, operand0=3.0,
                                  op1=nl.subtract, operand1=y, reverse1=True)

    np.testing.assert_array_equal(on_tiles(body, a, b), b - a * F32(3))


@pytest.mark.parametrize("axis, keepdims", [(1, False), ((1, 2), False), (2, True), (1, True)])
def test_tensor_reduce_over_any_free_axes(axis, keepdims):
    a = uniform((128, 8, 16), seed=11)
    want = np.max(a, axis=axis, keepdims=keepdims)
    shape = want.shape if want.ndim >= 2 else want.shape + (1,)

    def body(out, x):
        nisa.tensor_reduce(dst=out, op=nl.maximum, data=x, axis=axis, negate=True,
                           keepdims=keepdims)

    np.testing.assert_array_equal(on_tiles(body, a, out_shape=shape), -want.reshape(shape))


def test_tensor_reduce_over_the_partition_axis_is_an_error_at_the_kernel_line():
    def body(out, x):
        nisa.tensor_reduce(dst=out, op=nl.add, data=x, axis=0)  # the line named

    with pytest.raises(RuntimeError, match=r"test_isa\.py:\d+:\d+: error: tensor_reduce axis 0"):
        on_tiles(body, uniform((128, 8)), out_shape=(128, 1))


def test_tensor_partition_reduce():
    a = uniform((64, 32), seed=12)
    got = on_tiles(lambda out, x: nisa.tensor_partition_reduce(dst=out, op=nl.maximum, data=x),
                   a, out_shape=(1, 32))
    np.testing.assert_array_equal(got, a.max(axis=0, keepdims=True))


def test_tensor_tensor_scan_is_a_running_recurrence():
    a, b = uniform((128, 16), seed=13), uniform((128, 16), seed=14)

    def body(out, x, y):
        nisa.tensor_tensor_scan(dst=out, data0=x, data1=y, initial=0.5, op0=nl.multiply,
                                op1=nl.add)

    want = np.empty_like(a)
    prev = np.full(128, 0.5, F32)
    for i in range(16):
        prev = a[:, i] * prev + b[:, i]
        want[:, i] = prev
    np.testing.assert_array_equal(on_tiles(body, a, b), want)


@pytest.mark.parametrize("reduce_op", [nl.add, nl.sum])  # NKI's docs name both
def test_activation_scale_bias_and_sum(reduce_op):
    a = uniform((128, 64), seed=15)
    bias = uniform((128, 1), seed=16)

    def kernel(x, b):
        out = nl.ndarray((128, 65), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 65), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=t[:, 0:64], op=nl.exp, data=nl.load(x), bias=nl.load(b), scale=0.5,
                        reduce_op=reduce_op, reduce_res=t[:, 64:65])
        nl.store(out, value=t)
        return out

    got = nki.simulate(kernel)(a, bias)
    want = np.exp(0.5 * a.astype(np.float64) + bias)
    # ScalarE's exp is a table-free polynomial here: a few ulp (docs/numerics.md).
    np.testing.assert_allclose(got[:, :64], want, rtol=1e-6)
    np.testing.assert_allclose(got[:, 64], want.sum(axis=1), rtol=1e-5)


def test_activation_reduce_other_than_a_sum_says_not_implemented():
    def body(out, x):
        nisa.activation_reduce(dst=out, op=nl.exp, data=x, reduce_op=nl.maximum,
                               reduce_res=out[:, 0:1])

    with pytest.raises(NotImplementedError, match="reduce_op=nl.maximum"):
        on_tiles(body, uniform((128, 8)))


def test_exponential_subtracts_the_max_and_sums():
    a = uniform((128, 32), seed=17)
    m = a.max(axis=1, keepdims=True)

    def kernel(x, mx):
        out = nl.ndarray((128, 33), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 33), dtype=nl.float32, buffer=nl.sbuf)
        nisa.exponential(dst=t[:, 0:32], src=nl.load(x), max_value=nl.load(mx),
                         reduce_res=t[:, 32:33])
        nl.store(out, value=t)
        return out

    got = nki.simulate(kernel)(a, m)
    want = np.exp(a.astype(np.float64) - m)
    np.testing.assert_allclose(got[:, :32], want, rtol=1e-6)
    np.testing.assert_allclose(got[:, 32], want.sum(axis=1), rtol=1e-5)


def test_reciprocal():
    a = uniform((128, 32), 0.5, 4.0, seed=18)
    got = on_tiles(lambda out, x: nisa.reciprocal(dst=out, data=x), a)
    np.testing.assert_allclose(got, 1.0 / a.astype(np.float64), rtol=2.0**-22)


def test_iota_and_affine_select_build_a_causal_mask():
    def kernel(x):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        idx = nl.ndarray((128, 128), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(dst=idx, pattern=[[1, 128]], offset=0, channel_multiplier=-1)  # i - p
        masked = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        # keep x where p - i >= 0 (on or below the diagonal)
        nisa.affine_select(dst=masked, pattern=[[-1, 128]], channel_multiplier=1,
                           on_true_tile=nl.load(x), on_false_value=-9984.0,
                           cmp_op=nl.greater_equal)
        both = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=both, src=idx)
        nisa.tensor_tensor(dst=both, data1=both, data2=masked, op=nl.add)
        nl.store(out, value=both)
        return out

    x = uniform((128, 128), seed=19)
    p, i = np.indices((128, 128))
    want = (i - p).astype(F32) + np.where(p - i >= 0, x, F32(-9984.0))
    np.testing.assert_array_equal(nki.simulate(kernel)(x), want)


def test_range_select_keeps_a_window():
    a = uniform((128, 64), seed=20)

    def body(out, x):
        nisa.range_select(dst=out, on_true_tile=x, comp_op0=nl.greater_equal, comp_op1=nl.less,
                          bound0=8.0, bound1=40.0)

    want = a.copy()
    lowest = np.finfo(F32).min  # NKI's on_false_value, which the hardware reduction assumes
    want[:, :8] = lowest
    want[:, 40:] = lowest
    np.testing.assert_array_equal(on_tiles(body, a), want)


def test_bn_stats_and_bn_aggr_give_mean_and_variance():
    a = uniform((128, 512), seed=21)

    def kernel(x):
        out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
        stats = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_stats(dst=stats, data=nl.load(x))
        mv = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_aggr(dst=mv, data=stats)
        nl.store(out, value=mv)
        return out

    got = nki.simulate(kernel)(a)
    np.testing.assert_allclose(got[:, 0], a.astype(np.float64).mean(axis=1), atol=1e-6)
    np.testing.assert_allclose(got[:, 1], a.astype(np.float64).var(axis=1), rtol=1e-5)


def test_max8_and_nc_find_index8():
    a = np.stack([np.random.default_rng(p).permutation(64) for p in range(128)]).astype(F32)

    def kernel(x):
        out = nl.ndarray((128, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
        t = nl.load(x)
        top = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.max8(dst=top, src=t)
        idx = nl.ndarray((128, 8), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.nc_find_index8(dst=idx, data=t, vals=top)
        nl.store(out, value=idx)
        return out

    want = np.argsort(-a, axis=1, kind="stable")[:, :8]
    np.testing.assert_array_equal(nki.simulate(kernel)(a), want.astype(np.uint32))


def test_nc_transpose_and_dma_transpose():
    a = uniform((64, 128), seed=22)

    def kernel(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        by_pe = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_transpose(dst=by_pe, data=nl.load(x), engine=nisa.engine.tensor)
        by_dma = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_transpose(dst=by_dma, src=x)
        diff = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=diff, data1=by_pe, data2=by_dma, op=nl.subtract)
        nisa.tensor_tensor(dst=diff, data1=diff, data2=by_dma, op=nl.add)
        nl.store(out, value=diff)
        return out

    np.testing.assert_array_equal(nki.simulate(kernel)(a), a.T)


def test_nc_matmul_tiles_the_pe_array():
    a_t = uniform((64, 64), seed=23)
    b = uniform((64, 128), seed=24)

    def kernel(at, bb):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        stationary, moving = nl.load(at), nl.load(bb)
        acc = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
        for i in range(2):  # one 64 x 64 tile of the PE array per quarter of the result
            for j in range(2):
                nisa.nc_matmul(dst=acc[i * 64:(i + 1) * 64, j * 64:(j + 1) * 64],
                               stationary=stationary, moving=moving[:, j * 64:(j + 1) * 64],
                               tile_position=(i * 64, j * 64), tile_size=(64, 64))
        nl.store(out, value=nl.copy(acc))
        return out

    want = a_t.astype(np.float64).T @ b.astype(np.float64)
    got = nki.simulate(kernel)(a_t, b)
    for i in range(2):
        np.testing.assert_allclose(got[i * 64:(i + 1) * 64], want, atol=64 * 2.0**-23)


def test_accumulate_none_overwrites_first_then_adds():
    a_t, b = uniform((512, 128), seed=25), uniform((512, 256), seed=26)

    def kernel(at, bb):
        out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.psum)
        for k in nl.affine_range(4):
            nisa.nc_matmul(dst=acc, stationary=nl.load(at[k * 128:(k + 1) * 128, :]),
                           moving=nl.load(bb[k * 128:(k + 1) * 128, :]))
        nl.store(out, value=nl.copy(acc))
        return out

    want = a_t.astype(np.float64).T @ b.astype(np.float64)
    np.testing.assert_allclose(nki.simulate(kernel)(a_t, b), want, atol=512 * 2.0**-23)


def test_accumulate_none_over_half_written_psum_is_an_error():
    def kernel(at, bb):
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        s, m = nl.load(at), nl.load(bb)
        nisa.nc_matmul(dst=acc[:, 0:256], stationary=s, moving=m[:, 0:256])
        nisa.nc_matmul(dst=acc, stationary=s, moving=m)  # half written before
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.copy(acc))
        return out

    with pytest.raises(RuntimeError, match=r"test_isa\.py:\d+:\d+: error: nc_matmul\(accumulate=None\) into .*some of its PSUM"):
        nki.simulate(kernel)(uniform((128, 128)), uniform((128, 512)))


def test_rand2_is_deterministic_and_in_range():
    def kernel(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.rand2(dst=t, min=-2.0, max=3.0)
        nl.store(out, value=t)
        return out

    first = nki.simulate(kernel)(np.zeros((1, 1), F32))
    second = nki.simulate(kernel)(np.zeros((1, 1), F32))
    np.testing.assert_array_equal(first, second)
    assert first.min() >= -2.0 and first.max() < 3.0 and np.unique(first).size > 1000


def test_nc_version_is_the_chips():
    seen = []

    def kernel(x):
        seen.append(nisa.get_nc_version())
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(x))
        return out

    nki.simulate(kernel)(np.zeros((128, 4), F32))
    assert seen == [nisa.nc_version.gen4]
