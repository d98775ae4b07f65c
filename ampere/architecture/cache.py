"""The L2 as measured, beside its capacity: the published L2 read-bandwidth sweeps (Ernst's gpu-benches,
``ampere/data/published/l2-sweep.json``) read as the footprint up to which data stays in the L2 at full speed,
the plateau bandwidth, and the bandwidth a given working set gets.

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "The 40 MiB L2, and why it matters": the A100's
L2 is two partitions, and a line that SMs on both sides read is cached in both (gpu-benches README, "gpu-cache"),
so the capacity every SM sees at full speed lies between 20 and 40 MiB. Pure Python: no torch, no matplotlib.
The HBM chapter draws the whole sweep; this module reads the numbers the architecture chapter quotes.
"""

from __future__ import annotations

import statistics
from typing import Any

from .. import check, results, specs

#: A footprint counts as resident while its bandwidth stays at or above this share of the plateau.
RESIDENT_SHARE = 0.9


def _sweep_record(gpu: str | specs.GPUSpec) -> results.Record:
    recs = {r.gpu: r for r in results.records(benchmark="l2-sweep", kind="published")}
    name = gpu.name if isinstance(gpu, specs.GPUSpec) else gpu
    return recs[check.one_of("gpu", name, sorted(recs), ignore_case=True)]


def l2_sweep(gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> list[dict[str, float]]:
    """The published L2 read-bandwidth sweep of ``gpu`` (a GPU with a record in ``l2-sweep.json``): one row per
    footprint, ``footprint_mib`` (MiB = 2^20 bytes) and ``read_gb_per_s`` (GB/s = 10^9 bytes/s).

    Chapter: *Architecture of the GA100*, "The 40 MiB L2, and why it matters".
    """
    rec = _sweep_record(gpu)
    return [{"footprint_mib": kib / 1024, "read_gb_per_s": float(bw)}
            for kib, bw in zip(rec.params["footprint_kib"], rec.figures["read_gb_per_s"])]


def l2_summary(gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> dict[str, Any]:
    """What the published sweep of ``gpu`` says about its L2: ``capacity_mib`` (the L2 the record was measured
    against), ``plateau_gb_per_s`` (median bandwidth of the footprints from 1/8 to 1/2 of the capacity, clear of
    the L1 and of the partition limit), ``resident_mib`` (the largest footprint up to which every point keeps
    :data:`RESIDENT_SHARE` of the plateau), ``first_drop_mib`` and ``first_drop_gb_per_s`` (the next point),
    ``source`` (the author-year label).

    Chapter: *Architecture of the GA100*, "The 40 MiB L2, and why it matters".
    """
    from .. import views

    rec = _sweep_record(gpu)
    rows = l2_sweep(rec.gpu)
    capacity = rec.params["l2_bytes"] / 2**20
    middle = [r["read_gb_per_s"] for r in rows if capacity / 8 <= r["footprint_mib"] <= capacity / 2]
    plateau = statistics.median(middle)
    resident, drop = None, None
    for r in rows:
        if r["footprint_mib"] < capacity / 8:
            continue
        if r["read_gb_per_s"] < RESIDENT_SHARE * plateau:
            drop = r
            break
        resident = r["footprint_mib"]
    return {"gpu": rec.gpu, "capacity_mib": capacity, "plateau_gb_per_s": plateau, "resident_mib": resident,
            "first_drop_mib": drop["footprint_mib"] if drop else None,
            "first_drop_gb_per_s": drop["read_gb_per_s"] if drop else None,
            "source": views.source_text(rec)}


def l2_read_bandwidth(size_bytes: int, gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> dict[str, float]:
    """The measured L2 read bandwidth a working set of ``size_bytes`` gets on ``gpu``: the sweep's point at the
    smallest footprint at or above the size (the last point beyond the sweep), with ``share_of_plateau``.

    Chapter: *Architecture of the GA100*, "The 40 MiB L2, and why it matters".
    """
    size = check.bounded_int("size_bytes", size_bytes, 1, 2**50, why="a working set of at most a petabyte")
    rows = l2_sweep(gpu)
    mib = size / 2**20
    point = next((r for r in rows if r["footprint_mib"] >= mib), rows[-1])
    plateau = l2_summary(gpu)["plateau_gb_per_s"]
    return {"size_mib": mib, "footprint_mib": point["footprint_mib"], "read_gb_per_s": point["read_gb_per_s"],
            "share_of_plateau": point["read_gb_per_s"] / plateau}
