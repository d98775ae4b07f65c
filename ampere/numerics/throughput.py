"""Matmul throughput read, not measured: the precisions the benchmark times (:data:`MATMUL_PRECISIONS`),
peaks and their ratios from :mod:`ampere.specs` (:func:`peak_ratio`), the published TF32 timings
(:func:`published_tf32`, :func:`published_tf32_speedup`), the results recorded with ``bench tf32``
(:func:`recorded_results`), and table rows and TF32 speedups of throughput records
(:func:`throughput_rows`, :func:`tf32_speedups`).

Pure Python. Chapter: *TF32 and the precision formats* (book/tf32.ipynb), section "How much faster is TF32?" and
the claims checked.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence


def published_tf32(gpu: str | None = None) -> list[Any]:
    """Published TF32 against strict FP32 measurements (``ampere/data/published/tf32.json``) as ``Record`` rows:
    the PyTorch CUDA notes time one 10240^3 FP32 matmul on an A100 with TF32 on and off
    (``tf32_time_s``, ``fp32_time_s``) and give each one's max error over the mean of the FP64 product.
    Read the speedup with :func:`published_tf32_speedup`. Chapter *TF32 and the precision formats*.
    """
    from .. import results

    return results.records(benchmark="tf32", gpu=gpu, kind="published")


def _tf32_record(rec: Any) -> Any:
    """``rec`` if it is a ``results.Record`` of the ``tf32`` benchmark with both timings and the shape."""
    from .. import results

    if not isinstance(rec, results.Record):
        raise TypeError(f"rec must be a results.Record (see published_tf32()), got {type(rec).__name__}")
    if rec.benchmark != "tf32" or not {"tf32_time_s", "fp32_time_s"} <= set(rec.figures) \
            or not {"m", "n", "k"} <= set(rec.params):
        raise ValueError(f"rec {rec.id or rec.benchmark!r} is not a tf32 timing record: it needs the figures "
                         "tf32_time_s and fp32_time_s and the params m, n, k")
    return rec


def printed_interval(value: float) -> tuple[float, float]:
    """The interval a number printed with the digits of ``repr(value)`` stands for: the value plus or minus half a
    unit of its last printed digit ("0.11" is anything in [0.105, 0.115]). Chapter *TF32 and the precision
    formats*, "How much faster is TF32?"."""
    from decimal import Decimal

    from .. import check

    x = check.positive("value", value)
    exponent = Decimal(repr(x)).as_tuple().exponent
    if not isinstance(exponent, int):
        raise ValueError(f"value={value!r} has no printed digits")
    half = 0.5 * 10.0 ** exponent
    # with 16-17 printed digits half a unit is below the float's own spacing: never narrower than one ulp
    return min(x - half, math.nextafter(x, -math.inf)), max(x + half, math.nextafter(x, math.inf))


def published_tf32_bounds(rec: Any) -> dict[str, tuple[float, float]]:
    """What the printed timings of a published ``tf32`` record allow, each as a (low, high) interval: TFLOP/s of
    strict FP32 and of TF32 (2 m n k / t), their ratios to the dense FP32 and TF32 peaks of the record's GPU, and
    the speedup. A time printed as "0.11" s with two significant digits is known to +-4.5 %, and so is every
    figure derived from it. No kernel beats its peak, so the times are also capped below at flops / peak
    (``*_time_capped_s``), and ``speedup`` is computed from the capped times (``speedup_uncapped`` from the digits
    alone). Chapter *TF32 and the precision formats*, "How much faster is TF32?"."""
    from .. import gemm, specs

    rec = _tf32_record(rec)
    spec = specs.get(rec.gpu)
    flops = gemm.matmul_flops(rec.params["m"], rec.params["n"], rec.params["k"])
    t32 = printed_interval(float(rec.figure("fp32_time_s")))
    ttf = printed_interval(float(rec.figure("tf32_time_s")))
    fp32 = (flops / t32[1] / 1e12, flops / t32[0] / 1e12)
    tf32 = (flops / ttf[1] / 1e12, flops / ttf[0] / 1e12)
    p32, ptf = spec.peak_flops("fp32") / 1e12, spec.peak_flops("tf32") / 1e12
    # no kernel beats its peak: the fastest time the digits allow is capped at flops / peak
    t32_min, ttf_min = max(t32[0], flops / (p32 * 1e12)), max(ttf[0], flops / (ptf * 1e12))
    return {"fp32_time_s": t32, "tf32_time_s": ttf, "fp32_tflops": fp32, "tf32_tflops": tf32,
            "fp32_ratio_to_peak": (fp32[0] / p32, fp32[1] / p32), "tf32_ratio_to_peak": (tf32[0] / ptf, tf32[1] / ptf),
            "fp32_time_capped_s": (t32_min, t32[1]), "tf32_time_capped_s": (ttf_min, ttf[1]),
            "speedup_uncapped": (t32[0] / ttf[1], t32[1] / ttf[0]),
            "speedup": (t32_min / ttf[1], t32[1] / ttf_min)}


def published_tf32_speedup(rec: Any) -> float:
    """Strict-FP32 time over TF32 time of a published ``tf32`` record (chapter *TF32 and the precision formats*)."""
    rec = _tf32_record(rec)
    return float(rec.figure("fp32_time_s")) / float(rec.figure("tf32_time_s"))


#: Precisions :func:`measure_throughput` times. fp32 is strict FP32 (TF32 off); int8 uses torch._int_mm.
MATMUL_PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp16", "int8")


def peak_ratio(gpu: str, numerator: str = "tf32", denominator: str = "fp32", sparse: bool = False) -> float:
    """Ratio of two dense (or ``sparse`` numerator) peaks of ``gpu`` from :mod:`ampere.specs`: the upper bound
    of the TF32 speedup over strict FP32. Chapter *TF32 and the precision formats*, claims checked."""
    from .. import check, specs

    spec = specs.get(gpu)
    names = (*specs.PRECISIONS, *specs.SIMT_PRECISIONS)
    for field_name, p in (("numerator", numerator), ("denominator", denominator)):
        check.one_of(field_name, p, names)
        if not spec.supports(p):
            raise ValueError(f"{field_name}={p!r} is not supported on {spec.name}; allowed: "
                             f"{', '.join(spec.precisions())}")
    if check.boolean("sparse", sparse) and not spec.supports(numerator, sparse=True):
        raise ValueError(f"sparse=True: {spec.name} has no 2:4 sparse peak for numerator={numerator!r}")
    return spec.peak_flops(numerator, sparse=sparse) / spec.peak_flops(denominator)


def _peak_for(spec: Any, precision: str) -> tuple[str, float] | None:
    """The peak a measured precision is compared with (:func:`ampere.gemm.peak_precision_for`: FP64 matmuls
    run on the FP64 tensor cores where present)."""
    from .. import gemm

    key = gemm.peak_precision_for(spec, precision) if spec is not None else None
    return (key, spec.peak_flops(key)) if key else None


def _records(records: Any) -> list[dict[str, Any]]:
    """``records`` of ``bench tf32`` (or :func:`measure_throughput`): a list of mappings; throughput records need
    ``precision``, ``n``, ``flops`` and ``measurement``."""
    from .. import check

    out = check.sequence("records", records, check.mapping, min_len=0, max_len=100_000)
    for i, r in enumerate(out):
        if r.get("kind", "throughput") == "throughput" and not {"precision", "n", "flops", "measurement"} <= set(r):
            raise ValueError(f"records[{i}] is a throughput record without precision, n, flops and measurement")
    return out


def throughput_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Table rows (precision, n, TFLOP/s, % of peak) of throughput records, with rates recomputed from the
    raw samples (so recorded JSON files and fresh measurements read the same). Chapter *TF32 and the
    precision formats*."""
    from ..timing import Measurement

    rows = []
    for rec in _records(records):
        if rec.get("kind", "throughput") != "throughput":
            continue
        m = Measurement.from_dict(rec["measurement"])
        tflops = m.rate(rec["flops"]) / 1e12
        row = {"precision": rec["precision"], "n": int(rec["n"]), "tflops": tflops, "median_ms": m.median_s * 1e3,
               "pct_of_peak": None, "peak_precision": rec.get("peak_precision")}
        if rec.get("peak_tflops"):
            row["pct_of_peak"] = 100 * tflops / rec["peak_tflops"]
        rows.append(row)
    return rows


def tf32_speedups(records: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """Median-time ratio strict FP32 / TF32 per size n present for both (chapter *TF32 and the precision
    formats*, acceptance target >= 5x at 4096^3 on an A100/H100)."""
    by = {(r["precision"], r["n"]): r for r in throughput_rows(_records(records))}
    out = {}
    for (p, n), r in sorted(by.items(), key=lambda kv: kv[0][1]):
        if p == "tf32" and ("fp32", n) in by:
            out[int(n)] = r["tflops"] / by[("fp32", n)]["tflops"]
    return out


def recorded_results() -> list[dict[str, Any]]:
    """Results of ``python -m ampere bench tf32`` shipped in ampere/data (chapter *TF32 and the precision
    formats*)."""
    from .. import results

    return results.recorded(benchmark="tf32")
