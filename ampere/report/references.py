"""The references a report is compared with: published measurements of the quantities the report
measures (as reference figures), a reader's name and the model of each figure key, and the chapter's
reference table (published figures grouped by quantity and GPU, with their spread).

Pure: no torch, no matplotlib. The drawing of the references is :func:`ampere.report.figures.show_references`.
Chapter: *The reference check* (book/reference-check.ipynb), "The references".
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Sequence

from .. import specs
from .extract import _ALLREDUCE_BYTES, _MATMUL_LABEL, _link_model, _model_precision, _peak_label, recorded_figures

#: GPUs whose published figures form the reference table of the chapter (A100 first, then Hopper).
REFERENCE_GPUS: tuple[str, ...] = ("A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-80GB", "H100-SXM5-80GB",
                                   "H200-SXM-141GB")


#: published STREAM-type kernels whose bytes are counted as the HBM probe counts them (every load and store)
_STREAM_KERNELS = ("read", "write", "scale", "triad")


def published_figures(gpus: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Published measurements of the quantities the report measures, as reference figures.

    Same form as :func:`recorded_figures` (``key``, ``value``, ``gpu``, ``provenance``), so that
    :func:`compare` takes them as references beside the recorded results: square fixed-shape matmuls
    (``matmul/<precision>/n<n>``), STREAM-type DRAM kernels (``hbm/<kernel>``) and 8-GPU all-reduce bus
    bandwidth at 256 MiB and above (``allreduce/n8/<bytes>``). Chapter: *The reference check*.
    """
    from .. import results
    from ..views import source_text

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
    from .. import results, views

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
    from .. import results
    from ..views import source_text

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
