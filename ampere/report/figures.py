"""The report's figures: % of the model per measured figure, the model of catalogue GPUs, recorded
figures of every GPU (each as ``draw_*`` on given axes and as a standalone Figure for the HTML report,
PNG-encoded), and the chapter's reference figure and table (:func:`show_references`).

Heavy: matplotlib is imported only inside the functions that draw. Chapter: *The reference check*
(book/reference-check.ipynb).
"""

from __future__ import annotations

import base64
import io
import statistics
from typing import Any, Sequence

from .. import check, specs
from .arguments import mapping_list
from .references import REFERENCE_GPUS, reference_points


def _ax(name: str, ax: Any, method: str) -> Any:
    from .. import plots

    return plots.axes(name, ax, method)


def _comparisons(name: str, rows: Any) -> list[dict[str, Any]]:
    """Rows of :func:`ampere.report.compare` (what the drawing reads of them)."""
    rows = mapping_list(name, rows, ("label", "pct_of_model", "flag", "reference", "model"))
    for i, r in enumerate(rows):
        for k in ("pct_of_model", "reference", "model"):
            if r[k] is not None:
                r[k] = check.finite(f"{name}[{i}][{k!r}]", r[k])
        check.boolean(f"{name}[{i}]['flag']", r["flag"])
    return rows

def _png_base64(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _agg_figure(size: str = "wide") -> Any:
    """A matplotlib Figure outside pyplot (no global state): safe from scripts and notebooks alike."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from .. import plots

    fig = Figure(figsize=plots.SIZES[size])
    FigureCanvasAgg(fig)
    return fig


def draw_comparison(ax: Any, comparisons: Sequence[dict[str, Any]], title: str = "") -> None:
    """Horizontal bars: % of the model per measured figure (red when flagged), the reference as a square.
    ``comparisons`` are :func:`ampere.report.compare`'s rows. Chapter: *The reference check*."""
    ax = _ax("ax", ax, "barh")
    comparisons = _comparisons("comparisons", comparisons)
    title = check.string("title", title, allow_empty=True, max_len=200)
    rows = [c for c in comparisons if c["pct_of_model"] is not None]
    if not rows:
        ax.text(0.5, 0.5, "no measured figure has a model value", ha="center", va="center")
        ax.set_axis_off()
        return
    y = list(range(len(rows)))
    ax.barh(y, [c["pct_of_model"] for c in rows], color=["#c62828" if c["flag"] else "#76b900" for c in rows])
    labelled = False
    for i, c in enumerate(rows):
        if c["reference"] and c["model"]:
            ax.plot([100 * c["reference"] / c["model"]], [i], marker="s", markerfacecolor="none", color="black",
                    markersize=7, linestyle="none", label=None if labelled else "recorded reference (same GPU)")
            labelled = True
    ax.set_yticks(y, [c["label"] for c in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("% of the model (datasheet peak or model bound)")
    ax.axvline(100, color="#666", lw=0.8, linestyle=":")
    if title:
        ax.set_title(title, fontsize=10)
    if labelled:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=7)


def draw_model(axes: Sequence[Any], gpus: Sequence[str]) -> None:
    """Two panels: dense BF16 (or FP16) tensor peak and DRAM bandwidth of ``gpus``, from ``ampere.specs``.
    ``axes`` is a pair of matplotlib Axes. Chapter: *The reference check*."""
    from .. import plots

    pair = check.sequence("axes", axes, min_len=2, max_len=2)
    ax1, ax2 = (_ax(f"axes[{i}]", a, "barh") for i, a in enumerate(pair))
    gpus = check.gpus("gpus", gpus, max_len=len(specs.names()))
    names = [specs.get(g).name for g in gpus]
    peaks = [specs.get(g).peak_flops("bf16" if specs.get(g).supports("bf16") else "fp16") / 1e12 for g in gpus]
    colors = [plots.gpu_color(n) for n in names]
    ax1.barh(names, peaks, color=colors)
    ax1.set_xlabel("dense BF16/FP16 tensor peak (TFLOP/s)")
    ax2.barh(names, [specs.get(g).hbm_bytes_per_s / 1e9 for g in gpus], color=colors)
    ax2.set_xlabel("DRAM bandwidth (GB/s)")
    ax2.set_yticks(range(len(names)), [""] * len(names))
    for ax in (ax1, ax2):
        ax.invert_yaxis()
        ax.tick_params(labelsize=7)


def draw_recorded(ax: Any, recorded: Sequence[dict[str, Any]], keys: Sequence[str] | None = None) -> None:
    """Recorded figures of every GPU as % of each GPU's own model: one group of bars per figure key.

    Only figures with a model value are drawn (``keys`` restricts them). The median of several records of
    the same GPU and key is drawn. ``recorded`` are :func:`ampere.report.recorded_figures`'s figures.
    """
    from .. import plots
    from .arguments import figure_list

    ax = _ax("ax", ax, "bar")
    recorded = figure_list("recorded", recorded, recorded=True)
    for i, r in enumerate(recorded):
        check.string(f"recorded[{i}]['label']", r.get("label"))
    keys = check.optional(check.sequence, "keys", keys, check.string, min_len=0, max_len=100_000)
    cells: dict[tuple[str, str], list[float]] = {}
    labels: dict[str, str] = {}
    for r in recorded:
        if r.get("model") and (keys is None or r["key"] in keys):
            cells.setdefault((r["key"], r["gpu"]), []).append(100 * r["value"] / r["model"])
            labels[r["key"]] = r["label"]
    if not cells:
        ax.text(0.5, 0.5, "no recorded figure with a model value", ha="center", va="center")
        ax.set_axis_off()
        return
    figure_keys = sorted({k for k, _ in cells})
    gpus = sorted({g for _, g in cells})
    width = 0.8 / len(gpus)
    for j, g in enumerate(gpus):
        xs = [i + (j - (len(gpus) - 1) / 2) * width for i, k in enumerate(figure_keys) if (k, g) in cells]
        ys = [statistics.median(cells[(k, g)]) for k in figure_keys if (k, g) in cells]
        ax.bar(xs, ys, width=width, color=plots.gpu_color(g), label=g)
    ax.set_xticks(range(len(figure_keys)), [labels[k] for k in figure_keys], rotation=20, ha="right", fontsize=7)
    ax.set_ylabel("% of the GPU's own model")
    ax.axhline(100, color="#666", lw=0.8, linestyle=":")
    ax.legend(fontsize=7)


def comparison_figure(comparisons: Sequence[dict[str, Any]], title: str) -> Any:
    """:func:`draw_comparison` on a standalone Figure (for the HTML report)."""
    comparisons = _comparisons("comparisons", comparisons)
    title = check.string("title", title, allow_empty=True, max_len=200)
    fig = _agg_figure("wide")
    draw_comparison(fig.add_subplot(), comparisons, title)
    fig.tight_layout()
    return fig


def model_figure(gpus: Sequence[str]) -> Any:
    """:func:`draw_model` on a standalone Figure (the model-only report)."""
    gpus = check.gpus("gpus", gpus, max_len=len(specs.names()))
    fig = _agg_figure("wide")
    draw_model(fig.subplots(1, 2), gpus)
    fig.suptitle("Model (ampere.specs): what each GPU should reach at most", fontsize=10)
    fig.tight_layout()
    return fig


def recorded_figure(recorded: Sequence[dict[str, Any]]) -> Any:
    """:func:`draw_recorded` on a standalone Figure."""
    from .arguments import figure_list

    recorded = figure_list("recorded", recorded, recorded=True)
    fig = _agg_figure("wide")
    draw_recorded(fig.add_subplot(), recorded)
    fig.tight_layout()
    return fig


def show_references(gpus: Sequence[str] = REFERENCE_GPUS) -> None:
    """The chapter's reference table: for every figure the report measures, the recorded and published
    values it is compared with on each reference GPU (catalogue names), as a share of that GPU's model
    (figure + table; the table names each GPU once and each source once, in its caption)."""
    import matplotlib.pyplot as plt

    from .. import plots
    from ..tables import markdown_table, show_md

    gpus = check.gpus("gpus", gpus, max_len=len(specs.names()))
    points = reference_points(gpus)
    if not points:
        raise ValueError(f"gpus={gpus}: no recorded or published reference for these GPUs; GPUs with references: "
                         f"{', '.join(sorted({p.gpu for p in reference_points(specs.names())}))}")
    fig, ax = plots.figure("full")
    fig.set_size_inches(7.0, min(7.5, 0.36 * len(points) + 1.4))
    ys = list(range(len(points)))[::-1]
    seen: set[str] = set()
    for y, p in zip(ys, points):
        if p.ratio is None:
            continue
        marker = "s" if p.kind == "recorded" else "^"
        lab = None if p.kind in seen else {"recorded": "recorded on a real GPU", "published": "published"}[p.kind]
        seen.add(p.kind)
        ax.plot([100 * p.ratio], [y], marker=marker, color=plots.gpu_color(p.gpu), ms=7, ls="none", label=lab)
    ax.axvline(100, color="#666", lw=0.8, ls=":")
    ax.set_yticks(ys, [f"{p.gpu}: {p.what}" for p in points], fontsize=8)
    ax.set_xlabel("% of the GPU's model")
    ax.set_title("What a report is compared with: the references per GPU")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    plt.show()
    show_md(_reference_caption(points) + "\n\n" + markdown_table(_reference_point_rows(points)))


def _source_of(p: Any) -> str:
    return p.source.split(", ")[0] if p.kind == "published" else p.source


def _reference_point_rows(points: Sequence[Any]) -> list[dict[str, str]]:
    """Printable rows of :func:`ampere.report.reference_points`, grouped by GPU: the GPU named on its first
    row only, the source left to the caption (:func:`_reference_caption`) where one source covers a figure."""
    rows, last = [], None
    for p in points:
        rows.append({"GPU": p.gpu if p.gpu != last else "", "figure": p.what,
                     "unit": p.unit, "model": f"{p.model:,.0f}" if p.model else "-",
                     "reference": f"{p.real:,.0f}", "ratio": f"{p.ratio:.2f}" if p.ratio else "-"})
        last = p.gpu
    return rows


def _reference_caption(points: Sequence[Any]) -> str:
    """The sources of the reference table, once each, with what they measured."""
    by: dict[str, list[str]] = {}
    for p in points:
        kind = p.what.split(",")[0].split(" matmul")[0] + (" matmul" if "matmul" in p.what else "")
        by.setdefault(_source_of(p), [])
        if kind not in by[_source_of(p)]:
            by[_source_of(p)].append(kind)
    return "Sources: " + "; ".join(f"{', '.join(kinds)}: {src}" for src, kinds in by.items()) + "."


def show_cases(rows: Sequence[dict[str, Any]] | None = None) -> None:
    """The published cases where one setting cost bandwidth between nodes: the bandwidth with the setting
    wrong and right, and the share lost (:func:`ampere.report.case_rows`). Chapter: *The reference check*."""
    import matplotlib.pyplot as plt

    from .. import plots
    from .claims import case_rows

    rows = case_rows() if rows is None else mapping_list("rows", rows, ("setting", "system", "GB/s right",
                                                                         "GB/s wrong", "lost"), min_len=1)
    for i, r in enumerate(rows):
        for k in ("GB/s right", "GB/s wrong"):
            check.positive(f"rows[{i}][{k!r}]", r[k])
        check.fraction(f"rows[{i}]['lost']", r["lost"])
    fig, ax = plots.figure("full")
    fig.set_size_inches(7.0, 0.75 * len(rows) + 1.4)
    ys = list(range(len(rows)))[::-1]
    ax.barh([y + 0.18 for y in ys], [r["GB/s right"] for r in rows], height=0.34, color="#76b900",
            label="setting right (or expected)")
    ax.barh([y - 0.18 for y in ys], [r["GB/s wrong"] for r in rows], height=0.34, color="#c62828",
            label="setting wrong")
    for y, r in zip(ys, rows):
        ax.text(r["GB/s wrong"] + 0.6, y - 0.18, f"-{100 * r['lost']:.0f} %", va="center", fontsize=8)
    ax.set_yticks(ys, [f"{r['setting']}\n{r['system']}" for r in rows], fontsize=8)
    ax.set_xlabel("bandwidth between nodes (GB/s)")
    ax.set_xlim(0, 1.18 * max(r["GB/s right"] for r in rows))
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    plt.show()


def draw_findings(ax: Any, ranked: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]]) -> None:
    """Horizontal bars: the expected loss of training throughput of each finding (the range as a lighter
    bar), in rank order; a lower bound is marked "at least"; findings no published figure sizes are marked
    "unknown" at the left of their row, above the axis. ``ranked`` are :func:`ampere.report.findings`, ``rows`` :func:`ampere.report.judge_all`."""
    from .arguments import checked_rows, loss_pair

    ax = _ax("ax", ax, "barh")
    ranked = mapping_list("ranked", ranked, ("rank", "check", "status"))
    by = {r["name"]: r for r in checked_rows("rows", rows)}
    for i, f in enumerate(ranked):
        if f["check"] not in by:
            raise ValueError(f"ranked[{i}] names check {f['check']!r}, which rows do not hold")
    ys = list(range(len(ranked)))[::-1]
    top = 0.0
    for y, f in zip(ys, ranked):
        loss = loss_pair(f"rows[{f['check']!r}]['throughput_loss']", by[f["check"]].get("throughput_loss"))
        color = "#c62828" if f["status"] == "fail" else "#f9a825"
        if loss is None:
            continue
        top = max(top, 100 * loss[1])
        ax.barh([y], [100 * loss[1]], color=color, alpha=0.35)
        ax.barh([y], [100 * loss[0]], color=color)
        if by[f["check"]].get("at_least"):  # a lower bound: the loss may be larger
            ax.annotate("at least", xy=(100 * loss[1], y), xytext=(4, 0), textcoords="offset points",
                        va="center", fontsize=8, color="#555")
    for y, f in zip(ys, ranked):
        if by[f["check"]].get("throughput_loss") is None:
            ax.text(0.01 * max(top, 1.0), y, "unknown: no published figure sizes it", va="center", fontsize=8,
                    color="#555")
    ax.set_xlim(0, 1.05 * max(top, 1.0))
    ax.set_ylim(-0.7, len(ranked) - 0.3)
    ax.set_yticks(ys, [f"{f['rank']}. {f['check']} ({f['status']})" for f in ranked], fontsize=8)
    ax.set_xlabel("expected loss of training throughput (%): dark = low end, light = high end")
