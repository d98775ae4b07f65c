"""TF32 and the precision formats: number formats derived from their bits, bit-exact rounding on the CPU,
emulated low-precision matmuls, dynamic range and loss scaling, a small training run, and the GPU
measurements (TF32 versus strict FP32 throughput and error).

Chapter: *TF32 and the precision formats* (book/tf32.ipynb).

What lives here, in the order of the chapter:

* :data:`FORMATS` -- FP64, FP32, TF32, BF16, FP16, FP8 (E4M3, E5M2) and INT8 as :class:`NumberFormat`
  records; every derived quantity (largest normal, epsilon, unit roundoff, ...) is computed from the
  sign/exponent/mantissa widths, never typed in. :func:`format_table` renders them.
* :func:`round_to` -- FP32 values rounded to TF32, BF16 or FP16 with integer bit manipulation in NumPy.
  ``nearest`` equals PyTorch's own ``.to(torch.bfloat16)`` / ``.to(torch.float16)`` bit for bit
  (the unit tests check 2 x 10^6 values); TF32 offers ``nearest`` (ties away from zero, what cuBLAS was
  observed to do on Ampere), ``nearest_even`` (IEEE; PTX has it from sm90 on) and ``truncate`` (what the
  tensor core does with unconverted bits).
* :func:`emulated_matmul`, :func:`error_vs_k`, :func:`accumulation_error_curve`, :func:`dot_error_bound`,
  :func:`max_k_for_error` -- the error of a matmul whose inputs are rounded, against an FP64 reference,
  and the classical (K u) and probabilistic (sqrt(K) u) bounds.
* :func:`gradient_like_values`, :func:`range_census`, :func:`loss_scale_sweep`, :func:`best_loss_scale`
  -- what FP16 flushes to zero or overflows, and loss scaling.
* :func:`train_digits_mlp` -- an MLP on scikit-learn's bundled digits with FP32, emulated TF32 and
  emulated BF16 matmuls (a custom autograd function), or the real switches on a GPU.
* :func:`measure_throughput`, :func:`compare_tf32_with_emulation`, :func:`tf32_conversion_probe`,
  :func:`bench_main` -- the GPU side (``python -m ampere bench tf32``); every one runs on a CPU with tiny
  sizes, which is how the unit tests exercise them.

NumPy is the only import at module level: torch is imported inside the functions that need it.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from . import check
from .device import tf32_enabled, tf32_state  # the one TF32 switch of the package, re-exported

__all__ = [
    "NumberFormat", "FORMATS", "FLOAT_FORMATS", "ROUNDING_MODES", "get_format", "format_table",
    "render_table", "bit_fields", "round_to", "round_tensor", "EMULATED", "emulated_matmul",
    "relative_error", "ErrorSweep", "error_vs_k", "accumulation_error_curve", "dot_error_bound",
    "max_k_for_error", "gradient_like_values", "range_census", "loss_scale_sweep", "best_loss_scale",
    "TrainingRun", "train_digits_mlp", "published_tf32", "published_tf32_speedup", "peak_ratio", "measure_throughput",
    "throughput_rows", "tf32_speedups", "compare_tf32_with_emulation", "tf32_conversion_probe",
    "recorded_results", "bench_main", "tf32_enabled", "tf32_state", "plot_bit_layouts",
    "plot_error_vs_k", "plot_ranges", "plot_loss_scaling", "plot_training", "plot_throughput",
]

CHAPTER = "TF32 and the precision formats"

# -------------------------------------------------------------------------------------------------------
# 1. Formats, derived from their bits
# -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NumberFormat:
    """A number format described by its bit fields; every range and precision figure is derived.

    Floating point values are (-1)^s x 2^(e - bias) x 1.f for normal numbers and
    (-1)^s x 2^(1 - bias) x 0.f for subnormals (chapter *TF32 and the precision formats*, section
    "Formats, derived from their bits").
    """

    name: str  # key, e.g. "tf32"
    label: str  # how the book prints it, e.g. "TF32"
    kind: str  # "float" or "int"
    exponent_bits: int  # 0 for integers
    mantissa_bits: int  # explicitly stored fraction bits (value bits for integers, sign excluded)
    storage_bits: int  # bits one value occupies in memory (TF32 lives in 32-bit FP32 words)
    inf_nan_code: bool = True  # IEEE style: the all-ones exponent is reserved for inf and NaN
    source: str = "ieee754"  # bib key of the definition
    note: str = ""

    @property
    def bits(self) -> int:
        """Bits that carry information: sign + exponent + mantissa (19 for TF32)."""
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def bias(self) -> int:
        return 2 ** (self.exponent_bits - 1) - 1 if self.is_float else 0

    @property
    def emin(self) -> int:
        """Exponent of the smallest normal number: 1 - bias."""
        return 1 - self.bias

    @property
    def emax(self) -> int:
        """Exponent of the largest finite number (E4M3 uses the all-ones exponent for normals)."""
        top_code = 2**self.exponent_bits - (2 if self.inf_nan_code else 1)
        return top_code - self.bias

    @property
    def max_normal(self) -> float:
        """Largest finite value. E4M3 (no infinities) gives up only the all-ones mantissa, for NaN: 448."""
        if not self.is_float:
            return float(2**self.mantissa_bits - 1)
        top_fraction = 2**self.mantissa_bits - (1 if self.inf_nan_code else 2)
        return math.ldexp(1 + top_fraction / 2**self.mantissa_bits, self.emax)

    @property
    def min_normal(self) -> float:
        """Smallest positive normal number 2^emin (smallest nonzero magnitude, 1, for integers)."""
        return math.ldexp(1.0, self.emin) if self.is_float else 1.0

    @property
    def min_subnormal(self) -> float | None:
        """Smallest positive subnormal 2^(emin - mantissa_bits); None for integers."""
        return math.ldexp(1.0, self.emin - self.mantissa_bits) if self.is_float else None

    @property
    def epsilon(self) -> float | None:
        """Machine epsilon: the gap between 1 and the next larger number, 2^-mantissa_bits."""
        return math.ldexp(1.0, -self.mantissa_bits) if self.is_float else None

    @property
    def unit_roundoff(self) -> float | None:
        """u = epsilon / 2: the largest relative error of round-to-nearest (normal range)."""
        return math.ldexp(1.0, -self.mantissa_bits - 1) if self.is_float else None

    @property
    def decimal_digits(self) -> float:
        """Significant decimal digits: (mantissa_bits + 1) log10 2 (value bits log10 2 for integers)."""
        return (self.mantissa_bits + (1 if self.is_float else 0)) * math.log10(2)

    @property
    def normal_range_decades(self) -> float:
        """Decades between the smallest normal and the largest finite value (the range at full precision)."""
        if not self.is_float:
            return math.log10(self.max_normal)
        return math.log10(self.max_normal) - math.log10(self.min_normal)

    @property
    def range_decades(self) -> float:
        """Decades between the smallest subnormal and the largest finite value (0..127 for INT8: 2.1)."""
        low = self.min_subnormal if self.is_float else 1.0
        return math.log10(self.max_normal) - math.log10(low)

    @property
    def underflow_threshold(self) -> float:
        """Magnitudes at or below this round to zero with round-to-nearest-even (half the smallest subnormal)."""
        return (self.min_subnormal or 1.0) / 2

    @property
    def overflow_threshold(self) -> float:
        """Magnitudes at or above this round past the largest finite value (max + half an ulp)."""
        if not self.is_float:
            return self.max_normal + 0.5
        return self.max_normal + math.ldexp(1.0, self.emax - self.mantissa_bits - 1)

    def row(self) -> dict[str, Any]:
        """The format as one row of :func:`format_table`."""
        return {"format": self.label, "bits": self.bits, "storage_bits": self.storage_bits,
                "exponent_bits": self.exponent_bits, "mantissa_bits": self.mantissa_bits,
                "max": self.max_normal, "min_normal": self.min_normal, "min_subnormal": self.min_subnormal,
                "epsilon": self.epsilon, "unit_roundoff": self.unit_roundoff,
                "digits": self.decimal_digits, "decades": self.range_decades, "source": self.source}


#: The formats of the chapter, in table order. FP8 is the H100 contrast: the A100 has no FP8 tensor cores.
FORMATS: dict[str, NumberFormat] = {f.name: f for f in (
    NumberFormat("fp64", "FP64", "float", 11, 52, 64),
    NumberFormat("fp32", "FP32", "float", 8, 23, 32),
    NumberFormat("tf32", "TF32", "float", 8, 10, 32, source="nvidia2020ampere",
                 note="a tensor-core math mode, not a storage type: values stay FP32 in memory"),
    NumberFormat("bf16", "BF16", "float", 8, 7, 16, source="kalamkar2019bf16"),
    NumberFormat("fp16", "FP16", "float", 5, 10, 16),
    NumberFormat("fp8_e4m3", "FP8 E4M3", "float", 4, 3, 8, inf_nan_code=False, source="micikevicius2022fp8",
                 note="no infinities; only S.1111.111 is NaN, so the top exponent holds normals up to 448"),
    NumberFormat("fp8_e5m2", "FP8 E5M2", "float", 5, 2, 8, source="micikevicius2022fp8"),
    NumberFormat("int8", "INT8", "int", 0, 7, 8, source="nvidia2020ampere",
                 note="two's complement, -128..127; its precision is set by a scale factor, not by bits"),
)}
FLOAT_FORMATS = tuple(k for k, f in FORMATS.items() if f.is_float)


def get_format(fmt: str | NumberFormat) -> NumberFormat:
    """The :class:`NumberFormat` called ``fmt`` (chapter *TF32 and the precision formats*)."""
    if isinstance(fmt, NumberFormat):
        return fmt
    check.one_of("fmt", fmt, FORMATS)
    return FORMATS[fmt]


def format_table(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Rows of derived figures for ``names`` (default: all of :data:`FORMATS`), chapter *TF32 and the
    precision formats*, section "Formats, derived from their bits"."""
    return [get_format(n).row() for n in (names or FORMATS)]


def _fmt_value(v: Any, spec: str) -> str:
    if v is None:
        return "-"
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return str(int(v))
    return format(float(v), spec)


def render_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None,
                 formats: Mapping[str, str] | None = None, headers: Mapping[str, str] | None = None) -> str:
    """A fixed-width text table (stable under nbval: every float goes through an explicit format).

    ``formats`` maps a column to a format spec (default ``.3g``); ``headers`` renames columns. Chapter *TF32
    and the precision formats* prints its tables with it.
    """
    if not rows:
        return "(no rows)"
    columns = list(columns or rows[0].keys())
    formats = dict(formats or {})
    headers = dict(headers or {})
    cells = [[headers.get(c, c) for c in columns]]
    for r in rows:
        cells.append([r[c] if isinstance(r.get(c), str) else _fmt_value(r.get(c), formats.get(c, ".3g"))
                      for c in columns])
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def bit_fields(fmt: str) -> list[tuple[str, int]]:
    """The bit layout of ``fmt`` from the most significant bit: [("sign", 1), ("exponent", 8), ...].

    TF32 adds ("unused", 13): the low 13 bits of the FP32 word it is stored in, which the tensor core ignores.
    Chapter *TF32 and the precision formats*, figure "bit layouts".
    """
    f = get_format(fmt)
    if not f.is_float:
        return [("sign", 1), ("value", f.mantissa_bits)]
    out = [("sign", 1), ("exponent", f.exponent_bits), ("mantissa", f.mantissa_bits)]
    if f.storage_bits > f.bits:
        out.append(("unused", f.storage_bits - f.bits))
    return out


# -------------------------------------------------------------------------------------------------------
# 2. Rounding FP32 to TF32, BF16 and FP16, bit for bit
# -------------------------------------------------------------------------------------------------------

#: Modes :func:`round_to` accepts per format. ``nearest`` is IEEE round-to-nearest-even for BF16 and FP16
#: and round-half-away-from-zero for TF32 (PTX ``cvt.rna.tf32.f32``, what cuBLAS was observed to do on Ampere);
#: ``nearest_even`` is IEEE rounding for TF32 (PTX ``cvt.rn.tf32.f32``, sm90+); ``truncate`` zeroes the
#: dropped bits (the tensor core reading unconverted FP32 words).
ROUNDING_MODES: dict[str, tuple[str, ...]] = {
    "tf32": ("nearest", "nearest_even", "truncate"),
    "bf16": ("nearest", "truncate"),
    "fp16": ("nearest",),
}

_SIGN = np.uint32(0x8000_0000)
_ABS = np.uint32(0x7FFF_FFFF)
_INF = np.uint32(0x7F80_0000)
_QUIET = np.uint32(0x0040_0000)


def _check_mode(fmt: str, mode: str) -> None:
    check.one_of("fmt", fmt, ROUNDING_MODES)
    try:
        check.one_of("mode", mode, ROUNDING_MODES[fmt])
    except ValueError as exc:
        raise ValueError(f"{exc} (the rounding modes defined for fmt={fmt!r})") from None


def _float32_array(name: str, x: Any, dtype: Any = np.float32) -> np.ndarray:
    """``x`` (a number, a sequence of numbers, a numpy array or a torch tensor) as a new ``dtype`` array.

    Strings, None, booleans and arrays of text or objects are refused: ``np.array("1.5", np.float32)``
    would silently parse text and ``np.array(None, np.float32)`` silently make a NaN.
    """
    if x is None or isinstance(x, (str, bytes, bool)):
        raise TypeError(f"{name} must be numbers (a number, a sequence, a numpy array or a torch tensor), "
                        f"got {x!r} ({type(x).__name__})")
    if type(x).__module__.startswith("torch"):
        x = x.detach().to("cpu").double().numpy()
    arr = np.asarray(x)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold integers or floats, got an array of dtype {arr.dtype}")
    return np.array(arr, dtype=dtype)


def _round_bits(bits: np.ndarray, fmt: str, mode: str) -> np.ndarray:
    """Round FP32 bit patterns (uint32) to ``fmt``; returns the FP32 bit patterns of the rounded values."""
    f = FORMATS[fmt]
    drop = 23 - f.mantissa_bits
    keep_mask = np.uint32((0xFFFF_FFFF << drop) & 0xFFFF_FFFF)
    half = np.uint32(1 << (drop - 1))
    sign = bits & _SIGN
    mag = bits & _ABS
    nan = mag > _INF
    # Normal range (and, for 8-bit exponents, FP32's own subnormals, whose encoding is linear): an integer
    # add then a mask. A carry out of the mantissa increments the exponent, and past the top exponent it
    # lands exactly on the infinity pattern, which is IEEE overflow.
    if mode == "truncate":
        r = mag & keep_mask
    elif mode == "nearest" and fmt == "tf32":  # ties away from zero: add half an ulp, drop the bits
        r = (mag + half) & keep_mask
    else:  # ties to even: add half an ulp minus one, plus the last kept bit
        lsb = (mag >> np.uint32(drop)) & np.uint32(1)
        r = (mag + (half - np.uint32(1)) + lsb) & keep_mask
    if f.exponent_bits < 8:
        # Below the target's smallest normal the quantum is fixed at 2^(emin - m): shift the significand
        # right by a per-element amount and round to nearest even on the bits shifted out.
        sub = mag < np.uint32((f.emin + 127) << 23)
        if np.any(sub):
            m = mag[sub]
            exp = m >> np.uint32(23)
            sig = (m & np.uint32(0x7F_FFFF)) | np.where(exp > 0, np.uint32(0x80_0000), np.uint32(0))
            exp_eff = np.maximum(exp, np.uint32(1)).astype(np.int64)
            shift = np.minimum((150 + f.emin - f.mantissa_bits) - exp_eff, 31).astype(np.uint32)
            n = sig >> shift
            rem = sig & ((np.uint32(1) << shift) - np.uint32(1))
            halfs = np.uint32(1) << (shift - np.uint32(1))
            up = (rem > halfs) | ((rem == halfs) & ((n & np.uint32(1)) == 1))
            n = n + up.astype(np.uint32)
            value = n.astype(np.float32) * np.float32(math.ldexp(1.0, f.emin - f.mantissa_bits))
            r[sub] = value.view(np.uint32)
        r = np.where(r >= np.uint32((f.emax + 1 + 127) << 23), _INF, r)
    out = sign | r
    # NaN stays NaN: quiet it and keep only the payload bits the format has, so the result is a valid value
    # of the format (torch's own NaN payloads differ between its scalar and vectorised paths)
    return np.where(nan, (bits & keep_mask) | _QUIET, out)


def round_to(x: Any, fmt: str, mode: str = "nearest") -> np.ndarray:
    """Round values to ``fmt`` ("tf32", "bf16" or "fp16"); returns a float32 array of the rounded values.

    The input is first converted to FP32 (what a GPU holds in memory). ``mode="nearest"`` is IEEE
    round-to-nearest-even for BF16 and FP16, identical bit for bit to ``tensor.to(torch.bfloat16)`` and
    ``tensor.to(torch.float16)`` (subnormals, overflow to inf and signed zeros included; NaN stays NaN).
    For TF32, ``nearest`` rounds half away from zero on the 13 dropped bits (PTX ``cvt.rna.tf32.f32``; what
    cuBLAS was observed to do on Ampere GPUs), ``nearest_even`` is IEEE rounding, and ``truncate`` zeroes the
    13 bits, as the tensor core does with FP32 words that were not converted. ``truncate`` also exists for BF16.
    Pure NumPy integer arithmetic (tens of millions of values per second). Chapter *TF32 and the precision formats*,
    section "Rounding, bit for bit".
    """
    _check_mode(fmt, mode)
    arr = _float32_array("x", x)  # a copy: the caller's array is never touched
    flat = arr.reshape(-1)
    out = _round_bits(flat.view(np.uint32), fmt, mode).view(np.float32)
    return out.reshape(arr.shape)


def round_tensor(t: Any, fmt: str, mode: str = "nearest") -> Any:
    """:func:`round_to` for a torch tensor, computed with torch ops on the tensor's own device.

    BF16/FP16 ``nearest`` use torch's conversion (the unit tests show it equals :func:`round_to`); TF32 and
    ``truncate`` use the same integer arithmetic on an int32 view. ``fmt="fp32"`` returns ``t`` unchanged.
    Used inside the training experiment's autograd function. Chapter *TF32 and the precision formats*.
    """
    import torch

    if fmt in ("fp32", "fp64"):
        return t
    _check_mode(fmt, mode)
    t = t.to(torch.float32)
    if mode == "nearest" and fmt in ("bf16", "fp16"):
        return t.to(torch.bfloat16 if fmt == "bf16" else torch.float16).to(torch.float32)
    drop = 23 - FORMATS[fmt].mantissa_bits
    keep = -(1 << drop)  # 0xFFFF_E000 as a signed int32 for TF32
    bits = t.contiguous().view(torch.int32)
    if mode == "truncate":
        r = bits & keep
    elif mode == "nearest":  # tf32: ties away from zero
        r = (bits + (1 << (drop - 1))) & keep
    else:  # nearest_even
        r = (bits + ((1 << (drop - 1)) - 1) + ((bits >> drop) & 1)) & keep
    out = r.view(torch.float32)
    return torch.where(torch.isnan(t), t, out)


# -------------------------------------------------------------------------------------------------------
# 3. Emulated matmuls and their error
# -------------------------------------------------------------------------------------------------------

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


# -------------------------------------------------------------------------------------------------------
# 4. Dynamic range and loss scaling
# -------------------------------------------------------------------------------------------------------


def gradient_like_values(n: int = 200_000, log10_low: float = -25.0, log10_high: float = 5.0,
                         seed: int = 0, distribution: str = "loguniform", log10_mean: float = -8.0,
                         log10_std: float = 2.0) -> np.ndarray:
    """Synthetic gradient-like FP32 values with random signs.

    ``distribution="loguniform"``: magnitudes spread evenly over the decades [log10_low, log10_high]
    (30 decades by default). ``"lognormal"``: log10 |g| ~ Normal(log10_mean, log10_std), the bell-shaped
    histograms gradients show in practice. Chapter *TF32 and the precision formats*, section "Dynamic range".
    """
    n = check.positive_int("n", n)
    check.one_of("distribution", distribution, ("loguniform", "lognormal"))
    rng = np.random.default_rng(check.nonneg_int("seed", seed))
    if distribution == "loguniform":
        log10_low, log10_high = check.real("log10_low", log10_low), check.real("log10_high", log10_high)
        if not log10_low < log10_high <= 38:
            raise ValueError(f"log10_low={log10_low}, log10_high={log10_high}: need low < high <= 38 "
                             "(FP32 overflows above 3.4e38)")
        exps = rng.uniform(log10_low, log10_high, n)
    elif distribution == "lognormal":
        log10_std = check.positive("log10_std", log10_std)
        exps = rng.normal(log10_mean, log10_std, n)
    else:
        raise ValueError(f"distribution={distribution!r} is not allowed; allowed: 'loguniform', 'lognormal'")
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
    g = _float32_array("grads", grads).astype(np.float64)
    rows = []
    for k in (check.integer("log2_scales", k) for k in log2_scales):
        census = range_census(g * 2.0**k, fmt)
        rows.append({"log2_scale": int(k), "scale": 2.0**k, "zero": census["zero"],
                     "subnormal": census["subnormal"], "overflow": census["overflow"]})
    return rows


def best_loss_scale(grads: Any, fmt: str = "fp16", max_log2: int = 40) -> int:
    """Largest power-of-two exponent k <= ``max_log2`` with no overflow of ``grads`` x 2^k in ``fmt``: where
    dynamic loss scaling (halve on overflow, grow otherwise) settles. Chapter *TF32 and the precision formats*.
    """
    check.one_of("fmt", fmt, FLOAT_FORMATS)
    max_log2 = check.integer("max_log2", max_log2)
    f = get_format(fmt)
    g = np.abs(_float32_array("grads", grads).astype(np.float64))
    peak = float(np.max(g[np.isfinite(g)])) if g.size else 0.0
    if peak == 0:
        return max_log2
    k = math.floor(math.log2(f.overflow_threshold / peak))
    while k > -200 and peak * 2.0**k >= f.overflow_threshold:  # the floor may sit on the threshold
        k -= 1
    return min(k, max_log2)


# -------------------------------------------------------------------------------------------------------
# 5. Training is unaffected: an MLP on scikit-learn's bundled digits
# -------------------------------------------------------------------------------------------------------


@dataclass
class TrainingRun:
    """Loss curve and accuracies of one :func:`train_digits_mlp` run."""

    precision: str
    backend: str  # "emulated" (custom autograd rounding) or "native" (real TF32 switch / autocast, GPU)
    device: str
    epoch_losses: list[float]
    train_accuracy: float
    test_accuracy: float
    seconds: float
    params: dict[str, Any] = field(default_factory=dict)


_TRAIN_PRECISIONS = ("fp32", "tf32", "bf16", "fp16")


def _emulated_matmul_function():
    import torch

    class EmulatedMatmul(torch.autograd.Function):
        """x @ w with both operands rounded to ``fmt`` in the forward and in both backward matmuls."""

        @staticmethod
        def forward(ctx, x, w, fmt, mode):  # noqa: D401
            ctx.save_for_backward(x, w)
            ctx.fmt, ctx.mode = fmt, mode
            return round_tensor(x, fmt, mode) @ round_tensor(w, fmt, mode)

        @staticmethod
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            g = round_tensor(grad, ctx.fmt, ctx.mode)
            grad_x = g @ round_tensor(w, ctx.fmt, ctx.mode).t()
            grad_w = round_tensor(x, ctx.fmt, ctx.mode).t() @ g
            return grad_x, grad_w, None, None

    return EmulatedMatmul


def _digits_split(seed: int = 0):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()  # bundled with scikit-learn: nothing is downloaded
    x = (data.data / 16.0).astype(np.float32)
    y = data.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.25, random_state=seed, stratify=y)


def train_digits_mlp(precision: str = "fp32", *, epochs: int = 30, hidden: int = 128, batch_size: int = 64,
                     lr: float = 0.05, seed: int = 0, device: Any = "cpu", backend: str = "emulated",
                     mode: str = "nearest") -> TrainingRun:
    """Train a 64-``hidden``-10 MLP on scikit-learn's digits (1797 8x8 images, bundled) and report its curve.

    ``backend="emulated"`` runs every matmul (forward and both backward ones) through a custom autograd
    function that rounds its operands to ``precision`` and accumulates in FP32: the tensor-core arithmetic,
    on any device. ``backend="native"`` (CUDA only) uses plain ``nn.Linear`` under the real switches:
    TF32 off for "fp32", on for "tf32", ``torch.autocast`` for "bf16"/"fp16". Seeds fix the initial
    weights and the batch order. SGD with momentum 0.9. Chapter *TF32 and the precision formats*, section
    "Training is unaffected".
    """
    import torch

    check.one_of("precision", precision, _TRAIN_PRECISIONS)
    check.one_of("backend", backend, ("emulated", "native"))
    epochs, hidden = check.positive_int("epochs", epochs), check.positive_int("hidden", hidden)
    batch_size, lr = check.positive_int("batch_size", batch_size), check.positive("lr", lr)
    seed = check.nonneg_int("seed", seed)
    dev = torch.device(device)
    if backend == "native" and dev.type != "cuda":
        raise ValueError(f"backend='native' needs a CUDA device, got device={str(dev)!r}; use backend='emulated'")
    x_tr, x_te, y_tr, y_te = _digits_split(seed)
    x_tr, x_te = torch.from_numpy(x_tr).to(dev), torch.from_numpy(x_te).to(dev)
    y_tr, y_te = torch.from_numpy(y_tr).to(dev), torch.from_numpy(y_te).to(dev)
    torch.manual_seed(seed)
    layers = torch.nn.ModuleList([torch.nn.Linear(64, hidden), torch.nn.Linear(hidden, 10)]).to(dev)
    matmul = _emulated_matmul_function()
    fmt = "fp32" if precision == "fp32" else precision

    def forward(x):
        if backend == "emulated":
            h = torch.relu(matmul.apply(x, layers[0].weight.t(), fmt, mode) + layers[0].bias)
            return matmul.apply(h, layers[1].weight.t(), fmt, mode) + layers[1].bias
        if precision in ("bf16", "fp16"):
            with torch.autocast("cuda", dtype=torch.bfloat16 if precision == "bf16" else torch.float16):
                return layers[1](torch.relu(layers[0](x))).float()
        return layers[1](torch.relu(layers[0](x)))

    opt = torch.optim.SGD(layers.parameters(), lr=lr, momentum=0.9)
    gen = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    t0 = time.perf_counter()
    # 64 x 128 matmuls: on a CPU more threads only add synchronisation (and oversubscription on busy hosts)
    with _torch_threads(1 if dev.type == "cpu" else None), tf32_enabled(backend == "native" and precision == "tf32"):
        for _ in range(epochs):
            order = torch.randperm(x_tr.shape[0], generator=gen).to(dev)
            total, count = 0.0, 0
            for start in range(0, x_tr.shape[0], batch_size):
                idx = order[start:start + batch_size]
                loss = torch.nn.functional.cross_entropy(forward(x_tr[idx]), y_tr[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                total += float(loss.detach()) * idx.numel()
                count += idx.numel()
            losses.append(total / count)
        with torch.no_grad():
            train_acc = float((forward(x_tr).argmax(1) == y_tr).float().mean())
            test_acc = float((forward(x_te).argmax(1) == y_te).float().mean())
    return TrainingRun(precision=precision, backend=backend, device=str(dev), epoch_losses=losses,
                       train_accuracy=train_acc, test_accuracy=test_acc, seconds=time.perf_counter() - t0,
                       params={"epochs": epochs, "hidden": hidden, "batch_size": batch_size, "lr": lr,
                               "seed": seed, "mode": mode})


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Run with ``n`` torch intra-op threads (None: unchanged), restoring the previous count."""
    import torch

    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# -------------------------------------------------------------------------------------------------------
# 6. Throughput on a GPU, TF32 error measured against the emulation
# -------------------------------------------------------------------------------------------------------

def published_tf32(gpu: str | None = None) -> list[Any]:
    """Published TF32 against strict FP32 measurements (``ampere/data/published/tf32.json``) as ``Record`` rows:
    the PyTorch CUDA notes time one 10240^3 FP32 matmul on an A100 with TF32 on and off
    (``tf32_time_s``, ``fp32_time_s``) and give each one's max error over the mean of the FP64 product.
    Read the speedup with :func:`published_tf32_speedup`. Chapter *TF32 and the precision formats*.
    """
    from . import results

    return results.records(benchmark="tf32", gpu=gpu, kind="published")


def published_tf32_speedup(rec: Any) -> float:
    """Strict-FP32 time over TF32 time of a published ``tf32`` record (chapter *TF32 and the precision formats*)."""
    return float(rec.figure("fp32_time_s")) / float(rec.figure("tf32_time_s"))


#: Precisions :func:`measure_throughput` times. fp32 is strict FP32 (TF32 off); int8 uses torch._int_mm.
MATMUL_PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp16", "int8")


def peak_ratio(gpu: str, numerator: str = "tf32", denominator: str = "fp32", sparse: bool = False) -> float:
    """Ratio of two dense (or ``sparse`` numerator) peaks of ``gpu`` from :mod:`ampere.specs`: the upper bound
    of the TF32 speedup over strict FP32. Chapter *TF32 and the precision formats*, claims checked."""
    from . import specs

    spec = specs.get(gpu)
    return spec.peak_flops(numerator, sparse=sparse) / spec.peak_flops(denominator)


def _peak_for(spec: Any, precision: str) -> tuple[str, float] | None:
    """The peak a measured precision is compared with (:func:`ampere.gemm.peak_precision_for`: FP64 matmuls
    run on the FP64 tensor cores where present)."""
    from . import gemm

    key = gemm.peak_precision_for(spec, precision) if spec is not None else None
    return (key, spec.peak_flops(key)) if key else None


def _supported_precisions(info: Any, dev: Any, precisions: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    run, skipped = [], {}
    for p in precisions:
        check.one_of("precisions", p, MATMUL_PRECISIONS)
        if dev.type == "cuda":
            if p == "tf32" and not info.tf32:
                skipped[p] = "TF32 tensor cores need sm80+"
            elif p == "bf16" and not info.bf16_tensor:
                skipped[p] = "BF16 tensor cores need sm80+"
            elif p == "int8" and not info.int8_tensor:
                skipped[p] = "torch._int_mm needs INT8 tensor cores (sm80+)"
            else:
                run.append(p)
        elif p == "tf32":
            skipped[p] = "TF32 is a tensor-core mode: a CPU has none"
        else:
            run.append(p)
    return run, skipped


#: Longest predicted FP64 matmul call :func:`measure_throughput` times on a GPU (a T4 or an RTX card runs FP64 at
#: 1/32 to 1/64 of FP32: an 8192^3 DGEMM there takes seconds per call, times ten samples and a warm-up).
_FP64_MAX_CALL_S = 0.1


def _fp64_sizes(spec: Any, dev: Any, sizes: Sequence[int]) -> list[int]:
    """The sizes at which FP64 is worth timing on ``dev``: all on a CPU (tiny sizes there) and on GPUs whose FP64
    peak (tensor cores where present) finishes a call within :data:`_FP64_MAX_CALL_S`; up to 2048 on a GPU
    outside the catalogue."""
    if dev.type != "cuda":
        return list(sizes)
    peak = _peak_for(spec, "fp64")
    if peak is None:
        return [n for n in sizes if n <= 2048]
    return [n for n in sizes if 2.0 * n**3 / peak[1] <= _FP64_MAX_CALL_S]


#: torch dtype and TF32 switch of every precision :func:`measure_throughput` times.
_TORCH_DTYPES: dict[str, tuple[str, bool]] = {"fp64": ("float64", False), "fp32": ("float32", False),
                                              "tf32": ("float32", True), "bf16": ("bfloat16", False),
                                              "fp16": ("float16", False), "int8": ("int8", False)}


def _measure_square(precision: str, n: int, dev: Any, spec: Any, warmup_s: float, min_time_s: float,
                    max_time_s: float, gen: Any) -> dict[str, Any] | None:
    """One timed n x n x n matmul of ``precision`` on ``dev`` (None when it does not fit in memory).

    Random normal inputs from the CPU generator ``gen`` (int8: scaled to the int8 range and rounded, never
    zeros: power and clocks depend on the data), preallocated output, TF32 switched explicitly; int8 runs
    ``torch._int_mm`` into int32. Out of memory frees the inputs outside the handler and returns None.
    """
    import torch

    from . import gemm, timing
    from . import device as _device

    dtype_name, tf32 = _TORCH_DTYPES[precision]
    oom = (torch.cuda.OutOfMemoryError, MemoryError)  # the CPU path (and the tests) raise MemoryError
    out_of_memory = False
    try:
        if precision == "int8":
            a = (torch.randn(n, n, generator=gen) * 32).round().clamp(-127, 127).to(torch.int8).to(dev)
            b = (torch.randn(n, n, generator=gen) * 32).round().clamp(-127, 127).to(torch.int8).to(dev)
            c = torch.empty(n, n, dtype=torch.int32, device=dev)
            op = lambda: torch._int_mm(a, b, out=c)  # noqa: E731
        else:
            dtype = getattr(torch, dtype_name)
            a = torch.randn(n, n, generator=gen, dtype=torch.float32).to(dev, dtype)
            b = torch.randn(n, n, generator=gen, dtype=torch.float32).to(dev, dtype)
            c = torch.empty(n, n, device=dev, dtype=dtype)
            op = lambda: torch.matmul(a, b, out=c)  # noqa: E731
        with _device.tf32_enabled(tf32):
            m = timing.benchmark(op, label=f"matmul {precision} {n}^3", device=dev, warmup_s=warmup_s,
                                 min_time_s=min_time_s, max_time_s=max_time_s, params={"precision": precision, "n": n})
    except oom:
        out_of_memory = True
    if out_of_memory:  # freed outside the handler, whose traceback would keep the tensors alive
        a = b = c = op = None
        if dev.type == "cuda":
            torch.cuda.empty_cache()
        return None
    flops = gemm.matmul_flops(n, n, n)
    rec: dict[str, Any] = {"precision": precision, "n": n, "flops": flops, "tflops": m.rate(flops) / 1e12,
                           "tflops_best": m.rate(flops, "min") / 1e12, "measurement": m.to_dict()}
    peak = _peak_for(spec, precision)
    if peak:
        rec["peak_precision"] = peak[0]
        rec["peak_tflops"] = peak[1] / 1e12
        rec["pct_of_peak"] = 100 * rec["tflops"] / rec["peak_tflops"]
    return rec


def measure_throughput(sizes: Sequence[int] = (2048, 4096, 8192), precisions: Sequence[str] = MATMUL_PRECISIONS,
                       device: Any = None, warmup_s: float = 1.0, min_time_s: float = 0.2, max_time_s: float = 5.0,
                       progress: Callable[[dict[str, Any]], None] | None = None, info: Any = None
                       ) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Time n x n x n matmuls per precision; returns (records, skipped precisions with the reason).

    Random normal inputs, preallocated outputs, TF32 switched explicitly, warm-up by time (``warmup_s`` for
    the first size of each precision, a tenth after), CUDA events; int8 uses ``torch._int_mm``. Each record
    holds TFLOP/s (TOP/s for int8) from the median and, on a catalogued GPU, % of the dense peak; FP64 is
    compared with the FP64 tensor-core peak where the GPU has one (cuBLAS DGEMM runs there). Out of memory
    at one size skips the larger sizes of that precision, with the reason. Chapter *TF32 and the precision
    formats*, section "Measured on a GPU".
    """
    import torch

    from . import device as _device

    sizes = [check.positive_int("sizes", n) for n in sizes]
    for name, v in (("warmup_s", warmup_s), ("min_time_s", min_time_s), ("max_time_s", max_time_s)):
        check.nonneg(name, v)
    info = info or _device.probe()
    dev = torch.device(device) if device is not None else _device.torch_device(info)
    run, skipped = _supported_precisions(info, dev, precisions)
    spec = info.spec if dev.type == "cuda" else None
    records: list[dict[str, Any]] = []
    gen = torch.Generator().manual_seed(0)
    for p in run:
        todo = _fp64_sizes(spec, dev, sizes) if p == "fp64" else sizes
        if len(todo) < len(sizes):
            which = f"sizes above {max(todo)}" if todo else "every size"
            skipped[p] = (f"{which} skipped: at this GPU's FP64 rate one call would take longer than "
                          f"{_FP64_MAX_CALL_S} s")
        for i, n in enumerate(todo):
            rec = _measure_square(p, n, dev, spec, warmup_s if i == 0 else warmup_s / 10, min_time_s, max_time_s, gen)
            if rec is None:
                skipped[p] = f"out of memory at {n}^3 on {dev}: larger sizes skipped"
                break
            rec["kind"] = "throughput"
            records.append(rec)
            if progress:
                progress(rec)
    return records, skipped


def throughput_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Table rows (precision, n, TFLOP/s, % of peak) of throughput records, with rates recomputed from the
    raw samples (so recorded JSON files and fresh measurements read the same). Chapter *TF32 and the
    precision formats*."""
    from .timing import Measurement

    rows = []
    for rec in records:
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
    by = {(r["precision"], r["n"]): r for r in throughput_rows(records)}
    out = {}
    for (p, n), r in sorted(by.items(), key=lambda kv: kv[0][1]):
        if p == "tf32" and ("fp32", n) in by:
            out[int(n)] = r["tflops"] / by[("fp32", n)]["tflops"]
    return out


def _distance(c: np.ndarray, emulated: np.ndarray, ref: np.ndarray) -> float:
    """||C - C_emulated||_F / ||C_ref||_F."""
    return float(np.linalg.norm(c.astype(np.float64) - emulated.astype(np.float64)) / np.linalg.norm(ref))


def compare_tf32_with_emulation(device: Any = None, ks: Sequence[int] = (256, 1024, 4096), m: int = 512,
                                n: int = 512, seed: int = 0) -> list[dict[str, Any]]:
    """The device's TF32 matmul against the CPU emulation on the same random normal inputs, per K.

    For each K: relative errors (vs an FP64 reference computed on the CPU) of the device's TF32 and strict
    FP32 matmuls and of the emulations with TF32 ``nearest`` and ``truncate`` rounding, and the distance
    between the device result and each emulation. If the device rounds its inputs the way the emulation
    does, the device/emulation distance is at the FP32 accumulation level, far below the TF32 error
    itself. ``tf32_active`` says whether TF32 tensor cores really ran (False on a CPU or a pre-sm80 GPU,
    where the "TF32" product is strict FP32). Chapter *TF32 and the precision formats*, section "Measured
    on a GPU".
    """
    import torch

    from . import device as _device

    m, n = check.positive_int("m", m), check.positive_int("n", n)
    ks = [check.positive_int("ks", k) for k in ks]
    seed = check.nonneg_int("seed", seed)
    info = _device.probe()
    dev = torch.device(device) if device is not None else _device.torch_device(info)
    active = dev.type == "cuda" and info.tf32
    gen = torch.Generator().manual_seed(seed)
    out = []
    for k in ks:
        a = torch.randn(m, int(k), generator=gen, dtype=torch.float32)
        b = torch.randn(int(k), n, generator=gen, dtype=torch.float32)
        ref = (a.double() @ b.double()).numpy()
        with tf32_enabled(True):
            c_tf32 = (a.to(dev) @ b.to(dev)).cpu().numpy()
        with tf32_enabled(False):
            c_fp32 = (a.to(dev) @ b.to(dev)).cpu().numpy()
        an, bn = a.numpy(), b.numpy()
        e_near = emulated_matmul(an, bn, "tf32", "nearest")
        e_trunc = emulated_matmul(an, bn, "tf32", "truncate")
        rec = {"kind": "tf32_error", "params": {"m": m, "n": n, "k": int(k), "seed": seed, "device": str(dev)},
               "tf32_active": bool(active),
               "derived": {"device_tf32": relative_error(c_tf32, ref), "device_fp32": relative_error(c_fp32, ref),
                           "emulated_nearest": relative_error(e_near, ref),
                           "emulated_truncate": relative_error(e_trunc, ref),
                           "distance_to_nearest": _distance(c_tf32, e_near, ref),
                           "distance_to_truncate": _distance(c_tf32, e_trunc, ref)}}
        d = rec["derived"]
        d["ratio_to_nearest"] = d["device_tf32"] / d["emulated_nearest"]
        out.append(rec)
    return out


def tf32_conversion_probe(device: Any = None, size: int = 512, seed: int = 0) -> dict[str, Any]:
    """Which rounding does the device apply when TF32 converts FP32 inputs? A = crafted values, B = identity.

    Every product a_ik x delta_kj is exact and every sum adds zeros, so C = A @ I returns the converted A
    itself. A quarter of the values sit exactly half-way between two TF32 numbers (the dropped 13 bits are
    0x1000), where the rules differ. Returns the fraction of entries of C that match each hypothesis:
    "unchanged" (no conversion: strict FP32), "nearest" (ties away from zero), "nearest_even",
    "truncate". Chapter *TF32 and the precision formats*, section "Measured on a GPU".
    """
    import torch

    from . import device as _device

    size = check.integer("size", size, minimum=16)
    seed = check.nonneg_int("seed", seed)
    info = _device.probe()
    dev = torch.device(device) if device is not None else _device.torch_device(info)
    rng = np.random.default_rng(seed)
    count = size * size
    exps = rng.integers(127 - 20, 127 + 20, count, dtype=np.uint32)  # moderate magnitudes: no overflow
    mant = rng.integers(0, 1 << 23, count, dtype=np.uint32)
    ties = rng.random(count) < 0.25
    mant = np.where(ties, (mant & np.uint32(~0x1FFF & 0x7FFFFF)) | np.uint32(0x1000), mant)
    signs = np.where(rng.random(count) < 0.5, np.uint32(0x8000_0000), np.uint32(0))
    a_np = (signs | (exps << np.uint32(23)) | mant).view(np.float32).reshape(size, size)
    a = torch.from_numpy(a_np.copy()).to(dev)
    eye = torch.eye(size, dtype=torch.float32, device=dev)
    with tf32_enabled(True):
        c = (a @ eye).cpu().numpy()
    got = c.view(np.uint32)
    hyp = {"unchanged": a_np, "nearest": round_to(a_np, "tf32", "nearest"),
           "nearest_even": round_to(a_np, "tf32", "nearest_even"), "truncate": round_to(a_np, "tf32", "truncate")}
    match = {name: float(np.mean(got == v.view(np.uint32))) for name, v in hyp.items()}
    tie_match = {name: float(np.mean((got == v.view(np.uint32))[ties.reshape(size, size)])) for name, v in hyp.items()}
    return {"kind": "tf32_conversion", "params": {"size": size, "seed": seed, "device": str(dev)},
            "tf32_active": bool(dev.type == "cuda" and info.tf32),
            "derived": {"match": match, "match_on_ties": tie_match}}


def recorded_results() -> list[dict[str, Any]]:
    """Results of ``python -m ampere bench tf32`` shipped in ampere/data (chapter *TF32 and the precision
    formats*)."""
    from . import results

    return results.recorded(benchmark="tf32")


def _summary(records: Sequence[Mapping[str, Any]], label: str, skipped: Mapping[str, str]) -> str:
    lines = [f"TF32 benchmark on {label}"]
    rows = throughput_rows(records)
    if rows:
        lines.append(render_table(rows, ["precision", "n", "tflops", "pct_of_peak", "median_ms"],
                                  {"tflops": ".4g", "pct_of_peak": ".1f", "median_ms": ".4g"},
                                  {"tflops": "TFLOP/s", "pct_of_peak": "% of peak"}))
    for n, s in tf32_speedups(records).items():
        lines.append(f"TF32 / strict FP32 speedup at {n}^3: {s:.2f}x")
    for rec in records:
        if rec.get("kind") == "tf32_error":
            d = rec["derived"]
            lines.append(f"K={rec['params']['k']}: rel. error device TF32 {d['device_tf32']:.2e}, emulated (nearest) "
                         f"{d['emulated_nearest']:.2e}, truncate {d['emulated_truncate']:.2e}; distance device-"
                         f"emulation {d['distance_to_nearest']:.1e} (nearest) / {d['distance_to_truncate']:.1e} "
                         f"(truncate){'' if rec['tf32_active'] else '  [TF32 not active on this device]'}")
        if rec.get("kind") == "tf32_conversion":
            mt = rec["derived"]["match_on_ties"]
            lines.append("conversion probe, share of half-way values matching: "
                         + ", ".join(f"{k} {v:.3f}" for k, v in mt.items()))
    lines += [f"skipped {p}: {why}" for p, why in skipped.items()]
    return "\n".join(lines)


def bench_main(argv: Sequence[str] | None = None) -> int:
    """``python -m ampere bench tf32``: matmul throughput for fp64, strict fp32, tf32, bf16, fp16, int8, the
    TF32/FP32 speedup, the device's TF32 error against the CPU emulation, and the conversion probe.

    Writes one result JSON (``--out``). On a CPU it runs the same code on small sizes (TF32 skipped), so
    the path is tested everywhere. Chapter *TF32 and the precision formats*, section "Measured on a GPU".
    """
    import torch

    from . import benchcli, results
    from . import device as _device

    p = benchcli.bench_parser("tf32", "TF32 versus strict FP32 (and FP64, BF16, FP16, INT8): matmul throughput, "
                                 "% of peak, and the TF32 error against the CPU emulation.")
    p.add_argument("--sizes", type=int, nargs="+", default=None,
                   help="square sizes n (default 2048 4096 8192 on a GPU, 4096 with --quick; 128 256 on a CPU)")
    p.add_argument("--precisions", nargs="+", default=list(MATMUL_PRECISIONS), choices=MATMUL_PRECISIONS)
    p.add_argument("--error-ks", type=int, nargs="+", default=None,
                   help="inner dimensions K of the error comparison (default 256 1024 4096; 64 256 on a CPU)")
    args = p.parse_args(list(argv or []))
    for n in args.sizes or []:
        if n < 24 or n % 8:
            p.error(f"--sizes {n}: sizes must be multiples of 8 and >= 24 (torch._int_mm on CUDA needs more than "
                    "16 rows and dimensions divisible by 8)")
    info = benchcli.probe(args)
    dev = _device.torch_device(info)
    gpu = dev.type == "cuda"
    if args.sizes:
        sizes = args.sizes
    elif gpu:
        sizes = [4096] if args.quick else [2048, 4096, 8192]
    else:
        sizes = [128, 256]
    ks = args.error_ks or ([256, 1024, 4096] if gpu else [64, 256])
    warmup = (0.5 if args.quick else 1.0) if gpu else 0.02

    def show(rec: dict[str, Any]) -> None:
        peak = rec.get("peak_precision", rec["precision"])
        pct = f"{rec['pct_of_peak']:6.1f}% of {peak} peak" if "pct_of_peak" in rec else ""
        print(f"  {rec['precision']:5s} {rec['n']:6d}^3 {rec['tflops']:9.2f} TFLOP/s {pct}", flush=True)

    notes = []
    env = {k: os.environ.get(k) for k in ("NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")}
    if env["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"] == "1":
        notes.append("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 (NGC containers set it): 'strict FP32' matmuls may use TF32")
    if env["NVIDIA_TF32_OVERRIDE"] == "0":
        notes.append("NVIDIA_TF32_OVERRIDE=0: NVIDIA's libraries refuse TF32, the 'tf32' rows are strict FP32")
    if not info.tf32:
        notes.append("this device has no TF32 tensor cores (sm80+): TF32 is skipped, the error comparison "
                     "shows strict FP32 in place of the device's TF32")
    records, skipped = measure_throughput(sizes, args.precisions, device=dev, warmup_s=warmup,
                                          min_time_s=0.2 if gpu else 0.01,
                                          max_time_s=(2.0 if args.quick else 5.0) if gpu else 0.5,
                                          progress=show, info=info)
    if gpu:
        torch.cuda.empty_cache()
    records += compare_tf32_with_emulation(dev, ks=ks, m=512 if gpu else 64, n=512 if gpu else 64)
    records.append(tf32_conversion_probe(dev, size=512 if gpu else 32))
    notes += [f"skipped {k}: {v}" for k, v in skipped.items()]
    params = {"sizes": list(sizes), "precisions": list(args.precisions), "error_ks": list(ks), "quick": args.quick,
              "warmup_s": warmup, "tf32_state_outside_measurements": {k: str(v) for k, v in tf32_state().items()},
              "environment": env}
    result = results.make_result("tf32", info, params, records, notes)
    return benchcli.finish_bench(result, args, _summary(records, info.label(), skipped))


# -------------------------------------------------------------------------------------------------------
# 7. Figures (matplotlib is imported inside each function)
# -------------------------------------------------------------------------------------------------------

_FIELD_COLORS = {"sign": "#d62728", "exponent": "#1f77b4", "mantissa": "#76b900", "unused": "#dddddd",
                 "value": "#9467bd"}
_CASE_COLORS = {"fp32": "#222222", "tf32": "#76b900", "tf32 truncate": "#9ccc3d", "bf16": "#1f77b4",
                "fp16": "#ff7f0e", "fp8_e4m3": "#9467bd", "fp8_e5m2": "#8c564b", "fp64": "#7f7f7f", "int8": "#e377c2"}


def plot_bit_layouts(ax: Any, names: Sequence[str] = ("fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2",
                                                      "int8")) -> None:
    """Bit layouts as stacked bars, one row per format, most significant bit on the left (chapter *TF32 and
    the precision formats*, figure "bit layouts")."""
    for row, name in enumerate(names):
        y = len(names) - 1 - row
        start = 0
        for field_name, width in bit_fields(name):
            ax.barh(y, width, left=start, color=_FIELD_COLORS[field_name], edgecolor="white", height=0.7)
            if width >= 2 or field_name == "sign":
                ax.text(start + width / 2, y, str(width), ha="center", va="center", fontsize=8,
                        color="black" if field_name in ("unused", "mantissa") else "white")
            start += width
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels([FORMATS[n].label for n in reversed(names)])
    ax.set_xlim(0, 32)
    ax.set_xlabel("bit (most significant first)")
    ax.grid(False)
    from matplotlib.patches import Patch

    ax.legend(handles=[Patch(color=c, label=k) for k, c in _FIELD_COLORS.items()], loc="lower right", ncols=3,
              fontsize=8)


def plot_error_vs_k(ax: Any, sweep: ErrorSweep, bound_format: str = "fp32") -> None:
    """Measured median relative error per K and case, the input-rounding levels u_in, and sqrt(K) u / K u of
    the accumulation format (chapter *TF32 and the precision formats*, figure "error versus K")."""
    ks = np.asarray(sweep.ks, dtype=float)
    for label, errs in sweep.errors.items():
        # FP16 and TF32 inputs give the same error (same 10-bit mantissa): FP16 gets open squares drawn on top,
        # so the TF32 line stays visible inside them
        hollow = label == "fp16"
        ax.loglog(ks, errs, marker="s" if hollow else "o", markersize=8 if hollow else 4,
                  markerfacecolor="none" if hollow else None, zorder=3 if hollow else 2,
                  color=_CASE_COLORS.get(label, "black"), linestyle="--" if "truncate" in label else "-",
                  linewidth=0.8 if hollow else 1.5, label=f"{label} inputs (emulated)")
    u = FORMATS[bound_format].unit_roundoff
    ax.loglog(ks, np.sqrt(ks) * u, color="#999999", linestyle=":", label=f"sqrt(K) u, u = u_{bound_format}")
    ax.loglog(ks, ks * u, color="#555555", linestyle="-.", label=f"K u, u = u_{bound_format}")
    for name, text in (("tf32", "u of TF32 = u of FP16"), ("bf16", "u of BF16")):
        if name in sweep.errors:
            ax.axhline(FORMATS[name].unit_roundoff, color=_CASE_COLORS[name], alpha=0.35, linewidth=4, label=text)
    ax.set_xlabel("inner dimension K")
    ax.set_ylabel("relative error (Frobenius) vs FP64")


def plot_ranges(ax: Any, names: Sequence[str] = ("fp32", "tf32", "bf16", "fp16", "fp8_e5m2", "fp8_e4m3"),
                sample: Any = None) -> None:
    """Representable magnitudes per format on a log10 axis: subnormals light, normals dark; ``sample``
    (optional) is drawn as a histogram of log10 |x| above. Chapter *TF32 and the precision formats*."""
    for row, name in enumerate(names):
        f = FORMATS[name]
        y = len(names) - 1 - row
        lo, mid, hi = math.log10(f.min_subnormal), math.log10(f.min_normal), math.log10(f.max_normal)
        ax.barh(y, mid - lo, left=lo, color=_CASE_COLORS.get(name, "grey"), alpha=0.35, height=0.6)
        ax.barh(y, hi - mid, left=mid, color=_CASE_COLORS.get(name, "grey"), height=0.6)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels([FORMATS[n].label for n in reversed(names)])
    ax.set_xlabel("log10 of the magnitude (light: subnormals, dark: normals)")
    if sample is not None:
        mag = np.abs(np.asarray(sample, dtype=np.float64))
        mag = mag[mag > 0]
        hist, edges = np.histogram(np.log10(mag), bins=60)
        top = len(names) - 0.4
        ax.fill_between(edges[:-1], top, top + 1.2 * hist / hist.max(), step="post", color="#444444", alpha=0.5)
        ax.set_ylim(-0.6, top + 1.4)


def plot_loss_scaling(ax: Any, rows: Sequence[Mapping[str, float]], best: int | None = None) -> None:
    """Fractions flushed to zero, subnormal and overflowing versus log2 of the loss scale (chapter *TF32 and
    the precision formats*, figure "loss scaling")."""
    k = [r["log2_scale"] for r in rows]
    ax.plot(k, [100 * r["zero"] for r in rows], color="#1f77b4", label="flushed to zero")
    ax.plot(k, [100 * r["subnormal"] for r in rows], color="#76b900", linestyle="--", label="subnormal (fewer bits)")
    ax.plot(k, [100 * r["overflow"] for r in rows], color="#d62728", label="overflow to inf")
    if best is not None:
        ax.axvline(best, color="#555555", linestyle=":", label=f"largest safe scale 2^{best}")
    ax.set_xlabel("log2 of the loss scale S")
    ax.set_ylabel("% of gradient values")


def plot_training(ax: Any, runs: Sequence[TrainingRun]) -> None:
    """Training-loss curves of :func:`train_digits_mlp` runs (chapter *TF32 and the precision formats*)."""
    styles = {"fp32": ("-", 3.0), "tf32": ("--", 1.5), "bf16": (":", 1.5), "fp16": ("-.", 1.5)}
    for r in runs:
        style, width = styles.get(r.precision, ("-", 1.5))
        ax.plot(range(1, len(r.epoch_losses) + 1), r.epoch_losses, color=_CASE_COLORS.get(r.precision, "black"),
                linestyle=style, linewidth=width, marker="o" if r.backend == "native" else None, markersize=3,
                alpha=0.6 if r.precision == "fp32" else 1.0, label=f"{r.precision} ({r.backend})")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("training loss (cross-entropy)")


def plot_throughput(ax: Any, rows: Sequence[Mapping[str, Any]], label: str = "") -> None:
    """TFLOP/s per precision and size from :func:`throughput_rows` (chapter *TF32 and the precision formats*)."""
    precisions = [p for p in MATMUL_PRECISIONS if any(r["precision"] == p for r in rows)]
    sizes = sorted({int(r["n"]) for r in rows})
    width = 0.8 / max(1, len(sizes))
    for j, n in enumerate(sizes):
        vals = [next((r["tflops"] for r in rows if r["precision"] == p and int(r["n"]) == n), 0.0) for p in precisions]
        ax.bar(np.arange(len(precisions)) + j * width, vals, width=width, label=f"{n}^3",
               color=_size_color(j, len(sizes)))
    ax.set_xticks(np.arange(len(precisions)) + width * (len(sizes) - 1) / 2)
    ax.set_xticklabels(precisions)
    ax.set_yscale("log")
    ax.set_ylabel("TFLOP/s (TOP/s for int8), median")
    if label:
        ax.set_title(label)


def _size_color(i: int, n: int) -> str:
    """The i-th of n greens (sizes in :func:`plot_throughput`)."""
    shades = ["#b8d97a", "#9ccc3d", "#76b900", "#4f7c00", "#2f4a00"]
    return shades[min(len(shades) - 1, i + max(0, (len(shades) - n) // 2))]


# -------------------------------------------------------------------------------------------------------
# 8. The chapter's tables, checks and views (the notebook calls these; the logic stays testable here)
# -------------------------------------------------------------------------------------------------------


def format_rows(names: Iterable[str] | None = None) -> list[dict[str, str]]:
    """The formats as Markdown-ready rows: widths, extremes, epsilon, unit roundoff, digits, and the range in
    decades twice (normal numbers only, and down to the smallest subnormal). Chapter *TF32 and the
    precision formats*, section "Formats, derived from their bits".
    """
    out = []
    for name in names or FORMATS:
        f = get_format(name)
        g = (lambda v, spec: _fmt_value(v, spec))  # noqa: E731
        out.append({"format": f.label, "bits": str(f.storage_bits), "E": str(f.exponent_bits), "m": str(f.mantissa_bits),
                    "max": g(f.max_normal, ".4g"), "min normal": g(f.min_normal, ".3g") if f.is_float else "",
                    "min subnormal": g(f.min_subnormal, ".3g") if f.is_float else "",
                    "epsilon": g(f.epsilon, ".3g") if f.is_float else "",
                    "u": g(f.unit_roundoff, ".3g") if f.is_float else "", "digits": f"{f.decimal_digits:.2f}",
                    "decades (normal)": f"{f.normal_range_decades:.1f}",
                    "decades (with subnormals)": f"{f.range_decades:.1f}" if f.is_float else ""})
    return out


def rounding_rows(values: Any) -> list[dict[str, str]]:
    """Each FP32 value rounded to BF16, FP16 and TF32 (nearest and truncate), printed to 9 digits.
    Chapter *TF32 and the precision formats*, section "Rounding, bit for bit"."""
    x = _float32_array("values", values).reshape(-1)
    cols = {"BF16": ("bf16", "nearest"), "FP16": ("fp16", "nearest"), "TF32 nearest": ("tf32", "nearest"),
            "TF32 truncate": ("tf32", "truncate")}
    rounded = {k: round_to(x, f, m) for k, (f, m) in cols.items()}
    return [{"x (FP32)": f"{v:.9g}", **{k: f"{rounded[k][i]:.9g}" for k in cols}} for i, v in enumerate(x)]


#: Hand-picked FP32 bit patterns every comparison with torch includes: signed zeros, infinities, a NaN,
#: the smallest subnormal, the largest finite value, FP16's rounding boundaries and subnormal edges.
_SPECIAL_BITS = (0x0000_0000, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x0000_0001, 0x7F7F_FFFF,
                 0x477F_EFFF, 0x477F_F000, 0x3300_0000, 0x3300_0001)


def torch_agreement(count: int = 1_000_000, seed: int = 2026) -> dict[str, bool]:
    """Whether :func:`round_to` equals torch's ``.to(bfloat16)`` / ``.to(float16)`` bit for bit on ``count``
    random FP32 bit patterns (every exponent, NaNs, infinities, subnormals) plus the special values (NaN
    equals NaN: payloads are not part of the result). Chapter *TF32 and the precision formats*.
    """
    import torch

    count, seed = check.positive_int("count", count), check.nonneg_int("seed", seed)
    rng = np.random.default_rng(seed)
    bits = np.concatenate([rng.integers(0, 2**32, count, dtype=np.uint64).astype(np.uint32),
                           np.array(_SPECIAL_BITS, dtype=np.uint32)])
    x = bits.view(np.float32)
    out = {}
    for fmt, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        ours = round_to(x, fmt)
        theirs = torch.from_numpy(x.copy()).to(dtype).float().numpy()
        nan = np.isnan(theirs)
        out[fmt] = bool(np.array_equal(np.isnan(ours), nan)) and bool(
            np.array_equal(ours.view(np.uint32)[~nan], theirs.view(np.uint32)[~nan]))
    return out


def error_rows(sweep: ErrorSweep) -> list[dict[str, str]]:
    """The error sweep as Markdown-ready rows (K, then one column per case). Chapter *TF32 and the precision
    formats*, section "Error that grows with K"."""
    return [{"K": str(k), **{c: f"{sweep.at(c, k):.2e}" for c in sweep.errors}} for k in sweep.ks]


def error_checks(sweep: ErrorSweep) -> dict[str, bool]:
    """The chapter's four statements about an :func:`error_vs_k` sweep, as booleans that hold on any machine.
    Chapter *TF32 and the precision formats*, section "Error that grows with K"."""
    u_tf32, u_fp32 = FORMATS["tf32"].unit_roundoff, FORMATS["fp32"].unit_roundoff
    ks = sweep.ks
    return {
        "TF32 error within 5 % of FP16 error at every K (same 10-bit mantissa)":
            all(abs(sweep.at("tf32", k) / sweep.at("fp16", k) - 1) < 0.05 for k in ks),
        "TF32 error between 0.4 u and 0.8 u at every K (input rounding dominates)":
            all(0.4 < sweep.at("tf32", k) / u_tf32 < 0.8 for k in ks),
        "truncation costs between 2x and 3x the error of rounding":
            all(2 < sweep.at("tf32 truncate", k) / sweep.at("tf32", k) < 3 for k in ks),
        "FP32 error grows with K and stays below sqrt(K) u_fp32":
            sweep.at("fp32", ks[-1]) > 2 * sweep.at("fp32", ks[0])
            and all(sweep.at("fp32", k) < math.sqrt(k) * u_fp32 for k in ks),
    }


#: The accumulation experiments of the chapter: label -> (inputs, accumulate, rounding of the inputs).
ACCUMULATION_CASES: dict[str, tuple[str, str, str]] = {
    "FP16 inputs, FP16 accumulation": ("fp16", "fp16", "nearest"),
    "BF16 inputs, BF16 accumulation": ("bf16", "bf16", "nearest"),
    "TF32 inputs (nearest), FP32 accumulation": ("tf32", "fp32", "nearest"),
    "TF32 inputs (truncate), FP32 accumulation": ("tf32", "fp32", "truncate"),
}


def accumulation_curves(k_max: int = 4096) -> dict[str, dict[str, list[float]]]:
    """:func:`accumulation_error_curve` for every case of :data:`ACCUMULATION_CASES` (positive inputs).
    Chapter *TF32 and the precision formats*, section "Error that grows with K"."""
    return {label: accumulation_error_curve(k_max, i, a, mode=m) for label, (i, a, m) in ACCUMULATION_CASES.items()}


def plot_accumulation(ax: Any, curves: Mapping[str, Mapping[str, Sequence[float]]], u_format: str = "fp16") -> None:
    """Componentwise error against K of :func:`accumulation_curves`, with K u and sqrt(K) u of ``u_format``.
    Chapter *TF32 and the precision formats*, section "Error that grows with K"."""
    colors = {"FP16": "#ff7f0e", "BF16": "#1f77b4", "TF32 inputs (nearest)": "#76b900", "TF32 inputs (truncate)": "#4f7c00"}
    for label, cur in curves.items():
        color = next((c for k, c in colors.items() if label.startswith(k)), "black")
        ax.loglog(cur["k"], cur["error"], color=color, linestyle="--" if "truncate" in label else "-", label=label)
    ks = np.array(next(iter(curves.values()))["k"], dtype=float)
    u = FORMATS[u_format].unit_roundoff
    ax.loglog(ks, ks * u, color="#555555", linestyle="-.", label=f"K u (u of {FORMATS[u_format].label})")
    ax.loglog(ks, np.sqrt(ks) * u, color="#999999", linestyle=":", label=f"sqrt(K) u (u of {FORMATS[u_format].label})")
    ax.set_xlabel("inner dimension K")
    ax.set_ylabel("max |error| / (|A||B|), componentwise")


def census_rows(values: Any, names: Sequence[str] = ("fp32", "tf32", "bf16", "fp16", "fp8_e5m2", "fp8_e4m3")
                ) -> list[dict[str, str]]:
    """:func:`range_census` of ``values`` in each format, in percent. Chapter *TF32 and the precision formats*,
    section "Dynamic range"."""
    out = []
    for n in names:
        c = range_census(values, n)
        out.append({"format": FORMATS[n].label, **{f"{k} (%)": f"{100 * v:.1f}" for k, v in c.items()}})
    return out


def training_rows(runs: Sequence[TrainingRun]) -> list[dict[str, str]]:
    """:func:`train_digits_mlp` runs as Markdown-ready rows. Chapter *TF32 and the precision formats*."""
    return [{"precision": r.precision, "backend": r.backend, "final loss": f"{r.epoch_losses[-1]:.4f}",
             "train acc %": f"{100 * r.train_accuracy:.2f}", "test acc %": f"{100 * r.test_accuracy:.2f}",
             "seconds": f"{r.seconds:.2f}"} for r in runs]


def tf32_peak_rows() -> list[dict[str, str]]:
    """Dense FP32 and TF32 peaks of every catalogue GPU with TF32, their ratios, and the TF32 sparse peak.
    Chapter *TF32 and the precision formats*, section "Measured on a GPU"."""
    from . import specs

    rows = []
    for name in specs.names():
        s = specs.get(name)
        if s.supports("tf32"):
            rows.append({"GPU": name, "FP32 TFLOP/s": f"{s.peak_flops('fp32') / 1e12:.1f}",
                         "TF32 TFLOP/s": f"{s.peak_flops('tf32') / 1e12:.1f}", "TF32/FP32": f"{peak_ratio(name):.1f}",
                         "TF32/FP16": f"{peak_ratio(name, 'tf32', 'fp16'):.2f}",
                         "TF32 sparse": f"{s.peak_flops('tf32', sparse=True) / 1e12:.1f}" if s.sparse_2to4 else ""})
    return rows


def tf32_points(info: Any = None, records: Sequence[Mapping[str, Any]] | None = None, min_n: int = 2048) -> list[Any]:
    """Strict-FP32 and TF32 matmul throughput beside their dense peaks: ``records`` (measured here), results
    recorded with ``bench tf32`` (``ampere/data``), then published timings (:func:`published_tf32`, turned
    into TFLOP/s as 2 n^3 / t). Chapter *TF32 and the precision formats*, section "Measured on a GPU".
    """
    from . import gemm, results, specs, views

    def peak(gpu: str | None, p: str) -> float | None:
        spec = specs.match(gpu) if gpu and gpu not in specs.names() else (specs.get(gpu) if gpu else None)
        key = gemm.peak_precision_for(spec, p) if spec is not None else None
        return spec.peak_flops(key) / 1e12 if key else None

    label = {"fp32": "FP32 (TF32 off)", "tf32": "TF32"}
    pts = []
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
    """The "Measured on a GPU" section in one call. Where TF32 tensor cores exist (``info.tf32``, or when
    ``measure`` says so) it times strict FP32 and TF32 (and FP64, BF16, FP16, INT8 where the GPU has them)
    with :func:`measure_throughput`, compares the device's TF32 product with the CPU emulation and runs the
    conversion probe; then it shows every FP32 and TF32 throughput there is (measured here, recorded,
    published) beside the dense peaks, as a figure and a Markdown table, and, after a measurement, the
    error table and the rounding rule found. Returns the points shown.

    Chapter *TF32 and the precision formats*, section "Measured on a GPU".
    """
    from . import device as _device
    from . import tables, views

    run = bool(getattr(info, "tf32", False)) if measure is None else check.boolean("measure", measure)
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
