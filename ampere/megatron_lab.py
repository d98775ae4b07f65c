"""The old path of the Megatron-LM chapter's lab: ``ampere.megatron_lab`` is :mod:`ampere.megatron.lab`.

The lab now lives in the ``ampere/megatron/`` package (``lab.py``, with the tiny GPT in ``lab_model.py``).
This module replaces itself by that one, so both names are the same module object (monkeypatching either
patches both).
"""

import sys

from .megatron import lab as _lab

sys.modules[__name__] = _lab
