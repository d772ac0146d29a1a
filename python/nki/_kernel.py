"""nki.jit, nki.simulate and kernel[grid]: calling a kernel with NumPy arrays runs it on
trnsim."""

import inspect
import os

import numpy as np

import trnsim
from trnsim import _core

from . import language

# NumPy dtypes that map to an NKI dtype directly (bf16 and fp8 arrays: docs/python.md).
_NUMPY_DTYPES = _core.numpy_dtypes()


def _logical_cores(grid):
    if grid is None:
        return int(os.environ.get("NEURON_LOGICAL_NC_CONFIG", "1"))
    if isinstance(grid, int):
        return grid
    cores = 1
    for g in grid:
        cores *= int(g)
    return cores


class Kernel:
    """What @nki.jit returns: call it with NumPy arrays to run it on trnsim; kernel[n] runs
    it on a logical core of n physical cores (nl.program_id / nl.num_programs)."""

    def __init__(self, fn, grid=None):
        self.fn = fn
        self.grid = grid
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__doc__ = getattr(fn, "__doc__", None)

    def __getitem__(self, grid):
        return Kernel(self.fn, grid)

    def __call__(self, *args, **kwargs):
        if any(_is_input(a) for a in list(args) + list(kwargs.values())) or \
                os.environ.get("NKI_SIMULATOR") == "1":
            return _simulate(self.fn, self.grid, args, kwargs)
        raise NotImplementedError(
            f"{self.__name__}: trnsim runs NKI kernels on NumPy arrays (no Neuron device or "
            "framework tensors here); call it with numpy.ndarray arguments")


def jit(fn=None, **kwargs):
    """@nki.jit or @nki.jit(...): the kernel runs on trnsim when called with NumPy arrays.
    Keyword arguments of NKI's jit (mode, platform_target, ...) are accepted and ignored."""
    del kwargs
    if fn is None:
        return Kernel
    return Kernel(fn)


def simulate(kernel):
    """nki.simulate(kernel)(*arrays): runs a kernel (jit-decorated or a plain function) on
    trnsim, functionally and in time; trnsim.last_report() has the timing."""
    if isinstance(kernel, Kernel):
        return lambda *args, **kwargs: _simulate(kernel.fn, kernel.grid, args, kwargs)
    return lambda *args, **kwargs: _simulate(kernel, None, args, kwargs)


def _is_input(a):
    """An argument that becomes an HBM tensor: a NumPy array, or one with its NKI dtype."""
    return isinstance(a, (np.ndarray, trnsim.typed, trnsim.bits, trnsim.shaped))


def host_argument(a, what, deferred=False):
    """(array, NKI dtype, given as stored words) of an array that becomes an HBM tensor: a
    NumPy array of a dtype NKI has, bool (nl.bool_), trnsim.typed (values rounded into a
    dtype NumPy lacks), trnsim.bits (the dtype's stored words), or with `deferred`
    trnsim.shaped (no data until a functional run reads it: (shape, seed))."""
    if isinstance(a, trnsim.typed):
        return np.ascontiguousarray(a.array, dtype=np.float32), a.dtype, False
    if isinstance(a, trnsim.bits):
        return np.ascontiguousarray(a.array), a.dtype, True
    if isinstance(a, trnsim.shaped):
        if not deferred:
            raise TypeError(f"{what} is a trnsim.shaped, which has no data to hold")
        return (list(a.shape), a.seed), a.dtype, False
    if a.dtype == np.bool_:  # nl.bool_: one byte holding 0 or 1, bit for bit
        return np.ascontiguousarray(a).view(np.uint8), language.bool_, False
    dtype = _NUMPY_DTYPES.get(a.dtype)
    if dtype is None:
        raise TypeError(
            f"{what} is a NumPy array of {a.dtype}, which trnsim does not take (float32, "
            "float16 and the integer types map to NKI dtypes, bool to nl.bool_; "
            "trnsim.typed(array, nl.bfloat16) gives others; docs/python.md)")
    return np.ascontiguousarray(a), dtype, False


def _inputs(fn, args, kwargs):
    """The arguments that become HBM tensors, in argument order: their slots, names, arrays,
    NKI dtypes and whether they hold stored words; and `fn` as the tracer calls it (one
    tensor per such argument, the other arguments as given)."""
    arrays, names, dtypes, slots = [], [], [], []
    positional = list(args)
    try:  # inputs are named after the kernel's parameters in errors and reports
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = []
    for i, a in enumerate(positional):
        if _is_input(a):
            slots.append(("arg", i))
            names.append(params[i] if i < len(params) else f"arg{i}")
    for key, a in kwargs.items():
        if _is_input(a):
            slots.append(("kw", key))
            names.append(key)
    bit_inputs = []
    for kind, key in slots:
        a = positional[key] if kind == "arg" else kwargs[key]
        what = f"{getattr(fn, '__name__', 'kernel')}: argument {names[len(arrays)]!r}"
        array, dtype, bits = host_argument(a, what, deferred=True)
        arrays.append(array)
        dtypes.append(dtype)
        bit_inputs.append(bits)

    def traced(*tensors):
        call_args = list(positional)
        call_kwargs = dict(kwargs)
        for (kind, key), t in zip(slots, tensors):
            if kind == "arg":
                call_args[key] = t
            else:
                call_kwargs[key] = t
        return fn(*call_args, **call_kwargs)

    traced.__name__ = getattr(fn, "__name__", "kernel")
    return slots, names, arrays, dtypes, bit_inputs, traced


def _returned(outputs):
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _copy_back(slots, args, kwargs, updated):
    """Arguments the kernel wrote in place: copied back into the caller's arrays."""
    for (kind, key), after in zip(slots, updated):
        target = args[key] if kind == "arg" else kwargs[key]
        if after is None or isinstance(target, trnsim.shaped):
            continue
        if isinstance(target, (trnsim.typed, trnsim.bits)):
            target = target.array
        target[...] = after.astype(target.dtype, copy=False)


def _other_arguments(args, kwargs):
    """The arguments that do not become tensors, by position or name."""
    others = {i: a for i, a in enumerate(args) if not _is_input(a)}
    others.update({k: a for k, a in kwargs.items() if not _is_input(a)})
    return others


def simulate_ranks(kernel, rank_args, system=None, ranks_per_chip=0):
    """trnsim.simulate_ranks: runs len(rank_args) ranks of a kernel at once, rank r called
    with rank_args[r] (a tuple of arguments, or a dict of keyword arguments), on the ranks of
    one chip or, with `system`, on a system's chips (ranks_per_chip per chip; 0: as many as
    its cores hold). The kernel's nki.collectives calls run between the ranks. Returns each
    rank's result as nki.simulate would (arguments written in place are copied back);
    trnsim.last_collectives() lists the collectives."""
    fn, grid = (kernel.fn, kernel.grid) if isinstance(kernel, Kernel) else (kernel, None)
    if not rank_args:
        raise ValueError("trnsim.simulate_ranks: no ranks (rank_args is empty)")
    calls = [(tuple(a), {}) if isinstance(a, (tuple, list)) else ((), dict(a))
             for a in rank_args]
    slots, names, _, dtypes, bits, traced = _inputs(fn, *calls[0])
    others = _other_arguments(*calls[0])
    rank_arrays = []
    for r, (args, kwargs) in enumerate(calls):
        mine = _inputs(fn, args, kwargs)
        if mine[0] != slots or mine[3] != dtypes:
            raise ValueError(f"trnsim.simulate_ranks: rank {r}'s arguments differ in kind or "
                             "dtype from rank 0's (every rank runs the same kernel)")
        for key, value in _other_arguments(args, kwargs).items():
            if not (value is others[key] or value == others[key]):
                raise ValueError(
                    f"trnsim.simulate_ranks: rank {r}'s argument {key!r} is {value!r}, rank 0's "
                    f"{others[key]!r} (the kernel is traced once: arguments that are not "
                    "arrays must be the same on every rank)")
        rank_arrays.append(mine[2])
    language._launch["grid_ndim"] = 0 if grid is None else 1
    outputs, updated = trnsim._run_ranks(traced, rank_arrays, names, dtypes, bits,
                                         _logical_cores(grid), system, ranks_per_chip)
    for (args, kwargs), written in zip(calls, updated):
        _copy_back(slots, args, kwargs, written)
    return [_returned(o) for o in outputs]


def _simulate(fn, grid, args, kwargs):
    slots, names, arrays, dtypes, bit_inputs, traced = _inputs(fn, args, kwargs)
    language._launch["grid_ndim"] = 0 if grid is None else 1
    outputs, updated = trnsim._run(traced, arrays, names, dtypes, bit_inputs,
                                   _logical_cores(grid))
    _copy_back(slots, list(args), kwargs, updated)
    return _returned(outputs)
