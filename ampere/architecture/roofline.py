"""The roofline: arithmetic intensity of a matmul, ridge points, attainable FLOP/s and the curve to plot.

Chapter: *Architecture of the GA100* (book/architecture.ipynb), "The roofline". Pure Python and NumPy:
no torch, no matplotlib (the roofline is drawn by :mod:`ampere.architecture.figures`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .. import check, gemm, specs


_BYTES = {"fp64": 8, "fp64_tc": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1, "int4": 0.5}


def matmul_intensity(m: int, n: int, k: int, precision: str = "bf16") -> float:
    """Arithmetic intensity (FLOP/byte) of C[m,n] = A[m,k] @ B[k,n] if each matrix crosses DRAM once.

    FLOPs = 2mnk; bytes = element size x (mk + kn + mn). For a square n x n matmul in 2-byte elements
    this is n/3 FLOP/byte: a 4096^3 bf16 matmul does ~1365 FLOP per byte moved.

    Chapter: *Architecture of the GA100*, "The roofline".
    """
    m, n, k = (check.positive_int(label, v) for label, v in (("m", m), ("n", n), ("k", k)))
    check.one_of("precision", precision, _BYTES)
    return gemm.matmul_flops(m, n, k) / (_BYTES[precision] * (m * k + k * n + m * n))


def _supported(spec: specs.GPUSpec, precision: str) -> str:
    """``precision`` checked against the catalogue's names and against what ``spec`` has."""
    check.one_of("precision", precision, specs.PRECISIONS)
    if not spec.supports(precision):
        raise ValueError(f"precision={precision!r} is not supported on {spec.name}; allowed: "
                         f"{', '.join(spec.precisions())}")
    return precision


def _bandwidth(spec: specs.GPUSpec, bytes_per_s: float | None) -> float:
    """The roofline's bandwidth: ``bytes_per_s`` (finite, > 0) or the datasheet DRAM figure."""
    if bytes_per_s is None:
        return spec.hbm_bytes_per_s
    return check.positive("bytes_per_s", bytes_per_s)


def ridge_point(gpu: str | specs.GPUSpec, precision: str, bytes_per_s: float | None = None) -> float:
    """Arithmetic intensity (FLOP/byte) where the roofline of ``precision`` turns: dense peak / bandwidth.

    ``bytes_per_s`` defaults to the datasheet DRAM bandwidth (pass ``spec.l2_bytes_per_s`` for the L2 roof);
    zero, negative, NaN or infinite bandwidths are refused. Chapter: *Architecture of the GA100*, "The
    roofline".
    """
    spec = specs.get(gpu)
    return spec.peak_flops(_supported(spec, precision)) / _bandwidth(spec, bytes_per_s)


def attainable_flops(gpu: str | specs.GPUSpec, precision: str, intensity: float | Sequence[float],
                     bytes_per_s: float | None = None):
    """Roofline: min(peak, intensity x bandwidth). Bandwidth defaults to the datasheet DRAM figure.

    ``intensity`` is one number (returns a float) or a sequence or 1-D array of at most 10^6 numbers (returns
    an array), each finite and > 0 FLOP/byte. Chapter: *Architecture of the GA100*, "The roofline".
    """
    import numpy as np

    spec = specs.get(gpu)
    peak = spec.peak_flops(_supported(spec, precision))
    bw = _bandwidth(spec, bytes_per_s)
    if isinstance(intensity, np.ndarray) and intensity.dtype.kind in "iuf" and intensity.ndim == 1:
        if intensity.size > 10**6:
            raise ValueError(f"intensity must have at most 1,000,000 values, got {intensity.size}")
        x = intensity.astype(float)
        if not np.all(np.isfinite(x)) or np.any(x <= 0):
            raise ValueError("intensity must hold finite values > 0 FLOP/byte")
    elif isinstance(intensity, (list, tuple, np.ndarray)):
        x = np.asarray(check.sequence("intensity", intensity, check.positive, max_len=10**6), dtype=float)
    else:
        return float(min(peak, check.positive("intensity", intensity) * bw))
    return np.minimum(peak, x * bw)


def ridge_points(gpu: str | specs.GPUSpec, precisions: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Ridge point (FLOP/byte) of every precision (default: all ``gpu`` has) against DRAM (``ridge_dram``), against
    the L2's paper bandwidth where the whitepaper gives one (``ridge_l2``), and against the measured L2 plateau
    where a published sweep exists (``ridge_l2_measured``, :func:`ampere.architecture.cache.l2_summary`).

    Chapter: *Architecture of the GA100*, "The roofline".
    """
    from .cache import l2_summary

    spec = specs.get(gpu)
    chosen = spec.precisions() if precisions is None else check.names("precisions", precisions, specs.PRECISIONS)
    unsupported = [p for p in chosen if not spec.supports(p)]
    if unsupported:
        raise ValueError(f"precisions {unsupported} are not supported on {spec.name}; allowed: "
                         f"{', '.join(spec.precisions())}")
    try:
        measured_l2 = l2_summary(spec)["plateau_gb_per_s"] * 1e9
    except ValueError:  # no published sweep of this GPU
        measured_l2 = None
    out = []
    for p in chosen:
        row = {"gpu": spec.name, "precision": p, "ridge_dram": ridge_point(spec, p),
               "peak_tflops": spec.peak_flops(p) / 1e12}
        if spec.l2_bytes_per_s:
            row["ridge_l2"] = ridge_point(spec, p, spec.l2_bytes_per_s)
        if measured_l2:
            row["ridge_l2_measured"] = ridge_point(spec, p, measured_l2)
        out.append(row)
    return out


def roofline_curve(gpu: str | specs.GPUSpec, precision: str, lo: float = 0.1, hi: float = 1e4, points: int = 200,
                   bytes_per_s: float | None = None):
    """(intensity, attainable FLOP/s) arrays on a log grid, for plotting.

    Chapter: *Architecture of the GA100*, "The roofline".
    """
    import numpy as np

    lo, hi = check.positive("lo", lo), check.positive("hi", hi)
    if hi <= lo:
        raise ValueError(f"hi={hi:g} must be larger than lo={lo:g}")
    x = np.logspace(math.log10(lo), math.log10(hi), check.bounded_int("points", points, 2, 100_000,
                                                                       why="points of a plotted curve"))
    return x, attainable_flops(gpu, precision, x, bytes_per_s)
