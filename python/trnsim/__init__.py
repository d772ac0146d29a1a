"""trnsim from Python: what NKI has no words for.

The chip a kernel runs on, the run options, the timing report of the last run. Kernels are
written with the `nki` package (NKI 0.6's API) and run with `nki.simulate(kernel)(*arrays)`
or an `@nki.jit` kernel called with NumPy arrays; see docs/python.md.
"""

import json
import operator
import os

from . import _core

Error = _core.Error  # every trnsim error: "file:line:col: error: what (why)" and notes

_DEFAULT_OPTIONS = {"timing_only": False, "check_hazards": True, "uninitialized": "error",
                    "seed": None, "bit_outputs": False}
_state = {
    "chip": None,  # set_chip's; None: NEURON_PLATFORM_TARGET_OVERRIDE, else trn3
    "options": dict(_DEFAULT_OPTIONS),
    "last_report": None,
    "last_run": None,
}

_UNINITIALIZED = ("error", "nan", "ignore")


def set_chip(chip):
    """Runs the next kernels on `chip`: a preset name (trn1, trn2, trn3) or a config file;
    None goes back to NEURON_PLATFORM_TARGET_OVERRIDE (as NKI reads it), else trn3."""
    _state["chip"] = None if chip is None else str(chip)


def chip():
    """The chip the next kernels run on: set_chip's, else the environment's
    NEURON_PLATFORM_TARGET_OVERRIDE at the time of the call, else trn3."""
    if _state["chip"] is not None:
        return _state["chip"]
    return os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE") or "trn3"


def set_options(timing_only=None, check_hazards=None, uninitialized=None, seed=None,
                bit_outputs=None):
    """Options of the next runs (None leaves one as it is):
    timing_only: time the run without computing data (outputs are None);
    check_hazards: check the compiled kernel for races between queues;
    uninitialized: reading on-chip or HBM bytes nothing wrote is an "error" (the default),
    reads NaN ("nan", as NKI's simulator fills them) or reads whatever is there ("ignore");
    seed: the seed of stochastic rounding and the random-number instructions (default: the
    compiled program's own); bit_outputs: outputs of dtypes NumPy lacks (bfloat16, fp8, ...)
    come back as their stored words (uint16, uint8, ...; see trnsim.bits) instead of float32
    values. reset_options() restores every default."""
    options = _state["options"]
    if timing_only is not None:
        options["timing_only"] = bool(timing_only)
    if check_hazards is not None:
        options["check_hazards"] = bool(check_hazards)
    if uninitialized is not None:
        if uninitialized not in _UNINITIALIZED:
            raise ValueError(f"trnsim.set_options(uninitialized={uninitialized!r}): one of "
                             f"{', '.join(_UNINITIALIZED)}")
        options["uninitialized"] = uninitialized
    if seed is not None:
        options["seed"] = _seed(seed, "trnsim.set_options(seed=...)")
    if bit_outputs is not None:
        options["bit_outputs"] = bool(bit_outputs)


def options():
    """The options of the next runs (a copy)."""
    return dict(_state["options"])


def reset_options():
    """The default options: functional and timed, hazards checked, uninitialized reads are
    errors, each program's own seed."""
    _state["options"] = dict(_DEFAULT_OPTIONS)


def _seed(value, where):
    """A seed as the simulator takes it: an integer in [0, 2**32)."""
    try:
        seed = operator.index(value)
    except TypeError:
        raise TypeError(f"{where}: a seed is an integer, not {value!r}") from None
    if not 0 <= seed < 2**32:
        raise ValueError(f"{where}: a seed is in [0, 2**32), not {seed}")
    return seed


class typed:  # noqa: N801  (used like a function: trnsim.typed(array, nl.bfloat16))
    """An input array with the NKI dtype it is to have in HBM, for the dtypes NumPy lacks
    (bfloat16, fp8, ...): its values, rounded to nearest even into `dtype`."""

    def __init__(self, array, dtype):
        if not isinstance(dtype, _core.DType):
            raise TypeError(f"trnsim.typed: {dtype!r} is not an NKI dtype (nl.bfloat16, ...)")
        self.array = array
        self.dtype = dtype


class bits:  # noqa: N801  (used like a function: trnsim.bits(words, nl.bfloat16))
    """An input given as the stored words of an NKI dtype NumPy lacks: a uint16 array for
    bfloat16, uint8 for the fp8 types, uint32 for the x4-packed fp8 types, taken bit for bit.
    Arguments the kernel writes come back into it as words too."""

    def __init__(self, array, dtype):
        if not isinstance(dtype, _core.DType):
            raise TypeError(f"trnsim.bits: {dtype!r} is not an NKI dtype (nl.bfloat16, ...)")
        self.array = array
        self.dtype = dtype


class shaped:  # noqa: N801  (used like a function: trnsim.shaped((4096, 4096), nl.bfloat16))
    """An input given by its shape and dtype alone: a timing-only run
    (set_options(timing_only=True)) needs no data, so no array is made, however large; a
    functional run fills it with uniform values in [-1, 1) from `seed` (the same values on
    every run and host)."""

    def __init__(self, shape, dtype, seed=0):
        if not isinstance(dtype, _core.DType):
            raise TypeError(f"trnsim.shaped: {dtype!r} is not an NKI dtype (nl.bfloat16, ...)")
        try:
            self.shape = tuple(operator.index(d) for d in shape)
        except TypeError:
            raise TypeError(f"trnsim.shaped: a shape is a sequence of integers, not {shape!r}") \
                from None
        self.dtype = dtype
        self.seed = _seed(seed, "trnsim.shaped(seed=...)")


def last_report():
    """The timing report of the last run as a dict (total_ns, per-queue busy and stall time,
    achieved vs peak rates), or None before the first run."""
    return _state["last_report"]


def last_host_times():
    """Host time of the last run: trace_ms (the Python kernel running), compile_ms, build_s
    (both, as the caller saw them), simulation_s, the compiled instructions, and input_bytes
    (the bytes of input data the run held: none for trnsim.shaped inputs of a timing-only
    run)."""
    return _state.get("last_host")


def last_run():
    """The last run: .write_profile(html=..., trace=...) writes the profiler's explorer
    report (HTML) and Perfetto trace (JSON) of it and returns its headline figures and
    suggestions; .assembly() and .ir() are the compiled programs and the traced kernel as
    text; None before the first run."""
    return _state["last_run"]


def write_profile(html=None, trace=None):
    """The explorer report and/or Perfetto trace of the last run (see last_run())."""
    run = last_run()
    if run is None:
        raise RuntimeError("trnsim.write_profile: no kernel has run yet")
    return run.write_profile(html=str(html or ""), trace=str(trace or ""))


def simulate_ranks(kernel, rank_args, system=None, ranks_per_chip=0):
    """Runs ranks of a kernel at once, each with its own arguments, and the kernel's
    nki.collectives between them: on the ranks of one chip (set_chip's), or with `system`
    (a preset such as "trn2.48xlarge" or a system file) on its chips, `ranks_per_chip` each
    (0: as many as a chip's cores hold). rank_args[r] is rank r's tuple of arguments (or dict
    of keyword arguments); returns each rank's result as nki.simulate does. See
    docs/python.md, "Collectives"."""
    from nki import _kernel  # the nki package builds on this module
    return _kernel.simulate_ranks(kernel, rank_args, system, ranks_per_chip)


def last_collectives():
    """The collectives of the last simulate_ranks run, in the order they completed: dicts of
    op, algorithm, bytes (as nccom-test counts them), ranks (of the group), start_ns, end_ns."""
    return [dict(c) for c in _state.get("last_collectives", [])]


def last_ranks_ns():
    """The simulated time of the last simulate_ranks run (its last core's end), in ns."""
    return _state.get("last_ranks_ns", 0.0)


def _run_ranks(fn, rank_arrays, names, dtypes, bit_inputs, lnc, system, ranks_per_chip):
    if ranks_per_chip < 0:
        raise ValueError(f"trnsim.simulate_ranks: ranks_per_chip {ranks_per_chip} is negative")
    ranks, updated, collectives, simulated_ns, run, output_dtypes = _core.simulate_ranks(
        fn, [list(a) for a in rank_arrays], list(names), list(dtypes), list(bit_inputs), chip(),
        lnc, _state["options"], "" if system is None else str(system), int(ranks_per_chip))
    _state["last_collectives"] = list(collectives)
    _state["last_ranks_ns"] = simulated_ns
    _state["last_ranks_output_dtypes"] = list(output_dtypes)
    _state["last_run"] = run  # every rank's cores, for last_run().write_profile
    _state["last_report"] = None  # a report of one core's run; last_collectives() has these
    return ranks, updated


def _run(fn, arrays, names, dtypes, bit_inputs, lnc):
    """Runs a kernel: (its outputs, per input its contents after the run when the kernel
    wrote it, else None)."""
    outputs, report, host, updated, run, prints = _core.simulate(
        fn, list(arrays), list(names), list(dtypes), list(bit_inputs), chip(), lnc,
        _state["options"])
    # nl.device_print: printed once the run has computed the values (NKI's CPU simulator
    # prints at once; the NRT writes <prefix>/core_<id>/ dumps).
    for prefix, program, values in prints:
        print(prefix if lnc == 1 else f"{prefix} [core {program}]", values)
    _state["last_report"] = json.loads(report) if report else None
    _state["last_host"] = dict(host)
    _state["last_run"] = run
    return outputs, updated
