"""nki.language (NKI 0.6): dtypes, buffers, tile sizes, declarations, data movement, loop
iterators and the operations' identifiers (nl.add, nl.exp, ... as `op=` of nki.isa)."""

from trnsim import _core

from . import _names

# Dtypes: comparable, hashable, printable (NKI 0.6 spellings).
float32 = _core.DType.float32
tfloat32 = _core.DType.tfloat32
bfloat16 = _core.DType.bfloat16
float16 = _core.DType.float16
float8_e4m3fn = _core.DType.float8_e4m3fn
float8_e5m2 = _core.DType.float8_e5m2
float8_e4m3fn_x4 = _core.DType.float8_e4m3fn_x4
float8_e5m2_x4 = _core.DType.float8_e5m2_x4
float4_e2m1fn_x4 = _core.DType.float4_e2m1fn_x4
int8 = _core.DType.int8
int16 = _core.DType.int16
int32 = _core.DType.int32
uint8 = _core.DType.uint8
uint16 = _core.DType.uint16
uint32 = _core.DType.uint32

# Buffers.
sbuf = _core.Buffer.sbuf
psum = _core.Buffer.psum
hbm = _core.Buffer.private_hbm
private_hbm = _core.Buffer.private_hbm
shared_hbm = _core.Buffer.shared_hbm

ndarray = _core.ndarray
zeros = _core.zeros
load = _core.load
store = _core.store
program_id = _core.program_id
num_programs = _core.num_programs


def ds(start, size):
    """nl.ds(start, size): the slice [start, start + size)."""
    return slice(start, start + size)


# Loop iterators are Python ranges in NKI 0.6 (the loops unroll when traced).
def affine_range(start, stop=None, step=1):
    return range(start) if stop is None else range(start, stop, step)


sequential_range = affine_range
static_range = affine_range


class _TileSize:
    """nl.tile_size: the limits of the chip being traced for, as plain ints."""

    def __getattr__(self, field):
        if not _core.tracing():
            raise RuntimeError(f"nl.tile_size.{field} is known while a kernel is traced "
                               "(it depends on the chip the kernel runs on)")
        return _core.tile_size(field)


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


class _AluOperation(_Operation):
    """nl.add(x, y, dtype=None) and the other binary operations: x and y tiles of one shape
    (tensor_tensor), or one of them a number or a [P, 1] tile (tensor_scalar). The result has
    `dtype`, else the tile operand's dtype (NKI promotes mixed dtypes; docs/python.md)."""

    def __call__(self, x, y, dtype=None):
        if _is_tensor(x) and _is_tensor(y) and tuple(x.shape) == tuple(y.shape):
            out = _core.ndarray(x.shape, dtype or x.dtype, sbuf)
            _core.isa.tensor_tensor(out, x, y, op=self._op)
            return out
        if _is_tensor(x):
            out = _core.ndarray(x.shape, dtype or x.dtype, sbuf)
            _core.isa.tensor_scalar(out, x, op0=self._op, operand0=y)
            return out
        if _is_tensor(y):
            out = _core.ndarray(y.shape, dtype or y.dtype, sbuf)
            _core.isa.tensor_scalar(out, y, op0=self._op, operand0=x, reverse0=True)
            return out
        raise TypeError(f"nl.{self.__name__}: at least one operand must be a tile, got "
                        f"{type(x).__name__} and {type(y).__name__}")


class _Activation(_Operation):
    """nl.exp(x, dtype=None) and the other activation functions: one ScalarE activation into
    a new SBUF tile of `dtype` (default: x's)."""

    def __call__(self, x, dtype=None):
        out = _core.ndarray(x.shape, dtype or x.dtype, sbuf)
        _core.isa.activation(out, op=self._op, data=x)
        return out


for _op in _core.AluOp.__members__.values():
    globals()[_op.name] = _AluOperation(_op.name, _op)
for _f in _core.ActivationFunc.__members__.values():
    if _f.name not in globals():  # an ALU op of the same name (abs, ...) keeps its ALU meaning
        globals()[_f.name] = _Activation(_f.name, _f)
del _op, _f

_PROVIDED = {n for n in globals() if not n.startswith("_")}


def __getattr__(name):
    raise _names.missing("nki.language", name, _PROVIDED)
