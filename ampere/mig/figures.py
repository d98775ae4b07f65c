"""Figures of the MIG chapter: one layout, many layouts, the census of layouts, the isolation study.

Chapter: *Multi-Instance GPU — one A100, seven tenants* (book/mig.ipynb), sections "Slices", "Every way to
cut an A100" and "Isolation, in a model". Draws with matplotlib, imported only inside the functions that
draw (through :mod:`ampere.plots`), so importing this module stays light.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .. import check, specs
from .geometry import (COMPUTE_SLICES, MEMORY_SLICES, _usages, format_layout, layout_rows, layouts_arg, placement,
                       table, usage)
from .sim import IsolationRow

__all__ = ["plot_layout", "plot_layouts", "plot_layout_census", "plot_isolation"]


# ---------------------------------------------------------------------------------------------------------
# Figures of layouts
# ---------------------------------------------------------------------------------------------------------

_PALETTE = ("#76b900", "#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#d62728", "#8c564b", "#e377c2")


def plot_layout(gpu: str | specs.GPUSpec, layout: Iterable[Any], ax: Any = None, title: str | None = None) -> Any:
    """Draw one layout: 8 memory slices above 7 compute slices, instances coloured, stranded slices hatched.

    Returns the matplotlib axes. Chapter: *Multi-Instance GPU*, figure "one layout".
    """
    from matplotlib.patches import Rectangle

    from .. import plots

    spec = specs.get(gpu)
    title = check.optional(check.string, "title", title, max_len=200)
    t = table(spec)
    u = usage(spec, layout)
    placed = [placement(spec, n, s) for n, s in u.layout]
    if ax is None:
        _, ax = plots.figure("full")
    mem_gib = spec.memory_bytes / MEMORY_SLICES / 2**30  # nominal: 1/8 of the physical capacity
    rows = (("memory", 1.25, MEMORY_SLICES, u.memory_owner, u.stranded_memory),
            ("compute", 0.0, COMPUTE_SLICES, u.compute_owner, u.stranded_compute))
    for label, y, n, owner, stranded in rows:
        w = MEMORY_SLICES / n  # compute slices are drawn wider so both rows span the same width
        for i in range(n):
            o = owner[i]
            if o is not None:
                face, hatch, edge = _PALETTE[o % len(_PALETTE)], None, "white"
            elif i in stranded:
                face, hatch, edge = "#dddddd", "///", "#999999"
            else:
                face, hatch, edge = "white", None, "#999999"
            ax.add_patch(Rectangle((i * w, y), w, 1.0, facecolor=face, edgecolor=edge, hatch=hatch, lw=1.2))
            sub = f"{mem_gib:.3g} GiB" if label == "memory" else (
                f"{t.sms_per_compute_slice} SMs" if t.sms_per_compute_slice else "GPC")
            ax.text(i * w + w / 2, y + 0.18, sub, ha="center", va="center", fontsize=8, color="#333333")
        ax.text(-0.15, y + 0.5, f"{label}\nslices", ha="right", va="center", fontsize=9)
    for k, p in enumerate(placed):
        for y, idx, n in ((1.25, p.memory, MEMORY_SLICES), (0.0, p.compute, COMPUTE_SLICES)):
            w = MEMORY_SLICES / n
            lo, hi = min(idx) * w, (max(idx) + 1) * w
            face = _PALETTE[k % len(_PALETTE)]
            ax.text((lo + hi) / 2, y + 0.6, p.name, ha="center", va="center", fontsize=8, color="white",
                    fontweight="bold", bbox={"facecolor": face, "edgecolor": "none", "pad": 2.0})
    ax.set_xlim(-1.6, MEMORY_SLICES + 0.05)
    ax.set_ylim(-0.1, 2.35)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for side in ("left", "bottom", "top", "right"):
        ax.spines[side].set_visible(False)
    sms = "" if u.sms_used is None else f"; {u.sms_used} of {u.total_sms} SMs in use"
    ax.set_title(title or f"{spec.name}: {format_layout(u.layout)}{sms}")
    plots.provenance_note(ax, f"model of {spec.name}; profiles and placements: MIG User Guide; hatched = stranded")
    return ax


def plot_layouts(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]], ax: Any = None,
                 profiles: Sequence[str] | None = None) -> Any:
    """All ``layouts`` as rows of instance bars on the memory-slice axis (a compact overview figure).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    from matplotlib.patches import Rectangle

    from .. import plots

    spec = specs.get(gpu)
    if ax is None:
        _, ax = plots.figure("tall")
    colour = {p.name: _PALETTE[i % len(_PALETTE)] for i, p in enumerate(table(spec).profiles)}
    layouts = layouts_arg(layouts)
    if not layouts:
        raise ValueError("layouts is empty: nothing to draw")
    n = len(layouts)
    for row, u in enumerate(_usages(spec, layouts, profiles)):
        y = n - 1 - row
        for name, s in u.layout:
            p = placement(spec, name, s)
            ax.add_patch(Rectangle((s + 0.04, y + 0.1), p.profile.memory_slices - 0.08, 0.8,
                                   facecolor=colour[name], edgecolor="white"))
        for i in u.stranded_memory:
            ax.add_patch(Rectangle((i + 0.04, y + 0.1), 0.92, 0.8, facecolor="#eeeeee", edgecolor="#bbbbbb",
                                   hatch="///"))
    used = [name for name in colour if any(name == n for lay in layouts for n, _ in lay)]
    handles = [Rectangle((0, 0), 1, 1, facecolor=colour[name]) for name in used]
    ax.legend(handles, used, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.set_xlim(0, MEMORY_SLICES)
    ax.set_ylim(0, n)
    ax.set_xticks([i + 0.5 for i in range(MEMORY_SLICES)], [str(i) for i in range(MEMORY_SLICES)])
    ax.set_yticks([])
    ax.grid(False)
    ax.set_xlabel("memory slice (placement start index)")
    ax.set_title(f"{spec.name}: {n} maximal layouts")
    plots.provenance_note(ax, f"model of {spec.name}; hatched = stranded memory slice")
    return ax


def plot_layout_census(gpu: str | specs.GPUSpec, layouts: Sequence[Iterable[Any]], ax: Any = None,
                       profiles: Sequence[str] | None = None) -> Any:
    """Maximal layouts counted by number of instances, stacked by SMs in use (how much each one strands).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    from .. import plots

    spec = specs.get(gpu)
    rows = layout_rows(spec, layouts, profiles)
    if any(r.sms is None for r in rows):
        raise ValueError(f"gpu={spec.name!r}: the table lacks SM counts; the census needs them")
    if ax is None:
        _, ax = plots.figure("full")
    levels = sorted({r.sms for r in rows}, reverse=True)
    xs = list(range(1, COMPUTE_SLICES + 1))
    bottom = [0] * len(xs)
    shades = ("#4f7c00", "#76b900", "#b8d97a", "#e0eec0", "#f4f9ea")
    for k, sms in enumerate(levels):
        counts = [sum(1 for r in rows if r.instances == x and r.sms == sms) for x in xs]
        ax.bar(xs, counts, bottom=bottom, color=shades[k % len(shades)], edgecolor="white",
               label=f"{sms} SMs in use")
        bottom = [b + c for b, c in zip(bottom, counts)]
    ax.set_ylim(0, 1.1 * max(bottom))  # headroom: the tallest stack must not touch the frame
    ax.set_xlabel("instances in the layout")
    ax.set_ylabel("maximal layouts")
    ax.set_title(f"{spec.name}: {len(rows)} maximal layouts by size and SMs in use")
    plots.legend_outside(ax)
    plots.provenance_note(ax, f"model of {spec.name}; enumerate_layouts()")
    return ax


def plot_isolation(rows: Sequence[IsolationRow], ax: Any = None) -> Any:
    """Grouped bars: victims' p99 latency per sharing mode, one bar per scenario (log scale).

    Chapter: *Multi-Instance GPU* (book/mig.ipynb).
    """
    from .. import plots

    def row(name: str, r: Any) -> IsolationRow:
        if not isinstance(r, IsolationRow):
            raise TypeError(f"{name} must be an IsolationRow (from isolation_study), got {r!r:.60} ({type(r).__name__})")
        return r

    rows = check.sequence("rows", rows, row, max_len=10**4)
    if ax is None:
        _, ax = plots.figure("wide")
    modes = list(dict.fromkeys(r.mode for r in rows))
    scen = list(dict.fromkeys(r.scenario for r in rows))
    colours = {"quiet": "#76b900", "hbm-bully": "#d62728", "pcie-bully": "#1f77b4"}
    width = 0.8 / len(scen)
    for k, sc in enumerate(scen):
        xs, ys = [], []
        for m_i, m in enumerate(modes):
            for r in rows:
                if r.mode == m and r.scenario == sc:
                    xs.append(m_i + (k - (len(scen) - 1) / 2) * width)
                    ys.append(r.victim_p99_ms)
        ax.bar(xs, ys, width=width * 0.95, label=sc, color=colours.get(sc, None))
    ax.set_xticks(range(len(modes)), modes)
    ax.set_yscale("log")
    from matplotlib.ticker import NullFormatter

    values = [r.victim_p99_ms for r in rows if r.victim_p99_ms == r.victim_p99_ms]
    ticks = [m * 10.0**e for e in range(-2, 5) for m in (1, 2, 5)
             if min(values) / 2 <= m * 10.0**e <= max(values) * 2]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("victims' p99 latency (ms, log)")
    ax.set_title("Six well-behaved tenants and a seventh: p99 latency by sharing mode")
    plots.legend_outside(ax)
    plots.provenance_note(ax, "model (discrete-event simulation, seeded); assumptions in the text")
    return ax


# ---------------------------------------------------------------------------------------------------------
# Real matmuls against the model of their instance
# ---------------------------------------------------------------------------------------------------------

_KIND_MARKER = {"measured": "o", "recorded": "s", "published": "^"}


def _plot_instance_ratios(ax: Any, points: Sequence[Any], labels: Sequence[str]) -> None:
    """One row per point: the real throughput over its instance's model (``p.real / p.model``) on a linear
    axis, a vertical line at 1 (the model), marker shape by provenance, colour by precision. Used by
    :func:`ampere.mig.views.show_instance`."""
    colours = {"fp16": "#76b900", "bf16": "#2ca02c", "tf32": "#1f77b4", "fp32": "#7f7f7f"}
    ys = list(range(len(points)))[::-1]
    seen: set[str] = set()
    for y, p, label in zip(ys, points, labels):
        prec = next((c for c in colours if c in p.what), "fp32")
        lab = None if p.kind in seen else {"measured": "measured here", "recorded": "recorded on a real GPU",
                                           "published": "published"}[p.kind]
        seen.add(p.kind)
        ax.plot([p.real / p.model], [y], marker=_KIND_MARKER[p.kind], color=colours[prec], ms=8, ls="none",
                label=lab)
    ax.axvline(1.0, color="#444444", lw=1, ls="--", label="model: SM share of the dense peak")
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=9)
    ax.set_ylim(-0.7, len(points) - 0.3)
    lo = min([p.real / p.model for p in points] + [1.0])
    hi = max([p.real / p.model for p in points] + [1.0])
    ax.set_xlim(max(0.0, lo - 0.1), hi + 0.1)
    ax.set_xlabel("real / model")
    ax.legend(loc="lower right", fontsize=8)


def _show_instance_figure(shown: Sequence[Any], labels: Sequence[str]) -> None:
    """The figure of :func:`ampere.mig.views.show_instance`: real over model, one row per instance."""
    import matplotlib.pyplot as plt

    from .. import plots

    fig, ax = plots.figure("full")
    fig.set_size_inches(fig.get_size_inches()[0], min(max(2.6, 0.36 * len(shown) + 1.4), 7.0))
    _plot_instance_ratios(ax, shown, labels)
    ax.set_title(f"Matmul in MIG instances of the {', '.join(dict.fromkeys(p.gpu for p in shown))}: "
                 "real over model", fontsize=10)
    fig.tight_layout()
    plt.show()
