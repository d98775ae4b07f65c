"""Result records flattened: the bandwidth kernels (:func:`bandwidth_rows`) and the L2 sweep
(:func:`sweep_rows`) of fresh measurements or recorded results.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb), "Measured bandwidth" and "The L2 working-set
sweep". Pure: no torch, no matplotlib (records are plain dicts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .common import _Row


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


def bandwidth_rows(records: Iterable[Mapping[str, Any]]) -> list[BandwidthRow]:
    """The bandwidth kernels of result records (from :func:`measure_bandwidth` or a recorded result).

    Chapter: *HBM and the memory hierarchy*, "Measured bandwidth".
    """
    rows = []
    for r in records:
        p, d = r.get("params", {}), r.get("derived", {})
        if p.get("experiment") != "bandwidth":
            continue
        meas = r.get("measurement") or {}
        rows.append(BandwidthRow(p["kernel"], p.get("engine"), p.get("array_bytes"), d["bytes_per_s"],
                                 d.get("pct_of_datasheet"), d.get("copied_bytes_per_s"), meas.get("n"),
                                 meas.get("rel_iqr")))
    return rows


def sweep_rows(records: Iterable[Mapping[str, Any]]) -> tuple[list[float], list[float], int | None]:
    """(footprints, bytes/s, device L2 bytes) of L2-sweep records, sorted by footprint.

    Chapter: *HBM and the memory hierarchy*, "The L2 working-set sweep".
    """
    pts, l2 = [], None
    for r in records:
        p = r.get("params", {})
        if p.get("experiment") == "l2_sweep":
            pts.append((p["footprint_bytes"], r["derived"]["bytes_per_s"]))
            l2 = p.get("device_l2_bytes") or l2
    pts.sort()
    return [f for f, _ in pts], [b for _, b in pts], l2
