"""nki.collectives (NKI 0.6): collectives between cores and chips. They need multi-chip
runs, which trnsim does not have yet (issue: systems and collectives); every name says so."""

from . import _names


def __getattr__(name):
    raise _names.missing("nki.collectives", name, set())
