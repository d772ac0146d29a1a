"""What the Python tests share: running one tile operation on trnsim, and NumPy's rounding
into the dtypes NumPy lacks."""

import inspect

import numpy as np
import pytest

import nki
import nki.language as nl
import trnsim


def bf16(values):
    """float32 values rounded to nearest even into bfloat16, as float32 (NaN stays NaN)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(values), np.float32(np.nan), out)


def on_tiles(body, *arrays, out_shape=None, out_dtype=nl.float32):
    """Runs body(out_tile, *input_tiles) on trnsim: each array loaded into an SBUF tile, the
    result tile (out_shape, default the first array's; out_dtype) stored and returned."""

    def kernel(*inputs):
        tiles = [nl.load(t) for t in inputs]
        shape = out_shape or tuple(inputs[0].shape)
        out = nl.ndarray(shape, dtype=out_dtype, buffer=nl.shared_hbm)
        result = nl.ndarray(shape, dtype=out_dtype, buffer=nl.sbuf)
        body(result, *tiles)
        nl.store(out, value=result)
        return out

    kernel.__name__ = getattr(body, "__name__", "on_tiles")
    return nki.simulate(kernel)(*arrays)


def uniform(shape, low=-1.0, high=1.0, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def expect_error_at(fn, line, pattern, *arrays):
    """Running fn on trnsim fails with an error at `line` of fn's own file matching
    `pattern`."""
    with pytest.raises(trnsim.Error, match=pattern) as caught:
        nki.simulate(fn)(*arrays)
    assert f"{fn.__code__.co_filename}:{line}:" in str(caught.value), str(caught.value)


def line_of(fn, marker):
    """The line of fn's file holding `marker` inside fn's source (an error names the line a
    call starts on)."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if marker in text)
