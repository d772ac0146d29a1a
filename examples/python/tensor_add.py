"""An NKI 0.6 kernel run on trnsim from NumPy: c = a + b in 128-row tiles.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tensor_add.py
"""

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim


@nki.jit
def tensor_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows, cols = a.shape
    for r in nl.affine_range(rows // 128):
        x = nl.load(a[r * 128:(r + 1) * 128, :])
        y = nl.load(b[r * 128:(r + 1) * 128, :])
        z = nl.ndarray((128, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
        nl.store(out[r * 128:(r + 1) * 128, :], value=z)
    return out


def main():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, 2048)).astype(np.float32)
    b = rng.standard_normal((1024, 2048)).astype(np.float32)
    c = tensor_add(a, b)
    exact = np.array_equal(c, a + b)
    report = trnsim.last_report()
    print(f"tensor_add [1024, 2048] float32 on {trnsim.chip()}: "
          f"{'bit-exact' if exact else 'WRONG'} against NumPy, "
          f"simulated {report['total_ns'] / 1000:.2f} us")
    return 0 if exact else 1


if __name__ == "__main__":
    raise SystemExit(main())
