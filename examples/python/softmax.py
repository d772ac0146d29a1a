"""Row softmax in NKI 0.6, written as the C++ library's softmax (kernels/softmax.cpp): the
same instructions, so the same simulated time (python/tests/test_ports.py checks it).

Each partition holds g consecutive rows, so one DMA moves 128 x g rows: VectorE finds each
row's maximum (negated), ScalarE computes exp(x - max) row by row, summing each row in the
same instruction (fp32) or VectorE sums the bf16 results afterwards (bf16), VectorE takes the
reciprocals and scales the rows.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/softmax.py
"""

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim


def _row_tiles(rows, partitions, groups):
    """(first row, partitions used, rows per partition) of this program's tiles: tiles of
    partitions x groups rows while whole ones fit, then partitions rows at a time."""
    programs, program = nl.num_programs(), nl.program_id(0)
    big = partitions * groups
    grouped_rows = rows // big * big if groups > 1 else 0
    tiles = [(r0, partitions, groups) for r0 in range(0, grouped_rows, big)]
    tiles += [(r0, min(partitions, rows - r0), 1) for r0 in range(grouped_rows, rows, partitions)]
    return tiles[program::programs]


@nki.jit
def softmax(x, tile_elements=4096):
    rows, cols = x.shape
    dt = x.dtype
    pmax = nl.tile_size.pmax
    out = nl.ndarray((rows, cols), dtype=dt, buffer=nl.shared_hbm, name="out")
    g_max = max(1, min(tile_elements // cols, rows // pmax))
    for r0, parts, g in _row_tiles(rows, pmax, g_max):
        n = parts * g
        xt = nl.ndarray((parts, g, cols), dtype=dt, buffer=nl.sbuf, name="x_tile")
        nisa.dma_copy(dst=xt, src=x[r0:r0 + n, :].reshape((parts, g, cols)))
        neg_max = nl.ndarray((parts, g), dtype=nl.float32, buffer=nl.sbuf, name="neg_max")
        nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=xt, axis=2, negate=True)
        e = nl.ndarray((parts, g, cols), dtype=dt, buffer=nl.sbuf, name="e")
        sums = nl.ndarray((parts, g), dtype=nl.float32, buffer=nl.sbuf, name="sums")
        wide = dt == nl.bfloat16  # bf16: ScalarE writes bf16 only, VectorE sums them
        for j in range(g):
            nisa.activation(dst=e[:, j, :], op=nl.exp, data=xt[:, j, :], bias=neg_max[:, j:j + 1],
                            reduce_op=None if wide else nl.add,
                            reduce_res=None if wide else sums[:, j:j + 1])
        if wide:
            nisa.tensor_reduce(dst=sums, op=nl.add, data=e, axis=2)
        inv = nl.ndarray((parts, g), dtype=nl.float32, buffer=nl.sbuf, name="inv")
        nisa.reciprocal(dst=inv, data=sums)
        for j in range(g):
            nisa.tensor_scalar(dst=e[:, j, :], data=e[:, j, :], op0=nl.multiply,
                               operand0=inv[:, j:j + 1], engine=nisa.engine.vector)
        nisa.dma_copy(dst=out[r0:r0 + n, :].reshape((parts, g, cols)), src=e)
    return out


def reference(x):
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    x = np.random.default_rng(0).uniform(-4, 4, (1024, 512)).astype(np.float32)
    got = softmax(x)
    error = float(np.max(np.abs(got - reference(x))))
    report = trnsim.last_report()
    print(f"softmax [1024, 512] float32 on {trnsim.chip()}: max abs error {error:.2g}, "
          f"simulated {report['total_ns'] / 1000:.2f} us")
    return 0 if error < 1e-6 else 1


if __name__ == "__main__":
    raise SystemExit(main())
