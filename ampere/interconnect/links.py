"""The links as data and the published records the chapter compares with: :func:`link_table`,
:func:`alpha_beta_rows`, :func:`nvlink_cascade` (600 -> 230 GB/s), :func:`published`.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), sections "The links", "Collectives and
their cost" and "Why 230 GB/s, not 600". Every GPU figure is read from :mod:`ampere.specs`, every published
figure from ``ampere/data/published``. Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

from typing import Any

from .. import check, collectives, results, specs
from ..collectives import OPS, alpha_beta_terms, busbw_factor
from ..fabrics import NVLINK_PAYLOAD_EFFICIENCY, nvlink_bytes_per_s_per_direction, nvlink_effective_bytes_per_s


def published(record_id: str) -> "results.Record":
    """One published record the chapter compares with (``ampere/data/published/collectives.json`` and
    ``training-throughput.json``), by id. Calibration inputs are kept apart from these validation targets:
    the model never reads them. Chapter: *NVLink, NVSwitch and collectives*, "Why 230 GB/s, not 600".
    """
    from .. import results

    rows = {r.id: r for r in results.records(kind="published")
            if r.benchmark in ("all-reduce", "training-throughput")}
    check.one_of("record_id", record_id, sorted(rows))
    return rows[record_id]


#: Ids of the published records the chapter's text and claims use.
A100_8GPU_BUSBW = "nccltests175-a100-8gpu-all-reduce"
A100_8GPU_BUSBW_EXPECTED = "nccltests149-a100-8gpu-expected"
MEGATRON_32 = "megatron-table1-1.7b-32gpu"
MEGATRON_3072 = "megatron-table1-1t-3072gpu"


def link_table() -> list[dict[str, Any]]:
    """NVLink generations (V100, A100, H100) and PCIe x16 generations 3-5, per direction and bidirectional.

    Chapter: *NVLink, NVSwitch and collectives*, section "The links". GB/s = 1e9 B/s; every figure is
    read from ``ampere.specs``.
    """
    from .. import views

    rows = []
    for name in ("V100-SXM2-32GB", "A100-SXM4-80GB", "H100-SXM5-80GB"):
        s = specs.get(name)
        per_dir = s.nvlink_bytes_per_s / 2
        rows.append({"link": f"NVLink {s.nvlink_generation} ({name.split('-')[0]})",
                     "lanes or links": f"{s.nvlink_links} links", "GB/s per link, per direction":
                     per_dir / s.nvlink_links / 1e9, "GB/s per direction": per_dir / 1e9,
                     "GB/s both directions": s.nvlink_bytes_per_s / 1e9,
                     "source": views.cite_label(s.source("nvlink_bytes_per_s"))})
    for gen in (3, 4, 5):
        per_dir = specs.pcie_bytes_per_s(gen, 16)
        gt_per_s = specs.pcie_bytes_per_s(gen, 1) * 8 * 130 / 128  # the lane's signalling rate
        rows.append({"link": f"PCIe Gen{gen} x16", "lanes or links": "16 lanes", "GB/s per link, per direction":
                     per_dir / 16 / 1e9, "GB/s per direction": per_dir / 1e9, "GB/s both directions":
                     2 * per_dir / 1e9, "source": f"{gt_per_s / 1e9:.0f} GT/s per lane, 128b/130b"})
    return rows


def alpha_beta_rows(n: int = 8) -> list[dict[str, str]]:
    """The coefficients ``(a, b)`` of ``t = a alpha + b S / B`` for every collective on ``n`` ranks, ring and
    tree, with the busbw factor (chapter section "Collectives and their cost")."""
    rows = []
    for op in OPS:
        ring = alpha_beta_terms(op, n, "ring")
        tree = alpha_beta_terms(op, n, "tree") if op in collectives.TREE_OPS else None
        rows.append({"collective": op, "ring: steps a": f"{ring[0]:.0f}", "ring: bytes b (x S)": f"{ring[1]:.3f}",
                     "tree: steps a": f"{tree[0]:.0f}" if tree else "ring only",
                     "tree: bytes b (x S)": f"{tree[1]:.3f}" if tree else "",
                     "busbw factor": f"{busbw_factor(op, n):.3f}"})
    return rows


def nvlink_cascade(gpu: str = "A100-SXM4-80GB") -> list[tuple[str, float]]:
    """From the datasheet's 600 GB/s to the ~230 GB/s of all-reduce busbw, step by step (bytes/s).

    Chapter: *NVLink, NVSwitch and collectives*, section "Why 230 GB/s, not 600".
    """
    s = specs.get(gpu)
    rec = published(A100_8GPU_BUSBW)
    measured = rec.figures["busbw_gb_per_s"] * 1e9
    return [("datasheet: both directions added", s.nvlink_bytes_per_s),
            (f"per direction: {s.nvlink_links} links x {s.nvlink_bytes_per_s / 2 / s.nvlink_links / 1e9:.0f} GB/s",
             nvlink_bytes_per_s_per_direction(s)),
            (f"payload of 128-byte packets (x {NVLINK_PAYLOAD_EFFICIENCY:.1f})", nvlink_effective_bytes_per_s(s)),
            ("all-reduce busbw measured on 8 GPUs (nccl-tests)", measured)]
