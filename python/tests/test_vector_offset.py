""".ap(vector_offset=): rows of an HBM tensor picked per partition at run time, by dma_copy
(gather, scatter) and by dma_compute (read-modify-write), against NumPy references, and the
errors at the kernel's own line."""

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim
from helpers import expect_error_at, line_of, uniform

F32 = np.float32


def load_indices(indices):
    idx = nl.ndarray(indices.shape, dtype=nl.uint32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=indices)
    return idx


def gather_kernel(data, indices, oob=nisa.oob_mode.error):
    p, f = indices.shape[0], data.shape[1]
    out = nl.ndarray((p, f), dtype=data.dtype, buffer=nl.shared_hbm)
    rows = nl.ndarray((p, f), dtype=data.dtype, buffer=nl.sbuf)
    nisa.memset(dst=rows, value=-1.0)
    nisa.dma_copy(dst=rows, src=data.ap(pattern=[[f, p], [1, f]], vector_offset=load_indices(indices), indirect_dim=0), oob_mode=oob)  # gather
    nisa.dma_copy(dst=out, src=rows)
    return out


def test_dma_copy_gathers_the_indexed_rows():
    data = uniform((64, 32), seed=1)
    indices = np.random.default_rng(2).integers(0, 64, (128, 1)).astype(np.uint32)
    got = nki.simulate(gather_kernel)(data, indices)
    np.testing.assert_array_equal(got, data[indices[:, 0]])


def test_indirect_dim_gives_the_row_step_and_the_bound():
    data = uniform((4, 16, 8), seed=3)  # rows of 8 along dim 1, 16 per batch

    def kernel(table, indices):
        out = nl.ndarray((32, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        rows = nl.ndarray((32, 8), dtype=nl.float32, buffer=nl.sbuf)
        view = table.ap(pattern=[[8, 32], [1, 8]], offset=2 * 16 * 8,  # batch 2
                        vector_offset=load_indices(indices), indirect_dim=1)
        nisa.dma_copy(dst=rows, src=view)  # gather
        nisa.dma_copy(dst=out, src=rows)
        return out

    indices = np.random.default_rng(4).integers(0, 16, (32, 1)).astype(np.uint32)
    got = nki.simulate(kernel)(data, indices)
    np.testing.assert_array_equal(got, data[2][indices[:, 0]])
    indices[5] = 16  # past dim 1, although batch 3 follows in memory
    expect_error_at(kernel, line_of(kernel, "# gather"), r"index entry 5 is 16, outside the 16 rows",
                    data, indices)


def test_a_view_keeps_its_start_and_strides():
    """.ap() on a slice addresses the storage from the slice's start; a row moves by the
    stride of indirect_dim (the table's row, not the slice's width)."""
    data = uniform((64, 32), seed=15)

    def kernel(table, indices):
        out = nl.ndarray((4, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        rows = nl.ndarray((4, 16), dtype=nl.float32, buffer=nl.sbuf)
        view = table[:, 8:24].ap(pattern=[[32, 4], [1, 16]], vector_offset=load_indices(indices))
        nisa.dma_copy(dst=rows, src=view)
        nisa.dma_copy(dst=out, src=rows)
        return out

    indices = np.array([[3], [5], [7], [9]], np.uint32)
    np.testing.assert_array_equal(nki.simulate(kernel)(data, indices), data[[3, 5, 7, 9], 8:24])


def test_an_out_of_range_index_is_an_error_or_skipped():
    data = uniform((64, 32), seed=5)
    indices = np.arange(128, dtype=np.uint32).reshape(128, 1)  # rows 64.. do not exist
    expect_error_at(gather_kernel, line_of(gather_kernel, "# gather"),
                    r"index entry 64 is 64, outside the 64 rows", data, indices)
    got = nki.simulate(gather_kernel)(data, indices, nisa.oob_mode.skip)
    np.testing.assert_array_equal(got[:64], data)
    np.testing.assert_array_equal(got[64:], -1.0)  # skipped rows keep what dst held


def test_dma_copy_scatters_rows_into_place():
    def kernel(src, indices, table):
        p, f = src.shape
        rows = nl.load(src)
        nisa.dma_copy(dst=table.ap(pattern=[[f, p], [1, f]], vector_offset=load_indices(indices)),
                      src=rows)

    src = uniform((16, 32), seed=6)
    indices = np.random.default_rng(7).permutation(64)[:16].astype(np.uint32).reshape(16, 1)
    table = uniform((64, 32), seed=8)
    want = table.copy()
    want[indices[:, 0]] = src
    nki.simulate(kernel)(src, indices, table)
    np.testing.assert_array_equal(table, want)


def test_dma_compute_scatter_adds_into_hbm_rows():
    def kernel(src, indices, table):
        p, f = src.shape
        rows = nl.load(src)
        dst = table.ap(pattern=[[f, p], [1, f]], vector_offset=load_indices(indices))
        nisa.dma_compute(dst=dst, srcs=[dst, rows], reduce_op=nl.add)

    src = uniform((16, 32), seed=9)
    indices = np.random.default_rng(10).permutation(64)[:16].astype(np.uint32).reshape(16, 1)
    table = uniform((64, 32), seed=11)
    want = table.copy()
    want[indices[:, 0]] += src  # one fp32 add per element, as the engine's
    nki.simulate(kernel)(src, indices, table)
    np.testing.assert_array_equal(table, want)


def test_dma_compute_gather_adds_hbm_rows_into_sbuf():
    def kernel(acc_in, table, indices):
        p, f = acc_in.shape
        out = nl.ndarray((p, f), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        acc = nl.load(acc_in)
        data = table.ap(pattern=[[f, p], [1, f]], vector_offset=load_indices(indices))
        nisa.dma_compute(dst=acc, srcs=[acc, data], reduce_op=nl.add)
        nisa.dma_copy(dst=out, src=acc)
        return out

    acc = trnsim.typed(uniform((128, 16), seed=12), nl.bfloat16)
    table = uniform((40, 16), seed=13)
    indices = np.random.default_rng(14).integers(0, 40, (128, 1)).astype(np.uint32)
    got = nki.simulate(kernel)(acc, table, indices)
    # fp32 sum of the bf16 accumulator and the fp32 row, rounded once to nearest even bf16.
    exact = acc_values(acc) + table[indices[:, 0]]
    np.testing.assert_array_equal(got, round_bf16(exact))


def acc_values(typed):
    return round_bf16(typed.array)


def round_bf16(x):
    bits = np.ascontiguousarray(x, F32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(F32)


def test_a_scatter_add_with_a_repeated_index_is_an_error():
    def kernel(src, indices, table):
        rows = nl.load(src)
        dst = table.ap(pattern=[[32, 16], [1, 32]], vector_offset=load_indices(indices))
        nisa.dma_compute(dst=dst, srcs=[rows, dst], reduce_op=nl.add)  # rmw

    indices = np.arange(16, dtype=np.uint32).reshape(16, 1)
    indices[9] = 3
    expect_error_at(kernel, line_of(kernel, "# rmw"),
                    r"index entries 3 and 9 both name row 3: a read-modify-write scatter needs "
                    r"unique indices", uniform((16, 32)), indices, uniform((64, 32)))


@pytest.mark.parametrize("body, pattern", [
    ("nisa.dma_copy(dst=rows, src=tile.ap(pattern=[[32, 16], [1, 32]], vector_offset=idx))",
     r"indexes rows of an HBM tensor; '\w+' is on chip"),
    ("nisa.dma_copy(dst=rows, src=table.ap(pattern=[[32, 8], [1, 32]], vector_offset=idx))",
     r"the pattern has 8 rows and the index 16 elements"),
    ("nisa.tensor_copy(dst=rows, src=table.ap(pattern=[[32, 16], [1, 32]], vector_offset=idx))",
     r"is an operand of dma_copy and dma_compute only"),
    ("nisa.dma_compute(dst=rows, srcs=[rows, rows, table.ap(pattern=[[32, 16], [1, 32]], "
     "vector_offset=idx)], reduce_op=nl.add)",
     r"3 sources; a read-modify-write takes two"),
    ("nisa.dma_compute(dst=rows, srcs=[tile, table.ap(pattern=[[32, 16], [1, 32]], "
     "vector_offset=idx)], reduce_op=nl.add)",
     r"one of the two sources must be dst itself"),
    ("nisa.dma_copy(dst=rows, src=table.ap(pattern=[[32, 16], [1, 32]], vector_offset=idx)[0:8])",
     r"indexing of an indirect view of 'table'"),
])
def test_misuse_is_an_error_at_the_kernel_line(body, pattern):
    source = (
        "def kernel(table, indices):\n"
        "    idx = nl.ndarray((16, 1), dtype=nl.uint32, buffer=nl.sbuf)\n"
        "    nisa.dma_copy(dst=idx, src=indices)\n"
        "    rows = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.sbuf)\n"
        "    tile = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.sbuf)\n"
        "    nisa.memset(dst=rows, value=0.0)\n"
        "    nisa.memset(dst=tile, value=0.0)\n"
        f"    {body}\n")
    scope = {"nl": nl, "nisa": nisa}
    exec(compile(source, __file__ + ":misuse", "exec"), scope)  # noqa: S102
    with pytest.raises(trnsim.Error, match=pattern) as caught:
        nki.simulate(scope["kernel"])(uniform((64, 32)), np.zeros((16, 1), np.uint32))
    assert ":misuse:8:" in str(caught.value), str(caught.value)


def test_is_indirect_tells_views_with_a_dynamic_offset():
    seen = []

    def kernel(table, indices):
        reg = nisa.register_alloc(0)
        seen.append(table.is_indirect())
        seen.append(table.ap(pattern=[[32, 16], [1, 32]], scalar_offset=reg).is_indirect())
        seen.append(table.ap(pattern=[[32, 16], [1, 32]],
                             vector_offset=load_indices(indices)).is_indirect())

    nki.simulate(kernel)(uniform((64, 32)), np.zeros((16, 1), np.uint32))
    assert seen == [False, True, True]


def test_vector_and_scalar_offsets_are_mutually_exclusive():
    def kernel(table, indices):
        reg = nisa.register_alloc(0)
        table.ap(pattern=[[32, 16], [1, 32]], scalar_offset=reg,
                 vector_offset=load_indices(indices))

    with pytest.raises(ValueError, match="mutually exclusive"):
        nki.simulate(kernel)(uniform((64, 32)), np.zeros((16, 1), np.uint32))


@pytest.mark.parametrize("columns", [1, 2])
def test_dma_transpose_of_a_vector_offset_view_gathers_then_transposes(columns):
    """NKI's gathering transpose: rows indices.T.flatten() of src, transposed into SBUF."""
    f = 128 * columns

    def kernel(src, indices):
        out = nl.ndarray((64, f), dtype=src.dtype, buffer=nl.shared_hbm)
        idx = nl.load(indices)
        dst = nl.ndarray((64, f), dtype=src.dtype, buffer=nl.sbuf)
        view = src.ap(pattern=[[64, f], [1, 64]], vector_offset=idx, indirect_dim=0)
        nisa.dma_transpose(dst=dst, src=view, axes=(1, 0))
        nisa.dma_copy(dst=out, src=dst)
        return out

    # bf16 words (a gathering transpose moves 2-byte elements) and the values they hold.
    words = (uniform((300, 64), seed=20).view(np.uint32) >> 16).astype(np.uint16)
    values = (words.astype(np.uint32) << 16).view(F32)
    indices = np.random.default_rng(21).integers(0, 300, (128, columns)).astype(np.uint32)
    got = nki.simulate(kernel)(trnsim.bits(words, nl.bfloat16), indices)
    np.testing.assert_array_equal(got, values[indices.T.flatten()].T)


def test_a_gathering_transpose_checks_its_index_shape():
    def kernel(src, indices):
        idx = nl.load(indices)
        dst = nl.ndarray((64, 96), dtype=src.dtype, buffer=nl.sbuf)
        view = src.ap(pattern=[[64, 96], [1, 64]], vector_offset=idx)
        nisa.dma_transpose(dst=dst, src=view)  # transpose

    expect_error_at(kernel, line_of(kernel, "# transpose"),
                    r"48 partitions of indices with 2 per partition; a gathering transpose takes "
                    r"16 to 128 in multiples of 16, exactly 128",
                    trnsim.typed(uniform((300, 64)), nl.bfloat16), np.zeros((48, 2), np.uint32))
