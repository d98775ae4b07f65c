"""The chapter's figures: the 600 -> 230 GB/s cascade, busbw against size, the lab's fit, all-reduce across
nodes, data-parallel scaling, and NCCL itself: what a tiny all-reduce costs (:func:`show_latency`),
protocols (:func:`show_protocols`), in-network reduction (:func:`show_in_network`).

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb). matplotlib is imported inside the functions
that draw (``import ampere.interconnect`` stays free of it).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .. import fabrics, results
from ..collectives import all_reduce_time, bus_bandwidth, hierarchical_all_reduce_time, nccl_collective_time
from .fit import FIT_PERCENTILE
from .innetwork import all_reduce_busbw_bound, sharp_all_reduce_busbw
from .latency import former_alpha_model_s, latency_checks, tiny_all_reduce_model_s
from .links import A100_8GPU_BUSBW, nvlink_cascade, published
from .measure import CollectiveRun
from .protocols import PROTOCOLS, protocol_time, switch_points
from .scaling import BERT_GLOBAL_BATCH_TOKENS, BERT_LARGE_PARAMS, data_parallel_step, systems


def show_cascade(gpu: str = "A100-SXM4-80GB") -> None:
    """The bar chart of :func:`nvlink_cascade` (chapter section "Why 230 GB/s, not 600")."""
    import matplotlib.pyplot as plt

    from .. import plots

    cascade = nvlink_cascade(gpu)
    fig, ax = plots.figure("full")
    labels = [c[0] for c in cascade][::-1]
    values = [c[1] / 1e9 for c in cascade][::-1]
    colors = ["#bbbbbb"] + [plots.gpu_color(gpu)] * (len(values) - 1)
    ax.barh(labels, values, color=colors)
    for y, v in enumerate(values):
        ax.annotate(f"{v:.0f} GB/s", (v, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=9)
    ax.tick_params(labelsize=9)
    ax.set_xlabel("GB/s")
    ax.set_xlim(0, 1.2 * max(values))
    ax.set_title(f"One {gpu.split('-')[0]}'s NVLink bandwidth, from the datasheet to NCCL's all-reduce")
    fig.tight_layout()
    plt.show()


def show_busbw_vs_size(gpu: str = "A100-SXM4-80GB", n: int = 8) -> None:
    """Model busbw of an all-reduce on ``n`` GPUs of one node against size -- NCCL's ring and its tree, which
    inside a node is a chain -- with the published sweeps and peak (chapter section "Why 230 GB/s, not 600").
    """
    import matplotlib.pyplot as plt
    import numpy as np

    from .. import plots

    net = fabrics.node_network(gpu, gpus_per_node=n)
    sizes = np.logspace(3, 10, 57)
    fig, ax = plots.figure("full")
    colour = plots.gpu_color(gpu)
    for algorithm, style, label in (("ring", "-", "model, ring"), ("tree", "--", "model, tree (a chain in one node)")):
        bus = [bus_bandwidth("all_reduce", s / nccl_collective_time("all_reduce", s, n, net, algorithm), n) / 1e9
               for s in sizes]
        ax.semilogx(sizes, bus, style, color=colour, label=label)
    recs = {r.id: r for r in results.records(benchmark="all-reduce", kind="published")}
    for rid, marker, face, label in (("abci2-a100-8gpu-all-reduce", "^", None, "published: one process per GPU"),
                                     ("oci-bm-gpu4-8gpu-all-reduce-g8", "v", "white", "published: one process, -g 8")):
        f = recs[rid].figures
        ax.semilogx(f["sweep_size_bytes"], f["sweep_busbw_gb_per_s"], linestyle="none", marker=marker, markersize=6,
                    color=colour, markerfacecolor=face or colour, label=label)
    B = net.intra_bytes_per_s
    ax.axhline(B / 1e9, color="#999999", lw=0.8, label=f"B = {B / 1e9:.0f} GB/s (effective NVLink)")
    peak = published(A100_8GPU_BUSBW).figures["busbw_gb_per_s"]
    ax.axhline(peak, color="#555555", lw=1, linestyle=":", label=f"published peak, 8 A100s: {peak:.0f} GB/s")
    ax.set_xlabel("all-reduce size per GPU (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_xlim(1e3, 1e10)
    ax.set_title(f"All-reduce on {n} {gpu.split('-')[0]}s over NVSwitch: bus bandwidth vs size")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    plt.show()


def show_lab_fit(run: CollectiveRun, hold: Mapping[str, Any]) -> None:
    """The lab's measurements with the alpha-beta fit and the held-out sizes (section "Fitting the model")."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    from .. import plots

    fit = hold["fit"]
    p10 = run.quantile_s(FIT_PERCENTILE)
    fig, ax = plots.figure("full")
    colour = plots.gpu_color("CPU")
    ax.loglog(run.sizes_bytes, [t * 1e6 for t in run.times_s], color=colour, marker="o", linestyle="none",
              markerfacecolor="none", label="measured, median")
    train = sorted(set(run.sizes_bytes) - set(hold["sizes_bytes"]))
    ax.loglog(train, [p10[run.sizes_bytes.index(s)] * 1e6 for s in train], color=colour,
              **plots.PROVENANCE["measured"], label=f"measured, p{FIT_PERCENTILE} (fitted)")
    ax.loglog(hold["sizes_bytes"], [m * 1e6 for m in hold["measured_s"]], color="#d62728",
              **plots.PROVENANCE["measured"], label=f"measured, p{FIT_PERCENTILE} (held out)")
    grid = np.logspace(np.log10(run.sizes_bytes[0]), np.log10(run.sizes_bytes[-1]), 50)
    ax.loglog(grid, [t * 1e6 for t in fit.predict(grid)], color="#555555", label="alpha-beta fit")
    ax.set_xlabel("all-reduce size per rank (bytes)")
    ax.set_ylabel("time per all-reduce (µs)")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))  # 100, 200, 500, 1000 ... µs
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_title(f"gloo all-reduce on {run.world_size} CPU processes: measurement and fit")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    plt.show()


def show_hierarchical(size_bytes: float = 2 * BERT_LARGE_PARAMS,
                      node_counts: Sequence[int] = tuple(2**k for k in range(11))) -> None:
    """All-reduce time against DGX A100 nodes as NCCL runs it (rail-aligned ring, or tree across nodes),
    and the hierarchical algorithm whose phases run one after the other, for a gradient of ``size_bytes``
    and for 1 MiB (section "Across nodes")."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    from .. import plots

    dgx = fabrics.DGX_A100
    colour = plots.gpu_color("A100-SXM4-80GB")
    fig, axes = plots.figure("wide", 1, 2)
    for size, ax, title in ((size_bytes, axes[0], f"{size_bytes / 1e6:.0f} MB per GPU"), (2**20, axes[1], "1 MiB")):
        for algorithm, style in (("ring", "-"), ("tree", "--")):
            ax.semilogx(node_counts, [all_reduce_time(size, 8 * N, dgx, algorithm) * 1e3 for N in node_counts],
                        style, marker=".", color=colour, label=f"NCCL {algorithm}")
        ax.semilogx(node_counts, [hierarchical_all_reduce_time(size, N, overhead_s=dgx.inter_overhead_s) * 1e3
                                  for N in node_counts], ":", color="#777777", label="hierarchical, phases in turn")
        ax.set_xlabel("DGX A100 nodes (8 GPUs each)")
        ax.set_title(title)
    axes[0].set_ylabel("all-reduce time (ms)")
    axes[0].set_ylim(bottom=0)
    axes[1].set_yscale("log")
    axes[1].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))  # 0.1, 1, 10 ms
    axes[1].legend(fontsize=9)  # a wide figure is shown narrower than it is drawn: 9 pt reads as about 8
    fig.tight_layout()
    plt.show()


def show_scaling(gpu_counts: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256)) -> None:
    """Data-parallel efficiency of BERT-Large on the three systems, strong and weak scaling (section
    "Why this decides data-parallel scaling")."""
    import matplotlib.pyplot as plt

    from .. import plots

    strong = {"global_tokens": BERT_GLOBAL_BATCH_TOKENS}
    gpus = list(gpu_counts)
    fig, axes = plots.figure("wide", 1, 2, sharey=True)
    for name, s in systems().items():
        color = plots.gpu_color(s.gpu)
        style = "--" if "PCIe" in name else "-"
        axes[0].semilogx(gpus, [data_parallel_step(s, g, **strong).efficiency for g in gpus], style, marker=".",
                         color=color, label=name)
        weak = gpus + [1024, 3072]
        axes[1].semilogx(weak, [data_parallel_step(s, g, tokens_per_gpu=4096).efficiency for g in weak], style,
                         marker=".", color=color)
    axes[0].set_title("strong scaling: 128k tokens per step")
    axes[1].set_title("weak scaling: 4096 tokens per GPU")
    axes[0].set_ylabel("data-parallel efficiency")
    for ax in axes:
        ax.set_xlabel("GPUs")
        ax.axhline(0.5, color="#999999", lw=0.8)
    axes[0].legend(loc="lower left", fontsize=9)  # a wide figure is shown narrower than it is drawn
    fig.tight_layout()
    plt.show()


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
    ax.legend(fontsize=8, loc="lower right")
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
