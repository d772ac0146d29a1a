"""NKI 0.6 on trnsim: `import nki`, `import nki.language as nl`, `import nki.isa as nisa`.

Kernels written for NKI 0.6 trace through trnsim's C++ kernel API and compiler and run on
its simulator, functionally and in time (docs/python.md lists what is covered).
"""

import os

from trnsim import _core

from . import language, isa, typing, collectives  # noqa: F401  (the public submodules)
from ._kernel import Kernel, jit, simulate  # noqa: F401

# Frames in the front end's own files are not the kernel's: errors and profiles name the
# first frame outside them.
_core.set_package_dirs([os.path.dirname(os.path.abspath(__file__)) + os.sep,
                        os.path.dirname(os.path.abspath(_core.__file__)) + os.sep])
