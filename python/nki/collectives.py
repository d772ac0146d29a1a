"""nki.collectives (NKI 0.6): collectives between cores and chips. They need multi-chip runs,
which trnsim does not have yet (issue #20, systems and collectives); every name says so."""

from . import _names


def __getattr__(name):
    error = _names.missing("nki.collectives", name, set())
    if isinstance(error, NotImplementedError):
        raise NotImplementedError(
            f"nki.collectives.{name} (NKI 0.6) needs runs of several cores and chips joined by "
            "collectives, which trnsim does not have yet (issue #20); a logical core of two "
            "(kernel[2]) runs without them")
    raise error
