"""The old path of the MIG geometry: ``ampere.mig_geometry`` is :mod:`ampere.mig.geometry`, the same module object.

Chapter: *Multi-Instance GPU* (book/mig.ipynb). The model moved into the chapter package ``ampere.mig``;
this file keeps ``from ampere import mig_geometry`` working.
"""

import sys

from .mig import geometry as _m

sys.modules[__name__] = _m
