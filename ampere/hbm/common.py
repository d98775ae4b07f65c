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
from typing import Any, Mapping

from .. import check, specs
from .. import fields as _core_fields

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

# the rules and the field checker are the package's own (ampere.fields), under this chapter's short names
Rule = _core_fields.Rule
BIG = _core_fields.BIG
_fields = _core_fields.check_each
_int = _core_fields.integer_rule
_num = _core_fields.number_rule
_opt = _core_fields.optional_rule
_text = _core_fields.text_rule
_flag = _core_fields.flag_rule
_name = _core_fields.name_rule


def _info(info: Any) -> Any:
    """``info`` is a :class:`ampere.device.DeviceInfo` (from ``probe()``) or None."""
    return check.device_info("info", info)


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
