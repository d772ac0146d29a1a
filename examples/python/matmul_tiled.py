"""The NKI matmul tutorial's tiled kernel (step 1) in NKI 0.6 Python, as the C++ library's
tutorial_matmul_tiled (kernels/nki_tutorial.cpp) writes it: the same instructions, so the
same simulated time (python/tests/test_ports.py checks it).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/matmul_tiled.py
"""

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim


@nki.jit
def matmul_tiled(a_t, b):
    """c [M, N] = a_t.T @ b for a_t [K, M] and b [K, N], one 128 x 512 PSUM tile at a time,
    its K tiles loaded inside the K loop."""
    k_total, m_total = a_t.shape
    n_total = b.shape[1]
    tile_m, tile_k, tile_n = 128, 128, 512
    c = nl.ndarray((m_total, n_total), dtype=a_t.dtype, buffer=nl.shared_hbm, name="c")
    for m in nl.affine_range(m_total // tile_m):
        for n in nl.affine_range(n_total // tile_n):
            acc = nl.ndarray((tile_m, tile_n), dtype=nl.float32, buffer=nl.psum, name="acc")
            for k in nl.affine_range(k_total // tile_k):
                a_tile = nl.ndarray((tile_k, tile_m), dtype=a_t.dtype, buffer=nl.sbuf,
                                    name="a_tile")
                b_tile = nl.ndarray((tile_k, tile_n), dtype=b.dtype, buffer=nl.sbuf,
                                    name="b_tile")
                nisa.dma_copy(dst=a_tile, src=a_t[nl.ds(k * tile_k, tile_k),
                                                  nl.ds(m * tile_m, tile_m)])
                nisa.dma_copy(dst=b_tile, src=b[nl.ds(k * tile_k, tile_k),
                                                nl.ds(n * tile_n, tile_n)])
                nisa.nc_matmul(dst=acc, stationary=a_tile, moving=b_tile, accumulate=k > 0)
            out = nl.ndarray(acc.shape, dtype=c.dtype, buffer=nl.sbuf, name="c_tile")
            nisa.tensor_copy(dst=out, src=acc)
            nisa.dma_copy(dst=c[nl.ds(m * tile_m, tile_m), nl.ds(n * tile_n, tile_n)], src=out)
    return c


def main():
    rng = np.random.default_rng(0)
    k, m, n = 512, 512, 1024
    a_t = rng.uniform(-1, 1, (k, m)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    c = matmul_tiled(a_t, b)
    want = a_t.astype(np.float64).T @ b.astype(np.float64)
    error = float(np.max(np.abs(c - want)))
    report = trnsim.last_report()
    print(f"matmul_tiled {m}x{n}x{k} float32 on {trnsim.chip()}: max abs error {error:.3g}, "
          f"simulated {report['total_ns'] / 1000:.2f} us")
    return 0 if error <= k * 2.0**-23 else 1


if __name__ == "__main__":
    raise SystemExit(main())
