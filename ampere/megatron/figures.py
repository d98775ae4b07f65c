"""The chapter's views and figures: the timeline of a simulated pipeline schedule
(:func:`plot_schedule`) and the GEMM model beside measured, recorded and published matmuls
(:func:`layer_gemm_points`, :func:`show_layer_gemms`, built on :mod:`ampere.views`).

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb),
sections "Pipeline schedules" and "A throughput model built from hardware", "Measured". Imports
matplotlib (through :mod:`ampere.plots` and :mod:`ampere.views`) only inside the functions that draw.
"""

from __future__ import annotations

from typing import Any

from .. import gemm, results, specs
from .hardware import gemm_time
from .measure import measure_layer_gemms
from .published import table1_config
from .schedules import ScheduleResult


def plot_schedule(result: ScheduleResult, ax: Any = None, title: str | None = None, label_microbatches: bool = True):
    """Draw a simulated schedule as a timeline (one row per device), like the paper's Figures 3 and 4.

    Chapter: "Pipeline schedules". Forwards are blue, backwards green; darker shades are the first model
    chunk, lighter ones later chunks; white space is the bubble. Returns (fig, ax).
    """
    from .. import check

    if not isinstance(result, ScheduleResult):
        raise TypeError(f"result must be a ScheduleResult (simulate_schedule), got {result!r:.60} "
                        f"({type(result).__name__})")
    check.optional(check.string, "title", title, max_len=300)
    label_microbatches = check.boolean("label_microbatches", label_microbatches)

    from matplotlib.patches import Rectangle

    from .. import plots

    if ax is not None:
        plots.axes("ax", ax, "add_patch")
    if ax is None:
        fig, ax = plots.figure("wide")
    else:
        fig = ax.figure
    blues = ["#1f5fa8", "#6fa8dc", "#a9cdee", "#d3e5f6"]
    greens = ["#2e7d32", "#7cbf7f", "#b5dcb6", "#dcefdc"]
    p = result.pipeline
    for o in result.ops:
        shades = blues if o["op"] == "F" else greens
        color = shades[min(o["chunk"], len(shades) - 1)]
        y = p - 1 - o["device"]
        ax.add_patch(Rectangle((o["start"], y + 0.08), o["end"] - o["start"], 0.84, facecolor=color,
                               edgecolor="white", linewidth=0.5))
        # numbers only in boxes wide enough for 8 pt digits (about a forward pass of 4 x m on the axis)
        wide = o["end"] - o["start"] >= 0.9 * result.makespan / max(1, 4 * result.microbatches)
        if label_microbatches and wide:
            ax.text((o["start"] + o["end"]) / 2, y + 0.5, str(o["microbatch"] + 1), ha="center", va="center",
                    fontsize=8, color="white" if o["chunk"] == 0 else "black")
    ax.set_xlim(0, result.makespan)
    ax.set_ylim(0, p)
    ax.set_yticks([p - 1 - r + 0.5 for r in range(p)])
    ax.set_yticklabels([f"GPU {r + 1}" for r in range(p)])
    ax.set_xlabel("time (units of one microbatch's forward pass on one device)")
    ax.grid(False)
    name = {"gpipe": "GPipe", "1f1b": "1F1B", "interleaved": f"interleaved 1F1B, v = {result.interleave}"}[result.kind]
    ax.set_title(title or f"{name}: p = {p}, m = {result.microbatches}, bubble {result.bubble_fraction:.1%} "
                          f"of ideal time")
    return fig, ax



def layer_gemm_points(info: Any = None) -> list[Any]:
    """The evidence for the GEMM model as :class:`ampere.views.Point` rows (TFLOP/s, model beside real).

    Chapter: "A throughput model built from hardware", section "Measured". On a CUDA GPU with BF16
    tensor cores: the forward GEMMs of one 1T layer shard (t = 8, b = 1) measured here. Otherwise:
    results recorded with ``python -m ampere bench megatron`` on real GPUs, then the published best
    achievable bf16 matmuls of :func:`ampere.gemm.published_matmul` (A100, H100) at their own shapes.
    The model column is :func:`gemm_time` for the same shape and GPU (the MAMF figure is one of its
    inputs, so at that shape the ratio shows only the wave-quantisation correction).
    """
    from .. import device, views

    if info is not None and not isinstance(info, device.DeviceInfo):
        raise TypeError(f"info must be an ampere.device.DeviceInfo (ampere.device.probe()) or None, got "
                        f"{info!r:.60} ({type(info).__name__})")
    points = []
    if info is not None and info.backend == "cuda" and info.bf16_tensor:
        for rec in measure_layer_gemms(table1_config("1T"), tensor=8, microbatch=1, info=info):
            if rec["measured_s"] is None:
                continue
            model = rec["flops"] / rec["model_s"] / 1e12 if rec["model_s"] else None
            points.append(views.Point(rec["name"], info.spec.name if info.spec else info.label(), model,
                                      rec["tflops"], "TFLOP/s", "measured", "measured here"))
        if points:
            return points
    for res in results.records(benchmark="megatron", kind="measured"):
        if "tflop_per_s" not in res.figures:
            continue
        model = None
        if res.params.get("m") and res.gpu in specs.names():
            model = 2.0 * res.params["m"] * res.params["n"] * res.params["k"] * res.params.get("batch", 1) / \
                gemm_time(res.params["m"], res.params["n"], res.params["k"], res.params.get("batch", 1), res.gpu) / 1e12
        points.append(views.point(res, "tflop_per_s", res.params.get("name", "layer GEMM"), model, "TFLOP/s"))
    for rec in gemm.published_matmul(precision="bf16"):
        shape = gemm.matmul_shape(rec)
        if rec.params.get("method") != "mamf" or shape is None or rec.gpu not in specs.names():
            continue
        m, n, k = shape
        model = 2.0 * m * n * k / gemm_time(m, n, k, 1, rec.gpu) / 1e12
        points.append(views.point(rec, "bf16_tflop_per_s", f"bf16 matmul {m} x {n} x {k} (best shape)", model,
                                  "TFLOP/s"))
    return points


def show_layer_gemms(info: Any = None) -> None:
    """Figure and Markdown table of :func:`layer_gemm_points`: the GEMM model beside measured numbers.

    Chapter: "A throughput model built from hardware", section "Measured"."""
    from .. import views

    views.show(layer_gemm_points(info), title="16-bit GEMMs: the model beside measurements",
               model_label="model (gemm_time)")

