"""nki.typing (NKI 0.6): annotations for kernel parameters; trnsim does not need them."""

from . import _names

tensor = object  # nt.tensor: any tensor argument (an annotation only)

_PROVIDED = {"tensor"}


def __getattr__(name):
    raise _names.missing("nki.typing", name, _PROVIDED)
