"""The nki.isa operations of NKI 0.6 added last (tensor_scalar_cumulative, rng,
set_rng_seed, dropout, sequence_bounds, nonzero_with_count, nc_n_gather, topk) and the nl
helpers over them (nl.dropout, nl.random_seed, nl.gather_flattened), against NumPy
references written here from NKI's documented behaviour, plus an error at the kernel's line
for each family."""

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim
from helpers import bf16, expect_error_at, line_of, on_tiles, uniform

F32 = np.float32


# tensor_scalar_cumulative -------------------------------------------------------------------

def test_cumulative_sum_continues_across_tiles_with_reduce():
    """A row-wise cumulative sum of x * 2 over two tiles of 64: the second instruction
    continues from the accumulator the first left (reduce_cmd.reduce)."""
    a = uniform((128, 128), seed=40)

    def kernel(x):
        out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x)
        r = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_cumulative(dst=r[:, 0:64], src=t[:, 0:64], op0=nl.multiply,
                                      op1=nl.add, imm0=2.0)
        nisa.tensor_scalar_cumulative(dst=r[:, 64:128], src=t[:, 64:128], op0=nl.multiply,
                                      op1=nl.add, imm0=2.0, reduce_cmd=nisa.reduce_cmd.reduce)
        nl.store(out, value=r)
        return out

    got = nki.simulate(kernel)(a)
    np.testing.assert_array_equal(got, np.cumsum(a * F32(2), axis=1, dtype=F32))


def test_cumulative_max_from_a_loaded_start_value():
    a = uniform((64, 32), seed=41)
    start = uniform((64, 1), seed=42)

    def body(r, x, s):
        nisa.tensor_scalar_cumulative(dst=r, src=x, op0=nl.add, op1=nl.maximum, imm0=0.5,
                                      imm1=s, reduce_cmd=nisa.reduce_cmd.load_reduce)

    got = on_tiles(body, a, start)
    want = np.maximum.accumulate(np.concatenate([start, a + F32(0.5)], axis=1), axis=1)[:, 1:]
    np.testing.assert_array_equal(got, want)


def test_cumulative_rejects_a_32_bit_integer_dst_at_the_kernel_line():
    a = uniform((16, 8), seed=43)

    def kernel(x):
        out = nl.ndarray((16, 8), dtype=nl.int32, buffer=nl.shared_hbm)
        r = nl.ndarray((16, 8), dtype=nl.int32, buffer=nl.sbuf)
        nisa.tensor_scalar_cumulative(dst=r, src=nl.load(x), op0=nl.add, op1=nl.add, imm0=0.0)  # bad
        nl.store(out, value=r)
        return out

    expect_error_at(kernel, line_of(kernel, "# bad"), r"dtype int32 is not allowed", a)


# random numbers ------------------------------------------------------------------------------

def random_kernel(seed_value, draws=2):
    """rng into uint16 after nl.random_seed(seed_value), `draws` times."""

    def kernel(x):
        out = nl.ndarray((draws, 128, 64), dtype=nl.uint16, buffer=nl.shared_hbm)
        seed = nl.full((1, 1), seed_value, dtype=nl.int32, buffer=nl.sbuf)
        nl.random_seed(seed)
        for d in range(draws):
            r = nl.ndarray((128, 64), dtype=nl.uint16, buffer=nl.sbuf)
            nisa.rng(dst=r)
            nl.store(out[d], value=r)
        return out

    return kernel


def test_random_seed_repeats_the_stream_and_rng_fills_the_dtype():
    dummy = np.zeros((1, 1), F32)
    a = nki.simulate(random_kernel(42))(dummy)
    b = nki.simulate(random_kernel(42))(dummy)
    c = nki.simulate(random_kernel(43))(dummy)
    assert a.dtype == np.uint16
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a[0], a[1])  # the stream moves on
    # 16 random bits per element: every bit position is set about half the time.
    ones = np.unpackbits(a.view(np.uint8)).mean()
    assert 0.45 < ones < 0.55, ones


def test_random_seed_nki_example_with_the_vector_engine_busy():
    """NKI's nl.random_seed example (same seed, same nl.rand values), while VectorE has other
    work the scheduler could move the draws away from: rand2 runs on VectorE only, the
    engine random_seed seeds."""
    def kernel(x, busy):
        out = nl.ndarray((3, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        w = nl.load(busy)
        for _ in range(4):
            nisa.tensor_scalar(dst=w, data=w, op0=nl.multiply, operand0=1.5)
        seed = nl.full((1, 1), 42, dtype=nl.int32, buffer=nl.sbuf)
        nl.random_seed(seed)
        a = nl.rand((128, 512), dtype=nl.float32)
        nl.random_seed(seed)
        b = nl.rand((128, 512), dtype=nl.float32)
        other = nl.full((1, 1), 43, dtype=nl.int32, buffer=nl.sbuf)
        nl.random_seed(other)
        c = nl.rand((128, 512), dtype=nl.float32)
        nl.store(out[0], value=a)
        nl.store(out[1], value=b)
        nl.store(out[2], value=c)
        return out

    got = nki.simulate(kernel)(np.zeros((1, 1), F32), uniform((128, 2048), seed=55))
    np.testing.assert_array_equal(got[0], got[1])
    assert not np.array_equal(got[0], got[2])
    assert (got >= 0).all() and (got < 1).all()


def test_dropout_zeroes_about_rate_and_keeps_the_rest_exactly():
    a = uniform((128, 512), low=1.0, high=2.0, seed=44)  # no zeros of its own

    def body(r, x):
        nisa.dropout(dst=r, data=x, prob=0.25)

    got = on_tiles(body, a)
    kept = got != 0
    np.testing.assert_array_equal(got[kept], a[kept])
    assert 0.23 < 1.0 - kept.mean() < 0.27, 1.0 - kept.mean()


def test_nl_dropout_per_partition_rate_and_dtype():
    a = uniform((128, 256), low=1.0, high=2.0, seed=45)
    rate = np.repeat(np.array([[0.0], [1.0]], F32), 64, axis=0)

    def kernel(x, p):
        out = nl.ndarray((128, 256), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        nl.store(out, value=nl.dropout(nl.load(x), nl.load(p), dtype=nl.bfloat16))
        return out

    got = nki.simulate(kernel)(a, rate)
    np.testing.assert_array_equal(got[:64], bf16(a[:64]))  # rate 0 keeps all
    assert not got[64:].any()  # rate 1 drops all


def test_dropout_rejects_a_probability_above_one_at_the_kernel_line():
    a = uniform((16, 8), seed=46)

    def kernel(x):
        out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        r = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dropout(dst=r, data=nl.load(x), prob=1.5)  # bad
        nl.store(out, value=r)
        return out

    expect_error_at(kernel, line_of(kernel, "# bad"), r"1.5 is not a probability", a)


# GpSimd index operations ---------------------------------------------------------------------

def reference_sequence_bounds(ids):
    """NKI's reference: a run of equal non-zero ids spans [first, one past last]; 0 pads."""
    n = len(ids)
    start, end = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for i in range(n):
        start[i] = n if ids[i] == 0 else (start[i - 1] if i and ids[i] == ids[i - 1] else i)
    for i in reversed(range(n)):
        end[i] = -1 if ids[i] == 0 else (end[i + 1] if i + 1 < n and ids[i] == ids[i + 1]
                                         else i + 1)
    return np.stack([start, end])[None]


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_sequence_bounds(dtype):
    ids = np.sort(np.random.default_rng(47).integers(0, 12, size=(1, 64))).astype(dtype)
    nl_dtype = nl.float32 if dtype == np.float32 else nl.int32

    def kernel(x):
        out = nl.ndarray((1, 2, 64), dtype=nl_dtype, buffer=nl.shared_hbm)
        r = nl.ndarray((1, 2, 64), dtype=nl_dtype, buffer=nl.sbuf)
        nisa.sequence_bounds(dst=r, segment_ids=nl.load(x))
        nl.store(out, value=r)
        return out

    got = nki.simulate(kernel)(ids)
    np.testing.assert_array_equal(got, reference_sequence_bounds(ids[0]).astype(dtype))


def test_nonzero_with_count_nki_example():
    """NKI's docstring kernel with the output zeroed first (the instruction writes only rows
    0, 16, ...; storing the others unwritten would read uninitialised memory) and returned in
    shared HBM: rows 0, 16, ... are computed."""
    src = (np.random.default_rng(48).random((128, 32)) < 0.3).astype(np.int32)

    def nonzero_with_count_kernel(in_tensor):
        in_shape = in_tensor.shape
        in_tile = nl.ndarray(in_shape, dtype=in_tensor.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=in_tile, src=in_tensor)
        out_tile = nl.ndarray((in_shape[0], in_shape[1] + 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(dst=out_tile, value=0)
        nisa.nonzero_with_count(dst=out_tile, src=in_tile, index_offset=16, padding_val=-1)
        out_tensor = nl.ndarray(out_tile.shape, dtype=out_tile.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out_tensor, src=out_tile)
        return out_tensor

    got = nki.simulate(nonzero_with_count_kernel)(src)
    for p in range(128):
        if p % 16:
            assert not got[p].any()  # not written: the memset's zeros
            continue
        found = np.flatnonzero(src[p]) + 16
        want = np.full(33, -1, np.int32)
        want[:len(found)] = found
        want[32] = len(found)
        np.testing.assert_array_equal(got[p], want)


def test_nc_n_gather_and_nl_gather_flattened():
    data = uniform((64, 4, 16), seed=49)
    index = np.random.default_rng(50).integers(0, 64, size=(64, 24))

    def kernel(x, i):
        out = nl.ndarray((2, 64, 24), dtype=nl.float32, buffer=nl.shared_hbm)
        d = nl.load(x)
        r = nl.ndarray((64, 24), dtype=nl.float32, buffer=nl.sbuf)
        nisa.nc_n_gather(dst=r, data=d, indices=nl.load(i))
        nl.store(out[0], value=r)
        nl.store(out[1], value=nl.gather_flattened(d, nl.load(i)))
        return out

    got = nki.simulate(kernel)(data, index.astype(np.uint32))
    want = np.take_along_axis(data.reshape(64, 64), index, axis=1)
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], want)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int16])
def test_gather_flattened_takes_narrow_integer_indices(dtype):
    data = uniform((16, 8), seed=56)
    index = np.tile(np.array([7, 0, 3, 3], dtype), (16, 1))

    def kernel(d, i):
        out = nl.ndarray((16, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.gather_flattened(nl.load(d), nl.load(i)))
        return out

    np.testing.assert_array_equal(nki.simulate(kernel)(data, index), data[:, [7, 0, 3, 3]])


def test_gather_flattened_takes_int32_indices_as_words_so_negative_ones_are_errors():
    data = uniform((16, 8), seed=56)

    def gather(index):
        def kernel(d, i):
            out = nl.ndarray((16, 4), dtype=nl.float32, buffer=nl.shared_hbm)
            nl.store(out, value=nl.gather_flattened(nl.load(d), nl.load(i)))
            return out
        return nki.simulate(kernel)(data, index)

    index = np.tile(np.array([7, 0, 3, 3], np.int32), (16, 1))
    np.testing.assert_array_equal(gather(index), data[:, [7, 0, 3, 3]])
    index[5, 2] = -1
    with pytest.raises(trnsim.Error, match=r"nc_n_gather index 4294967295 in partition 5"):
        gather(index)


def test_nc_n_gather_index_beyond_the_data_is_an_error():
    data = uniform((16, 8), seed=51)
    index = np.full((16, 4), 8, np.uint32)

    def body(r, d, i):
        nisa.nc_n_gather(dst=r, data=d, indices=i)

    with pytest.raises(trnsim.Error, match=r"nc_n_gather index 8 .* beyond data's 8"):
        on_tiles(body, data, index, out_shape=(16, 4))


def test_topk_nki_example_snake_in_snake_out():
    """NKI's docstring kernel (n = 42 of a 3-column snake, K = 8) on 32 partitions, with the
    outputs zeroed first (only the snake's K positions are written) and returned through
    shared HBM."""
    src = bf16(uniform((32, 3), seed=52))

    def topk_kernel(in_tensor):
        par_dim = in_tensor.shape[0]
        n = 42
        src_x = (n + 15) // 16
        k = 8
        s = nl.ndarray((par_dim, src_x), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=s, src=in_tensor)
        val_dst = nl.ndarray((par_dim, k), dtype=nl.bfloat16, buffer=nl.sbuf)
        idx_dst = nl.ndarray((par_dim, k), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.memset(dst=val_dst, value=0.0)
        nisa.memset(dst=idx_dst, value=0)
        nisa.topk(val_dst=val_dst, idx_dst=idx_dst, src=s, n=n)
        vals = nl.ndarray((par_dim, k), dtype=nl.float32, buffer=nl.shared_hbm)
        idxs = nl.ndarray((par_dim, k), dtype=nl.uint32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=vals, src=val_dst)
        nisa.dma_copy(dst=idxs, src=idx_dst)
        return vals, idxs

    vals, idxs = nki.simulate(topk_kernel)(trnsim.typed(src, nl.bfloat16))
    for g in range(2):
        snake = src[16 * g:16 * g + 16].T.reshape(-1)[:42]  # position s = p + 16 c
        order = sorted(range(42), key=lambda s: (-snake[s], s))[:8][::-1]  # ascending
        for j, s in enumerate(order):  # result j at partition j % 16, column j // 16
            assert idxs[16 * g + j % 16, j // 16] == s
            assert vals[16 * g + j % 16, j // 16] == snake[s]
        assert not vals[16 * g + 8:16 * g + 16].any()  # results 8.. do not exist


def gpsimd_busy_ns_of_topk(n, k):
    src = bf16(uniform((16, 128), seed=53))

    def kernel(x):
        s = nl.load(x)
        v = nl.ndarray((16, k), dtype=nl.bfloat16, buffer=nl.sbuf)
        i = nl.ndarray((16, k), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.topk(val_dst=v, idx_dst=i, src=s, n=n)
        out = nl.ndarray((16, 1), dtype=nl.uint32, buffer=nl.shared_hbm)
        nl.store(out, value=i[:, 0:1])  # the results' first column (every partition has one)
        return out

    nki.simulate(kernel)(trnsim.typed(src, nl.bfloat16))
    queues = {q["queue"]: q for q in trnsim.last_report()["queues"]}
    return queues["gpsimd"]["busy_ns"]


def test_topk_costs_4n_plus_k_gpsimd_cycles():
    """NKI's estimate, 4 n + K cycles: the busy times of three shapes keep its ratios."""
    base = gpsimd_busy_ns_of_topk(1024, 32)
    assert gpsimd_busy_ns_of_topk(2048, 32) / base == pytest.approx((8192 + 32) / (4096 + 32))
    assert gpsimd_busy_ns_of_topk(1024, 512) / base == pytest.approx((4096 + 512) / (4096 + 32))


def test_topk_rejects_a_partition_count_off_the_snake_at_the_kernel_line():
    src = bf16(uniform((24, 3), seed=54))

    def kernel(x):
        s = nl.load(x)
        v = nl.ndarray((24, 8), dtype=nl.bfloat16, buffer=nl.sbuf)
        i = nl.ndarray((24, 8), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.topk(val_dst=v, idx_dst=i, src=s, n=42)  # bad
        out = nl.ndarray((24, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
        nl.store(out, value=i)
        return out

    expect_error_at(kernel, line_of(kernel, "# bad"), r"topk needs a multiple of 16",
                    trnsim.typed(src, nl.bfloat16))


def test_random_draws_and_a_carried_scan_in_a_dynamic_loop_match_the_unrolled_kernel():
    """rng and a reduce-carried cumulative sum in nl.fori_loop give the bits of the same body
    unrolled with range(): the engine state stays in program order across trips."""
    rows, cols = 4, 32
    x = uniform((rows, cols), seed=57)

    def kernel(data, dynamic):
        out = nl.ndarray((2, rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
        scan = nl.ndarray((1, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar_cumulative(dst=scan, src=nl.zeros((1, cols), dtype=nl.float32),
                                      op0=nl.add, op1=nl.add, imm0=0.0)  # accumulator = 0

        def body(i):
            row = nl.ndarray((1, cols), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=row, src=data.ap([[cols, 1], [1, cols]], scalar_offset=i,
                                               indirect_dim=0))
            nisa.tensor_scalar_cumulative(dst=row, src=row, op0=nl.add, op1=nl.add, imm0=0.0,
                                          reduce_cmd=nisa.reduce_cmd.reduce)
            bits = nl.ndarray((1, cols), dtype=nl.uint16, buffer=nl.sbuf)
            nisa.rng(dst=bits)
            drawn = nl.ndarray((1, cols), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=drawn, src=bits)
            rows_of_out = out.reshape((2 * rows, cols))  # scalar_offset moves by dim 0: a row
            for k, tile in enumerate((row, drawn)):
                nisa.dma_copy(dst=rows_of_out.ap([[cols, 1], [1, cols]], offset=k * rows * cols,
                                                 scalar_offset=i, indirect_dim=0), src=tile)

        if dynamic:
            nl.fori_loop(0, rows, body)
        else:
            for i in range(rows):
                body(nisa.register_alloc(i))
        return out

    looped = nki.simulate(kernel)(x, True)
    unrolled = nki.simulate(kernel)(x, False)
    np.testing.assert_array_equal(looped, unrolled)
    np.testing.assert_array_equal(looped[0].reshape(-1), np.cumsum(x.reshape(-1), dtype=F32))
    assert len(np.unique(looped[1])) > rows * cols // 2  # fresh draws every trip


# dma_compute ---------------------------------------------------------------------------------

def test_dma_compute_sums_its_sources_in_fp32_left_to_right():
    """1 + 2^-24 + 2^-24 is 1 in fp32 left to right (each add rounds back to 1) and
    1 + 2^-23 right to left or in fp64: the sum's order and precision show."""
    one = np.ones((128, 64), F32)
    tiny = np.full((128, 64), 2.0 ** -24, F32)
    a = uniform((128, 64), seed=58)

    def kernel(x, y, z, w):
        out = nl.ndarray((2, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_compute(dst=out[0], srcs=[nl.load(x), y, nl.load(z)], reduce_op=nl.add,
                         scales=[1.0, 1.0, 1.0])
        nisa.dma_compute(dst=out[1], srcs=[nl.load(w, dtype=nl.bfloat16), w], reduce_op=nl.add)
        return out

    got = nki.simulate(kernel)(one, tiny, tiny, a)
    np.testing.assert_array_equal(got[0], one)
    np.testing.assert_array_equal(got[1], bf16(a) + a)


def test_dma_compute_rules():
    a = uniform((16, 8), seed=61)

    def scaled(x):
        out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_compute(dst=out, srcs=[x, x], reduce_op=nl.add, scales=[1.0, 0.5])  # bad
        return out

    expect_error_at(scaled, line_of(scaled, "# bad"), r"every scale must be 1.0", a)

    def one_scale_for_two(x):
        out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_compute(dst=out, srcs=[x, x], reduce_op=nl.add, scales=[1.0])  # bad
        return out

    expect_error_at(one_scale_for_two, line_of(one_scale_for_two, "# bad"),
                    r"1 scales for 2 sources", a)

    def too_many(x):
        out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_compute(dst=out, srcs=[x] * 17, reduce_op=nl.add)  # bad
        return out

    expect_error_at(too_many, line_of(too_many, "# bad"), r"17 sources; dma_compute takes 1 to 16",
                    a)

    def multiplies(x):
        out = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_compute(dst=out, srcs=[x, x], reduce_op=nl.multiply)  # bad
        return out

    expect_error_at(multiplies, line_of(multiplies, "# bad"), r"operator multiply is not allowed",
                    a)


@pytest.mark.parametrize("sources", [1, 2, 3, 5])
def test_dma_compute_hbm_traffic_is_one_pass_over_each_hbm_operand(sources):
    """n SBUF sources into an HBM dst, after loading one 1 MiB tile: 2 MiB cross HBM."""
    def kernel(x):
        t = nl.load(x)
        out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_compute(dst=out, srcs=[t] * sources, reduce_op=nl.add)
        return out

    got = nki.simulate(kernel)(np.ones((128, 2048), F32))
    np.testing.assert_array_equal(got, np.full((128, 2048), sources, F32))
    assert trnsim.last_report()["dma"]["hbm_bytes"] == 2 * 2 ** 20
