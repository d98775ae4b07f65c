"""Reading a ``sparsity`` result: per-shape rows beside the roofline bound, a text summary, the verdict.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb), "Real 2:4 speedups". Works for a sweep measured
here and for recorded results alike (``python -m ampere report`` and ``tools/gpu_check.py`` read results
through :func:`sweep_table` and :func:`verdict`).

Pure: no torch, no matplotlib.
"""

from __future__ import annotations

from typing import Any

from .. import check, specs
from .roofline import LinearShape, speedup_model


def sweep_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows per (shape, dtype, backend) of a ``sparsity`` result: times, speedup, numerics, model bound.

    Times are medians recomputed from the raw samples. ``model`` is the roofline speedup bound of the
    GPU's catalogue spec (None off the catalogue). Works for fresh and recorded results alike.

    Chapter: *2:4 structured sparsity*, "Real 2:4 speedups".
    """
    from ..results import validate
    from ..timing import Measurement

    validate(result)  # a result JSON of any benchmark; the field named in its errors is "result"
    if result["benchmark"] != "sparsity":
        raise ValueError(f"result must be a sparsity result, got one of {result['benchmark']!r}")
    spec = specs.match(result["device"].get("name"))
    by_key: dict[tuple, dict[str, Any]] = {}
    for rec in result["records"]:
        key = (rec["tokens"], rec["in_features"], rec["out_features"], rec["dtype"])
        by_key.setdefault(key, {})[(rec["kind"], rec["backend"])] = rec
    rows = []
    for (n, k, m, dt), recs in by_key.items():
        for (kind, backend), rec in recs.items():
            if kind not in ("sparse", "unstructured"):
                continue
            wanted = ("cublas-for-csr",) if kind == "unstructured" else ("cublas", "cpu")
            dense = next((r for (kd, bk), r in recs.items() if kd == "dense" and bk in wanted), None)
            if dense is None:
                continue
            dense_s = Measurement.from_dict(dense["measurement"]).median_s
            shape = LinearShape(n, k, m, dense.get("label", ""))
            t = Measurement.from_dict(rec["measurement"]).median_s
            comp = recs.get(("compress", backend))
            precision = {"float16": "fp16", "bfloat16": "bf16"}.get(dt)
            model = None
            if spec is not None and precision and spec.supports(precision, sparse=True) and kind == "sparse":
                model = speedup_model(spec, shape, precision, "2:4")
            rows.append({
                "shape": shape.name(), "dtype": dt, "backend": backend, "dense_ms": 1e3 * dense_s,
                "sparse_ms": 1e3 * t, "speedup": dense_s / t, "model_bound": model,
                "compress_ms": 1e3 * Measurement.from_dict(comp["measurement"]).median_s if comp else None,
                "dense_tflops": shape.flops / dense_s / 1e12, "sparse_tflops_equiv": shape.flops / t / 1e12,
                "rel_err": rec.get("derived", {}).get("rel_err"),
                "numerics_ok": rec.get("derived", {}).get("numerics_ok"), "flops": shape.flops,
            })
    return rows


def _sweep_summary(result: dict[str, Any]) -> str:
    rows = sweep_table(result)
    if not rows:
        return "no 2:4 configuration measured"
    lines = [f"{'shape':40s} {'dtype':9s} {'backend':17s} {'dense ms':>9s} {'sparse ms':>9s} {'speedup':>7s} "
             f"{'bound':>6s} {'compress ms':>11s} {'rel err':>8s}"]
    for r in rows:
        bound = f"{r['model_bound']:.2f}" if r["model_bound"] else "-"
        comp = f"{r['compress_ms']:.3f}" if r["compress_ms"] is not None else "-"
        err = f"{r['rel_err']:.1e}" if r["rel_err"] is not None else "-"
        lines.append(f"{r['shape'][:40]:40s} {r['dtype']:9s} {r['backend']:17s} {r['dense_ms']:9.3f} "
                     f"{r['sparse_ms']:9.3f} {r['speedup']:7.2f} {bound:>6s} {comp:>11s} {err:>8s}")
    return "\n".join(lines)


def verdict(result: dict[str, Any], target: float = 1.2) -> list[str]:
    """One line per (dtype, backend) on the largest measured shape: speedup against ``target``, and why.

    The diagnosis compares each kernel with its own peak (dense with the dense peak, sparse in
    dense-equivalent FLOP/s with the sparse peak) when the GPU is in the catalogue: a sparse kernel far
    below its peak while the dense one is near its own means the kernel, not the hardware, limits.

    Chapter: *2:4 structured sparsity*, "Real 2:4 speedups".
    """
    target = check.bounded("target", target, 0.01, 100.0, why="a speedup")
    rows = [r for r in sweep_table(result) if r["backend"] != "torch.sparse CSR"]
    if not rows:
        return ["no 2:4 configuration was measured"]
    spec = specs.match(result["device"].get("name"))
    largest = max(r["flops"] for r in rows)
    out = []
    for r in (r for r in rows if r["flops"] == largest):
        line = (f"{r['shape']} {r['dtype']} {r['backend']}: {r['speedup']:.2f}x "
                f"({'meets' if r['speedup'] >= target else 'below'} the {target:.1f}x target)")
        precision = {"float16": "fp16", "bfloat16": "bf16"}.get(r["dtype"])
        if spec is not None and precision and spec.supports(precision, sparse=True):
            dense_pct = 100 * r["dense_tflops"] * 1e12 / spec.peak_flops(precision)
            sparse_pct = 100 * r["sparse_tflops_equiv"] * 1e12 / spec.peak_flops(precision, sparse=True)
            line += (f"; dense at {r['dense_tflops']:.0f} TFLOP/s = {dense_pct:.0f} % of its peak, sparse at "
                     f"{r['sparse_tflops_equiv']:.0f} dense-equivalent TFLOP/s = {sparse_pct:.0f} % of the sparse peak")
            if r["speedup"] < target and sparse_pct < dense_pct:
                line += ": the sparse kernel reaches a smaller share of its peak than cuBLAS, so it is the limit"
        if r.get("numerics_ok") is False:
            line += "; WARNING: the sparse result does not match the dense product"
        out.append(line)
    return out
