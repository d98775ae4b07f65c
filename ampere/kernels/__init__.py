"""Programming the SM: tiles, asynchronous copies, occupancy and FlashAttention, in Triton.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``). Two halves:

* **models** in plain Python, importable anywhere: the arithmetic intensity and on-chip cost of a
  BM x BN x BK matmul tile (:func:`tile_cost`), a load/compute pipeline (:func:`pipeline_time`), Little's
  law (:func:`bytes_in_flight`), an occupancy calculator from each GPU's SM limits (:func:`occupancy`),
  L2 residency control (:func:`l2_persistence`) and the HBM traffic of attention
  (:func:`attention_hbm_bytes`);
* **kernels** written in Triton (:func:`matmul`, :func:`flash_attention`): the same source runs on the CPU
  under Triton's interpreter (``TRITON_INTERPRET=1``, set here when no CUDA GPU is usable) and compiles for
  the GPU. ``triton`` and ``torch`` are imported inside the functions that need them, so ``import
  ampere.kernels`` works without either (:func:`triton_available` says whether the kernels can run).

``python -m ampere bench kernels`` (:func:`bench_main`) times both kernels against cuBLAS, naive attention
and PyTorch's attention on a GPU, and runs the same code path in the interpreter with ``--device cpu``.

The package, one file per concern (PURE: no torch, triton or matplotlib anywhere in the file; HEAVY:
imports them inside the functions that run kernels, measure or draw):

* ``occupancy.py``       SM limits per GPU and the CUDA occupancy calculator (pure)
* ``tiling.py``          tile cost and intensity, the smallest ridge-reaching tile, the cp.async pipeline,
                         Little's law (pure)
* ``l2_residency.py``    HBM traffic with and without a persisting L2 window (pure)
* ``attention.py``       FlashAttention's IO model, attention FLOPs, the roofline time of both algorithms (pure)
* ``published.py``       published L2 read bandwidth, SRAM estimate and FlashAttention pair from ampere/data (pure)
* ``triton_kernels.py``  the Triton matmul and FlashAttention kernels, naive attention, ``prepare`` (heavy:
                         triton, torch)
* ``bench.py``           ``python -m ampere bench kernels`` (:func:`bench_main`) and its targets (heavy: torch,
                         triton)
* ``figures.py``         the chapter's ``plot_*`` model figures on a given axis (draws; ampere.plots inside)
* ``views.py``           the hierarchy and occupancy tables, ``show_matmul``/``show_attention``/``show_profile``
                         (heavy: torch inside)
"""

from __future__ import annotations

from .attention import attention_flops, attention_hbm_bytes, attention_model_ms
from .bench import BENCHMARK, bench_main
from .figures import (plot_attention_traffic, plot_l2_persistence, plot_littles_law, plot_occupancy_registers,
                      plot_pipeline, plot_tile_intensity, plot_tile_shared)
from .l2_residency import L2Persistence, l2_persistence
from .occupancy import Occupancy, SMLimits, occupancy, sm_limits
from .published import published_attention, published_flash_ratios, published_l2_read
from .tiling import PipelineTime, TileCost, bytes_in_flight, min_square_tile, pipeline_time, tile_cost, tile_sweep
from .triton_kernels import flash_attention, interpreting, matmul, naive_attention, prepare, triton_available
from .views import hierarchy_rows, occupancy_rows, show_attention, show_matmul, show_profile

# Names the old module ``ampere/kernels.py`` had at ``ampere.kernels.<name>`` without listing them in
# ``__all__``: its other public constants, and a private helper the tests reach there.
from .attention import ALGORITHMS  # noqa: F401
from .bench import FLASH_TARGET_SPEEDUP, MATMUL_TARGET_RATIO, _compiled_resources  # noqa: F401
from .figures import CHAPTER_GPUS  # noqa: F401
from .occupancy import WARP_SIZE  # noqa: F401

__all__ = ["SMLimits", "sm_limits", "Occupancy", "occupancy", "TileCost", "tile_cost", "tile_sweep",
           "PipelineTime", "pipeline_time", "bytes_in_flight", "L2Persistence", "l2_persistence",
           "attention_hbm_bytes", "attention_flops", "triton_available", "interpreting", "matmul",
           "flash_attention", "naive_attention", "bench_main", "BENCHMARK", "prepare", "min_square_tile", "published_l2_read", "published_attention",
           "published_flash_ratios",
           "hierarchy_rows", "occupancy_rows", "attention_model_ms", "show_matmul", "show_attention", "show_profile",
           "plot_tile_intensity", "plot_tile_shared", "plot_pipeline", "plot_occupancy_registers", "plot_littles_law",
           "plot_l2_persistence", "plot_attention_traffic"]
