"""The chapter's figures: the dies of three generations, the harvesting yield curves, the roofline with
the published matmuls placed on it, and the tile and wave staircase modelled and, on a CUDA GPU, measured
(:func:`show_staircase`).

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "From a die to a product", "Why sell a
128-SM die as a 108-SM part?", "The roofline" and "Tiles, waves and alignment". Draws on a matplotlib axis
given by the caller; matplotlib is imported only inside functions, never at module level.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .. import check, gemm, specs
from .die import DieLayout, die_layout, harvest_yield
from .peaks import GENERATIONS
from .figures_execution import plot_staircase
from .measure import staircase_sweep
from .quantization import staircase_sizes
from .roofline import attainable_flops, matmul_intensity, roofline_curve


def draw_die(ax: Any, gpu: str | specs.GPUSpec, title: bool = True) -> DieLayout:
    """Draw ``gpu``'s die: GPCs of TPCs (2 SMs each; enabled SMs filled in the GPU's colour, fused-off ones
    hollow with a dashed outline, so the two read apart whatever the colour), the L2 band and memory sites.

    Chapter: *Architecture of the GA100*, "From a die to a product".
    """
    from matplotlib.patches import Rectangle

    from ..plots import axes, gpu_color

    axes("ax", ax, "add_patch")
    spec = specs.get(gpu)
    title = check.boolean("title", title)
    layout = die_layout(spec)
    color = gpu_color(spec.name)
    cols = math.ceil(layout.gpcs / 2)
    gw, gh, band = 1.0, 1.0, 0.35  # GPC cell width/height, L2 band height
    for gi, tpcs in enumerate(layout.tpcs):
        row, col = divmod(gi, cols)
        x0, y0 = col * (gw + 0.1), 0.0 if row == 0 else gh + band + 0.2
        ax.add_patch(Rectangle((x0, y0), gw, gh, fill=False, lw=1.0, ec="#444444"))
        per_row = math.ceil(len(tpcs) / 2)
        w = (gw - 0.1) / per_row
        for ti, on in enumerate(tpcs):
            r, c = divmod(ti, per_row)
            for s in range(2):  # the two SMs of a TPC, stacked
                xy = (x0 + 0.05 + c * w + 0.02, y0 + 0.07 + r * 0.45 + s * 0.21)
                if on:
                    ax.add_patch(Rectangle(xy, w - 0.04, 0.18, color=color, lw=0))
                else:
                    ax.add_patch(Rectangle(xy, w - 0.04, 0.18, fill=False, ec="#555555", lw=0.6, ls=(0, (2, 1))))
    width = cols * (gw + 0.1) - 0.1
    top = 2 * gh + band + 0.2
    ax.add_patch(Rectangle((0, gh + 0.1), width, band, color="#9ecae1", lw=0))
    ax.text(width / 2, gh + 0.1 + band / 2, f"L2 {spec.l2_bytes / 2**20:.0f} MiB", ha="center", va="center",
            fontsize=8)
    stacks = spec.memory_stacks or 0
    sites = stacks + (1 if spec.chip in ("GA100", "GH100") else 0)  # GA100/GH100 have a 6th, unused site
    per_side = max(1, math.ceil(sites / 2))
    h = top / per_side
    for k in range(sites):  # HBM stacks left and right of the die (GDDR parts have none drawn)
        side, idx = divmod(k, per_side)
        x = -0.45 if side == 0 else width + 0.1
        ax.add_patch(Rectangle((x, idx * h + 0.05), 0.35, h - 0.1, color="#fdae6b" if k < stacks else "#eeeeee",
                               ec="#999999", lw=0.5))
    ax.set_xlim(-0.6, width + 0.6)
    ax.set_ylim(-0.1, top + 0.1)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(f"{spec.chip} as {spec.name}\n{layout.enabled_sms} of {spec.die_sms} SMs, "
                     f"{spec.memory_type} x{stacks or '-'}", fontsize=9)
    return layout


def plot_dies(axes: Sequence[Any], gpus: Sequence[str] = GENERATIONS) -> list[DieLayout]:
    """One die per axis (:func:`draw_die`). Chapter: *Architecture of the GA100*, "From a die to a product"."""
    from ..plots import axes as _axes

    gpus = check.gpus("gpus", gpus, max_len=16)
    axes = check.sequence("axes", axes, lambda name, a: _axes(name, a, "add_patch"), max_len=16)
    if len(axes) != len(gpus):
        raise ValueError(f"axes has {len(axes)} panels for {len(gpus)} GPUs; give one axis per GPU")
    return [draw_die(ax, g) for ax, g in zip(axes, gpus)]


def plot_harvest(ax: Any, units: int = 128, needed: Sequence[int] = (128, 120, 108), q_max: float = 0.10) -> None:
    """Sellable dies against the assumed per-SM defect probability, one curve per requirement ``needed``.

    Chapter: *Architecture of the GA100*, "Why sell a 128-SM die as a 108-SM part?".
    """
    import numpy as np

    from .. import plots

    plots.axes("ax", ax)
    units = check.bounded_int("units", units, 1, 10_000, why="the binomial sum loops over every unit")
    needs = check.sequence("needed", needed, lambda name, n: check.integer(name, n, minimum=0, maximum=units),
                           max_len=5)
    q = np.linspace(0.0, check.fraction("q_max", q_max, allow_zero=False), 101)
    product = min(needs)
    for n, style in zip(needs, ("-", "--", "-", ":", "-.")):
        y = [harvest_yield(units, n, float(v)) for v in q]
        ax.plot(100 * q, 100 * np.array(y), style, lw=2 if n == product else 1.2,
                color=plots.gpu_color("A100") if n == product else "#888888",
                label=f">= {n} of {units} SMs working")
    ax.set_xlabel("assumed probability that one SM is defective (%)")
    ax.set_ylabel("dies sellable (%)")
    # the free corner between the steep full-die curve and the later ones
    ax.legend(fontsize=8, loc="lower left", bbox_to_anchor=(0.25, 0.1), title="dies sellable with",
              title_fontsize=8)


def plot_roofline(ax: Any, gpu: str | specs.GPUSpec = "A100-SXM4-80GB",
                  precisions: Sequence[str] = ("bf16", "tf32", "fp32"), l2: bool = True,
                  sizes: Sequence[int] = (256, 512, 1024, 2048, 4096, 8192)) -> None:
    """The roofline of ``gpu`` per precision (DRAM, and the L2 roof for the first precision), the square
    matmuls of ``sizes`` placed on it, and the published matmuls of the same silicon with a stated shape.

    Chapter: *Architecture of the GA100*, "The roofline".
    """
    from .. import plots, views

    plots.axes("ax", ax, "loglog")
    spec = specs.get(gpu)
    precisions = check.names("precisions", precisions, specs.PRECISIONS, max_len=4)
    unsupported = [p for p in precisions if not spec.supports(p)]
    if unsupported:
        raise ValueError(f"precisions {unsupported} are not supported on {spec.name}; allowed: "
                         f"{', '.join(spec.precisions())}")
    l2 = check.boolean("l2", l2)
    sizes = check.sequence("sizes", sizes, lambda name, n: check.positive_int(name, n, maximum=2**20), max_len=64)
    for precision, style in zip(precisions, ("-", "--", ":", "-.")):
        x, y = roofline_curve(spec, precision, lo=0.5, hi=2e4)
        ax.loglog(x, y / 1e12, style, color=plots.gpu_color(spec.name),
                  label=f"{precision} roof, DRAM {spec.hbm_bytes_per_s / 1e9:.0f} GB/s")
    if l2 and spec.l2_bytes_per_s:
        x, y = roofline_curve(spec, precisions[0], lo=0.5, hi=2e4, bytes_per_s=spec.l2_bytes_per_s)
        ax.loglog(x, y / 1e12, "-", color="#9ecae1",
                  label=f"{precisions[0]} roof from L2 ({spec.l2_bytes_per_s / 1e12:.1f} TB/s)")
    p0 = precisions[0]
    ai = [matmul_intensity(n, n, n, p0) for n in sizes]
    ax.loglog(ai, [attainable_flops(spec, p0, i) / 1e12 for i in ai], color="black", linestyle="none",
              marker="|", markersize=12, label=f"square {p0} matmuls {min(sizes)}..{max(sizes)} (model)")
    peak = spec.peak_flops(p0)
    markers: dict[str, str] = {}
    for rec in gemm.published_matmul():
        shape = gemm.matmul_shape(rec)
        rp = rec.params["precision"]
        if shape is None or rp not in ("bf16", "fp16") or specs.get(rec.gpu).peak_flops(rp) != peak:
            continue
        src = views.cite_label(rec.source)
        first = src not in markers
        marker = markers.setdefault(src, "^v<>"[len(markers) % 4])
        ax.loglog([matmul_intensity(*shape, rp)], [gemm.matmul_tflops(rec)], color="black",
                  **{**plots.PROVENANCE["published"], "marker": marker},
                  label=f"published 16-bit matmuls ({src})" if first else None)
    ax.set_xlabel("arithmetic intensity (FLOP per DRAM byte)")
    ax.set_ylabel("attainable TFLOP/s")
    plots.legend_outside(ax, fontsize=8)


def show_staircase(info: Any, *, measure: bool | None = None, m: int = 1536, k: int = 4096,
                   ns: Sequence[int] | None = None, precision: str = "fp16") -> dict[str, Any]:
    """The staircase figure: modelled TFLOP/s of C[m,n] = A[m,k] B[k,n] against n for the GPU at hand (its
    catalogue spec, or the A100-SXM4-80GB without one), and on a CUDA GPU (or when ``measure`` says so) the
    same shapes timed with :func:`staircase_sweep`. Returns ``{"gpu", "model", "measured"}``.

    Chapter: *Architecture of the GA100*, "Tiles, waves and alignment".
    """
    import matplotlib.pyplot as plt

    from .. import plots

    run = getattr(info, "backend", "cpu") == "cuda" if measure is None else check.boolean("measure", measure)
    spec = getattr(info, "spec", None) if getattr(info, "backend", "cpu") == "cuda" else None
    gpu = spec.name if isinstance(spec, specs.GPUSpec) else "A100-SXM4-80GB"
    ns = staircase_sizes() if ns is None else check.sequence(
        "ns", ns, lambda name, n: check.positive_int(name, n, maximum=65536), max_len=2000)
    m, k = check.positive_int("m", m, maximum=65536), check.positive_int("k", k, maximum=65536)
    precision = check.one_of("precision", precision, ("fp32", "tf32", "bf16", "fp16", "fp64"))
    measured = staircase_sweep(ns, m, k, precision, info=info) if run else []
    fig, ax = plots.figure("full")
    model = plot_staircase(ax, gpu, ns, m, k, precision, measured=measured,
                           measured_label=f"measured here ({getattr(info, 'name', 'this GPU')})")
    ax.set_title(f"{gpu}: the tile and wave staircase", fontsize=10)
    fig.tight_layout()
    plt.show()
    return {"gpu": gpu, "model": model, "measured": measured}
