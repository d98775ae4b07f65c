"""The chapter's tables and checks, as Markdown-ready rows of strings and booleans that hold on any
machine: formats, rounding examples, the error sweep and its four statements, the accumulation
experiments, the range census, training runs and the TF32 peaks of the catalogue GPUs.

Pure Python/NumPy. Chapter: *TF32 and the precision formats* (book/tf32.ipynb).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np

from .. import check
from .dynamic_range import range_census
from .formats import FORMATS, _fmt_value, get_format
from .matmul_error import ErrorSweep, accumulation_error_curve
from .rounding import _float32_array, round_to
from .throughput import peak_ratio
from .training import TrainingRun


def format_rows(names: Iterable[str] | None = None) -> list[dict[str, str]]:
    """The formats as Markdown-ready rows: widths, extremes, epsilon, unit roundoff, digits, and the range in
    decades twice (``decades (normal)``: normal numbers only; ``decades (all)``: down to the smallest subnormal). Chapter *TF32 and the
    precision formats*, section "Formats, derived from their bits".
    """
    out = []
    for name in (list(FORMATS) if names is None else check.names("names", names, FORMATS, max_len=64)):
        f = get_format(name)
        g = (lambda v, spec: _fmt_value(v, spec))  # noqa: E731
        out.append({"format": f.label, "bits": str(f.storage_bits), "E": str(f.exponent_bits), "m": str(f.mantissa_bits),
                    "max": g(f.max_normal, ".4g"), "min normal": g(f.min_normal, ".3g") if f.is_float else "",
                    "min subnormal": g(f.min_subnormal, ".3g") if f.is_float else "",
                    "epsilon": g(f.epsilon, ".3g") if f.is_float else "",
                    "u": g(f.unit_roundoff, ".3g") if f.is_float else "", "digits": f"{f.decimal_digits:.2f}",
                    "decades (normal)": f"{f.normal_range_decades:.1f}",
                    "decades (all)": f"{f.range_decades:.1f}" if f.is_float else ""})
    return out


def rounding_rows(values: Any) -> list[dict[str, str]]:
    """Each FP32 value rounded to BF16, FP16 and TF32 (nearest and truncate), printed to 9 digits.
    Chapter *TF32 and the precision formats*, section "Rounding, bit for bit"."""
    x = _float32_array("values", values).reshape(-1)
    if x.size > 1000:
        raise ValueError(f"values has {x.size} numbers; a table of rounding examples takes at most 1000")
    cols = {"BF16": ("bf16", "nearest"), "FP16": ("fp16", "nearest"), "TF32 nearest": ("tf32", "nearest"),
            "TF32 truncate": ("tf32", "truncate")}
    rounded = {k: round_to(x, f, m) for k, (f, m) in cols.items()}
    return [{"x (FP32)": f"{v:.9g}", **{k: f"{rounded[k][i]:.9g}" for k in cols}} for i, v in enumerate(x)]


def _sweep(sweep: Any) -> ErrorSweep:
    if not isinstance(sweep, ErrorSweep):
        raise TypeError(f"sweep must be an ErrorSweep (from error_vs_k), got {type(sweep).__name__}")
    return sweep


def error_rows(sweep: ErrorSweep) -> list[dict[str, str]]:
    """The error sweep as Markdown-ready rows (K, then one column per case). Chapter *TF32 and the precision
    formats*, section "Error that grows with K"."""
    _sweep(sweep)
    return [{"K": str(k), **{c: f"{sweep.at(c, k):.2e}" for c in sweep.errors}} for k in sweep.ks]


def error_checks(sweep: ErrorSweep) -> dict[str, bool]:
    """The chapter's four statements about an :func:`error_vs_k` sweep, as booleans that hold on any machine.
    Chapter *TF32 and the precision formats*, section "Error that grows with K"."""
    _sweep(sweep)
    missing = {"fp32", "tf32", "tf32 truncate", "fp16"} - set(sweep.errors)
    if missing:
        raise ValueError(f"sweep lacks the cases {sorted(missing)} the four statements compare; run error_vs_k with "
                         "its default cases")
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
    k_max = check.positive_int("k_max", k_max, maximum=16384)  # four term-by-term passes of k_max steps each
    return {label: accumulation_error_curve(k_max, i, a, mode=m) for label, (i, a, m) in ACCUMULATION_CASES.items()}


def census_rows(values: Any, names: Sequence[str] = ("fp32", "tf32", "bf16", "fp16", "fp8_e5m2", "fp8_e4m3")
                ) -> list[dict[str, str]]:
    """:func:`range_census` of ``values`` in each format, in percent. Chapter *TF32 and the precision formats*,
    section "Dynamic range"."""
    names = check.names("names", names, [k for k, f in FORMATS.items() if f.is_float], max_len=16)
    values = _float32_array("values", values)
    if not np.isfinite(values).any() or not np.any(values[np.isfinite(values)]):
        raise ValueError("values holds no finite nonzero value")
    out = []
    for n in names:
        c = range_census(values, n)
        out.append({"format": FORMATS[n].label, **{f"{k} (%)": f"{100 * v:.1f}" for k, v in c.items()}})
    return out


def _run(name: str, run: Any) -> TrainingRun:
    if not isinstance(run, TrainingRun):
        raise TypeError(f"{name} must be a TrainingRun (from train_digits_mlp), got {type(run).__name__}")
    if not run.epoch_losses:
        raise ValueError(f"{name} has no epoch losses")
    return run


def training_rows(runs: Sequence[TrainingRun]) -> list[dict[str, str]]:
    """:func:`train_digits_mlp` runs as Markdown-ready rows. Chapter *TF32 and the precision formats*."""
    runs = check.sequence("runs", runs, _run, min_len=0, max_len=100)
    return [{"precision": r.precision, "backend": r.backend, "final loss": f"{r.epoch_losses[-1]:.4f}",
             "train acc %": f"{100 * r.train_accuracy:.2f}", "test acc %": f"{100 * r.test_accuracy:.2f}",
             "seconds": f"{r.seconds:.2f}"} for r in runs]


def tf32_peak_rows() -> list[dict[str, str]]:
    """Dense FP32 and TF32 peaks of every catalogue GPU with TF32, their ratios, and the TF32 sparse peak.
    Chapter *TF32 and the precision formats*, section "How much faster is TF32?"."""
    from .. import specs

    rows = []
    for name in specs.names():
        s = specs.get(name)
        if s.supports("tf32"):
            rows.append({"GPU": name, "FP32 TFLOP/s": f"{s.peak_flops('fp32') / 1e12:.1f}",
                         "TF32 TFLOP/s": f"{s.peak_flops('tf32') / 1e12:.1f}", "TF32/FP32": f"{peak_ratio(name):.1f}",
                         "TF32/FP16": f"{peak_ratio(name, 'tf32', 'fp16'):.2f}",
                         "TF32 sparse": f"{s.peak_flops('tf32', sparse=True) / 1e12:.1f}" if s.sparse_2to4 else ""})
    return rows
