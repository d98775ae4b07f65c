"""All-reduce of gradients across a pod: the collective model of :mod:`ampere.collectives` on the node
network of :mod:`ampere.fabrics`.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), section
"All-reduce across the pod": :func:`pod_all_reduce` (hierarchical), :func:`rail_all_reduce` (one GPU per
node over its own rail), :func:`all_reduce_scaling` (rows per model and node count). Pure Python: no torch,
no matplotlib.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .. import check, collectives, fabrics, results
from .node import HDR_PORT_BYTES_PER_S


#: Parameter counts of models whose gradients the chapter all-reduces: (name, parameters, bib key).
GRADIENT_MODELS: tuple[tuple[str, float, str], ...] = tuple(
    (r["model"], float(r["params"]), r["source"]) for r in results.table("gradient-models")["rows"])


def pod_all_reduce(params: float, nodes: int, bytes_per_param: float = 2.0,
                   network: fabrics.NodeNetwork = fabrics.DGX_A100,
                   inter_algorithm: str = "ring") -> collectives.AllReducePhases:
    """Hierarchical all-reduce of ``params`` gradients (``bytes_per_param`` each) over ``nodes`` nodes.

    Chapter: *DGX A100 and the SuperPOD*, section "All-reduce across the pod". Delegates to
    :func:`ampere.collectives.hierarchical_all_reduce_breakdown` (reduce-scatter over NVSwitch, one
    all-reduce per rail over InfiniBand, all-gather over NVSwitch) on ``network`` (default: DGX A100
    of :mod:`ampere.fabrics`). Returns the phases (:class:`ampere.collectives.AllReducePhases`).
    """
    p = check.positive("params", params)
    b = check.positive("bytes_per_param", bytes_per_param)
    if not isinstance(network, fabrics.NodeNetwork):
        raise TypeError(f"network must be an ampere.fabrics.NodeNetwork, got {network!r}")
    return collectives.hierarchical_all_reduce_breakdown(
        p * b, nodes, network.gpus_per_node, network.intra_bytes_per_s, network.inter_bytes_per_s,
        network.intra_latency_s, network.inter_latency_s, inter_algorithm)


def rail_all_reduce(size_bytes: float, nodes: int, algorithm: str = "ring") -> float:
    """Time (s) of an all-reduce of ``size_bytes`` among one GPU per node, over that GPU's own rail.

    Chapter: *DGX A100 and the SuperPOD*, section "All-reduce across the pod": with 8-way tensor
    parallelism inside each node, GPU r of every node holds the same shard, and its data-parallel
    all-reduce runs over rail r alone (one HDR port, 25 GB/s per direction); the 8 rails work at once.
    Uses :func:`ampere.collectives.collective_time` with the inter-node latency of :mod:`ampere.fabrics`.
    """
    return collectives.collective_time("all_reduce", size_bytes, check.positive_int("nodes", nodes),
                                       HDR_PORT_BYTES_PER_S, fabrics.INTER_LATENCY_S, algorithm)


def all_reduce_scaling(node_counts: Iterable[int], models: Sequence[tuple[str, float, str]] = GRADIENT_MODELS,
                       bytes_per_param: float = 2.0, inter_algorithm: str = "ring") -> list[dict[str, Any]]:
    """Rows ``{model, nodes, size_bytes, total_s, inter_s, busbw_bytes_per_s}`` for each model and node
    count. ``busbw`` is nccl-tests' bus bandwidth of the whole all-reduce over nodes x 8 GPUs."""
    rows = []
    for name, params, _key in models:
        for n in node_counts:
            r = pod_all_reduce(params, n, bytes_per_param, inter_algorithm=inter_algorithm)
            rows.append({"model": name, "nodes": n, "size_bytes": r.size_bytes, "total_s": r.total_s,
                         "inter_s": r.inter_all_reduce_s, "busbw_bytes_per_s": r.busbw_bytes_per_s})
    return rows
