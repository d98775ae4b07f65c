"""The chapter's figures, each drawn on a given matplotlib ``ax``: bit layouts, error versus K, the
accumulation error, representable ranges, loss scaling, training curves and throughput.

matplotlib is imported inside the functions that need it. Chapter: *TF32 and the precision formats*
(book/tf32.ipynb).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from .. import check
from .formats import FLOAT_FORMATS, FORMATS, bit_fields
from .matmul_error import ErrorSweep
from .throughput import MATMUL_PRECISIONS
from .training import TrainingRun


def _ax(ax: Any, method: str = "plot") -> Any:
    from ..plots import axes

    return axes("ax", ax, method)


_FIELD_COLORS = {"sign": "#d62728", "exponent": "#1f77b4", "mantissa": "#76b900", "unused": "#dddddd",
                 "value": "#9467bd"}
_CASE_COLORS = {"fp32": "#222222", "tf32": "#76b900", "tf32 truncate": "#9ccc3d", "bf16": "#1f77b4",
                "fp16": "#ff7f0e", "fp8_e4m3": "#9467bd", "fp8_e5m2": "#8c564b", "fp64": "#7f7f7f", "int8": "#e377c2"}


def plot_bit_layouts(ax: Any, names: Sequence[str] = ("fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2",
                                                      "int8")) -> None:
    """Bit layouts as stacked bars, one row per format, most significant bit on the left (chapter *TF32 and
    the precision formats*, figure "bit layouts")."""
    _ax(ax, "barh")
    names = check.names("names", names, FORMATS, max_len=16)
    for row, name in enumerate(names):
        y = len(names) - 1 - row
        start = 0
        for field_name, width in bit_fields(name):
            ax.barh(y, width, left=start, color=_FIELD_COLORS[field_name], edgecolor="white", height=0.7)
            if width >= 2 or field_name == "sign":
                ax.text(start + width / 2, y, str(width), ha="center", va="center", fontsize=8,
                        color="black" if field_name in ("unused", "mantissa") else "white")
            start += width
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels([FORMATS[n].label for n in reversed(names)])
    ax.set_xlim(0, 32)
    ax.set_xlabel("bit (most significant first)")
    ax.grid(False)
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=c, label=k) for k, c in _FIELD_COLORS.items()], loc="lower right", ncols=3,
              fontsize=8)


def plot_error_vs_k(ax: Any, sweep: ErrorSweep, bound_format: str = "fp32") -> None:
    """Measured median relative error per K and case, the input-rounding levels u_in, and sqrt(K) u / K u of
    the accumulation format (chapter *TF32 and the precision formats*, figure "error versus K")."""
    _ax(ax, "loglog")
    if not isinstance(sweep, ErrorSweep):
        raise TypeError(f"sweep must be an ErrorSweep (from error_vs_k), got {type(sweep).__name__}")
    check.one_of("bound_format", bound_format, FLOAT_FORMATS)
    ks = np.asarray(sweep.ks, dtype=float)
    for label, errs in sweep.errors.items():
        # FP16 and TF32 inputs give the same error (same 10-bit mantissa): FP16 gets open squares drawn on top,
        # so the TF32 line stays visible inside them
        hollow = label == "fp16"
        ax.loglog(ks, errs, marker="s" if hollow else "o", markersize=8 if hollow else 4,
                  markerfacecolor="none" if hollow else None, zorder=3 if hollow else 2,
                  color=_CASE_COLORS.get(label, "black"), linestyle="--" if "truncate" in label else "-",
                  linewidth=0.8 if hollow else 1.5, label=f"{label} inputs (emulated)")
    u = FORMATS[bound_format].unit_roundoff
    ax.loglog(ks, np.sqrt(ks) * u, color="#999999", linestyle=":", label=f"sqrt(K) u, u = u_{bound_format}")
    ax.loglog(ks, ks * u, color="#555555", linestyle="-.", label=f"K u, u = u_{bound_format}")
    for name, text in (("tf32", "u of TF32 = u of FP16"), ("bf16", "u of BF16")):
        if name in sweep.errors:
            ax.axhline(FORMATS[name].unit_roundoff, color=_CASE_COLORS[name], alpha=0.35, linewidth=4, label=text)
    ax.set_xlabel("inner dimension K")
    ax.set_ylabel("relative error (Frobenius) vs FP64")


def plot_ranges(ax: Any, names: Sequence[str] = ("fp32", "tf32", "bf16", "fp16", "fp8_e5m2", "fp8_e4m3"),
                sample: Any = None) -> None:
    """Representable magnitudes per format on a log10 axis: subnormals light, normals dark; ``sample``
    (optional) is drawn as a histogram of log10 |x| above. Chapter *TF32 and the precision formats*."""
    from .rounding import _float32_array

    _ax(ax, "barh")
    names = check.names("names", names, FLOAT_FORMATS, max_len=16)
    if sample is not None:
        sample = _float32_array("sample", sample).astype(np.float64)
        if not np.any(np.isfinite(sample) & (sample != 0)):
            raise ValueError("sample holds no finite nonzero value to draw")
    for row, name in enumerate(names):
        f = FORMATS[name]
        y = len(names) - 1 - row
        lo, mid, hi = math.log10(f.min_subnormal), math.log10(f.min_normal), math.log10(f.max_normal)
        ax.barh(y, mid - lo, left=lo, color=_CASE_COLORS.get(name, "grey"), alpha=0.35, height=0.6)
        ax.barh(y, hi - mid, left=mid, color=_CASE_COLORS.get(name, "grey"), height=0.6)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels([FORMATS[n].label for n in reversed(names)])
    ax.set_xlabel("log10 of the magnitude (light: subnormals, dark: normals)")
    if sample is not None:
        mag = np.abs(sample)
        mag = mag[(mag > 0) & np.isfinite(mag)]
        hist, edges = np.histogram(np.log10(mag), bins=60)
        top = len(names) - 0.4
        ax.fill_between(edges[:-1], top, top + 1.2 * hist / hist.max(), step="post", color="#444444", alpha=0.5)
        ax.set_ylim(-0.6, top + 1.4)


def _loss_row(name: str, row: Any) -> Mapping[str, float]:
    """A row of :func:`loss_scale_sweep`: ``log2_scale`` and the fractions ``zero``, ``subnormal``, ``overflow``."""
    row = check.mapping(name, row)
    check.integer(f"{name}['log2_scale']", row.get("log2_scale"))
    for key in ("zero", "subnormal", "overflow"):
        check.fraction(f"{name}[{key!r}]", row.get(key))
    return row


def plot_loss_scaling(ax: Any, rows: Sequence[Mapping[str, float]], best: int | None = None) -> None:
    """Fractions flushed to zero, subnormal and overflowing versus log2 of the loss scale (chapter *TF32 and
    the precision formats*, figure "loss scaling")."""
    _ax(ax)
    rows = check.sequence("rows", rows, _loss_row, max_len=10_000)
    best = check.optional(check.integer, "best", best, minimum=-1000, maximum=1000)
    k = [r["log2_scale"] for r in rows]
    ax.plot(k, [100 * r["zero"] for r in rows], color="#1f77b4", label="flushed to zero")
    ax.plot(k, [100 * r["subnormal"] for r in rows], color="#76b900", linestyle="--", label="subnormal (fewer bits)")
    ax.plot(k, [100 * r["overflow"] for r in rows], color="#d62728", label="overflow to inf")
    if best is not None:
        ax.axvline(best, color="#555555", linestyle=":", label=f"largest safe scale 2^{best}")
    ax.set_xlabel("log2 of the loss scale S")
    ax.set_ylabel("% of gradient values")


def plot_training(ax: Any, runs: Sequence[TrainingRun]) -> None:
    """Training-loss curves of :func:`train_digits_mlp` runs (chapter *TF32 and the precision formats*)."""
    _ax(ax)

    def run(name: str, r: Any) -> TrainingRun:
        if not isinstance(r, TrainingRun):
            raise TypeError(f"{name} must be a TrainingRun (from train_digits_mlp), got {type(r).__name__}")
        return r

    runs = check.sequence("runs", runs, run, max_len=100)
    styles = {"fp32": ("-", 3.0), "tf32": ("--", 1.5), "bf16": (":", 1.5), "fp16": ("-.", 1.5)}
    for r in runs:
        style, width = styles.get(r.precision, ("-", 1.5))
        ax.plot(range(1, len(r.epoch_losses) + 1), r.epoch_losses, color=_CASE_COLORS.get(r.precision, "black"),
                linestyle=style, linewidth=width, marker="o" if r.backend == "native" else None, markersize=3,
                alpha=0.6 if r.precision == "fp32" else 1.0, label=f"{r.precision} ({r.backend})")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("training loss (cross-entropy)")


def plot_throughput(ax: Any, rows: Sequence[Mapping[str, Any]], label: str = "") -> None:
    """TFLOP/s per precision and size from :func:`throughput_rows` (chapter *TF32 and the precision formats*)."""
    _ax(ax, "bar")

    def row(name: str, r: Any) -> Mapping[str, Any]:
        r = check.mapping(name, r)
        check.one_of(f"{name}['precision']", r.get("precision"), MATMUL_PRECISIONS)
        check.positive_int(f"{name}['n']", r.get("n"))
        check.nonneg(f"{name}['tflops']", r.get("tflops"))
        return r

    rows = check.sequence("rows", rows, row, max_len=10_000)
    label = check.string("label", label, allow_empty=True)
    precisions = [p for p in MATMUL_PRECISIONS if any(r["precision"] == p for r in rows)]
    sizes = sorted({int(r["n"]) for r in rows})
    width = 0.8 / max(1, len(sizes))
    for j, n in enumerate(sizes):
        vals = [next((r["tflops"] for r in rows if r["precision"] == p and int(r["n"]) == n), 0.0) for p in precisions]
        ax.bar(np.arange(len(precisions)) + j * width, vals, width=width, label=f"{n}^3",
               color=_size_color(j, len(sizes)))
    ax.set_xticks(np.arange(len(precisions)) + width * (len(sizes) - 1) / 2)
    ax.set_xticklabels(precisions)
    ax.set_yscale("log")
    ax.set_ylabel("TFLOP/s (TOP/s for int8), median")
    if label:
        ax.set_title(label)


def _size_color(i: int, n: int) -> str:
    """The i-th of n greens (sizes in :func:`plot_throughput`)."""
    shades = ["#b8d97a", "#9ccc3d", "#76b900", "#4f7c00", "#2f4a00"]
    return shades[min(len(shades) - 1, i + max(0, (len(shades) - n) // 2))]


def plot_accumulation(ax: Any, curves: Mapping[str, Mapping[str, Sequence[float]]], u_format: str = "fp16") -> None:
    """Componentwise error against K of :func:`accumulation_curves`, with K u and sqrt(K) u of ``u_format``.
    Chapter *TF32 and the precision formats*, section "Error that grows with K"."""
    _ax(ax, "loglog")
    curves = check.mapping("curves", curves, allow_empty=False)
    for label, cur in curves.items():
        cur = check.mapping(f"curves[{label!r}]", cur)
        ks = check.sequence(f"curves[{label!r}]['k']", cur.get("k"), check.positive, max_len=100_000)
        check.sequence(f"curves[{label!r}]['error']", cur.get("error"), check.nonneg, min_len=len(ks),
                       max_len=len(ks))
    check.one_of("u_format", u_format, FLOAT_FORMATS)
    colors = {"FP16": "#ff7f0e", "BF16": "#1f77b4", "TF32 inputs (nearest)": "#76b900", "TF32 inputs (truncate)": "#4f7c00"}
    for label, cur in curves.items():
        color = next((c for k, c in colors.items() if label.startswith(k)), "black")
        ax.loglog(cur["k"], cur["error"], color=color, linestyle="--" if "truncate" in label else "-", label=label)
    ks = np.array(next(iter(curves.values()))["k"], dtype=float)
    u = FORMATS[u_format].unit_roundoff
    ax.loglog(ks, ks * u, color="#555555", linestyle="-.", label=f"K u (u of {FORMATS[u_format].label})")
    ax.loglog(ks, np.sqrt(ks) * u, color="#999999", linestyle=":", label=f"sqrt(K) u (u of {FORMATS[u_format].label})")
    ax.set_xlabel("inner dimension K")
    ax.set_ylabel("max |error| / (|A||B|), componentwise")
