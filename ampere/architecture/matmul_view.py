"""Real matmul throughput beside the dense peak: measured here, recorded on real GPUs (``ampere/data``) and
published, as the chapter's "How close real matmuls come to the peak" view (:func:`show_matmul`), the published matmul
table, and the transitional dict view ``PUBLISHED_MATMUL``.

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "How close real matmuls come to the peak". Imports no
torch or matplotlib itself: it measures through :mod:`ampere.architecture.measure` and draws through
``ampere.views``.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import check, gemm, specs
from .measure import MATMUL_PRECISIONS, bf16_peak_check, matmul_sweep
from .peaks import CATALOGUE_ORDER


def _legacy_published_matmul() -> tuple[dict[str, Any], ...]:
    """The published matmul figures in the dict form other modules read before ``ampere.gemm`` existed.

    Transitional: read from ``ampere/data/published/matmul.json`` through :func:`ampere.gemm.published_matmul`
    (the one place the figures live); new code calls ``gemm.published_matmul`` / ``gemm.mamf_flops``.
    """
    out = []
    for rec in gemm.published_matmul():
        if (rec.id.startswith("mamf-v1-") or rec.params.get("data") == "zeros" or rec.params["method"] == "sweep"
                or rec.params["precision"] not in ("bf16", "fp16")):
            continue  # superseded revision, all-zeros contrast, community sweeps, FP8: not in the old tuple
        out.append({"gpu": rec.gpu, "precision": rec.params["precision"], "tflops": gemm.matmul_tflops(rec),
                    "shape": gemm.matmul_shape(rec), "what": rec.note or rec.where, "source": rec.source,
                    **({"kind": "mamf"} if rec.params.get("method") == "mamf" else {})})
    return tuple(out)


def _matmul_what(rec: Any) -> str:
    p = rec.params.get("precision", "?")
    method = rec.params.get("method")
    if method == "mamf":
        return f"{p}, best of a shape search"
    if method == "sweep":
        return f"{p}, square-size sweep"
    shape = gemm.matmul_shape(rec)
    dims = f"{shape[0]}³" if shape and len(set(shape)) == 1 else ("x".join(map(str, shape)) if shape else "")
    data = {"randn": ", random inputs", "zeros": ", all-zero inputs"}.get(rec.params.get("data", ""), "")
    return f"{p} {dims}{data}".strip()


def _dense_peak_tflops(gpu: str, precision: str) -> float | None:
    try:
        spec = specs.get(gpu)
    except ValueError:
        return None
    key = gemm.peak_precision_for(spec, precision) if precision in specs.PRECISIONS else None
    return spec.peak_flops(key) / 1e12 if key else None


def _superseded(rec: Any) -> bool:
    """A record of an earlier revision of a table the same source has since replaced."""
    return rec.id.startswith("mamf-v1-")


def _sweep_row(name: str, row: Any) -> dict[str, Any]:
    """A record of :func:`matmul_sweep`: a mapping with ``n``, ``precision`` and a finite ``tflops``."""
    row = check.mapping(name, row)
    if not {"n", "precision", "tflops"} <= set(row):
        raise ValueError(f"{name} must have the keys 'n', 'precision' and 'tflops' (a matmul_sweep record), "
                         f"got {sorted(row)}")
    check.positive_int(f"{name}['n']", row["n"])
    check.nonneg(f"{name}['tflops']", row["tflops"])
    check.optional(check.positive, f"{name}['peak_tflops']", row.get("peak_tflops"))
    return row


def matmul_points(info: Any = None, sweep: Sequence[dict[str, Any]] | None = None, min_n: int = 4096) -> list[Any]:
    """Real matmul throughput beside the dense peak, best evidence first: ``sweep`` (measured here), results
    recorded on real GPUs (``ampere/data``), then published measurements (:func:`ampere.gemm.published_matmul`,
    the superseded revision of a table left out). Square sizes below ``min_n`` are left out (launch- and
    wave-bound, they measure something else). Chapter: *Architecture of the GA100*, "How close real matmuls come to the peak".
    """
    from .. import results, views

    min_n = check.positive_int("min_n", min_n, maximum=2**20)
    sweep = check.sequence("sweep", sweep, _sweep_row, min_len=0, max_len=10_000) if sweep is not None else []
    pts = []
    if info is not None and not callable(getattr(info, "label", None)):
        raise TypeError(f"info must be a DeviceInfo (ampere.device.device_info()) or None, got {type(info).__name__}")
    gpu = (getattr(info, "spec_name", None) or info.label()) if info is not None else "this GPU"
    for r in sweep or ():
        if r["n"] >= min_n:
            model = r.get("peak_tflops")
            pts.append(views.Point(f"{r['precision']} {r['n']}³", gpu, model, r["tflops"], "TFLOP/s",
                                   kind="measured", source="measured here"))
    for rec in results.records(benchmark="matmul", kind="measured"):
        n, p = rec.params.get("n"), rec.params.get("precision")
        if isinstance(n, int) and n >= min_n and "tflops" in rec.figures and p in MATMUL_PRECISIONS:
            pts.append(views.point(rec, "tflops", f"{p} {n}³", _dense_peak_tflops(rec.gpu, p), "TFLOP/s"))
    published = [r for r in gemm.published_matmul() if not _superseded(r)]
    order = {name: i for i, name in enumerate(CATALOGUE_ORDER)}
    published.sort(key=lambda r: (order.get(r.gpu, 99), r.params.get("method") != "mamf", r.id))
    for rec in published:
        p = rec.params["precision"]
        pts.append(views.point(rec, f"{p}_tflop_per_s", _matmul_what(rec), _dense_peak_tflops(rec.gpu, p),
                               "TFLOP/s"))
    return pts


def published_matmul_table() -> list[dict[str, Any]]:
    """Every published matmul record with its shape, software and source (the chapter's dropdown table).

    Chapter: *Architecture of the GA100*, "How close real matmuls come to the peak".
    """
    from .. import views

    order = {name: i for i, name in enumerate(CATALOGUE_ORDER)}
    rows = []
    for rec in sorted(gemm.published_matmul(), key=lambda r: (order.get(r.gpu, 99), _superseded(r), r.id)):
        p = rec.params["precision"]
        tf = gemm.matmul_tflops(rec)
        peak = _dense_peak_tflops(rec.gpu, p)
        shape = gemm.matmul_shape(rec)
        software = ", ".join(f"{k} {v}" for k, v in rec.setup.items() if k in ("torch", "cuda", "library"))
        rows.append({"GPU": rec.gpu, "what": _matmul_what(rec), "TFLOP/s": f"{tf:.1f}",
                     "% of dense peak": f"{100 * tf / peak:.1f}" if peak else "",
                     "shape m x n x k": "x".join(map(str, shape)) if shape else "",
                     "software": software, "source": views.source_text(rec)
                     + (" (earlier revision)" if _superseded(rec) else "")})
    return rows


def show_matmul(info: Any, *, measure: bool | None = None, sizes: Sequence[int] = (4096, 8192)) -> list[Any]:
    """The "How close real matmuls come to the peak" section in one call.

    On a CUDA GPU (or when ``measure`` says so) it times square matmuls in every precision the GPU has
    tensor cores for (FP32 with TF32 off, TF32, BF16, FP16) with :func:`matmul_sweep`; then it shows, as a
    figure and a Markdown table, every real number there is against the dense peak of its GPU: measured
    here, recorded on real GPUs, published (with its source and the ratio to the peak). The list of all
    published records follows in a dropdown. Returns the points shown.

    Chapter: *Architecture of the GA100*, "How close real matmuls come to the peak".
    """
    from .. import tables, views

    run = getattr(info, "backend", "cpu") == "cuda" if measure is None else check.boolean("measure", measure)
    sizes = check.sequence("sizes", sizes, lambda name, n: check.positive_int(name, n, maximum=65536), max_len=8)
    sweep = None
    if run:
        precisions = ["fp32", "fp16"] + [p for p, ok in (("tf32", info.tf32), ("bf16", info.bf16_tensor)) if ok]
        sweep = matmul_sweep(list(sizes), precisions, warmup_s=1.0, max_time_s=3.0, info=info)
    pts = matmul_points(info, sweep, min_n=min(sizes))
    views.show(pts, title="Matmul throughput against the dense peak", model_label="dense peak",
               real_label="reached", digits=1, log=True)
    if sweep:
        target = bf16_peak_check(sweep, n=max(sizes))
        if target:
            tables.show_md(f"BF16 at {target['n']}³ on this GPU: {target['pct_of_peak']:.1f} % of the dense "
                           f"peak (the book expects at least {target['target_pct']:.0f} % on an A100 or H100).")
    tables.show_md("```{dropdown} Every published matmul measurement in the package\n"
                   + tables.markdown_table(published_matmul_table()) + "\n```")
    return pts
