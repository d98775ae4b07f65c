"""Field rules of the chapter's result dataclasses and the arguments several files share: each result type
checks its fields in ``__post_init__`` with :mod:`ampere.check`, and a refusal names ``Class.field``.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``). ``_fields(obj, name=rule, ...)`` applies the
rules; the rule makers are ``_int(lo, hi)``, ``_num(lo, hi, strict=)``, ``_opt(rule)``, ``_text()``,
``_flag`` and ``_triple`` (three positive integers, a tile shape); ``_info`` checks the ``DeviceInfo`` the
views take. Pure: no torch, no triton, no matplotlib.
"""

from __future__ import annotations

from typing import Any

from .. import check
from .. import fields as _core_fields

# the rules and the field checker are the package's own (ampere.fields), under this chapter's short names
Rule = _core_fields.Rule
BIG = _core_fields.BIG
_fields = _core_fields.check_each
_int = _core_fields.integer_rule
_num = _core_fields.number_rule
_opt = _core_fields.optional_rule
_text = _core_fields.text_rule
_flag = _core_fields.flag_rule
_gpu = _core_fields.gpu_rule


def _triple(hi: int = 1 << 16) -> Rule:
    """Three positive integers (M, N, K) as a tuple, each at most ``hi``."""
    return lambda n, v: tuple(check.sequence(n, v, lambda m, x: check.positive_int(m, x, maximum=hi),
                                             min_len=3, max_len=3))


def _info(info: Any) -> Any:
    """``info`` is a :class:`ampere.device.DeviceInfo` (from ``probe()``) or None."""
    return check.device_info("info", info)
