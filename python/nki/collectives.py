"""nki.collectives (NKI 0.6): collectives between the ranks of a launch. A kernel calls them
as on Neuron; trnsim.simulate_ranks runs its ranks (on one chip, or on a system's chips) and
the collectives between them, computed in the chosen algorithm's reduction order and timed
on the system (docs/python.md, "Collectives"). Each call maps to the C++ kernel API's
(kernel/collectives.h)."""

from trnsim import _core

from . import _names

_calls = _core.collectives


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
    _calls.all_reduce(list(srcs), list(dsts), replica_group, op, priority, name)


def all_gather(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    """dsts[i] = the group's srcs[i] concatenated along collective_dim (0)."""
    _calls.all_gather(list(srcs), list(dsts), replica_group, collective_dim, priority, name)


def reduce_scatter(srcs, dsts, replica_group, collective_dim, op, priority=None, name=None):
    """dsts[i] = this rank's slice (along collective_dim, 0) of op over the group's srcs[i]."""
    _calls.reduce_scatter(list(srcs), list(dsts), replica_group, collective_dim, op, priority,
                          name)


def all_to_all(srcs, dsts, replica_group, collective_dim, priority=None, name=None):
    """Slice j of srcs[i] goes to the group's rank j; slice k of dsts[i] comes from rank k."""
    _calls.all_to_all(list(srcs), list(dsts), replica_group, collective_dim, priority, name)


def collective_permute(srcs, dsts, source_target_pairs, priority=None, name=None):
    """Each pair's target receives its source's srcs[0] in dsts[0] (a rank no pair targets
    gets zeros)."""
    pairs = [(int(s), int(t)) for s, t in source_target_pairs]
    _calls.collective_permute(list(srcs), list(dsts), pairs, priority, name)


def rank_id(name=None):
    """A register holding this rank's number in the launch (0 to ranks - 1), for register
    arithmetic and register-relative views (.ap(scalar_offset=...))."""
    return _calls.rank_id(name)


def __getattr__(name):
    error = _names.missing("nki.collectives", name, set())
    if isinstance(error, NotImplementedError):
        raise NotImplementedError(
            f"nki.collectives.{name} (NKI 0.6) is not implemented in trnsim yet (all_reduce, "
            "all_gather, reduce_scatter, all_to_all, collective_permute and rank_id are; "
            "issue #20)")
    raise error
