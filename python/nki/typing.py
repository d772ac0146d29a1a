"""nki.typing (NKI 0.6): annotations of kernel parameters (`a: nt.tensor[128, 512]`). trnsim
reads shapes and dtypes from the arrays a kernel is called with, so these only annotate;
`mutable_tensor` (a parameter written in place) is a legacy name kernels still use: trnsim
copies every argument a kernel writes back into the caller's array, annotated or not."""

from . import _names


class _Annotation:
    """A parameter annotation, subscriptable with a shape (nt.tensor[128, 512])."""

    def __class_getitem__(cls, shape):
        return cls


class tensor(_Annotation):  # noqa: N801  (NKI's spelling)
    """Any tensor argument."""


class mutable_tensor(_Annotation):  # noqa: N801
    """A tensor argument the kernel writes in place."""


class mutable(_Annotation):  # noqa: N801
    """A legacy marker of an argument the kernel writes."""


class immutable(_Annotation):  # noqa: N801
    """A legacy marker of an argument the kernel only reads."""


_PROVIDED = {"tensor", "mutable_tensor", "mutable", "immutable"}


def __getattr__(name):
    raise _names.missing("nki.typing", name, _PROVIDED)
