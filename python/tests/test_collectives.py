"""nki.collectives in kernels, run on ranks by trnsim.simulate_ranks: the data every rank gets
matches NumPy, the collectives are timed on the system, and bad calls name the kernel line."""

import numpy as np
import pytest

import nki
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl
import trnsim


def all_reduce_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(srcs=[x], dsts=[out], replica_group=ncc.ReplicaGroup(), op=nl.add)
    return out


def rank_arrays(ranks, shape):
    return [np.arange(np.prod(shape), dtype=np.float32).reshape(shape) % 17 + 100 * r
            for r in range(ranks)]


def test_all_reduce_gives_every_rank_the_sum():
    xs = rank_arrays(4, (128, 32))
    outs = trnsim.simulate_ranks(all_reduce_kernel, [(x,) for x in xs])
    assert len(outs) == 4
    for out in outs:
        np.testing.assert_array_equal(out, sum(xs))
    [c] = trnsim.last_collectives()
    assert c["op"] == "all_reduce" and c["ranks"] == 4 and c["bytes"] == 128 * 32 * 4
    assert c["end_ns"] > c["start_ns"]


@nki.jit
def gather_pairs(x):
    out = nl.ndarray((2 * x.shape[0], x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_gather([x], [out], ncc.ReplicaGroup([[0, 1], [2, 3]]), collective_dim=0)
    return out


def test_all_gather_in_replica_groups():
    xs = rank_arrays(4, (8, 16))
    outs = trnsim.simulate_ranks(gather_pairs, [(x,) for x in xs])
    for r, out in enumerate(outs):
        first = r // 2 * 2
        np.testing.assert_array_equal(out, np.concatenate([xs[first], xs[first + 1]]))


# A tensor-parallel MLP (Megatron's split): rank r holds columns r of W1 and rows r of W2;
# y = relu(x W1) W2 is the all-reduce of the ranks' partial products.
def tp_mlp(x_t, w1, w2):
    """x_t: [D, T] (x transposed), w1: [D, F/n], w2: [F/n, D] -> y: [T, D] on every rank."""
    d, t = x_t.shape
    f = w1.shape[1]
    xs = nl.ndarray((d, t), dtype=x_t.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x_t)
    w1s = nl.ndarray((d, f), dtype=w1.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=w1s, src=w1)
    w2s = nl.ndarray((f, d), dtype=w2.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=w2s, src=w2)
    h_psum = nl.ndarray((f, t), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=h_psum, stationary=w1s, moving=xs)  # h^T = W1^T x^T
    h = nl.ndarray((f, t), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=h, op=nl.relu, data=h_psum)
    y_psum = nl.ndarray((t, d), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=y_psum, stationary=h, moving=w2s)  # y = h W2
    partial = nl.ndarray((t, d), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=partial, src=y_psum)
    partial_hbm = nl.ndarray((t, d), dtype=nl.float32, buffer=nl.hbm)
    nisa.dma_copy(dst=partial_hbm, src=partial)
    y = nl.ndarray((t, d), dtype=nl.float32, buffer=nl.shared_hbm)
    ncc.all_reduce([partial_hbm], [y], ncc.ReplicaGroup(), op=nl.add)
    return y


@pytest.mark.parametrize("system", ["trn2.48xlarge", "trn3-ultraserver-gen2"])
def test_tensor_parallel_mlp_on_a_system(system):
    ranks, d, t, f = 16, 128, 64, 16 * 32
    rng = np.random.default_rng(7)
    # Values on a grid of 1/8 keep every product and sum exact in fp32.
    x = rng.integers(-4, 5, (t, d)).astype(np.float32) / 8
    w1 = rng.integers(-4, 5, (d, f)).astype(np.float32) / 8
    w2 = rng.integers(-4, 5, (f, d)).astype(np.float32) / 8
    shard = f // ranks
    args = [(np.ascontiguousarray(x.T), np.ascontiguousarray(w1[:, r * shard:(r + 1) * shard]),
             np.ascontiguousarray(w2[r * shard:(r + 1) * shard])) for r in range(ranks)]
    outs = trnsim.simulate_ranks(tp_mlp, args, system=system, ranks_per_chip=1)
    expected = np.maximum(x @ w1, 0) @ w2
    for out in outs:
        np.testing.assert_array_equal(out, expected)
    [c] = trnsim.last_collectives()
    assert c["ranks"] == ranks and c["end_ns"] > c["start_ns"]


def group_of_rank_nine(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce([x], [out], ncc.ReplicaGroup([[0, 1], [2, 9]]), op=nl.add)  # the line
    return out


def test_a_group_beyond_the_launch_names_the_kernel_line():
    xs = rank_arrays(4, (8, 8))
    with pytest.raises(trnsim.Error, match=r"test_collectives.py:\d+:\d+: error: .*rank 9"):
        trnsim.simulate_ranks(group_of_rank_nine, [(x,) for x in xs])


def gather_too_small(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_gather([x], [out], ncc.ReplicaGroup([[0, 1], [2, 3]]), collective_dim=0)
    return out


def test_shapes_that_cannot_fit_are_tracing_errors():
    xs = rank_arrays(4, (8, 8))
    with pytest.raises(trnsim.Error, match=r"test_collectives.py:\d+:\d+: error: all_gather: "
                                           r"dst 0 has 64 elements; 128"):
        trnsim.simulate_ranks(gather_too_small, [(x,) for x in xs])
    with pytest.raises(ValueError, match="no ranks"):
        trnsim.simulate_ranks(gather_too_small, [])
