"""nki.isa (NKI 0.6): one function per instruction, dst first, with NKI's keyword names and
defaults; each is the C++ kernel API's call of the same name (python/bindings/core.cpp)."""

from trnsim import _core

from . import _names

tensor_tensor = _core.isa.tensor_tensor
tensor_scalar = _core.isa.tensor_scalar
activation = _core.isa.activation
tensor_copy = _core.isa.tensor_copy
memset = _core.isa.memset
dma_copy = _core.isa.dma_copy
nc_matmul = _core.isa.nc_matmul
nc_transpose = _core.isa.nc_transpose


class engine:  # noqa: N801  (NKI's spelling)
    """nisa.engine: where an instruction runs (unknown: the compiler chooses)."""
    unknown = None
    tensor = _core.Engine.tensor
    vector = _core.Engine.vector
    scalar = _core.Engine.scalar
    gpsimd = _core.Engine.gpsimd
    sync = _core.Engine.sync


# The deprecated engine constants NKI 0.6 still accepts.
tensor_engine = engine.tensor
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd
unknown_engine = engine.unknown

_PROVIDED = {n for n in globals() if not n.startswith("_")}


def __getattr__(name):
    raise _names.missing("nki.isa", name, _PROVIDED)
