"""A flash-attention forward pass in NKI 0.6 (one head, no mask): out = softmax(q k^T / sqrt(d)) v
for q, k, v [S, d], d <= 128, computed 128 queries by 512 keys at a time with a running
row maximum and row sum, so the S x S scores never exist whole.

Per block: TensorE computes the scores into PSUM; VectorE their row maximum; ScalarE
exp(scale * (s - m)) with the row sums in the same instruction; TensorE transposes the
probabilities 128 keys at a time and multiplies them by v, accumulating in PSUM
(accumulate=None: the first matmul of a block overwrites, the others add); VectorE rescales
the running output by exp(scale * (m_old - m_new)) and adds the block's.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/flash_attention.py
"""

import math

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
import trnsim

QUERIES, KEYS = 128, 512  # rows of one query tile, keys of one score block (one PSUM bank)


@nki.jit
def flash_attention(q, k, v):
    seq, d = q.shape
    scale = 1.0 / math.sqrt(d)
    out = nl.ndarray((seq, d), dtype=q.dtype, buffer=nl.shared_hbm, name="out")
    for q0 in nl.affine_range(seq // QUERIES):
        q_t = nl.load_transpose2d(q[q0 * QUERIES:(q0 + 1) * QUERIES, :])  # [d, 128]
        m = nl.full((QUERIES, 1), -3.0e38, nl.float32)  # running row maximum
        total = nl.zeros((QUERIES, 1), nl.float32)  # running row sum of exp
        acc = nl.zeros((QUERIES, d), nl.float32)  # running output, unnormalised
        for k0 in nl.sequential_range(seq // KEYS):
            keys = slice(k0 * KEYS, (k0 + 1) * KEYS)
            scores = nl.ndarray((QUERIES, KEYS), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(dst=scores, stationary=q_t, moving=nl.load_transpose2d(k[keys, :]))
            m_new = nl.maximum(m, nl.max(scores, axis=1, keepdims=True))
            neg_scaled_max = nl.multiply(m_new, -scale)
            p = nl.ndarray((QUERIES, KEYS), dtype=nl.float32, buffer=nl.sbuf)
            block_sum = nl.ndarray((QUERIES, 1), dtype=nl.float32, buffer=nl.sbuf)
            nisa.activation(dst=p, op=nl.exp, data=scores, scale=scale, bias=neg_scaled_max,
                            reduce_op=nl.add, reduce_res=block_sum)
            alpha = nl.ndarray((QUERIES, 1), dtype=nl.float32, buffer=nl.sbuf)
            nisa.activation(dst=alpha, op=nl.exp, data=m, scale=scale, bias=neg_scaled_max)
            nisa.scalar_tensor_tensor(dst=total, data=total, op0=nl.multiply, operand0=alpha,
                                      op1=nl.add, operand1=block_sum)
            pv = nl.ndarray((QUERIES, d), dtype=nl.float32, buffer=nl.psum)
            for c in range(KEYS // 128):
                p_t = nl.copy(nl.transpose(p[:, c * 128:(c + 1) * 128]))  # [128 keys, 128 q]
                v_rows = nl.load(v[k0 * KEYS + c * 128:k0 * KEYS + (c + 1) * 128, :])
                nisa.nc_matmul(dst=pv, stationary=p_t, moving=v_rows)
            nisa.scalar_tensor_tensor(dst=acc, data=acc, op0=nl.multiply, operand0=alpha,
                                      op1=nl.add, operand1=pv)
            m = m_new
        inv = nl.ndarray((QUERIES, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=total)
        result = nl.ndarray((QUERIES, d), dtype=q.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=result, data=acc, op0=nl.multiply, operand0=inv)
        nl.store(out[q0 * QUERIES:(q0 + 1) * QUERIES, :], value=result)
    return out


def reference(q, k, v):
    s = q.astype(np.float64) @ k.astype(np.float64).T / math.sqrt(q.shape[1])
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


def main():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1024, 128)).astype(np.float32) for _ in range(3))
    got = flash_attention(q, k, v)
    error = float(np.max(np.abs(got - reference(q, k, v))))
    report = trnsim.last_report()
    print(f"flash_attention S=1024 d=128 float32 on {trnsim.chip()}: max abs error {error:.2g}, "
          f"simulated {report['total_ns'] / 1000:.2f} us")
    return 0 if error < 1e-4 else 1


if __name__ == "__main__":
    raise SystemExit(main())
