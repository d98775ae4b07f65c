"""Published measurements the chapter reads from ``ampere/data`` (never typed here): the L2 read bandwidth
of a published working-set sweep, the on-chip SRAM bandwidth estimate, and the FlashAttention paper's pair of
standard and flash attention records (for the claims checked).

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "The hierarchy from a kernel's view",
"FlashAttention in Triton" and "Claims checked". Pure: no torch, no triton, no matplotlib.
"""

from __future__ import annotations

from typing import Any

from .. import specs


def published_l2_read(gpu: str | specs.GPUSpec) -> tuple[float, Any] | None:
    """(bytes/s, record): the best read bandwidth of a published L2 sweep of ``gpu`` over footprints up to
    half its L2, or None when none is published. Chapter: *Programming the A100's SM*, "The hierarchy"."""
    from .. import results

    spec = specs.get(gpu)
    for rec in results.records(benchmark="l2-sweep", gpu=spec.name, kind="published"):
        sizes, rates = rec.params.get("footprint_kib"), rec.figures.get("read_gb_per_s")
        if not isinstance(sizes, (list, tuple)) or not isinstance(rates, (list, tuple)):
            continue
        inside = [bw for kib, bw in zip(sizes, rates) if kib * 1024 <= spec.l2_bytes / 2]
        if inside:
            return max(inside) * 1e9, rec
    return None


def _sram_estimate(spec: specs.GPUSpec) -> str:
    """The published estimate of the on-chip SRAM bandwidth of ``spec``'s chip, or "not published"."""
    from .. import results, views

    for rec in results.records(benchmark="memory-hierarchy", kind="published"):
        if "sram_bandwidth_tb_per_s" in rec.figures and spec.name.startswith(rec.gpu + "-"):
            return (f"about {rec.figures['sram_bandwidth_tb_per_s']:g} TB/s over all SMs (an estimate quoted "
                    f"by {views.cite_label(rec.source)})")
    return "not published"


def published_attention() -> list[Any]:
    """The published attention records (standard first, then flash). Chapter: *Programming the A100's SM*,
    "FlashAttention in Triton"."""
    from .. import results

    recs = results.records(benchmark="attention", kind="published")
    return sorted(recs, key=lambda r: (r.params.get("algorithm") != "standard", r.id))


def published_flash_ratios() -> tuple[float, float] | None:
    """(time ratio, HBM traffic ratio) of standard over FlashAttention in the published record pair, or None.
    Chapter: *Programming the A100's SM*, "Claims checked"."""
    by = {r.params.get("algorithm"): r for r in published_attention()}
    if "standard" not in by or "flash" not in by:
        return None
    std, fl = by["standard"].figures, by["flash"].figures
    return std["fwd_bwd_time_ms"] / fl["fwd_bwd_time_ms"], std["hbm_traffic_gb"] / fl["hbm_traffic_gb"]
