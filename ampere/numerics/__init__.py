"""TF32 and the precision formats: number formats derived from their bits, bit-exact rounding on the CPU,
emulated low-precision matmuls, dynamic range and loss scaling, a small training run, and the GPU
measurements (TF32 versus strict FP32 throughput and error).

Chapter: *TF32 and the precision formats* (book/tf32.ipynb).

The package, one file per concern, in the order of the chapter:

* ``formats.py`` -- :class:`NumberFormat` and :data:`FORMATS` (FP64 ... INT8), every figure derived from the
  bit widths; :func:`format_table`, :func:`render_table`, :func:`bit_fields`. Pure.
* ``rounding.py`` -- :func:`round_to`: FP32 to TF32, BF16, FP16 bit for bit in NumPy; :data:`ROUNDING_MODES`. Pure.
* ``torch_rounding.py`` -- :func:`round_tensor` (the same rounding with torch ops) and ``torch_agreement``
  (round_to against torch's own conversions).
* ``matmul_error.py`` -- :func:`emulated_matmul`, :func:`error_vs_k`, :func:`accumulation_error_curve`,
  :func:`dot_error_bound`, :func:`max_k_for_error`: the error of rounded matmuls and its bounds. Pure.
* ``dynamic_range.py`` -- :func:`gradient_like_values`, :func:`range_census`, :func:`loss_scale_sweep`,
  :func:`best_loss_scale`: what FP16 flushes or overflows, and loss scaling. Pure.
* ``training.py`` -- :func:`train_digits_mlp` and :class:`TrainingRun`: an MLP on scikit-learn's digits with
  emulated or real TF32, BF16, FP16 matmuls.
* ``throughput.py`` -- :data:`MATMUL_PRECISIONS`, :func:`peak_ratio`, :func:`published_tf32`,
  :func:`published_tf32_bounds` (what the printed digits of the published timings allow),
  :func:`recorded_results`, :func:`throughput_rows`, :func:`tf32_speedups`: throughput read from
  specs, published and recorded results. Pure.
* ``measure.py`` -- :func:`measure_throughput`, :func:`compare_tf32_with_emulation`,
  :func:`tf32_conversion_probe`: the GPU side, gated on capabilities (runs on a CPU with tiny sizes).
* ``bench.py`` -- :func:`bench_main`: ``python -m ampere bench tf32``.
* ``figures.py`` -- ``plot_*``: the chapter's figures, drawn on a given matplotlib axis.
* ``chapter_tables.py`` -- ``format_rows``, ``error_checks``, ``tf32_peak_rows`` ...: the chapter's tables
  and checks as Markdown-ready rows. Pure.
* ``claims.py`` -- :func:`claims_rows`: the claims-checked table, every number computed. Pure.
* ``views.py`` -- ``show_tf32``, ``tf32_points``: the "How much faster is TF32?" section in one call.

NumPy is the only import at package level: torch and matplotlib are imported inside the functions that
need them. :func:`tf32_enabled` and :func:`tf32_state` are the one TF32 switch of the package
(:mod:`ampere.device`), re-exported.
"""

from __future__ import annotations

# __all__ lists every public name the chapter and its readers call; the private helpers re-exported below
# (``_peak_for`` ...) are for the tests.
from ..device import tf32_enabled, tf32_state  # the one TF32 switch of the package, re-exported
from .bench import bench_main
from .claims import claims_rows
from .chapter_tables import (  # noqa: F401
    ACCUMULATION_CASES, accumulation_curves, census_rows, error_checks, error_rows, format_rows, rounding_rows,
    tf32_peak_rows, training_rows)
from .dynamic_range import best_loss_scale, gradient_like_values, loss_scale_sweep, range_census
from .figures import (  # noqa: F401
    plot_accumulation, plot_bit_layouts, plot_error_vs_k, plot_loss_scaling, plot_ranges, plot_throughput,
    plot_training)
from .formats import FLOAT_FORMATS, FORMATS, NumberFormat, bit_fields, format_table, get_format, render_table
from .matmul_error import (EMULATED, ErrorSweep, accumulation_error_curve, dot_error_bound, emulated_matmul,
                           error_vs_k, max_k_for_error, probabilistic_confidence, relative_error)
from .measure import (_fp64_sizes, _supported_precisions, compare_tf32_with_emulation, measure_throughput,  # noqa: F401
                      tf32_conversion_probe)
from .rounding import ROUNDING_MODES, round_to
from .throughput import (MATMUL_PRECISIONS, _peak_for, peak_ratio, printed_interval, published_tf32,  # noqa: F401
                         published_tf32_bounds, published_tf32_speedup, recorded_results, throughput_rows,
                         tf32_speedups)
from .torch_rounding import round_tensor, torch_agreement  # noqa: F401
from .training import TrainingRun, _emulated_matmul_function, train_digits_mlp  # noqa: F401
from .views import show_tf32, tf32_points  # noqa: F401

__all__ = [
    # formats and rounding
    "NumberFormat", "FORMATS", "FLOAT_FORMATS", "ROUNDING_MODES", "get_format", "format_table", "render_table",
    "bit_fields", "round_to", "round_tensor", "torch_agreement", "format_rows", "rounding_rows",
    # the error of rounded matmuls and its bounds
    "EMULATED", "emulated_matmul", "relative_error", "ErrorSweep", "error_vs_k", "accumulation_error_curve",
    "dot_error_bound", "probabilistic_confidence", "max_k_for_error", "error_rows", "error_checks",
    "ACCUMULATION_CASES", "accumulation_curves",
    # range, loss scaling, training
    "gradient_like_values", "range_census", "loss_scale_sweep", "best_loss_scale", "census_rows", "TrainingRun",
    "train_digits_mlp", "training_rows",
    # throughput: peaks, published and recorded timings, the GPU side
    "MATMUL_PRECISIONS", "published_tf32", "published_tf32_speedup", "printed_interval", "published_tf32_bounds",
    "peak_ratio", "tf32_peak_rows", "measure_throughput", "throughput_rows", "tf32_speedups",
    "compare_tf32_with_emulation", "tf32_conversion_probe", "recorded_results", "bench_main", "tf32_enabled",
    "tf32_state", "tf32_points", "show_tf32",
    # figures and the claims
    "plot_bit_layouts", "plot_error_vs_k", "plot_accumulation", "plot_ranges", "plot_loss_scaling", "plot_training",
    "plot_throughput", "claims_rows",
]

CHAPTER = "TF32 and the precision formats"
