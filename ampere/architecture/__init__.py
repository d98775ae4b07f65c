"""The GA100 and its neighbours: die hierarchy, per-SM resources, peaks derived live, and the roofline.

Chapter: *Architecture of the GA100* (book/architecture.ipynb). Everything here reads its facts from
``ampere.specs``; the matmul sweep measures a real GPU with ``ampere.timing`` and records with
``ampere.results``.

The package, one file per concern:

* ``die.py`` — the die layout of a product (enabled TPCs), the full-die L2, harvesting yield (pure);
* ``cache.py`` — the L2 as measured: the published sweeps read as resident footprint and plateau bandwidth (pure);
* ``peaks.py`` — per-SM resources, the peak tables derived beside the datasheet, ``validate specs`` (pure);
* ``roofline.py`` — arithmetic intensity, ridge points, attainable FLOP/s, the roofline curve (pure);
* ``execution.py`` — warps and SIMT, the schedulers, branch divergence, latency hiding (Little's law) and the
  resident warps a kernel's registers and shared memory allow (pure);
* ``quantization.py`` — the tile and wave staircase, the launch-overhead roof (the published launch floors), steps
  of many small kernels (pure);
* ``capabilities.py`` — what each reader environment can measure (the introduction's table; pure);
* ``measure.py`` — the matmul sweep (torch inside), recorded results, the BF16 target, ``bench matmul``;
* ``matmul_view.py`` — measured, recorded and published matmuls beside the dense peak (:func:`show_matmul`);
* ``figures.py`` — the dies, the harvesting curves and the roofline drawn, and the staircase modelled and
  measured on a CUDA GPU (:func:`show_staircase`) (matplotlib inside);
* ``figures_execution.py`` — divergence, occupancy, latency hiding, the staircase and the three roofs drawn;
* ``claims.py`` — the claims-checked table (pure).
"""

from __future__ import annotations

from typing import Any

from ..gemm import peak_precision_for, wave_efficiency  # noqa: F401  (transitional aliases: use ampere.gemm)
from .cache import l2_read_bandwidth, l2_summary, l2_sweep
from .capabilities import capability_markdown, capability_rows
from .claims import claims_rows
from .die import DieLayout, die_layout, full_die_l2_bytes, harvest_shortfall, harvest_yield
from .execution import (WARP_SIZE, arithmetic_latency_cycles, branch_cycles, divergence_expected, issue_model,
                        issue_utilization, resident_warps, warps_to_hide)
from .figures_execution import (plot_divergence, plot_latency_hiding, plot_occupancy, plot_staircase,
                                plot_three_roofs)
from .figures import draw_die, plot_dies, plot_harvest, plot_roofline, show_staircase
from .matmul_view import _legacy_published_matmul, matmul_points, published_matmul_table, show_matmul
from .measure import (BF16_TARGET_PCT, MATMUL_PRECISIONS, bench_main, bf16_peak_check, matmul_records, matmul_sweep,
                      staircase_sweep)
from .peaks import (CATALOGUE_ORDER, GENERATIONS, catalogue_peaks, datasheet_notes, peak_rows, peak_table,
                    sm_resources, sm_table, validate_datasheets)
from .quantization import (launch_overhead_s, launch_overheads, overhead_step_time, staircase, staircase_sizes,
                           three_roofs)
from .roofline import attainable_flops, matmul_intensity, ridge_point, ridge_points, roofline_curve

__all__ = [
    # the die, the SM and the peaks
    "DieLayout", "die_layout", "draw_die", "plot_dies", "full_die_l2_bytes", "harvest_yield", "harvest_shortfall",
    "plot_harvest", "sm_resources", "sm_table", "GENERATIONS", "CATALOGUE_ORDER", "peak_rows", "peak_table",
    "catalogue_peaks", "datasheet_notes", "validate_datasheets", "capability_rows", "capability_markdown",
    # the L2 as measured, and the roofline
    "l2_sweep", "l2_summary", "l2_read_bandwidth", "ridge_point", "matmul_intensity", "attainable_flops",
    "ridge_points", "roofline_curve", "plot_roofline",
    # the execution model and the quantisation lessons
    "WARP_SIZE", "issue_model", "branch_cycles", "divergence_expected", "arithmetic_latency_cycles", "warps_to_hide",
    "issue_utilization", "resident_warps", "launch_overhead_s", "launch_overheads", "staircase", "three_roofs",
    "overhead_step_time", "plot_divergence", "plot_occupancy", "plot_latency_hiding", "plot_staircase",
    "plot_three_roofs", "staircase_sweep", "staircase_sizes", "show_staircase",
    # real matmuls against the peak, and the claims
    "PUBLISHED_MATMUL", "MATMUL_PRECISIONS", "matmul_sweep", "matmul_records", "bench_main", "bf16_peak_check",
    "BF16_TARGET_PCT", "matmul_points", "published_matmul_table", "show_matmul", "claims_rows",
]


def __getattr__(name: str) -> Any:
    if name == "PUBLISHED_MATMUL":  # transitional alias (see _legacy_published_matmul)
        return _legacy_published_matmul()
    raise AttributeError(f"module 'ampere.architecture' has no attribute {name!r}")
