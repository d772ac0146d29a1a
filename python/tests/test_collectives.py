"""nki.collectives in kernels, run on ranks by trnsim.simulate_ranks: the data every rank gets
matches NumPy, the collectives are timed on the system, and bad calls name the kernel line."""

import importlib.util
import json
import os

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


def _tp_mlp_example():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                        "python", "tp_mlp.py")
    spec = importlib.util.spec_from_file_location("tp_mlp_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("system", ["trn2.48xlarge", "trn3-ultraserver-gen2"])
def test_tensor_parallel_mlp_on_a_system(system):
    # examples/python/tp_mlp.py: 16 ranks, one per chip, checked against NumPy on every rank.
    exact, reduce = _tp_mlp_example().run(system, 16)
    assert exact
    assert reduce["op"] == "all_reduce" and reduce["ranks"] == 16
    assert reduce["end_ns"] > reduce["start_ns"]
    assert trnsim.last_ranks_ns() >= reduce["end_ns"]


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
                                           r"dst 0 is \[8, 8\], src 0 is \[8, 8\]"):
        trnsim.simulate_ranks(gather_too_small, [(x,) for x in xs])
    with pytest.raises(ValueError, match="no ranks"):
        trnsim.simulate_ranks(gather_too_small, [])


def rank_kernel(x):
    out = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.register_store(dst=t, src=ncc.rank_id())
    nisa.dma_copy(dst=out, src=t)
    return out


def test_rank_id_is_each_ranks_number():
    outs = trnsim.simulate_ranks(rank_kernel, [(np.zeros((1, 1), np.float32),)] * 5)
    assert [int(o[0, 0]) for o in outs] == [0, 1, 2, 3, 4]
    # Launched alone (nki.simulate), a kernel is rank 0.
    assert int(nki.simulate(rank_kernel)(np.zeros((1, 1), np.float32))[0, 0]) == 0


def test_the_profile_of_a_ranks_run_shows_every_rank_and_the_collective(tmp_path):
    xs = rank_arrays(4, (128, 32))
    trnsim.simulate_ranks(all_reduce_kernel, [(x,) for x in xs], system="trn2.48xlarge",
                          ranks_per_chip=1)
    trace = tmp_path / "ranks.json"
    summary = trnsim.write_profile(trace=trace)
    assert summary["total_ns"] > 0
    events = json.loads(trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    names = {e.get("name") for e in events}
    assert "collective" in names or any("collective" in str(n) for n in names)
    cores = {e["pid"] for e in events if e.get("name") == "collective"}
    assert len(cores) == 4  # one collective span per rank's core


def scaled_sum(x, scale):
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=float(scale))
    h = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.hbm)
    nisa.dma_copy(dst=h, src=t)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce([h], [out], ncc.ReplicaGroup(), op=nl.add)
    return out


def reduce_in_place(x):
    ncc.all_reduce([x], [x], ncc.ReplicaGroup(), op=nl.add)


def flat_group(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce([x], [out], [0, 1], op=nl.add)
    return out


def tensor_not_list(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.all_reduce(x, out, ncc.ReplicaGroup(), op=nl.add)
    return out


def test_arguments_and_calls_a_ranks_run_refuses_or_writes_back():
    x = np.ones((4, 4), np.float32)
    # The kernel is traced once: every rank's other arguments must be rank 0's.
    with pytest.raises(ValueError, match=r"rank 1's argument 1 is 5.0, rank 0's 1.0"):
        trnsim.simulate_ranks(scaled_sum, [(x, 1.0), (x, 5.0)])
    np.testing.assert_array_equal(trnsim.simulate_ranks(scaled_sum, [(x, 2.0), (x, 2.0)])[0],
                                  4 * x)
    # Arguments written in place come back into each rank's own arrays, as with nki.simulate.
    a, b = np.ones((4, 4), np.float32), 2 * np.ones((4, 4), np.float32)
    trnsim.simulate_ranks(reduce_in_place, [(a,), (b,)])
    np.testing.assert_array_equal(a, 3 * np.ones((4, 4), np.float32))
    np.testing.assert_array_equal(b, a)
    with pytest.raises(trnsim.Error, match=r"test_collectives.py:\d+:\d+: error: all_reduce: "
                                           r"replica_group is a ReplicaGroup or a list of rank"):
        trnsim.simulate_ranks(flat_group, [(x,), (x,)])
    with pytest.raises(TypeError, match=r"all_reduce: srcs is a list of tensors"):
        trnsim.simulate_ranks(tensor_not_list, [(x,), (x,)])


def ring_step(x):
    """Each rank passes x around its group's ring once, and stores whose data it holds after
    one step and after two (collective_permute_implicit and its current_processing_rank_id)."""
    group = ncc.ReplicaGroup([[0, 2, 1, 3]])
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.collective_permute_implicit([[x]], [[out]], group)
    whose = nl.ndarray((1, 2), dtype=nl.int32, buffer=nl.sbuf)
    current = ncc.collective_permute_implicit_current_processing_rank_id
    nisa.register_store(dst=whose[:, 0:1], src=current(1, group))
    step = nisa.register_alloc(2)
    nisa.register_store(dst=whose[:, 1:2], src=current(step, group))
    whose_hbm = nl.ndarray((1, 2), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=whose_hbm, src=whose)
    return out, whose_hbm


def test_an_implicit_ring_permute_and_whose_data_it_brought():
    xs = rank_arrays(4, (8, 8))
    outs = trnsim.simulate_ranks(ring_step, [(x,) for x in xs])
    before = {0: 3, 2: 0, 1: 2, 3: 1}  # the ring 0 -> 2 -> 1 -> 3 -> 0
    two_before = {r: before[before[r]] for r in range(4)}
    for r, (out, whose) in enumerate(outs):
        np.testing.assert_array_equal(out, xs[before[r]])
        assert whose.tolist() == [[before[r], two_before[r]]]
    [c] = trnsim.last_collectives()
    assert c["op"] == "permute" and c["ranks"] == 4


def ring_of_sums(x, y):
    """Each rank sends x + y to the next rank of its pair (collective_permute_implicit_reduce)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ncc.collective_permute_implicit_reduce([[x]], [[y]], [[out]], ncc.ReplicaGroup([[0, 1], [2, 3]]),
                                           op=nl.add)
    return out


def test_an_implicit_ring_permute_of_a_reduction():
    xs = rank_arrays(4, (8, 8))
    ys = [x * 0.5 for x in rank_arrays(4, (8, 8))]
    outs = trnsim.simulate_ranks(ring_of_sums, [(x, y) for x, y in zip(xs, ys)])
    for r, out in enumerate(outs):
        np.testing.assert_array_equal(out, xs[r ^ 1] + ys[r ^ 1])
    assert [c["op"] for c in trnsim.last_collectives()] == ["permute_reduce"] * 2


def exchange_v(x, meta):
    """all_to_all_v into a dst of -1s; returns dst and the metadata with its receive counts
    (row 2, an output of the call: never written before it)."""
    dst = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    fill = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=fill, value=-1.0)
    nisa.dma_copy(dst=dst, src=fill)
    meta_out = nl.ndarray(meta.shape, dtype=nl.uint32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=meta_out[0:2, :], src=meta[0:2, :])
    ncc.all_to_all_v([x], [dst], ncc.ReplicaGroup([[0, 1, 2, 3]]), meta_out)
    return dst, meta_out


def test_all_to_all_v_moves_counts_the_metadata_gives():
    xs = [np.arange(64, dtype=np.float32).reshape(1, 64) + 1000 * r for r in range(4)]
    # Rank s sends 2 s + r + 1 elements from offset 10 r to rank r; the call fills row 2.
    metas = [np.array([[2 * s + r + 1 for r in range(4)], [10 * r for r in range(4)], [0] * 4],
                      dtype=np.uint32) for s in range(4)]
    outs = trnsim.simulate_ranks(exchange_v, list(zip(xs, metas)))
    for r, (dst, meta) in enumerate(outs):
        expected = -np.ones(64, np.float32)
        for s in range(4):
            n = 2 * s + r + 1
            expected[16 * s:16 * s + n] = xs[s][0, 10 * r:10 * r + n]
        np.testing.assert_array_equal(dst[0], expected)
        assert meta[2].tolist() == [2 * s + r + 1 for s in range(4)]
    [c] = trnsim.last_collectives()
    assert c["op"] == "all_to_all_v" and c["bytes"] == 64 * 4


def gather_v_wrong_metadata(x):
    dst = nl.ndarray((1, 4 * x.shape[1]), dtype=x.dtype, buffer=nl.shared_hbm)
    meta = nl.ndarray((3, 4), dtype=nl.int32, buffer=nl.hbm)
    ncc.all_gather_v([x], [dst], ncc.ReplicaGroup([[0, 1, 2, 3]]), meta)  # the line
    return dst


def test_metadata_that_is_not_uint32_is_an_error_at_the_kernel_line():
    x = np.ones((1, 8), np.float32)
    line = gather_v_wrong_metadata.__code__.co_firstlineno + 3
    with pytest.raises(trnsim.Error, match=rf"test_collectives.py:{line}:\d+: error: all_gather_v: "
                                           r"metadata_tensor is int32 in private_hbm \(uint32"):
        trnsim.simulate_ranks(gather_v_wrong_metadata, [(x,)] * 4)
