"""Field rules of the chapter's result dataclasses and the arguments several files share: each result type
checks its fields in ``__post_init__`` with :mod:`ampere.check`, and a refusal names ``Class.field``.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``). ``_fields(obj, name=rule, ...)`` applies the
rules; the rule makers are ``_int(lo, hi)``, ``_num(lo, hi, strict=)``, ``_opt(rule)``, ``_text()``,
``_flag`` and ``_triple`` (three positive integers, a tile shape); ``_info`` checks the ``DeviceInfo`` the
views take. Pure: no torch, no triton, no matplotlib.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import check

Rule = Callable[[str, Any], Any]
#: Upper bound of any byte count, rate or time a result of this chapter holds (far above any GPU).
BIG = 1e30


def _fields(obj: Any, **rules: Rule) -> None:
    """Check each field of the frozen dataclass ``obj`` with its rule and store what the rule returns."""
    cls = type(obj).__name__
    for name, rule in rules.items():
        object.__setattr__(obj, name, rule(f"{cls}.{name}", getattr(obj, name)))


def _int(lo: int, hi: int) -> Rule:
    return lambda n, v: check.bounded_int(n, v, lo, hi)


def _num(lo: float = 0.0, hi: float = BIG, *, strict: bool = False) -> Rule:
    """A finite number in [lo, hi] (``strict``: > lo)."""
    return lambda n, v: check.real(n, v, minimum=lo, maximum=hi, strict_min=strict)


def _opt(rule: Rule) -> Rule:
    return lambda n, v: None if v is None else rule(n, v)


def _text(allow_empty: bool = False) -> Rule:
    return lambda n, v: check.string(n, v, allow_empty=allow_empty, max_len=10_000)


def _flag(n: str, v: Any) -> bool:
    return check.boolean(n, v)


def _gpu(n: str, v: Any) -> str:
    return check.gpu(n, v)


def _triple(hi: int = 1 << 16) -> Rule:
    """Three positive integers (M, N, K) as a tuple, each at most ``hi``."""
    return lambda n, v: tuple(check.sequence(n, v, lambda m, x: check.positive_int(m, x, maximum=hi),
                                             min_len=3, max_len=3))


def _info(info: Any) -> Any:
    """``info`` is a :class:`ampere.device.DeviceInfo` (from ``probe()``) or None."""
    from .. import device

    if info is not None and not isinstance(info, device.DeviceInfo):
        raise TypeError(f"info must be a DeviceInfo (from ampere.device.probe()) or None, got {info!r:.60} "
                        f"({type(info).__name__})")
    return info
