"""Fitting the alpha-beta model to measured collectives: :func:`fit_alpha_beta`, :func:`holdout_check`.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), section "Fitting the model to the lab". The
model itself (``t = a alpha + b S / B``) lives in :mod:`ampere.collectives`. Pure Python and NumPy: no
torch, no matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from .. import check, fabrics
from .. import fields as _fields
from ..collectives import ALGORITHMS, alpha_beta_terms, check_op, collective_time


#: Percentile of the samples the chapter fits the alpha-beta model to (see CollectiveRun.quantile_s).
FIT_PERCENTILE = 10


#: The most points a fit or a prediction takes (a bound on the work of one call).
MAX_POINTS = 100_000


@dataclass(frozen=True)
class AlphaBetaFit:
    """alpha (s per step) and the link bandwidth B = 1/beta (bytes/s per direction) fitted to measurements.

    Chapter: *NVLink, NVSwitch and collectives*, section "Fitting the model to the lab".
    """

    op: str
    n: int
    algorithm: str
    latency_s: float  # alpha
    link_bytes_per_s: float  # 1 / beta

    def __post_init__(self) -> None:
        check_op(self.op)
        _fields.check_annotated(self, positive=("n", "link_bytes_per_s"), infinite=("link_bytes_per_s",),
                              maxima={"n": fabrics.MAX_GPUS, "latency_s": fabrics.MAX_LATENCY_S})
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm={self.algorithm!r} is not supported; allowed: {', '.join(ALGORITHMS)}")

    def predict(self, sizes_bytes: Sequence[float]) -> list[float]:
        sizes = check.sequence("sizes_bytes", sizes_bytes, check.nonneg, min_len=0, max_len=MAX_POINTS)
        return [collective_time(self.op, s, self.n, self.link_bytes_per_s, self.latency_s, self.algorithm)
                for s in sizes]


def fit_alpha_beta(op: str, n: int, sizes_bytes: Sequence[float], times_s: Sequence[float],
                   algorithm: str = "ring") -> AlphaBetaFit:
    """Least-squares fit of ``t = a alpha + b S / B`` minimising **relative** errors (sizes span decades).

    Chapter: *NVLink, NVSwitch and collectives*, section "Fitting the model to the lab". Both parameters
    are kept non-negative (a negative latency would mean the fit is extrapolating noise). Needs at least
    two distinct sizes.
    """
    import numpy as np

    a, b = alpha_beta_terms(op, n, algorithm)
    if a == 0 and b == 0:
        raise ValueError(f"n={n}: a single rank does not communicate; nothing to fit")
    S = np.asarray(check.sequence("sizes_bytes", sizes_bytes, check.nonneg, max_len=MAX_POINTS), dtype=float)
    t = np.asarray(check.sequence("times_s", times_s, check.positive, max_len=MAX_POINTS), dtype=float)
    if S.shape != t.shape or len(np.unique(S)) < 2:
        raise ValueError("sizes_bytes and times_s must have the same length with at least two distinct sizes")
    X = np.column_stack([np.full_like(S, a), b * S]) / t[:, None]  # relative residuals: (X p - t) / t
    y = np.ones_like(t)
    p, *_ = np.linalg.lstsq(X, y, rcond=None)
    if p[0] < 0:  # latency forced to zero: pure bandwidth fit
        p = np.array([0.0, float(np.dot(X[:, 1], y) / np.dot(X[:, 1], X[:, 1]))])
    if p[1] <= 0:  # bandwidth term unresolved: pure latency fit, bandwidth infinite
        p = np.array([float(np.dot(X[:, 0], y) / np.dot(X[:, 0], X[:, 0])), 0.0])
    alpha, beta = float(p[0]), float(p[1])
    return AlphaBetaFit(op, n, algorithm, alpha, 1.0 / beta if beta > 0 else math.inf)


def holdout_check(sizes_bytes: Sequence[float], times_s: Sequence[float], op: str, n: int,
                  algorithm: str = "ring") -> dict[str, Any]:
    """Fit alpha and beta on every other size (0, 2, 4, ...) and predict the others (1, 3, 5, ...).

    Chapter: *NVLink, NVSwitch and collectives*, section "Fitting the model to the lab". Returns the
    fit, the held-out sizes, measured and predicted times, and the relative errors (predicted/measured - 1).
    """
    sizes_bytes = check.sequence("sizes_bytes", sizes_bytes, check.nonneg, max_len=MAX_POINTS)
    times_s = check.sequence("times_s", times_s, check.positive, max_len=MAX_POINTS)
    if len(sizes_bytes) != len(times_s) or len(sizes_bytes) < 4:
        raise ValueError(f"sizes_bytes and times_s need at least 4 points each, as many of one as of the other "
                         f"(got {len(sizes_bytes)} and {len(times_s)}): fit on half, check on the other half")
    order = sorted(range(len(sizes_bytes)), key=lambda i: sizes_bytes[i])
    train, test = order[0::2], order[1::2]
    fit = fit_alpha_beta(op, n, [sizes_bytes[i] for i in train], [times_s[i] for i in train], algorithm)
    held = [sizes_bytes[i] for i in test]
    measured = [times_s[i] for i in test]
    predicted = fit.predict(held)
    errors = [p / m - 1 for p, m in zip(predicted, measured)]
    return {"fit": fit, "sizes_bytes": held, "measured_s": measured, "predicted_s": predicted,
            "rel_errors": errors, "max_abs_rel_error": max(abs(e) for e in errors)}
