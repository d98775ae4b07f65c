"""The chapter's Markdown tables, one function per table; sources by author-year label, never a bib key.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb): the node ("One
box", "Peaks of one node", "Bandwidth inside and outside the box"), the pod ("From 20 to 2,000 nodes",
"Four generations of SuperPOD", "Bisection bandwidth of each design", "Oversubscription", "1,120 GPUs and
700 petaFLOPS"), Selene, the all-reduce, the gap and MLPerf. Pure Python: no torch, no matplotlib
(:mod:`ampere.views` gives the labels).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from .. import pricing
from .allreduce import all_reduce_checks, all_reduce_scaling
from .costs import cloud_offer, round_sig, throughput_gap_cost
from .node import DGXNode
from .oversubscription import tapers
from .pod import SuperPOD, scaling_table
from .published import mlperf, selene
from .references import design_limits, reference_designs


def _label(key: str) -> str:
    from .. import views

    return views.cite_label(key)


def _millions(usd: float) -> str:
    """Two significant figures, in millions: 0.67, 2.9, 36."""
    v = round_sig(usd) / 1e6
    return f"{v:.2f}" if v < 1 else f"{v:.1f}" if v < 10 else f"{v:.0f}"


def node_rows(*nodes: DGXNode) -> list[dict[str, str]]:
    """The DGX A100 configurations side by side (section "One box"); sources by author-year label."""
    if not nodes or not all(isinstance(n, DGXNode) for n in nodes):
        raise TypeError(f"nodes must be DGXNode values (from dgx_a100()), got {nodes!r}")
    items = [
        ("GPUs", lambda n: f"{n.gpus} x {n.gpu.name}"),
        ("GPU memory (physical)", lambda n: f"{n.gpu_memory_bytes / 2**30:.0f} GiB = {n.gpus} x "
                                            f"{n.gpu.memory_bytes / 2**30:.0f} GiB"),
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


def scaling_rows(node_counts: Iterable[int] = (20, 40, 100, 120, 140, 280, 560, 800, 820, 2000)
                 ) -> list[dict[str, Any]]:
    """:func:`scaling_table` formatted for the page (section "From 20 to 2,000 nodes"). "SU" gives the SUs
    that hold nodes and, in brackets, the SUs the fabric is built for where no equal-multiplicity wiring
    exists for the exact count. Two levels where "core" is 0; power is in the section "The power of a pod"."""
    return [{"nodes": r["nodes"], "SU": str(r["su"]) if r["su"] == r["su_built"] else f"{r['su']} ({r['su_built']})",
             "leaf": r["leaf"], "spine": r["spine"], "core": r["core"],
             "switches": r["switches"], "bound": r["lower_bound"], "cables": f"{r['cables']:,}",
             "bisection (TB/s)": f"{r['bisection_bytes_per_s'] / 1e12:.1f}"}
            for r in scaling_table(node_counts)]


def pod_peak_rows(pod: SuperPOD) -> list[dict[str, str]]:
    """Peaks of a pod in PFLOP/s (section "1,120 GPUs and 700 petaFLOPS")."""
    return [{"precision": prec, "kind": "sparse" if sparse else "dense",
             "PFLOP/s": f"{pod.peak_flops(prec, sparse) / 1e15:.1f}"}
            for prec, sparse in (("fp16", True), ("fp16", False), ("tf32", False), ("fp64_tc", False), ("fp64", False))]


def selene_rows() -> list[dict[str, Any]]:
    """Selene's TOP500 listings (section "Selene on the TOP500"), narrow enough for the page: the list, nodes,
    GPUs, Rmax, Rpeak, their ratio and GFLOPS/W; Rmax against the GPUs' FP64 peak is the figure and table
    of :func:`show_hpl`. The June 2020 list also prints an Rpeak and a power, which the book does not
    record (its efficiency comes from the Green500): those cells say "not used"."""
    rows = []
    for e in selene():
        rows.append({"list": e.list_name.replace("TOP500 ", ""), "nodes": e.nodes, "GPUs": f"{e.gpus:,}",
                     "Rmax (PF)": f"{e.rmax_flops / 1e15:.2f}",
                     "Rpeak (PF)": "not used" if e.rpeak_flops is None else f"{e.rpeak_flops / 1e15:.2f}",
                     "Rmax / Rpeak": "not used" if e.hpl_efficiency is None else f"{100 * e.hpl_efficiency:.1f} %",
                     "GFLOPS/W": f"{e.flops_per_w / 1e9:.2f}", "source": _label(e.source)})
    return rows


def pod_all_reduce_rows(nodes: int = 140) -> list[dict[str, str]]:
    """:func:`all_reduce_scaling` at one node count, for the page: NCCL's rings (time, latency share,
    busbw) and the phases in turn."""
    return [{"model": r["model"], "gradient (FP16)": f"{r['size_bytes'] / 1e9:.2f} GB",
             "NCCL rings (ms)": f"{1e3 * r['total_s']:.1f}",
             "latency share": f"{100 * r['latency_s'] / r['total_s']:.0f} %",
             "busbw (GB/s)": f"{r['busbw_bytes_per_s'] / 1e9:.0f}",
             "phases in turn (ms)": f"{1e3 * r['serial_s']:.1f}"} for r in all_reduce_scaling([nodes])]


def all_reduce_check_rows() -> list[dict[str, str]]:
    """:func:`all_reduce_checks` for the page: the model's busbw (NCCL's rings; the phases in turn) beside
    the published multi-node figures, with their ratio and source."""
    rows = []
    for r in all_reduce_checks():
        nodes = f"{r['nodes']} nodes" + ("" if r["nodes_given"] else " (assumed)")
        rows.append({"configuration": f"{nodes}, {r['adapters']} x {r['adapter_gbit_per_s']} Gb/s",
                     "rings (GB/s)": f"{r['ring_busbw_bytes_per_s'] / 1e9:.0f}",
                     "phases in turn (GB/s)": f"{r['serial_busbw_bytes_per_s'] / 1e9:.0f}",
                     "published (GB/s)": f"{r['published_bytes_per_s'] / 1e9:.0f}",
                     "published / rings": f"{r['ring_ratio']:.2f}", "source": _label(r["record"].source)})
    return rows


def gap_rows(gaps: Sequence[float] = (0.08, 0.10, 0.12), gpus: int = 1000) -> list[dict[str, str]]:
    """The reference-architecture gap calculator at the p4d price of 2023 and the 2026 marketplace range
    (section "The reference-architecture gap"). Dollars are rounded to two significant figures: the gap
    (8-12 %) and the prices are known to about two figures, not to the dollar."""
    p4d = cloud_offer("p4d.24xlarge")
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
                         "USD / week": f"{round_sig(g.usd_per_week):,.0f}",
                         "USD / year": f"{_millions(g.usd_per_year)} million",
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


def design_rows() -> list[dict[str, str]]:
    """The SuperPOD reference architectures as fat-tree parameters (section "Four generations of SuperPOD")."""
    rows = []
    for d in reference_designs():
        rows.append({"system": d.system, "nodes per SU": str(d.su_nodes), "rails": str(d.rails),
                     "switch": d.switch, "radix": str(d.switch_ports),
                     "GB/s per port": f"{d.port_bytes_per_s / 1e9:.0f}",
                     "documented": f"{d.reference_nodes} nodes", "source": _label(d.source)})
    return rows


def limit_rows() -> list[dict[str, str]]:
    """How far each design's switches go (section "How big can a fat tree get?"): nodes (GPUs)."""
    rows = []
    for d in reference_designs():
        lim = design_limits(d)
        g = d.gpus_per_node

        def both(n: int) -> str:
            return f"{n:,} ({n * g:,})" if n else "–"

        rows.append({"design": d.system, "radix k": str(d.switch_ports), "two levels": both(lim["two_level_nodes"]),
                     "three levels (= k³/4 ports)": both(lim["three_level_nodes"]),
                     "largest published table row": both(lim["largest_published_nodes"]),
                     "documented size": both(lim["reference_nodes"])})
    return rows


def bisection_rows() -> list[dict[str, str]]:
    """Each design at its documented size: switches, cables and bisection bandwidth (section "Bisection")."""
    rows = []
    for d in reference_designs():
        f = d.fabric()
        rows.append({"design": f"{d.system}, {f.nodes} nodes", "GPUs": f"{f.end_ports:,}", "levels": str(f.levels),
                     "leaf / spine / core": f"{f.leaf_switches} / {f.spine_switches} / {f.core_switches}",
                     "cables": f"{f.cables_total:,}",
                     "bisection (TB/s per direction)": f"{f.bisection_bytes_per_s / 1e12:.1f}",
                     "per GPU of a half (GB/s)": f"{f.bisection_bytes_per_s / (f.end_ports / 2) / 1e9:.0f}"})
    return rows


def taper_rows(nodes: int = 140) -> list[dict[str, str]]:
    """A pod's non-blocking tree beside 2:1 and 4:1 tapered ones (section "Oversubscription")."""
    rows = []
    for t in tapers(nodes):
        f = t.fabric
        rows.append({"leaf down : up": f"{f.su_nodes} : {f.leaf_up_ports}", "spine / core": f"{f.spine_switches} / {f.core_switches}",
                     "switches": str(f.switches), "cables": f"{f.cables_total:,}",
                     "bisection (TB/s)": f"{f.bisection_bytes_per_s / 1e12:.1f}",
                     "ring all-reduce": f"{t.slowdowns['rail_ring']:.2f}x",
                     "all-to-all": f"{t.slowdowns['all_to_all']:.2f}x",
                     "SU permutation": f"{t.slowdowns['su_permutation']:.2f}x"})
    return rows
