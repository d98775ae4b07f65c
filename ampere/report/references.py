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

from .. import check, specs
from .arguments import figure_list
from .extract import (_MATMUL_LABEL, _link_model, _model_precision, _peak_label, allreduce_key, recorded_figures,
                      size_label)

#: GPUs whose published figures form the reference table of the chapter (A100 first, then Hopper).
REFERENCE_GPUS: tuple[str, ...] = ("A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIE-80GB", "H100-SXM5-80GB",
                                   "H200-SXM-141GB")


#: published STREAM-type kernels whose bytes are counted as the HBM probe counts them (every load and store)
_STREAM_KERNELS = ("read", "write", "scale", "triad")


def published_figures(gpus: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Published measurements of the quantities the report measures, as reference figures.

    Same form as :func:`recorded_figures` (``key``, ``value``, ``gpu``, ``provenance``), so that
    :func:`compare` takes them as references beside the recorded results: square fixed-shape matmuls
    (``matmul/<precision>/n<n>``), STREAM-type DRAM kernels (``hbm/<kernel>``) and single-node all-reduce
    bus bandwidth at the size it was measured at (``allreduce/n<gpus>/<bytes>``, :func:`allreduce_points`).
    ``gpus`` (a list of GPU names, catalogue or not: a MIG slice or a driver's name has none) keeps those
    GPUs' figures; None keeps every GPU's. Chapter: *The reference check*.
    """
    from .. import results
    from ..views import source_text

    gpus = _gpu_names("gpus", gpus)
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
        elif rec.benchmark == "all-reduce":
            out += [dict(f, provenance=label, created_utc=rec.date) for f in allreduce_points(rec)]
    return out


def allreduce_points(rec: Any) -> list[dict[str, Any]]:
    """Single-node all-reduce busbw points of a published record, each at the size it was measured at:
    a record with a ``size_bytes`` parameter, or a curve (``size_bytes`` a list, ``busbw_gb_per_s`` a list
    of the same length). A peak read off a sweep (``max_size_bytes`` only) or a statement without a size
    gives no point: it cannot be paired with a probe of a known size (:func:`unsized_allreduce`).
    ``rec`` is an :class:`ampere.results.Record`. Chapter: *The reference check*."""
    from .. import results

    if not isinstance(rec, results.Record):
        raise TypeError(f"rec must be an ampere.results.Record (results.records()), got {rec!r:.60}")
    p = rec.params
    if rec.benchmark != "all-reduce" or p.get("nodes", 1) != 1 or not isinstance(p.get("gpus"), int):
        return []
    sizes, values = p.get("size_bytes"), rec.figures.get("busbw_gb_per_s")
    if isinstance(sizes, (list, tuple)) and isinstance(values, (list, tuple)) and len(sizes) == len(values):
        pairs = list(zip(sizes, values))
    elif isinstance(sizes, int) and isinstance(values, (int, float)):
        pairs = [(sizes, values)]
    else:
        return []
    return [{"key": allreduce_key(p["gpus"], int(size)), "size_bytes": int(size), "value": float(v), "gpu": rec.gpu}
            for size, v in pairs]


def unsized_allreduce(gpus: Sequence[str] | None = None) -> list[dict[str, str]]:
    """Published single-node all-reduce bandwidths without the size they were read at (a sweep's peak, a
    maintainer's figure): shown beside a report as context, never compared with a probe. ``gpus``: a list of
    GPU names (None: every GPU)."""
    from .. import results
    from ..views import source_text

    gpus = _gpu_names("gpus", gpus)
    rows = []
    for rec in results.records(benchmark="all-reduce", kind="published"):
        p = rec.params
        if (gpus is not None and rec.gpu not in gpus) or p.get("nodes", 1) != 1 or allreduce_points(rec):
            continue
        if "busbw_gb_per_s" not in rec.figures or not isinstance(rec.figures["busbw_gb_per_s"], (int, float)):
            continue
        sweep = f"peak of a sweep up to {size_label(p['max_size_bytes'])}" if p.get("max_size_bytes") else \
            "size not stated"
        rows.append({"GPU": rec.gpu, "GPUs": str(p.get("gpus", "?")), "busbw": f"{rec.figures['busbw_gb_per_s']:.0f} GB/s",
                     "measured at": sweep, "source": source_text(rec)})
    return rows


def _gpu_names(name: str, gpus: Sequence[str] | None) -> list[str] | None:
    """None, or a list of GPU names (strings; never a bare string)."""
    return check.optional(check.sequence, name, gpus, check.string, min_len=0, max_len=1000)


def _published_gpus(name: str, gpus: Sequence[str] | None, benchmark: str | None = None) -> list[str] | None:
    """None (every GPU), or a non-empty list of GPUs that have published records (of ``benchmark``)."""
    from .. import results

    if gpus is None:
        return None
    known = sorted({r.gpu for r in results.records(benchmark=benchmark, kind="published")})
    return check.names(name, gpus, known, max_len=1000)


def key_label(key: str) -> str:
    """A reader's name for a report figure key: ``matmul/bf16/n8192`` -> "BF16 matmul 8192³"; a key of no
    known form is returned as it is."""
    parts = check.string("key", key, max_len=500).split("/")
    if parts[0] == "matmul" and len(parts) == 3:
        return f"{_MATMUL_LABEL.get(parts[1], parts[1])} matmul {parts[2][1:]}³"
    if parts[0] == "hbm" and len(parts) == 2:
        return f"DRAM bandwidth, {parts[1]} kernel"
    if parts[0] == "allreduce" and len(parts) == 3 and parts[2].isdigit():
        return f"all-reduce busbw, {parts[1][1:]} GPUs, {size_label(int(parts[2]))}"
    return key


def key_model(key: str, gpu: str) -> tuple[float | None, str]:
    """The model of a report figure on a catalogue GPU, in the figure's unit, and what it is: (None, "") for a
    key of no known form or a GPU the catalogue does not match."""
    check.string("key", key, max_len=500)
    check.string("gpu", gpu, max_len=500)
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
    """The references a report on each of ``gpus`` (catalogue names) is compared with, as
    :class:`ampere.views.Point` rows: recorded results first, then published figures, each beside its model.
    ``recorded`` (figures of :func:`recorded_figures`) replaces the results bundled in ``ampere/data``.
    Chapter: *The reference check*."""
    from .. import results, views

    gpus = check.gpus("gpus", gpus, max_len=len(specs.names()))
    recorded = recorded_figures(results.recorded()) if recorded is None else \
        figure_list("recorded", recorded, recorded=True)
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


#: figure-name ending -> (unit shown, factor from the stored unit to the shown one); longest endings first
_UNITS: tuple[tuple[str, str, float], ...] = (
    ("_tflop_per_s_per_gpu", "TFLOP/s/GPU", 1.0), ("_pflop_per_s", "PFLOP/s", 1.0),
    ("_tflop_per_s", "TFLOP/s", 1.0), ("_gflop_per_w", "GFLOP/s/W", 1.0), ("_flop_per_s", "TFLOP/s", 1e-12),
    ("_gb_per_s", "GB/s", 1.0), ("_tb_per_s", "GB/s", 1e3), ("_bytes_per_s", "GB/s", 1e-9),
    ("_tokens_per_s", "tokens/s", 1.0), ("_samples_per_s", "samples/s", 1.0), ("_ms", "ms", 1.0),
    ("_us", "µs", 1.0), ("_minutes", "minutes", 1.0), ("_hours", "hours", 1.0), ("_days", "days", 1.0),
    ("_ratio", "×", 1.0), ("_pct", "%", 1.0), ("_s", "s", 1.0),
)


def figure_unit(name: str) -> tuple[str, float]:
    """(unit to show, factor) for a figure name of a record (``bf16_tflop_per_s`` -> ("TFLOP/s", 1.0));
    ("", 1.0) for a name without a known unit ending."""
    check.string("name", name, max_len=500)
    for suffix, unit, factor in _UNITS:
        if name.endswith(suffix):
            return unit, factor
    return "", 1.0


def _base(figure: str) -> str:
    for suffix, _, _ in _UNITS:
        if figure.endswith(suffix):
            return figure[: -len(suffix)].replace("_", " ")
    return figure.replace("_", " ")


def _quantity(rec: Any, figure: str) -> str:
    """A short reader's name for what a published figure measures: the figure and the few parameters that
    tell two measurements of it apart (precision and method of a matmul, program of a STREAM kernel, GPUs,
    nodes and size of an all-reduce, model of a training run)."""
    p, base = rec.params, _base(figure)
    if rec.benchmark == "matmul":
        how = {"mamf": "MAMF shape search", "sweep": "size sweep, best"}.get(p.get("method"))
        if how is None and p.get("m") and p.get("m") == p.get("n") == p.get("k"):
            how = f"{p['m']}³"
        data = f", {p['data']} inputs" if p.get("data") else ""
        return f"{str(p.get('precision', base)).upper()} matmul, {how or p.get('method', '')}{data}"
    if rec.benchmark == "stream":
        return f"{base} kernel ({p.get('program', '?')})"
    if rec.benchmark == "all-reduce":
        where = f"{p.get('gpus', '?')} GPUs" + (f", {p['nodes']} nodes" if (p.get("nodes") or 1) > 1 else "")
        size = p.get("size_bytes")
        if isinstance(size, int):
            where += f", {size_label(size)}"
        elif p.get("max_size_bytes"):
            where += f", sweep to {size_label(p['max_size_bytes'])}"
        return f"{base}, {where}"
    if rec.benchmark == "training-throughput":
        return f"{p.get('model', '?')}, {p.get('gpus', '?')} GPUs: {base}"
    extra = ", ".join(f"{k} {v}" for k, v in sorted(p.items())[:2] if isinstance(v, (str, int, float)))
    return f"{rec.benchmark}: {base}" + (f" ({extra})" if extra else "")


@dataclass(frozen=True)
class Reference:
    """One published quantity on one GPU, with every source that publishes it (its spread).
    Chapter: *The reference check*, "The references"."""

    quantity: str
    gpu: str
    unit: str
    values: tuple[float, ...]
    sources: tuple[str, ...]      # author-year labels with table/figure, one per value
    benchmark: str = ""
    labels: tuple[str, ...] = ()  # author-year labels alone, one per value

    def __post_init__(self) -> None:
        check.string("quantity", self.quantity, max_len=500)
        check.string("gpu", self.gpu, max_len=200)
        check.string("unit", self.unit, allow_empty=True, max_len=50)
        check.string("benchmark", self.benchmark, allow_empty=True, max_len=100)
        values = tuple(check.sequence("values", self.values, check.finite, max_len=10_000))
        sources = tuple(check.sequence("sources", self.sources, check.string, max_len=10_000))
        labels = tuple(check.sequence("labels", self.labels, check.string, min_len=0, max_len=10_000))
        if len(sources) != len(values) or labels and len(labels) != len(values):
            raise ValueError(f"sources ({len(sources)}) and labels ({len(labels)}) must give one entry per element "
                             f"of values ({len(values)}; labels may be empty)")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "sources", sources)
        object.__setattr__(self, "labels", labels)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def spread(self) -> float:
        """(max - min) / median: 0 for a single source."""
        return (max(self.values) - min(self.values)) / self.median if self.median else 0.0


def _published_benchmarks() -> list[str]:
    from .. import results

    return sorted({r.benchmark for r in results.records(kind="published")})


def reference_table(gpus: Sequence[str] | None = REFERENCE_GPUS, benchmarks: Sequence[str] | None = None
                    ) -> list[Reference]:
    """Published figures grouped by quantity and GPU (``ampere/data/published``), with their spread.

    Scalar figures only (sweeps are drawn by their chapters). ``gpus=None`` keeps every GPU;
    ``benchmarks`` (names of the published benchmarks, e.g. ``("matmul", "stream", "all-reduce")``) keeps
    those, None every one; a GPU name must be one with published records. Chapter: *The reference check*, "The references".
    """
    from .. import results
    from ..views import cite_label, source_text

    gpus = _published_gpus("gpus", gpus)
    benchmarks = check.optional(check.names, "benchmarks", benchmarks, _published_benchmarks(), max_len=100)
    groups: dict[tuple[str, str, str, str], list[tuple[float, str, str]]] = {}
    for rec in results.records(kind="published"):
        if gpus is not None and rec.gpu not in gpus:
            continue
        if benchmarks is not None and rec.benchmark not in benchmarks:
            continue
        for name, value in rec.figures.items():
            if isinstance(value, (list, tuple)):
                continue
            unit, factor = figure_unit(name)
            groups.setdefault((rec.benchmark, _quantity(rec, name), rec.gpu, unit), []).append(
                (float(value) * factor, source_text(rec), cite_label(rec.source)))
    order = {g: i for i, g in enumerate(gpus or ())}
    out = [Reference(q, g, u, tuple(v for v, _, _ in rows), tuple(s for _, s, _ in rows), b,
                     tuple(c for _, _, c in rows)) for (b, q, g, u), rows in groups.items()]
    return sorted(out, key=lambda r: (r.benchmark, r.quantity, order.get(r.gpu, len(order)), r.gpu))


#: per-GPU throughput figures of a published training run, in the order preferred, with how each counts
_PER_GPU = (("model_tflop_per_s_per_gpu", "model FLOPs"), ("hardware_tflop_per_s_per_gpu", "hardware FLOPs"),
            ("fp16_tflop_per_s_per_gpu", "incl. recompute"), ("reported_tflop_per_s_per_gpu", "as reported"))


def _span(values: Sequence[float], fmt: str) -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}-{fmt.format(hi)}"


def training_rows(gpus: Sequence[str] | None = REFERENCE_GPUS) -> list[dict[str, str]]:
    """The published training runs, grouped: one row per GPU, team and way of counting, with the range of
    TFLOP/s per GPU its runs reached (or of tokens/s per GPU where no FLOP rate is published), the runs and
    the source. A compact view of what real training reaches on each GPU; each run in detail is in the
    Megatron chapter. ``gpus`` as in :func:`reference_table`. Chapter: *The reference check*, "The references".
    """
    from .. import results
    from ..views import cite_label

    gpus = _published_gpus("gpus", gpus)
    groups: dict[tuple[str, str, str, str], list[tuple[float, str]]] = {}
    for rec in results.records(benchmark="training-throughput", kind="published"):
        if gpus is not None and rec.gpu not in gpus:
            continue
        found = next(((n, how) for n, how in _PER_GPU if isinstance(rec.figures.get(n), (int, float))), None)
        if found is None and isinstance(rec.figures.get("per_gpu_tokens_per_s"), (int, float)):
            found = ("per_gpu_tokens_per_s", "tokens/s per GPU")
        if found is None:
            continue
        groups.setdefault((rec.gpu, cite_label(rec.source), found[1], found[0]), []).append(
            (float(rec.figures[found[0]]), str(rec.params.get("model", "?")), rec.params.get("gpus")))
    order = {g: i for i, g in enumerate(gpus or ())}
    rows = []
    for (gpu, label, how, fig), runs in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], len(order)),
                                                                             kv[0][0], kv[0][1], kv[0][2])):
        values = [v for v, _, _ in runs]
        unit = "tokens/s" if fig == "per_gpu_tokens_per_s" else "TFLOP/s"
        models = ", ".join(dict.fromkeys(m for _, m, _ in runs))
        if len(models) > 30:
            families = {m.replace("-", " ").split()[0] for _, m, _ in runs}
            models = f"{families.pop()}, {len(runs)} runs" if len(families) == 1 else f"{len(runs)} runs"
        sizes = sorted({n for _, _, n in runs if isinstance(n, int)})
        rows.append({"GPU": gpu, "runs": models, "GPUs": _span(sizes, "{:,}") if sizes else "?",
                     "per GPU": f"{_span(values, '{:,.0f}')} {unit}", "counting": how if unit == "TFLOP/s" else "-",
                     "source": label})
    return rows


def reference_rows(refs: Sequence[Reference]) -> list[dict[str, str]]:
    """Narrow printable rows of :func:`reference_table`: GPU, what, value (median, with the range where
    several sources publish it) and the author-year labels of the sources (where in each: the data file)."""
    def ref(name: str, r: Any) -> Reference:
        if not isinstance(r, Reference):
            raise TypeError(f"{name} must be an ampere.report.Reference (reference_table()), got {r!r:.60}")
        return r

    refs = check.sequence("refs", refs, ref, min_len=0, max_len=100_000)

    def num(v: float) -> str:
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.3g}"

    rows = []
    for r in refs:
        value = f"{num(r.median)} {r.unit}".strip()
        if len(r.values) > 1:
            value += f" ({num(min(r.values))}–{num(max(r.values))})"
        rows.append({"GPU": r.gpu, "what": r.quantity, "value": value,
                     "source": "; ".join(dict.fromkeys(r.labels or r.sources))})
    return rows
