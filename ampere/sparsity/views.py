"""The chapter's tables and its one-call view: peaks, model times, ASP and published accuracy, speedups.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb): the tables of "Why the hardware likes it" and
"Accuracy", and the "Real 2:4 speedups" section (:func:`show_sparsity`: speedups measured here, recorded
and published, beside the roofline bound, built on ``ampere.views``).

No torch or matplotlib import here (``ampere.views`` draws).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .. import check
from .backends import probe_backend
from .bench import short_run
from .claims import published_accuracy, published_speedup, published_speedups
from .roofline import LinearShape, matmul_time_model, peak_rows, speedup_model
from .sweep_results import sweep_table, verdict


def peak_table(gpus: Iterable[str] = ("A100-SXM4-80GB", "H100-SXM5-80GB", "RTX-A6000")) -> list[dict[str, str]]:
    """:func:`peak_rows` formatted for a Markdown table. Chapter: *2:4 structured sparsity*."""
    return [{"GPU": r["gpu"], "precision": r["precision"], "dense": f"{r['dense']:.1f}",
             "2:4 sparse": f"{r['sparse']:.1f}" if r["sparse"] is not None else "",
             "sparse / dense": f"{r['ratio']:.0f}" if r["ratio"] else "", "datasheet sparse": r["datasheet sparse"] or "",
             "agrees": "" if r["agrees"] is None else ("yes" if r["agrees"] else "no")} for r in peak_rows(gpus)]


def time_model_rows(gpu: str = "A100-SXM4-80GB", tokens: Sequence[int] = (1, 16384), in_features: int = 4096,
                    out_features: int = 4096, precision: str = "fp16") -> list[dict[str, str]]:
    """:func:`matmul_time_model` for dense, 2:4 and unstructured 50 % at each token count, as table rows.
    Chapter: *2:4 structured sparsity*, "Why the hardware likes it".
    """
    rows = []
    for n in tokens:
        shape = LinearShape(check.positive_int("tokens", n), in_features, out_features)
        for kind in ("dense", "2:4", "unstructured"):
            t = matmul_time_model(gpu, shape, precision, kind)
            rows.append({"tokens": str(shape.tokens), "kind": kind, "time (us)": f"{1e6 * t['time_s']:.2f}",
                         "bound": t["bound"], "how": t["strategy"]})
    return rows


def asp_table(summary: dict[str, Any]) -> list[dict[str, str]]:
    """Means over seeds of :func:`asp_summary`, one row per method. Chapter: *2:4 structured sparsity*."""
    out = []
    for method in summary["methods"]:
        st = summary["per_method"][method]
        out.append({"method": method, "zeros": f"{100 * st['zeros']['mean']:.0f} %",
                    "acc. pruned": f"{100 * st['acc_pruned']['mean']:.1f} %",
                    "acc. retrained": f"{100 * st['acc_retrained']['mean']:.1f} %",
                    "loss pruned": f"{st['loss_pruned']['mean']:.3f}",
                    "loss retrained": f"{st['loss_retrained']['mean']:.3f}"})
    return out


def accuracy_rows() -> list[dict[str, str]]:
    """:func:`published_accuracy` for a Markdown table, with whose run each row is and where it is printed.
    Chapter: *2:4 structured sparsity*, "Accuracy".
    """
    from .. import views

    return [{"network": r.network, "dataset": r.dataset, "metric": r.metric, "dense": f"{r.dense:g}",
             "2:4 sparse": f"{r.sparse:g}", "pruned only": "" if r.pruned_no_retraining is None
             else f"{r.pruned_no_retraining:g}", "whose run": r.reported_by, "source": views.cite_label(r.source)}
            for r in published_accuracy()]


def _published_shape(rec: Any) -> LinearShape | None:
    p = rec.params
    if all(k in p for k in ("tokens", "in_features", "out_features")):
        return LinearShape(p["tokens"], p["in_features"], p["out_features"])
    if all(k in p for k in ("m", "n", "k")):  # a GEMM m x n x k: m tokens, k inputs, n outputs
        return LinearShape(p["m"], p["k"], p["n"])
    return None


def speedup_points(result: dict[str, Any] | None = None) -> list[Any]:
    """2:4 speedups over dense beside the roofline bound of :func:`speedup_model`: the rows of ``result``
    (a sweep measured here), of recorded results (``ampere/data``), then of published measurements (whole
    models have no bound: their sparse part is only the ``Linear`` layers). Chapter: *2:4 structured
    sparsity*, "Real 2:4 speedups".
    """
    from .. import results as _results
    from .. import views

    pts = []

    def add_sweep(res: dict[str, Any], kind: str, source: str) -> None:
        gpu = res["device"].get("spec_name") or res["device"].get("name", "?")
        for r in sweep_table(res):
            if r["backend"] in ("torch.sparse CSR", "reference"):
                continue
            pts.append(views.Point(f"{r['shape'].split(' (')[0]} {r['dtype']} {r['backend']}", gpu,
                                   r["model_bound"], r["speedup"], "x over dense", kind=kind, source=source))

    if result is not None:
        add_sweep(result, "measured", "measured here")
    for res in _results.recorded(benchmark="sparsity"):
        if res["device"].get("backend") == "cuda":
            add_sweep(res, "recorded", _results.provenance(res))
    def order(rec: Any) -> tuple:
        return ("model" in rec.params, rec.params.get("mode") != "eager", rec.params.get("batch", 0), rec.id)

    for rec in sorted(published_speedups(), key=order):
        shape = _published_shape(rec)
        dtype = {"float16": "fp16", "bfloat16": "bf16"}.get(rec.params.get("dtype", ""), "fp16")
        bound = speedup_model(rec.gpu, shape, dtype, "2:4") if shape is not None else None
        what = rec.params.get("what", rec.id)
        if rec.params.get("mode"):
            what += f", {rec.params['mode']}"
        pts.append(views.Point(what, rec.gpu, bound, published_speedup(rec), "x over dense", kind="published",
                               source=views.source_text(rec)))
    return pts


def show_sparsity(info: Any, *, measure: bool | None = None) -> list[Any]:
    """The "Real 2:4 speedups" section in one call: find the 2:4 backends this GPU can run
    (:func:`probe_backend`, from ``info.sparse_2to4_backends``), measure the short sweep where one works (or
    when ``measure`` says so), and show every speedup there is (measured here, recorded, published) beside
    the roofline bound, as a figure and a Markdown table. Returns the points shown.

    Chapter: *2:4 structured sparsity*, "Real 2:4 speedups".
    """
    from .. import tables, views

    found = probe_backend(info)
    run = found.works if measure is None else check.boolean("measure", measure)
    live = short_run(info) if run else None
    pts = speedup_points(live)
    views.show(pts, title="2:4 sparse over dense: speedups beside the roofline bound", model_label="roofline bound",
               real_label="speedup", digits=2)
    if live is not None:
        tables.show_md("\n\n".join(verdict(live)))
    return pts
