"""The chapter's figures: the fabric drawn, switch counts, HPL against the FP64 peak, the pod all-reduce,
renting against owning.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb). matplotlib is
imported inside the functions that draw (``import ampere.cluster`` stays free of it); :func:`hpl_points` and
:func:`show_hpl` show the model beside the published numbers through :mod:`ampere.views`.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .. import pricing, results
from .allreduce import GRADIENT_MODELS, all_reduce_scaling
from .costs import Ownership, break_even, cloud_offers, ownership_usd_per_gpu_hour
from .fabric import Fabric, fat_tree, three_level_max_nodes, two_level_max_nodes
from .node import dgx_a100
from .pod import scaling_table
from .references import reference_counts, reference_designs
from .rows import _label


def plot_topology(ax: Any, fabric: Fabric) -> None:
    """Draw ``fabric`` (nodes at the bottom, then leaves, spines, cores); node cables coloured by rail,
    switch-to-switch bundles drawn once with their cable count. Chapter section "The SuperPOD fabric".
    Meant for one or two SUs; larger fabrics are refused (``ValueError``)."""
    if not isinstance(fabric, Fabric):
        raise TypeError(f"fabric must be an ampere.cluster.Fabric (from fat_tree), got {fabric!r:.60}")
    if fabric.nodes > 40:
        raise ValueError(f"fabric.nodes={fabric.nodes} is too many to draw; allowed: at most 40")
    import matplotlib.pyplot as plt

    rail_colors = plt.get_cmap("tab10")
    levels = {"node": fabric.nodes, "leaf": fabric.leaf_switches, "spine": fabric.spine_switches,
              "core": fabric.core_switches}
    y = {"node": 0.0, "leaf": 1.0, "spine": 2.0, "core": 3.0}

    def x(tier: str, i: int) -> float:
        n = levels[tier]
        return (i + 0.5) / n

    def parse(name: str) -> tuple[str, int, int]:
        tier = "".join(ch for ch in name.split(".")[0] if ch.isalpha())
        body = name[len(tier):]
        idx, _, rail = body.partition(".")
        return tier, int(idx), int(rail) if rail else -1

    for low, high, n in fabric.wiring():
        lt, li, rail = parse(low)
        ht, hi, _ = parse(high)
        if lt == "node":
            ax.plot([x(lt, li), x(ht, hi)], [y[lt] + 0.04, y[ht] - 0.04], color=rail_colors(rail % 10),
                    lw=0.5, alpha=0.8)
        else:
            ax.plot([x(lt, li), x(ht, hi)], [y[lt] + 0.04, y[ht] - 0.04], color="#555555", lw=0.4 + 0.25 * n,
                    alpha=0.5)
    for tier, n in levels.items():
        if n == 0:
            continue
        xs = [x(tier, i) for i in range(n)]
        marker, size = ("s", 18) if tier == "node" else ("D", 30)
        ax.scatter(xs, [y[tier]] * n, marker=marker, s=size, color="#222222" if tier == "node" else "#76b900",
                   zorder=3)
        label = {"node": "nodes", "leaf": "leaves", "spine": "spines", "core": "cores"}[tier] if n > 1 else tier
        ax.annotate(f"{n} {label}", xy=(1.01, y[tier]), xycoords=("axes fraction", "data"),
                    va="center", fontsize=11)
    # the rail legend: each leaf of the first SU is named after its rail, in the rail's colour
    leaf_rails: dict[int, int] = {}
    for low, high, _ in fabric.wiring():
        lt, _, rail = parse(low)
        ht, hi, _ = parse(high)
        if lt == "node" and ht == "leaf":
            leaf_rails.setdefault(hi, rail)
    for i, rail in sorted(leaf_rails.items())[:fabric.rails]:
        ax.annotate(f"r{rail + 1}", xy=(x("leaf", i), y["leaf"] + 0.1),
                    ha="center", va="bottom", fontsize=10, color=rail_colors(rail % 10), fontweight="bold")
    ax.set_ylim(-0.3, 3.3 if fabric.core_switches else 2.3)
    ax.set_xlim(0, 1)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)


def show_topology() -> None:
    """One SU (20 nodes, 8 rails, 40-port switches) and a scaled-down three-level tree (section "The
    SuperPOD fabric")."""
    import matplotlib.pyplot as plt

    from .. import plots

    fig, axes = plots.figure("wide", 1, 2, gridspec_kw={"width_ratios": [1.6, 1]})
    plot_topology(axes[0], fat_tree(20))
    axes[0].set_title("one SU: 20 DGX A100, 8 rails r1-r8 (colours)", fontsize=12)
    plot_topology(axes[1], fat_tree(8, rails=2, su_nodes=2, switch_ports=4))
    axes[1].set_title("three levels, scaled down: 4-port switches", fontsize=12)
    fig.tight_layout()
    plt.show()


def show_switch_counts(node_counts: Iterable[int] = range(20, 2001, 20)) -> None:
    """Stacked leaf/spine/core switch counts and the counting lower bound, 20 to 2,000 DGX A100 (section
    "From 20 to 2,000 nodes")."""
    import matplotlib.pyplot as plt

    from .. import plots

    counts = scaling_table(node_counts)
    fig, ax = plots.figure("full")
    xs = [r["nodes"] for r in counts]
    step = min(b - a for a, b in zip(xs, xs[1:])) if len(xs) > 1 else 20
    leaf, spine, core = ([r[k] for r in counts] for k in ("leaf", "spine", "core"))
    ax.bar(xs, leaf, width=0.8 * step, color="#9ccc3d", label="leaf")
    ax.bar(xs, spine, width=0.8 * step, bottom=leaf, color="#5a8f00", label="spine")
    ax.bar(xs, core, width=0.8 * step, bottom=[a + b for a, b in zip(leaf, spine)], color="#2f4a00", label="core")
    ax.plot(xs, [r["lower_bound"] for r in counts], color="#222222", ls="none", marker="_", markersize=5,
            markeredgewidth=1.5, label="counting lower bound")
    ax.axvline(two_level_max_nodes() + step / 2, color="#888888", ls=":", lw=1)
    ax.annotate("3 levels", xy=(two_level_max_nodes() + step, max(r["switches"] for r in counts) * 0.55),
                fontsize=8, color="#555555")
    ax.set_xlabel("DGX A100 nodes (SUs of 20)")
    ax.set_ylabel("40-port HDR switches")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    plt.show()


def _geometric_sus(max_su: int, points: int = 40) -> list[int]:
    sus = {1, max_su}
    for i in range(points):
        sus.add(max(1, round(max_su ** (i / (points - 1)))))
    return sorted(sus)


def show_designs(max_gpus: int = 100_000) -> None:
    """Switches per 1,000 GPUs of each reference design (model, lines) against its published component
    table (markers), from one SU to the three-level limit or ``max_gpus`` (section "Four generations")."""
    import matplotlib.pyplot as plt

    from .. import plots

    colors = {"dgx-a100": plots.gpu_color("A100-SXM4-80GB"), "dgx-h100": plots.gpu_color("H100-SXM5-80GB"),
              "dgx-b200": "#1f77b4", "dgx-b300-xdr": "#e31a1c"}
    dashes = {"dgx-h100": (0, (4, 2))}  # H100 and B200 share their parameters: the dashed line lies on the solid
    fig, ax = plots.figure("full")
    for d in reference_designs():
        lim = three_level_max_nodes(d.rails, d.su_nodes, d.switch_ports) // d.su_nodes
        max_su = max(1, min(lim, max_gpus // (d.su_nodes * d.gpus_per_node)))
        gpus, per_k = [], []
        for su in _geometric_sus(max_su):
            f = d.fabric(su * d.su_nodes)
            gpus.append(f.end_ports)
            per_k.append(1000 * f.switches / f.end_ports)
        color = colors.get(d.id, "#555555")
        ax.plot(gpus, per_k, color=color, lw=1.6, ls=dashes.get(d.id, "-"),
                label=f"{d.system} ({d.switch_ports}-port), model")
        pub = [r for r in reference_counts(d.id)]
        if pub:
            ax.plot([r.nodes * d.gpus_per_node for r in pub],
                    [1000 * (r.leaf_switches + r.spine_switches + (r.core_switches or 0)) / (r.nodes * d.gpus_per_node)
                     for r in pub], color=color, **plots.PROVENANCE["published"],
                    label=f"{d.system}, published table")
    ax.set_xscale("log")
    ax.set_xlabel("GPUs (one compute port each)")
    ax.set_ylabel("switches per 1,000 GPUs")
    ax.set_ylim(bottom=0)
    plots.legend_outside(ax, fontsize=8)
    fig.tight_layout()
    plt.show()


def hpl_points() -> list[Any]:
    """HPL Rmax beside the model's FP64 tensor-core peak of the same GPUs (section "Selene on the TOP500")."""
    from .. import views

    points = []
    for r in results.records(benchmark="hpl", kind="published"):
        nodes = r.params.get("nodes")
        if not nodes:
            continue
        model = nodes * dgx_a100("A100-SXM4-80GB").peak_flops("fp64_tc") / 1e15
        points.append(views.point(r, "rmax_pflop_per_s", f"HPL Rmax, {r.params['list']}, {nodes} nodes", model,
                                  "PFLOP/s"))
    return points


def show_hpl() -> None:
    """Selene's HPL results beside the FP64 tensor-core peak of its GPUs: figure and table."""
    from .. import views

    views.show(hpl_points(), title="Selene: HPL Rmax against the GPUs' FP64 tensor-core peak",
               model_label="GPU FP64 peak", real_label="Rmax")


def show_pod_all_reduce(node_counts: Sequence[int] = (1, 2, 4, 8, 20, 40, 80, 140, 280, 560)) -> None:
    """All-reduce time of three models' FP16 gradients vs nodes as NCCL runs it, rail-aligned rings and tree,
    with the phases-in-turn upper bound of the largest (section "All-reduce across the pod")."""
    import matplotlib.pyplot as plt

    from .. import plots

    fig, ax = plots.figure("full")
    for (name, params, key), color in zip(GRADIENT_MODELS, ["#1f77b4", "#76b900", "#6a3d9a"]):
        for algo, ls in (("ring", "-"), ("tree", "--")):
            rows = all_reduce_scaling(node_counts, models=[(name, params, key)], inter_algorithm=algo)
            ax.plot(node_counts, [1e3 * r["total_s"] for r in rows], color=color, ls=ls,
                    label=f"{name} ({2 * params / 1e9:.2f} GB), {algo}")
    name, params, key = GRADIENT_MODELS[-1]
    rows = all_reduce_scaling(node_counts, models=[(name, params, key)])
    ax.plot(node_counts, [1e3 * r["serial_s"] for r in rows], color="0.45", ls=":", lw=2,
            label=f"{name}, phases in turn (upper bound)")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))  # 0.5, 1, 2, 5, 10 ... ms
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("DGX A100 nodes (8 GPUs each)")
    ax.set_ylabel("all-reduce time (ms)")
    plots.legend_outside(ax, fontsize=8)
    fig.tight_layout()
    plt.show()


def show_ownership(own: Ownership = Ownership()) -> list[dict[str, str]]:
    """Cost of a busy GPU-hour on an owned DGX vs utilisation, with the 2023 cloud offers; returns the
    break-even rows (section "Renting or owning")."""
    import matplotlib.pyplot as plt

    from .. import plots

    us = [u / 100 for u in range(5, 101)]
    fig, ax = plots.figure("full")
    ax.plot([100 * u for u in us], [ownership_usd_per_gpu_hour(own, u) for u in us], color="#76b900", lw=2,
            label="own a DGX A100 (assumptions in the text)")
    rows = []
    by_price: dict[float, list[pricing.PriceQuote]] = {}  # offers at the same price share one line
    for offer in cloud_offers():
        by_price.setdefault(round(offer.usd_per_gpu_hour, 2), []).append(offer)
        rows.append({"offer": f"{offer.provider} {offer.instance}", "USD per GPU-hour": f"{offer.usd_per_gpu_hour:.2f}",
                     "break-even": break_even(offer.usd_per_gpu_hour, own).verdict,
                     "source": f"{_label(offer.source)}, price table"})
    styles = [("#e47911", "--"), ("#4285f4", ":"), ("#0078d4", "-."), ("#ff9900", (0, (5, 2, 1, 2)))]
    for (price, offers), (color, ls) in zip(sorted(by_price.items(), reverse=True), styles):
        names = " and ".join(f"{o.provider} {o.instance}" for o in offers)
        ax.axhline(price, color=color, lw=1.2, ls=ls, label=f"{names} ({offers[0].date}): {price:.2f}")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 12)  # a linear price axis; at low utilisation the ownership curve leaves the top
    ax.set_xlabel("utilisation of the owned DGX (%)")
    ax.set_ylabel("USD per busy GPU-hour")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    plt.show()
    return rows
