"""nki.isa (NKI 0.6): one function per instruction, dst first, with NKI's keyword names and
defaults; each is the C++ kernel API's call of the same name (python/bindings/isa.cpp) and
returns an NkiInstruction."""

import enum
import functools

from trnsim import _core

from . import _names

_INSTRUCTIONS = (
    "nc_matmul", "nc_matmul_mx", "nc_transpose", "activation", "activation_reduce",
    "exponential", "tensor_tensor", "tensor_scalar", "scalar_tensor_tensor", "tensor_copy",
    "memset", "reciprocal", "tensor_tensor_scan", "tensor_reduce", "tensor_partition_reduce",
    "bn_stats", "bn_aggr", "max8", "nc_find_index8", "iota", "affine_select", "range_select",
    "select_reduce", "dma_copy", "dma_transpose", "local_gather", "nc_stream_shuffle",
    "quantize_mx", "rand2", "rand_set_state", "rand_get_state", "core_barrier",
    "tensor_scalar_reduce", "activate2", "nc_match_replace8", "tensor_copy_predicated",
    "register_alloc", "register_move", "register_load", "register_store",
    "tensor_scalar_cumulative", "rng", "set_rng_seed", "dropout", "sequence_bounds",
    "nonzero_with_count", "nc_n_gather", "topk", "dma_compute", "sendrecv",
)
_REGISTER_OPERATIONS = ("register_alloc", "register_move", "register_load", "register_store")


# What every instruction call returns (depends_on orders it after others).
NkiInstruction = _core.NkiInstruction


def _returning_instruction(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        return _core.call_recording(fn, args, kwargs)
    return call


for _name in _INSTRUCTIONS:
    _fn = getattr(_core.isa, _name)
    globals()[_name] = _fn if _name in _REGISTER_OPERATIONS else _returning_instruction(_fn)
del _name, _fn

# NKI's name for a register (nisa.register_alloc's result).
VirtualRegister = _core.Register


class engine:  # noqa: N801  (NKI's spelling)
    """nisa.engine: where an instruction runs (unknown: the compiler chooses)."""
    unknown = None
    tensor = _core.Engine.tensor
    vector = _core.Engine.vector
    scalar = _core.Engine.scalar
    gpsimd = _core.Engine.gpsimd
    sync = _core.Engine.sync
    dma = _core.Engine.dma


# The deprecated engine constants NKI 0.6 still accepts.
tensor_engine = engine.tensor
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd
unknown_engine = engine.unknown


class matmul_perf_mode:  # noqa: N801
    """nc_matmul's performance mode (double_row: two rows of FP8 per PE row)."""
    none = _core.MatmulPerfMode.none
    double_row = _core.MatmulPerfMode.double_row


class reduce_cmd(enum.Enum):  # noqa: N801
    """The accumulator command of reducing instructions. tensor_scalar_cumulative takes
    every accumulating command (reduce continues from the lane's accumulator register);
    the reduce_res of the other instructions is reduced within the one instruction (idle,
    reset_reduce), and their reduce / load_reduce raise NotImplementedError."""
    idle = 0
    reset = 1
    reduce = 2
    reset_reduce = 3
    load_reduce = 4


class dge_mode(enum.Enum):  # noqa: N801
    """DMA descriptor generation (accepted; trnsim models one pool of DMA queues)."""
    unknown = 0
    swdge = 1
    hwdge = 2
    none = 3


class oob_mode(enum.Enum):  # noqa: N801
    """Out-of-bounds handling of an indirect DMA (.ap(vector_offset=)): an index outside
    the rows is an error, or its row is skipped."""
    error = 0
    skip = 1


class dma_engine(enum.Enum):  # noqa: N801
    """The engine sendrecv uses."""
    dma = 1
    gpsimd_dma = 2


class nc_version(enum.IntEnum):  # noqa: N801
    """NeuronCore generations: gen2 = Trainium1, gen3 = Trainium2, gen4 = Trainium3."""
    gen2 = 2
    gen3 = 3
    gen4 = 4


def get_nc_version():
    """The NeuronCore generation of the chip the kernel is traced for."""
    return nc_version(_core.nc_generation())


def get_nc_sub_version():
    """The silicon revision within the generation: 0, the first, for every chip trnsim
    models (its chip configs describe one revision per generation)."""
    return 0


# NKI raises NkiValidationError when an instruction breaks a hardware rule; trnsim raises
# trnsim.Error for those (at the kernel's line) and for every other error of the tracer,
# compiler and simulator, so catching this catches them all.
NkiValidationError = _core.Error


_PROVIDED = {n for n in globals() if not n.startswith("_")}


def __getattr__(name):
    raise _names.missing("nki.isa", name, _PROVIDED)
