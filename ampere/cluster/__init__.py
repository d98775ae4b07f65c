"""DGX A100 and the DGX SuperPOD as data: the node, the fabric, the peaks, the power and the money.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb).

Map of the package (one concern per file):

* ``node.py`` -- one DGX A100 as data (:func:`dgx_a100`, :class:`DGXNode`), its maximum power and list price.
* ``fabric.py`` -- the rail-optimised, non-blocking fat tree (:func:`fat_tree`), the counting lower bound,
  the DGX B200 SuperPOD counts table it is validated on (:func:`b200_reference`).
* ``pod.py`` -- the SuperPOD, node + fabric + power (:func:`superpod`, :func:`scaling_table`).
* ``published.py`` -- Selene on the TOP500 and Green500 (:func:`selene`) and MLPerf Training (:func:`mlperf`).
* ``allreduce.py`` -- the hierarchical all-reduce of gradients across a pod (:func:`pod_all_reduce`).
* ``costs.py`` -- cloud offers, owning a DGX (:class:`Ownership`), a run's time and energy, the gap calculator.
* ``validation.py`` -- :func:`validate` (``python -m ampere validate cluster``) and the seed claims checked.
* ``rows.py`` -- the chapter's Markdown tables, one function each.
* ``figures.py`` -- the chapter's figures (matplotlib imported inside the functions that draw).
* ``checks.py`` -- the input checks the models share.

Published figures (HPL, MLPerf, the B200 counts table, cloud prices) are data in ``ampere/data``; this
package reads them and never types them.

Units: SI in every name (``*_bytes_per_s``, ``*_w``, ``*_usd``). GB = 1e9 B, TB = 1e12 B. Bandwidths are
**per direction** unless a name says ``bidirectional``. FLOP/s are dense unless ``sparse=True``.
"""

from __future__ import annotations

# the chapter's tables and figures are re-exported too (the notebook calls them as cl.node_rows ...); as
# before the split they are not in __all__
from .allreduce import GRADIENT_MODELS, all_reduce_scaling, pod_all_reduce, rail_all_reduce
from .costs import (HOURS_PER_WEEK, HOURS_PER_YEAR, GapCost, Ownership, break_even_utilization, cloud_offers,
                    ownership_usd_per_gpu_hour, throughput_gap_cost, training_energy_j, training_time_s)
from .fabric import (QM8790_PORTS, TIERS, Fabric, ReferenceCounts, b200_reference, fat_tree, switch_lower_bound,
                     three_level_max_nodes, two_level_max_nodes)
from .figures import (hpl_points, plot_topology, show_hpl, show_ownership, show_pod_all_reduce, show_switch_counts,
                      show_topology)
from .node import DGX_A100_320GB_LIST_PRICE_USD, DGX_A100_MAX_POWER_W, HDR_PORT_BYTES_PER_S, DGXNode, dgx_a100
from .pod import SWITCH_POWER_W_ASSUMED, SuperPOD, scaling_table, superpod
from .published import EPYC_7742_FP64_FLOP_PER_CYCLE, Top500Entry, green500_top, mlperf, selene
from .rows import (bandwidth_rows, gap_rows, mlperf_rows, node_rows, peak_rows, pod_all_reduce_rows, pod_peak_rows,
                   scaling_rows, selene_rows)
from .validation import claims, validate, validation_rows

__all__ = [
    "HDR_PORT_BYTES_PER_S", "QM8790_PORTS", "SWITCH_POWER_W_ASSUMED", "TIERS", "DGX_A100_MAX_POWER_W",
    "DGX_A100_320GB_LIST_PRICE_USD",
    "DGXNode", "dgx_a100", "Fabric", "fat_tree", "switch_lower_bound", "SuperPOD", "superpod",
    "scaling_table", "ReferenceCounts", "b200_reference", "validate",
    "Top500Entry", "selene", "green500_top", "EPYC_7742_FP64_FLOP_PER_CYCLE",
    "GRADIENT_MODELS", "pod_all_reduce", "rail_all_reduce", "all_reduce_scaling",
    "two_level_max_nodes", "three_level_max_nodes",
    "cloud_offers", "Ownership", "ownership_usd_per_gpu_hour",
    "break_even_utilization", "training_time_s", "training_energy_j", "GapCost", "throughput_gap_cost", "mlperf",
    "HOURS_PER_YEAR", "HOURS_PER_WEEK", "plot_topology",
]
