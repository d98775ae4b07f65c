"""What a tiny collective costs: the latency terms of :mod:`ampere.fabrics` beside the published logs.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), section "What a tiny all-reduce costs".
:mod:`ampere.fabrics` derives four numbers from four named nccl-tests logs (a fixed overhead and a hop
latency inside a node, the same across nodes). This file puts the model beside every published tiny
all-reduce it was *not* derived from (:func:`latency_checks`), explains the one mode it does not cover --
nccl-tests driving all GPUs from one process, where the time is that of the launch loop
(:func:`single_process_launch_s`) -- and keeps the former model (alpha = half a 2-GPU all-reduce, times
the step count) for comparison (:func:`former_alpha_model_s`). Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import check, fabrics, results
from .. import fields as _fields
from ..collectives import nccl_collective_time

#: The published log the single-process launch cost is derived from (its 8-GPU row), and the size of a
#: "tiny" all-reduce the checks use (in the flat part of every sweep).
LAUNCH_RECORD = "nccltests123-dgxa100-ring-1ch-g"
TINY_BYTES = 8
#: Launch modes: one process per GPU (MPI, torchrun: what training does) or one process for all GPUs
#: (nccl-tests ``-g N``).
LAUNCH_MODES = ("per-process", "single-process")


def _records() -> dict[str, Any]:
    return {r.id: r for r in results.records(benchmark="all-reduce", kind="published")}


def single_process_launch_s() -> float:
    """Seconds one process spends launching a collective on one more GPU (nccl-tests ``-g N``).

    Chapter: *NVLink, NVSwitch and collectives*, "What a tiny all-reduce costs". Derived from the 8-GPU row
    of :data:`LAUNCH_RECORD` (time / 8): with one thread looping over the GPUs, the launches, not NVLink,
    set the pace of a stream of tiny all-reduces.
    """
    fig = _records()[LAUNCH_RECORD].figures
    n, t = fig["sweep_gpus_count"][-1], fig["sweep_time_us"][-1]
    return t / n * 1e-6


def tiny_all_reduce_model_s(gpus: int, nodes: int = 1, launch: str = "per-process",
                            network: fabrics.NodeNetwork = fabrics.DGX_A100) -> float:
    """Model time (s) of an 8-byte all-reduce on ``gpus`` GPUs over ``nodes`` nodes of ``network``.

    Chapter: *NVLink, NVSwitch and collectives*, "What a tiny all-reduce costs". One process per GPU: the
    faster of NCCL's ring and tree (:func:`ampere.collectives.nccl_collective_time`); one process for all
    GPUs of a node (``launch="single-process"``): at least the launch loop, ``GPUs per node x``
    :func:`single_process_launch_s`.
    """
    gpus = check.positive_int("gpus", gpus)
    nodes = check.positive_int("nodes", nodes)
    check.one_of("launch", launch, LAUNCH_MODES)
    if not isinstance(network, fabrics.NodeNetwork):
        raise TypeError(f"network must be an ampere.fabrics.NodeNetwork, got {network!r}")
    if gpus % nodes:
        raise ValueError(f"gpus={gpus} must be a multiple of nodes={nodes}")
    per_node = gpus // nodes
    net = network if nodes == 1 else network.with_(gpus_per_node=per_node, nvlink_domain=per_node)
    if nodes == 1 and per_node > net.gpus_per_node:
        raise ValueError(f"gpus={gpus} on one node of {net.name}: allowed at most {net.gpus_per_node}")
    t = min(nccl_collective_time("all_reduce", TINY_BYTES, gpus, net, alg) for alg in ("ring", "tree"))
    if launch == "single-process":
        t = max(t, per_node * single_process_launch_s())
    return t


def former_alpha_model_s(gpus: int) -> float:
    """The chapter's former model of a tiny all-reduce: ``2(n-1) x alpha`` with alpha half of the 10 µs a
    32-byte all-reduce takes on two A100s (nccl#583). On 8 GPUs it gives about 71 µs; kept to show the
    erratum, not used anywhere else."""
    n = check.positive_int("gpus", gpus)
    alpha = _records()["nccl583-a100-2gpu-latency"].figures["time_us"] / 2 * 1e-6
    return 2 * (n - 1) * alpha


@dataclass(frozen=True)
class LatencyCheck:
    """One published tiny all-reduce beside the model (chapter section "What a tiny all-reduce costs")."""

    record_id: str
    what: str  # the configuration, for a table
    gpus: int
    nodes: int
    launch: str  # one of LAUNCH_MODES, or "not stated"
    measured_s: float
    model_s: float
    role: str  # "derived from", "held out", "other network", "other GPU"

    def __post_init__(self) -> None:
        _fields.check_annotated(self, positive=("gpus", "nodes", "measured_s", "model_s"), allow_empty=False,
                              maxima={"gpus": fabrics.MAX_GPUS, "nodes": fabrics.MAX_GPUS})

    @property
    def ratio(self) -> float:
        """Model / measured."""
        return self.model_s / self.measured_s


def _floor_s(rec: Any) -> float:
    if "sweep_time_us" in rec.figures and "sweep_size_bytes" in rec.figures:
        return fabrics.tiny_all_reduce_us(rec.id) * 1e-6
    return rec.figures["time_us"] * 1e-6


def latency_checks() -> list[LatencyCheck]:
    """Every published tiny all-reduce of ``collectives.json`` beside the model, with its role: the logs
    the terms were derived from, the A100 logs held out, and logs of other networks or GPUs.

    Chapter: *NVLink, NVSwitch and collectives*, "What a tiny all-reduce costs".
    """
    recs = _records()
    derived = set(fabrics.LATENCY_RECORDS.values())
    out = []
    for rec in recs.values():
        p = rec.params
        if rec.id == LAUNCH_RECORD:
            fig = rec.figures
            for n, t in zip(fig["sweep_gpus_count"], fig["sweep_time_us"]):
                role = "derived from" if n == fig["sweep_gpus_count"][-1] else "held out"
                out.append(LatencyCheck(rec.id, f"{n} GPUs, -g {n}, ring, 1 channel", n, 1, "single-process", t * 1e-6,
                                        tiny_all_reduce_model_s(n, 1, "single-process"), role))
            continue
        has_floor = ("sweep_time_us" in rec.figures or "time_us" in rec.figures)
        if not has_floor or not isinstance(p.get("gpus"), int):
            continue
        gpus, nodes = p["gpus"], p.get("nodes") or 1
        launch = str(rec.setup.get("launch", "not stated"))
        mode = "single-process" if launch.startswith("one process,") else "per-process"
        if rec.gpu not in ("A100-SXM4-40GB", "A100-SXM4-80GB"):
            role, model = "other GPU", tiny_all_reduce_model_s(gpus, nodes, mode)
        elif nodes > 1 and "InfiniBand" not in p.get("fabric", ""):
            role, model = "other network", tiny_all_reduce_model_s(gpus, nodes, mode)
        else:
            role = "derived from" if rec.id in derived else "held out"
            model = tiny_all_reduce_model_s(gpus, nodes, mode)
        fabric = p.get("fabric", "")
        kind = "EFA" if "EFA" in fabric else "RoCE" if "RoCE" in fabric else "InfiniBand"
        what = f"{gpus} GPUs" + (f", {nodes} nodes, {kind}" if nodes > 1 else ", one node") + (
            f", -g {gpus // nodes}" if mode == "single-process" else "")
        label = "one process per GPU" if launch == "one process per GPU" else (
            "single-process" if mode == "single-process" else "not stated")
        out.append(LatencyCheck(rec.id, what, gpus, nodes, label, _floor_s(rec), model, role))
    order = {"derived from": 0, "held out": 1, "other network": 2, "other GPU": 3}
    return sorted(out, key=lambda c: (order[c.role], c.nodes, c.launch, c.gpus))


def latency_rows() -> list[dict[str, str]]:
    """:func:`latency_checks` as table rows (µs), each source by its author-year label; the configuration
    names the launch mode when one process drives all GPUs, and the GPU when it is not an A100."""
    from .. import views

    recs = _records()
    rows = []
    for c in latency_checks():
        gpu = recs[c.record_id].gpu
        what = c.what if gpu.startswith("A100") else f"{gpu}: {c.what}"
        rows.append({"role": c.role, "configuration": what, "published (µs)": f"{c.measured_s * 1e6:.1f}",
                     "model (µs)": f"{c.model_s * 1e6:.1f}", "model / published": f"{c.ratio:.2f}",
                     "source": views.cite_label(recs[c.record_id].source)})
    return rows


def derivation_rows() -> list[dict[str, str]]:
    """The four logs, their latency floors and the two equations each pair solves (table rows)."""
    from .. import views

    recs = _records()
    rows = []
    for key, rid in fabrics.LATENCY_RECORDS.items():
        rec = recs[rid]
        p = rec.params
        hops = (f"2 x {p['gpus'] - 1} NVLink hops" if p["nodes"] == 1 else
                f"2 x 7 NVLink hops + 2 log2({p['nodes']}) network hops")
        rows.append({"log": f"{p['gpus']} GPUs on {p['nodes']} node{'s' if p['nodes'] > 1 else ''}",
                     "latency floor, 8-64 B (µs)": f"{fabrics.tiny_all_reduce_us(rid):.2f}",
                     "model": ("overhead + " if p["nodes"] == 1 else "network overhead + ") + hops,
                     "source": views.cite_label(rec.source)})
    return rows
