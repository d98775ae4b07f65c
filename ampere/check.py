"""Input validation shared by every module: one place that says what a good argument is.

Chapter: every chapter; CONTRIBUTING.md, "Errors". Each helper takes the argument's name first, returns
the value converted to a plain Python type, or raises ``ValueError`` (a value of the right type outside
what is allowed) or ``TypeError`` (a value of the wrong type) whose message starts with the argument's
name and says the value given and what is allowed. One line per argument::

    n = check.bounded_int("microbatches", n, 1, 10_000, why="one simulated step per microbatch")
    t = check.finite("t_comm", t_comm)                       # refuses NaN and +/- inf
    gpus = check.gpus("gpus", gpus)                          # a list of catalogue names, never a bare string
    warmup_s = check.optional(check.nonneg, "warmup_s", warmup_s)

| helper | accepts | returns |
|---|---|---|
| ``integer(name, v, minimum=, maximum=)`` | Python/NumPy int (not bool, not float) in bounds | ``int`` |
| ``positive_int`` / ``nonneg_int`` | integer >= 1 / >= 0 (``maximum=`` optional) | ``int`` |
| ``bounded_int(name, v, lo, hi, why=)`` | integer in [lo, hi]; ``why`` explains the upper limit | ``int`` |
| ``real(name, v, minimum=, maximum=, strict_min=, allow_inf=)`` | finite number (not bool, not str) | ``float`` |
| ``finite(name, v)`` | any finite number | ``float`` |
| ``positive`` / ``nonneg`` | finite number > 0 / >= 0 (``maximum=`` optional) | ``float`` |
| ``bounded(name, v, lo, hi, why=)`` | finite number in [lo, hi] | ``float`` |
| ``fraction(name, v, allow_zero=)`` | number in [0, 1] (or (0, 1]) | ``float`` |
| ``at_most(name, v, limit, why)`` | a number <= limit (a size checked before it is allocated or looped over) | the value |
| ``boolean(name, v)`` | ``True``/``False`` (NumPy bools too); never ``"false"``, 0 or 1 | ``bool`` |
| ``string(name, v, allow_empty=, max_len=)`` | a ``str`` (non-empty by default) | ``str`` |
| ``one_of(name, v, allowed, ignore_case=)`` / ``choice`` | one name of ``allowed``; the error lists them | the allowed spelling |
| ``names(name, v, allowed, ignore_case=, min_len=, max_len=, unique=)`` | a list/tuple of names, never a bare string | ``list`` |
| ``gpu(name, v)`` / ``gpus(name, v)`` | catalogue name(s) of ``ampere.specs``, in any case | catalogue spelling |
| ``sequence(name, v, item, min_len=, max_len=)`` | list/tuple/range/1-D array (never a str or a mapping); ``item(f"{name}[i]", x)`` checks each element | ``list`` |
| ``mapping(name, v, allow_empty=)`` | a ``Mapping`` | ``dict`` |
| ``function(name, v)`` | a callable | the callable |
| ``device_info(name, v, allow_none=)`` | an ``ampere.device.DeviceInfo`` (or ``None``) | the value |
| ``argv(name, v)`` | ``None`` or a list of strings (a benchmark's command line) | ``list`` |
| ``device(name, v)`` | ``"cpu"``, ``"cuda"``, ``"cuda:0"``, a ``torch.device`` (torch imported only for non-"cpu") | ``"cpu"`` or a ``torch.device`` |
| ``optional(helper, name, v, *args, **kw)`` | ``None``, or what ``helper`` accepts | ``None`` or the helper's value |

Rules that hold everywhere in the package:

* integers: Python ``int`` and NumPy integers are accepted alike; ``bool`` is not an integer here, and
  neither is a float, even ``2.0`` (a fractional GPU count is a mistake, not a rounding question);
* floats: ``int``, ``float`` and NumPy numbers are accepted; strings are refused (no silent ``float("1.5")``);
  NaN and infinities are refused unless ``allow_inf`` says otherwise; an integer too large for a float too;
* booleans: only ``True``/``False`` (and NumPy booleans): ``"false"`` is not false;
* names: a member of the allowed collection, listed in the error. GPU catalogue names match in any case
  (``"a100-sxm4-80gb"`` is ``"A100-SXM4-80GB"``) everywhere: ``specs.get``, ``results.records``,
  ``plots.gpu_color`` and :func:`gpu`; other names match exactly unless the function says otherwise;
* lists: a ``str`` is never a list of names (``"A100"`` is not ``["A", "1", "0", "0"]``); empty lists are
  refused unless ``min_len=0``;
* sizes: every loop and allocation is bounded by an explicit limit (``bounded_int``, ``at_most``, the
  ``maximum=`` of the integer helpers), checked before anything is built, with the limit and its reason in
  the message: ``10**12`` microbatches is an error, not an hour of silence.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping as _Mapping
from typing import Any, Callable, Collection, Iterable, TypeVar

__all__ = ["integer", "positive_int", "nonneg_int", "bounded_int", "real", "finite", "positive", "nonneg",
           "bounded", "fraction", "boolean", "string", "choice", "one_of", "names", "gpu", "gpus", "sequence",
           "mapping", "function", "device", "device_info", "argv", "optional", "at_most"]

T = TypeVar("T")


def _describe(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__} object>"
    return text if len(text) <= 60 else text[:57] + "..."


def _listed(options: Iterable[Any], limit: int = 40) -> str:
    options = list(options)
    shown = ", ".join(repr(o) for o in options[:limit])
    return shown + (f", ... ({len(options)} in all)" if len(options) > limit else "")


def _is_numpy_bool(value: Any) -> bool:
    return type(value).__name__ in ("bool_", "bool") and type(value).__module__ == "numpy"


def integer(name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """``value`` as an ``int`` (Python or NumPy integer, never bool or float), within the bounds given."""
    if isinstance(value, bool) or _is_numpy_bool(value) or not isinstance(value, numbers.Integral):
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


def bounded_int(name: str, value: Any, lo: int, hi: int, *, why: str = "") -> int:
    """An integer in ``[lo, hi]``; ``why`` says where the upper limit comes from (it is printed)."""
    v = integer(name, value)
    if v < lo or v > hi:
        reason = f" ({why})" if why else ""
        raise ValueError(f"{name} must be an integer from {lo} to {hi}{reason}, got {v}")
    return v


def real(name: str, value: Any, *, minimum: float | None = None, maximum: float | None = None,
         strict_min: bool = False, allow_inf: bool = False) -> float:
    """``value`` as a finite ``float`` (ints and NumPy numbers accepted; bools and strings refused).

    ``strict_min`` makes the lower bound exclusive (``> minimum``); ``allow_inf`` admits +/- infinity.
    """
    if isinstance(value, bool) or _is_numpy_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {_describe(value)} ({type(value).__name__})")
    try:
        v = float(value)
    except OverflowError:
        raise ValueError(f"{name} must be a finite number, got an integer too large for a float "
                         f"({len(str(abs(int(value))))} digits)") from None
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be a finite number, got {v}")
    if minimum is not None and (v <= minimum if strict_min else v < minimum):
        raise ValueError(f"{name} must be {'>' if strict_min else '>='} {minimum:g}, got {v:g}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} must be <= {maximum:g}, got {v:g}")
    return v


def finite(name: str, value: Any) -> float:
    """Any finite number (NaN and infinities refused), as a ``float``."""
    return real(name, value)


def positive(name: str, value: Any, *, maximum: float | None = None, allow_inf: bool = False) -> float:
    """A finite number > 0."""
    return real(name, value, minimum=0.0, strict_min=True, maximum=maximum, allow_inf=allow_inf)


def nonneg(name: str, value: Any, *, maximum: float | None = None) -> float:
    """A finite number >= 0."""
    return real(name, value, minimum=0.0, maximum=maximum)


def bounded(name: str, value: Any, lo: float, hi: float, *, why: str = "") -> float:
    """A finite number in ``[lo, hi]``; ``why`` says where the limits come from (it is printed)."""
    v = real(name, value)
    if v < lo or v > hi:
        reason = f" ({why})" if why else ""
        raise ValueError(f"{name} must be from {lo:g} to {hi:g}{reason}, got {v:g}")
    return v


def fraction(name: str, value: Any, *, allow_zero: bool = True) -> float:
    """A number in [0, 1] (or (0, 1] when ``allow_zero`` is False)."""
    return real(name, value, minimum=0.0, strict_min=not allow_zero, maximum=1.0)


def boolean(name: str, value: Any) -> bool:
    """``True`` or ``False`` (NumPy booleans accepted); anything else, ``"false"`` or ``0`` included, refused."""
    if isinstance(value, bool):
        return value
    if _is_numpy_bool(value):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {_describe(value)} ({type(value).__name__})")


def string(name: str, value: Any, *, allow_empty: bool = False, max_len: int | None = None) -> str:
    """A ``str`` (non-empty unless ``allow_empty``; at most ``max_len`` characters when given)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {_describe(value)} ({type(value).__name__})")
    if not value and not allow_empty:
        raise ValueError(f"{name} must be a non-empty string, got ''")
    if max_len is not None and len(value) > max_len:
        raise ValueError(f"{name} must be at most {max_len} characters, got {len(value)}")
    return value


def choice(name: str, value: Any, allowed: Iterable[Any], *, ignore_case: bool = False) -> Any:
    """``value`` if it is one of ``allowed`` (compared with ``==``; types must match, so ``1`` is not
    ``"1"`` and ``True`` is not ``1``). With ``ignore_case``, strings match in any case and the allowed
    spelling is returned."""
    options = list(allowed)
    for option in options:
        if type(option) is type(value) and option == value:
            return option
    if ignore_case and isinstance(value, str):
        folded = value.casefold()
        for option in options:
            if isinstance(option, str) and option.casefold() == folded:
                return option
    case = " (in any case)" if ignore_case else ""
    raise ValueError(f"{name} must be one of {_listed(options)}{case}; got {_describe(value)}")


def one_of(name: str, value: Any, allowed: Collection[str], *, ignore_case: bool = False) -> str:
    """A string from ``allowed``: :func:`choice` for names, with a type check first."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {_listed(allowed)}; "
                        f"got {_describe(value)} ({type(value).__name__})")
    return choice(name, value, allowed, ignore_case=ignore_case)


def sequence(name: str, value: Any, item: Callable[[str, Any], T] | None = None, *, min_len: int = 1,
             max_len: int | None = None) -> list[T]:
    """A list of items from a list, tuple, range or 1-D array; a ``str``, ``bytes``, mapping or set is
    refused (a set has no order). ``item(f"{name}[{i}]", x)`` checks and converts each element; at most
    ``max_len`` elements are read (so a huge or endless iterable is refused without being built)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a list or tuple, got the string {_describe(value)}: "
                        f"write [{_describe(value)}] for one element")
    if isinstance(value, (_Mapping, set, frozenset)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a list or tuple, got {_describe(value)} ({type(value).__name__})")
    if getattr(value, "ndim", 1) != 1:
        raise ValueError(f"{name} must be one-dimensional, got an array of shape {getattr(value, 'shape', '?')}")
    if max_len is not None and hasattr(value, "__len__") and len(value) > max_len:
        raise ValueError(f"{name} must have at most {max_len} elements, got {len(value)}")
    out: list[Any] = []
    for i, x in enumerate(value):
        if max_len is not None and i >= max_len:
            raise ValueError(f"{name} must have at most {max_len} elements")
        out.append(item(f"{name}[{i}]", x) if item is not None else x)
    if len(out) < min_len:
        raise ValueError(f"{name} must have at least {min_len} element{'s' if min_len != 1 else ''}, "
                         f"got {len(out)}")
    return out


def names(name: str, value: Any, allowed: Collection[str], *, ignore_case: bool = False, min_len: int = 1,
          max_len: int | None = None, unique: bool = False) -> list[str]:
    """A list of names from ``allowed`` (each returned in its allowed spelling); a bare string is refused
    (``"bf16"`` is not ``["b", "f", "1", "6"]``), so is an empty list unless ``min_len=0``."""
    out = sequence(name, value, lambda n, v: one_of(n, v, allowed, ignore_case=ignore_case), min_len=min_len,
                   max_len=max_len)
    if unique and len(set(out)) != len(out):
        dup = sorted({v for v in out if out.count(v) > 1})
        raise ValueError(f"{name} lists {', '.join(map(repr, dup))} more than once")
    return out


def gpu(name: str, value: Any) -> str:
    """A catalogue name of :mod:`ampere.specs` in any case (or a ``GPUSpec``): its catalogue spelling."""
    from . import specs

    if isinstance(value, specs.GPUSpec):
        return value.name
    return one_of(name, value, specs.names(), ignore_case=True)


def gpus(name: str, value: Any, *, min_len: int = 1, max_len: int | None = 64) -> list[str]:
    """A list of catalogue names (any case), never a bare string: their catalogue spellings."""
    return sequence(name, value, gpu, min_len=min_len, max_len=max_len)


def mapping(name: str, value: Any, *, allow_empty: bool = True) -> dict[Any, Any]:
    """A ``Mapping`` (dict-like), copied into a ``dict``; empty refused unless ``allow_empty``."""
    if not isinstance(value, _Mapping):
        raise TypeError(f"{name} must be a mapping (dict), got {_describe(value)} ({type(value).__name__})")
    if not value and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    return dict(value)


def function(name: str, value: Any) -> Callable[..., Any]:
    """A callable (a function, a class, an object with ``__call__``)."""
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {_describe(value)} ({type(value).__name__})")
    return value


def device(name: str, value: Any) -> Any:
    """A torch device: ``"cpu"`` stays the string ``"cpu"`` (no torch import); any other string or a
    ``torch.device`` becomes a ``torch.device``. A malformed one (``""``, ``"gpu"``, ``3``) is refused here
    with the field named, not as torch's ``RuntimeError`` later."""
    if isinstance(value, str) and value == "cpu":
        return value
    if not isinstance(value, str) and type(value).__name__ != "device":
        raise TypeError(f"{name} must be a torch device or a string such as 'cpu' or 'cuda:0', "
                        f"got {_describe(value)} ({type(value).__name__})")
    import torch

    try:
        return torch.device(value)
    except (RuntimeError, ValueError, TypeError) as exc:
        raise ValueError(f"{name}={value!r} is not a torch device ({exc}); e.g. 'cpu', 'cuda', 'cuda:0'") from None


def device_info(name: str, value: Any, *, allow_none: bool = True) -> Any:
    """An :class:`ampere.device.DeviceInfo` (what ``ampere.device.probe()`` returns), or ``None`` where
    ``allow_none`` (the caller then probes or uses no device). Anything else is refused naming ``name``."""
    if value is None and allow_none:
        return None
    from . import device as _device

    if not isinstance(value, _device.DeviceInfo):
        allowed = "a DeviceInfo (from ampere.device.probe())" + (" or None" if allow_none else "")
        raise TypeError(f"{name} must be {allowed}, got {_describe(value)} ({type(value).__name__})")
    return value


def argv(name: str, value: Any) -> list[str]:
    """A command line for a benchmark's ``main``: ``None`` (no options) or a list of at most 256 strings."""
    if value is None:
        return []
    return sequence(name, value, string, min_len=0, max_len=256)


def optional(helper: Callable[..., T], name: str, value: Any, *args: Any, **kwargs: Any) -> T | None:
    """``None`` passes; anything else goes through ``helper(name, value, *args, **kwargs)``."""
    return None if value is None else helper(name, value, *args, **kwargs)


def at_most(name: str, value: Any, limit: float, why: str) -> Any:
    """Refuse ``value`` above ``limit`` before anything is built from it; ``why`` says what the limit is."""
    v = real(name, value, allow_inf=True)
    if v > limit:
        raise ValueError(f"{name}={v:g} is larger than {limit:g} ({why})")
    return value
