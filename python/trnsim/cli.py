"""`trnsim run|profile FILE.py:FUNCTION`: a Python NKI kernel run from the command line on
NumPy-generated inputs of given shapes and dtypes, timed, checked against a reference
function when given one, and profiled. The C++ `trnsim` command hands such arguments to
`python3 -m trnsim`, which runs this."""

import argparse
import importlib.util
import os
import sys
import traceback

import numpy as np

import nki
import trnsim
from trnsim import _core

# --dtype spellings: NKI's names and the CLI's short ones.
_DTYPES = {"fp32": "float32", "f32": "float32", "bf16": "bfloat16", "fp16": "float16",
           "f16": "float16", "fp8_e4m3": "float8_e4m3",
           "fp8_e4m3fn": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2"}
# The default relative tolerance of the check by the output's dtype: a few units of its
# rounding (integers: exact, up to --atol).
_RTOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2, "float8_e4m3fn": 0.25,
         "float8_e4m3": 0.25, "float8_e5m2": 0.5}
# NKI dtype name -> the NumPy dtype that holds it as it is (the one table: _core.numpy_dtypes).
_NATIVE = {nki_dtype.name: numpy_dtype for numpy_dtype, nki_dtype in _core.numpy_dtypes().items()}


class UsageError(Exception):
    """A bad command line: printed as `trnsim: error: ...`, exit status 2."""


def _parser():
    p = argparse.ArgumentParser(prog="trnsim", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name, what in (("run", "run a Python NKI kernel"),
                       ("profile", "run and profile a Python NKI kernel")):
        c = sub.add_parser(name, help=what)
        c.add_argument("kernel", help="FILE.py:FUNCTION (an @nki.jit kernel or a plain one)")
        c.add_argument("--shape", action="append", default=[], metavar="DIMS",
                       help="an input's shape, e.g. 1024x512; once per input, in order")
        c.add_argument("--dtype", action="append", default=[], metavar="DTYPE",
                       help="an input's dtype (fp32, bf16, fp16, int32, ...): once for all "
                            "inputs or once per input; default fp32")
        c.add_argument("--reference", metavar="[FILE.py:]FUNCTION",
                       help="a NumPy function of the same inputs to compare the outputs with")
        c.add_argument("--rtol", type=float, help="relative tolerance of the comparison "
                       "(default by the output's dtype: 1e-5 for fp32, 1.6e-2 for bf16, ...)")
        c.add_argument("--atol", type=float, default=1e-6, help="absolute tolerance")
        c.add_argument("--chip", default=trnsim.chip(), help="preset or config file")
        c.add_argument("--lnc", type=int, default=1, help="logical core size (kernel[n])")
        c.add_argument("--seed", type=int, default=0, help="seed of the generated inputs")
        c.add_argument("--ranks", type=int, default=1,
                       help="run this many ranks at once (trnsim.simulate_ranks), each with "
                            "inputs of its own; the kernel's nki.collectives run between them. "
                            "A --reference then gets each input stacked over the ranks "
                            "(axis 0) and returns each output stacked so")
        c.add_argument("--system", metavar="SYSTEM",
                       help="with --ranks: a system preset or file whose chips the ranks run "
                            "on (default: the ranks share one --chip)")
        c.add_argument("--ranks-per-chip", type=int, default=1, metavar="K",
                       help="with --system: ranks on each chip (default 1)")
        c.add_argument("--timing-only", action="store_true",
                       help="time the kernel without computing data")
        c.add_argument("--trace", metavar="FILE", help="write a Perfetto trace (JSON)")
        if name == "profile":
            c.add_argument("-o", "--output", metavar="FILE",
                           help="the explorer report (HTML; default FUNCTION.html)")
    return p


def _load_function(spec, default_file=None):
    path, sep, name = spec.rpartition(":")
    if not sep:
        path, name = default_file, spec
    if not path or not name:
        raise UsageError(f"'{spec}': expected FILE.py:FUNCTION")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    module_name = os.path.splitext(os.path.basename(path))[0]
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    module_spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise UsageError(f"{path} has no function '{name}'")
    return path, getattr(module, name)


def _shape(text):
    try:
        dims = [int(d) for d in text.lower().split("x")]
    except ValueError:
        raise UsageError(f"--shape {text}: expected dims like 1024x512") from None
    if not dims or any(d <= 0 for d in dims):
        raise UsageError(f"--shape {text}: every dim must be positive")
    return dims


def _inputs(args, seed):
    if not args.shape:
        raise UsageError("give each input's shape with --shape (e.g. --shape 1024x512)")
    dtypes = args.dtype or ["fp32"]
    if len(dtypes) not in (1, len(args.shape)):
        raise UsageError(f"{len(dtypes)} --dtype for {len(args.shape)} inputs (give one for "
                         "all, or one per input)")
    rng = np.random.default_rng(seed)
    arrays, kernel_args = [], []
    for i, text in enumerate(args.shape):
        name = _DTYPES.get(dtypes[i % len(dtypes)], dtypes[i % len(dtypes)])
        if name not in _core.DType.__members__:
            raise UsageError(f"--dtype {dtypes[i % len(dtypes)]}: not a dtype trnsim knows")
        if name.endswith("_x4"):
            raise UsageError(f"--dtype {name}: the CLI does not generate x4-packed inputs "
                             "(pack them in a Python driver; docs/python.md)")
        if args.timing_only:  # shapes only: no data is made
            kernel_args.append(trnsim.shaped(_shape(text), _core.DType.__members__[name],
                                             seed=seed + i))
            continue
        values = rng.uniform(-1, 1, _shape(text)).astype(np.float32)
        if name in _NATIVE and np.dtype(_NATIVE[name]).kind in "iu":
            values = rng.integers(0, 100, _shape(text)).astype(_NATIVE[name])
        if name in _NATIVE:
            values = values.astype(_NATIVE[name])
            kernel_args.append(values)
        else:  # bf16, fp8: passed as float32, rounded into the dtype; the reference gets the
            # rounded values, as the kernel does
            dtype = _core.DType.__members__[name]
            kernel_args.append(trnsim.typed(values, dtype))
            values = _core.rounded(values, dtype)
        arrays.append(values)
    return arrays, kernel_args


def _compare(outputs, expected, args, output_dtypes):
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    if len(outputs) != len(expected):
        print(f"check: the kernel returned {len(outputs)} outputs, the reference {len(expected)}")
        return False
    ok = True
    for i, (got, want, dtype) in enumerate(zip(outputs, expected, output_dtypes)):
        want = np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            print(f"check: output {i} has shape {list(got.shape)}, the reference "
                  f"{list(want.shape)}")
            ok = False
            continue
        rtol = args.rtol if args.rtol is not None else _RTOL.get(dtype.name, 0.0)
        diff = np.abs(got.astype(np.float64) - want)
        bad = ~(diff <= args.atol + rtol * np.abs(want))  # NaN counts as bad
        # NaN propagates into the maximum: a NaN output shows as "max abs error nan"
        print(f"check: output {i}: max abs error {float(np.max(diff, initial=0.0)):.3g}, "
              f"{int(bad.sum())} of {bad.size} elements outside rtol {rtol:g}, "
              f"atol {args.atol:g}")
        ok = ok and not bad.any()
    return ok


def _print_kernel_traceback(error):
    """The traceback of an exception the kernel raised, without the front end's frames."""
    package_dirs = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                         for m in (nki, trnsim))
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not f.filename.startswith(package_dirs) and not f.filename.startswith("<")]
    print("Traceback (the kernel's frames):", file=sys.stderr)
    print("".join(traceback.format_list(frames)), end="", file=sys.stderr)
    print("".join(traceback.format_exception_only(type(error), error)), end="", file=sys.stderr)


def _print_ranks(args):
    """The summary of a run of ranks and its collectives; returns its outputs' dtypes."""
    where = args.system or args.chip
    print(f"{args.kernel} x {args.ranks} ranks on {where}: simulated "
          f"{trnsim.last_ranks_ns() / 1000:.3f} us")
    for c in trnsim.last_collectives():
        print(f"collective: {c['op']} of {c['bytes']} B among {c['ranks']} ranks "
              f"({c['algorithm']}, {c['model']} model): {(c['end_ns'] - c['start_ns']) / 1000:.3f}"
              f" us from {c['start_ns'] / 1000:.3f} us")
    return trnsim._state.get("last_ranks_output_dtypes", [])


def _stacked(rank_outputs):
    """Each output stacked over the ranks (axis 0), as a reference of ranks returns it."""
    per_rank = [o if isinstance(o, tuple) else (o,) for o in rank_outputs]
    stacked = tuple(np.stack([o[i] for o in per_rank]) for i in range(len(per_rank[0])))
    return stacked[0] if len(stacked) == 1 else stacked


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        path, kernel = _load_function(args.kernel)
        reference = None
        if args.reference and not args.timing_only:
            _, reference = _load_function(args.reference, default_file=path)
        ranked = args.ranks > 1 or args.system is not None
        if args.ranks < 1 or args.ranks_per_chip < 1:
            raise UsageError("--ranks and --ranks-per-chip are positive counts")
        # Rank r's inputs come from seed + 1000 r: every rank computes on data of its own.
        per_rank = [_inputs(args, args.seed + 1000 * r) for r in range(args.ranks)]
        arrays, kernel_args = per_rank[0]
        trnsim.set_chip(args.chip)
        trnsim.set_options(timing_only=args.timing_only)
        launch = kernel if isinstance(kernel, nki.Kernel) else nki.jit(kernel)
        launch = launch[args.lnc] if args.lnc > 1 else launch
        if ranked:
            outputs = trnsim.simulate_ranks(launch, [tuple(k) for _, k in per_rank],
                                            system=args.system,
                                            ranks_per_chip=args.ranks_per_chip)
            arrays = [np.stack([a[i] for a, _ in per_rank]) for i in range(len(arrays))]
        else:
            outputs = nki.simulate(launch)(*kernel_args)
    except UsageError as e:
        print(f"trnsim: error: {e}", file=sys.stderr)
        return 2
    except trnsim.Error as e:  # located at the kernel's line already
        print(e, file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001  (the kernel's own error: its frames only)
        _print_kernel_traceback(e)
        return 1
    if ranked:
        output_dtypes = _print_ranks(args)
        outputs = None if args.timing_only else _stacked(outputs)
    else:
        report = trnsim.last_report()
        host = trnsim.last_host_times()
        output_dtypes = host["output_dtypes"]
        print(f"{args.kernel} on {args.chip}: simulated {report['total_ns'] / 1000:.3f} us, "
              f"{host['instructions']} instructions (host: trace {host['trace_ms']:.0f} ms, "
              f"compile {host['compile_ms']:.0f} ms, simulation {host['simulation_s']:.2f} s)")
    html = getattr(args, "output", None) or (
        f"{kernel.__name__}.html" if args.command == "profile" else None)
    if html or args.trace:
        summary = trnsim.write_profile(html=html, trace=args.trace)
        print(f"bounded by {summary['bounding_engine']} "
              f"({summary['bounding_active_percent']:.1f}% active)")
        for s in summary["suggestions"]:
            print(f"suggestion: {s['title']} ({s['source']})")
        if html:
            print(f"explorer report: {html}")
        if args.trace:
            print(f"trace (Perfetto / chrome://tracing): {args.trace}")
    if reference is not None:
        try:
            expected = reference(*arrays)
        except Exception as e:  # noqa: BLE001  (the reference's own error: its frames only)
            _print_kernel_traceback(e)
            return 1
        if not _compare(outputs, expected, args, output_dtypes):
            return 1
    return 0
