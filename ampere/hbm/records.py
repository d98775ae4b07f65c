"""Result records flattened: the bandwidth kernels (:func:`bandwidth_rows`) and the L2 sweep
(:func:`sweep_rows`) of fresh measurements or recorded results.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb), "Measured bandwidth" and "The L2 working-set
sweep". Pure: no torch, no matplotlib (records are plain dicts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .. import check
from .common import _fields, _int, _name, _num, _opt, _records, _Row


@dataclass(frozen=True)
class BandwidthRow(_Row):
    """One bandwidth kernel of a result, flattened. See :func:`bandwidth_rows`."""

    kernel: str
    engine: str | None
    array_bytes: int | None
    bytes_per_s: float
    pct_of_datasheet: float | None
    copied_bytes_per_s: float | None
    samples: int | None
    rel_iqr: float | None

    def __post_init__(self) -> None:
        from .measure import KERNELS

        _fields(self, kernel=_name(KERNELS), engine=_opt(_name(("SM", "memcpy"))), array_bytes=_opt(_int(1, 1 << 50)),
                bytes_per_s=_num(strict=True), pct_of_datasheet=_opt(_num()), copied_bytes_per_s=_opt(_num(strict=True)),
                samples=_opt(_int(1, 10**9)), rel_iqr=_opt(_num()))


def _field(r: Mapping[str, Any], part: str, key: str, i: int, name: str) -> Any:
    """``r[part][key]`` of record ``i``, or a ValueError naming ``name[i]`` and the missing key."""
    try:
        return r[part][key]
    except KeyError:
        raise ValueError(f"{name}[{i}] has no {part}[{key!r}]: not a record of this benchmark") from None


def bandwidth_rows(records: Iterable[Mapping[str, Any]]) -> list[BandwidthRow]:
    """The bandwidth kernels of result records (from :func:`measure_bandwidth` or a recorded result).

    Records of other experiments are skipped; a bandwidth record without its kernel or bytes/s is refused.
    Chapter: *HBM and the memory hierarchy*, "Measured bandwidth".
    """
    return _bandwidth_rows(records, "records")


def _bandwidth_rows(records: Any, name: str) -> list[BandwidthRow]:
    """:func:`bandwidth_rows`, a refusal naming ``name`` (the caller's argument)."""
    rows = []
    for i, r in enumerate(_records(name, records)):
        p, d = r.get("params", {}), r.get("derived", {})
        if p.get("experiment") != "bandwidth":
            continue
        meas = r.get("measurement") or {}
        if not isinstance(meas, Mapping):
            raise TypeError(f"{name}[{i}]['measurement'] must be a dict, got {type(meas).__name__}")
        try:
            rows.append(BandwidthRow(_field(r, "params", "kernel", i, name), p.get("engine"), p.get("array_bytes"),
                                     _field(r, "derived", "bytes_per_s", i, name), d.get("pct_of_datasheet"),
                                     d.get("copied_bytes_per_s"), meas.get("n"), meas.get("rel_iqr")))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{name}[{i}]: {exc}") from None
    return rows


def sweep_rows(records: Iterable[Mapping[str, Any]]) -> tuple[list[float], list[float], int | None]:
    """(footprints, bytes/s, device L2 bytes) of L2-sweep records, sorted by footprint.

    Records of other experiments are skipped; an L2-sweep record without its footprint or bytes/s is refused.
    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    pts, l2 = [], None
    for i, r in enumerate(_records("records", records)):
        p = r.get("params", {})
        if p.get("experiment") == "l2_sweep":
            f = check.positive(f"records[{i}] footprint_bytes", _field(r, "params", "footprint_bytes", i, "records"))
            y = check.positive(f"records[{i}] bytes_per_s", _field(r, "derived", "bytes_per_s", i, "records"))
            pts.append((f, y))
            l2 = check.optional(check.positive_int, f"records[{i}] device_l2_bytes", p.get("device_l2_bytes")) or l2
    pts.sort()
    return [f for f, _ in pts], [b for _, b in pts], l2
