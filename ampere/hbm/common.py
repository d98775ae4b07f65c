"""Units and small helpers that every file of :mod:`ampere.hbm` shares.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb). Units follow the book: bytes and bytes/s in
variables, GB = 1e9 bytes, GiB = 2**30 bytes. ``_Row`` gives the result dataclasses read access by name
(``row["kernel"]``); ``_catalogue`` is the catalogue GPU of a name, or None for a GPU outside it.
Pure: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

from .. import specs

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
