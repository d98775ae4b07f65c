"""Input checks shared by the cluster models: integers and numbers in an interval, through :mod:`ampere.check`.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb); the checks follow
CONTRIBUTING.md, "Errors".
"""

from __future__ import annotations

from typing import Any

from .. import check


def _check_int(value: Any, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer in ``[minimum, maximum]`` (NumPy integers accepted; bools, floats and strings refused)."""
    return check.integer(name, value, minimum=minimum, maximum=maximum)


def _check_float(value: Any, name: str, lo: float = 0.0, hi: float | None = None,
                 lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite number in the interval given (open or closed ends), via ampere.check."""
    v = check.real(name, value)
    bad = v < lo or (lo_open and v == lo) or (hi is not None and (v > hi or (hi_open and v == hi)))
    if bad:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        raise ValueError(f"{name}={value!r} must lie in {left}{lo:g}, {f'{hi:g}' if hi is not None else 'inf'}{right}")
    return v


def _divisors(n: int) -> list[int]:
    """Divisors of ``n >= 1`` in increasing order (O(sqrt n))."""
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]
