"""NVLink, NVSwitch and collectives: the chapter's views, its data-parallel model and real collectives.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb). The collective model itself (alpha-beta,
algbw/busbw, ring/tree, hierarchical all-reduce) lives in :mod:`ampere.collectives`, the node networks
in :mod:`ampere.fabrics`; this package re-exports their names for the chapter and adds, one concern per
file:

* ``scaling.py`` -- the data-parallel scaling model (:func:`data_parallel_step`, :func:`crossover_gpus`) on
  the systems of :func:`systems`.
* ``measure.py`` -- real collectives on ``torch.distributed`` (:func:`run_collective`; several on one set
  of processes, one start-up: :func:`run_collectives`; gloo on CPU processes, NCCL with one GPU per rank;
  the time of a call is the **max over ranks**) and GPU-to-GPU copies (:func:`p2p_copy_bandwidth`).
* ``fit.py`` -- the alpha-beta fit to measurements (:func:`fit_alpha_beta`, :func:`holdout_check`).
* ``bench.py`` -- ``python -m ampere bench collectives`` (:func:`bench_main`), spawned ranks or torchrun.
* ``links.py`` -- the links as data, the 600 -> 230 GB/s cascade, the published nccl-tests and Megatron
  records (:func:`published`).
* ``validation.py`` -- the seed claims checked (:func:`claims`, :func:`claims_rows`).
* ``allreduce.py`` -- the all-reduce model beside measured, recorded and published numbers
  (:func:`show_allreduce`).
* ``figures.py`` -- the chapter's figures, those of the NCCL sections included (:func:`show_latency`,
  :func:`show_protocols`, :func:`show_in_network`); matplotlib imported inside the functions that draw.
* ``rows.py`` -- the chapter's other Markdown tables (the lab, the systems, the crossovers).
* ``latency.py`` -- what a tiny all-reduce costs: the overhead and hop latencies of :mod:`ampere.fabrics`
  beside every published log they were not derived from (:func:`latency_checks`), the launch-bound
  single-process mode of nccl-tests (:func:`single_process_launch_s`).
* ``protocols.py`` -- NCCL's protocols (LL, LL128, Simple) and channels in NCCL's own cost model
  (:func:`protocol_time`, :func:`switch_points`, :func:`channels_needed`).
* ``innetwork.py`` -- in-network reduction (NVLink SHARP, InfiniBand SHARP) and PXN
  (:func:`all_reduce_busbw_bound`, :func:`sharp_all_reduce_busbw`, :func:`pxn_traffic`).
* ``ncclog.py`` -- reading NCCL_DEBUG=INFO logs (:func:`parse_nccl_log`, :func:`ring_rails`) and the
  symptom -> log line -> cause -> fix table (:func:`troubleshooting_rows`).

Conventions (per-rank ``size_bytes`` as nccl-tests counts it, bandwidths per direction, busbw factors)
are stated once, in :mod:`ampere.collectives`.
"""

from __future__ import annotations

# re-exported: the collective model and node networks the chapter uses (as before the split), the chapter's
# views and tables, and the private helpers other code used at ampere.interconnect._name
from ..collectives import (ALGORITHMS, OPS, AllReducePhases, algorithm_bandwidth, alpha_beta_terms,  # noqa: F401
                           bus_bandwidth, busbw_factor, check_op, collective_time,
                           hierarchical_all_reduce_breakdown, hierarchical_all_reduce_time, nccl_collective_time)
from ..fabrics import (A100_INTRA_BYTES_PER_S, A100_INTRA_LATENCY_S, A100_INTRA_OVERHEAD_S,  # noqa: F401
                       DGX_A100_INTER_BYTES_PER_S, IB_HDR_BYTES_PER_S, INTER_LATENCY_S, INTER_OVERHEAD_S,
                       NVLINK_PAYLOAD_EFFICIENCY, PCIE_EFFICIENCY, nvlink_bytes_per_s_per_direction,
                       nvlink_effective_bytes_per_s)
from .allreduce import (LARGE_MESSAGE_BYTES, allreduce_model_busbw, allreduce_points,  # noqa: F401
                        show_allreduce)
from .bench import _fit_in_memory, _parse_size, bench_main  # noqa: F401
from .figures import show_busbw_vs_size, show_cascade, show_hierarchical, show_lab_fit, show_scaling  # noqa: F401
from .fit import FIT_PERCENTILE, AlphaBetaFit, fit_alpha_beta, holdout_check  # noqa: F401
from .links import (A100_8GPU_BUSBW, A100_8GPU_BUSBW_EXPECTED, MEGATRON_32, MEGATRON_3072,  # noqa: F401
                    alpha_beta_rows, link_table, nvlink_cascade, published)
from .measure import (LAB_SIZES_BYTES, CollectiveRun, _aggregate, _Buffers, _collective_rank,  # noqa: F401
                      p2p_copy_bandwidth, run_collective, run_collectives)
from .rows import crossover_rows, lab_rows, show_decomposition, system_rows  # noqa: F401
from .scaling import (BERT_GLOBAL_BATCH_TOKENS, BERT_LARGE_PARAMS, DataParallelStep, System,  # noqa: F401
                      crossover_gpus, data_parallel_step, systems)
from .validation import claims, claims_rows  # noqa: F401
from .latency import (LatencyCheck, derivation_rows, former_alpha_model_s, latency_checks,  # noqa: F401
                      latency_rows, single_process_launch_s, tiny_all_reduce_model_s)
from .protocols import (PROTOCOLS, Protocol, best_protocol, channels_needed, nccl_constant,  # noqa: F401
                        payload_rows, protocol_busbw, protocol_rows, protocol_time, protocols, switch_points)
from .innetwork import (all_reduce_busbw_bound, network_bytes_per_node, pxn_traffic,  # noqa: F401
                        sharp_all_reduce_busbw)
from .ncclog import (Connection, NcclLog, log_excerpt, parse_nccl_log, ring_rails,  # noqa: F401
                     troubleshooting_rows)
from .figures import show_in_network, show_latency, show_protocols  # noqa: F401

__all__ = [
    "OPS", "ALGORITHMS", "busbw_factor", "bus_bandwidth", "algorithm_bandwidth", "alpha_beta_terms",
    "collective_time", "hierarchical_all_reduce_time", "hierarchical_all_reduce_breakdown", "AllReducePhases",
    "nvlink_bytes_per_s_per_direction", "nvlink_effective_bytes_per_s", "NVLINK_PAYLOAD_EFFICIENCY",
    "IB_HDR_BYTES_PER_S", "DGX_A100_INTER_BYTES_PER_S", "A100_INTRA_BYTES_PER_S", "A100_INTRA_LATENCY_S",
    "INTER_LATENCY_S", "System", "systems", "DataParallelStep", "data_parallel_step", "crossover_gpus",
    "CollectiveRun", "run_collective", "run_collectives", "AlphaBetaFit", "fit_alpha_beta", "holdout_check", "p2p_copy_bandwidth",
    "bench_main", "published", "link_table", "alpha_beta_rows", "nvlink_cascade", "claims",
    "nccl_collective_time", "A100_INTRA_OVERHEAD_S", "INTER_OVERHEAD_S",
    "LatencyCheck", "latency_checks", "latency_rows", "derivation_rows", "single_process_launch_s",
    "tiny_all_reduce_model_s", "former_alpha_model_s",
    "PROTOCOLS", "Protocol", "protocols", "protocol_busbw", "protocol_time", "best_protocol", "switch_points",
    "channels_needed", "protocol_rows", "payload_rows", "nccl_constant",
    "all_reduce_busbw_bound", "network_bytes_per_node", "sharp_all_reduce_busbw", "pxn_traffic",
    "Connection", "NcclLog", "parse_nccl_log", "ring_rails", "log_excerpt", "troubleshooting_rows",
    "show_latency", "show_protocols", "show_in_network",
]
