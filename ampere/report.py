"""``python -m ampere report``: is this machine performing like the reference?

Chapter: *The reference check* (book/reference-check.ipynb) explains why identical GPUs differ and how to
read the report; this module is the command.

One command probes the device, runs every measurement of the package that the device supports in a short
mode, and compares each figure with

* the **model** of the same GPU (``ampere.specs``: the datasheet peak the figure is a fraction of),
* the **recorded reference** of the same GPU (``ampere/data/*.json`` and any ``--reference DIR``): the
  median of the recorded values of the same figure, and it **flags** a figure more than 10 % below it
  (NVIDIA reports an 8-12 % throughput gap between partner clusters and its reference architecture with
  identical GPUs [seed004]: a 10 % threshold separates such a gap from run-to-run noise),
* recorded values of **other GPUs** (what the same figure is on an H200, an A100 ...).

Measurements are *probes*: named entries of :data:`PROBES`, each importing its chapter module lazily and
saying "not available in this version" (module or function missing) or "not supported on this device"
(capability missing) instead of failing. Outputs: ``report.json`` (schema ``ampere-result/1``, benchmark
``report``, one record per figure with its raw samples) and a self-contained ``report.html`` (inline CSS,
figures as base64 PNG), both written atomically. On a CPU nothing is measured and the model-only report
is written in seconds.

A *figure* (the unit everything here compares) is a dict::

    {"probe": "matmul", "key": "matmul/bf16/n8192", "label": "BF16 matmul 8192^3", "value": 702.4,
     "unit": "TFLOP/s", "model": 989.4, "model_label": "dense BF16 tensor peak", "higher_is_better": True,
     "measurement": {...}}   # optional, ampere.timing.Measurement.to_dict()
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import html
import importlib
import io
import math
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TextIO

from . import specs

__all__ = [
    "FLAG_THRESHOLD", "TIME_BUDGET_S", "Probe", "PROBES", "probe_names", "select_probes", "plan",
    "figures_from_result", "recorded_figures", "load_references", "compare", "config_differences",
    "summary_rows", "model_rows", "recorded_rows", "draw_comparison", "draw_model", "draw_recorded",
    "comparison_figure", "model_figure", "recorded_figure", "mig_scale", "render_html", "write_text_atomic",
    "check_output_folder", "run", "main", "Progress", "variation_rows", "gap_cost", "REFERENCE_GPUS",
    "Reference", "reference_table", "reference_rows", "figure_unit", "published_figures", "key_label",
    "key_model", "reference_points", "show_references", "claims_rows", "GAP_PRICE_QUOTE",
]

#: A figure more than this fraction below the recorded reference of the same GPU is flagged.
FLAG_THRESHOLD = 0.10
#: Default time budget of the whole run on a GPU (the issue asks for at most 3 minutes).
TIME_BUDGET_S = 170.0
#: GPU used for the model-only report when the machine has no catalogued GPU.
MODEL_FALLBACK_GPU = "A100-SXM4-80GB"
#: GPUs whose published figures form the reference table of the chapter (A100 first, then Hopper).
REFERENCE_GPUS: tuple[str, ...] = ("A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-80GB", "H100-SXM5-80GB",
                                   "H200-SXM-141GB")

# ---------------------------------------------------------------------------------------------------------
# Progress bar (plain text on stderr, no dependency)
# ---------------------------------------------------------------------------------------------------------


class Progress:
    """A one-line text progress bar: ``[#####-----] 3/8  42 s  matmul bf16 8192^3``.

    On a terminal the line is redrawn in place; otherwise (logs, notebooks, tests) one line per step.
    """

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 24) -> None:
        self.total = max(int(total), 1)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.t0 = time.monotonic()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def line(self, text: str) -> str:
        filled = round(self.width * min(self.done, self.total) / self.total)
        bar = "#" * filled + "-" * (self.width - filled)
        return f"[{bar}] {min(self.done, self.total)}/{self.total} {time.monotonic() - self.t0:5.0f} s  {text}"

    def update(self, text: str, advance: int = 0) -> None:
        self.done += advance
        out = self.line(text)
        if self._tty:
            self.stream.write("\r" + out[:120].ljust(120))
        else:
            self.stream.write(out + "\n")
        self.stream.flush()

    def close(self, text: str = "done") -> None:
        self.done = self.total
        self.update(text)
        if self._tty:
            self.stream.write("\n")
            self.stream.flush()


# ---------------------------------------------------------------------------------------------------------
# Figures from results (fresh or recorded): one extractor per benchmark
# ---------------------------------------------------------------------------------------------------------

_MATMUL_LABEL = {"fp64": "FP64", "fp32": "FP32", "tf32": "TF32", "bf16": "BF16", "fp16": "FP16"}


def _model_precision(spec: specs.GPUSpec | None, precision: str) -> str | None:
    """Which peak a matmul of ``precision`` is measured against (``gemm.peak_precision_for``: FP64
    GEMMs run on the FP64 tensor cores where they exist); None without a catalogued GPU."""
    if spec is None:
        return None
    from .gemm import peak_precision_for

    return peak_precision_for(spec, precision)


def _peak_label(precision: str) -> str:
    """``"dense BF16 tensor peak"``, ``"dense FP64 tensor-core peak"``, ``"dense FP32 CUDA-core peak"``."""
    if precision == "fp64_tc":
        return "dense FP64 tensor-core peak"
    kind = "tensor" if precision in specs.TENSOR_PRECISIONS else "CUDA-core"
    return f"dense {precision.upper()} {kind} peak"


def _matmul_figures(records: Iterable[dict[str, Any]], spec: specs.GPUSpec | None) -> list[dict[str, Any]]:
    """Figures of matmul records (``architecture.matmul_sweep`` records, fresh or recorded).

    TFLOP/s are recomputed from the raw samples (median) so that fresh and recorded figures are derived
    the same way.
    """
    from .timing import Measurement

    out = []
    for rec in records:
        p, n = rec["precision"], int(rec["n"])
        m = Measurement.from_dict(rec["measurement"])
        flops = float(rec.get("flops", 2.0 * n**3))
        mp = _model_precision(spec, p)
        out.append({
            "probe": "matmul", "key": f"matmul/{p}/n{n}", "label": f"{_MATMUL_LABEL.get(p, p)} matmul {n}^3",
            "value": m.rate(flops) / 1e12, "unit": "TFLOP/s", "higher_is_better": True,
            "model": spec.peak_flops(mp) / 1e12 if mp else None,
            "model_label": _peak_label(mp) if mp else None,
            "measurement": rec["measurement"],
        })
    return out


def _sparsity_figures(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Speedup of 2:4 sparse over dense ``F.linear`` per shape (``ampere.sparsity.sweep_table``)."""
    from . import sparsity

    out = []
    for row in sparsity.sweep_table(result):
        if row["backend"] == "torch.sparse CSR":
            continue
        shape = row["shape"].split(" (")[0]
        out.append({
            "probe": "sparse-2to4", "key": f"sparse-2to4/{row['dtype']}/{row['backend']}/{shape}",
            "label": f"2:4 speedup {row['dtype']} {shape} ({row['backend']})", "value": row["speedup"],
            "unit": "x", "higher_is_better": True, "model": row["model_bound"],
            "model_label": "roofline bound of the 2:4 speedup" if row["model_bound"] else None,
        })
    return out


def _generic_figures(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Records that already are figures (``report`` results, and any benchmark that writes key/value)."""
    out = []
    for rec in result["records"]:
        if isinstance(rec, dict) and isinstance(rec.get("key"), str) and isinstance(rec.get("value"), (int, float)):
            fig = {k: rec.get(k) for k in ("probe", "key", "label", "value", "unit", "model", "model_label",
                                             "higher_is_better", "flaggable", "measurement")}
            if fig["flaggable"] is None:
                del fig["flaggable"]
            fig["probe"] = fig["probe"] or rec["key"].split("/")[0]
            fig["label"] = fig["label"] or rec["key"]
            fig["unit"] = fig["unit"] or ""
            fig["higher_is_better"] = True if fig["higher_is_better"] is None else bool(fig["higher_is_better"])
            out.append(fig)
    return out


def _spec_of(result: dict[str, Any]) -> specs.GPUSpec | None:
    dev = result["device"]
    if dev.get("backend") not in (None, "cuda"):
        return None
    if dev.get("spec_name"):
        with contextlib.suppress(ValueError):
            return specs.get(dev["spec_name"])
    return specs.match(dev.get("name"))


def figures_from_result(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparable figures a result holds, whatever benchmark wrote it.

    ``report`` results (and any result whose records carry ``key``/``value``) are read as they are;
    ``matmul`` (*Architecture* chapter), ``hbm`` (*HBM* chapter) and ``sparsity`` (*2:4 sparsity* chapter)
    records are converted.
    A benchmark whose module is missing, or whose records cannot be read, gives no figures.
    """
    bench = result.get("benchmark")
    try:
        if bench == "matmul":
            return _matmul_figures(result["records"], _spec_of(result))
        if bench == "sparsity":
            return _sparsity_figures(result)
        if bench == "hbm":
            return _hbm_result_figures(result)
    except (ImportError, KeyError, TypeError, ValueError):
        return []
    return _generic_figures(result)


def _gpu_id(device: dict[str, Any]) -> str:
    """Which GPU a result comes from: the catalogue name, else the driver's name; a MIG slice is its own GPU."""
    who = device.get("spec_name") or device.get("name") or device.get("backend", "?")
    if device.get("mig_instance"):
        who = f"{who} MIG {device['mig_instance']}"
    return str(who)


def recorded_figures(results_list: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Figures of recorded results (GPU results only), each with ``gpu``, ``provenance``, ``created_utc``."""
    from .results import provenance

    out = []
    for res in results_list:
        if res["device"].get("backend") != "cuda":
            continue
        for fig in figures_from_result(res):
            fig = dict(fig)
            fig.pop("measurement", None)
            fig.update({"gpu": _gpu_id(res["device"]), "provenance": provenance(res),
                        "created_utc": res["created_utc"], "file": res.get("_file")})
            out.append(fig)
    return out


#: published STREAM-type kernels whose bytes are counted as the HBM probe counts them (every load and store)
_STREAM_KERNELS = ("read", "write", "scale", "triad")


def published_figures(gpus: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Published measurements of the quantities the report measures, as reference figures.

    Same form as :func:`recorded_figures` (``key``, ``value``, ``gpu``, ``provenance``), so that
    :func:`compare` takes them as references beside the recorded results: square fixed-shape matmuls
    (``matmul/<precision>/n<n>``), STREAM-type DRAM kernels (``hbm/<kernel>``) and 8-GPU all-reduce bus
    bandwidth at 256 MiB and above (``allreduce/n8/<bytes>``). Chapter: *The reference check*.
    """
    from . import results
    from .views import source_text

    out = []
    for rec in results.records(kind="published"):
        if gpus is not None and rec.gpu not in gpus:
            continue
        label = "published: " + source_text(rec)
        p = rec.params
        if rec.benchmark == "matmul" and p.get("method") == "fixed" and p.get("data", "randn") == "randn":
            m, n, k = p.get("m"), p.get("n"), p.get("k")
            fig = f"{p.get('precision')}_tflop_per_s"
            if m and m == n == k and fig in rec.figures:
                out.append({"key": f"matmul/{p['precision']}/n{m}", "value": float(rec.figures[fig]),
                            "gpu": rec.gpu, "provenance": label, "created_utc": rec.date})
        elif rec.benchmark == "stream":
            for kernel in _STREAM_KERNELS:
                fig = f"{kernel}_gb_per_s"
                if fig in rec.figures:
                    out.append({"key": f"hbm/{kernel}", "value": float(rec.figures[fig]), "gpu": rec.gpu,
                                "provenance": label, "created_utc": rec.date})
        elif rec.benchmark == "all-reduce" and p.get("gpus") == 8 and p.get("nodes", 1) == 1:
            # nccl-tests' large-message bus bandwidth (the plateau the report's 256 MiB probe sits on)
            size = p.get("size_bytes", p.get("max_size_bytes"))
            if "busbw_gb_per_s" in rec.figures and (size is None or size >= _ALLREDUCE_BYTES):
                out.append({"key": f"allreduce/n8/{_ALLREDUCE_BYTES}", "value": float(rec.figures["busbw_gb_per_s"]),
                            "gpu": rec.gpu, "provenance": label, "created_utc": rec.date})
    return out


def key_label(key: str) -> str:
    """A reader's name for a report figure key: ``matmul/bf16/n8192`` -> "BF16 matmul 8192³"."""
    parts = key.split("/")
    if parts[0] == "matmul" and len(parts) == 3:
        return f"{_MATMUL_LABEL.get(parts[1], parts[1])} matmul {parts[2][1:]}³"
    if parts[0] == "hbm" and len(parts) == 2:
        return f"DRAM bandwidth, {parts[1]} kernel"
    if parts[0] == "allreduce" and len(parts) == 3:
        return f"all-reduce busbw, {parts[1][1:]} GPUs, {int(parts[2]) >> 20} MiB"
    return key


def key_model(key: str, gpu: str) -> tuple[float | None, str]:
    """The model of a report figure on a catalogue GPU, in the figure's unit, and what it is."""
    spec = specs.match(gpu) if gpu not in specs.names() else specs.get(gpu)
    if spec is None:
        return None, ""
    parts = key.split("/")
    if parts[0] == "matmul":
        mp = _model_precision(spec, parts[1])
        return (spec.peak_flops(mp) / 1e12, _peak_label(mp)) if mp else (None, "")
    if parts[0] == "hbm":
        return spec.hbm_bytes_per_s / 1e9, f"datasheet {spec.memory_type} bandwidth"
    if parts[0] == "allreduce":
        model, label = _link_model(spec)
        return (model / 1e9 if model else None), label or ""
    return None, ""


def reference_points(gpus: Sequence[str] = REFERENCE_GPUS,
                     recorded: Sequence[dict[str, Any]] | None = None) -> list[Any]:
    """The references a report on each of ``gpus`` is compared with, as :class:`ampere.views.Point` rows:
    recorded results first, then published figures, each beside its model. Chapter: *The reference check*."""
    from . import results, views

    recorded = recorded_figures(results.recorded()) if recorded is None else list(recorded)
    rows = [dict(r, kind="recorded") for r in recorded if r["gpu"] in gpus and r["key"] in
            {f["key"] for f in published_figures(gpus)} | {r["key"] for r in recorded}]
    rows += [dict(r, kind="published") for r in published_figures(gpus)]
    order = {g: i for i, g in enumerate(gpus)}
    rows.sort(key=lambda r: (r["key"].split("/")[0], order.get(r["gpu"], 99), r["key"], r["kind"] != "recorded"))
    points = []
    for r in rows:
        model, _ = key_model(r["key"], r["gpu"])
        src = r["provenance"].removeprefix("published: ")
        points.append(views.Point(key_label(r["key"]), r["gpu"], model=model, real=float(r["value"]),
                                  unit="TFLOP/s" if r["key"].startswith("matmul") else "GB/s",
                                  kind=r["kind"], source=src))
    return points


def show_references(gpus: Sequence[str] = REFERENCE_GPUS) -> None:
    """The chapter's reference table: for every figure the report measures, the recorded and published
    values it is compared with on each reference GPU, as a share of that GPU's model (figure + table)."""
    import matplotlib.pyplot as plt

    from . import plots, views
    from .tables import show_md

    points = reference_points(gpus)
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
    show_md(views.table(points, model_label="model", real_label="reference"))


def load_references(folder: str | os.PathLike[str] | None = None, bundled: bool = True) -> list[dict[str, Any]]:
    """Recorded results to compare with: the package's ``ampere/data`` (``bundled``) and ``folder``'s JSON.

    Files that are not valid results raise ``ValueError`` naming the file.
    """
    from . import results

    out = list(results.recorded()) if bundled else []
    if folder is not None:
        folder = Path(folder)
        if not folder.is_dir():
            raise ValueError(f"reference folder {str(folder)!r} does not exist or is not a folder")
        for path in sorted(folder.glob("*.json")):
            res = results.load(path)
            res["_file"] = path.name
            out.append(res)
    return out


# ---------------------------------------------------------------------------------------------------------
# The comparison: model, reference of the same GPU, other GPUs
# ---------------------------------------------------------------------------------------------------------


def compare(figures: Sequence[dict[str, Any]], gpu: str, recorded: Sequence[dict[str, Any]],
            threshold: float = FLAG_THRESHOLD) -> list[dict[str, Any]]:
    """Compare measured ``figures`` of ``gpu`` with their model and with ``recorded`` figures.

    For each figure: ``pct_of_model`` (value / model); ``reference`` = median of the recorded values of
    the same key on the same GPU (``None`` when nothing is recorded), ``pct_of_reference``, and ``flag``
    = the value falls more than ``threshold`` below the reference (above it, for figures where lower is
    better); ``others``: the same key recorded on other GPUs, with this value's ratio to theirs.
    ``status`` is ``"ok"``, ``"below reference"`` or ``"no reference"``.
    """
    if not 0 < threshold < 1:
        raise ValueError(f"threshold={threshold!r} must be a fraction between 0 and 1 (0.10 = 10 %)")
    by_key: dict[str, list[dict[str, Any]]] = {}
    for r in recorded:
        by_key.setdefault(r["key"], []).append(r)
    rows = []
    for fig in figures:
        value = float(fig["value"])
        model = fig.get("model")
        same = [r for r in by_key.get(fig["key"], []) if r["gpu"] == gpu]
        others = [r for r in by_key.get(fig["key"], []) if r["gpu"] != gpu]
        ref = statistics.median(float(r["value"]) for r in same) if same else None
        higher = fig.get("higher_is_better", True)
        flag = False
        if ref and fig.get("flaggable", True):
            flag = value < (1 - threshold) * ref if higher else value > (1 + threshold) * ref
        other_rows: dict[str, list[float]] = {}
        for r in others:
            other_rows.setdefault(r["gpu"], []).append(float(r["value"]))
        rows.append({
            "key": fig["key"], "probe": fig.get("probe"), "label": fig.get("label", fig["key"]),
            "unit": fig.get("unit", ""), "value": value, "model": model, "model_label": fig.get("model_label"),
            "pct_of_model": 100 * value / model if model else None,
            "reference": ref, "reference_n": len(same),
            "reference_from": sorted({r["provenance"] for r in same}),
            "pct_of_reference": 100 * value / ref if ref else None,
            "flag": bool(flag), "status": "no reference" if ref is None else ("below reference" if flag else "ok"),
            "others": [{"gpu": g, "value": statistics.median(v), "n": len(v),
                        "ratio": value / statistics.median(v) if statistics.median(v) else None}
                       for g, v in sorted(other_rows.items())],
            "warnings": list((fig.get("measurement") or {}).get("warnings") or []),
        })
    return rows


#: Device and software fields that explain why identical GPUs differ (the *Reference check* chapter).
CONFIG_FIELDS: tuple[tuple[str, str], ...] = (
    ("power_limit_w", "power limit (W)"), ("sm_clock_max_hz", "max SM clock (Hz)"),
    ("ecc_enabled", "ECC enabled"), ("pcie_link", "PCIe link"),
    ("mig_enabled", "MIG enabled"), ("mig_instance", "MIG instance"), ("driver_version", "driver"),
    ("cuda_version", "CUDA (torch build)"), ("torch_version", "torch"), ("cudnn_version", "cuDNN"),
    ("nccl_version", "NCCL"), ("gpu_count", "GPUs in the machine"), ("cpu_name", "CPU"),
)


def config_differences(device: dict[str, Any], references: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fields of ``device`` that differ from the recorded results of the same GPU (``references``).

    One row per field and differing value: the prime suspects when a figure is below its reference.
    """
    gpu = _gpu_id(device)
    rows = []
    for res in references:
        if res["device"].get("backend") != "cuda" or _gpu_id(res["device"]) != gpu:
            continue
        for name, label in CONFIG_FIELDS:
            mine, theirs = device.get(name), res["device"].get(name)
            if mine != theirs:
                rows.append({"field": label, "this machine": mine, "reference": theirs,
                             "reference result": res.get("_file") or res["created_utc"]})
    return rows


def summary_rows(comparisons: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Printable rows (strings) of :func:`compare`'s output, as the HTML and the chapter show them."""
    rows = []
    for c in comparisons:
        def fmt(v: float | None, spec: str = ".1f") -> str:
            return "-" if v is None else format(v, spec)

        others = "; ".join(f"{o['gpu']}: {o['value']:.1f} ({o['ratio']:.2f}x)" if o["ratio"] else o["gpu"]
                           for o in c["others"]) or "-"
        rows.append({
            "figure": c["label"], "measured": f"{c['value']:.2f} {c['unit']}",
            "model": "-" if c["model"] is None else f"{c['model']:.1f} {c['unit']}",
            "% of model": fmt(c["pct_of_model"]),
            "reference": "-" if c["reference"] is None else f"{c['reference']:.2f} (n={c['reference_n']})",
            "% of reference": fmt(c["pct_of_reference"]),
            "status": ("FLAG: " if c["flag"] else "") + c["status"], "other GPUs (recorded)": others,
        })
    return rows


def model_rows(gpu: str | specs.GPUSpec) -> list[dict[str, str]]:
    """What the model of ``gpu`` predicts for every figure kind of the report (the model-only report)."""
    from .views import cite_label

    spec = specs.get(gpu)
    rows = []
    for p in ("fp64", "fp32", "tf32", "bf16", "fp16"):
        mp = _model_precision(spec, p)
        if mp is None:
            rows.append({"figure": f"{_MATMUL_LABEL[p]} matmul", "model": "not supported",
                         "source": cite_label(spec.source("fma_per_clk_per_sm"))})
            continue
        sparse = (f", {spec.peak_flops(mp, True) / 1e12:.1f} with 2:4 sparsity"
                  if spec.supports(mp, sparse=True) else "")
        rows.append({"figure": f"{_MATMUL_LABEL[p]} matmul ({mp})",
                     "model": f"{spec.peak_flops(mp) / 1e12:.1f} TFLOP/s dense{sparse}",
                     "source": cite_label(spec.source("fma_per_clk_per_sm"))})
    rows.append({"figure": "DRAM bandwidth", "model": f"{spec.hbm_bytes_per_s / 1e9:.0f} GB/s ({spec.memory_type})",
                 "source": cite_label(spec.source("hbm_bytes_per_s"))})
    l2 = spec.l2_bytes_per_s
    rows.append({"figure": "L2 capacity / read bandwidth",
                 "model": f"{spec.l2_bytes / 2**20:.0f} MiB" + (f", {l2 / 1e12:.2f} TB/s" if l2 else ""),
                 "source": cite_label(spec.source("l2_bytes"))})
    rows.append({"figure": "NVLink (per direction)",
                 "model": f"{spec.nvlink_bytes_per_s / 2e9:.0f} GB/s" if spec.nvlink_bytes_per_s else "none",
                 "source": cite_label(spec.source("nvlink_bytes_per_s"))})
    rows.append({"figure": "PCIe (per direction)", "model": f"{spec.pcie_bytes_per_s / 1e9:.1f} GB/s "
                 f"(Gen{spec.pcie_generation} x16)", "source": cite_label(spec.source("pcie_generation"))})
    return rows


# ---------------------------------------------------------------------------------------------------------
# Why identical GPUs differ: published pairs and model factors (the chapter's table)
# ---------------------------------------------------------------------------------------------------------

#: Published measurements that differ from a matching one in one factor (or, where said, in several at
#: once: "confounded"). Each pair names two records of ``ampere/data/published/matmul.json``; ``{m_w}``,
#: ``{r_w}`` (power limits, W) and ``{m_gbs}``, ``{r_gbs}`` (HBM GB/s) in a factor are read from ``ampere.specs``
#: for the GPUs of the measured and the reference record.
_PUBLISHED_PAIRS: tuple[dict[str, str], ...] = (
    {"factor": "form factor: PCIe {m_w} W vs SXM4 {r_w} W (confounded: the two runs also differ in HBM "
               "bandwidth, {m_gbs} vs {r_gbs} GB/s, and in software version)",
     "what": "best BF16 matmul of a shape search",
     "reference": "mamf-a100-sxm4-80gb-bf16", "measured": "mamf-a100-pcie-80gb-bf16"},
    {"factor": "input data (all zeros vs random normal)", "what": "FP16 matmul 8192^3 on an A100 (cuBLAS)",
     "reference": "he2024-a100-fp16-8192-zeros", "measured": "he2024-a100-fp16-8192-randn"},
    {"factor": "software and re-measurement (two revisions of one table)", "what": "best BF16 matmul, A100 SXM4",
     "reference": "mamf-a100-sxm4-80gb-bf16", "measured": "mamf-v1-a100-sxm4-80gb-bf16"},
)


def _published_matmul(record_id: str) -> tuple[float, Any]:
    """(TFLOP/s, record) of a published matmul record, by id."""
    from . import gemm, results

    for rec in results.records(benchmark="matmul", kind="published"):
        if rec.id == record_id:
            return gemm.matmul_tflops(rec), rec
    raise ValueError(f"no published matmul record {record_id!r} in ampere/data/published")


def variation_rows() -> list[dict[str, Any]]:
    """Factors that make identical GPUs differ, each with a magnitude the package can show.

    Published pairs (same GPU family, one factor changed) and model factors (a MIG 7g instance has 98 of
    the 108 SMs; the H100's tensor peaks assume 1830 MHz, not its 1980 MHz boost clock). ``ratio`` is the
    lower figure over the higher one; published pairs also give ``measured_tflops`` and ``reference_tflops``.
    Chapter: *The reference check*, "Why identical hardware differs".
    """
    from .views import source_text

    rows = []
    for pair in _PUBLISHED_PAIRS:
        ref, ref_rec = _published_matmul(pair["reference"])
        meas, meas_rec = _published_matmul(pair["measured"])
        cited = source_text(meas_rec) if meas_rec.source == ref_rec.source else \
            f"{source_text(meas_rec)}; {source_text(ref_rec)}"
        m_spec, r_spec = specs.get(meas_rec.gpu), specs.get(ref_rec.gpu)
        factor = pair["factor"].format(m_w=m_spec.tdp_w, r_w=r_spec.tdp_w, m_gbs=f"{m_spec.hbm_bytes_per_s / 1e9:.0f}",
                                       r_gbs=f"{r_spec.hbm_bytes_per_s / 1e9:.0f}")
        rows.append({"factor": factor, "example": f"{pair['what']}: {meas:.1f} vs {ref:.1f} TFLOP/s",
                     "ratio": meas / ref, "source": cited, "measured_tflops": meas, "reference_tflops": ref})
    try:
        from . import mig_geometry

        full = specs.get("A100-SXM4-80GB")
        sms = mig_geometry.instance_peaks(full, "7g.80gb").sms
        rows.append({"factor": "MIG mode (the largest instance, 7g.80gb)",
                     "example": f"{sms} of {full.sm_count} SMs: the dense peak of the instance",
                     "ratio": sms / full.sm_count, "source": "model (ampere.mig_geometry)"})
    except (ImportError, AttributeError, ValueError):
        pass
    h100 = specs.get("H100-SXM5-80GB")
    rows.append({"factor": "clock under load (tensor clock vs boost clock)",
                 "example": f"H100 tensor peaks at {h100.tensor_clock_hz / 1e6:.0f} MHz, "
                            f"boost {h100.boost_clock_hz / 1e6:.0f} MHz",
                 "ratio": h100.tensor_clock_hz / h100.boost_clock_hz,
                 "source": "model (ampere.specs; reading the tensor peaks as set by a lower clock is our "
                           "interpretation of the datasheet)"})
    for r in rows:
        r["below"] = 1 - r["ratio"]
        r["flagged at 10 %"] = r["below"] > FLAG_THRESHOLD
    return rows


# ---------------------------------------------------------------------------------------------------------
# The reference table: published figures a reader's report is compared with
# ---------------------------------------------------------------------------------------------------------


#: figure-name ending -> (unit shown, factor from the stored unit to the shown one)
_UNITS: tuple[tuple[str, str, float], ...] = (
    ("_tflop_per_s", "TFLOP/s", 1.0), ("_flop_per_s", "TFLOP/s", 1e-12), ("_gb_per_s", "GB/s", 1.0),
    ("_tb_per_s", "GB/s", 1e3), ("_bytes_per_s", "GB/s", 1e-9), ("_tokens_per_s", "tokens/s", 1.0),
    ("_samples_per_s", "samples/s", 1.0), ("_ms", "ms", 1.0), ("_us", "µs", 1.0), ("_s", "s", 1.0),
    ("_ratio", "×", 1.0), ("_pct", "%", 1.0), ("_hours", "hours", 1.0), ("_minutes", "minutes", 1.0),
)


def figure_unit(name: str) -> tuple[str, float]:
    """(unit to show, factor) for a figure name of a record (``bf16_tflop_per_s`` -> ("TFLOP/s", 1.0))."""
    for suffix, unit, factor in _UNITS:
        if name.endswith(suffix):
            return unit, factor
    return "", 1.0


_IGNORED_PARAMS = {"m", "n", "k", "shape"}


def _quantity(rec: Any, figure: str) -> str:
    """A reader's name for what a published figure measures: benchmark, figure and the params that matter."""
    base = figure
    for suffix, _, _ in _UNITS:
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    params = ", ".join(f"{k} {v}" for k, v in sorted(rec.params.items())
                       if k not in _IGNORED_PARAMS and isinstance(v, (str, int, float)) and not isinstance(v, bool))
    text = f"{rec.benchmark}: {base.replace('_', ' ')}".rstrip(": ")
    return f"{text} ({params})" if params else text


@dataclass(frozen=True)
class Reference:
    """One published quantity on one GPU, with every source that publishes it (its spread)."""

    quantity: str
    gpu: str
    unit: str
    values: tuple[float, ...]
    sources: tuple[str, ...]      # author-year labels with table/figure, one per value

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def spread(self) -> float:
        """(max - min) / median: 0 for a single source."""
        return (max(self.values) - min(self.values)) / self.median if self.median else 0.0


def reference_table(gpus: Sequence[str] | None = REFERENCE_GPUS, benchmarks: Sequence[str] | None = None
                    ) -> list[Reference]:
    """Published figures grouped by quantity and GPU (``ampere/data/published``), with their spread.

    Scalar figures only (sweeps are drawn by their chapters). ``gpus=None`` keeps every GPU.
    Chapter: *The reference check*, "The references".
    """
    from . import results
    from .views import source_text

    groups: dict[tuple[str, str, str], list[tuple[float, str]]] = {}
    for rec in results.records(kind="published"):
        if gpus is not None and rec.gpu not in gpus:
            continue
        if benchmarks is not None and rec.benchmark not in benchmarks:
            continue
        for name, value in rec.figures.items():
            if isinstance(value, (list, tuple)):
                continue
            unit, factor = figure_unit(name)
            groups.setdefault((_quantity(rec, name), rec.gpu, unit), []).append((float(value) * factor,
                                                                                 source_text(rec)))
    order = {g: i for i, g in enumerate(gpus or ())}
    out = [Reference(q, g, u, tuple(v for v, _ in rows), tuple(s for _, s in rows))
           for (q, g, u), rows in groups.items()]
    return sorted(out, key=lambda r: (r.quantity, order.get(r.gpu, len(order)), r.gpu))


def reference_rows(refs: Sequence[Reference]) -> list[dict[str, str]]:
    """Markdown rows of :func:`reference_table` (numbers formatted, spread only where several sources)."""
    def num(v: float) -> str:
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.3g}"

    rows = []
    for r in refs:
        spread = f"{num(min(r.values))}–{num(max(r.values))} ({100 * r.spread:.0f} %)" if len(r.values) > 1 else ""
        rows.append({"quantity": r.quantity, "GPU": r.gpu, "published": f"{num(r.median)} {r.unit}",
                     "sources": str(len(r.values)), "spread": spread, "from": "; ".join(dict.fromkeys(r.sources))})
    return rows


def gap_cost(gpus: int, gap: float, price_per_gpu_hour: float, hours: float = 365 * 24) -> dict[str, float]:
    """What a throughput gap costs a cluster: GPU-hours lost and their price over ``hours`` (a year).

    ``gap`` is the fraction of throughput lost (0.10 for 10 %). Chapter: *The reference check*.
    """
    from . import check

    gpus = check.positive_int("gpus", gpus)
    price_per_gpu_hour = check.positive("price_per_gpu_hour", price_per_gpu_hour)
    hours = check.positive("hours", hours)
    gap = check.real("gap", gap, minimum=0.0)
    if gap >= 1:
        raise ValueError(f"gap={gap!r} must be a fraction in [0, 1) (0.10 = 10 % of throughput lost)")
    lost = gpus * hours * gap
    return {"gpu_hours_lost": lost, "cluster_hours_lost": hours * gap, "dollars": lost * price_per_gpu_hour}


#: The price the chapter's cost arithmetic uses: the seed's 2026 A100 80GB rental range.
GAP_PRICE_QUOTE = "seed003-a100-80gb"


def claims_rows() -> list[dict[str, str]]:
    """The chapter's claims-checked table: the source article's claims about the reference-architecture gap,
    each with a verdict and the evidence the package computes. Chapter: *The reference check*."""
    from . import pricing
    from .views import cite_label

    var = variation_rows()
    quote = pricing.quote(GAP_PRICE_QUOTE)
    week = gap_cost(1000, 0.10, quote.low, hours=7 * 24)
    lo, hi = gap_cost(1000, 0.10, quote.low), gap_cost(1000, 0.10, quote.high)
    config = [r["below"] for r in var if not r["factor"].startswith("input data")]
    src = cite_label("seed004")
    return [
        {"claim": "Partner clusters with identical GPUs train 8-12 % slower than NVIDIA's reference architecture",
         "source": src, "verdict": "reported, not reproducible here",
         "evidence": "single factors of the same size: " + ", ".join(
             f"{r['factor'].split(' (')[0].split(':')[0]} {100 * r['below']:.1f} %" for r in var)},
        {"claim": "A 10 % gap on 1000 accelerators is tens of hours of compute every week", "source": src,
         "verdict": "roughly holds", "evidence": f"{week['gpu_hours_lost']:,.0f} GPU-hours = "
         f"{week['cluster_hours_lost']:.1f} hours of the whole cluster per week"},
        {"claim": "... hundreds of thousands of dollars of lost performance per year", "source": src,
         "verdict": "holds (understated)", "evidence": f"{lo['dollars'] / 1e6:.2f}-{hi['dollars'] / 1e6:.2f} M$ "
         f"per year at {quote.low:.2f}-{quote.high:.2f} $/GPU-hour ({cite_label(quote.source)}); more on H100"},
        {"claim": "The gap comes from configuration (kernel, network, NVLink/InfiniBand, NUMA), not hardware",
         "source": src, "verdict": "consistent",
         "evidence": "power limit, clocks, MIG and software versions move the same silicon by "
                     f"{100 * min(config):.0f}-{100 * max(config):.0f} %"},
        {"claim": "NVIDIA publishes reference architectures for H100, GB200 NVL72 and GB300 NVL72", "source": src,
         "verdict": "not checked here", "evidence": "outside the package; the book's sources cover the DGX A100 "
                                                    "SuperPOD and the DGX H100 BasePOD"},
    ]


# ---------------------------------------------------------------------------------------------------------
# Probes: the measurements the report can run
# ---------------------------------------------------------------------------------------------------------


@dataclass
class ProbeContext:
    """What a probe's ``run`` receives."""

    info: Any  # ampere.device.DeviceInfo
    quick: bool
    progress: Callable[[str], None]
    notes: list[str] = field(default_factory=list)
    deadline: float = math.inf  # time.monotonic() by which the whole report must be done

    def time_left_s(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def spec(self) -> specs.GPUSpec | None:
        return self.info.spec


@dataclass(frozen=True)
class Probe:
    """One measurement of the report.

    ``needs`` lists ``module:function`` targets that must exist ("not available in this version"
    otherwise); ``supported(info)`` returns None when the device can run it, else the reason;
    ``estimate_s(quick)`` is the expected duration on an A100/H100 (the time budget skips what cannot fit).
    """

    name: str
    title: str
    needs: tuple[str, ...]
    supported: Callable[[Any], str | None]
    run: Callable[[ProbeContext], list[dict[str, Any]]]
    estimate_s: Callable[[bool], float]

    def availability(self) -> str | None:
        """None when every needed function exists, else why not ("not available in this version: ...")."""
        for target in self.needs:
            module, _, func = target.partition(":")
            try:
                mod = importlib.import_module(module)
            except ImportError:
                return f"not available in this version ({module} is missing)"
            if func and not callable(getattr(mod, func, None)):
                return f"not available in this version ({module}.{func} is missing)"
        return None


def _needs_cuda(info: Any) -> str | None:
    if getattr(info, "backend", "cpu") != "cuda":
        return "not supported on this device: no CUDA GPU"
    return None


# --- matmul ----------------------------------------------------------------------------------------------

def _matmul_precisions(info: Any) -> tuple[list[str], list[str]]:
    """(precisions to time, notes on those skipped) for this device."""
    spec = info.spec
    chosen, notes = ["fp32", "fp16"], []
    if info.tf32:
        chosen[1:1] = ["tf32"]
    else:
        notes.append("TF32 needs compute capability 8.0+: not timed")
    if info.bf16_tensor:
        chosen.append("bf16")
    else:
        notes.append("BF16 tensor cores need compute capability 8.0+: not timed")
    if spec is not None and spec.supports("fp64_tc"):
        chosen.insert(0, "fp64")
    else:
        notes.append("FP64 matmul is timed only on GPUs with FP64 tensor cores (A100, H100, H200)")
    return chosen, notes


def _run_matmul(ctx: ProbeContext) -> list[dict[str, Any]]:
    from . import architecture

    precisions, notes = _matmul_precisions(ctx.info)
    ctx.notes.extend(f"matmul: {n}" for n in notes)
    sizes = [8192] if ctx.quick else [4096, 8192]

    def show(rec: dict[str, Any]) -> None:
        ctx.progress(f"matmul {rec['precision']} {rec['n']}^3: {rec['tflops']:.1f} TFLOP/s")

    records = architecture.matmul_sweep(sizes, precisions, warmup_s=0.5 if ctx.quick else 1.0,
                                        min_time_s=0.2, max_time_s=1.5 if ctx.quick else 3.0, progress=show)
    return _matmul_figures(records, ctx.spec)


# --- 2:4 sparsity ----------------------------------------------------------------------------------------

def _sparse_supported(info: Any) -> str | None:
    if _needs_cuda(info):
        return _needs_cuda(info)
    if not info.sparse_2to4:
        return "not supported on this device: 2:4 sparse tensor cores need compute capability 8.0+ " \
               "and torch semi-structured sparsity"
    return None


def _run_sparse(ctx: ProbeContext) -> list[dict[str, Any]]:
    from . import sparsity

    ctx.progress("2:4 sparse F.linear (short sweep)")
    result = sparsity.short_run(ctx.info)
    ctx.notes.extend(f"sparse-2to4: {n}" for n in result["notes"])
    return _sparsity_figures(result)


# --- all-reduce across the GPUs of the machine -----------------------------------------------------------

_ALLREDUCE_BYTES = 256 * 2**20


def _allreduce_supported(info: Any) -> str | None:
    if _needs_cuda(info):
        return _needs_cuda(info)
    if info.gpu_count < 2:
        return f"not supported on this device: collectives need 2+ GPUs, this machine has {info.gpu_count}"
    return None


def _link_model(spec: specs.GPUSpec | None) -> tuple[float | None, str | None]:
    """Model of the all-reduce busbw (bytes/s): effective NVLink per direction, or PCIe per direction."""
    if spec is None:
        return None, None
    from . import fabrics

    if spec.nvlink_bytes_per_s and spec.form_factor.startswith("SXM"):
        return fabrics.nvlink_effective_bytes_per_s(spec), "effective NVLink per direction (128-B payloads)"
    return spec.pcie_bytes_per_s, f"PCIe Gen{spec.pcie_generation} x16 per direction"


def _run_allreduce(ctx: ProbeContext) -> list[dict[str, Any]]:
    from . import interconnect
    from .timing import Measurement

    n = min(int(ctx.info.gpu_count), 8)
    ctx.progress(f"all-reduce of {_ALLREDUCE_BYTES >> 20} MiB on {n} GPUs (NCCL)")
    from . import launch

    # the longest launch.spawn can take is launch.max_wall_s(timeout): keep it inside the report's budget
    overhead = launch.max_wall_s(1.0) - 1.0
    timeout = max(20.0, min(120.0, ctx.time_left_s() - overhead))
    run = interconnect.run_collective("all_reduce", [_ALLREDUCE_BYTES], n, backend="nccl",
                                      samples=10 if ctx.quick else 20, timeout_s=timeout)
    model, label = _link_model(ctx.spec)
    out = []
    for i, rec in enumerate(run.records):
        m: Measurement = run.measurement(i)
        out.append({"probe": "allreduce", "key": f"allreduce/n{n}/{rec['size_bytes']}",
                    "label": f"all-reduce busbw, {rec['size_bytes'] >> 20} MiB x {n} GPUs",
                    "value": rec["busbw_bytes_per_s"] / 1e9, "unit": "GB/s", "higher_is_better": True,
                    "model": model / 1e9 if model else None, "model_label": label, "measurement": m.to_dict()})
    return out


# --- HBM and L2 (module ampere.hbm) ----------------------------------------------------------------------

def _hbm_figures(records: Sequence[dict[str, Any]], spec: specs.GPUSpec | None,
                 l2_bytes: float | None = None) -> list[dict[str, Any]]:
    """Figures of ``ampere.hbm`` records (fresh or recorded): bandwidth per kernel, the L2 sweep's plateaus
    and the knee position relative to the L2 the device reports."""
    from . import hbm

    out = []
    for row in hbm.bandwidth_rows(records):
        rec = next(r for r in records if r.get("params", {}).get("kernel") == row["kernel"]
                   and r.get("params", {}).get("experiment") == "bandwidth")
        out.append({"probe": "hbm-copy", "key": f"hbm/{row['kernel']}",
                    "label": f"DRAM {row['kernel']} ({row['engine']}), reads + writes",
                    "value": row["bytes_per_s"] / 1e9, "unit": "GB/s", "higher_is_better": True,
                    "model": spec.hbm_bytes_per_s / 1e9 if spec else None,
                    "model_label": f"datasheet {spec.memory_type} bandwidth" if spec else None,
                    "measurement": rec.get("measurement")})
    f, y, l2 = hbm.sweep_rows(records)
    l2 = l2 or l2_bytes
    if len(f) >= 3 and l2:
        knee = hbm.find_knee(f, y, l2)
        out.append({"probe": "l2-sweep", "key": "l2/plateau", "label": "L2 sweep: plateau inside L2 (torch.sum)",
                    "value": knee["l2_plateau_bytes_per_s"] / 1e9, "unit": "GB/s", "higher_is_better": True,
                    "model": None, "model_label": None})
        out.append({"probe": "l2-sweep", "key": "l2/dram-plateau", "label": "L2 sweep: plateau beyond 2 x L2",
                    "value": knee["dram_plateau_bytes_per_s"] / 1e9, "unit": "GB/s", "higher_is_better": True,
                    "model": spec.hbm_bytes_per_s / 1e9 if spec else None,
                    "model_label": "datasheet DRAM bandwidth" if spec else None})
        if knee["visible"]:
            out.append({"probe": "l2-sweep", "key": "l2/knee", "label": "L2 sweep: knee / reported L2 size",
                        "value": knee["ratio_to_l2"], "unit": "x L2", "higher_is_better": True, "flaggable": False,
                        "model": 1.0, "model_label": "the knee sits at the L2 size"})
    return out


def _hbm_result_figures(result: dict[str, Any]) -> list[dict[str, Any]]:
    return _hbm_figures(result["records"], _spec_of(result), result["device"].get("l2_bytes"))


def _run_hbm_copy(ctx: ProbeContext) -> list[dict[str, Any]]:
    from . import device as _device
    from . import hbm

    kernels = ["copy"] if ctx.quick else ["copy", "scale"]
    ctx.progress(f"DRAM bandwidth: {', '.join(kernels)} (L2 flushed between samples)")
    records = hbm.measure_bandwidth(_device.torch_device(ctx.info), quick=True, kernels=kernels,
                                    max_time_s=2.0)
    return _hbm_figures(records, ctx.spec)


def _run_l2_sweep(ctx: ProbeContext) -> list[dict[str, Any]]:
    from . import device as _device
    from . import hbm

    ctx.progress("L2 working-set sweep (12 footprints, no flush)")
    records = hbm.measure_l2_sweep(_device.torch_device(ctx.info), quick=True, max_time_s=1.0)
    return _hbm_figures(records, ctx.spec, ctx.info.l2_bytes)


#: Every probe the report knows, in the order it runs them.
PROBES: tuple[Probe, ...] = (
    Probe("matmul", "Square matmul per precision (Architecture chapter)", ("ampere.architecture:matmul_sweep",),
          _needs_cuda, _run_matmul, lambda quick: 12.0 if quick else 30.0),
    Probe("hbm-copy", "HBM copy bandwidth (HBM chapter)", ("ampere.hbm:measure_bandwidth", "ampere.hbm:bandwidth_rows"),
          _needs_cuda, _run_hbm_copy, lambda quick: 10.0 if quick else 20.0),
    Probe("l2-sweep", "L2 working-set sweep (HBM chapter)",
          ("ampere.hbm:measure_l2_sweep", "ampere.hbm:find_knee", "ampere.hbm:sweep_rows"),
          _needs_cuda, _run_l2_sweep, lambda quick: 10.0 if quick else 25.0),
    Probe("sparse-2to4", "2:4 sparse matmul (2:4 sparsity chapter)", ("ampere.sparsity:short_run",),
          _sparse_supported, _run_sparse, lambda quick: 20.0),
    Probe("allreduce", "NCCL all-reduce across the GPUs (NVLink chapter)", ("ampere.interconnect:run_collective",),
          _allreduce_supported, _run_allreduce, lambda quick: 30.0 if quick else 45.0),
)


def probe_names() -> list[str]:
    return [p.name for p in PROBES]


def select_probes(only: Sequence[str] | None = None, skip: Sequence[str] | None = None) -> list[Probe]:
    """The probes chosen by ``--only`` and ``--skip`` (unknown names raise ``ValueError``), in run order."""
    known = probe_names()
    for label, names in (("only", only), ("skip", skip)):
        bad = [n for n in (names or []) if n not in known]
        if bad:
            raise ValueError(f"--{label} names unknown probe(s) {bad}; known: {', '.join(known)}")
    chosen = [p for p in PROBES if (not only or p.name in only) and p.name not in (skip or [])]
    return chosen


def plan(info: Any, probes: Sequence[Probe]) -> list[dict[str, Any]]:
    """For each probe: ``status`` "run", "not available" or "not supported", and the reason."""
    rows = []
    for p in probes:
        why = p.availability()
        if why:
            rows.append({"probe": p.name, "title": p.title, "status": "not available", "reason": why})
            continue
        why = p.supported(info)
        rows.append({"probe": p.name, "title": p.title, "status": "not supported" if why else "run",
                     "reason": why or ""})
    return rows


# ---------------------------------------------------------------------------------------------------------
# Output: atomic files, HTML
# ---------------------------------------------------------------------------------------------------------


def check_output_folder(out: str | os.PathLike[str]) -> Path:
    """Create ``out`` if needed and prove it is writable (a temporary file is created and removed).

    Raises ``ValueError`` naming the folder and the reason, before anything is measured.
    """
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe_path = tempfile.mkstemp(prefix=".ampere-report-", suffix=".tmp", dir=folder)
        os.close(fd)
        os.unlink(probe_path)
    except OSError as exc:
        raise ValueError(f"output folder {str(folder)!r} cannot be written: {exc.strerror or exc}") from None
    return folder


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` atomically (``ampere.results.write_atomic``): never a half-written report."""
    from .results import write_atomic

    return write_atomic(path, text)


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.88em}th,td{border:1px solid #ddd;padding:3px 7px;
text-align:left;vertical-align:top}th{background:#f3f3f3}tr.flag td{background:#fde2e1}
.ok{color:#2e7d32}.bad{color:#c62828;font-weight:600}.muted{color:#666;font-size:.9em}
.box{border-left:4px solid #76b900;background:#f7fbef;padding:.5em 1em}.warn{border-left-color:#c62828;
background:#fdf1f0}img{max-width:100%}
"""


def _table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None,
           row_class: Callable[[dict[str, Any]], str] | None = None) -> str:
    if not rows:
        return "<p class='muted'>(none)</p>"
    columns = list(columns or rows[0].keys())
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = []
    for r in rows:
        cls = row_class(r) if row_class else ""
        cells = "".join(f"<td>{html.escape('' if r.get(c) is None else str(r.get(c)))}</td>" for c in columns)
        body.append(f"<tr class='{cls}'>{cells}</tr>" if cls else f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _png_base64(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _agg_figure(size: str = "wide") -> Any:
    """A matplotlib Figure outside pyplot (no global state): safe from scripts and notebooks alike."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from . import plots

    fig = Figure(figsize=plots.SIZES[size])
    FigureCanvasAgg(fig)
    return fig


def draw_comparison(ax: Any, comparisons: Sequence[dict[str, Any]], title: str = "") -> None:
    """Horizontal bars: % of the model per measured figure (red when flagged), the reference as a square."""
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
    """Two panels: dense BF16 (or FP16) tensor peak and DRAM bandwidth of ``gpus``, from ``ampere.specs``."""
    from . import plots

    ax1, ax2 = axes
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


def recorded_rows(recorded: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Printable rows of :func:`recorded_figures`: GPU, figure, value, % of its model, provenance."""
    return [{"GPU": r["gpu"], "figure": r["label"], "value": f"{r['value']:.2f} {r['unit']}",
             "% of model": f"{100 * r['value'] / r['model']:.1f}" if r.get("model") else "-",
             "provenance": r["provenance"]} for r in sorted(recorded, key=lambda r: (r["key"], r["gpu"]))]


def draw_recorded(ax: Any, recorded: Sequence[dict[str, Any]], keys: Sequence[str] | None = None) -> None:
    """Recorded figures of every GPU as % of each GPU's own model: one group of bars per figure key.

    Only figures with a model value are drawn (``keys`` restricts them). The median of several records of
    the same GPU and key is drawn.
    """
    from . import plots

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
    fig = _agg_figure("wide")
    draw_comparison(fig.add_subplot(), comparisons, title)
    fig.tight_layout()
    return fig


def model_figure(gpus: Sequence[str]) -> Any:
    """:func:`draw_model` on a standalone Figure (the model-only report)."""
    fig = _agg_figure("wide")
    draw_model(fig.subplots(1, 2), gpus)
    fig.suptitle("Model (ampere.specs): what each GPU should reach at most", fontsize=10)
    fig.tight_layout()
    return fig


def recorded_figure(recorded: Sequence[dict[str, Any]]) -> Any:
    """:func:`draw_recorded` on a standalone Figure."""
    fig = _agg_figure("wide")
    draw_recorded(fig.add_subplot(), recorded)
    fig.tight_layout()
    return fig


def render_html(result: dict[str, Any], comparisons: Sequence[dict[str, Any]], plan_rows: Sequence[dict[str, Any]],
                recorded: Sequence[dict[str, Any]], config_rows: Sequence[dict[str, Any]] = (),
                images: bool = True) -> str:
    """The self-contained HTML report (inline CSS, figures as base64 PNG)."""
    dev = result["device"]
    esc = html.escape
    gpu = _gpu_id(dev)
    is_gpu = dev.get("backend") == "cuda"
    spec_name = dev.get("spec_name") if is_gpu else None
    flagged = [c for c in comparisons if c["flag"]]
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             f"<title>ampere report: {esc(gpu)}</title><style>{_CSS}</style></head><body>",
             f"<h1>Reference check of {esc(dev.get('name', '?'))}</h1>",
             f"<p class='muted'>python -m ampere report, {esc(result['created_utc'])}; "
             + ", ".join(f"{k} {esc(str(result['versions'].get(k) or '-'))}" for k in ("ampere", "torch", "cuda",
                                                                                     "driver"))
             + f"; {esc(str(result['parameters'].get('elapsed_s', '?')))} s.</p>"]
    if not is_gpu:
        parts.append("<div class='box'><b>Nothing to measure on this machine</b> (no CUDA GPU). This is the "
                     f"model-only report: the model of {esc(MODEL_FALLBACK_GPU)} and the results recorded on "
                     "real GPUs. Run <code>python -m ampere report</code> on a GPU to measure.</div>")
    elif not comparisons:
        parts.append("<div class='box warn'>No figure was measured (see the probes below).</div>")
    else:
        with_ref = [c for c in comparisons if c["reference"] is not None]
        cls = "box warn" if flagged else "box"
        verdict = (f"<b>{len(flagged)} of {len(with_ref)} figures</b> with a recorded reference fall more than "
                   f"{FLAG_THRESHOLD:.0%} below it" if with_ref else
                   "<b>No recorded reference for this GPU yet</b>: the figures are compared with the model only. "
                   "Contribute this report.json to make it the reference (see the Reference check chapter)")
        parts.append(f"<div class='{cls}'>{verdict}. {len(comparisons)} figures measured.</div>")
    parts.append("<h2>Device</h2>")
    dev_rows = [{"field": k, "value": dev.get(k)} for k in (
        "name", "spec_name", "compute_capability", "gpu_count", "memory_bytes", "sm_count", "l2_bytes",
        "sm_clock_max_hz", "power_limit_w", "ecc_enabled", "pcie_link", "mig_enabled", "mig_instance",
        "driver_version", "torch_version",
        "cuda_version", "cudnn_version", "nccl_version", "cpu_name", "cpu_count")]
    parts.append(_table(dev_rows))
    parts.append("<h2>Probes</h2>" + _table(plan_rows, ["probe", "title", "status", "reason"]))
    if comparisons:
        parts.append("<h2>Measured, against the model and the recorded reference</h2>")
        parts.append(f"<p class='muted'>% of model: measured / datasheet peak (or model bound) of "
                     f"{esc(str(spec_name or 'no catalogued GPU'))}. Reference: median of the values recorded on "
                     f"the same GPU; flagged when more than {FLAG_THRESHOLD:.0%} below it.</p>")
        srows = summary_rows(comparisons)
        parts.append(_table(srows, row_class=lambda r: "flag" if r["status"].startswith("FLAG") else ""))
        if images:
            parts.append(f"<img alt='% of model per figure' src='data:image/png;base64,"
                         f"{_png_base64(comparison_figure(comparisons, f'Measured on {gpu}'))}'>")
        noisy = [c for c in comparisons if c["warnings"]]
        if noisy:
            parts.append("<h3>Measurement warnings</h3><ul>" + "".join(
                f"<li>{esc(c['label'])}: {esc('; '.join(c['warnings']))}</li>" for c in noisy) + "</ul>")
    if config_rows:
        parts.append("<h2>Configuration differences with the reference</h2><p class='muted'>Power limits, "
                     "clocks, MIG, driver and library versions explain most gaps between identical GPUs.</p>")
        parts.append(_table(config_rows))
    parts.append(f"<h2>Model of {esc(spec_name or MODEL_FALLBACK_GPU)}</h2>")
    parts.append(_table(model_rows(spec_name or MODEL_FALLBACK_GPU), ["figure", "model", "source"]))
    if images and not comparisons:
        gpus = ["A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "RTX-A6000", "RTX-A2000-12GB"]
        parts.append("<img alt='model of catalogue GPUs' src='data:image/png;base64,"
                     f"{_png_base64(model_figure(gpus))}'>")
    parts.append("<h2>Recorded results (all GPUs)</h2>")
    if recorded:
        parts.append(_table(recorded_rows(recorded)))
        if images and any(r.get("model") for r in recorded):
            parts.append(f"<img alt='recorded figures as % of their model' src='data:image/png;base64,"
                         f"{_png_base64(recorded_figure(recorded))}'>")
    else:
        parts.append("<p class='muted'>No GPU results are recorded in this version of the package yet.</p>")
    if result["notes"]:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in result["notes"]) + "</ul>")
    parts.append("<p class='muted'>Written by the companion package of <i>Ampere by Experiment</i>; the "
                 "chapter <i>The reference check</i> explains every number.</p></body></html>\n")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------------------


@dataclass
class ReportOutcome:
    """What :func:`run` returns: the result written to report.json, the comparisons and the paths."""

    result: dict[str, Any]
    comparisons: list[dict[str, Any]]
    plan: list[dict[str, Any]]
    json_path: Path
    html_path: Path
    record_path: Path | None = None  # the copy saved for contribution (``record=``)


def mig_scale(figures: list[dict[str, Any]], info: Any) -> tuple[list[dict[str, Any]], str | None]:
    """Inside a MIG instance, scale each figure's model to the slice (``ampere.mig_geometry.instance_peaks``).

    Compute figures (matmul) scale with the slice's SMs, memory figures (DRAM, L2 plateaus) with its
    memory slices; ratios (speedups, the knee) do not change. Returns (figures, note or None).
    """
    spec = info.spec
    if not getattr(info, "mig_instance", None) or spec is None:
        return figures, None
    try:
        from . import mig_geometry

        peaks = mig_geometry.instance_peaks(spec, info.mig_instance)
    except (ImportError, AttributeError, ValueError) as exc:
        return figures, (f"inside MIG instance {info.mig_instance}: the model is the full GPU's "
                         f"({type(exc).__name__}: {exc})")
    compute = peaks.sms / spec.sm_count
    memory = peaks.hbm_bytes_per_s / spec.hbm_bytes_per_s
    out = []
    for f in figures:
        f = dict(f)
        if f.get("model") is not None and f["probe"] in ("matmul", "hbm-copy", "l2-sweep") and f.get("unit") != "x L2":
            f["model"] *= compute if f["probe"] == "matmul" else memory
            f["model_label"] = f"{f.get('model_label')} x MIG {info.mig_instance} share"
        out.append(f)
    return out, (f"inside MIG instance {info.mig_instance}: models scaled to {peaks['sms']} of {spec.sm_count} SMs "
                 f"and {memory:.3g} of the memory bandwidth")


def _release_gpu_memory() -> None:
    """Return cached blocks to the driver between probes (the all-reduce runs in other processes)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            if torch.cuda.is_available():
                torch.cuda.empty_cache()


def _measurement_ok(fig: dict[str, Any]) -> bool:
    m = fig.get("measurement")
    return m is None or (isinstance(m, dict) and bool(m.get("samples_s")))


def run(out: str | os.PathLike[str], only: Sequence[str] | None = None, skip: Sequence[str] | None = None,
        quick: bool = False, time_budget_s: float = TIME_BUDGET_S, info: Any = None,
        references: Sequence[dict[str, Any]] | None = None, stream: TextIO | None = None,
        images: bool = True, record: str | os.PathLike[str] | None = None) -> ReportOutcome:
    """Probe, measure what is supported, compare, and write ``report.json`` and ``report.html`` in ``out``.

    ``references`` defaults to the results bundled in ``ampere/data``; the published measurements of the
    same GPU (:func:`published_figures`) are references too. ``info`` defaults to
    ``ampere.device.probe()``. ``record``: a folder (e.g. ``ampere/data``) where the JSON is also saved
    under its recorded-result name (``report-<gpu>-<date>.json``), for contributing it. Raises
    ``ValueError`` for an unwritable folder or unknown probe names before measuring anything. A probe that
    fails is reported as failed; the others still run.
    """
    from . import device as _device
    from . import results

    if not isinstance(time_budget_s, (int, float)) or not time_budget_s > 0:
        raise ValueError(f"time_budget_s={time_budget_s!r} must be a positive number of seconds")
    chosen = select_probes(only, skip)
    folder = check_output_folder(out)
    record_folder = check_output_folder(record) if record is not None else None
    t0 = time.monotonic()
    info = info or _device.probe()
    references = load_references() if references is None else list(references)
    plan_rows = plan(info, chosen)
    runnable = [p for p, r in zip(chosen, plan_rows) if r["status"] == "run"]
    progress = Progress(len(runnable) + 1, stream=stream)
    figures: list[dict[str, Any]] = []
    notes: list[str] = []
    if not info.is_gpu:
        notes.append(f"Nothing to measure on this machine ({info.label()}): model-only report.")
    for probe, row in zip(chosen, plan_rows):
        if row["status"] != "run":
            continue
        elapsed = time.monotonic() - t0
        if elapsed + probe.estimate_s(quick) > time_budget_s:
            row.update(status="skipped", reason=f"time budget: {elapsed:.0f} s used of {time_budget_s:.0f} s")
            progress.update(f"{probe.name}: skipped (time budget)", advance=1)
            continue
        ctx = ProbeContext(info, quick, lambda text, name=probe.name: progress.update(f"{name}: {text}"),
                           deadline=t0 + time_budget_s)
        progress.update(f"{probe.name}: starting")
        started = time.monotonic()
        try:
            figs = [f for f in probe.run(ctx) if _measurement_ok(f)]
        except Exception as exc:  # one broken probe must not lose the others' figures
            row.update(status="failed", reason=f"{type(exc).__name__}: {exc}"[:300])
            notes.append(f"{probe.name} failed: {type(exc).__name__}: {exc}"[:300])
            figs = []
        else:
            row.update(status="measured", reason=f"{len(figs)} figures in {time.monotonic() - started:.0f} s")
        notes.extend(ctx.notes)
        figures.extend(figs)
        _release_gpu_memory()
        progress.update(f"{probe.name}: {row['status']}", advance=1)
    figures, mig_note = mig_scale(figures, info)
    if mig_note:
        notes.append(mig_note)
    device_dict = info.to_dict()
    gpu = _gpu_id(device_dict) if info.is_gpu else None
    rec_figs = recorded_figures(references)
    ref_figs = rec_figs + (published_figures([gpu]) if gpu else [])
    comparisons = compare(figures, gpu, ref_figs) if gpu else []
    config_rows = config_differences(device_dict, references) if gpu else []
    records = []
    for fig, comp in zip(figures, comparisons):
        rec = {k: fig.get(k) for k in ("probe", "key", "label", "value", "unit", "model", "model_label",
                                        "higher_is_better", "flaggable")}
        rec.update({k: comp[k] for k in ("pct_of_model", "reference", "reference_n", "pct_of_reference", "flag",
                                         "status")})
        if fig.get("measurement"):
            rec["measurement"] = fig["measurement"]
        records.append(rec)
    parameters = {"quick": quick, "only": list(only or []), "skip": list(skip or []),
                  "time_budget_s": time_budget_s, "flag_threshold": FLAG_THRESHOLD,
                  "probes": {r["probe"]: {"status": r["status"], "reason": r["reason"]} for r in plan_rows},
                  "references": len(references), "elapsed_s": round(time.monotonic() - t0, 1)}
    result = results.make_result("report", info, parameters, records, notes)
    result["parameters"]["elapsed_s"] = round(time.monotonic() - t0, 1)
    progress.update("writing report.json and report.html")
    page = render_html(result, comparisons, plan_rows, rec_figs, config_rows, images=images)
    json_path = results.save(result, folder / "report.json")
    html_path = write_text_atomic(folder / "report.html", page)
    record_path = results.save(result, record_folder) if record_folder is not None else None
    progress.close(f"done in {time.monotonic() - t0:.0f} s")
    return ReportOutcome(result, comparisons, plan_rows, json_path, html_path, record_path)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ampere report",
        description="Run every measurement this GPU supports in a short mode and compare each figure with "
                    "the model of the GPU and with the recorded results (flags: more than 10%% below the "
                    "recorded reference of the same GPU). Writes report.json and report.html.")
    p.add_argument("--out", type=Path, default=Path("ampere-report"),
                   help="output folder for report.json and report.html (default: ./ampere-report)")
    p.add_argument("--only", nargs="+", metavar="PROBE", help=f"run only these probes ({', '.join(probe_names())})")
    p.add_argument("--skip", nargs="+", metavar="PROBE", help="do not run these probes")
    p.add_argument("--quick", action="store_true", help="shorter still: one size per measurement")
    p.add_argument("--reference", type=Path, default=None,
                   help="folder of result JSON files to compare with, besides the ones bundled in ampere/data")
    p.add_argument("--record", type=Path, default=None, metavar="DIR",
                   help="also save the JSON in DIR under its recorded-result name (e.g. --record ampere/data)")
    p.add_argument("--time-budget", type=float, default=TIME_BUDGET_S,
                   help=f"skip probes that would not fit in this many seconds (default {TIME_BUDGET_S:.0f})")
    p.add_argument("--list", action="store_true", help="list the probes and whether this machine can run them")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere report [--out DIR] [--only P ...] [--skip P ...] [--quick] [--reference DIR]``.

    Exit codes: 0 written (flags do not change it), 2 bad usage or an output folder that cannot be written.
    """
    from . import device as _device

    parser = _parser()
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # argparse exits 2 on bad usage, 0 on --help
        return int(exc.code or 0)
    if args.list:
        info = _device.probe()
        for row in plan(info, PROBES):
            print(f"  {row['probe']:12s} {row['status']:14s} {row['reason'] or row['title']}")
        return 0
    try:
        references = load_references(args.reference)
        outcome = run(args.out, args.only, args.skip, args.quick, args.time_budget, references=references,
                      record=args.record)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    res = outcome.result
    if res["device"].get("backend") != "cuda":
        print(f"No CUDA GPU here: nothing to measure. Model-only report of {MODEL_FALLBACK_GPU} and the "
              f"recorded results written.")
    else:
        flagged = [c for c in outcome.comparisons if c["flag"]]
        for row in summary_rows(outcome.comparisons):
            print(f"  {row['figure'][:44]:44s} {row['measured']:>18s}  {row['% of model']:>6s}% of model  "
                  f"{row['status']}")
        print(f"{len(outcome.comparisons)} figures measured, {len(flagged)} flagged "
              f"(> {FLAG_THRESHOLD:.0%} below the recorded reference)")
    print(f"report written to {outcome.json_path} and {outcome.html_path}")
    if outcome.record_path is not None:
        print(f"recorded result written to {outcome.record_path} (see CONTRIBUTING.md to contribute it)")
    return 0
