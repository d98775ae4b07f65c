"""DGX A100 and the DGX SuperPOD as data: the node, the fabric, the peaks, the power and the money.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb).

Map of the package (one concern per file):

* ``node.py`` -- one DGX A100 as data (:func:`dgx_a100`, :class:`DGXNode`), its maximum power and list price.
* ``fabric.py`` -- the rail-optimised fat tree of any radix (:func:`fat_tree`), its size limits
  (:func:`two_level_max_nodes`, :func:`three_level_max_nodes`, :func:`fat_tree_max_ports`), the counting
  lower bound.
* ``references.py`` -- NVIDIA's SuperPOD reference architectures (DGX A100, H100, B200, B300) as fat-tree
  parameters and their published component tables (:func:`reference_designs`, :func:`compare_counts`).
* ``oversubscription.py`` -- tapered trees: what they save, what each traffic pattern pays (:func:`tapers`).
* ``pod.py`` -- the SuperPOD, node + fabric + power (:func:`superpod`, :func:`scaling_table`).
* ``published.py`` -- Selene on the TOP500 and Green500 (:func:`selene`) and MLPerf Training (:func:`mlperf`).
* ``allreduce.py`` -- all-reduce of gradients across a pod as NCCL runs it (:func:`pod_all_reduce`), the
  phases-in-turn upper bound (:func:`serial_all_reduce`), the published checks (:func:`all_reduce_checks`).
* ``costs.py`` -- cloud offers, owning a DGX (:class:`Ownership`, :func:`break_even`), a run's time and
  energy, the gap calculator, money rounded to what its inputs support (:func:`round_sig`).
* ``validation.py`` -- :func:`validate` (``python -m ampere validate cluster``) and the seed claims checked.
* ``rows.py`` -- the chapter's Markdown tables, one function each.
* ``figures.py`` -- the chapter's figures (matplotlib imported inside the functions that draw).
* ``checks.py`` -- the input checks the models share.

Published figures (HPL, MLPerf, the SuperPOD component tables, cloud prices) are data in ``ampere/data``;
this package reads them and never types them.

Units: SI in every name (``*_bytes_per_s``, ``*_w``, ``*_usd``). GB = 1e9 B, GiB = 2**30 B, TB = 1e12 B.
GPU memory is physical capacity in binary bytes (a DGX A100 640GB has 8 x 80 GiB). Bandwidths are **per
direction** unless a name says ``bidirectional``. FLOP/s are dense unless ``sparse=True``.
"""

from __future__ import annotations

# the chapter's tables and figures are re-exported too (the notebook calls them as cl.node_rows ...); as
# before the split they are not in __all__
from .allreduce import (GRADIENT_MODELS, all_reduce_checks, all_reduce_scaling, pod_all_reduce, rail_all_reduce,
                        serial_all_reduce)
from .costs import (HOURS_PER_WEEK, HOURS_PER_YEAR, BreakEven, GapCost, Ownership, break_even, break_even_utilization,
                    cloud_offer, cloud_offers, ownership_usd_per_gpu_hour, round_sig, throughput_gap_cost,
                    training_energy_j, training_time_s)
from .fabric import (MAX_SWITCH_PORTS, QM8790_PORTS, TIERS, Fabric, fat_tree, fat_tree_max_ports, switch_lower_bound,
                     three_level_max_nodes, two_level_max_nodes)
from .figures import (hpl_points, plot_topology, show_designs, show_hpl, show_ownership, show_pod_all_reduce,
                      show_switch_counts, show_topology)
from .node import DGX_A100_320GB_LIST_PRICE_USD, DGX_A100_MAX_POWER_W, HDR_PORT_BYTES_PER_S, DGXNode, dgx_a100
from .oversubscription import PATTERNS, Taper, pattern_slowdown, tapers
from .pod import SWITCH_POWER_W_ASSUMED, SuperPOD, scaling_table, superpod
from .published import EPYC_7742_FP64_FLOP_PER_CYCLE, Top500Entry, green500_top, mlperf, selene
from .references import (ReferenceCounts, ReferenceDesign, b200_reference, check_all, compare_counts, design_limits,
                         reference_counts, reference_design, reference_designs, reference_fabric)
from .rows import (all_reduce_check_rows, bandwidth_rows, bisection_rows, design_rows, gap_rows, limit_rows,
                   mlperf_rows, node_rows, peak_rows, pod_all_reduce_rows, pod_peak_rows, scaling_rows, selene_rows,
                   taper_rows)
from .validation import claims, validate, validation_rows

__all__ = [
    "HDR_PORT_BYTES_PER_S", "QM8790_PORTS", "MAX_SWITCH_PORTS", "SWITCH_POWER_W_ASSUMED", "TIERS",
    "DGX_A100_MAX_POWER_W", "DGX_A100_320GB_LIST_PRICE_USD",
    "DGXNode", "dgx_a100", "Fabric", "fat_tree", "fat_tree_max_ports", "switch_lower_bound", "SuperPOD",
    "superpod", "scaling_table", "validate",
    "ReferenceDesign", "ReferenceCounts", "reference_designs", "reference_design", "reference_counts",
    "reference_fabric", "compare_counts", "design_limits", "check_all", "b200_reference",
    "PATTERNS", "Taper", "pattern_slowdown", "tapers",
    "Top500Entry", "selene", "green500_top", "EPYC_7742_FP64_FLOP_PER_CYCLE",
    "GRADIENT_MODELS", "pod_all_reduce", "rail_all_reduce", "all_reduce_scaling", "serial_all_reduce",
    "all_reduce_checks",
    "two_level_max_nodes", "three_level_max_nodes",
    "cloud_offers", "cloud_offer", "Ownership", "ownership_usd_per_gpu_hour", "break_even_utilization",
    "BreakEven", "break_even", "round_sig", "training_time_s", "training_energy_j", "GapCost",
    "throughput_gap_cost", "mlperf", "HOURS_PER_YEAR", "HOURS_PER_WEEK", "plot_topology",
]
