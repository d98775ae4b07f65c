"""The all-reduce model beside real numbers: measured here, recorded on real GPUs, published nccl-tests.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), section "Measured and published
all-reduce": :func:`allreduce_model_busbw` (the model's busbw for a configuration), :func:`allreduce_points`
and :func:`show_allreduce` (one figure and one Markdown table through :mod:`ampere.views`; it measures with
:func:`.measure.run_collective` when there are two GPUs). No torch or matplotlib import in this file.
"""

from __future__ import annotations

from typing import Any

from .. import check, fabrics, specs
from ..collectives import bus_bandwidth, collective_time, hierarchical_all_reduce_breakdown
from .measure import CollectiveRun, run_collective


#: Message size the model is evaluated at for a published peak busbw when the source gives no size: a
#: "large message" of 4 GiB per GPU, where the alpha-beta bandwidth term dominates.
LARGE_MESSAGE_BYTES = 4 * 2**30


def _node_for(gpu: str) -> fabrics.NodeNetwork:
    return fabrics.node_network(gpu, gpus_per_node=8)


def allreduce_model_busbw(gpu: str, gpus: int, nodes: int = 1, hcas_per_node: int = 8,
                          size_bytes: float = LARGE_MESSAGE_BYTES) -> float:
    """busbw (bytes/s) the model predicts for an all-reduce of ``size_bytes`` per GPU.

    Chapter: *NVLink, NVSwitch and collectives*, "Measured and published all-reduce". One node: the ring
    on the GPU's effective NVLink rate (:mod:`ampere.fabrics`); several nodes of 8 GPUs with
    ``hcas_per_node`` HDR adapters: the hierarchical all-reduce of :mod:`ampere.collectives`.
    """
    gpus = check.positive_int("gpus", gpus)
    nodes = check.positive_int("nodes", nodes)
    size = check.positive("size_bytes", size_bytes)
    if nodes == 1:
        net = fabrics.node_network(gpu, gpus_per_node=gpus)
        t = collective_time("all_reduce", size, gpus, net.intra_bytes_per_s, net.intra_latency_s)
        return bus_bandwidth("all_reduce", size / t, gpus)
    net = fabrics.node_network(gpu, gpus_per_node=gpus // nodes, hcas_per_node=hcas_per_node)
    return hierarchical_all_reduce_breakdown(
        size, nodes, net.gpus_per_node, net.intra_bytes_per_s, net.inter_bytes_per_s, net.intra_latency_s,
        net.inter_latency_s).busbw_bytes_per_s


def _published_point(rec: Any, figure: str, what: str, model: float) -> Any:
    from .. import views

    return views.point(rec, figure, what, model / 1e9, "GB/s")


def allreduce_points(run: "CollectiveRun | None" = None, gpu: str | None = None) -> list[Any]:
    """The all-reduce evidence the chapter shows beside the model: measured here (``run``), recorded on
    real GPUs (``ampere/data`` results of ``bench collectives``), then published nccl-tests figures.

    Chapter: *NVLink, NVSwitch and collectives*, "Measured and published all-reduce". Every point has the
    model's busbw for the same configuration (see :func:`allreduce_model_busbw`).
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
        if "busbw_gb_per_s" not in rec.figures:
            continue
        size = p.get("max_size_bytes") or LARGE_MESSAGE_BYTES
        nodes = p.get("nodes") or 2  # a multi-node figure without a node count: the smallest cluster, 2 nodes
        gpu = rec.gpu if rec.gpu in specs.names() else "A100-SXM4-80GB"
        if nodes == 1:
            model = allreduce_model_busbw(gpu, p["gpus"], size_bytes=size)
            what = (f"{p['gpus']} GPUs, one node" + (", NVLink SHARP" if "SHARP" in p.get("fabric", "") else "")
                    + (f", {size / 2**30:.0f} GiB" if p.get("max_size_bytes") else ", stated peak"))
        else:
            hcas = 4 if "4 x 200" in p.get("fabric", "") else 8
            model = allreduce_model_busbw(gpu, 8 * nodes, nodes, hcas, size)
            what = f"{nodes} nodes, {hcas} x HDR each" + ("" if p.get("nodes") else " (2 assumed)")
        points.append(_published_point(rec, "busbw_gb_per_s", what, model))
        if "ring_busbw_gb_per_s" in rec.figures:
            points.append(_published_point(rec, "ring_busbw_gb_per_s", f"{p['gpus']} GPUs, ring (no SHARP)", model))
    return points


def show_allreduce(info: Any) -> "CollectiveRun | None":
    """Measure an NCCL all-reduce across the GPUs when there are two or more, and show it with the
    recorded and published all-reduce busbw beside the model: one figure and one Markdown table.

    Chapter: *NVLink, NVSwitch and collectives*, "Measured and published all-reduce". Returns the run
    (None without two GPUs).
    """
    from .. import views

    run = None
    if getattr(info, "backend", "cpu") == "cuda" and getattr(info, "gpu_count", 0) >= 2:
        run = run_collective("all_reduce", [2**k for k in range(20, 31, 2)], info.gpu_count, backend="nccl",
                             samples=10, timeout_s=300)
    spec = getattr(info, "spec", None)
    views.show(allreduce_points(run, spec.name if spec is not None else None), title="All-reduce bus bandwidth: model and real numbers",
               model_label="model", real_label="real")
    return run
