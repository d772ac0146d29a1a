"""trnsim from Python: what NKI has no words for.

The chip a kernel runs on, the run options, the timing report of the last run. Kernels are
written with the `nki` package (NKI 0.6's API) and run with `nki.simulate(kernel)(*arrays)`
or an `@nki.jit` kernel called with NumPy arrays; see docs/python.md.
"""

import json
import os

from . import _core

Error = _core.Error  # every trnsim error: "file:line:col: error: what (why)" and notes

_state = {
    "chip": os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3"),
    "timing_only": False,
    "check_hazards": True,
    "last_report": None,
}


def set_chip(chip):
    """Runs the next kernels on `chip`: a preset name (trn1, trn2, trn3) or a config file."""
    _state["chip"] = str(chip)


def chip():
    """The chip the next kernels run on."""
    return _state["chip"]


def set_options(timing_only=None, check_hazards=None):
    """timing_only: time the run without computing data (outputs are None);
    check_hazards: check the compiled kernel for races between queues."""
    if timing_only is not None:
        _state["timing_only"] = bool(timing_only)
    if check_hazards is not None:
        _state["check_hazards"] = bool(check_hazards)


class typed:  # noqa: N801  (used like a function: trnsim.typed(array, nl.bfloat16))
    """An input array with the NKI dtype it is to have in HBM, for the dtypes NumPy lacks
    (bfloat16, fp8, ...): its values, rounded to nearest even into `dtype`."""

    def __init__(self, array, dtype):
        if not isinstance(dtype, _core.DType):
            raise TypeError(f"trnsim.typed: {dtype!r} is not an NKI dtype (nl.bfloat16, ...)")
        self.array = array
        self.dtype = dtype


def last_report():
    """The timing report of the last run as a dict (total_ns, per-queue busy and stall time,
    achieved vs peak rates), or None before the first run."""
    return _state["last_report"]


def last_host_times():
    """Host time of the last run: trace_ms (the Python kernel running), compile_ms, build_s
    (both, as the caller saw them), simulation_s, and the compiled instructions."""
    return _state.get("last_host")


def _run(fn, arrays, names, dtypes, lnc):
    outputs, report, host = _core.simulate(
        fn, list(arrays), list(names), list(dtypes), _state["chip"], lnc,
        _state["timing_only"], _state["check_hazards"])
    _state["last_report"] = json.loads(report) if report else None
    _state["last_host"] = dict(host)
    return outputs
