"""2:4 structured sparsity: prune, compress, multiply, keep the accuracy, and measure the speed.

Chapter: *2:4 structured sparsity* (book/sparsity.ipynb). Every public function here is used there.

The map of the package (one concern per file):

* ``arrays``        input handling: numpy arrays, torch tensors, torch bf16 as bit patterns; allowed dtypes
* ``pattern``       the rule: N:M keep-masks, magnitude pruning, ``is_2to4``; random and unstructured masks
* ``compressed``    the compressed format: compress, decompress, metadata nibbles, the product from the
  compressed form, storage ratios, the hardware formats, the CUTLASS metadata layout
* ``roofline``      why the hardware likes it: dense/sparse peaks, ``LinearShape``, the roofline time and
  speedup model of one Linear layer, the unstructured break-even
* ``asp``           accuracy: the ASP recipe on scikit-learn's digits, its runs, summary and conclusions
* ``claims``        the published accuracy and speedup tables, and the claims-checked table
* ``llm``           2:4 on large language models: published perplexities and speedups of one-shot pruning,
  a roofline of one decoder layer (GEMMs, attention, the rest) and Amdahl's law for prefill and decode
* ``backends``      which 2:4 backend (cuSPARSELt, CUTLASS) works on this GPU: ``probe_backend``
* ``measure``       what is timed: dense vs sparse on this CPU, and the Linear-layer sweep on a GPU
* ``sweep_results`` reading a ``sparsity`` result: ``sweep_table``, its summary, ``verdict``
* ``bench``         ``python -m ampere bench sparsity`` (``bench_main``) and the report's ``short_run``
* ``figures``       the chapter's figures (matplotlib inside the functions)
* ``format_checks`` the worked examples and checks of the rule and the format, PyTorch's own encoder
* ``views``         the chapter's tables and its one-call view ``show_sparsity``

The rule, the compressed format and bf16 handling are described in the docstrings of ``pattern``,
``compressed`` and ``arrays``. torch is imported only inside the functions that need it (the ASP experiment
and the GPU measurements); ``import ampere.sparsity`` loads neither torch nor matplotlib.
"""

from __future__ import annotations

from .arrays import ALLOWED_DTYPES
from .asp import ASPConfig, asp_conclusions, asp_experiment, asp_runs, asp_summary
from .backends import BACKEND_ORDER, BackendCheck, probe_backend
from .bench import CPU_SHAPES, bench_main, short_run
from .claims import AccuracyResult, claims_rows, published_accuracy, published_speedup, published_speedups
from .compressed import (HARDWARE_FORMATS, NM_ENCODINGS, compress_2to4, cutlass_metadata_layout, decompress_2to4,
                         hardware_storage_ratio, matmul_2to4, metadata_nibbles, metadata_overhead, nm_storage_ratio,
                         storage_ratio)
from .figures import draw_block, plot_asp, plot_llm_speedup, plot_speedup_model, plot_sweep
from .llm import (BERT_BASE, PATTERNS, PHASES, LayerTime, LLMSpeedup, PerplexityResult, amdahl, decoder_layer_time,
                  gemm_speedup_needed, layer_speedup, perplexity_rows, published_llm_speedups,
                  published_perplexities, speedup_rows, bert_check_rows)
from .format_checks import (block_rows, compressed_product_checks, cutlass_agreement_rows, metadata_rows,
                            round_trip_rows, tf32_layout_rows, torch_cutlass_reference)
from .measure import QUICK_SHAPES, SWEEP_SHAPES, linear_sweep, measure_cpu_unstructured
from .pattern import (is_1to2, is_2to4, is_nm, mask_2to4, mask_nm, prune_1to2, prune_2to4, prune_nm,
                      random_mask_2to4, unstructured_mask)
from .roofline import (CSR_MATH, LinearShape, break_even_rows, csr_precision, matmul_time_model, peak_rows,
                       speedup_curves, speedup_model, unstructured_break_even)
from .sweep_results import sweep_table, verdict
from .views import (accuracy_rows, asp_table, peak_table, show_sparsity, speedup_points, time_model_rows)

__all__ = [
    # the pattern and the format
    "prune_nm", "is_nm", "mask_nm", "prune_2to4", "is_2to4", "mask_2to4", "prune_1to2", "is_1to2",
    "random_mask_2to4", "unstructured_mask", "compress_2to4", "decompress_2to4", "matmul_2to4",
    "metadata_nibbles", "storage_ratio", "hardware_storage_ratio", "HARDWARE_FORMATS", "metadata_overhead",
    "NM_ENCODINGS", "nm_storage_ratio",
    "cutlass_metadata_layout", "torch_cutlass_reference", "draw_block",
    # why the hardware likes it
    "peak_rows", "LinearShape", "matmul_time_model", "speedup_model", "unstructured_break_even",
    "CSR_MATH", "csr_precision", "break_even_rows", "speedup_curves", "plot_speedup_model", "measure_cpu_unstructured",
    # accuracy
    "ASPConfig", "asp_experiment", "asp_runs", "asp_summary", "asp_conclusions", "plot_asp",
    "AccuracyResult", "published_accuracy", "published_speedups", "published_speedup", "ALLOWED_DTYPES",
    # large language models
    "PATTERNS", "PHASES", "PerplexityResult", "published_perplexities", "perplexity_rows", "LLMSpeedup",
    "published_llm_speedups", "amdahl", "gemm_speedup_needed", "LayerTime", "decoder_layer_time",
    "layer_speedup", "speedup_rows", "plot_llm_speedup", "BERT_BASE", "bert_check_rows",
    # the GPU
    "BackendCheck", "probe_backend", "BACKEND_ORDER", "SWEEP_SHAPES", "QUICK_SHAPES", "CPU_SHAPES", "linear_sweep", "sweep_table",
    "bench_main", "short_run", "plot_sweep", "verdict",
    # claims
    "claims_rows",
]
