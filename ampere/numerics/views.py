"""The "How much faster is TF32?" section in one call (:func:`show_tf32`): strict-FP32 and TF32 throughput,
measured here, recorded or published, beside the dense peaks (:func:`tf32_points`), shown with
:mod:`ampere.views` as a figure and a Markdown table.

Measures through :mod:`.measure` and draws through :mod:`ampere.views` (both import torch or matplotlib
inside their functions). Chapter: *TF32 and the precision formats* (book/tf32.ipynb), section "How much faster
is TF32?".
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .. import check
from .measure import compare_tf32_with_emulation, measure_throughput, tf32_conversion_probe
from .throughput import published_tf32, throughput_rows, tf32_speedups


#: How to read the error table and the conversion probe; shown only with them, after a measurement.
_ERROR_GUIDE = (
    "How to read the error table below. If the device rounds its inputs like the `nearest` emulation, the column "
    "\"device / emulated\" is close to 1, the distance between the device and the `nearest` emulation is far below "
    "the TF32 error itself (it is FP32 accumulation noise), and the distance to the `truncate` emulation is of the "
    "size of the error; a device that truncates swaps the two distances and shows two to three times the error. "
    "Ties to even cannot be told from ties away on random data (ties are too rare): the conversion probe, whose "
    "inputs are a quarter ties, settles the rule, which reproduces 100 % of the half-way values.")


def tf32_points(info: Any = None, records: Sequence[Mapping[str, Any]] | None = None, min_n: int = 2048) -> list[Any]:
    """Strict-FP32 and TF32 matmul throughput beside their dense peaks: ``records`` (measured here), results
    recorded with ``bench tf32`` (``ampere/data``), then published timings (:func:`published_tf32`, turned
    into TFLOP/s as 2 n^3 / t). Chapter *TF32 and the precision formats*, section "How much faster is TF32?".
    """
    from .. import gemm, results, specs, views

    def peak(gpu: str | None, p: str) -> float | None:
        spec = specs.match(gpu) if gpu and gpu not in specs.names() else (specs.get(gpu) if gpu else None)
        key = gemm.peak_precision_for(spec, p) if spec is not None else None
        return spec.peak_flops(key) / 1e12 if key else None

    from .throughput import _records

    min_n = check.positive_int("min_n", min_n, maximum=2**20)
    records = _records(records) if records is not None else []
    label = {"fp32": "FP32 (TF32 off)", "tf32": "TF32"}
    pts = []
    if info is not None and not callable(getattr(info, "label", None)):
        raise TypeError(f"info must be a DeviceInfo (ampere.device.device_info()) or None, got {type(info).__name__}")
    gpu_here = (getattr(info, "spec_name", None) or info.label()) if info is not None else "this GPU"
    for r in throughput_rows(records or ()):
        if r["precision"] in label and r["n"] >= min_n:
            pts.append(views.Point(f"{label[r['precision']]} {r['n']}³", gpu_here, peak(getattr(info, "spec_name", None),
                                   r["precision"]), r["tflops"], "TFLOP/s", kind="measured", source="measured here"))
    for res in results.recorded(benchmark="tf32"):
        if res["device"].get("backend") != "cuda":
            continue
        gpu = res["device"].get("spec_name") or res["device"].get("name", "?")
        for r in throughput_rows(res["records"]):
            if r["precision"] in label and r["n"] >= min_n:
                pts.append(views.Point(f"{label[r['precision']]} {r['n']}³", gpu, peak(gpu, r["precision"]),
                                       r["tflops"], "TFLOP/s", kind="recorded", source=results.provenance(res)))
    for rec in published_tf32():
        flops = gemm.matmul_flops(rec.params["m"], rec.params["n"], rec.params["k"])
        for p in ("fp32", "tf32"):
            pts.append(views.Point(f"{label[p]} {rec.params['n']}³", rec.gpu, peak(rec.gpu, p),
                                   flops / rec.figure(f"{p}_time_s") / 1e12, "TFLOP/s", kind="published",
                                   source=views.source_text(rec)))
    return pts


def show_tf32(info: Any, *, measure: bool | None = None, sizes: Sequence[int] = (4096, 8192)) -> list[Any]:
    """The "How much faster is TF32?" section in one call. Where TF32 tensor cores exist (``info.tf32``, or when
    ``measure`` says so) it times strict FP32 and TF32 (and FP64, BF16, FP16, INT8 where the GPU has them)
    with :func:`measure_throughput`, compares the device's TF32 product with the CPU emulation and runs the
    conversion probe; then it shows every FP32 and TF32 throughput there is (measured here, recorded,
    published) beside the dense peaks, as a figure and a Markdown table, and, after a measurement, the
    error table and the rounding rule found. Returns the points shown.

    Chapter *TF32 and the precision formats*, section "How much faster is TF32?".
    """
    from .. import device as _device
    from .. import tables, views

    run = bool(getattr(info, "tf32", False)) if measure is None else check.boolean("measure", measure)
    sizes = check.sequence("sizes", sizes, lambda name, n: check.positive_int(name, n, maximum=65536), max_len=8)
    records: list[dict[str, Any]] = []
    if run:
        dev = _device.torch_device(info)
        records, _ = measure_throughput(tuple(sizes), device=dev, warmup_s=1.0, max_time_s=3.0, info=info)
        records += compare_tf32_with_emulation(dev, ks=(256, 1024, 4096))
        records.append(tf32_conversion_probe(dev))
    pts = tf32_points(info, records, min_n=min(sizes) if run else 2048)
    values = [v for p in pts for v in (p.model, p.real) if v]
    # a log axis only when the rows span more than a decade (FP64 to INT8 on a GPU); published FP32 and
    # TF32 alone (19.5 to 156) read better on a linear one, without 2x10^1-style tick labels
    wide = bool(values) and max(values) > 10 * min(values)
    views.show(pts, title="Strict FP32 and TF32 matmuls against their dense peaks", model_label="dense peak",
               real_label="reached", digits=1, log=wide)
    if run:
        for n, speedup in tf32_speedups(records).items():
            tables.show_md(f"TF32 over strict FP32 at {n}³ on this GPU: {speedup:.2f}x.")
        err = [r for r in records if r.get("kind") == "tf32_error"]
        tables.show_md(_ERROR_GUIDE)
        tables.show_md(tables.markdown_table(
            [{"K": r["params"]["k"], "device TF32": f"{r['derived']['device_tf32']:.2e}",
              "emulated nearest": f"{r['derived']['emulated_nearest']:.2e}",
              "emulated truncate": f"{r['derived']['emulated_truncate']:.2e}",
              "device / emulated": f"{r['derived']['ratio_to_nearest']:.3f}",
              "distance to nearest": f"{r['derived']['distance_to_nearest']:.1e}",
              "distance to truncate": f"{r['derived']['distance_to_truncate']:.1e}"} for r in err]))
        probe = next((r for r in records if r.get("kind") == "tf32_conversion"), None)
        if probe:
            ties = probe["derived"]["match_on_ties"]
            tables.show_md("Conversion probe, share of half-way values each rule reproduces: "
                           + ", ".join(f"{k} {v:.3f}" for k, v in ties.items()) + ".")
    return pts
