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
from .rounding import ROUNDING_MODES, _check_mode, _float32_array, round_to


#: What :func:`emulated_matmul` can emulate: the input format of a tensor-core matmul with FP32 accumulation.
EMULATED = ("fp64", "fp32", "tf32", "bf16", "fp16")
#: Bounds of the sweeps (checked before anything is allocated): inner dimensions, output sizes, trials, and
#: the elements of one random input matrix (2^26 FP32 values = 256 MiB).
_MAX_K, _MAX_MN, _MAX_TRIALS, _MAX_KS, _MAX_ELEMENTS = 2**20, 4096, 100, 32, 2**26
#: Term-by-term accumulation loops over K in Python: at most this many terms, and outputs of at most 512 x 512.
_MAX_K_CURVE, _MAX_MN_CURVE = 2**16, 512
_DATA = ("normal", "uniform")


def emulated_matmul(a: Any, b: Any, fmt: str = "tf32", mode: str = "nearest", accumulate: str = "fp32") -> np.ndarray:
    """A @ B as a tensor core computes it: inputs rounded to ``fmt``, products accumulated in ``accumulate``.

    ``accumulate="fp32"`` multiplies the rounded FP32 arrays with NumPy's FP32 matmul (BLAS; the products of
    TF32/BF16/FP16 inputs are exact in FP32, the sums are rounded in FP32). ``accumulate`` "fp16" or
    "bf16" sums term by term in that format (recursive summation, each partial sum rounded): what a
    low-precision accumulator would do. ``fmt="fp64"`` is the FP64 reference. Chapter *TF32 and the
    precision formats*, section "Error that grows with K".
    """
    check.one_of("fmt", fmt, EMULATED)
    if fmt in ROUNDING_MODES:
        _check_mode(fmt, mode)
    else:
        check.one_of("mode", mode, ("nearest",))
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
    if a.shape[1] > _MAX_K_CURVE:
        raise ValueError(f"a has K={a.shape[1]} columns; term-by-term accumulation in {accumulate} loops over K and "
                         f"allows at most {_MAX_K_CURVE:,}")
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

    def __post_init__(self) -> None:
        self.ks = check.sequence("ErrorSweep.ks", self.ks, lambda name, k: check.positive_int(name, k, maximum=_MAX_K),
                                 max_len=_MAX_KS)
        errors = check.mapping("ErrorSweep.errors", self.errors, allow_empty=False)
        self.errors = {check.string("ErrorSweep.errors (a label)", label): check.sequence(
            f"ErrorSweep.errors[{label!r}]", errs, check.nonneg, min_len=len(self.ks), max_len=len(self.ks))
            for label, errs in errors.items()}
        self.m = check.positive_int("ErrorSweep.m", self.m, maximum=_MAX_MN)
        self.n = check.positive_int("ErrorSweep.n", self.n, maximum=_MAX_MN)
        self.trials = check.positive_int("ErrorSweep.trials", self.trials, maximum=_MAX_TRIALS)
        self.data = check.one_of("ErrorSweep.data", self.data, _DATA)

    def at(self, label: str, k: int) -> float:
        """The median relative error of case ``label`` at inner dimension ``k`` (one of :attr:`ks`)."""
        label = check.one_of("label", label, list(self.errors))
        k = check.choice("k", check.positive_int("k", k), self.ks)
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
    cases = check.names("cases", cases, _SWEEP_CASES, max_len=len(_SWEEP_CASES), unique=True)
    ks = check.sequence("ks", ks, lambda name, k: check.positive_int(name, k, maximum=_MAX_K), max_len=_MAX_KS)
    m, n = check.positive_int("m", m, maximum=_MAX_MN), check.positive_int("n", n, maximum=_MAX_MN)
    trials = check.positive_int("trials", trials, maximum=_MAX_TRIALS)
    check.one_of("data", data, _DATA)
    if max(ks) * max(m, n) > _MAX_ELEMENTS:
        raise ValueError(f"ks up to {max(ks)} with m={m}, n={n} make {max(ks) * max(m, n):,} elements per input "
                         f"matrix; the sweep allows {_MAX_ELEMENTS:,} (256 MiB of FP32)")
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
    if inputs != "fp32":
        _check_mode(inputs, mode)
    else:
        check.one_of("mode", mode, ("nearest",))
    k_max = check.positive_int("k_max", k_max, maximum=_MAX_K_CURVE)
    m, n = check.positive_int("m", m, maximum=_MAX_MN_CURVE), check.positive_int("n", n, maximum=_MAX_MN_CURVE)
    check.one_of("data", data, _DATA)
    if checkpoints is None:
        checkpoints = np.unique(np.geomspace(1, k_max, 40).astype(int)).tolist()
    checkpoints = sorted(set(check.sequence("checkpoints", checkpoints,
                                            lambda name, c: check.positive_int(name, c, maximum=k_max),
                                            max_len=_MAX_K_CURVE)))
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


#: Largest lambda of the probabilistic bound: at lambda = 10 the failure term 2 exp(-lambda^2 / 2) is 4e-22.
_MAX_LAMBDA = 100.0


def _unit_roundoffs(inputs: str, accumulate: str) -> tuple[float, float]:
    """(u of the inputs' rounding, u of the accumulation): inputs at least as precise as the accumulator cost 0."""
    fin, facc = FORMATS[inputs], FORMATS[accumulate]
    return (fin.unit_roundoff if fin.mantissa_bits < facc.mantissa_bits else 0.0), facc.unit_roundoff


def _bound(k: float, u_in: float, u_acc: float, model: str, lam: float) -> float:
    """(1 + u_in)^2 (1 + accumulation term) - 1; inf where the worst-case term does not exist (k u >= 1)."""
    if model == "worst":
        acc = _gamma(k, u_acc)
    else:
        exponent = lam * math.sqrt(k) * u_acc + k * u_acc**2 / (1 - u_acc)
        acc = math.expm1(exponent) if exponent < 700 else math.inf
    return (1 + u_in) ** 2 * (1 + acc) - 1 if math.isfinite(acc) else math.inf


def _lambda_for(k: int, confidence: float, u_acc: float) -> float:
    """The lambda whose inner-product probability Q(lambda, k) = 1 - 2k exp(-lambda^2 (1-u)^2 / 2) is ``confidence``."""
    return math.sqrt(2 * math.log(2 * k / (1 - confidence))) / (1 - u_acc)


def probabilistic_confidence(k: int, lam: float = 1.0, accumulate: str = "fp32") -> float:
    """The probability with which Higham and Mary's bound (``model="probabilistic"`` of :func:`dot_error_bound`)
    holds for a dot product of length ``k``: Q = 1 - k (1 - P(lam)), with P(lam) = 1 - 2 exp(-lam^2 (1-u)^2 / 2)
    for each of the k rounding chains and u the unit roundoff of ``accumulate``; 0 where that is negative (the
    theorem then promises nothing). At lam = 1 even one chain gets no guarantee (P < 0): the sqrt(K) u rule of
    thumb. Chapter *TF32 and the precision formats*, exercise "How long may a dot product be?".
    """
    k = check.positive_int("k", k, maximum=2**62)
    lam = check.positive("lam", lam, maximum=_MAX_LAMBDA)
    u = FORMATS[check.one_of("accumulate", accumulate, FLOAT_FORMATS)].unit_roundoff
    return max(0.0, 1.0 - k * 2.0 * math.exp(-(lam * (1 - u)) ** 2 / 2))


def dot_error_bound(k: int, inputs: str = "tf32", accumulate: str = "fp32", model: str = "worst",
                    lam: float = 1.0) -> float:
    """Bound on |computed - exact| / (|a|^T |b|) for a dot product of length ``k``.

    Each product carries the rounding of its two inputs, (1 + u_in)^2 (inputs at least as precise as the
    accumulator cost nothing), and the accumulation in ``accumulate`` at most gamma_k = k u / (1 - k u)
    (``model="worst"``, the classical bound, Higham 2002) or exp(lam sqrt(k) u + k u^2 / (1 - u)) - 1
    (``model="probabilistic"``, Higham and Mary 2019: for independent mean-zero rounding errors it holds with the
    probability :func:`probabilistic_confidence`): the bound is (1 + u_in)^2 (1 + that term) - 1, about
    2 u_in + gamma_k to first order. Mixed-precision form after Blanchard et al. 2020. The worst case exists
    only for k u < 1. Chapter *TF32 and the precision formats*, section "Error that grows with K".
    """
    check.one_of("model", model, ("worst", "probabilistic"))
    check.one_of("inputs", inputs, FLOAT_FORMATS)
    check.one_of("accumulate", accumulate, FLOAT_FORMATS)
    lam = check.positive("lam", lam, maximum=_MAX_LAMBDA)
    u_in, u_acc = _unit_roundoffs(inputs, accumulate)
    k = check.positive_int("k", k, maximum=2**62)
    out = _bound(k, u_in, u_acc, model, lam)
    if not math.isfinite(out):
        if model == "worst":
            raise ValueError(f"k={k}: the worst bound of an {accumulate} accumulation exists only for k u < 1, "
                             f"k < {int(1 / u_acc):,}")
        raise ValueError(f"k={k}, lam={lam:g}: the probabilistic bound overflows a float (it is far above 1)")
    return out


def max_k_for_error(tol: float, inputs: str = "tf32", accumulate: str = "fp32", model: str = "worst",
                    lam: float = 1.0, confidence: float | None = None) -> int:
    """Largest K whose :func:`dot_error_bound` stays at or below ``tol`` (0 when even K = 1 exceeds it).

    With ``model="probabilistic"`` and a ``confidence`` (e.g. 0.99), lam is chosen for each K so that the bound
    holds with that probability (:func:`probabilistic_confidence`); without one, ``lam`` is fixed (lam = 1: the
    sqrt(K) u rule of thumb, which carries no probability). ``tol`` is a relative error in (0, 1].
    Chapter *TF32 and the precision formats*, exercise "How long may a dot product be?".
    """
    tol = check.positive("tol", tol, maximum=1.0)
    check.one_of("model", model, ("worst", "probabilistic"))
    check.one_of("inputs", inputs, FLOAT_FORMATS)
    check.one_of("accumulate", accumulate, FLOAT_FORMATS)
    lam = check.positive("lam", lam, maximum=_MAX_LAMBDA)
    confidence = check.optional(check.real, "confidence", confidence, minimum=0.0, strict_min=True, maximum=1.0)
    if confidence is not None and (model != "probabilistic" or confidence >= 1.0):
        raise ValueError(f"confidence={confidence!r}: give a probability below 1, with model='probabilistic' only")
    u_in, u_acc = _unit_roundoffs(inputs, accumulate)

    def bound(k: int) -> float:
        la = lam if confidence is None else _lambda_for(k, confidence, u_acc)
        return _bound(k, u_in, u_acc, model, la)

    if bound(1) > tol:
        return 0
    lo, hi = 1, 2
    while bound(hi) <= tol:
        lo, hi = hi, hi * 2
        if hi > 2**62:
            return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bound(mid) <= tol:
            lo = mid
        else:
            hi = mid
    return lo
