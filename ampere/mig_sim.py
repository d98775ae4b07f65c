"""The old path of the isolation model: ``ampere.mig_sim`` is :mod:`ampere.mig.sim`, the same module object.

Chapter: *Multi-Instance GPU* (book/mig.ipynb). The model moved into the chapter package ``ampere.mig``;
this file keeps ``from ampere import mig_sim`` working.
"""

import sys

from .mig import sim as _m

sys.modules[__name__] = _m
