"""A tensor-parallel MLP on a simulated system: each rank holds a column block of W1 and the
matching row block of W2 (Megatron's split), computes its partial relu(x W1) W2 and
all-reduces it with nki.collectives; every rank ends with the whole MLP's output.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tp_mlp.py [SYSTEM] [RANKS]

SYSTEM is a system preset or file (default trn2.48xlarge); one rank runs on each chip.
"""

import sys

import numpy as np

import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl
import trnsim


def tp_mlp(x_t, w1, w2):
    """x_t: [D, T] (the tokens, transposed), w1: [D, F/n], w2: [F/n, D] -> [T, D] on every
    rank: the all-reduce of relu(x W1_r) W2_r over the ranks r."""
    d, t = x_t.shape
    f = w1.shape[1]
    xs = nl.ndarray((d, t), dtype=x_t.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x_t)
    w1s = nl.ndarray((d, f), dtype=w1.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=w1s, src=w1)
    w2s = nl.ndarray((f, d), dtype=w2.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=w2s, src=w2)
    h_psum = nl.ndarray((f, t), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=h_psum, stationary=w1s, moving=xs)  # h^T = W1_r^T x^T
    h = nl.ndarray((f, t), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=h, op=nl.relu, data=h_psum)
    y_psum = nl.ndarray((t, d), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=y_psum, stationary=h, moving=w2s)  # relu(x W1_r) W2_r
    partial = nl.ndarray((t, d), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=partial, src=y_psum)
    partial_hbm = nl.ndarray((t, d), dtype=nl.float32, buffer=nl.hbm)
    nisa.dma_copy(dst=partial_hbm, src=partial)
    y = nl.ndarray((t, d), dtype=nl.float32, buffer=nl.shared_hbm)
    ncc.all_reduce([partial_hbm], [y], ncc.ReplicaGroup(), op=nl.add)
    return y


def problem(ranks, tokens=128, d=128, f_per_rank=128, seed=7):
    """x, W1, W2 on a grid of 1/8 (every product and sum below is exact in fp32) and each
    rank's arguments."""
    rng = np.random.default_rng(seed)
    f = f_per_rank * ranks
    x = rng.integers(-4, 5, (tokens, d)).astype(np.float32) / 8
    w1 = rng.integers(-4, 5, (d, f)).astype(np.float32) / 8
    w2 = rng.integers(-4, 5, (f, d)).astype(np.float32) / 8
    x_t = np.ascontiguousarray(x.T)
    args = [(x_t, np.ascontiguousarray(w1[:, r * f_per_rank:(r + 1) * f_per_rank]),
             np.ascontiguousarray(w2[r * f_per_rank:(r + 1) * f_per_rank]))
            for r in range(ranks)]
    return x, w1, w2, args


def run(system, ranks):
    """Every rank's output against NumPy's MLP: (exact, the all-reduce's record)."""
    x, w1, w2, args = problem(ranks)
    outs = trnsim.simulate_ranks(tp_mlp, args, system=system, ranks_per_chip=1)
    expected = np.maximum(x @ w1, 0) @ w2
    exact = all(np.array_equal(out, expected) for out in outs)
    [reduce] = trnsim.last_collectives()
    return exact, reduce


def main(argv=()):
    system = argv[0] if len(argv) > 0 else "trn2.48xlarge"
    ranks = int(argv[1]) if len(argv) > 1 else 16
    exact, c = run(system, ranks)
    print(f"tp_mlp on {ranks} chips of {system}: {'bit-exact' if exact else 'WRONG'} against "
          f"NumPy on every rank; all-reduce of {c['bytes']} B ({c['algorithm']}, "
          f"{c['model']} model) {(c['end_ns'] - c['start_ns']) / 1000:.2f} us of "
          f"{trnsim.last_ranks_ns() / 1000:.2f} us simulated")
    return 0 if exact else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
