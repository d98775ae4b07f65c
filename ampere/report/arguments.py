"""The shapes of the report's arguments, checked with the :mod:`ampere.check` vocabulary: figures and
recorded figures (mappings with a ``key`` and a finite ``value``), results, judged checks, device info,
streams, paths. Each helper takes the argument's name first and raises ``ValueError``/``TypeError`` naming
it, the value and what is allowed, so that every public function of the package refuses bad input in one
line and never answers silently.

Pure: no torch, no matplotlib. Chapter: *The reference check* (book/reference-check.ipynb).
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping, Sequence

from .. import check

#: the most figures, references or rows one call reads (a report has a few dozen; the bound keeps a
#: runaway list from being walked)
MAX_ITEMS = 100_000


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def mapping_list(name: str, value: Any, keys: Sequence[str] = (), *, min_len: int = 0) -> list[dict[str, Any]]:
    """A list or tuple of mappings, each holding ``keys``: the mappings as dicts (a string, a mapping or a
    set is not a list of mappings)."""
    def item(label: str, x: Any) -> dict[str, Any]:
        if not isinstance(x, Mapping):
            raise TypeError(f"{label} must be a mapping (dict), got {_describe(x)} ({type(x).__name__})")
        missing = [k for k in keys if k not in x]
        if missing:
            raise ValueError(f"{label} lacks {', '.join(map(repr, missing))}; it holds {sorted(map(str, x))[:8]}")
        return dict(x)

    return check.sequence(name, value, item, min_len=min_len, max_len=MAX_ITEMS)


def figure_list(name: str, value: Any, *, recorded: bool = False, min_len: int = 0) -> list[dict[str, Any]]:
    """Report figures (``key``: a non-empty string, ``value``: a finite number; recorded ones also ``gpu``);
    an optional ``model`` must be a finite number or None, an optional ``size_bytes`` a positive integer."""
    rows = mapping_list(name, value, ("key", "value", "gpu") if recorded else ("key", "value"), min_len=min_len)
    for i, r in enumerate(rows):
        check.string(f"{name}[{i}]['key']", r["key"])
        r["value"] = check.finite(f"{name}[{i}]['value']", r["value"])
        if r.get("model") is not None:
            r["model"] = check.finite(f"{name}[{i}]['model']", r["model"])
        if r.get("size_bytes") is not None:
            r["size_bytes"] = check.positive_int(f"{name}[{i}]['size_bytes']", r["size_bytes"])
        if recorded:
            check.string(f"{name}[{i}]['gpu']", r["gpu"])
    return rows


def result(name: str, value: Any) -> dict[str, Any]:
    """A result of the package (schema ``ampere-result/1``, :func:`ampere.results.validate`)."""
    from .. import results

    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a result (a dict of schema ampere-result/1), got {_describe(value)}")
    try:
        return results.validate(dict(value))
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{name} is not a valid result: {exc}") from None


def result_list(name: str, value: Any) -> list[dict[str, Any]]:
    """A list of results (each as :func:`result`)."""
    return check.sequence(name, value, result, min_len=0, max_len=MAX_ITEMS)


def device_info(name: str, value: Any) -> Any:
    """An :class:`ampere.device.DeviceInfo` (what ``ampere.device.probe()`` returns)."""
    return check.device_info(name, value, allow_none=False)


def stream(name: str, value: Any) -> Any:
    """A text stream: anything with ``write`` (``None`` is left to the caller's default)."""
    if value is not None and not callable(getattr(value, "write", None)):
        raise TypeError(f"{name} must be a text stream with write() (sys.stderr, io.StringIO()), got "
                        f"{_describe(value)} ({type(value).__name__})")
    return value


def path(name: str, value: Any) -> str | os.PathLike[str]:
    """A file or folder path: a non-empty ``str`` or an ``os.PathLike``."""
    if isinstance(value, os.PathLike):
        return value
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a path (str or pathlib.Path), got {_describe(value)} "
                        f"({type(value).__name__})")
    if not value.strip():
        raise ValueError(f"{name} must be a non-empty path, got {value!r}")
    return value


def checked_rows(name: str, value: Any) -> list[dict[str, Any]]:
    """The judged checks of :func:`ampere.report.judge_all` (each with a ``name`` and a known ``status``)."""
    from .config_judges import STATUSES

    rows = mapping_list(name, value, ("name", "status"))
    for i, r in enumerate(rows):
        check.one_of(f"{name}[{i}]['status']", r["status"], STATUSES)
    return rows


def loss_pair(name: str, value: Any) -> tuple[float, float] | None:
    """None, or a (low, high) pair of fractions in [0, 1] with low <= high."""
    if value is None:
        return None
    lo, hi = check.sequence(name, value, check.fraction, min_len=2, max_len=2)
    if lo > hi:
        raise ValueError(f"{name}={tuple(value)!r}: the low end must not exceed the high end")
    return lo, hi


def finite_or_none(name: str, value: Any) -> float | None:
    """None, or a finite number."""
    return None if value is None else check.finite(name, value)


def is_finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
