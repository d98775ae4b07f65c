"""Input validation shared by every module: one place that says what a good argument is.

Chapter: every chapter; CONTRIBUTING.md, "Errors". Each helper returns the value converted to a plain
Python type, or raises ``ValueError`` (a value of the right type outside what is allowed) or
``TypeError`` (a value of the wrong type) naming the argument, the value and what is allowed.

Rules that hold everywhere in the package:

* integers: Python ``int`` and NumPy integers are accepted alike; ``bool`` is not an integer here, and
  neither is a float, even ``2.0`` (a fractional GPU count is a mistake, not a rounding question);
* floats: ``int``, ``float`` and NumPy numbers are accepted; strings are refused (no silent ``float("1.5")``);
  NaN and infinities are refused unless ``allow_inf`` says otherwise;
* booleans: only ``True``/``False`` (and NumPy booleans): ``"false"`` is not false;
* names: an exact member of the allowed collection.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Collection, Iterable

__all__ = ["integer", "positive_int", "nonneg_int", "real", "positive", "nonneg", "fraction", "boolean",
           "choice", "one_of", "at_most"]


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def integer(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an ``int`` (Python or NumPy integer, never bool or float), within the bounds given."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {_describe(value)} ({type(value).__name__})")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {v}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} must be an integer <= {maximum}, got {v}")
    return v


def positive_int(name: str, value: Any, *, maximum: int | None = None) -> int:
    """An integer >= 1."""
    return integer(name, value, minimum=1, maximum=maximum)


def nonneg_int(name: str, value: Any, *, maximum: int | None = None) -> int:
    """An integer >= 0."""
    return integer(name, value, minimum=0, maximum=maximum)


def real(name: str, value: Any, *, minimum: float | None = None, maximum: float | None = None,
         strict_min: bool = False, allow_inf: bool = False) -> float:
    """``value`` as a finite ``float`` (ints and NumPy numbers accepted; bools and strings refused).

    ``strict_min`` makes the lower bound exclusive (``> minimum``); ``allow_inf`` admits +/- infinity.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {_describe(value)} ({type(value).__name__})")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be a finite number, got {v}")
    if minimum is not None and (v <= minimum if strict_min else v < minimum):
        raise ValueError(f"{name} must be {'>' if strict_min else '>='} {minimum:g}, got {v:g}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} must be <= {maximum:g}, got {v:g}")
    return v


def positive(name: str, value: Any, *, maximum: float | None = None, allow_inf: bool = False) -> float:
    """A finite number > 0."""
    return real(name, value, minimum=0.0, strict_min=True, maximum=maximum, allow_inf=allow_inf)


def nonneg(name: str, value: Any, *, maximum: float | None = None) -> float:
    """A finite number >= 0."""
    return real(name, value, minimum=0.0, maximum=maximum)


def fraction(name: str, value: Any, *, allow_zero: bool = True) -> float:
    """A number in [0, 1] (or (0, 1] when ``allow_zero`` is False)."""
    return real(name, value, minimum=0.0, strict_min=not allow_zero, maximum=1.0)


def boolean(name: str, value: Any) -> bool:
    """``True`` or ``False`` (NumPy booleans accepted); anything else, ``"false"`` or ``0`` included, refused."""
    if isinstance(value, bool):
        return value
    if type(value).__name__ == "bool_" and type(value).__module__ == "numpy":
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {_describe(value)} ({type(value).__name__})")


def choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """``value`` if it is one of ``allowed`` (compared with ``==``, types must match for strings)."""
    options = list(allowed)
    for option in options:
        if type(option) is type(value) and option == value:
            return option
    shown = ", ".join(repr(o) for o in options)
    raise ValueError(f"{name} must be one of {shown}; got {_describe(value)}")


def one_of(name: str, value: Any, allowed: Collection[str]) -> str:
    """A string from ``allowed``: :func:`choice` for names, with a type check first."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {', '.join(map(repr, allowed))}; "
                        f"got {_describe(value)} ({type(value).__name__})")
    return choice(name, value, allowed)


def at_most(name: str, value: float, limit: float, why: str) -> float:
    """Refuse ``value`` above ``limit`` before anything is built from it; ``why`` says what the limit is."""
    if value > limit:
        raise ValueError(f"{name}={value:g} is larger than {limit:g} ({why})")
    return value
