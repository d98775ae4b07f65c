"""The all-reduce model beside real numbers: measured here, recorded on real GPUs, published nccl-tests.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), section "Published all-reduce beside
the model": :func:`allreduce_model_busbw` (the model's busbw for a configuration), :func:`allreduce_points`
and :func:`show_allreduce` (one figure and one Markdown table through :mod:`ampere.views`; it measures with
:func:`.measure.run_collective` when there are two GPUs). No torch or matplotlib import in this file.
"""

from __future__ import annotations

from typing import Any

from .. import check, fabrics, specs
from ..collectives import bus_bandwidth, nccl_collective_time
from .measure import CollectiveRun, run_collective


#: Message size the model is evaluated at for a published peak busbw when the source gives no size: a
#: "large message" of 4 GiB per GPU, where the alpha-beta bandwidth term dominates.
LARGE_MESSAGE_BYTES = 4 * 2**30


def allreduce_model_busbw(gpu: str, gpus: int, nodes: int = 1, hcas_per_node: int = 8,
                          size_bytes: float = LARGE_MESSAGE_BYTES, hca_bytes_per_s: float = fabrics.IB_HDR_BYTES_PER_S) -> float:
    """busbw (bytes/s) the model predicts for an all-reduce of ``size_bytes`` per GPU, as NCCL runs it.

    Chapter: *NVLink, NVSwitch and collectives*, "Published all-reduce beside the model". One node: the
    ring on the GPU's effective NVLink rate (:mod:`ampere.fabrics`); several nodes of ``gpus / nodes`` GPUs
    with ``hcas_per_node`` adapters of ``hca_bytes_per_s``: NCCL's rail-aligned ring
    (:func:`ampere.collectives.nccl_collective_time`).
    """
    gpus = check.positive_int("gpus", gpus)
    nodes = check.positive_int("nodes", nodes)
    size = check.positive("size_bytes", size_bytes)
    if gpus % nodes:
        raise ValueError(f"gpus={gpus} must be a multiple of nodes={nodes}")
    per_node = gpus // nodes
    if nodes == 1:
        net = fabrics.node_network(gpu, gpus_per_node=gpus)
    else:
        net = fabrics.node_network(gpu, gpus_per_node=per_node, hcas_per_node=hcas_per_node,
                                   hca_bytes_per_s=hca_bytes_per_s)
    return bus_bandwidth("all_reduce", size / nccl_collective_time("all_reduce", size, gpus, net), gpus)


def _published_point(rec: Any, figure: str, what: str, model: float, value: float | None = None) -> Any:
    from .. import views

    if value is None:
        return views.point(rec, figure, what, model / 1e9, "GB/s")
    return views.Point(what, rec.gpu, model / 1e9, value, "GB/s", kind="published", source=views.source_text(rec))


def allreduce_points(run: "CollectiveRun | None" = None, gpu: str | None = None) -> list[Any]:
    """The all-reduce evidence the chapter shows beside the model: measured here (``run``), recorded on
    real GPUs (``ampere/data`` results of ``bench collectives``), then published nccl-tests figures (peaks,
    and the largest size of each published sweep that reaches 256 MiB).

    Chapter: *NVLink, NVSwitch and collectives*, "Published all-reduce beside the model". Every point has
    the model's busbw for the same configuration (see :func:`allreduce_model_busbw`).
    """
    from .. import results, views

    points = []
    if run is not None and run.backend == "nccl" and run.records:
        big = max(run.records, key=lambda r: r["size_bytes"])
        model = None
        if gpu is not None:  # the catalogue name of the GPUs the run used (NVLink or PCIe: see fabrics)
            model = allreduce_model_busbw(specs.get(gpu).name, run.world_size, size_bytes=big["size_bytes"])
        points.append(views.Point(f"{run.world_size} GPUs, {big['size_bytes'] / 2**20:.0f} MiB", gpu or run.device_name,
                                  None if model is None else model / 1e9, big["busbw_bytes_per_s"] / 1e9,
                                  "GB/s", kind="measured", source="measured here"))
    for rec in results.records(benchmark="collectives", kind="measured"):
        p = rec.params
        if p.get("kind") != "collective" or p.get("op") != "all_reduce" or p.get("backend") != "nccl":
            continue
        if p.get("size_bytes", 0) < 2**28 or "busbw_bytes_per_s" not in rec.figures:
            continue
        try:
            model = allreduce_model_busbw(rec.gpu, p["world_size"], size_bytes=p["size_bytes"]) / 1e9
        except ValueError:
            model = None
        points.append(views.Point(f"{p['world_size']} GPUs, {p['size_bytes'] / 2**20:.0f} MiB", rec.gpu, model,
                                  rec.figures["busbw_bytes_per_s"] / 1e9, "GB/s", kind="recorded",
                                  source=views.source_text(rec)))
    for rec in results.records(benchmark="all-reduce", kind="published"):
        p = rec.params
        gpu_name = rec.gpu if rec.gpu in specs.names() else "A100-SXM4-80GB"
        if "sweep_busbw_gb_per_s" in rec.figures:
            size = rec.figures["sweep_size_bytes"][-1]
            if size < 2**28 or p.get("nodes", 1) != 1:
                continue
            value = rec.figures["sweep_busbw_gb_per_s"][-1]
            model = allreduce_model_busbw(gpu_name, p["gpus"], size_bytes=size)
            mode = ", -g 8" if str(rec.setup.get("launch", "")).startswith("one process,") else ""
            points.append(_published_point(rec, "sweep_busbw_gb_per_s", f"{p['gpus']} GPUs, one node, "
                                           f"{size / 2**30:.0f} GiB{mode}", model, value))
            continue
        if "busbw_gb_per_s" not in rec.figures or not isinstance(p.get("gpus") or 16, int):
            continue
        size = p.get("max_size_bytes") or LARGE_MESSAGE_BYTES
        nodes = p.get("nodes") or 2  # a multi-node figure without a node count: the smallest cluster, 2 nodes
        if nodes == 1:
            model = allreduce_model_busbw(gpu_name, p["gpus"], size_bytes=size)
            what = (f"{p['gpus']} GPUs, one node" + (", NVLink SHARP" if "SHARP" in p.get("fabric", "") else "")
                    + (f", {size / 2**30:.0f} GiB" if p.get("max_size_bytes") else ", stated peak"))
        else:
            nics, gbit = p.get("nics_per_node", 8), p.get("nic_gbit_per_s", 200)
            model = allreduce_model_busbw(gpu_name, 8 * nodes, nodes, nics, size, gbit * 1e9 / 8)
            fabric = p.get("fabric", "")
            kind = "EFA" if "EFA" in fabric else "RoCE" if "RoCE" in fabric else "InfiniBand"
            what = f"{nodes} nodes, {nics} x {gbit} Gb/s {kind} each" + ("" if p.get("nodes") else " (2 assumed)")
            if p.get("qps_per_connection"):
                what += f", {p['qps_per_connection']} QP per connection"
        points.append(_published_point(rec, "busbw_gb_per_s", what, model))
        if "ring_busbw_gb_per_s" in rec.figures:
            points.append(_published_point(rec, "ring_busbw_gb_per_s", f"{p['gpus']} GPUs, ring (no SHARP)", model))
    return points


def show_allreduce(info: Any) -> "CollectiveRun | None":
    """Measure an NCCL all-reduce across the GPUs when there are two or more, and show it with the
    recorded and published all-reduce busbw beside the model: one figure and one Markdown table.

    Chapter: *NVLink, NVSwitch and collectives*, "Published all-reduce beside the model". Returns the run
    (None without two GPUs).
    """
    from .. import views

    run = None
    if getattr(info, "backend", "cpu") == "cuda" and getattr(info, "gpu_count", 0) >= 2:
        run = run_collective("all_reduce", [2**k for k in range(20, 31, 2)], info.gpu_count, backend="nccl",
                             samples=10, timeout_s=300)
    spec = getattr(info, "spec", None)
    views.show(allreduce_points(run, spec.name if spec is not None else None),
               title="All-reduce busbw: the model beside published and measured numbers",
               model_label="model", real_label="published or measured", log=False)
    return run
