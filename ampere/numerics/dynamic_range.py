"""Dynamic range and loss scaling: synthetic gradient-like values (:func:`gradient_like_values`), what a
format flushes to zero, keeps as subnormals or overflows (:func:`range_census`), and static and dynamic
loss scaling (:func:`loss_scale_sweep`, :func:`best_loss_scale`).

Pure NumPy. Chapter: *TF32 and the precision formats* (book/tf32.ipynb), sections "Dynamic range" and
"Loss scaling".
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from .. import check
from .formats import FLOAT_FORMATS, get_format
from .rounding import _float32_array

#: Loss scales 2^k are searched for |k| up to this: FP32 gradients span 2^-149 to 2^128.
_MAX_LOG2 = 300


def gradient_like_values(n: int = 200_000, log10_low: float = -25.0, log10_high: float = 5.0,
                         seed: int = 0, distribution: str = "loguniform", log10_mean: float = -8.0,
                         log10_std: float = 2.0) -> np.ndarray:
    """Synthetic gradient-like FP32 values with random signs.

    ``distribution="loguniform"``: magnitudes spread evenly over the decades [log10_low, log10_high]
    (30 decades by default). ``"lognormal"``: log10 |g| ~ Normal(log10_mean, log10_std), the bell-shaped
    histograms gradients show in practice. Chapter *TF32 and the precision formats*, section "Dynamic range".
    """
    n = check.bounded_int("n", n, 1, 10**7, why="values held in memory at once")
    check.one_of("distribution", distribution, ("loguniform", "lognormal"))
    rng = np.random.default_rng(check.nonneg_int("seed", seed))
    # FP32 holds magnitudes from 1.4e-45 (below: zero) to 3.4e38 (above: overflow)
    log10_low = check.bounded("log10_low", log10_low, -60.0, 38.0, why="FP32 magnitudes, with room below zero")
    log10_high = check.bounded("log10_high", log10_high, -60.0, 38.0, why="FP32 overflows above 3.4e38")
    log10_mean = check.bounded("log10_mean", log10_mean, -60.0, 38.0, why="FP32 magnitudes")
    log10_std = check.positive("log10_std", log10_std, maximum=50.0)
    if distribution == "loguniform":
        if not log10_low < log10_high:
            raise ValueError(f"log10_low={log10_low} must be below log10_high={log10_high}")
        exps = rng.uniform(log10_low, log10_high, n)
    else:
        exps = rng.normal(log10_mean, log10_std, n)
    signs = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return (signs * 10.0 ** np.minimum(exps, 38.0)).astype(np.float32)


def range_census(x: Any, fmt: str) -> dict[str, float]:
    """Fractions of the nonzero values ``x`` that ``fmt`` flushes to zero, keeps as subnormals (reduced
    precision), keeps as normals, or overflows (inf, or saturation for E4M3), by round-to-nearest.

    Decided from the format's thresholds, so it works for every float format; for BF16 and FP16 the unit
    tests check it against :func:`round_to`. Chapter *TF32 and the precision formats*, section "Dynamic range".
    """
    check.one_of("fmt", fmt, FLOAT_FORMATS)
    f = get_format(fmt)
    mag = np.abs(_float32_array("x", x).astype(np.float64)).reshape(-1)
    mag = mag[(mag > 0) & np.isfinite(mag)]
    if mag.size == 0:
        raise ValueError("x holds no finite nonzero value")
    zero = mag <= f.underflow_threshold
    over = mag >= f.overflow_threshold
    # values just below the smallest normal can round up to it: normal if they round to >= min_normal
    normal_cut = f.min_normal - math.ldexp(1.0, f.emin - f.mantissa_bits - 1)
    sub = ~zero & (mag < normal_cut)
    normal = ~zero & ~sub & ~over
    size = mag.size
    return {"zero": zero.sum() / size, "subnormal": sub.sum() / size, "normal": normal.sum() / size,
            "overflow": over.sum() / size}


def loss_scale_sweep(grads: Any, fmt: str = "fp16",
                     log2_scales: Iterable[int] = range(0, 41)) -> list[dict[str, float]]:
    """For each scale S = 2^k: fractions of ``grads`` x S that ``fmt`` flushes to zero or overflows.

    Multiplying the loss by S multiplies every gradient by S (the chain rule is linear), so this is what
    static loss scaling does to the gradient histogram (Micikevicius et al. 2018). Chapter *TF32 and the
    precision formats*, section "Loss scaling".
    """
    check.one_of("fmt", fmt, FLOAT_FORMATS)
    g = _float32_array("grads", grads).astype(np.float64)
    scales = check.sequence("log2_scales", log2_scales,
                            lambda name, k: check.integer(name, k, minimum=-_MAX_LOG2, maximum=_MAX_LOG2), max_len=1000)
    rows = []
    for k in scales:
        census = range_census(g * 2.0**k, fmt)
        rows.append({"log2_scale": int(k), "scale": 2.0**k, "zero": census["zero"],
                     "subnormal": census["subnormal"], "overflow": census["overflow"]})
    return rows


def best_loss_scale(grads: Any, fmt: str = "fp16", max_log2: int = 40) -> int:
    """Largest power-of-two exponent k <= ``max_log2`` with no overflow of ``grads`` x 2^k in ``fmt``: where
    dynamic loss scaling (halve on overflow, grow otherwise) settles. Chapter *TF32 and the precision formats*.
    """
    check.one_of("fmt", fmt, FLOAT_FORMATS)
    max_log2 = check.integer("max_log2", max_log2, minimum=-_MAX_LOG2, maximum=_MAX_LOG2)
    f = get_format(fmt)
    g = np.abs(_float32_array("grads", grads).astype(np.float64))
    peak = float(np.max(g[np.isfinite(g)])) if g.size else 0.0
    if peak == 0:
        return max_log2
    threshold = f.overflow_threshold  # inf for FP64: there the largest finite double is the limit

    def overflows(k: int) -> bool:
        try:
            scaled = math.ldexp(peak, k)
        except OverflowError:
            return True
        return scaled >= threshold if math.isfinite(threshold) else math.isinf(scaled)

    limit = threshold if math.isfinite(threshold) else f.max_normal
    k = math.floor(math.log2(limit) - math.log2(peak))
    while k > -2000 and overflows(k):  # the floor may sit on the threshold
        k -= 1
    return min(k, max_log2)
