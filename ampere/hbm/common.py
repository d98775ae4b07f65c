"""Units and small helpers that every file of :mod:`ampere.hbm` shares.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb). Units follow the book: bytes and bytes/s in
variables, GB = 1e9 bytes, GiB = 2**30 bytes. ``_Row`` gives the result dataclasses read access by name
(``row["kernel"]``); ``_catalogue`` is the catalogue GPU of a name, or None for a GPU outside it. The field
rules (``_fields`` and the rule makers ``_int``, ``_num``, ``_opt``, ``_text``, ``_flag``, ``_name``) check the
fields of every result dataclass in its ``__post_init__`` with :mod:`ampere.check`, naming ``Class.field``;
``_info`` and ``_records`` check the device and the result records the views and records files take.
Pure: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any, Callable, Mapping

from .. import check, specs

KiB = 1024
MiB = 1024**2
GiB = 1024**3
GB = 1e9


class _Row:
    """Read access by name (``row["kernel"]``) on top of attributes, for callers that index rows like dicts."""

    def __getitem__(self, name: str) -> Any:
        if name not in {f.name for f in fields(self)}:  # type: ignore[arg-type]
            raise KeyError(name)
        return getattr(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        return getattr(self, name, default)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]


def _catalogue(name: str) -> specs.GPUSpec | None:
    return specs.get(name) if name in specs.names() else None


# ---------------------------------------------------------------------------------------------------------
# Field rules of the result dataclasses, and the arguments several files share
# ---------------------------------------------------------------------------------------------------------

Rule = Callable[[str, Any], Any]
#: Upper bound of any byte count, rate or time a result of this chapter holds: far above any GPU, so a
#: typo (or 10**40) is refused while every real figure passes.
BIG = 1e30


def _fields(obj: Any, **rules: Rule) -> None:
    """Check each field of the frozen dataclass ``obj`` with its rule, store what the rule returns, and let
    a refusal name ``Class.field``."""
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


def _name(allowed: Any) -> Rule:
    return lambda n, v: check.one_of(n, v, tuple(allowed))


def _info(info: Any) -> Any:
    """``info`` is a :class:`ampere.device.DeviceInfo` (from ``probe()``) or None."""
    from .. import device

    if info is not None and not isinstance(info, device.DeviceInfo):
        raise TypeError(f"info must be a DeviceInfo (from ampere.device.probe()) or None, got {info!r:.60} "
                        f"({type(info).__name__})")
    return info


def _records(name: str, records: Any, *, allow_none: bool = False) -> list[Mapping[str, Any]] | None:
    """A list of result records (mappings with ``params``), at most 100,000 of them; never a string."""
    if records is None and allow_none:
        return None

    def one(n: str, r: Any) -> Mapping[str, Any]:
        if not isinstance(r, Mapping):
            raise TypeError(f"{n} must be a result record (a dict with 'params'), got {r!r:.60} ({type(r).__name__})")
        if not isinstance(r.get("params", {}), Mapping) or not isinstance(r.get("derived", {}), Mapping):
            raise TypeError(f"{n}: 'params' and 'derived' must be dicts")
        return r

    return check.sequence(name, records, one, min_len=0, max_len=100_000)
