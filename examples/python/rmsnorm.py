"""RMSNorm in NKI 0.6, written as the C++ library's rmsnorm (kernels/norms.cpp): the same
instructions, so the same simulated time (python/tests/test_ports.py checks it).

    out[r, c] = x[r, c] / sqrt(mean_c(x[r, :]^2) + eps) * weight[c]

Per 128-row tile: ScalarE squares the rows and sums them in the same instruction, ScalarE
turns the sums into 1/sqrt(mean + eps), VectorE multiplies by it and by the weight.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/rmsnorm.py
"""

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim


@nki.jit
def rmsnorm(x, weight, eps=1e-6):
    rows_total, cols = x.shape
    pmax = nl.tile_size.pmax
    out = nl.ndarray((rows_total, cols), dtype=x.dtype, buffer=nl.shared_hbm, name="out")
    wrows = min(pmax, rows_total)
    # The weight on every partition: one DMA reading the [C] vector wrows times.
    w = nl.ndarray((wrows, cols), dtype=weight.dtype, buffer=nl.sbuf, name="weight")
    nisa.dma_copy(dst=w, src=weight.reshape((1, cols)).broadcast(0, wrows))
    eps_col = nl.ndarray((wrows, 1), dtype=nl.float32, buffer=nl.sbuf, name="eps")
    nisa.memset(dst=eps_col, value=eps)
    # Each program of a logical core takes every num_programs()-th row tile.
    for r0 in range(nl.program_id(0) * pmax, rows_total, nl.num_programs() * pmax):
        rows = min(pmax, rows_total - r0)
        xt = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf, name="x_tile")
        nisa.dma_copy(dst=xt, src=x[r0:r0 + rows, :], name="load x")
        ot = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf, name="out_tile")
        sumsq = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf, name="sumsq")
        nisa.activation(dst=ot, op=nl.square, data=xt, reduce_op=nl.add, reduce_res=sumsq)
        rstd = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf, name="rstd")
        nisa.activation(dst=rstd, op=nl.rsqrt, data=sumsq, scale=1.0 / cols,
                        bias=eps_col[0:rows, :])
        nisa.scalar_tensor_tensor(dst=ot, data=xt, op0=nl.multiply, operand0=rstd,
                                  op1=nl.multiply, operand1=w[0:rows, :])
        nisa.dma_copy(dst=out[r0:r0 + rows, :], src=ot, name="store out")
    return out


def reference(x, weight, eps=1e-6):
    x64 = x.astype(np.float64)
    return x64 / np.sqrt(np.mean(x64 * x64, axis=1, keepdims=True) + eps) * weight


def main():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (1024, 2048)).astype(np.float32)
    weight = rng.uniform(0.5, 1.5, 2048).astype(np.float32)
    got = rmsnorm(x, weight)
    error = float(np.max(np.abs(got - reference(x, weight)) / np.abs(reference(x, weight))))
    report = trnsim.last_report()
    print(f"rmsnorm [1024, 2048] float32 on {trnsim.chip()}: max relative error {error:.2g}, "
          f"simulated {report['total_ns'] / 1000:.2f} us")
    return 0 if error < 1e-5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
