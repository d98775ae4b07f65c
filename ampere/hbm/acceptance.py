"""The acceptance checks of the chapter's GPU run: copy bandwidth against the datasheet, the L2 knee against
the reported L2 (thresholds :data:`ACCEPT_COPY_PCT`, :data:`ACCEPT_KNEE_TOLERANCE`; ``tools/gpu_check.py``
tabulates them).

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb). Pure: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .. import check
from .common import MiB, _fields, _flag, _records, _Row, _text
from .l2_model import find_knee
from .records import bandwidth_rows, sweep_rows

#: Acceptance thresholds of the chapter's GPU run: the copy reaches 85 % of the datasheet bandwidth on an
#: A100, H100 or H200, and the L2 sweep shows a knee within 25 % of the L2 size the device reports.
ACCEPT_COPY_PCT = 85.0
ACCEPT_KNEE_TOLERANCE = 0.25
_ACCEPT_FAMILIES = ("A100", "H100", "H200")


@dataclass(frozen=True)
class Acceptance(_Row):
    """One acceptance check of a GPU run. ``applies`` is False where the threshold is not meant for this GPU
    or the data to judge it are missing (then ``passed`` means nothing)."""

    check: str
    applies: bool
    passed: bool
    detail: str

    def __post_init__(self) -> None:
        _fields(self, check=_text(), applies=_flag, passed=_flag, detail=_text(allow_empty=True))


def check_acceptance(records: Iterable[Mapping[str, Any]], spec_name: str | None) -> list[Acceptance]:
    """The chapter's acceptance checks on measured records (copy bandwidth, L2 knee): ``records`` are result
    records (from :func:`~ampere.hbm.measure_bandwidth` and :func:`~ampere.hbm.measure_l2_sweep`), and
    ``spec_name`` the catalogue name of the GPU that ran them (None: not in the catalogue; the thresholds
    apply to the A100, H100 and H200 only). Chapter: *HBM and the memory hierarchy*, "Bandwidth that kernels
    reach" (``tools/gpu_check.py`` tabulates them)."""
    records = _records("records", records)
    check.optional(check.string, "spec_name", spec_name, max_len=200)
    out = []
    rows = {r.kernel: r for r in bandwidth_rows(records)}
    family = bool(spec_name) and any(f in str(spec_name) for f in _ACCEPT_FAMILIES)
    for kernel in ("copy", "scale"):
        pct = rows[kernel].pct_of_datasheet if kernel in rows else None
        out.append(Acceptance(f"{kernel} >= {ACCEPT_COPY_PCT:.0f}% of the datasheet bandwidth",
                              family and pct is not None and kernel == "copy",
                              pct is not None and pct >= ACCEPT_COPY_PCT,
                              f"{pct:.1f}%" if pct is not None else "no datasheet figure to compare with"))
    f, y, l2 = sweep_rows(records)
    name = f"L2 knee within {ACCEPT_KNEE_TOLERANCE:.0%} of the reported L2"
    if len(f) >= 3 and l2:
        k = find_knee(f, y, l2, ACCEPT_KNEE_TOLERANCE)
        detail = (f"knee at {k.knee_bytes / MiB:.1f} MiB = {k.ratio_to_l2:.2f} x {l2 / MiB:.0f} MiB"
                  if k.visible else "no visible knee")
        out.append(Acceptance(name, True, k.within, detail))
    else:
        out.append(Acceptance(name, False, False, "needs a sweep with a device-reported L2 size"))
    return out
