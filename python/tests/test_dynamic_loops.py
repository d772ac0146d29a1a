"""Dynamic loops from Python (NKI 0.6): nl.fori_loop, nl.while_loop and the deprecated
nl.dynamic_range over nisa.register_* values run on the device as loops, traced once; their
rules are errors at the kernel's own line."""

import inspect

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim

ROWS, COLS = 8, 64


def double_rows_below(x, upper):
    """out[r] = 2 x[r] for r < upper[0, 0] (read at run time), 0 elsewhere."""
    out = nl.ndarray((ROWS, COLS), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nl.zeros((ROWS, COLS), dtype=nl.float32))
    bound = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=bound, src=upper)
    upper_reg = nisa.register_alloc()
    nisa.register_load(upper_reg, bound)

    def body(i):
        row = nl.ndarray((1, COLS), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=row, src=x.ap([[COLS, 1], [1, COLS]], scalar_offset=i, indirect_dim=0))
        nisa.tensor_scalar(dst=row, data=row, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out.ap([[COLS, 1], [1, COLS]], scalar_offset=i, indirect_dim=0),
                      src=row)

    nl.fori_loop(0, upper_reg, body)
    return out


@pytest.mark.parametrize("upper", [0, 3, ROWS])
def test_fori_loop_with_a_trip_count_read_at_run_time(upper):
    x = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) / 7
    got = nki.simulate(double_rows_below)(x, np.array([[upper]], dtype=np.int32))
    want = np.where(np.arange(ROWS)[:, None] < upper, x * np.float32(2), np.float32(0))
    np.testing.assert_array_equal(got, want)
    assert trnsim.last_report()["total_ns"] > 0


def test_dynamic_range_of_a_register_and_a_while_loop():
    def kernel(x):
        out = nl.ndarray((ROWS, COLS), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((ROWS, COLS), dtype=nl.float32, buffer=nl.sbuf)
        tile = nl.load(x)
        trips = nisa.register_alloc(5)
        for _ in nl.dynamic_range(trips):  # acc += x, five times, on the device
            nisa.tensor_tensor(dst=acc, data1=acc, data2=tile, op=nl.add)
        # while_loop: halve acc while a countdown kept in SBUF is not 0 (3 trips).
        count = nl.full((1, 1), 3, dtype=nl.int32, buffer=nl.sbuf)
        cond = nisa.register_alloc()
        nisa.register_load(cond, count)

        def halve(r):
            nisa.tensor_scalar(dst=acc, data=acc, op0=nl.multiply, operand0=0.5)
            nisa.tensor_scalar(dst=count, data=count, op0=nl.subtract, operand0=1)
            nisa.register_load(r, count)
            return r

        nl.while_loop(cond, halve)
        nl.store(out, value=acc)
        return out

    x = np.full((ROWS, COLS), 1.5, dtype=np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel)(x), x * np.float32(5 / 8))


def test_nested_loops_run_the_inner_body_on_every_outer_trip():
    """out[i] = sum of x[0..i] row by row: the inner loop's bound is the outer variable plus
    one, kept in SBUF and loaded into a register on each outer trip."""
    def kernel(x):
        out = nl.ndarray((ROWS, COLS), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((1, COLS), dtype=nl.float32, buffer=nl.sbuf)
        bound = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)

        def outer(i):
            nisa.memset(dst=acc, value=0.0)
            nisa.register_store(bound, i)
            nisa.tensor_scalar(dst=bound, data=bound, op0=nl.add, operand0=1)
            upper = nisa.register_alloc()
            nisa.register_load(upper, bound)

            def inner(j):
                row = nl.ndarray((1, COLS), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=row, src=x.ap([[COLS, 1], [1, COLS]], scalar_offset=j))
                nisa.tensor_tensor(dst=acc, data1=acc, data2=row, op=nl.add)

            nl.fori_loop(0, upper, inner)
            nisa.dma_copy(dst=out.ap([[COLS, 1], [1, COLS]], scalar_offset=i), src=acc)

        nl.fori_loop(0, ROWS, outer)
        return out

    x = np.random.default_rng(5).uniform(-1, 1, (ROWS, COLS)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(kernel)(x), np.cumsum(x, axis=0, dtype=np.float32))


def test_a_scalar_offset_moves_by_the_stride_of_indirect_dim():
    """On a slice of columns 16..47, row i of the loop starts i x COLS (the dim's stride)
    after the slice's start, not i x 32 (the slice's width)."""
    def kernel(x):
        out = nl.ndarray((ROWS, 32), dtype=nl.float32, buffer=nl.shared_hbm)

        def body(i):
            row = nl.ndarray((1, 32), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=row, src=x[:, 16:48].ap([[COLS, 1], [1, 32]], scalar_offset=i))
            nisa.dma_copy(dst=out.ap([[32, 1], [1, 32]], scalar_offset=i), src=row)

        nl.fori_loop(0, ROWS, body)
        return out

    x = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    np.testing.assert_array_equal(nki.simulate(kernel)(x), x[:, 16:48])


def _line_of(fragment, fn):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, text in enumerate(lines) if fragment in text)


def test_loop_rules_are_errors_at_the_kernels_line():
    def writes_its_variable():
        nl.fori_loop(0, 4, lambda i: nisa.register_move(i, 3))

    with pytest.raises(trnsim.Error) as caught:
        nki.simulate(writes_its_variable)()
    message = str(caught.value)
    assert f"test_dynamic_loops.py:{_line_of('register_move(i, 3)', writes_its_variable)}:" in message
    assert "loop variable and the bounds of fori_loop are read-only" in message

    def returns_something():
        nl.fori_loop(0, 2, lambda i: 7)

    with pytest.raises(TypeError, match="fori_loop's body returns nothing"):
        nki.simulate(returns_something)()

    def copies_a_register():
        nisa.register_alloc(nisa.register_alloc(1))

    with pytest.raises(TypeError, match="register_move"):
        nki.simulate(copies_a_register)()

    def moves_a_tile_across_partitions():
        t = nl.ndarray((4, 8), dtype=nl.float32, buffer=nl.sbuf)
        nl.fori_loop(0, 2, lambda i: nisa.memset(
            dst=t.ap([[8, 1], [1, 8]], scalar_offset=i, indirect_dim=0), value=0.0))

    with pytest.raises(ValueError, match="inside the partitions, not across them"):
        nki.simulate(moves_a_tile_across_partitions)()

    def register_step():
        nl.fori_loop(0, 4, lambda i: None, step=nisa.register_alloc(1))

    with pytest.raises(TypeError, match="compile-time int"):
        nki.simulate(register_step)()

    def moves_past_the_end(x):
        out = nl.ndarray((ROWS, COLS), dtype=nl.float32, buffer=nl.shared_hbm)

        def body(i):
            row = nl.ndarray((1, COLS), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=row, src=x.ap([[COLS, 1], [1, COLS]], scalar_offset=i,
                                             indirect_dim=0))
            nl.store(out[0:1, :], value=row)

        nl.fori_loop(0, ROWS + 1, body)
        return out

    with pytest.raises(trnsim.Error, match="reaches outside .* when the loop variable is 8"):
        nki.simulate(moves_past_the_end)(np.zeros((ROWS, COLS), dtype=np.float32))
