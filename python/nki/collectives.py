"""nki.collectives (NKI 0.6): collectives between the ranks of a launch. A kernel calls them
as on Neuron; trnsim.simulate_ranks runs its ranks (on one chip, or on a system's chips) and
the collectives between them, computed in the chosen algorithm's reduction order and timed
on the system (docs/python.md, "Collectives"). Each call maps to the C++ kernel API's
(kernel/collectives.h)."""

from trnsim import _core

from . import _names

_calls = _core.collectives


def _tensors(what, tensors):
    """NKI's srcs and dsts are lists of tensors (a tensor itself would be taken row by row)."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{what} is a list of tensors ([t]), not {type(tensors).__name__}")
    return list(tensors)


class ReplicaGroup:
    """ReplicaGroup([[0, 1], [2, 3]]): disjoint lists of ranks of one size, together every
    rank of the launch; each list runs the collective on its own. ReplicaGroup() or
    ReplicaGroup([]) is one group of every rank."""

    def __init__(self, groups=()):
        self.groups = [[int(r) for r in g] for g in groups]

    def __repr__(self):
        return f"ReplicaGroup({self.groups!r})"


def all_reduce(srcs, dsts, replica_group, op, priority=None, name=None):
    """dsts[i] = op (nl.add, nl.maximum, nl.minimum) over the group's srcs[i]."""
    srcs, dsts = _tensors("all_reduce: srcs", srcs), _tensors("all_reduce: dsts", dsts)
    _calls.all_reduce(srcs, dsts, replica_group, op, priority, name)


def all_gather(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    """dsts[i] = the group's srcs[i] concatenated along collective_dim (0), in the order the
    group lists its ranks."""
    srcs, dsts = _tensors("all_gather: srcs", srcs), _tensors("all_gather: dsts", dsts)
    _calls.all_gather(srcs, dsts, replica_group, collective_dim, priority, name)


def reduce_scatter(srcs, dsts, replica_group, collective_dim, op, priority=None, name=None):
    """dsts[i] = this rank's slice (along collective_dim, 0) of op over the group's srcs[i]."""
    srcs, dsts = _tensors("reduce_scatter: srcs", srcs), _tensors("reduce_scatter: dsts", dsts)
    _calls.reduce_scatter(srcs, dsts, replica_group, collective_dim, op, priority, name)


def all_to_all(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    """Slice j of srcs[i] goes to the group's rank j; slice k of dsts[i] comes from rank k."""
    srcs, dsts = _tensors("all_to_all: srcs", srcs), _tensors("all_to_all: dsts", dsts)
    _calls.all_to_all(srcs, dsts, replica_group, collective_dim, priority, name)


def collective_permute(srcs, dsts, source_target_pairs, priority=None, name=None):
    """Each pair's target receives its source's srcs[0] in dsts[0] (a rank no pair targets
    gets zeros)."""
    srcs = _tensors("collective_permute: srcs", srcs)
    dsts = _tensors("collective_permute: dsts", dsts)
    pairs = [(int(s), int(t)) for s, t in source_target_pairs]
    _calls.collective_permute(srcs, dsts, pairs, priority, name)


def collective_permute_implicit(srcs_by_channel, dsts_by_channel, replica_group,
                                channel_ids=[0], priority=None, name=None):  # noqa: B006
    """On each channel, every rank sends its tensor to the next rank of its replica group and
    receives the previous rank's (a ring); each channel is a collective of its own."""
    srcs = [_tensors("collective_permute_implicit: srcs_by_channel[c]", c)
            for c in _tensors("collective_permute_implicit: srcs_by_channel", srcs_by_channel)]
    dsts = [_tensors("collective_permute_implicit: dsts_by_channel[c]", c)
            for c in _tensors("collective_permute_implicit: dsts_by_channel", dsts_by_channel)]
    _calls.collective_permute_implicit(srcs, dsts, replica_group, [int(c) for c in channel_ids],
                                       priority, name)


def collective_permute_implicit_reduce(srcs0_by_channel, srcs1_by_channel, dsts_by_channel,
                                       replica_group, op, channel_ids=[0], priority=None,
                                       name=None):  # noqa: B006
    """As collective_permute_implicit, each rank sending op(srcs0[c][0], srcs1[c][0])
    (nl.add, nl.maximum or nl.minimum; one rounding to the dtype) to the next rank of its
    group, which receives it in dsts_by_channel[c][0]."""
    what = "collective_permute_implicit_reduce: "
    lists = []
    for label, by_channel in (("srcs0_by_channel", srcs0_by_channel),
                              ("srcs1_by_channel", srcs1_by_channel),
                              ("dsts_by_channel", dsts_by_channel)):
        lists.append([_tensors(what + label + "[c]", c)
                      for c in _tensors(what + label, by_channel)])
    _calls.collective_permute_implicit_reduce(*lists, replica_group, op,
                                              [int(c) for c in channel_ids], priority, name)


def all_gather_v(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False,
                 has_rdispls=False, priority=None, name=None):
    """Each rank's chunk src[send_displ : send_displ + send_count] (row 0 and 1 of the uint32
    metadata_tensor, first column) goes to every rank of the group, into the sender's equal
    slot of dst (or at row 3's displacement with has_rdispls); row 2 receives the counts unless
    recv_counts_known. Flat HBM buffers, sizes read when the collective runs."""
    srcs, dsts = _tensors("all_gather_v: srcs", srcs), _tensors("all_gather_v: dsts", dsts)
    _calls.all_gather_v(srcs, dsts, replica_group, metadata_tensor, bool(recv_counts_known),
                        bool(has_rdispls), priority, name)


def all_to_all_v(srcs, dsts, replica_group, metadata_tensor, recv_counts_known=False,
                 has_rdispls=False, priority=None, name=None):
    """Rank s sends src[send_displs[r] : + send_counts[r]] (metadata rows 0 and 1, column r)
    to each rank r of the group, which writes it in s's equal slot of dst (or at row 3's
    displacement with has_rdispls); row 2 receives the counts unless recv_counts_known. Flat
    HBM buffers, sizes read when the collective runs."""
    srcs, dsts = _tensors("all_to_all_v: srcs", srcs), _tensors("all_to_all_v: dsts", dsts)
    _calls.all_to_all_v(srcs, dsts, replica_group, metadata_tensor, bool(recv_counts_known),
                        bool(has_rdispls), priority, name)


def collective_permute_implicit_current_processing_rank_id(iteration_id, replica_group,
                                                           channel_id=0, name=None):
    """A register holding the rank whose data the ring has brought here at iteration
    `iteration_id` (an int or a register such as a loop's counter): this rank at 0, the rank
    k places before it in its group at k."""
    return _calls.current_processing_rank_id(iteration_id, replica_group, int(channel_id), name)


def rank_id(name=None):
    """A register holding this rank's number in the launch (0 to ranks - 1), for register
    arithmetic and register-relative views (.ap(scalar_offset=...))."""
    return _calls.rank_id(name)


def __getattr__(name):
    error = _names.missing("nki.collectives", name, set())
    if isinstance(error, NotImplementedError):
        raise NotImplementedError(
            f"nki.collectives.{name} is not implemented in trnsim")
    raise error
