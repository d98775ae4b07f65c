"""Views: one call per measuring section of the chapter (:func:`show_bandwidth`, :func:`show_l2_sweep`,
:func:`show_capacity`) and the points they and the ZeRO cell show (:func:`bandwidth_points`,
:func:`zero_points`): measured here when the GPU can, else recorded results, else published ones, always
beside the model, through :mod:`ampere.views`.

Chapter: *HBM and the memory hierarchy* (book/hbm.ipynb). matplotlib (and, through the measurements, torch)
is imported only inside the functions that draw or measure.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .. import check, memory, specs
from .common import GB, GiB, MiB, _catalogue, _info, _records
from .l2_model import _l2_bandwidth, l2_sweep_model
from .coalescing import warp_request
from .measure import Capacity, measure_bandwidth, measure_capacity, measure_l2_sweep, measure_strided_copy
from .published import _STREAM_FIGURES, L2Sweep, published_l2_sweeps, published_stream, zero_figure1
from .records import _bandwidth_rows, sweep_rows

#: Kernels shown for each published STREAM record (gpu-benches' init is our write).
_VIEW_KERNELS = ("read", "write", "scale", "triad")


def bandwidth_points(info: Any = None, measured: Sequence[Mapping[str, Any]] | None = None) -> list[Any]:
    """The bandwidth section's rows: each kernel's bytes/s beside the datasheet DRAM bandwidth (the model).

    Rows come in the book's order of evidence: ``measured`` (records of :func:`measure_bandwidth` on this
    machine's GPU), then results recorded on real GPUs (``results.records(benchmark="hbm",
    kind="measured")``), then the published STREAM measurements of gpu-benches for the GPUs of the catalogue
    (A100 80GB and 40GB, H200). Values in GB/s; the model of a GPU outside the catalogue is left empty.
    Chapter: *HBM and the memory hierarchy*, "Measured bandwidth".
    """
    from .. import results, views

    info = _info(info)
    measured = _records("measured", measured, allow_none=True)
    pts = []
    if measured:
        spec = getattr(info, "spec", None)
        gpu = getattr(info, "spec_name", None) or (info.label() if info is not None else "this GPU")
        for row in _bandwidth_rows(measured, "measured"):
            pts.append(views.Point(f"{row.kernel} ({row.engine})", gpu,
                                   spec.hbm_bytes_per_s / 1e9 if spec else None, row.bytes_per_s / 1e9, "GB/s",
                                   kind="measured", source="measured here"))
    for rec in results.records(benchmark="hbm", kind="measured"):
        if rec.params.get("experiment") != "bandwidth" or "bytes_per_s" not in rec.figures:
            continue
        spec = _catalogue(rec.gpu)
        pts.append(views.point(rec, "bytes_per_s", f"{rec.params.get('kernel')} ({rec.params.get('engine')})",
                               spec.hbm_bytes_per_s / 1e9 if spec else None, "GB/s", scale=1e-9))
    for rec in published_stream():
        spec = _catalogue(rec.gpu)
        if spec is None:
            continue
        for kernel in _VIEW_KERNELS:
            pts.append(views.point(rec, _STREAM_FIGURES[kernel], kernel, spec.hbm_bytes_per_s / 1e9, "GB/s"))
    return pts


def _other_stream_table() -> str:
    """Published STREAM figures of GPUs outside the catalogue (no datasheet model here), as Markdown."""
    from .. import tables, views

    rows = [{"GPU": rec.gpu, **{f"{k} (GB/s)": rec.figure(_STREAM_FIGURES[k]) for k in _VIEW_KERNELS},
             "source": views.source_text(rec)} for rec in published_stream() if _catalogue(rec.gpu) is None]
    return tables.markdown_table(rows) if rows else ""


def show_bandwidth(info: Any, *, measure: bool | None = None) -> list[Any]:
    """The "Measured bandwidth" section in one call: measure the kernels when ``info`` is a CUDA GPU (or
    ``measure`` says so), then show every row of :func:`bandwidth_points` as a figure and a Markdown table,
    each number with its source and its ratio to the datasheet bandwidth; published figures of GPUs outside
    the catalogue follow in a dropdown. Returns the points shown. Chapter: *HBM*, "Measured bandwidth".
    """
    from .. import tables, views

    info = _info(info)
    run = getattr(info, "backend", "cpu") == "cuda" if measure is None else check.boolean("measure", measure)
    measured = measure_bandwidth(quick=True) if run else None
    pts = bandwidth_points(info, measured)
    views.show(pts, title="STREAM-like kernels against the datasheet DRAM bandwidth",
               model_label="datasheet", real_label="reached", digits=0)
    other = _other_stream_table()
    if other:
        tables.show_md("```{dropdown} Published STREAM figures of other GPUs (not in the catalogue)\n"
                       + other + "\n```")
    return pts


def _sweep_points(sweeps: Sequence[L2Sweep]) -> list[Any]:
    """Per sweep: L2 plateau vs the theoretical L2 bandwidth, DRAM plateau vs the datasheet, knee vs L2 size."""
    from .. import views

    pts = []
    for sw in sweeps:
        k = sw.knee()
        spec = _catalogue(sw.gpu)
        kind = "measured" if sw.record is None else ("recorded" if sw.record.kind == "measured" else "published")
        l2_model = _l2_bandwidth(spec)[0] / 1e12 if spec else None
        pts.append(views.Point("L2 plateau", sw.gpu, l2_model, k.l2_plateau_bytes_per_s / 1e12, "TB/s",
                               kind=kind, source=sw.label))
        pts.append(views.Point("DRAM plateau", sw.gpu, spec.hbm_bytes_per_s / 1e12 if spec else None,
                               k.dram_plateau_bytes_per_s / 1e12, "TB/s", kind=kind, source=sw.label))
        if k.visible:
            pts.append(views.Point("knee", sw.gpu, sw.l2_bytes / MiB, k.knee_bytes / MiB, "MiB", kind=kind,
                                   source=sw.label))
    return pts


def _recorded_sweeps() -> list[L2Sweep]:
    """L2 sweeps of results recorded on real GPUs (``ampere/data/hbm-*.json``)."""
    from .. import results, views

    out = []
    for res in results.recorded(benchmark="hbm"):
        f, y, l2 = sweep_rows(res["records"])
        spec_name = res["device"].get("spec_name") or res["device"].get("name", "?")
        if len(f) >= 3 and (l2 or _catalogue(spec_name)):
            recs = [r for r in results.measured_records(res) if r.params.get("experiment") == "l2_sweep"]
            label = views.source_text(recs[0]) if recs else results.provenance(res)
            out.append(L2Sweep(spec_name, tuple(f), tuple(y), float(l2 or specs.get(spec_name).l2_bytes), label,
                               recs[0] if recs else None))
    return out


def show_l2_sweep(info: Any, *, measure: bool | None = None) -> list[L2Sweep]:
    """The "L2 working-set sweep" section in one call: sweep this GPU when ``info`` is a CUDA GPU (or
    ``measure`` says so), then draw every sweep there is (measured here, recorded, published) over the
    two-level model of its GPU, and tabulate plateaus and knee against the model with their sources.
    Returns the sweeps shown. Chapter: *HBM*, "The L2 working-set sweep".
    """
    import matplotlib.pyplot as plt
    import numpy as np

    from .. import plots, tables, views

    info = _info(info)
    run = getattr(info, "backend", "cpu") == "cuda" if measure is None else check.boolean("measure", measure)
    sweeps: list[L2Sweep] = []
    if run:
        recs = measure_l2_sweep(quick=True)
        f, y, l2 = sweep_rows(recs)
        spec = getattr(info, "spec", None)
        if len(f) >= 3 and (l2 or spec):
            sweeps.append(L2Sweep(getattr(info, "spec_name", None) or (info.label() if info else "this device"),
                                  tuple(f), tuple(y),
                                  float(l2 or spec.l2_bytes), "measured here"))
    sweeps += _recorded_sweeps() + published_l2_sweeps()
    n = min(4, len(sweeps))  # measured here (on a GPU) + the three published sweeps
    fig, axes = plots.figure("wide", 1, n) if n <= 3 else plots.figure("tall", 2, 2)
    axes = np.atleast_1d(axes).ravel()
    for ax, sw in zip(axes, sweeps[:n]):
        spec = _catalogue(sw.gpu)
        xs = np.geomspace(min(sw.footprints), max(sw.footprints), 200)
        if spec is not None:
            ym, _ = l2_sweep_model(xs, spec, policy="lru", l2_bytes=sw.l2_bytes)
            ax.plot(xs / MiB, np.array(ym) / 1e12, "-", color="#555555", lw=1, label="model (ideal LRU)")
        kind = "measured" if sw.record is None else ("recorded" if sw.record.kind == "measured" else "published")
        ax.plot(np.array(sw.footprints) / MiB, np.array(sw.bytes_per_s) / 1e12, color=plots.gpu_color(sw.gpu),
                **plots.PROVENANCE[kind], label=kind)
        k = sw.knee()
        ax.axvline(sw.l2_bytes / MiB, color="k", lw=0.8, ls=":")
        if k.visible:
            ax.axvline(k.knee_bytes / MiB, color=plots.gpu_color(sw.gpu), lw=1)
        ax.set_xscale("log")
        ax.set_xlabel("footprint (MiB)", fontsize=8)
        ax.set_title(sw.gpu, fontsize=9)
        ax.tick_params(labelsize=8)
    for ax in axes[::3 if n <= 3 else 2]:
        ax.set_ylabel("read bandwidth (TB/s)", fontsize=8)
    axes[n - 1].legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    plt.show()
    tables.show_md(views.table(_sweep_points(sweeps), model_label="model", real_label="sweep", digits=2))
    return sweeps


_FRACTION = "fraction of the aligned copy"


def _pattern(stride: int, offset: int) -> str:
    return f"stride {stride}" if offset == 0 else f"offset {offset} B"


def coalescing_points(info: Any = None, measured: Sequence[Mapping[str, Any]] | None = None) -> list[Any]:
    """The coalescing section's rows: the useful bandwidth of each strided or offset copy as a fraction of the
    aligned unit-stride copy, beside the sector model's efficiency of one warp's request
    (:func:`~ampere.hbm.warp_request`): measured here (records of :func:`measure_strided_copy`), recorded on
    real GPUs, and the Best Practices Guide's V100 offset copy. Chapter: *HBM*, "Coalescing: 32-byte sectors".
    """
    from .. import results, views

    info = _info(info)
    measured = _records("measured", measured, allow_none=True)
    pts = []
    gpu = getattr(info, "spec_name", None) or (info.label() if info is not None else "this GPU")
    for i, r in enumerate(measured or []):
        p, d = r.get("params", {}), r.get("derived", {})
        if p.get("experiment") != "strided_copy":
            continue
        try:
            pattern = (check.positive_int("stride", p["stride"]), check.nonneg_int("offset_bytes", p["offset_bytes"]))
            model, real = d["model_efficiency"], d["ratio_to_aligned"]
        except KeyError as exc:
            raise ValueError(f"measured[{i}] lacks {exc}: not a record of measure_strided_copy") from None
        if pattern == (1, 0):
            continue
        pts.append(views.Point(_pattern(*pattern), gpu, model, real, _FRACTION, kind="measured",
                               source="measured here"))
    for rec in results.records(benchmark="hbm", kind="measured"):
        p = rec.params
        if p.get("experiment") != "strided_copy" or "ratio_to_aligned" not in rec.figures:
            continue
        if (p.get("stride"), p.get("offset_bytes")) == (1, 0):
            continue
        model = warp_request(int(p["stride"]), int(p["offset_bytes"]), 4).efficiency
        pts.append(views.point(rec, "ratio_to_aligned", _pattern(int(p["stride"]), int(p["offset_bytes"])),
                               model, _FRACTION))
    for rec in results.records(benchmark="coalescing", kind="published"):
        if "misaligned_over_aligned_ratio" in rec.figures:
            pts.append(views.point(rec, "misaligned_over_aligned_ratio", "offset copy, offset not a multiple of 32 B",
                                   warp_request(1, 4, 4).efficiency, _FRACTION))
    return pts


def show_coalescing(info: Any, *, measure: bool | None = None) -> list[Any]:
    """The "Coalescing" section in one call: measure the strided and offset copies when ``info`` is a CUDA GPU
    (or ``measure`` says so), then draw the sector model (one warp's request, and the same sectors counted
    once over a long stream) with every real point there is, and tabulate them with their sources.
    Returns the points shown. Chapter: *HBM*, "Coalescing: 32-byte sectors"."""
    import matplotlib.pyplot as plt

    from .. import plots, tables, views

    info = _info(info)
    run = getattr(info, "backend", "cpu") == "cuda" if measure is None else check.boolean("measure", measure)
    pts = coalescing_points(info, measure_strided_copy(quick=True) if run else None)
    fig, (left, right) = plots.figure("wide", 1, 2)
    strides = [1, 2, 4, 8, 16, 32]
    left.plot(strides, [warp_request(s).efficiency for s in strides], "D-", mfc="white", color="#555555",
              label="model: bytes used / sectors x 32 B")
    offsets = list(range(0, 68, 4))
    right.plot(offsets, [warp_request(1, o).efficiency for o in offsets], "D-", mfc="white", color="#555555",
               label="model: one warp's request")
    right.plot(offsets, [warp_request(1, o).stream_efficiency for o in offsets], ":", color="#555555",
               label="model: sectors counted once over the stream")
    seen = set()
    for p in pts:
        ax = left if p.what.startswith("stride") else right
        x = int(p.what.split()[1]) if p.what.split()[1].isdigit() else 4
        lab = None if p.kind in seen else {"measured": "measured here", "recorded": "recorded on a real GPU",
                                           "published": "published"}[p.kind]
        seen.add(p.kind)
        ax.plot([x], [p.real], views._MARKERS[p.kind][0], color=plots.gpu_color(p.gpu), ms=7, ls="none",
                label=lab if ax is right or p.kind != "published" else None)
    left.set_xscale("log", base=2)
    left.set_xticks(strides, [str(s) for s in strides])
    left.set_xlabel("stride between consecutive threads (4-byte elements)")
    right.set_xlabel("offset of the first element (bytes)")
    for ax in (left, right):
        ax.set_ylabel("useful bytes / bytes moved", fontsize=8)
        ax.set_ylim(0, 1.08)
        ax.legend(fontsize=8, loc="lower left" if ax is left else "lower right")
    left.set_title("Strided access (offset 0)", fontsize=9)
    right.set_title("Contiguous access, shifted (stride 1)", fontsize=9)
    fig.tight_layout()
    plt.show()
    if pts:
        tables.show_md(views.table(pts, model_label="model (one request)", real_label="real", digits=2))
    return pts


#: The GPUs of the capacity table.
CAPACITY_GPUS = ("A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB")


def capacity_rows(gpus: Sequence[str] = CAPACITY_GPUS) -> list[dict[str, Any]]:
    """Memory of each GPU three ways, then what the book budgets: physical capacity (GiB: NVIDIA's "80GB" is
    80 GiB), NVML's total (nvidia-smi, MiB), what CUDA exposes (GB, the published capture or the catalogue's
    stated estimate), and :func:`ampere.memory.usable_bytes` (CUDA's total minus the runtime reserve).
    Chapter: *HBM*, "40 GB versus 80 GB"."""
    from .. import views

    rows = []
    for name in check.gpus("gpus", gpus):
        s = specs.get(name)
        fig = s.memory_figure("cuda_total")
        smi = s.nvidia_smi_memory_bytes
        rows.append({"GPU": s.name, "physical (GiB)": s.memory_bytes / GiB,
                     "nvidia-smi total (MiB)": f"{smi // 2**20:,}" if smi else "",
                     "CUDA total (GB)": f"{s.cuda_visible_bytes / GB:.2f}" + (" (estimate)" if s.cuda_memory_estimated
                                                                            else ""),
                     "CUDA / physical": s.cuda_visible_bytes / s.memory_bytes,
                     f"usable with the {memory.RESERVE_FRACTION:.0%} reserve (GB)": memory.usable_bytes(s) / GB,
                     "CUDA total from": (views.cite_label(fig.source) if fig is not None and fig.source
                                         else "catalogue estimate")})
    return rows


def show_capacity(info: Any) -> Capacity | None:
    """The capacity cell of "40 GB versus 80 GB": on a CUDA GPU, what the driver exposes here beside the
    catalogue's physical capacity and published CUDA total (a measurement); then, on every machine, the
    table of :func:`capacity_rows`. Chapter: *HBM*, "40 GB versus 80 GB"."""
    from .. import tables

    info = _info(info)
    cap = None
    if getattr(info, "backend", "cpu") == "cuda":
        cap = measure_capacity()
        spec = getattr(info, "spec", None)
        published = spec.cuda_memory_bytes if spec is not None else None
        tables.show_md(tables.markdown_table([{
            "GPU": cap.device, "CUDA total here (GB)": cap.total_bytes / GB,
            "published CUDA total (GB)": published / GB if published else None,
            "physical (GiB)": cap.datasheet_bytes / GiB if cap.datasheet_bytes else None,
            "CUDA / physical": cap.total_over_datasheet, "free after this context (GB)": cap.free_bytes / GB,
            "source": "measured here"}], formats={"CUDA total here (GB)": ".2f", "published CUDA total (GB)": ".2f",
                                                  "physical (GiB)": ".0f", "CUDA / physical": ".3f",
                                                  "free after this context (GB)": ".2f"}))
    reserve = f"usable with the {memory.RESERVE_FRACTION:.0%} reserve (GB)"
    tables.show_md(tables.markdown_table(capacity_rows(), formats={"physical (GiB)": ".0f", "CUDA / physical": ".3f",
                                                                   reserve: ".2f"}))
    return cap


def zero_points() -> list[Any]:
    """The ZeRO paper's Figure 1 beside :func:`ampere.memory.zero_bytes_per_param` (GB per GPU).

    Chapter: *HBM and the memory hierarchy*, "Training a model".
    """
    from .. import views

    return [views.Point(f"stage {z.stage} ({z.label})", f"{z.params / 1e9:g}B model, {z.data_parallel} GPUs",
                        memory.zero_bytes_per_param(z.stage, z.data_parallel).total * z.params / GB, z.per_gpu_gb,
                        "GB", kind="published", source=f"{views.cite_label(z.source)}, {z.where}")
            for z in zero_figure1()]
