"""Published figures the chapter reads from ``ampere/data`` (never typed here): the on-chip SRAM bandwidth
estimate of the FlashAttention paper, its pair of standard and flash attention records, and Triton's tutorial
figures for the grouped launch order. (The L2 read bandwidth of a published sweep is the HBM chapter's
``hbm.published_l2_plateau``: one rule for both chapters.)

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``), "The hierarchy from a kernel's view",
"FlashAttention in Triton" and "Claims checked". Pure: no torch, no triton, no matplotlib.
"""

from __future__ import annotations

from typing import Any

from .. import specs


def published_sram_estimate(gpu: str | specs.GPUSpec) -> tuple[float, Any] | None:
    """(bytes/s, record): the published estimate of the on-chip SRAM bandwidth of ``gpu``'s chip over all its
    SMs (the FlashAttention paper's "around 19TB/s" for the A100), or None. A check of
    :func:`~ampere.kernels.shared_memory_bandwidth`, never an input. Chapter: *Programming the A100's SM*,
    "The hierarchy from a kernel's point of view"."""
    from .. import results

    spec = specs.get(gpu)  # a catalogue name in any case, or a GPUSpec; TypeError naming gpu otherwise
    for rec in results.records(benchmark="memory-hierarchy", kind="published"):
        if "sram_bandwidth_tb_per_s" in rec.figures and spec.name.startswith(rec.gpu + "-"):
            return rec.figures["sram_bandwidth_tb_per_s"] * 1e12, rec
    return None


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


def published_grouping() -> list[Any]:
    """The published figures of Triton's matmul tutorial on the grouped launch order (records of benchmark
    ``matmul-grouping``). Chapter: *Programming the A100's SM*, "Launch order and L2 reuse"."""
    from .. import results

    return results.records(benchmark="matmul-grouping", kind="published")
