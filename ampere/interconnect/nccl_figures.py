"""The chapter's figures about NCCL itself: what a tiny all-reduce costs, protocols, in-network reduction.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), sections "What a tiny all-reduce
costs", "Protocols and channels" and "Reducing inside the network". Published points come from
``ampere/data/published/collectives.json``; model curves from :mod:`.latency`, :mod:`.protocols` and
:mod:`.innetwork`. matplotlib is imported inside the functions that draw.
"""

from __future__ import annotations

from typing import Any

from .. import fabrics, results
from .innetwork import all_reduce_busbw_bound, sharp_all_reduce_busbw
from .latency import former_alpha_model_s, latency_checks, tiny_all_reduce_model_s
from .protocols import PROTOCOLS, protocol_time, switch_points

_A100 = "A100-SXM4-40GB"


def _rec(record_id: str) -> Any:
    return next(r for r in results.records(benchmark="all-reduce", kind="published") if r.id == record_id)


def show_latency() -> None:
    """Tiny all-reduce time against GPU count inside a node (left) and node count (right): the model
    (overhead + hops), the former model, the single-process launch bound, and the published logs."""
    import matplotlib.pyplot as plt

    from .. import plots

    fig, (ax, bx) = plots.figure("wide", 1, 2)
    green, grey = plots.gpu_color(_A100), "#888888"
    n = list(range(2, 9))
    ax.plot(n, [tiny_all_reduce_model_s(k) * 1e6 for k in n], color=green, label="model: overhead + hops")
    ax.plot(n, [tiny_all_reduce_model_s(k, launch="single-process") * 1e6 for k in n], color=green, linestyle=":",
            label="model, one process for all GPUs")
    ax.plot(n, [former_alpha_model_s(k) * 1e6 for k in n], color=grey, linestyle="--", label="former model, 2(n-1) alpha")
    style = {"derived from": dict(marker="o", markerfacecolor=green), "held out": dict(marker="^", markerfacecolor="white"),
             "other network": dict(marker="s", markerfacecolor="white"), "other GPU": dict(marker="D", markerfacecolor="white")}
    seen = set()
    for c in latency_checks():
        axis = ax if c.nodes == 1 else bx
        if c.nodes > 1 and c.role in ("other network",):
            continue
        colour = plots.gpu_color("H200") if c.role == "other GPU" else green
        label = f"published, {c.role}" if (c.role, axis is ax) not in seen else None
        seen.add((c.role, axis is ax))
        axis.plot(c.gpus if c.nodes == 1 else c.nodes, c.measured_s * 1e6, linestyle="none", markersize=7,
                  markeredgecolor=colour, label=label, **style[c.role])
    ax.set_xlabel("GPUs in one node")
    ax.set_ylabel("all-reduce of 8 bytes (µs)")
    ax.set_ylim(0, 80)
    ax.set_title("Inside a node (NVLink, NVSwitch)")
    ax.legend(fontsize=8, loc="upper left")
    nodes = [2, 4, 8, 16, 32, 64]
    bx.semilogx(nodes, [tiny_all_reduce_model_s(8 * k, k) * 1e6 for k in nodes], color=green,
                label="model: chain in node, tree across", base=2)
    bx.set_xlabel("nodes of 8 A100s (InfiniBand)")
    bx.set_xticks(nodes, [str(k) for k in nodes])
    bx.set_ylim(0, 100)
    bx.set_title("Across nodes")
    bx.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    plt.show()


def show_protocols(n: int = 8) -> None:
    """Time of a ring all-reduce on ``n`` A100s by protocol (NCCL's own model) against size, the switch
    points, and the published ABCI 2.0 (one process per GPU) sweep."""
    import matplotlib.pyplot as plt
    import numpy as np

    from .. import plots

    fig, ax = plots.figure("full")
    sizes = np.logspace(0, 9, 73)
    colours = {"LL": "#1f77b4", "LL128": "#ff7f0e", "Simple": "#6a3d9a"}
    for p in PROTOCOLS:
        ax.loglog(sizes, [protocol_time(s, n, p) * 1e6 for s in sizes], color=colours[p], label=f"model, {p}")
    best = [min(protocol_time(s, n, p) for p in PROTOCOLS) * 1e6 for s in sizes]
    ax.loglog(sizes, best, color="#222222", linewidth=3, alpha=0.25, label="fastest protocol")
    for a, b, s in switch_points(n):
        ax.axvline(s, color="#999999", linewidth=0.8, linestyle=":")
        ax.annotate(f"{a} → {b}", (s, 3), rotation=90, fontsize=8, color="#555555", ha="right", va="bottom")
    rec = _rec(fabrics.LATENCY_RECORDS["intra_8"])
    ax.loglog(rec.figures["sweep_size_bytes"], rec.figures["sweep_time_us"], color=plots.gpu_color(_A100),
              **plots.PROVENANCE["published"], label="published: 8 A100s, one process per GPU")
    oci = _rec("oci-bm-gpu4-8gpu-all-reduce-g8")
    ax.loglog(oci.figures["sweep_size_bytes"], oci.figures["sweep_time_us"], color=plots.gpu_color(_A100),
              linestyle="none", marker="v", markersize=6, markerfacecolor="white",
              label="published: 8 A100s, one process for all (-g 8)")
    ax.set_xlabel("all-reduce size per GPU (bytes)")
    ax.set_ylabel("time (µs)")
    ax.set_ylim(2, 3e4)
    ax.set_title(f"All-reduce on {n} A100s by protocol: NCCL's cost model and a published sweep")
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    plt.show()


def show_in_network() -> None:
    """Left: all-reduce busbw ceiling of 8 Hopper GPUs without and with NVLink SHARP, with the published
    points. Right: DGX A100 nodes, rail rings against SHARP in the InfiniBand switches (model)."""
    import matplotlib.pyplot as plt

    from .. import plots

    fig, (ax, bx) = plots.figure("wide", 1, 2)
    h100 = fabrics.DGX_H100
    purple = plots.gpu_color("H100")
    ns = [2, 4, 8]
    ring = [all_reduce_busbw_bound(k, h100.intra_bytes_per_s, False) / 1e9 for k in ns]
    nvls = [all_reduce_busbw_bound(k, h100.intra_bytes_per_s, True) / 1e9 for k in ns]
    ax.plot(ns, ring, color=purple, linestyle="--", marker=".", label="model: ring, B = 360 GB/s")
    ax.plot(ns, nvls, color=purple, marker=".", label="model: reduced in the switch, 2(n-1)/n B")
    for rid, fig_name, label in (("nccltests212-h100-8gpu-expected", "ring_busbw_gb_per_s", "published: ring, 8 H100"),
                                 ("nccltests212-h100-8gpu-expected", "busbw_gb_per_s", "published: NVLS, 8 H100"),
                                 ("nccltests272-h200-8gpu-all-reduce", "busbw_gb_per_s", "published: NVLS, 8 H200")):
        rec = _rec(rid)
        ax.plot(8, rec.figures[fig_name], color=plots.gpu_color(rec.gpu), linestyle="none",
                marker="^" if "ring" in fig_name else "v", markersize=8, label=label)
    ax.set_xlabel("GPUs in one node")
    ax.set_ylabel("all-reduce busbw (GB/s)")
    ax.set_xticks(ns)
    ax.set_ylim(0, 700)
    ax.set_title("NVLink SHARP (third-generation NVSwitch)")
    ax.legend(fontsize=8, loc="upper left")
    nodes = [2, 4, 8, 16, 32, 64, 128]
    green = plots.gpu_color("A100-SXM4-80GB")
    bx.semilogx(nodes, [sharp_all_reduce_busbw(k, in_network=False) / 1e9 for k in nodes], color=green,
                linestyle="--", marker=".", label="model: rail rings", base=2)
    bx.semilogx(nodes, [sharp_all_reduce_busbw(k) / 1e9 for k in nodes], color=green, marker=".",
                label="model: SHARP in the IB switches", base=2)
    bx.axhline(fabrics.DGX_A100.intra_bytes_per_s / 1e9, color="#999999", linewidth=0.8,
               label="effective NVLink of one A100, 240 GB/s")
    bx.set_xticks(nodes, [str(k) for k in nodes])
    bx.set_ylim(0, 320)
    bx.set_xlabel("DGX A100 nodes")
    bx.set_title("SHARP on InfiniBand (DGX A100, model)")
    bx.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    plt.show()
