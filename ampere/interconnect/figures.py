"""The chapter's model figures: the 600 -> 230 GB/s cascade, busbw against size, the lab's fit, the
hierarchical all-reduce across nodes, data-parallel scaling.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb). matplotlib is imported inside the functions
that draw (``import ampere.interconnect`` stays free of it).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .. import fabrics
from ..collectives import all_reduce_time, bus_bandwidth, hierarchical_all_reduce_time, nccl_collective_time
from .fit import FIT_PERCENTILE
from .links import A100_8GPU_BUSBW, nvlink_cascade, published
from .measure import CollectiveRun
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

    from .. import plots, results

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
