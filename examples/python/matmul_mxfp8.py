"""An MXFP8 matmul in NKI 0.6: c [M, N] = a_t.T @ b for bf16 a_t [K, M] and b [K, N], each
K step of 512 quantized on chip (VectorE quantize_mx: fp8 e4m3 values in groups of 32 sharing
one power-of-two scale) and multiplied by TensorE's MX path (nc_matmul_mx), which takes four
K values per partition: four times the K of a BF16 matmul per instruction.

Layout: nc_matmul_mx packs 4 consecutive K values of a column into one x4 word per partition,
so partition p of a step holds its K rows 4p..4p+3 (one contiguous DMA of 4 rows), and
quantize_mx reads them column by column through a permuted view, writing [128, columns]
words and their scales.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/matmul_mxfp8.py
"""

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim

K_STEP = 512  # K values per nc_matmul_mx: 128 partitions x 4


def _quantized(src_hbm, columns, name):
    """One K step of an HBM operand [512, columns] as MXFP8 words and scales in SBUF."""
    # Partition p gets K rows 4p..4p+3: 4 x columns contiguous values, one plain DMA.
    values = nl.ndarray((128, 4, columns), dtype=src_hbm.dtype, buffer=nl.sbuf, name=name)
    nisa.dma_copy(dst=values, src=src_hbm.reshape((128, 4, columns)))
    words = nl.ndarray((128, columns), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf,
                       name=name + "_mx")
    scales = nl.ndarray((128, columns), dtype=nl.uint8, buffer=nl.sbuf, name=name + "_scale")
    # quantize_mx reads the 4 K values of each column together: a [128, columns, 4] view.
    nisa.quantize_mx(dst=words, src=values.permute((0, 2, 1)), dst_scale=scales)
    return words, scales


@nki.jit
def matmul_mxfp8(a_t, b):
    k_total, m = a_t.shape
    n = b.shape[1]
    c = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm, name="c")
    acc = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum, name="acc")
    for k in nl.affine_range(k_total // K_STEP):
        rows = slice(k * K_STEP, (k + 1) * K_STEP)
        a_words, a_scales = _quantized(a_t[rows, :], m, "a")
        b_words, b_scales = _quantized(b[rows, :], n, "b")
        nisa.nc_matmul_mx(dst=acc, stationary=a_words, moving=b_words,
                          stationary_scale=a_scales, moving_scale=b_scales)  # accumulate=None
    nl.store(c, value=nl.copy(acc))
    return c


@nki.jit
def matmul_bf16(a_t, b):
    """The same product from the same bf16 inputs with BF16 nc_matmul (128 K per matmul)."""
    k_total, m = a_t.shape
    n = b.shape[1]
    c = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm, name="c")
    acc = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.psum, name="acc")
    for k in nl.affine_range(k_total // 128):
        rows = slice(k * 128, (k + 1) * 128)
        nisa.nc_matmul(dst=acc, stationary=nl.load(a_t[rows, :]), moving=nl.load(b[rows, :]))
    nl.store(c, value=nl.copy(acc))
    return c


def error_bound(a_t, b):
    """|c - a_t.T @ b| per element: each fp8 e4m3 value is within a relative 2^-4 of its bf16
    value (3 mantissa bits, round to nearest) unless it is subnormal in its group (absolute
    2^-9 of the group's scale), so a product is within about 2^-3 + 2^-8 of exact."""
    return (np.abs(a_t).T @ np.abs(b)) * (2.0**-3 + 2.0**-8) + 1e-6


def main():
    rng = np.random.default_rng(0)
    k, m, n = 2048, 128, 512
    a_t = rng.uniform(-1, 1, (k, m)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    bf16 = nl.bfloat16
    exact_inputs = (trnsim.typed(a_t, bf16), trnsim.typed(b, bf16))
    c = matmul_mxfp8(*exact_inputs)
    mx_ns = trnsim.last_report()["total_ns"]
    c_bf16 = matmul_bf16(*exact_inputs)
    bf16_ns = trnsim.last_report()["total_ns"]
    exact = c_bf16.astype(np.float64)  # bf16 products summed in fp32
    within = bool(np.all(np.abs(c - exact) <= error_bound(a_t, b)))
    relative = float(np.linalg.norm(c - exact) / np.linalg.norm(exact))
    print(f"matmul_mxfp8 {m}x{n}x{k} on {trnsim.chip()}: relative error {relative:.3g} against "
          f"the bf16 product ({'within' if within else 'OUTSIDE'} the fp8 bound), simulated "
          f"{mx_ns / 1000:.2f} us (bf16 nc_matmul: {bf16_ns / 1000:.2f} us)")
    return 0 if within and 0 < relative < 0.1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
