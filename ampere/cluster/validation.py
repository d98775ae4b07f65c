"""The model against published figures, and the seed articles' claims checked.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), sections "Which
counts are published" and "Claims checked". :func:`validate` backs ``python -m ampere validate cluster``
(every published SuperPOD component table -- DGX H100, DGX B200, DGX B300 --, "5 petaFLOPS" per DGX A100,
"700 petaFLOPS" per 140-node SuperPOD); :func:`validation_rows` is the same check as a table;
:func:`claims` gives each seed claim a verdict computed by the package. Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

from typing import Any

from .fabric import two_level_max_nodes
from .costs import (Ownership, break_even, cloud_offer, cloud_offers, round_sig, throughput_gap_cost,
                    training_time_s)
from .node import dgx_a100
from .references import check_all, compare_counts, reference_counts, reference_design
from .pod import superpod
from .published import mlperf, selene
from .rows import _label


def validate() -> tuple[str, bool]:
    """Check the model against published figures: every row of the SuperPOD component tables
    [nvidia2023superpodh100, nvidia2025superpodb200, nvidiasuperpodb300xdr], "5 petaFLOPS" per DGX A100
    and "700 petaFLOPS" per 140-node SuperPOD (both sparse FP16) [nvidia2020superpod]. Returns
    ``(report, passed)``."""
    lines, ok = check_all()
    dgx = dgx_a100("A100-SXM4-40GB").peak_flops("fp16", sparse=True)
    pod = superpod(140, "A100-SXM4-40GB").peak_flops("fp16", sparse=True)
    for label, value, quoted, unit in (("DGX A100 '5 petaFLOPS'", dgx, 5.0, 1e15),
                                       ("SuperPOD '700 petaFLOPS'", pod, 700.0, 1e15)):
        good = abs(value / unit - quoted) <= 0.01 * quoted
        ok &= good
        lines.append(f"{label}: sparse FP16 {value / unit:.1f} vs {quoted:g}: {'ok' if good else 'MISMATCH'}")
    return "\n".join(lines), ok


def _triple(values: tuple[int | None, ...]) -> str:
    return " / ".join("–" if v is None else str(v) for v in values)


def validation_rows() -> list[dict[str, Any]]:
    """The model against every published component table, row by row (section "Which counts are
    published"): switches (leaf / spine / core) and cables, model and table; a dash where the table has no
    column; "agrees" notes "(UFM)" where the node-leaf column also counts the fabric manager's cables and
    "(GPU misprint)" where the table's GPU count contradicts its own row."""
    rows = []
    for r in reference_counts():
        c = compare_counts(r)
        f = c["fields"]
        model = (f["leaf_switches"][0], f["spine_switches"][0], f["core_switches"][0] if "core_switches" in f else 0)
        cab_model = sum(v[0] for k, v in f.items() if k.endswith("_cables"))
        cab_pub = sum(v[1] for k, v in f.items() if k.endswith("_cables"))
        rows.append({"system": reference_design(r.design).system, "SUs": r.scalable_units, "nodes": r.nodes,
                     "switches, model": _triple(model),
                     "switches, table": _triple((r.leaf_switches, r.spine_switches, r.core_switches)),
                     "cables, model": f"{cab_model:,}", "cables, table": f"{cab_pub:,}",
                     "agrees": ("yes" if c["match"] else "no") + (
                         " (UFM)" if any("UFM" in n for n in c["notes"]) else
                         " (GPU misprint)" if not c["gpus_consistent"] else "")})
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
    p4d = cloud_offer("p4d.24xlarge")
    eight80 = [q for q in cloud_offers() if q.gpu == "A100-SXM4-80GB"]
    lo80, hi80 = min(q.low_usd_per_h for q in eight80), max(q.high_usd_per_h for q in eight80)
    tpu_bert = next(r for r in mlperf("v0.7", "BERT") if r.params.get("status") == "research")
    g10 = throughput_gap_cost(0.10, 1000)
    gpt3_days = training_time_s(175e9, 300e9, 1024, 140e12) / 86400  # the Megatron-LM paper's own example
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
        {"claim": "The SuperPOD links its DGX A100 by 200 Gb/s HDR InfiniBand in a fat tree", "source": s0,
         "verdict": "holds; three switch levels", "evidence":
             f"{pod.fabric.end_ports:,} compute ports > {two_level_max_nodes() * 8} = 40²/2, the two-level limit "
             f"of 40-port switches: {pod.leaf_switches} leaf, {pod.spine_switches} spine, {pod.core_switches} core "
             "switches in the model"},
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
         "evidence": f"{pod.node_power_w / 1e3:.0f} kW of nodes at maximum; about {round_sig(mw):.2g} MW IT with the "
                     f"fabric, {round_sig(mw * own.pue):.2g} MW at PUE {own.pue:g}"},
        {"claim": "GPT-3 175B was trained in a few weeks on Selene and equivalent SuperPODs", "source": s0,
         "verdict": "wrong", "evidence": f"GPT-3 was trained on V100 GPUs of a Microsoft cluster "
                     f"({_label('brown2020gpt3')}, section 2.3); on 1,024 A100 at 140 TFLOP/s the same training "
                     f"would take about {gpt3_days:.0f} days ({_label('narayanan2021megatron')})"},
        {"claim": "Megatron-LM's trillion-parameter run used 3,072 A100 40GB in 384 DGX A100", "source": s0,
         "verdict": "80 GB, not 40 GB", "evidence": f"3,072 / 8 = {3072 // big.gpus} nodes, of "
                     f"{big.name.split()[-1]} DGX A100 (8 x {big.gpu.name}) on Selene "
                     f"({_label('narayanan2021megatron')}, section 5)"},
        {"claim": "In MLPerf v0.7 the A100 took first place per accelerator on all eight benchmarks", "source": s0,
         "verdict": "holds", "evidence": f"eight per-chip records in the commercially available category "
                                         f"({_label('nvidia2020mlperfblog')})"},
        {"claim": "Google's TPU v3 led six of the eight benchmarks at system scale; the TPU v4 came only the "
                  "following year", "source": s0, "verdict": "half wrong",
         "evidence": f"Google's research-category submissions set six records ({_label('kumar2020googlemlperf')}), "
                     f"with a TPU v3 supercomputer and the TPU v4, which the same round lists "
                     f"({_label('mlcommons2020training')}, Google/systems/tpu-v4-*.json)"},
        {"claim": "2,048 A100 (an extended SuperPOD) trained BERT in under a minute, a record at the time",
         "source": s0, "verdict": "a record of its category only",
         "evidence": f"{bert.figures['time_minutes']:g} min on {bert.params['nodes']} nodes = "
                     f"{bert.params['nodes'] / 140:.2f} x the 140-node pod, the fastest commercially available "
                     f"result; Google's research TPU v3 system took {tpu_bert.figures['time_minutes']:.2f} min "
                     f"({_label(tpu_bert.source)})"},
        {"claim": "The A100 gained up to 2.5x between MLPerf v1.0 and v2.1 with no hardware change", "source": s0,
         "verdict": "not supported",
         "evidence": f"NVIDIA's figures compare with v0.7 (A100 40GB): the latest A100 of v2.1 was at most about "
                     f"{first_to_latest:.1f}x the first A100 submission, 'up to' over all benchmarks"},
        {"claim": "Renting 8 A100 80GB costs about 35-40 USD per hour (2023)", "source": s0,
         "verdict": ("holds as quoted" if 35 <= lo80 and hi80 <= 40 else f"roughly: {lo80:.1f}-{hi80:.1f} USD"),
         "evidence": ", ".join(f"{q.instance} {q.low_usd_per_h:.2f}" for q in eight80) + " USD per hour (the seed's table)"},
        {"claim": "Renting is infinitely cheaper than buying and amortising a DGX", "source": s0,
         "verdict": "depends on utilisation",
         "evidence": f"at the 2023 p4d price, {break_even(p4d.usd_per_gpu_hour, own).verdict}, under the stated "
                     "assumptions"},
        {"claim": "A DGX A100 costs about 200,000 USD", "source": s1, "verdict": "holds",
         "evidence": f"{small.list_price_usd:,.0f} USD at launch ({_label('anandtech2020ampere')})"},
        {"claim": "On 1,000 accelerators a 10 % gap is tens of hours per week, hundreds of thousands of USD per year",
         "source": s4, "verdict": "understated",
         "evidence": f"{g10.lost_gpu_hours_per_week:,.0f} GPU-hours ({g10.lost_cluster_hours_per_week:.1f} cluster-hours) "
                     f"per week; about {round_sig(g10.usd_per_year) / 1e6:.1f} million USD per year at the p4d price"},
    ]
