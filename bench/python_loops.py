"""A dynamic loop (nl.fori_loop, run on the device) against the same kernel unrolled by a
Python loop, side by side in one run: y = 2x + 1 over T tiles of [128, 512] fp32. Prints
the compiled instructions, the host time of tracing, compiling and simulating, and the
simulated time of each; the functional run checks that both give the same bits.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_loops.py [TILES]
"""

import sys
import time

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim

COLS = 512


def body(x, y, t, shift=0):
    """Tile t (+ shift) of y = 2 x + 1; t is an int (unrolled) or the loop's register."""
    if isinstance(t, int):
        t += shift
        src, dst = x[t * 128:(t + 1) * 128, :], y[t * 128:(t + 1) * 128, :]
    else:
        # As [T, 128, COLS] views, one unit of the register along dim 0 is one tile.
        tiles = x.shape[0] // 128
        pattern = [[COLS, 128], [1, COLS]]
        offset = shift * 128 * COLS
        src = x.reshape((tiles, 128, COLS)).ap(pattern, offset, scalar_offset=t, indirect_dim=0)
        dst = y.reshape((tiles, 128, COLS)).ap(pattern, offset, scalar_offset=t, indirect_dim=0)
    tile = nl.ndarray((128, COLS), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=tile, src=src)
    result = nl.ndarray((128, COLS), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=result, data=tile, op0=nl.multiply, operand0=2.0, op1=nl.add,
                       operand1=1.0)
    nisa.dma_copy(dst=dst, src=result)


def looped(x):
    y = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nl.fori_loop(0, x.shape[0] // 128, lambda t: body(x, y, t), step=1)
    return y


def looped_by_two(x):
    """The body unrolled twice by hand (step 2, tiles t and t + 1): two sets of buffers, so
    one trip's two tiles overlap, and the next trip overlaps the last stores."""
    y = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)

    def pair(t):
        body(x, y, t)
        body(x, y, t, shift=1)

    nl.fori_loop(0, x.shape[0] // 128, pair, step=2)
    return y


def unrolled(x):
    y = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    for t in range(x.shape[0] // 128):
        body(x, y, t)
    return y


def measure(kernel, x, timing_only):
    trnsim.set_options(timing_only=timing_only, check_hazards=not timing_only)
    start = time.perf_counter()
    out = nki.simulate(kernel)(x)
    wall = time.perf_counter() - start
    host = trnsim.last_host_times()
    return out, host, trnsim.last_report()["total_ns"], wall


def main(argv):
    tiles = int(argv[1]) if len(argv) > 1 else 2048
    if tiles % 2:
        raise SystemExit("python_loops.py: an even number of tiles (the x2 loop takes pairs)")
    ok = True
    for timing_only, n in ((True, tiles), (False, min(tiles, 64))):
        x = np.random.default_rng(0).standard_normal((n * 128, COLS)).astype(np.float32)
        mode = "timing only" if timing_only else "functional"
        print(f"{n} tiles of [128, {COLS}] fp32, {mode}:")
        print(f"  {'':9} {'instructions':>12} {'trace ms':>9} {'compile ms':>10} "
              f"{'simulate s':>10} {'wall s':>7} {'simulated us':>13}")
        results = {}
        for label, kernel in (("fori_loop", looped), ("fori x2", looped_by_two),
                              ("unrolled", unrolled)):
            out, host, total_ns, wall = measure(kernel, x, timing_only)
            results[label] = (out, total_ns)
            print(f"  {label:9} {host['instructions']:12d} {host['trace_ms']:9.1f} "
                  f"{host['compile_ms']:10.1f} {host['simulation_s']:10.3f} {wall:7.2f} "
                  f"{total_ns / 1000:13.1f}")
        unrolled_ns = results["unrolled"][1]
        for label in ("fori_loop", "fori x2"):
            print(f"  simulated time, {label} / unrolled: {results[label][1] / unrolled_ns:.2f}x")
        if not timing_only:
            same = all(np.array_equal(results[label][0], results["unrolled"][0])
                       for label in ("fori_loop", "fori x2"))
            print(f"  same bits: {same}")
            ok = ok and same
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
