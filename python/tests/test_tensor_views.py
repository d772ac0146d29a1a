"""NkiTensor's view methods (NKI 0.6): reshape_dim, flatten_dims, rearrange, get_pattern,
select (static and dynamic), vector_select and a tensor as .ap's scalar_offset, each moving
real data against NumPy, and their errors at the kernel's own line."""

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
from helpers import expect_error_at, line_of, uniform

F32 = np.float32


def copy_out(view, shape):
    """Copies an SBUF view into a new shared HBM tensor of `shape` (same element order)."""
    out = nl.ndarray(shape, dtype=view.dtype, buffer=nl.shared_hbm)
    tile = nl.ndarray(view.shape, dtype=view.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=tile, src=view)
    nisa.dma_copy(dst=out, src=tile)
    return out


def test_rearrange_splits_permutes_and_merges():
    def kernel(x):
        t = nl.load(x)  # (128, 24)
        view = t.rearrange(("b", ("h", "w")), ("b", "w", "h"), {"h": 4})  # (128, 6, 4)
        return copy_out(view, (128, 6, 4))

    x = uniform((128, 24), seed=1)
    np.testing.assert_array_equal(nki.simulate(kernel)(x),
                                  x.reshape(128, 4, 6).transpose(0, 2, 1))


def test_reshape_dim_and_flatten_dims_are_inverse_views():
    shapes = []

    def kernel(x):
        t = nl.load(x)  # (128, 2, 3, 4)
        merged = t.flatten_dims(1, 2)
        split = merged.reshape_dim(1, (3, -1))
        shapes.extend([tuple(merged.shape), tuple(split.shape)])
        return copy_out(split, (128, 3, 2, 4))

    x = uniform((128, 2, 3, 4), seed=2)
    got = nki.simulate(kernel)(x)
    assert shapes == [(128, 6, 4), (128, 3, 2, 4)]
    np.testing.assert_array_equal(got, x.reshape(128, 3, 2, 4))


def test_flatten_dims_refuses_dims_that_do_not_walk_on():
    def kernel(x):
        t = nl.load(x)
        t.permute((0, 2, 1)).flatten_dims(1, 2)  # flatten

    expect_error_at(kernel, line_of(kernel, "# flatten"), r"not contiguous in memory",
                    uniform((128, 4, 8)))


def test_get_pattern_gives_back_the_view_through_ap():
    patterns = []

    def kernel(x):
        t = nl.load(x)
        part = t[:, 8:40:2]  # a strided view inside the tile
        patterns.append(part.get_pattern())
        return copy_out(part.ap(part.get_pattern()), (128, 16))

    x = uniform((128, 64), seed=3)
    np.testing.assert_array_equal(nki.simulate(kernel)(x), x[:, 8:40:2])
    assert patterns == [[[64, 128], [2, 16]]]  # on chip: [elements per partition, partitions]


def test_select_picks_statically_or_at_run_time():
    def kernel(x, index):
        idx = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=index)
        static = nl.load(x.select(0, 1))
        dynamic = nl.load(x.select(0, idx))
        out = nl.ndarray((2, 16, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out[0], value=static)
        nl.store(out[1], value=dynamic)
        return out

    x = uniform((4, 16, 32), seed=4)
    got = nki.simulate(kernel)(x, np.array([[3]], np.int32))
    np.testing.assert_array_equal(got[0], x[1])
    np.testing.assert_array_equal(got[1], x[3])


def test_a_tensor_is_a_scalar_offset_too():
    def kernel(x, index):
        idx = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=index)
        return copy_out(nl.load(x.ap([[32, 16], [1, 32]], scalar_offset=idx, indirect_dim=0)),
                        (16, 32))

    x = uniform((64, 32), seed=5)
    np.testing.assert_array_equal(nki.simulate(kernel)(x, np.array([[7]], np.int32)), x[7:23])


def test_vector_select_gathers_rows_per_partition():
    def kernel(x, indices):
        idx = nl.ndarray((8, 1), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=indices)
        rows = nl.load(x.vector_select(0, idx))  # (8, 16, 4)
        out = nl.ndarray((8, 16, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=rows)
        return out

    x = uniform((10, 16, 4), seed=6)
    indices = np.array([[9], [0], [3], [3], [7], [1], [2], [8]], np.uint32)
    np.testing.assert_array_equal(nki.simulate(kernel)(x, indices), x[indices[:, 0]])


def test_a_method_nki_has_and_trnsim_lacks_says_so():
    def kernel(x):
        t = nl.load(x)
        with pytest.raises(NotImplementedError, match=r"NkiTensor.indirect \(NKI 0.6\) is not "
                                                      r"implemented in trnsim yet"):
            t.indirect(t)
        with pytest.raises(AttributeError, match="no attribute 'no_such_method'"):
            t.no_such_method()  # noqa: B018

    nki.simulate(kernel)(uniform((128, 4)))


def test_assignment_copies_into_views():
    """t[key] = value (NKI's migration guide's block-folding example): a tile loaded into a
    view of a bigger tile, a number into an on-chip view, a view into an HBM tensor."""
    def kernel(inp):
        res = nl.ndarray(inp.shape, dtype=inp.dtype, buffer=nl.shared_hbm)
        buf = nl.ndarray((128, 4, 64), dtype=inp.dtype, buffer=nl.sbuf)
        for i in range(4):
            buf[0:128, i, 0:64] = nl.load(inp[i])
        buf[0:32, 2, 8:16] = 7
        for i in range(4):
            res[i] = buf[:, i, :]
        return res

    x = uniform((4, 128, 64), seed=9)
    expected = x.copy()
    expected[2, 0:32, 8:16] = 7
    np.testing.assert_array_equal(nki.simulate(kernel)(x), expected)


def test_assignment_of_another_shape_or_a_number_to_hbm_is_an_error():
    def wrong_shape(inp):
        buf = nl.ndarray((128, 32), dtype=inp.dtype, buffer=nl.sbuf)
        buf[...] = nl.load(inp)  # the assignment
        return inp

    def number_to_hbm(inp):
        out = nl.ndarray(inp.shape, dtype=inp.dtype, buffer=nl.shared_hbm)
        out[0:8, :] = 1.0  # the assignment
        return out

    x = uniform((128, 64))
    expect_error_at(wrong_shape, line_of(wrong_shape, "the assignment"),
                    r"assigning a \[128, 64\] tensor to a \[128, 32\] view \(the same shape\)",
                    x)
    expect_error_at(number_to_hbm, line_of(number_to_hbm, "the assignment"),
                    r"assigning a number to a view of .* in shared_hbm", x)

    def a_string(inp):
        t = nl.ndarray((128, 64), dtype=inp.dtype, buffer=nl.sbuf)
        t[...] = "zero"
        return inp

    with pytest.raises(TypeError, match=r"t\[key\] = value takes a tile of the view's shape or "
                                        r"a number, not 'zero'"):
        nki.simulate(a_string)(x)


def test_ap_counts_in_the_views_dtype_and_from_its_start():
    """NKI: .ap() reads in the tensor's dtype unless dtype= says otherwise, from the view's
    start; .offset counts from the storage's start (whole partitions on chip)."""
    seen = []

    def kernel(x):
        halves = x.view(nl.int16)[1:2, :]  # row 1 of x as 32 int16 halves
        out = nl.ndarray((1, 32), dtype=nl.int16, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=halves.ap([[32, 1], [1, 32]]))
        t = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
        u = t[32:64, 2:6]
        seen.append((u.offset, t.ap(pattern=u.get_pattern(), offset=u.offset).offset))
        return out

    x = np.arange(4 * 16, dtype=np.int32).reshape(4, 16)
    np.testing.assert_array_equal(nki.simulate(kernel)(x), x.view(np.int16)[1:2])
    assert seen == [(32 * 16 + 2, 32 * 16 + 2)]


def test_ap_of_a_view_with_a_register_offset_is_refused():
    def kernel(x, index):
        idx = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=index)
        picked = x.select(0, idx)
        picked.ap(picked.get_pattern())  # re-pattern

    expect_error_at(kernel, line_of(kernel, "# re-pattern"), r"the pattern would drop the offset",
                    uniform((4, 16, 32)), np.array([[3]], np.int32))


def test_rearrange_checks_a_fixed_size_of_a_plain_dim():
    def kernel(x):
        t = nl.load(x)  # (128, 4, 6)
        with pytest.raises(ValueError, match="'a' is 4, not 5"):
            t.rearrange(("p", "a", "b"), ("p", "b", "a"), {"a": 5})

    nki.simulate(kernel)(uniform((128, 4, 6)))
