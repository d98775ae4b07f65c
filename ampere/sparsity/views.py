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
from .llm import BERT_BASE, layer_speedup
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
             else f"{r.pruned_no_retraining:g}", "whose run": _whose_run(r.reported_by),
             "source": views.cite_label(r.source)
             + (f" ({views.cite_label('mishra2021asp')})" if "reprinted" in r.reported_by else "")}
            for r in published_accuracy()]


def _whose_run(reported_by: str) -> str:
    """The team whose run a row is, short enough for a narrow column: "NVIDIA (table reprinted by PyTorch)"
    -> "NVIDIA" (the source column names the reprint), "PyTorch (its own run, 4 x A100-80GB)" ->
    "PyTorch, 4 x A100-80GB"."""
    team, _, note = reported_by.partition(" (")
    extra = [part for part in note.rstrip(")").split(", ") if part and "run" not in part and "reprinted" not in part]
    return ", ".join([team, *extra])


def _published_shape(rec: Any) -> LinearShape | None:
    p = rec.params
    if all(k in p for k in ("tokens", "in_features", "out_features")):
        return LinearShape(p["tokens"], p["in_features"], p["out_features"])
    if all(k in p for k in ("m", "n", "k")):  # a GEMM m x n x k: m tokens, k inputs, n outputs
        return LinearShape(p["m"], p["k"], p["n"])
    return None


def speedup_points(result: dict[str, Any] | None = None) -> list[Any]:
    """2:4 speedups over dense beside the roofline bound of :func:`speedup_model`: the rows of ``result``
    (a sweep measured here), of recorded results (``ampere/data``), then of published measurements. A single
    layer's bound is :func:`speedup_model`; a whole BERT-base model's is Amdahl's law over its layers with
    the GEMMs at the 2:4 roofline (:func:`~ampere.sparsity.llm.layer_speedup`, not causal), since only its
    ``Linear`` layers are sparse. Chapter: *2:4 structured sparsity*, "Real 2:4 speedups".
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
        if shape is not None:
            bound = speedup_model(rec.gpu, shape, dtype, "2:4")
        elif rec.params.get("model") == BERT_BASE.name:
            bound = layer_speedup(BERT_BASE, rec.gpu, "prefill", rec.params["batch"], rec.params["seq"],
                                  precision=dtype, causal=False)["speedup"]
        else:
            bound = None
        what = rec.params.get("what", rec.id)
        if rec.params.get("mode"):
            what += f", {rec.params['mode']}"
        pts.append(views.Point(what, rec.gpu, bound, published_speedup(rec), "x over dense", kind="published",
                               source=views.source_text(rec)))
    return pts


def _short_label(p: Any) -> str:
    """Row labels that fit the figure: "BERT-base b16, eager", "Linear 10240->3072", "ViT-L GEMM"."""
    w = p.what
    if w.startswith("BERT-base"):
        batch = w.split("batch ")[-1].split(",")[0]
        return f"BERT-base b{batch}, {w.rsplit(', ', 1)[-1]}"
    if w.startswith("one nn.Linear("):
        return "Linear " + w[len("one nn.Linear("):].split(")")[0].replace(", ", "->") + ", eager"
    if w.startswith("ViT-L"):
        return "ViT-L training GEMM"
    return w if len(w) <= 28 else w[:27] + "..."


def speedup_table_rows(points: Sequence[Any]) -> list[dict[str, str]]:
    """The speedups of :func:`speedup_points` as compact table rows: the BERT-base runs collapsed into one
    row per mode with a column per batch, every other point a row of its own, the roofline bound in a column
    of its own; the GPU column only when the points come from more than one GPU (else it is in the title),
    the sources under the table. Chapter: *2:4 structured sparsity*, "Real 2:4 speedups"."""
    several = len({p.gpu for p in points}) > 1
    rows: list[dict[str, str]] = []
    bert: dict[str, dict[str, str]] = {}
    for p in points:
        label = _short_label(p)
        bound = "" if p.model is None else f"{p.model:.2f}x"
        if label.startswith("BERT-base b"):
            batch, mode = label[len("BERT-base b"):].split(", ")
            row = bert.setdefault(mode, {"what": f"BERT-base, {mode}", **({"GPU": p.gpu} if several else {}),
                                         "bound": bound})
            if bound and bound not in row["bound"].split("-"):
                row["bound"] = "-".join(filter(None, (row["bound"], bound)))
            row[f"b{batch}"] = f"{p.real:.2f}x"
            row["provenance"] = p.kind
            continue
        rows.append({"what": label, **({"GPU": p.gpu} if several else {}), "bound": bound,
                     "speedup": f"{p.real:.2f}x", "provenance": p.kind})
    out = rows + list(bert.values())
    columns = list(dict.fromkeys(k for r in out for k in r if k != "provenance")) + ["provenance"]
    return [{k: r.get(k, "") for k in columns} for r in out]


def show_sparsity(info: Any, *, measure: bool | None = None) -> list[Any]:
    """The "Real 2:4 speedups" section in one call: find the 2:4 backends this GPU can run
    (:func:`probe_backend`, from ``info.sparse_2to4_backends``), measure the short sweep where one works (or
    when ``measure`` says so), and show every speedup there is (measured here, recorded, published) beside
    the roofline bound, as a figure (short row labels, the GPUs in the title, a line at 1.0x) and a compact
    Markdown table with the sources under it. Returns the points shown.

    Chapter: *2:4 structured sparsity*, "Real 2:4 speedups".
    """
    from .. import tables
    from ..tables import markdown_table
    from .figures import _show_speedup_figure

    found = probe_backend(info)
    run = found.works if measure is None else check.boolean("measure", measure)
    live = short_run(info) if run else None
    pts = speedup_points(live)
    labels = [_short_label(p) for p in pts]
    _show_speedup_figure(pts, labels)
    sources = "; ".join(dict.fromkeys(p.source for p in pts if p.source))
    tables.show_md(markdown_table(speedup_table_rows(pts)) + f"\n\n*Sources: {sources}.*")
    if live is not None:
        tables.show_md("\n\n".join(verdict(live)))
    return pts
