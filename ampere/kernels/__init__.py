"""Programming the SM: tiles, asynchronous copies, occupancy, shared-memory banks, launch order, the CUTLASS
tiling hierarchy, fusion and FlashAttention, in Triton.

Chapter: *Programming the A100's SM* (``book/kernels.ipynb``). Two halves:

* **models** in plain Python, importable anywhere: the arithmetic intensity and on-chip cost of a
  BM x BN x BK matmul tile (:func:`tile_cost`), a load/compute pipeline (:func:`pipeline_time`), Little's
  law (:func:`bytes_in_flight`), an occupancy calculator from each GPU's SM limits (:func:`occupancy`),
  the shared-memory bandwidth and bank conflicts (:func:`shared_memory_bandwidth`, :func:`tile_column_read`),
  the launch order of a tiled matmul and its L2 reuse (:func:`program_tile`, :func:`launch_traffic`), the
  threadblock/warp/mma tiling of a GEMM (:func:`gemm_tiling`), fusion (:func:`fusion_traffic`), L2 residency
  control (:func:`l2_persistence`) and the HBM traffic of attention (:func:`attention_hbm_bytes`);
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
* ``shared_memory.py``   shared-memory bandwidth from the banks, bank conflicts, the XOR swizzle (pure)
* ``launch_order.py``    grouped launch order (GROUP_M) and the HBM traffic of each order (pure)
* ``gemm_hierarchy.py``  threadblock -> warp -> mma.sync tiling of a GEMM, CUTLASS's sm80 defaults (pure)
* ``fusion.py``          HBM bytes of a chain of kernels, unfused and fused (pure)
* ``l2_residency.py``    HBM traffic with and without a persisting L2 window (pure)
* ``attention.py``       attention's HBM traffic (standard, FlashAttention-1 and -2 loop orders), FLOPs and
                         roofline time (pure)
* ``published.py``       the SRAM estimate, the FlashAttention pair and Triton's grouping figures from
                         ampere/data (pure)
* ``triton_kernels.py``  the Triton matmul and FlashAttention kernels, naive attention, ``prepare`` (heavy:
                         triton, torch)
* ``bench.py``           ``python -m ampere bench kernels`` (:func:`bench_main`) and its targets (heavy: torch,
                         triton)
* ``figures.py``         the chapter's ``plot_*`` model figures on a given axis (draws; ampere.plots inside)
* ``views.py``           the hierarchy and occupancy tables, ``show_matmul``/``show_attention``/``show_profile``
                         (heavy: torch inside)
"""

from __future__ import annotations

from .attention import PASSES, attention_flops, attention_hbm_bytes, attention_model_ms
from .bench import BENCHMARK, bench_main
from .figures import (plot_attention_traffic, plot_bank_conflicts, plot_l2_persistence, plot_launch_order,
                      plot_littles_law, plot_occupancy_registers, plot_pipeline, plot_tile_intensity, plot_tile_shared)
from .fusion import FusionOp, FusionTraffic, bias_gelu_epilogue, fusion_traffic, residual_layernorm
from .gemm_hierarchy import GemmTiling, cutlass_default, gemm_tiling, mma_shapes, tiling_rows
from .l2_residency import L2Persistence, l2_persistence
from .launch_order import LaunchTraffic, blocks_loaded, launch_traffic, program_order, program_tile
from .occupancy import Occupancy, SMLimits, occupancy, sm_limits
from .published import published_attention, published_flash_ratios, published_grouping, published_sram_estimate
from .shared_memory import (LAYOUTS, BankConflict, bank_conflicts, bank_map, column_conflicts,
                            shared_memory_bandwidth, tile_column_read, tile_offset)
from .tiling import PipelineTime, TileCost, bytes_in_flight, min_square_tile, pipeline_time, tile_cost, tile_sweep
from .triton_kernels import flash_attention, interpreting, matmul, naive_attention, prepare, triton_available
from .views import attention_points, hierarchy_rows, occupancy_rows, show_attention, show_matmul, show_profile

# Names the old module ``ampere/kernels.py`` had at ``ampere.kernels.<name>`` without listing them in
# ``__all__``: its other public constants, and a private helper the tests reach there.
from .attention import ALGORITHMS  # noqa: F401
from .bench import FLASH_TARGET_SPEEDUP, MATMUL_TARGET_RATIO, _compiled_resources  # noqa: F401
from .figures import CHAPTER_GPUS  # noqa: F401
from .occupancy import WARP_SIZE  # noqa: F401

__all__ = ["SMLimits", "sm_limits", "Occupancy", "occupancy", "TileCost", "tile_cost", "tile_sweep",
           "PipelineTime", "pipeline_time", "bytes_in_flight", "L2Persistence", "l2_persistence",
           "attention_hbm_bytes", "attention_flops", "PASSES", "triton_available", "interpreting", "matmul",
           "flash_attention", "naive_attention", "bench_main", "BENCHMARK", "prepare", "min_square_tile",
           "published_sram_estimate", "published_attention", "published_flash_ratios", "published_grouping",
           "hierarchy_rows", "occupancy_rows", "attention_model_ms", "attention_points", "show_matmul",
           "show_attention", "show_profile",
           "shared_memory_bandwidth", "BankConflict", "bank_conflicts", "tile_offset", "tile_column_read", "bank_map",
           "column_conflicts", "LAYOUTS",
           "program_tile", "program_order", "blocks_loaded", "LaunchTraffic", "launch_traffic",
           "GemmTiling", "gemm_tiling", "mma_shapes", "cutlass_default", "tiling_rows",
           "FusionOp", "FusionTraffic", "fusion_traffic", "bias_gelu_epilogue", "residual_layernorm",
           "plot_tile_intensity", "plot_tile_shared", "plot_pipeline", "plot_occupancy_registers", "plot_littles_law",
           "plot_l2_persistence", "plot_attention_traffic", "plot_bank_conflicts", "plot_launch_order"]
