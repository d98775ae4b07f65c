"""All-reduce of gradients across a pod: the collective model of :mod:`ampere.collectives` (the same one
the NVLink chapter builds and checks) on the node networks of :mod:`ampere.fabrics`.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), section
"All-reduce across the pod": :func:`pod_all_reduce` (NCCL's rail-aligned rings or its tree, term by term),
:func:`rail_all_reduce` (one GPU per node over its own rail), :func:`all_reduce_scaling` (rows per model and
node count, with the hierarchical algorithm whose phases run one after the other beside it) and
:func:`all_reduce_checks` (the model beside published multi-node nccl-tests figures). Pure Python: no torch,
no matplotlib.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .. import check, collectives, fabrics, results

#: Parameter counts of models whose gradients the chapter all-reduces: (name, parameters, bib key).
GRADIENT_MODELS: tuple[tuple[str, float, str], ...] = tuple(
    (r["model"], float(r["params"]), r["source"]) for r in results.table("gradient-models")["rows"])

#: Message size (bytes per GPU) at which the model meets a published peak busbw whose size the source does
#: not give: 4 GiB, where the bandwidth term dominates (the NVLink chapter's convention).
LARGE_MESSAGE_BYTES = 4 * 2**30
#: The published multi-node all-reduce figures of ``ampere/data`` the chapter checks the model against.
CHECK_RECORDS = ("nccl1576-dgxa100-ib-all-reduce", "nccltests175-a100-2node-all-reduce")
#: The most node counts :func:`all_reduce_scaling` evaluates in one call.
MAX_NODE_COUNTS = 1000


def _network(network: Any) -> fabrics.NodeNetwork:
    if not isinstance(network, fabrics.NodeNetwork):
        raise TypeError(f"network must be an ampere.fabrics.NodeNetwork, got {network!r:.60}")
    return network


def _algorithm(value: Any) -> str:
    return check.one_of("inter_algorithm", value, collectives.ALGORITHMS)


def _nodes(nodes: Any, network: fabrics.NodeNetwork) -> int:
    return check.bounded_int("nodes", nodes, 1, fabrics.MAX_GPUS // network.gpus_per_node,
                             why=f"at most {fabrics.MAX_GPUS:,} GPUs")


def pod_all_reduce(params: float, nodes: int, bytes_per_param: float = 2.0,
                   network: fabrics.NodeNetwork = fabrics.DGX_A100,
                   inter_algorithm: str = "ring") -> collectives.CollectiveTime:
    """All-reduce of ``params`` gradients (``bytes_per_param`` each) over ``nodes`` whole nodes, as NCCL runs it.

    Chapter: *DGX A100 and the SuperPOD*, section "All-reduce across the pod". The model of the NVLink
    chapter, :func:`ampere.collectives.nccl_collective_breakdown`, on ``network`` (default: the DGX A100 of
    :mod:`ampere.fabrics`): rail-aligned rings that cross the nodes through all their adapters at once
    (``inter_algorithm="ring"``), or NCCL's tree (a chain inside each node, a binary tree between nodes).
    Returns the terms (:class:`ampere.collectives.CollectiveTime`: ``total_s``, ``latency_s``,
    ``bandwidth_s``, ``busbw_bytes_per_s``).
    """
    p = check.positive("params", params, maximum=1e15)
    b = check.positive("bytes_per_param", bytes_per_param, maximum=16.0)
    net = _network(network)
    n = _nodes(nodes, net)
    return collectives.nccl_collective_breakdown("all_reduce", p * b, n * net.gpus_per_node, net,
                                                 _algorithm(inter_algorithm))


def _rail(network: fabrics.NodeNetwork) -> fabrics.NodeNetwork:
    """One GPU per node on one adapter: rail r of ``network`` seen by the GPUs r of every node."""
    return network.with_(name=f"{network.name}, one rail", gpus_per_node=1, nvlink_domain=1, hcas_per_node=1)


def rail_all_reduce(size_bytes: float, nodes: int, algorithm: str = "ring",
                    network: fabrics.NodeNetwork = fabrics.DGX_A100) -> float:
    """Time (s) of an all-reduce of ``size_bytes`` among one GPU per node, over that GPU's own rail.

    Chapter: *DGX A100 and the SuperPOD*, section "All-reduce across the pod": with 8-way tensor
    parallelism inside each node, GPU r of every node holds the same shard, and its data-parallel
    all-reduce runs over rail r alone (one HDR port of a DGX A100, 25 GB/s per direction); the eight rails
    work at once. :func:`ampere.collectives.nccl_collective_time` on a "node" of one GPU and one adapter of
    ``network``, so the fixed overhead and hop latency are the network's.
    """
    size = check.nonneg("size_bytes", size_bytes)
    net = _network(network)
    n = check.bounded_int("nodes", nodes, 1, fabrics.MAX_GPUS, why="one GPU per node")
    if net.hcas_per_node == 0:
        raise ValueError(f"network={net.name!r} has no compute-fabric adapters (hcas_per_node=0): no rail")
    return collectives.nccl_collective_time("all_reduce", size, n, _rail(net), algorithm)


def serial_all_reduce(params: float, nodes: int, bytes_per_param: float = 2.0,
                      network: fabrics.NodeNetwork = fabrics.DGX_A100,
                      inter_algorithm: str = "ring") -> collectives.AllReducePhases:
    """The hierarchical all-reduce whose three phases run one after the other: an upper bound.

    Chapter: *DGX A100 and the SuperPOD*, section "All-reduce across the pod". Reduce-scatter over NVSwitch,
    one all-reduce per rail, all-gather over NVSwitch, in turn
    (:func:`ampere.collectives.hierarchical_all_reduce_breakdown` with the network's fixed overhead): what
    the NVSwitch phases would cost if nothing overlapped them. NCCL's rings pipeline the phases, which is
    what :func:`pod_all_reduce` models.
    """
    p = check.positive("params", params, maximum=1e15)
    b = check.positive("bytes_per_param", bytes_per_param, maximum=16.0)
    net = _network(network)
    n = _nodes(nodes, net)
    if n > 1 and net.hcas_per_node == 0:
        raise ValueError(f"nodes={n}: network={net.name!r} has no compute-fabric adapters; allowed: nodes=1")
    return collectives.hierarchical_all_reduce_breakdown(
        p * b, n, net.gpus_per_node, net.intra_bytes_per_s, net.inter_bytes_per_s or net.intra_bytes_per_s,
        net.intra_latency_s, net.inter_latency_s, _algorithm(inter_algorithm),
        net.inter_overhead_s if n > 1 else net.intra_overhead_s)


def all_reduce_scaling(node_counts: Iterable[int], models: Sequence[tuple[str, float, str]] = GRADIENT_MODELS,
                       bytes_per_param: float = 2.0, inter_algorithm: str = "ring",
                       network: fabrics.NodeNetwork = fabrics.DGX_A100) -> list[dict[str, Any]]:
    """Rows ``{model, nodes, size_bytes, total_s, latency_s, bandwidth_s, busbw_bytes_per_s, serial_s,
    serial_busbw_bytes_per_s}`` for each model and node count.

    Chapter: *DGX A100 and the SuperPOD*, "All-reduce across the pod". ``total_s`` is :func:`pod_all_reduce`
    (NCCL); ``serial_s`` the phases in turn (:func:`serial_all_reduce`); busbw is nccl-tests' bus bandwidth
    of the whole all-reduce over nodes x GPUs per node.
    """
    counts = check.sequence("node_counts", node_counts, lambda name, v: check.positive_int(name, v),
                            max_len=MAX_NODE_COUNTS)
    _algorithm(inter_algorithm)
    _network(network)
    if not isinstance(models, (list, tuple)) or not models:
        raise TypeError(f"models must be a non-empty list of (name, parameters, bib key), got {models!r:.60}")
    rows = []
    for i, m in enumerate(models):
        if not isinstance(m, (list, tuple)) or len(m) != 3 or not isinstance(m[0], str):
            raise TypeError(f"models[{i}] must be (name, parameters, bib key), got {m!r:.60}")
        name, params, _key = m
        for n in counts:
            r = pod_all_reduce(params, n, bytes_per_param, network, inter_algorithm)
            s = serial_all_reduce(params, n, bytes_per_param, network, inter_algorithm)
            rows.append({"model": name, "nodes": n, "size_bytes": r.size_bytes, "total_s": r.total_s,
                         "latency_s": r.latency_s, "bandwidth_s": r.bandwidth_s,
                         "busbw_bytes_per_s": r.busbw_bytes_per_s, "serial_s": s.total_s,
                         "serial_busbw_bytes_per_s": s.busbw_bytes_per_s})
    return rows


def all_reduce_checks(size_bytes: float = LARGE_MESSAGE_BYTES) -> list[dict[str, Any]]:
    """The pod model beside the published multi-node all-reduce figures of :data:`CHECK_RECORDS`.

    Chapter: *DGX A100 and the SuperPOD*, "All-reduce across the pod". One row per record: the configuration
    (nodes of 8 A100s with the record's adapters; 2 nodes when the source gives no count), the busbw of
    NCCL's rail-aligned rings (:func:`ampere.collectives.nccl_collective_breakdown`) and of the phases in
    turn at ``size_bytes`` per GPU (the sources give a peak, not its size), the published busbw, the ratios
    and the record itself (``record``, for its source label).
    """
    size = check.positive("size_bytes", size_bytes, maximum=2.0**40)
    recs = {r.id: r for r in results.records(benchmark="all-reduce", kind="published")}
    rows = []
    for rid in CHECK_RECORDS:
        rec = recs[rid]
        p = rec.params
        nodes = p.get("nodes") or 2
        nics, gbit = p.get("nics_per_node", 8), p.get("nic_gbit_per_s", 200)
        net = fabrics.node_network("A100-SXM4-80GB", 8, nics, gbit * 1e9 / 8)
        ring = collectives.nccl_collective_breakdown("all_reduce", size, 8 * nodes, net)
        serial = collectives.hierarchical_all_reduce_breakdown(
            size, nodes, 8, net.intra_bytes_per_s, net.inter_bytes_per_s, net.intra_latency_s,
            net.inter_latency_s, "ring", net.inter_overhead_s)
        published = rec.figures["busbw_gb_per_s"] * 1e9
        rows.append({"record": rec, "nodes": nodes, "nodes_given": bool(p.get("nodes")), "adapters": nics,
                     "adapter_gbit_per_s": gbit, "ring_busbw_bytes_per_s": ring.busbw_bytes_per_s,
                     "serial_busbw_bytes_per_s": serial.busbw_bytes_per_s, "published_bytes_per_s": published,
                     "ring_ratio": published / ring.busbw_bytes_per_s,
                     "serial_ratio": published / serial.busbw_bytes_per_s})
    return rows
