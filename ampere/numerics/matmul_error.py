"""Emulated low-precision matmuls and their error: :func:`emulated_matmul` (inputs rounded to a format,
products accumulated in FP32, FP16 or BF16), :func:`relative_error`, the sweep over the inner dimension K
(:class:`ErrorSweep`, :func:`error_vs_k`), recursive summation at every prefix length
(:func:`accumulation_error_curve`), and the classical (K u) and probabilistic (sqrt(K) u) bounds
(:func:`dot_error_bound`, :func:`max_k_for_error`).

Pure NumPy. Chapter: *TF32 and the precision formats* (book/tf32.ipynb), section "Error that grows with K".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import check
from .formats import FLOAT_FORMATS, FORMATS
from .rounding import _float32_array, round_to


#: What :func:`emulated_matmul` can emulate: the input format of a tensor-core matmul with FP32 accumulation.
EMULATED = ("fp64", "fp32", "tf32", "bf16", "fp16")


def emulated_matmul(a: Any, b: Any, fmt: str = "tf32", mode: str = "nearest", accumulate: str = "fp32") -> np.ndarray:
    """A @ B as a tensor core computes it: inputs rounded to ``fmt``, products accumulated in ``accumulate``.

    ``accumulate="fp32"`` multiplies the rounded FP32 arrays with NumPy's FP32 matmul (BLAS; the products of
    TF32/BF16/FP16 inputs are exact in FP32, the sums are rounded in FP32). ``accumulate`` "fp16" or
    "bf16" sums term by term in that format (recursive summation, each partial sum rounded): what a
    low-precision accumulator would do. ``fmt="fp64"`` is the FP64 reference. Chapter *TF32 and the
    precision formats*, section "Error that grows with K".
    """
    check.one_of("fmt", fmt, EMULATED)
    check.one_of("accumulate", accumulate, ("fp32", "fp16", "bf16"))
    a, b = (_float32_array(n, v, np.float64 if fmt == "fp64" else np.float32) for n, v in (("a", a), ("b", b)))
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"shapes a={a.shape}, b={b.shape} do not multiply; need (M, K) and (K, N)")
    if fmt == "fp64":
        return a.astype(np.float64) @ b.astype(np.float64)
    ar = a.astype(np.float32) if fmt == "fp32" else round_to(a, fmt, mode)
    br = b.astype(np.float32) if fmt == "fp32" else round_to(b, fmt, mode)
    if accumulate == "fp32":
        return ar @ br
    acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k in range(a.shape[1]):
        acc = round_to(acc + np.outer(ar[:, k], br[k, :]), accumulate)
    return acc


def relative_error(c: Any, reference: Any) -> float:
    """Normwise relative error ||C - C_ref||_F / ||C_ref||_F, computed in FP64 (chapter *TF32 and the
    precision formats*)."""
    c = _float32_array("c", c, np.float64)
    ref = _float32_array("reference", reference, np.float64)
    if c.shape != ref.shape:
        raise ValueError(f"c has shape {c.shape} but reference has shape {ref.shape}; they must match")
    denom = np.linalg.norm(ref)
    if denom == 0:
        raise ValueError("reference is all zeros: the relative error is undefined")
    return float(np.linalg.norm(c - ref) / denom)


@dataclass
class ErrorSweep:
    """Relative error of emulated matmuls versus the inner dimension K (result of :func:`error_vs_k`)."""

    ks: list[int]
    errors: dict[str, list[float]]  # label -> median relative error per K
    m: int
    n: int
    trials: int
    data: str

    def at(self, label: str, k: int) -> float:
        return self.errors[label][self.ks.index(k)]


_SWEEP_CASES: dict[str, tuple[str, str]] = {
    "fp32": ("fp32", "nearest"), "tf32": ("tf32", "nearest"), "tf32 truncate": ("tf32", "truncate"),
    "bf16": ("bf16", "nearest"), "fp16": ("fp16", "nearest"),
}


def _sample(rng: np.random.Generator, shape: tuple[int, int], data: str) -> np.ndarray:
    if data == "normal":
        return rng.standard_normal(shape, dtype=np.float32)
    if data == "uniform":
        return rng.random(shape, dtype=np.float32)
    raise ValueError(f"data={data!r} is not allowed; allowed: 'normal' (zero mean), 'uniform' (on [0, 1))")


def error_vs_k(ks: Sequence[int] = (16, 64, 256, 1024, 4096, 16384), cases: Sequence[str] = tuple(_SWEEP_CASES),
               m: int = 64, n: int = 64, trials: int = 3, seed: int = 0, data: str = "normal") -> ErrorSweep:
    """Median relative error of ``m x K x n`` emulated matmuls (FP32 accumulation) against FP64, per K.

    ``cases`` are labels of :data:`_SWEEP_CASES`: "fp32", "tf32", "tf32 truncate", "bf16", "fp16". Inputs are
    random ``data`` ("normal": zero mean; "uniform": positive), drawn from ``numpy.random.default_rng(seed)``.
    Chapter *TF32 and the precision formats*, section "Error that grows with K".
    """
    for c in cases:
        check.one_of("cases", c, _SWEEP_CASES)
    ks = [check.positive_int("ks", k) for k in ks]
    m, n, trials = check.positive_int("m", m), check.positive_int("n", n), check.positive_int("trials", trials)
    check.one_of("data", data, ("normal", "uniform"))
    rng = np.random.default_rng(check.nonneg_int("seed", seed))
    errors: dict[str, list[float]] = {c: [] for c in cases}
    for k in ks:
        per_case: dict[str, list[float]] = {c: [] for c in cases}
        for _ in range(trials):
            a = _sample(rng, (m, int(k)), data)
            b = _sample(rng, (int(k), n), data)
            ref = emulated_matmul(a, b, "fp64")
            for c in cases:
                fmt, mode = _SWEEP_CASES[c]
                per_case[c].append(relative_error(emulated_matmul(a, b, fmt, mode), ref))
        for c in cases:
            errors[c].append(float(np.median(per_case[c])))
    return ErrorSweep(ks=[int(k) for k in ks], errors=errors, m=m, n=n, trials=trials, data=data)


def accumulation_error_curve(k_max: int = 4096, inputs: str = "fp16", accumulate: str = "fp16", m: int = 16,
                             n: int = 16, seed: int = 0, data: str = "uniform",
                             checkpoints: Sequence[int] | None = None, mode: str = "nearest") -> dict[str, list[float]]:
    """Relative error of dot products summed term by term in ``accumulate``, at every checkpoint K.

    Inputs are rounded to ``inputs`` with ``mode`` (see :func:`round_to`). One pass of recursive summation
    gives every prefix length at once. The error is componentwise,
    max_ij |C_K - C_ref| / (|A||B|)_ij, the quantity the K u and sqrt(K) u bounds are about. Returns
    ``{"k": [...], "error": [...]}``. Chapter *TF32 and the precision formats*, section "Error that grows
    with K".
    """
    check.one_of("accumulate", accumulate, ("fp32", "fp16", "bf16"))
    check.one_of("inputs", inputs, ("fp32", "tf32", "bf16", "fp16"))
    k_max = check.positive_int("k_max", k_max)
    m, n = check.positive_int("m", m), check.positive_int("n", n)
    check.one_of("data", data, ("normal", "uniform"))
    if checkpoints is None:
        checkpoints = np.unique(np.geomspace(1, k_max, 40).astype(int)).tolist()
    checkpoints = sorted({check.positive_int("checkpoints", c, maximum=k_max) for c in checkpoints})
    if not checkpoints:
        raise ValueError(f"checkpoints is empty; give values in 1..k_max={k_max}")
    rng = np.random.default_rng(check.nonneg_int("seed", seed))
    a = _sample(rng, (m, k_max), data)
    b = _sample(rng, (k_max, n), data)
    ar = a if inputs == "fp32" else round_to(a, inputs, mode)
    br = b if inputs == "fp32" else round_to(b, inputs, mode)
    acc = np.zeros((m, n), dtype=np.float32)
    exact = np.zeros((m, n), dtype=np.float64)
    absolute = np.zeros((m, n), dtype=np.float64)
    out_k, out_e = [], []
    want = set(checkpoints)
    for k in range(k_max):
        term = np.outer(ar[:, k], br[k, :])
        s = acc + term
        acc = s if accumulate == "fp32" else round_to(s, accumulate)
        exact += np.outer(a[:, k].astype(np.float64), b[k, :].astype(np.float64))
        absolute += np.abs(np.outer(a[:, k].astype(np.float64), b[k, :].astype(np.float64)))
        if k + 1 in want:
            out_k.append(k + 1)
            out_e.append(float(np.max(np.abs(acc - exact) / absolute)))
    return {"k": out_k, "error": out_e}


def _gamma(k: float, u: float) -> float:
    return k * u / (1 - k * u) if k * u < 1 else math.inf


def dot_error_bound(k: float, inputs: str = "tf32", accumulate: str = "fp32", model: str = "worst",
                    lam: float = 1.0) -> float:
    """Bound on |computed - exact| / (|a|^T |b|) for a length-``k`` dot product.

    Inputs rounded to ``inputs`` contribute 2u_in + u_in^2 (each product carries two rounding errors);
    the accumulation in ``accumulate`` adds gamma_k = k u / (1 - k u) (``model="worst"``, the classical
    bound, Higham 2002) or exp(lam sqrt(k) u + k u^2 / (1 - u)) - 1 (``model="probabilistic"``: it holds
    with a probability that approaches 1 quickly as lam grows, for independent mean-zero rounding errors,
    Higham and Mary 2019). Mixed-precision form after Blanchard et al. 2020. Chapter *TF32 and the precision formats*,
    section "Error that grows with K".
    """
    check.one_of("model", model, ("worst", "probabilistic"))
    k = check.real("k", k, minimum=1.0)
    check.one_of("inputs", inputs, FLOAT_FORMATS)
    check.one_of("accumulate", accumulate, FLOAT_FORMATS)
    lam = check.positive("lam", lam)
    u_acc = FORMATS[accumulate].unit_roundoff
    u_in = FORMATS[inputs].unit_roundoff if FORMATS[inputs].mantissa_bits < FORMATS[accumulate].mantissa_bits else 0.0
    rounding_inputs = 2 * u_in + u_in**2
    if model == "worst":
        return rounding_inputs + _gamma(k, u_acc)
    return rounding_inputs + math.expm1(lam * math.sqrt(k) * u_acc + k * u_acc**2 / (1 - u_acc))


def max_k_for_error(tol: float, inputs: str = "tf32", accumulate: str = "fp32", model: str = "worst",
                    lam: float = 1.0) -> int:
    """Largest K whose :func:`dot_error_bound` stays at or below ``tol`` (0 when even K = 1 exceeds it).

    Chapter *TF32 and the precision formats*, exercise "How long may a dot product be?".
    """
    tol = check.positive("tol", tol)
    if dot_error_bound(1, inputs, accumulate, model, lam) > tol:
        return 0
    lo, hi = 1, 2
    while dot_error_bound(hi, inputs, accumulate, model, lam) <= tol:
        lo, hi = hi, hi * 2
        if hi > 2**62:
            return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if dot_error_bound(mid, inputs, accumulate, model, lam) <= tol:
            lo = mid
        else:
            hi = mid
    return lo
