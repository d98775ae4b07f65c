"""The chapter's figures: a compressed block, the model's speedups, the ASP accuracies, a measured sweep.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb): "The compressed format" (:func:`draw_block`), "Why
the hardware likes it" (:func:`plot_speedup_model`), "Accuracy" (:func:`plot_asp`), "2:4 on large language
models" (:func:`plot_llm_speedup`), "Real 2:4 speedups" (:func:`plot_sweep`).

HEAVY: matplotlib is imported only inside the functions that draw (directly or through ``ampere.plots``).
"""

from __future__ import annotations

from typing import Any, Sequence


import numpy as np

from .. import check
from .compressed import metadata_nibbles
from .llm import layer_speedup
from .roofline import LinearShape, csr_precision, speedup_curves, speedup_model, unstructured_break_even
from .sweep_results import sweep_table


def _two_axes(axes: Any) -> list[Any]:
    from .. import plots

    return check.sequence("axes", axes, lambda n, a: plots.axes(n, a), min_len=2, max_len=2)


def draw_block(axes: Sequence[Any], w: np.ndarray, values: np.ndarray, metadata: np.ndarray) -> None:
    """Three panels: the pruned block (kept entries coloured), its values, its metadata nibble per group.

    Chapter: *2:4 structured sparsity*, "The compressed format".
    """
    import matplotlib.colors as mcolors

    from .. import plots

    axes = check.sequence("axes", axes, lambda n, a: plots.axes(n, a), min_len=3, max_len=3)
    for name, x in (("w", w), ("values", values)):
        if not isinstance(x, np.ndarray) or x.ndim != 2:
            raise TypeError(f"{name} must be a 2-D numpy array, got {type(x).__name__}")
    w = np.asarray(w, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    rows, cols = w.shape
    nib = metadata_nibbles(metadata, cols // 4)
    green = plots.gpu_color("A100-SXM4-80GB")
    cmap = mcolors.LinearSegmentedColormap.from_list("kept", ["#f4f4f4", green])
    ax0, ax1, ax2 = axes

    def frame(ax: Any, n_rows: int, n_cols: int, every: int) -> None:
        for c in range(1, n_cols):
            ax.axvline(c - 0.5, color="black" if c % every == 0 else "white", lw=1.6 if c % every == 0 else 0.8)
        for r in range(1, n_rows):
            ax.axhline(r - 0.5, color="white", lw=0.8)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)

    ax0.imshow(w != 0, cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for (r, c), x in np.ndenumerate(w):
        ax0.text(c, r, f"{x:.2f}" if x != 0 else "0", ha="center", va="center", fontsize=10,
                 color="black" if x != 0 else "#999999")
    frame(ax0, rows, cols, 4)
    ax0.set_title(f"pruned {rows} x {cols} block: groups of 4 columns")
    ax1.imshow(np.ones_like(values), cmap=cmap, vmin=0, vmax=1, aspect="auto")
    for (r, c), x in np.ndenumerate(values):
        ax1.text(c, r, f"{x:.2f}", ha="center", va="center", fontsize=10)
    frame(ax1, rows, values.shape[1], 2)
    ax1.set_title(f"values {values.shape[0]} x {values.shape[1]}")
    ax2.imshow(np.zeros(nib.shape), cmap="Greys", vmin=0, vmax=1, aspect="auto")
    for (r, c), x in np.ndenumerate(nib):
        lo, hi = int(x) & 3, int(x) >> 2
        ax2.text(c, r, f"0b{hi:02b}{lo:02b}\n({lo}, {hi})", ha="center", va="center", fontsize=9,
                 family="monospace")
    frame(ax2, rows, nib.shape[1], 1)
    for ax in (ax0, ax1, ax2):
        for spine in ax.spines.values():
            spine.set_visible(True)
    ax2.set_title("metadata nibble\n(positions lo, hi)")


def plot_speedup_model(axes: Sequence[Any], gpu: str = "A100-SXM4-80GB", precision: str = "fp16",
                       in_features: int = 4096, out_features: int = 4096) -> None:
    """Left: model speedup vs tokens (2:4, unstructured 50 %). Right: unstructured speedup vs sparsity.

    Chapter: *2:4 structured sparsity*, "Why the hardware likes it".
    """
    from .. import plots

    ax0, ax1 = _two_axes(axes)
    c = speedup_curves(gpu, in_features, out_features, precision)
    color = plots.gpu_color(gpu)
    ax0.plot(c["tokens"], c["2:4"], color=color, label="2:4 (sparse tensor cores)", **plots.PROVENANCE["model"])
    ax0.plot(c["tokens"], c["unstructured"], color="#888888", label="unstructured 50 % (best of CSR, bitmap)",
             **{**plots.PROVENANCE["model"], "linestyle": "--"})
    ax0.axhline(1.0, color="black", lw=0.8)
    ax0.set_xscale("log", base=2)
    ax0.set_xlabel(f"tokens (rows of X), W = {out_features}x{in_features}")
    ax0.set_ylabel("speedup over dense (model)")
    ax0.set_ylim(0, 2.2)
    ax0.legend(loc="lower right")
    ax0.set_title(f"{gpu}, {precision}")
    big = LinearShape(16384, in_features, out_features)
    s = np.linspace(0.0, 0.99, 100)
    native = csr_precision(precision)
    for strategy, math, style, label in (("csr", "fp32", (0, (1, 3)), "unstructured, CSR, FP32 math"),
                                         ("csr", "native", ":", f"unstructured, CSR, {native} math"),
                                         ("bitmap", "native", "-.", "unstructured, bitmap + dense math"),
                                         (None, "native", "--", "unstructured, best of CSR and bitmap")):
        ys = [speedup_model(gpu, big, precision, "unstructured", sparsity=float(x), strategy=strategy, csr_math=math)
              for x in s]
        ax1.plot(100 * s, ys, color="#bbbbbb" if math == "fp32" else "#888888",
                 **{**plots.PROVENANCE["model"], "linestyle": style}, label=label)
    ax1.plot([50], [speedup_model(gpu, big, precision, "2:4")], color=color, marker="*", markersize=12,
             linestyle="none", label="2:4 at 50 %")
    ax1.axhline(1.0, color="black", lw=0.8)
    be = 100 * unstructured_break_even(gpu, precision)
    ax1.axvline(be, color="#888888", lw=0.8, linestyle=":")
    ax1.annotate(f"break-even {be:.1f} %\n({native} CSR)", xy=(be, 0.08), xytext=(be - 3, 0.08), ha="right",
                 fontsize=8)
    ax1.set_yscale("log")
    ticks = [0.0625, 0.125, 0.25, 0.5, 1, 2, 4, 8]
    ax1.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax1.minorticks_off()
    ax1.set_ylim(0.05, 10)
    ax1.set_xlabel("sparsity (% zeros)")
    ax1.set_ylabel("speedup over dense (model)")
    ax1.legend(loc="upper left")
    ax1.set_title(f"compute-bound layer ({big.tokens} tokens)")


def plot_llm_speedup(axes: Sequence[Any], model: str = "llama2-7b", gpu: str = "A100-SXM4-80GB",
                     kernel_speedup: float = 1.6) -> None:
    """Layer speedup of 2:4 over dense for one decoder layer (:func:`~.llm.layer_speedup`). Left: decoding,
    against the batch size, for three K/V-cache lengths. Right: prefill of one sequence, against the prompt
    length, with the GEMMs at the 2:4 roofline and only ``kernel_speedup`` times faster (Wanda's end-to-end
    LLaMA-7B figure is not drawn here: the text we read does not say on which GPU it was measured).
    Chapter: *2:4 structured sparsity*, "2:4 on large language models".
    """
    from .. import plots

    ax0, ax1 = _two_axes(axes)
    gpu = check.gpu("gpu", gpu)
    layer_speedup(model, gpu, "prefill", 1, 128)  # refuses an unknown model, naming it
    kernel_speedup = check.bounded("kernel_speedup", kernel_speedup, 0.01, 100.0, why="a GEMM speedup")
    color = plots.gpu_color(gpu)
    batches = [2**i for i in range(0, 9)]
    for context, style in ((512, ":"), (2048, "--"), (8192, "-")):
        ys = [layer_speedup(model, gpu, "decode", b, context)["speedup"] for b in batches]
        ax0.plot(batches, ys, color=color, **{**plots.PROVENANCE["model"], "linestyle": style},
                 label=f"context {context} tokens")
    ax0.axhline(1.0, color="black", lw=0.8)
    ax0.set_xscale("log", base=2)
    ax0.set_xlabel("decode batch (sequences, one new token each)")
    ax0.set_ylabel("layer speedup, 2:4 over dense (model)")
    ax0.set_ylim(0.9, 2.1)
    ax0.legend(loc="upper right")
    ax0.set_title(f"decode, {model}, {gpu}")
    prompts = [2**i for i in range(7, 14)]
    roof = [layer_speedup(model, gpu, "prefill", 1, n)["speedup"] for n in prompts]
    kern = [layer_speedup(model, gpu, "prefill", 1, n, gemm_speedup=kernel_speedup)["speedup"] for n in prompts]
    ax1.plot(prompts, roof, color=color, label="GEMMs at the 2:4 roofline (2x)", **plots.PROVENANCE["model"])
    ax1.plot(prompts, kern, color=color, label=f"GEMMs {kernel_speedup:g}x faster",
             **{**plots.PROVENANCE["model"], "linestyle": "--"})
    ax1.axhline(1.0, color="black", lw=0.8)
    ax1.set_xscale("log", base=2)
    ax1.set_xlabel("prompt length (tokens, one sequence)")
    ax1.set_ylabel("layer speedup, 2:4 over dense (model)")
    ax1.set_ylim(0.9, 2.1)
    ax1.legend(loc="lower right")
    ax1.set_title(f"prefill, {model}, {gpu}")


def plot_asp(ax: Any, summary: dict[str, Any]) -> None:
    """Bars: mean test accuracy (min-max over seeds) right after pruning and after retraining, per method.

    Chapter: *2:4 structured sparsity*, "Accuracy".
    """
    from .. import plots

    methods = summary["methods"]
    pm = summary["per_method"]
    x = np.arange(len(methods))
    for off, key, color, label in ((-0.2, "acc_pruned", "#bbbbbb", "after pruning"),
                                   (0.2, "acc_retrained", plots.gpu_color("A100"), "after retraining (mask fixed)")):
        mean = np.array([100 * pm[m][key]["mean"] for m in methods])
        err = np.array([[mean[i] - 100 * pm[m][key]["min"], 100 * pm[m][key]["max"] - mean[i]]
                        for i, m in enumerate(methods)]).T
        ax.bar(x + off, mean, width=0.4, color=color, label=label, yerr=err, capsize=3)
    ax.set_xticks(x, [m.replace(" magnitude", "\nmagnitude").replace(" random", "\nrandom") for m in methods])
    lo = min(pm[m]["acc_pruned"]["min"] for m in methods)
    ax.set_ylim(max(0.0, 100 * lo - 10), 100)
    ax.set_ylabel(f"test accuracy, % of {summary['test_size']} digits")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2)


def plot_sweep(ax: Any, result: dict[str, Any]) -> None:
    """Measured 2:4 speedup per shape (bars per dtype and backend), with the roofline bound as ticks.

    Chapter: *2:4 structured sparsity*, "Real 2:4 speedups".
    """
    from .. import plots

    rows = [r for r in sweep_table(result) if r["backend"] != "torch.sparse CSR"]
    rows.sort(key=lambda r: r["flops"])
    shapes = list(dict.fromkeys(r["shape"] for r in rows))
    series = list(dict.fromkeys((r["dtype"], r["backend"]) for r in rows))
    width = 0.8 / max(1, len(series))
    for j, (dt, b) in enumerate(series):
        xs, ys = [], []
        for r in rows:
            if (r["dtype"], r["backend"]) == (dt, b):
                xs.append(shapes.index(r["shape"]) + (j - (len(series) - 1) / 2) * width)
                ys.append(r["speedup"])
        ax.bar(xs, ys, width=width, label=f"{dt}, {b}")
    for r in rows:
        if r["model_bound"]:
            ax.plot([shapes.index(r["shape"]) - 0.4, shapes.index(r["shape"]) + 0.4], [r["model_bound"]] * 2,
                    color="black", lw=1)
    ax.axhline(1.0, color="black", lw=0.8, linestyle=":")
    ax.set_xticks(range(len(shapes)), [s.split(" (")[0].replace("->", "\n->") for s in shapes], fontsize=8)
    ax.set_ylabel("speedup over dense (measured)")
    ax.legend(loc="upper left", fontsize=8)
    dev = result["device"]
    ax.set_title(f"2:4 sparse vs dense F.linear on {dev.get('name')}")
    from ..results import provenance

    plots.provenance_note(ax, provenance(result) + "; black ticks: roofline bound of the model")


_KIND_MARKER = {"measured": "o", "recorded": "s", "published": "^"}


def _plot_speedup_points(ax: Any, points: Sequence[Any], labels: Sequence[str]) -> None:
    """One row per speedup: the real 2:4 speedup (filled, marker by provenance) beside its roofline bound
    (open diamond) where there is one, a vertical line at 1 (no gain). Short row labels: the GPU goes in the
    title. Used by :func:`ampere.sparsity.views.show_sparsity`."""
    from .. import plots

    ys = list(range(len(points)))[::-1]
    seen: set[str] = set()
    for y, p, label in zip(ys, points, labels):
        colour = plots.gpu_color(p.gpu)
        if p.model is not None:
            ax.plot([p.model, p.real], [y, y], color=colour, lw=1.0, alpha=0.4)
            ax.plot([p.model], [y], marker="D", mfc="white", mec=colour, ms=7, ls="none",
                    label=None if "bound" in seen else "roofline bound (model)")
            seen.add("bound")
        lab = None if p.kind in seen else {"measured": "measured here", "recorded": "recorded on a real GPU",
                                           "published": "published"}[p.kind]
        seen.add(p.kind)
        ax.plot([p.real], [y], marker=_KIND_MARKER[p.kind], color=colour, ms=8, ls="none", label=lab)
    ax.axvline(1.0, color="#444444", lw=1, ls="--", label="no gain (1.0x)")
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=9)
    ax.set_ylim(-0.7, len(points) - 0.3)
    ax.set_xlim(0.5, 2.15)
    ax.set_xlabel("2:4 sparse over dense (x)")
    ax.legend(loc="upper left", fontsize=8)


def _show_speedup_figure(pts: Sequence[Any], labels: Sequence[str]) -> None:
    """The figure of :func:`ampere.sparsity.views.show_sparsity`: one row per speedup, the GPUs in the title."""
    import matplotlib.pyplot as plt

    from .. import plots

    fig, ax = plots.figure("full")
    fig.set_size_inches(fig.get_size_inches()[0], min(max(2.8, 0.36 * len(pts) + 1.4), 7.5))
    _plot_speedup_points(ax, pts, labels)
    ax.set_title(f"2:4 sparse over dense on the {', '.join(dict.fromkeys(p.gpu for p in pts))}", fontsize=10)
    fig.tight_layout()
    plt.show()
