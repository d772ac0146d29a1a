"""nki.language (NKI 0.6): dtypes, buffers, tile sizes, declarations, data movement, loop
iterators and the operations' identifiers (nl.add, nl.exp, ... as `op=` of nki.isa)."""

import builtins
import os

import trnsim as _trnsim
from trnsim import _core

from . import _names

# Dtypes: comparable, hashable, printable (NKI 0.6 spellings).
float32 = _core.DType.float32
tfloat32 = _core.DType.tfloat32
bfloat16 = _core.DType.bfloat16
float16 = _core.DType.float16
float8_e4m3 = _core.DType.float8_e4m3  # legacy IEEE-style E4M3 (Inf, NaN, max 240)
float8_e4m3fn = _core.DType.float8_e4m3fn
float8_e5m2 = _core.DType.float8_e5m2
float8_e4m3fn_x4 = _core.DType.float8_e4m3fn_x4
float8_e5m2_x4 = _core.DType.float8_e5m2_x4
float4_e2m1fn_x4 = _core.DType.float4_e2m1fn_x4
float8_e8m0fnu = _core.DType.float8_e8m0fnu
int8 = _core.DType.int8
int16 = _core.DType.int16
int32 = _core.DType.int32
uint8 = _core.DType.uint8
uint16 = _core.DType.uint16
uint32 = _core.DType.uint32
bool_ = uint8  # NKI's boolean is stored as one byte; trnsim's is that byte (docs/python.md)
DType = _core.DType  # the type of the dtypes above

# Buffers.
sbuf = _core.Buffer.sbuf
psum = _core.Buffer.psum
hbm = _core.Buffer.private_hbm
private_hbm = _core.Buffer.private_hbm
shared_hbm = _core.Buffer.shared_hbm
MemoryRegion = _core.Buffer  # the type of the buffers above

ndarray = _core.ndarray
full = _core.full
load = _core.load
store = _core.store
copy = _core.copy
matmul = _core.matmul
transpose = _core.transpose
softmax = _core.softmax
program_id = _core.program_id
num_programs = _core.num_programs


def program_ndim():
    """The number of dims of the launch grid: 0 without one (kernel(...)), else 1 (trnsim
    launches kernel[n] and kernel[(n,)] on a logical core of n)."""
    return _launch["grid_ndim"]


_launch = {"grid_ndim": 0}  # set by nki.jit for the launch being traced


def zeros(shape, dtype, buffer=sbuf, name=""):
    return _core.full(shape, 0.0, dtype, buffer, name)


def ones(shape, dtype, buffer=sbuf, name=""):
    return _core.full(shape, 1.0, dtype, buffer, name)


def zeros_like(x, dtype=None, buffer=None, name=""):
    return _core.full(x.shape, 0.0, dtype or x.dtype, buffer or sbuf, name)


def empty_like(x, dtype=None, buffer=None, name=""):
    return _core.ndarray(x.shape, dtype or x.dtype, buffer or sbuf, name)


def _buffer_of(x):
    return x.buffer if isinstance(x, _core.Tensor) else x


def is_hbm(buffer):
    return _buffer_of(buffer) in (_core.Buffer.private_hbm, _core.Buffer.shared_hbm)


def is_sbuf(buffer):
    return _buffer_of(buffer) == _core.Buffer.sbuf


def is_psum(buffer):
    return _buffer_of(buffer) == _core.Buffer.psum


def is_on_chip(buffer):
    return is_sbuf(buffer) or is_psum(buffer)


def ds(start, size):
    """nl.ds(start, size): the slice [start, start + size)."""
    return slice(start, start + size)


# Loop iterators are Python ranges in NKI 0.6 (the loops unroll when traced).
def affine_range(start, stop=None, step=1):
    return range(start) if stop is None else range(start, stop, step)


sequential_range = affine_range
static_range = affine_range

# Dynamic loops: traced once, run on the device as loops over registers (docs/python.md,
# docs/dynamic-loops.md). fori_loop(lower, upper, body_fun, step=1) calls body_fun(i) once
# with the loop variable register i; while_loop(init, body_fun) runs `r = init; while r:
# r = body_fun(r)`.
fori_loop = _core.fori_loop
while_loop = _core.while_loop


def dynamic_range(start, stop=None, step=1):
    """Deprecated in NKI 0.6 (use fori_loop): `for i in nl.dynamic_range(n):` runs its body
    on the device; the Python loop runs once, with i the loop variable register."""
    lower, upper = (0, start) if stop is None else (start, stop)
    i = _core.begin_fori_loop(lower, upper, step)
    try:
        yield i
    finally:
        _core.end_dynamic_loop()


class _TileSize:
    """nl.tile_size: the limits of the chip, as plain ints: the chip being traced for inside a
    kernel, else the one the next kernels run on (trnsim.chip())."""

    def __getattr__(self, field):
        if field.startswith("__"):
            raise AttributeError(field)
        import trnsim  # the package imports this module first

        return _core.tile_size(field, trnsim.chip())


tile_size = _TileSize()


def _is_tensor(x):
    return isinstance(x, _core.Tensor)


class _Operation:
    """An NKI operation (nl.add, nl.exp, ...): the `op=` of nki.isa calls, and callable as a
    tile operation that returns a new SBUF tile, lowered to the nki.isa instruction that
    computes it (tensor_tensor, tensor_scalar, activation)."""

    def __init__(self, name, op):
        self.__name__ = name
        self._op = op

    def __repr__(self):
        return f"nl.{self.__name__}"


# Promotion of two tile dtypes (NKI: "whichever input type has the highest precision"; its
# table is not public, so this lattice is the model's guess, docs/python.md): a float beats an
# integer; fp32 (and tf32, stored as fp32) beats the 16-bit floats, which beat fp8; bf16 with
# fp16 and the two fp8 types with each other meet one level up; integers widen, signed wins.
_FLOAT_RANK = {"float8_e4m3": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "bfloat16": 2,
               "float16": 2, "tfloat32": 3, "float32": 3}
_INT_BITS = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32}


def _promote(a, b):
    if a == b:
        return a
    ra, rb = _FLOAT_RANK.get(a.name), _FLOAT_RANK.get(b.name)
    if ra or rb:
        if not (ra and rb):
            return a if ra else b
        if ra != rb:
            return a if ra > rb else b
        return {1: bfloat16, 2: float32, 3: float32}[ra]
    if a.name not in _INT_BITS or b.name not in _INT_BITS:
        raise TypeError(f"no common dtype of {a.name} and {b.name} for a tile operation "
                        "(pass dtype=)")
    bits = builtins.max(_INT_BITS[a.name], _INT_BITS[b.name])
    signed = a.name.startswith("int") or b.name.startswith("int")
    return DType.__members__[f"{'int' if signed else 'uint'}{bits}"]


def _broadcast_shape(x, y, name):
    """NumPy's broadcast of two tile shapes of the same rank."""
    if len(x.shape) != len(y.shape):
        raise ValueError(f"nl.{name}: tiles of shapes {list(x.shape)} and {list(y.shape)} have "
                         "different ranks")
    shape = []
    for a, b in zip(x.shape, y.shape):
        if a != b and 1 not in (a, b):
            raise ValueError(f"nl.{name}: shapes {list(x.shape)} and {list(y.shape)} do not "
                             "broadcast")
        shape.append(builtins.max(a, b))
    return shape


def _is_column(t, shape):
    """[P, 1, ...] against [P, F, ...]: a per-partition operand of tensor_scalar."""
    return t.shape[0] == shape[0] and builtins.all(d == 1 for d in t.shape[1:])


class _AluOperation(_Operation):
    """nl.add(x, y, dtype=None) and the other binary operations, as NKI's: a tile and a number
    or a per-partition [P, 1] column (tensor_scalar), or two tiles whose shapes broadcast
    (tensor_tensor over broadcast views; a partition dim of 1 is copied across partitions
    first, see broadcast_to). The result has `dtype`, else the promoted dtype of the tiles."""

    def __call__(self, x, y, dtype=None):
        tile_x, tile_y = _is_tensor(x), _is_tensor(y)
        if not tile_x and not tile_y:
            raise TypeError(f"nl.{self.__name__}: at least one operand must be a tile, got "
                            f"{type(x).__name__} and {type(y).__name__}")
        if not (tile_x and tile_y):
            tile, number = (x, y) if tile_x else (y, x)
            out = _core.ndarray(tile.shape, dtype or tile.dtype, sbuf)
            _core.isa.tensor_scalar(out, tile, op0=self._op, operand0=number, reverse0=not tile_x)
            return out
        shape = _broadcast_shape(x, y, self.__name__)
        out = _core.ndarray(shape, dtype or _promote(x.dtype, y.dtype), sbuf)
        for tile, other, reverse in ((y, x, False), (x, y, True)):
            if list(other.shape) == shape and _is_column(tile, shape) and list(tile.shape) != shape:
                column = tile.reshape([shape[0], 1]) if tile.ndim > 2 else tile
                _core.isa.tensor_scalar(out, other, op0=self._op, operand0=column,
                                        reverse0=reverse)
                return out
        _core.isa.tensor_tensor(out, broadcast_to(x, shape), broadcast_to(y, shape), op=self._op)
        return out


class _Activation(_Operation):
    """nl.exp(x, dtype=None) and the other activation functions: one ScalarE activation into
    a new SBUF tile of `dtype` (default: x's)."""

    def __call__(self, x, dtype=None):
        out = _core.ndarray(x.shape, dtype or x.dtype, sbuf)
        _core.isa.activation(out, op=self._op, data=x)
        return out


class _UnaryOperation(_Operation):
    """nl.invert(x, dtype=None): an operation of one tile whose lowering the C++ nl namespace
    has (the `op=` of nki.isa calls all the same)."""

    def __init__(self, name, op, lower):
        super().__init__(name, op)
        self._lower = lower

    def __call__(self, x, dtype=None):
        return self._lower(x, dtype)


for _op in _core.AluOp.__members__.values():
    globals()[_op.name] = _AluOperation(_op.name, _op)
for _f in _core.ActivationFunc.__members__.values():
    if _f.name not in globals():  # an ALU op of the same name (abs, ...) keeps its ALU meaning
        globals()[_f.name] = _Activation(_f.name, _f)
del _op, _f
# nl.invert is a bitvec operator of one operand (NKI: XOR with all ones); nl.prelu is an
# operator constant only (its slope is activate2's relu_param), as in NKI.
invert = _UnaryOperation("invert", _core.AluOp.invert, _core.invert)
# nl.sin / nl.cos take any finite x (ScalarE's functions take [-pi, pi]): reduced modulo 2 pi
# first; as an `op=` they are the activation functions themselves.
sin = _UnaryOperation("sin", _core.ActivationFunc.sin, _core.sin)
cos = _UnaryOperation("cos", _core.ActivationFunc.cos, _core.cos)
prelu = _Operation("prelu", _core.ActivationFunc.prelu)


def floor(x, dtype=None):
    """The largest integral value <= x: x - mod(x, 1), one VectorE scalar_tensor_tensor."""
    return _core.floor(x, dtype)


def ceil(x, dtype=None):
    """The smallest integral value >= x: x - mod(x, -1), one VectorE scalar_tensor_tensor."""
    return _core.ceil(x, dtype)


def trunc(x, dtype=None):
    """x rounded toward zero: x - fmod(x, 1), one VectorE scalar_tensor_tensor."""
    return _core.trunc(x, dtype)


def tan(x, dtype=None):
    """sin(r) / cos(r) of r = fmod(x, pi): VectorE fmod, two ScalarE activations, a divide."""
    return _core.tan(x, dtype)


# Reductions over free axes, into a new SBUF tile (nki.isa.tensor_reduce).

def _free_axes(x, axis):
    axes = [axis] if isinstance(axis, int) else list(axis)
    return sorted(a + x.ndim if a < 0 else a for a in axes)


def _reduced_shape(x, axes, keepdims):
    if keepdims:
        shape = [1 if d in axes else n for d, n in enumerate(x.shape)]
    else:
        shape = [n for d, n in enumerate(x.shape) if d not in axes]
    return shape + [1] * (2 - len(shape))  # an on-chip tile has at least 2 dims


def _reduce(op, x, axis, dtype, keepdims, result_dtype=None):
    axes = _free_axes(x, axis)
    out = _core.ndarray(_reduced_shape(x, axes, keepdims), result_dtype or dtype or x.dtype, sbuf)
    _core.isa.tensor_reduce(out, op, x, axis=axes)
    return out


def sum(x, axis, dtype=None, keepdims=False):  # noqa: A001  (NKI's name)
    return _reduce(_core.AluOp.add, x, axis, dtype, keepdims)


def prod(x, axis, dtype=None, keepdims=False):
    return _reduce(_core.AluOp.multiply, x, axis, dtype, keepdims)


def max(x, axis, dtype=None, keepdims=False):  # noqa: A001
    return _reduce(_core.AluOp.maximum, x, axis, dtype, keepdims)


def min(x, axis, dtype=None, keepdims=False):  # noqa: A001
    return _reduce(_core.AluOp.minimum, x, axis, dtype, keepdims)


def all(x, axis, dtype=None):  # noqa: A001
    return _reduce(_core.AluOp.logical_and, x, axis, dtype, False)


def _count(x, axes):
    n = 1
    for d in axes:
        n *= x.shape[d]
    return n


def mean(x, axis, dtype=None, keepdims=False):
    """The fp32 sum, then one multiply by 1/n rounded once into dtype."""
    axes = _free_axes(x, axis)
    total = _reduce(_core.AluOp.add, x, axes, None, keepdims, result_dtype=float32)
    out = _core.ndarray(total.shape, dtype or x.dtype, sbuf)
    _core.isa.tensor_scalar(out, total, op0=_core.AluOp.multiply, operand0=1.0 / _count(x, axes))
    return out


def var(x, axis, dtype=None, keepdims=False):
    """The population variance (NumPy's ddof=0) over all free axes: the mean, the squared
    deviations, their fp32 sum times 1/n."""
    axes = _free_axes(x, axis)
    if axes != list(range(1, x.ndim)):
        raise NotImplementedError("nl.var over some of a tile's free axes is not implemented in "
                                  "trnsim yet (over all of them it is)")
    m = mean(x, axes, dtype=float32, keepdims=True)
    flat = [x.shape[0], _count(x, axes)]
    deviation = _core.ndarray(flat, float32, sbuf)
    _core.isa.tensor_scalar(deviation, x.reshape(flat) if x.ndim > 2 else x,
                            op0=_core.AluOp.subtract, operand0=m.reshape([x.shape[0], 1]))
    square = _core.ndarray(flat, float32, sbuf)
    _core.isa.tensor_tensor(square, deviation, deviation, op=_core.AluOp.multiply)
    total = _reduce(_core.AluOp.add, square, 1, float32, keepdims=True)
    out = _core.ndarray(_reduced_shape(x, axes, keepdims), dtype or x.dtype, sbuf)
    _core.isa.tensor_scalar(out, total.reshape(out.shape), op0=_core.AluOp.multiply,
                            operand0=1.0 / flat[1])
    return out


def negative(x, dtype=None):
    out = _core.ndarray(x.shape, dtype or x.dtype, sbuf)
    _core.isa.tensor_scalar(out, x, op0=_core.AluOp.multiply, operand0=-1.0)
    return out


def logical_not(x, dtype=None):
    """1 where x is 0, else 0."""
    out = _core.ndarray(x.shape, dtype or x.dtype, sbuf)
    _core.isa.tensor_scalar(out, x, op0=_core.AluOp.equal, operand0=0.0)
    return out


def _predicate(condition, when_zero=False):
    """A uint8 select predicate from a condition of any dtype: 1 where it is nonzero (or,
    when_zero, where it is zero)."""
    out = _core.ndarray(condition.shape, uint8, sbuf)
    test = _core.AluOp.equal if when_zero else _core.AluOp.not_equal
    _core.isa.tensor_scalar(out, condition, op0=test, operand0=0.0)
    return out


def where(condition, x, y, dtype=None):
    """x where condition is nonzero, else y. A number or [P, 1] x or y is one select; with
    two full tiles, y is copied and x copied over it where the condition holds."""
    shape = condition.shape
    tile_x = _is_tensor(x) and tuple(x.shape) == tuple(shape)
    tile_y = _is_tensor(y) and tuple(y.shape) == tuple(shape)
    if not tile_x and not tile_y:
        raise TypeError("nl.where: x or y must be a tile of the condition's shape")
    if not tile_y:
        out = _core.ndarray(shape, dtype or x.dtype, sbuf)
        _core.isa.select_reduce(out, _predicate(condition), x, y)
        return out
    if not tile_x:
        out = _core.ndarray(shape, dtype or y.dtype, sbuf)
        _core.isa.select_reduce(out, _predicate(condition, when_zero=True), y, x)
        return out
    out = _core.ndarray(shape, dtype or x.dtype, sbuf)
    _core.isa.tensor_copy(out, y)
    _core.isa.tensor_copy_predicated(out, x, _predicate(condition))
    return out


def expand_dims(x, axis):
    """A view of x with a new size-1 dim at axis."""
    return x.expand_dim(axis)


def broadcast_to(x, shape, dtype=None):
    """x broadcast to shape. Free dims of size 1: a view (no data moves) unless dtype asks for
    a cast. The partition dim of size 1 ([1, F] -> [P, F]): a new SBUF tile, through a
    scratch HBM row the DMA reads P times."""
    shape = list(shape)
    if len(shape) != x.ndim:
        raise ValueError(f"nl.broadcast_to: a {x.ndim}-dim tile to shape {shape}")
    if is_hbm(x.buffer):
        raise ValueError("nl.broadcast_to takes an on-chip tile (view an HBM tensor with "
                         ".broadcast(dim, size))")
    view = x
    for d in range(1, x.ndim):
        if view.shape[d] != shape[d]:
            view = view.broadcast(d, shape[d])
    if shape[0] == x.shape[0]:
        return view if dtype is None or dtype == x.dtype else copy(view, dtype)
    if x.shape[0] != 1:
        raise ValueError(f"nl.broadcast_to: partition dim {x.shape[0]} to {shape[0]} (only a "
                         "partition dim of 1 broadcasts)")
    row = _core.ndarray(list(x.shape), x.dtype, private_hbm)
    _core.isa.dma_copy(row, x)
    rows = row.broadcast(0, shape[0])
    for d in range(1, x.ndim):
        if rows.shape[d] != shape[d]:
            rows = rows.broadcast(d, shape[d])
    out = _core.ndarray(shape, dtype or x.dtype, sbuf)
    _core.isa.dma_copy(out, rows)
    return out


def load_transpose2d(src, dtype=None):
    """HBM [A, B] -> a new SBUF tile [B, A]: one DMA transpose (and a copy to cast)."""
    if len(src.shape) != 2:
        raise ValueError(f"nl.load_transpose2d takes a 2-D HBM tensor, not {list(src.shape)}")
    out = _core.ndarray([src.shape[1], src.shape[0]], src.dtype, sbuf)
    _core.isa.dma_transpose(out, src)  # a DMA transpose keeps the dtype
    return out if dtype is None or dtype == src.dtype else copy(out, dtype)


def no_reorder():
    """`with nl.no_reorder():` the instructions of the block keep their program order when
    the compiler schedules them (it still picks their engines; others may move around them)."""
    return _core.NoReorder()


NkiTensor = _core.Tensor  # the type of tensors and tiles (shape, dtype, views, ...)


def _rearrange(self, src_pattern, dst_pattern, fixed_sizes=None):
    """NkiTensor.rearrange (einops-style): split the grouped dims of src_pattern, permute
    the names into dst_pattern's order, merge its groups; views only (reshape_dim, permute,
    flatten_dims)."""
    fixed = dict(fixed_sizes or {})
    src, dst = tuple(src_pattern), tuple(dst_pattern)
    if len(src) != self.ndim:
        raise ValueError(f"rearrange: {len(src)} source dims for a {self.ndim}-dim tensor")

    def names(entry):
        return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)

    view = self
    for dim in reversed(range(len(src))):  # right to left: earlier dims keep their index
        group = names(src[dim])
        if len(group) > 1:
            view = view.reshape_dim(dim, tuple(fixed.get(n, -1) for n in group))
    atoms = [n for entry in src for n in names(entry)]
    for k, entry in enumerate(src):  # a fixed size of an ungrouped name must be its dim's
        if len(names(entry)) == 1 and entry in fixed and fixed[entry] != self.shape[k]:
            raise ValueError(f"rearrange: {entry!r} is {self.shape[k]}, not {fixed[entry]}")
    wanted = [n for entry in dst for n in names(entry)]
    if sorted(map(str, atoms)) != sorted(map(str, wanted)) or len(set(atoms)) != len(atoms):
        raise ValueError(f"rearrange: {dst} does not name each dim of {src} exactly once")
    view = view.permute(tuple(atoms.index(n) for n in wanted))
    starts, at = [], 0
    for entry in dst:
        starts.append((at, at + len(names(entry)) - 1))
        at += len(names(entry))
    for first, last in reversed(starts):
        if last > first:
            view = view.flatten_dims(first, last)
    return view


def _missing_method(self, name):
    error = _names.missing("nki.language.NkiTensor", name, dir(NkiTensor))
    if isinstance(error, AttributeError) and error.args:  # not NKI's: Python's own wording
        error = AttributeError(error.args[0].replace("module 'nki.language.NkiTensor'",
                                                     "'NkiTensor' object"))
    raise error


NkiTensor.rearrange = _rearrange
NkiTensor.__getattr__ = _missing_method  # an NKI 0.6 method trnsim lacks: NotImplementedError


class NKIObject:
    """A base for plain objects passed into kernels (NKI's dataclass-like configuration
    objects): its keyword arguments become attributes."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({fields})"


def rand(shape, dtype, buffer=sbuf, name=""):
    """A new tile of uniform random values in [0, 1) (VectorE rand2, NeuronCore-v4)."""
    out = _core.ndarray(shape, dtype, buffer, name)
    _core.isa.rand2(out, 0.0, 1.0)
    return out


def shared_identity_matrix(n, dtype=uint8, dst=None):
    """An n x n identity matrix in SBUF (GpSimd iota of i - p, then a compare with 0), written
    into dst when given."""
    index = _core.ndarray([n, n], int32, sbuf)
    _core.isa.iota(index, [[1, n]], offset=0, channel_multiplier=-1)
    out = dst if dst is not None else _core.ndarray([n, n], dtype, sbuf)
    _core.isa.tensor_scalar(out, index, op0=_core.AluOp.equal, operand0=0.0)
    return out


def rms_norm(x, w, axis, n, epsilon=1e-6, dtype=None, compute_dtype=None):
    """x / sqrt(sum(x^2) / n + epsilon) * w over the last axis of a 2-D tile, w [1, F] or
    [P, F]: ScalarE squares and sums each row, ScalarE takes 1/sqrt(mean + epsilon), VectorE
    multiplies by it and by w (the rmsnorm example's instructions)."""
    if axis not in (-1, x.ndim - 1) or x.ndim != 2:
        raise NotImplementedError("nl.rms_norm over the last axis of a 2-D tile is implemented "
                                  "in trnsim; other axes are not yet")
    del compute_dtype  # the engines compute in fp32
    rows, cols = x.shape
    square = _core.ndarray([rows, cols], float32, sbuf)
    sumsq = _core.ndarray([rows, 1], float32, sbuf)
    _core.isa.activation(square, _core.ActivationFunc.square, x, reduce_res=sumsq)
    eps = _core.full([rows, 1], epsilon, float32, sbuf, "")
    rstd = _core.ndarray([rows, 1], float32, sbuf)
    _core.isa.activation(rstd, _core.ActivationFunc.rsqrt, sumsq, scale=1.0 / n, bias=eps)
    out = _core.ndarray([rows, cols], dtype or x.dtype, sbuf)
    _core.isa.scalar_tensor_tensor(out, x, _core.AluOp.multiply, rstd, _core.AluOp.multiply,
                                   broadcast_to(w, [rows, cols]))
    return out


def dropout(x, rate, dtype=None):
    """x with each element zeroed with probability `rate` (a number or a [P, 1] tile), no
    rescaling, as NKI's: one VectorE dropout, then a copy when dtype differs from x's."""
    kept = _core.ndarray(list(x.shape), x.dtype, sbuf)
    _core.isa.dropout(kept, x, rate)
    return kept if dtype is None or dtype == x.dtype else _core.copy(kept, dtype)


def shared_constant(constant):
    """A new shared HBM tensor holding `constant` (a NumPy array, or the path of a .npy file),
    written into HBM before the kernel runs. Its dtype is the array's as a kernel argument's
    would be: float32, float16, the integer types, bool as nl.bool_; trnsim.typed(array,
    nl.bfloat16) or trnsim.bits(words, dtype) for the dtypes NumPy lacks."""
    import numpy
    from . import _kernel  # (it imports this module)
    if isinstance(constant, (str, os.PathLike)):
        constant = numpy.load(constant)
    elif not isinstance(constant, (numpy.ndarray, _trnsim.typed, _trnsim.bits)):
        constant = numpy.asarray(constant)
    array, dtype, bits = _kernel.host_argument(constant, "nl.shared_constant's constant")
    return _core.shared_constant(array, dtype, bits)


def device_print(print_prefix, tensor):
    """Prints print_prefix and the values `tensor` (SBUF or HBM) holds at this point of the
    kernel, once the run has computed them (a DMA snapshots them into HBM, costing simulated
    time as on hardware); nothing in timing-only runs."""
    _core.device_print(str(print_prefix), tensor)


def random_seed(seed):
    """Re-seeds the VectorE random generators (which nl.rand and nl.dropout draw from) from
    a [1, 1] 32-bit tile: nisa.set_rng_seed."""
    _core.isa.set_rng_seed(seed)


def gather_flattened(data, indices, axis=0, dtype=None):
    """out[p, i...] = data[p, flat index indices[p, i...]] over data's flattened free dims:
    one GpSimd nc_n_gather, then a copy when dtype differs from data's. Integer indices: a
    signed tile is read as the uint32 words of its int32 value, so a negative index is out
    of range (an error at run time), never clamped."""
    if axis != 0:
        raise NotImplementedError(
            f"nl.gather_flattened(axis={axis}) is not implemented in trnsim yet (axis=0, "
            "gathering along each partition's flattened free dims, is; docs/python.md)")
    if indices.dtype in (uint8, uint16):  # exact in uint32
        indices = _core.copy(indices, uint32)
    elif indices.dtype in (int8, int16):  # via int32, so a negative index stays out of range
        indices = _core.copy(indices, int32)
    if indices.dtype == int32:
        indices = indices.view(uint32)
    elif indices.dtype != uint32:
        raise TypeError(f"nl.gather_flattened: indices of {indices.dtype}; integer indices are "
                        "taken")
    out = _core.ndarray(list(indices.shape), data.dtype, sbuf)
    _core.isa.nc_n_gather(out, data, indices)
    return out if dtype is None or dtype == data.dtype else _core.copy(out, dtype)


_PROVIDED = {n for n in globals() if not n.startswith("_")}


def __getattr__(name):
    raise _names.missing("nki.language", name, _PROVIDED)
