"""The chapter's Markdown tables, one function per table; sources by author-year label, never a bib key.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb): the node ("One
box", "Peaks of one node", "Bandwidth inside and outside the box"), the pod ("From 20 to 560 nodes", "1,120
GPUs and 700 petaFLOPS"), Selene, the all-reduce, the gap and MLPerf. Pure Python: no torch, no matplotlib
(:mod:`ampere.views` gives the labels).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .. import pricing
from .allreduce import all_reduce_scaling
from .costs import throughput_gap_cost
from .node import DGXNode
from .pod import SuperPOD, scaling_table
from .published import mlperf, selene


def _label(key: str) -> str:
    from .. import views

    return views.cite_label(key)


def node_rows(*nodes: DGXNode) -> list[dict[str, str]]:
    """The DGX A100 configurations side by side (section "One box"); sources by author-year label."""
    if not nodes or not all(isinstance(n, DGXNode) for n in nodes):
        raise TypeError(f"nodes must be DGXNode values (from dgx_a100()), got {nodes!r}")
    items = [
        ("GPUs", lambda n: f"{n.gpus} x {n.gpu.name}"),
        ("GPU memory", lambda n: f"{n.gpu_memory_bytes / 1e9:.0f} GB"),
        ("NVSwitch (2nd generation)", lambda n: f"{n.nvswitches}"),
        ("CPUs", lambda n: f"{n.cpu_sockets} x {n.cpu_model} ({n.cpu_cores} cores)"),
        ("host memory", lambda n: f"{n.host_memory_bytes / 1e12:.0f} TB"),
        ("NVMe (OS + data)", lambda n: f"{n.os_storage_bytes / 1e12:.2f} + {n.data_storage_bytes / 1e12:.0f} TB"),
        ("network adapters", lambda n: f"{n.compute_nics} x 1-port HDR + {n.other_nic_ports // 2} x 2-port = {n.nics}"),
        ("maximum power", lambda n: f"{n.max_power_w / 1e3:.1f} kW"),
        ("height", lambda n: f"{n.rack_units}U"),
        ("source", lambda n: _label(n.source("host_memory_bytes"))),
    ]
    return [{"": label, **{n.name: get(n) for n in nodes}} for label, get in items]


def peak_rows(node: DGXNode) -> list[dict[str, str]]:
    """Dense and sparse peaks of one node in PFLOP/s (section "Peaks of one node")."""
    rows = []
    for prec in ("fp64", "fp64_tc", "tf32", "bf16", "int8"):
        rows.append({"precision": prec, "dense (P(FL)OP/s)": f"{node.peak_flops(prec) / 1e15:.3f}",
                     "sparse (P(FL)OP/s)": f"{node.peak_flops(prec, sparse=True) / 1e15:.3f}"
                     if node.gpu.supports(prec, sparse=True) else ""})
    return rows


def bandwidth_rows(node: DGXNode) -> list[dict[str, str]]:
    """Inside and outside the box, per direction (section "Bandwidth inside and outside the box")."""
    return [
        {"link": "NVLink per GPU, line rate", "bandwidth": f"{node.nvlink_bytes_per_s_per_gpu / 1e9:.0f} GB/s per direction"},
        {"link": "NVLink per GPU, usable by NCCL",
         "bandwidth": f"{node.nvlink_effective_bytes_per_s_per_gpu / 1e9:.0f} GB/s per direction"},
        {"link": "NVSwitch fabric, all GPUs, both directions",
         "bandwidth": f"{node.nvswitch_fabric_bytes_per_s_bidirectional / 1e12:.1f} TB/s"},
        {"link": "InfiniBand per GPU", "bandwidth": f"{node.inter_node_bytes_per_s_per_gpu / 1e9:.0f} GB/s per direction"},
        {"link": f"InfiniBand per node ({node.compute_nics} x HDR)",
         "bandwidth": f"{node.inter_node_bytes_per_s / 1e9:.0f} GB/s per direction"},
        {"link": "ratio inside / outside, per GPU", "bandwidth": f"{node.intra_to_inter_ratio:.0f} x"},
    ]


def scaling_rows(node_counts: Iterable[int] = (20, 40, 100, 120, 140, 280, 560)) -> list[dict[str, Any]]:
    """:func:`scaling_table` formatted for the page."""
    return [{"nodes": r["nodes"], "levels": r["levels"], "leaf": r["leaf"], "spine": r["spine"],
             "core": r["core"], "switches": r["switches"], "bound": r["lower_bound"], "cables": r["cables"],
             "bisection (TB/s)": f"{r['bisection_bytes_per_s'] / 1e12:.1f}", "power (kW)": f"{r['power_w'] / 1e3:.0f}"}
            for r in scaling_table(node_counts)]


def pod_peak_rows(pod: SuperPOD) -> list[dict[str, str]]:
    """Peaks of a pod in PFLOP/s (section "1,120 GPUs and 700 petaFLOPS")."""
    return [{"precision": prec, "kind": "sparse" if sparse else "dense",
             "PFLOP/s": f"{pod.peak_flops(prec, sparse) / 1e15:.1f}"}
            for prec, sparse in (("fp16", True), ("fp16", False), ("tf32", False), ("fp64_tc", False), ("fp64", False))]


def selene_rows() -> list[dict[str, Any]]:
    """Selene's TOP500 listings as the lists print them (section "Selene on the TOP500"); Rmax against the
    GPUs' FP64 peak is the figure and table of :func:`show_hpl`. A figure the list entry does not give is
    a dash."""
    rows = []
    for e in selene():
        rows.append({"list": e.list_name, "nodes": e.nodes, "GPUs": e.gpus, "cores": f"{e.reported_cores:,}",
                     "Rmax (PFLOP/s)": f"{e.rmax_flops / 1e15:.2f}",
                     "Rpeak (PFLOP/s)": "–" if e.rpeak_flops is None else f"{e.rpeak_flops / 1e15:.2f}",
                     "Rmax / Rpeak": "–" if e.hpl_efficiency is None else f"{100 * e.hpl_efficiency:.1f} %",
                     "GFLOPS/W": f"{e.flops_per_w / 1e9:.2f}", "source": _label(e.source)})
    return rows


def pod_all_reduce_rows(nodes: int = 140) -> list[dict[str, str]]:
    """:func:`all_reduce_scaling` at one node count, for the page."""
    return [{"model": r["model"], "gradient (FP16)": f"{r['size_bytes'] / 1e9:.2f} GB",
             "time, ring (ms)": f"{1e3 * r['total_s']:.1f}", "inter-node share": f"{100 * r['inter_s'] / r['total_s']:.0f} %",
             "busbw (GB/s)": f"{r['busbw_bytes_per_s'] / 1e9:.0f}"} for r in all_reduce_scaling([nodes])]


def gap_rows(gaps: Sequence[float] = (0.08, 0.10, 0.12), gpus: int = 1000) -> list[dict[str, str]]:
    """The reference-architecture gap calculator at the p4d price of 2023 and the 2026 marketplace range
    (section "The reference-architecture gap")."""
    p4d = pricing.quote("seed000-aws-p4d")
    a100 = pricing.quote("seed003-a100-80gb")
    prices = [(f"p4d {p4d.date}, {p4d.usd_per_gpu_hour:.2f}", p4d.usd_per_gpu_hour),
              (f"marketplace {a100.date}, {a100.low:.2f}", a100.low),
              (f"marketplace {a100.date}, {a100.high:.2f}", a100.high)]
    rows = []
    for gap in gaps:
        for label, price in prices:
            g = throughput_gap_cost(gap, gpus=gpus, usd_per_gpu_hour=price)
            rows.append({"gap": f"{100 * gap:.0f}\u00a0%", "USD per GPU-hour": label,
                         "lost GPU-hours / week": f"{g.lost_gpu_hours_per_week:,.0f}",
                         "cluster-hours / week": f"{g.lost_cluster_hours_per_week:.1f}",
                         "USD / week": f"{g.usd_per_week:,.0f}", "USD / year": f"{g.usd_per_year:,.0f}",
                         "longer runs": f"+{100 * g.extra_time_fraction:.1f} %"})
    return rows


def mlperf_rows() -> list[dict[str, str]]:
    """The MLPerf Training figures of ``ampere/data``, one row per figure (section "MLPerf")."""
    rows = []
    for r in mlperf():
        p = r.params
        for name, value in r.figures.items():
            if name.endswith("_ratio"):  # NVIDIA's round-to-round gains, all "up to" figures
                label, unit = name[: -len("_ratio")].replace("_", " ") + " (up to)", "x"
            else:
                base, unit = name.rsplit("_", 1)
                label = base.replace("_", " ")
            label = label.replace("a100", "A100").replace("dlrm", "DLRM")
            # a benchmark's row names the benchmark; its figure, unless it is the time to train, goes with the unit
            what = p.get("benchmark") or label
            unit_text = f"{label}-{unit}" if p.get("benchmark") and label != "time" else unit
            scale = p.get("scale") or (f"{p['gpus']} GPUs" if "gpus" in p else
                                       f"against {p['versus']}" if "versus" in p and unit == "x" else "")
            rows.append({"round": p.get("round", ""), "what": what, "scale": scale, "GPU": r.gpu,
                         "value": f"{value:g} {unit_text}", "source": f"{_label(r.source)}, {r.where}"})
    return rows
