"""The model against published figures, and the seed articles' claims checked.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), sections "Which
counts are published" and "Claims checked". :func:`validate` backs ``python -m ampere validate cluster``
(the DGX B200 SuperPOD counts table, "5 petaFLOPS" per DGX A100, "700 petaFLOPS" per 140-node SuperPOD);
:func:`validation_rows` is the same check as a table; :func:`claims` gives each seed claim a verdict
computed by the package. Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

from typing import Any

from .. import pricing
from .costs import Ownership, break_even_utilization, cloud_offers, throughput_gap_cost
from .fabric import b200_reference, fat_tree
from .node import dgx_a100
from .pod import superpod
from .published import mlperf, selene
from .rows import _label


def validate() -> tuple[str, bool]:
    """Check the model against published figures: the DGX B200 SuperPOD counts table
    [nvidia2025superpodb200], "5 petaFLOPS" per DGX A100 and "700 petaFLOPS" per 140-node SuperPOD
    (both sparse FP16) [nvidia2020superpod]. Returns ``(report, passed)``."""
    lines, ok = [], True
    for r in b200_reference():
        su, nodes = r.scalable_units, r.nodes
        f = fat_tree(nodes, rails=8, su_nodes=32, switch_ports=64, port_bytes_per_s=50e9)
        got = (f.end_ports, f.leaf_switches, f.spine_switches, f.core_switches,
               f.cables["node_leaf"], f.cables["leaf_spine"], f.cables["spine_core"])
        want = (r.gpus, r.leaf_switches, r.spine_switches, r.core_switches, r.node_leaf_cables,
                r.leaf_spine_cables, r.spine_core_cables)
        good = got == want
        ok &= good
        lines.append(f"B200 RA {su:2d} SU: model {got} vs published {want}: {'ok' if good else 'MISMATCH'}")
    dgx = dgx_a100("A100-SXM4-40GB").peak_flops("fp16", sparse=True)
    pod = superpod(140, "A100-SXM4-40GB").peak_flops("fp16", sparse=True)
    for label, value, quoted, unit in (("DGX A100 '5 petaFLOPS'", dgx, 5.0, 1e15),
                                       ("SuperPOD '700 petaFLOPS'", pod, 700.0, 1e15)):
        good = abs(value / unit - quoted) <= 0.01 * quoted
        ok &= good
        lines.append(f"{label}: sparse FP16 {value / unit:.1f} vs {quoted:g}: {'ok' if good else 'MISMATCH'}")
    return "\n".join(lines), ok


def validation_rows() -> list[dict[str, Any]]:
    """The model against the DGX B200 SuperPOD counts table, row by row (section "Which counts are published")."""
    rows = []
    for r in b200_reference():
        f = fat_tree(r.nodes, rails=8, su_nodes=32, switch_ports=64, port_bytes_per_s=50e9)
        got = (f.leaf_switches, f.spine_switches, f.core_switches, f.cables_total)
        want = (r.leaf_switches, r.spine_switches, r.core_switches,
                r.node_leaf_cables + r.leaf_spine_cables + r.spine_core_cables)
        rows.append({"SUs": r.scalable_units, "nodes": r.nodes, "leaf / spine / core (model)": "/".join(map(str, got[:3])),
                     "leaf / spine / core (published)": "/".join(map(str, want[:3])), "cables (model)": got[3],
                     "cables (published)": want[3], "match": got == want})
    return rows


def claims(own: Ownership = Ownership()) -> list[dict[str, str]]:
    """The seed articles' claims about DGX, SuperPOD, Selene, MLPerf and money, each with a verdict
    computed here (section "Claims checked"). Sources by author-year label."""
    small, big = dgx_a100("A100-SXM4-40GB"), dgx_a100("A100-SXM4-80GB")
    pod, pod40 = superpod(140), superpod(140, "A100-SXM4-40GB")
    june, nov = selene()
    bert = next(r for r in mlperf("v0.7", "BERT") if r.params.get("scale") == "max-scale")
    v21 = mlperf("v2.1")[0].figures
    first_to_latest = v21["vs_first_a100_speedup_ratio"] / v21["vs_latest_a100_speedup_ratio"]
    p4d = pricing.quote("seed000-aws-p4d")
    eight80 = [q for q in cloud_offers() if q.gpu == "A100-SXM4-80GB"]
    g10 = throughput_gap_cost(0.10, 1000)
    mw = pod.power_w / 1e6
    s0, s1, s4 = _label("seed000"), _label("seed001"), _label("seed004")
    return [
        {"claim": "DGX A100: 6U, 8 A100, 2 x EPYC 7742 (64 cores), 1 TB RAM, 15 TB NVMe, nine 200 Gb/s ConnectX-6 "
                  "(8 single-port + 1 dual-port)", "source": s0, "verdict": "holds for the 320GB system",
         "evidence": f"{small.name}: {small.host_memory_bytes / 1e12:.0f} TB, {small.data_storage_bytes / 1e12:.0f} TB, "
                     f"{small.nics} adapters; {big.name}: {big.host_memory_bytes / 1e12:.0f} TB, "
                     f"{big.data_storage_bytes / 1e12:.0f} TB, {big.nics}"},
        {"claim": "DGX A100 = 5 petaFLOPS of AI", "source": _label("nvidia2020superpod"), "verdict": "sparse FP16 only",
         "evidence": f"{big.peak_flops('fp16', True) / 1e15:.2f} PF sparse, {big.peak_flops('fp16') / 1e15:.2f} dense"},
        {"claim": "Reference SuperPOD: 140 DGX A100 = 1,120 GPUs, about 700 PFLOPS in FP16", "source": s0,
         "verdict": "holds as sparse FP16",
         "evidence": f"{pod40.gpus} GPUs; {pod40.peak_flops('fp16', True) / 1e15:.1f} PF sparse, "
                     f"{pod40.peak_flops('fp16') / 1e15:.1f} PF dense"},
        {"claim": "Beyond 8 GPUs, NVSwitch is extended as a tree to link several chassis", "source": s0,
         "verdict": "wrong for DGX A100",
         "evidence": f"NVSwitch stays inside the node; nodes are linked by HDR InfiniBand "
                     f"({big.compute_nics} x {big.compute_port_bytes_per_s / 1e9:.0f} GB/s per node)"},
        {"claim": "Selene: 280 DGX A100, 2,240 GPUs, 7th of the TOP500", "source": s0, "verdict": "holds (June 2020)",
         "evidence": f"{june.nodes} nodes, {june.gpus} GPUs, #{june.top500_rank}; {nov.nodes} nodes and "
                     f"#{nov.top500_rank} in November 2020"},
        {"claim": "Selene is the most energy-efficient of its category on the Green500", "source": s0,
         "verdict": "imprecise", "evidence": f"#{june.green500_rank} of the Green500 in June 2020 "
                     f"({june.flops_per_w / 1e9:.1f} GFLOPS/W); a smaller DGX SuperPOD was #1 in November 2020"},
        {"claim": "Selene was assembled in three weeks", "source": s0, "verdict": "NVIDIA's own account",
         "evidence": f"\"in under a month\" ({_label('merritt2020selene')}); no independent source"},
        {"claim": "TOP500 Rpeak of Selene = GPUs x 19.5 TFLOPS", "source": "a common reading", "verdict": "wrong",
         "evidence": f"Rpeak {nov.rpeak_flops / 1e15:.2f} PF < {nov.gpu_fp64_peak_flops() / 1e15:.1f} PF; HPL reached "
                     f"{100 * nov.fraction_of_gpu_peak():.1f} % of the GPU peak"},
        {"claim": "A 140-node SuperPOD draws several megawatts", "source": s0, "verdict": "overstated",
         "evidence": f"{pod.node_power_w / 1e3:.0f} kW of nodes at maximum; about {mw:.2f} MW IT with the fabric, "
                     f"{mw * own.pue:.2f} MW at PUE {own.pue:g}"},
        {"claim": "2,048 A100 (an extended SuperPOD) trained BERT in under a minute", "source": s0, "verdict": "holds",
         "evidence": f"{bert.figures['time_minutes']:g} min on {bert.params['nodes']} nodes = "
                     f"{bert.params['nodes'] / 140:.2f} x the 140-node pod (MLPerf v0.7)"},
        {"claim": "The A100 gained up to 2.5x between MLPerf v1.0 and v2.1 with no hardware change", "source": s0,
         "verdict": "not supported",
         "evidence": f"NVIDIA's figures compare with v0.7 (A100 40GB): the latest A100 of v2.1 was at most about "
                     f"{first_to_latest:.1f}x the first A100 submission, 'up to' over all benchmarks"},
        {"claim": "Renting 8 A100 80GB costs about 35-40 USD per hour (2023)", "source": s0, "verdict": "holds as quoted",
         "evidence": ", ".join(f"{q.instance} {q.low_usd_per_h:.2f}" for q in eight80) + " USD per hour (the seed's table)"},
        {"claim": "Renting is infinitely cheaper than buying and amortising a DGX", "source": s0,
         "verdict": "depends on utilisation",
         "evidence": f"owning is cheaper above about {100 * break_even_utilization(p4d.usd_per_gpu_hour, own):.0f} % "
                     "utilisation under the stated assumptions"},
        {"claim": "A DGX A100 costs about 200,000 USD", "source": s1, "verdict": "holds",
         "evidence": f"{small.list_price_usd:,.0f} USD at launch ({_label('anandtech2020ampere')})"},
        {"claim": "On 1,000 accelerators a 10 % gap is tens of hours per week, hundreds of thousands of USD per year",
         "source": s4, "verdict": "understated",
         "evidence": f"{g10.lost_gpu_hours_per_week:,.0f} GPU-hours ({g10.lost_cluster_hours_per_week:.1f} cluster-hours) "
                     f"per week; {g10.usd_per_year / 1e6:.1f} M USD per year at the p4d price"},
    ]
