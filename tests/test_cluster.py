"""Tests of ampere.cluster (chapter: DGX A100 and the SuperPOD -- from one box to Selene)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from ampere import cluster as cl
from ampere import collectives, fabrics, results
from ampere import specs


# --- helpers ---------------------------------------------------------------------------------------------

def _tier(name: str) -> str:
    return "".join(ch for ch in name.split(".")[0] if ch.isalpha())


def _port_use(fabric: cl.Fabric) -> dict[str, dict[str, int]]:
    """Ports used on each switch, split into down and up, counted from the explicit wiring."""
    use: dict[str, dict[str, int]] = defaultdict(lambda: {"down": 0, "up": 0})
    for low, high, n in fabric.wiring():
        if _tier(low) != "node":
            use[low]["up"] += n
        use[high]["down"] += n
    return use


def _max_flow(fabric: cl.Fabric, sources: list[str], sinks: list[str]) -> int:
    """Max-flow (in cables) from the node ports ``sources`` to ``sinks``; every cable carries 1."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    index: dict[str, int] = {"S": 0, "T": 1}
    def idx(name: str) -> int:
        return index.setdefault(name, len(index))
    rows, cols, caps = [], [], []
    for low, high, n in fabric.wiring():
        a, b = idx(low), idx(high)
        rows += [a, b]
        cols += [b, a]
        caps += [n, n]
    big = 10**6
    for s in sources:
        rows.append(0), cols.append(idx(s)), caps.append(big)
    for t in sinks:
        rows.append(idx(t)), cols.append(1), caps.append(big)
    size = len(index)
    graph = csr_matrix((np.array(caps, dtype=np.int32), (rows, cols)), shape=(size, size))
    graph.sum_duplicates()
    return int(maximum_flow(graph, 0, 1).flow_value)


# --- the DGX A100 node -------------------------------------------------------------------------------------

@pytest.mark.parametrize("gpu", ["A100-SXM4-40GB", "A100-SXM4-80GB"])
def test_node_peaks_are_eight_gpus(gpu):
    node = cl.dgx_a100(gpu)
    spec = specs.get(gpu)
    for prec in ("fp64", "fp64_tc", "tf32", "fp16", "bf16", "int8"):
        assert node.peak_flops(prec) == pytest.approx(8 * spec.peak_flops(prec))
    # "5 petaFLOPS" is sparse FP16; dense is half of it
    assert node.peak_flops("fp16", sparse=True) / 1e15 == pytest.approx(4.99, abs=0.01)
    assert node.peak_flops("fp16") / 1e15 == pytest.approx(2.495, abs=0.001)
    with pytest.raises(ValueError, match="sparse"):
        node.peak_flops("fp64_tc", sparse=True)


def test_node_configurations_differ_by_memory_and_storage_only():
    small, big = cl.dgx_a100("A100-SXM4-40GB"), cl.dgx_a100("A100-SXM4-80GB")
    assert (small.name, big.name) == ("DGX A100 320GB", "DGX A100 640GB")
    assert small.gpu_memory_bytes == 320e9 and big.gpu_memory_bytes == 640e9
    assert (small.host_memory_bytes, big.host_memory_bytes) == (1e12, 2e12)
    assert (small.data_storage_bytes, big.data_storage_bytes) == (15e12, 30e12)
    assert small.nics == 9 and big.nics == 10  # the seed's "nine NICs" is the 320GB system
    for attr in ("gpus", "nvswitches", "cpu_cores", "compute_nics", "max_power_w"):
        assert getattr(small, attr) == getattr(big, attr)
    assert small.cpu_cores == 128


def test_node_bandwidths():
    node = cl.dgx_a100()
    assert node.nvlink_bytes_per_s_per_gpu == 300e9
    assert node.nvswitch_fabric_bytes_per_s_bidirectional == 4.8e12
    assert node.nvlinks_per_gpu_per_nvswitch == 2
    assert node.inter_node_bytes_per_s == 200e9
    assert node.inter_node_bytes_per_s_per_gpu == 25e9
    assert node.intra_to_inter_ratio == pytest.approx(12.0)
    assert node.nvlink_effective_bytes_per_s_per_gpu == pytest.approx(240e9)
    assert node.gpu_power_fraction == pytest.approx(3200 / 6500)


@pytest.mark.parametrize("bad", ["H100-SXM5-80GB", "A100-PCIE-40GB", "nonsense"])
def test_node_refuses_other_gpus(bad):
    with pytest.raises(ValueError, match="gpu="):
        cl.dgx_a100(bad)


def test_node_sources_are_keys():
    node = cl.dgx_a100("A100-SXM4-80GB")
    assert node.source("host_memory_bytes") == "nvidia2020dgxa100ds"
    assert node.source("nvswitches") == "nvidia2020dgxa100wp"
    assert cl.dgx_a100("A100-SXM4-40GB").source("list_price_usd") == "anandtech2020ampere"
    with pytest.raises(ValueError, match="field_name"):
        node.source("colour")


# --- the fabric: ports ---------------------------------------------------------------------------------------

SIZES = [1, 7, 20, 21, 40, 60, 100, 101, 120, 140, 160, 280, 333, 560]


@pytest.mark.parametrize("nodes", SIZES)
def test_every_port_is_accounted_for(nodes):
    f = cl.fat_tree(nodes)
    k = f.switch_ports
    ports = f.ports()
    for tier, p in ports.items():
        assert p["total"] == p["down"] + p["up"] + p["spare"], tier
        assert p["spare"] >= 0, tier
    assert ports["leaf"]["total"] == f.leaf_switches * k
    assert ports["spine"]["total"] == f.spine_switches * k
    assert ports["core"]["total"] == f.core_switches * k
    # the explicit wiring uses exactly the ports the counts say, and no switch more than it has
    use = _port_use(f)
    by_tier: dict[str, dict[str, int]] = defaultdict(lambda: {"down": 0, "up": 0})
    for name, u in use.items():
        assert u["down"] + u["up"] <= k, name
        by_tier[_tier(name)]["down"] += u["down"]
        by_tier[_tier(name)]["up"] += u["up"]
    for tier in ("leaf", "spine", "core"):
        assert by_tier[tier]["down"] == ports[tier]["down"], tier
        assert by_tier[tier]["up"] == ports[tier]["up"], tier
    assert sum(1 for n in use if _tier(n) == "leaf") == f.leaf_switches
    assert sum(1 for n in use if _tier(n) == "spine") == f.spine_switches
    assert sum(1 for n in use if _tier(n) == "core") == f.core_switches
    # every node port is cabled exactly once; cable totals agree with the wiring
    node_ports = [low for low, _, _ in f.wiring() if _tier(low) == "node"]
    assert len(node_ports) == len(set(node_ports)) == f.end_ports == nodes * 8
    per_tier = defaultdict(int)
    for low, high, n in f.wiring():
        per_tier[f"{_tier(low)}_{_tier(high)}"] += n
    assert per_tier["node_leaf"] == f.cables["node_leaf"]
    assert per_tier["leaf_spine"] == f.cables["leaf_spine"]
    assert per_tier.get("spine_core", 0) == f.cables["spine_core"]
    assert f.transceivers == 2 * f.cables_total


@pytest.mark.parametrize("nodes", SIZES)
def test_non_blocking_at_every_tier(nodes):
    f = cl.fat_tree(nodes)
    use = _port_use(f)
    for name, u in use.items():
        tier = _tier(name)
        if tier == "leaf":
            assert u["up"] == f.leaf_up_ports >= u["down"], name  # oversubscription 1:1 or better
        elif tier == "spine" and f.levels == 3:
            assert u["up"] == u["down"], name
        elif tier == "spine":
            assert u["up"] == 0
    # equal multiplicities: every leaf reaches every spine of its pod with the same number of cables,
    # every spine every core of its group: the Clos condition that makes the tree rearrangeably non-blocking
    bundles = defaultdict(set)
    for low, high, n in f.wiring():
        if _tier(low) == "leaf":
            bundles[low].add((high, n))
    for leaf, b in bundles.items():
        assert len(b) == f.spines_per_pod, leaf
        assert {n for _, n in b} == {f.leaf_spine_links}, leaf
    if f.levels == 3:
        up = defaultdict(set)
        for low, high, n in f.wiring():
            if _tier(low) == "spine":
                up[low].add((high, n))
        for spine, b in up.items():
            assert len(b) == f.cores_per_group, spine
            assert len({n for _, n in b}) == 1, spine


@pytest.mark.parametrize("nodes", [20, 40, 120, 140])
def test_bisection_by_max_flow(nodes):
    f = cl.fat_tree(nodes)
    ports = [f"node{i}.{r}" for i in range(nodes) for r in range(8)]
    half = len(ports) // 2
    assert _max_flow(f, ports[:half], ports[half:]) == half  # first half of the nodes vs second
    odd = [p for p in ports if int(p[4:].split(".")[0]) % 2]
    even = [p for p in ports if int(p[4:].split(".")[0]) % 2 == 0]
    assert _max_flow(f, odd, even) == len(odd)
    assert f.bisection_bytes_per_s == half * 25e9


def test_leaf_to_leaf_full_rate_across_pods():
    f = cl.fat_tree(140)
    assert f.levels == 3 and f.pods > 1
    first_pod = [f"node{i}.{r}" for i in range(20) for r in range(f.pod_leaves)]  # pod 0: SU 0, rails 0-3
    last_pod = [f"node{i}.{r}" for i in range(120, 140) for r in range(4, 8)]
    assert _max_flow(f, first_pod, last_pod) == len(first_pod)


def test_uneven_two_level_wiring_would_block():
    # 2 SU of A100 nodes: counting says 8 spines would do (16 x 20 / 40), but 20 uplinks cannot be spread
    # evenly over 8 spines; with 3 cables to half the spines and 2 to the others, two leaves whose
    # "heavy" spines differ can exchange only 16 flows, not 20. The model therefore uses 10 spines.
    a = {j: 3 if j < 4 else 2 for j in range(8)}
    b = {j: 2 if j < 4 else 3 for j in range(8)}
    assert sum(a.values()) == sum(b.values()) == 20
    assert sum(min(a[j], b[j]) for j in range(8)) == 16
    f = cl.fat_tree(40)
    assert (f.spine_switches, f.leaf_spine_links) == (10, 2)
    assert cl.switch_lower_bound(40)["spine"] == 8


# --- the fabric: levels, counts, reference ----------------------------------------------------------------

def test_two_levels_up_to_800_ports():
    assert cl.two_level_max_nodes() == 100  # 40 leaves x 20 ports = 800 = 40**2 / 2 end ports
    assert cl.fat_tree(100).levels == 2 and cl.fat_tree(100).end_ports == 800
    assert cl.fat_tree(101).levels == 3
    assert cl.fat_tree(140).end_ports == 1120 > 40**2 // 2


def test_reference_superpod_counts():
    pod = cl.superpod(140)
    assert (pod.gpus, pod.scalable_units) == (1120, 7)
    assert (pod.leaf_switches, pod.spine_switches, pod.core_switches) == (56, 56, 40)
    assert pod.cables == {"node_leaf": 1120, "leaf_spine": 1120, "spine_core": 1120}
    assert cl.switch_lower_bound(140) == {"leaf": 56, "spine": 56, "core": 28}


@pytest.mark.parametrize("nodes", [1, 20, 40, 100, 140, 200, 280, 560, 800])
def test_model_never_beats_the_counting_bound(nodes):
    f = cl.fat_tree(nodes)
    lb = cl.switch_lower_bound(nodes)
    assert f.leaf_switches == lb["leaf"]
    assert f.spine_switches >= lb["spine"]
    assert f.core_switches >= lb["core"]


def test_b200_reference_architecture_table_is_reproduced():
    text, ok = cl.validate()
    assert ok, text
    assert text.count("ok") == len(cl.b200_reference()) + 2
    rows = cl.b200_reference()
    assert all(isinstance(r, cl.ReferenceCounts) for r in rows) and rows[0].scalable_units == 2
    assert results.table("superpod-b200-counts")["source"] == "nvidia2025superpodb200"


def test_partial_scalable_unit_builds_whole_su():
    f = cl.fat_tree(21)
    assert f.scalable_units == 2 and f.leaf_switches == 16
    assert f.cables["node_leaf"] == 21 * 8
    assert f.ports()["leaf"]["spare"] == 16 * 40 - 21 * 8 - 16 * 20


@pytest.mark.parametrize("kwargs,error,match", [
    ({"nodes": 0}, ValueError, "nodes"), ({"nodes": -3}, ValueError, "nodes"), ({"nodes": 1.5}, TypeError, "nodes"),
    ({"nodes": True}, TypeError, "nodes"),
    ({"nodes": 20, "switch_ports": 38}, ValueError, "switch_ports"),
    ({"nodes": 20, "switch_ports": 1}, ValueError, "switch_ports"),
    ({"nodes": 20, "optical_tiers": ("core",)}, ValueError, "optical_tiers"),
    ({"nodes": 10_000}, ValueError, "three levels"),
])
def test_fabric_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        cl.fat_tree(**kwargs)


def test_superpod_bad_input_names_the_field():
    with pytest.raises(ValueError, match="nodes"):
        cl.superpod(0)
    with pytest.raises(ValueError, match="switch_ports"):
        cl.superpod(140, switch_ports=36)
    with pytest.raises(ValueError, match="switch_power_w"):
        cl.superpod(140, switch_power_w=-1)


def test_leaf_of_is_rail_optimised():
    f = cl.fat_tree(40)
    assert [f.leaf_of(0, r) for r in range(8)] == list(range(8))
    assert f.leaf_of(19, 3) == 3 and f.leaf_of(20, 3) == 11
    with pytest.raises(ValueError, match="rail"):
        f.leaf_of(0, 8)
    with pytest.raises(ValueError, match="node"):
        f.leaf_of(40, 0)
    import numpy as np

    assert f.leaf_of(np.int64(20), np.int32(3)) == 11
    with pytest.raises(TypeError, match="rail must be an integer"):
        f.leaf_of(0, "3")


def test_optical_tiers_choose_transceivers():
    all_optical = cl.fat_tree(140)
    copper_edge = cl.fat_tree(140, optical_tiers=("leaf_spine", "spine_core"))
    assert all_optical.transceivers - copper_edge.transceivers == 2 * 1120


# --- the SuperPOD: peaks, power ------------------------------------------------------------------------------

def test_superpod_peaks_and_power():
    pod = cl.superpod(140, "A100-SXM4-40GB")
    a100 = specs.get("A100-SXM4-40GB")
    assert pod.peak_flops("fp16", sparse=True) == pytest.approx(1120 * a100.peak_flops("fp16", sparse=True))
    assert pod.peak_flops("fp16", sparse=True) / 1e15 == pytest.approx(698.6, abs=0.1)  # "700 PFLOPS"
    assert pod.peak_flops("fp16") / 1e15 == pytest.approx(349.3, abs=0.1)
    assert pod.peak_flops("fp64_tc") / 1e15 == pytest.approx(21.8, abs=0.05)
    assert pod.power_w == pytest.approx(140 * 6500 + pod.switches * cl.SWITCH_POWER_W_ASSUMED)
    assert cl.superpod(140, switch_power_w=0).power_w == 140 * 6500
    assert pod.bisection_bytes_per_s == pytest.approx(14e12)
    assert pod.gpu_memory_bytes == 1120 * 40e9


def test_scaling_table_rows():
    rows = cl.scaling_table([20, 140, 560])
    assert [r["gpus"] for r in rows] == [160, 1120, 4480]
    assert [r["levels"] for r in rows] == [2, 3, 3]
    for r in rows:
        assert r["switches"] == r["leaf"] + r["spine"] + r["core"] >= r["lower_bound"]


# --- Selene ------------------------------------------------------------------------------------------------

def test_selene_figures():
    june, nov = cl.selene()
    assert (june.gpus, nov.gpus) == (2240, 4480)
    assert nov.hpl_efficiency == pytest.approx(63.46 / 79.215)
    assert nov.gpu_fp64_peak_flops() == pytest.approx(4480 * 19.49e12, rel=1e-3)
    assert nov.rpeak_flops < nov.gpu_fp64_peak_flops()  # Rpeak is not GPUs x 19.5 TFLOP/s
    assert 0.70 < nov.fraction_of_gpu_peak() < 0.75
    clock = nov.implied_gpu_clock_hz()
    assert 1.2e9 < clock < nov.implied_gpu_clock_hz(include_cpus=False) < 1.41e9
    assert nov.flops_per_w == pytest.approx(63.46e15 / 2646e3)
    assert june.flops_per_w == 20.5e9 and june.hpl_efficiency is None and june.implied_gpu_clock_hz() is None
    assert (june.reported_cores, nov.reported_cores) == (277_760, 555_520)


# --- all-reduce across the pod -------------------------------------------------------------------------------

def test_pod_all_reduce_uses_the_interconnect_model():
    one = cl.pod_all_reduce(340e6, 1)
    ring = collectives.collective_time("all_reduce", 680e6, 8, fabrics.A100_INTRA_BYTES_PER_S,
                                       fabrics.A100_INTRA_LATENCY_S)
    assert isinstance(one, collectives.AllReducePhases)
    assert one.total_s == pytest.approx(ring)
    assert one.size_bytes == 680e6
    many = cl.pod_all_reduce(1.5e9, 140, network=fabrics.DGX_A100.with_(inter_latency_s=0.0))
    assert many.inter_all_reduce_s == pytest.approx(2 * 139 / 140 * 3e9 / 200e9)
    # the inter-node phase of the hierarchical algorithm is one all-reduce per rail of S/8 bytes
    assert cl.rail_all_reduce(3e9 / 8, 140) == pytest.approx(cl.pod_all_reduce(1.5e9, 140).inter_all_reduce_s)
    # a DGX H100 pod: NDR doubles the per-node bandwidth, the inter-node phase halves (latency aside)
    h100 = cl.pod_all_reduce(1.5e9, 140, network=fabrics.DGX_H100.with_(inter_latency_s=0.0))
    assert h100.inter_all_reduce_s == pytest.approx(many.inter_all_reduce_s / 2)
    with pytest.raises(ValueError, match="params"):
        cl.pod_all_reduce(0, 4)
    with pytest.raises(ValueError, match="nodes"):
        cl.pod_all_reduce(1e6, 0)
    with pytest.raises(TypeError, match="NodeNetwork"):
        cl.pod_all_reduce(1e6, 2, network="DGX A100")


def test_all_reduce_time_saturates_with_nodes():
    rows = cl.all_reduce_scaling([2, 16, 140], models=cl.GRADIENT_MODELS[2:3])
    t = [r["total_s"] for r in rows]
    assert t[0] < t[1] < t[2]
    assert t[2] / t[1] < 1.2  # bandwidth term saturates at 2 S / B_node
    tree = cl.all_reduce_scaling([140], models=cl.GRADIENT_MODELS[:1], inter_algorithm="tree")
    ring = cl.all_reduce_scaling([140], models=cl.GRADIENT_MODELS[:1])
    assert tree[0]["total_s"] < ring[0]["total_s"]  # small gradients: latency-bound, the tree wins


# --- money ------------------------------------------------------------------------------------------------

def test_cloud_offers():
    offers = cl.cloud_offers()
    prices = {o.instance: o.usd_per_gpu_hour for o in offers}
    assert prices["p4d.24xlarge"] == pytest.approx(32.77 / 8)
    assert len(offers) == 4 and all(o.source == "seed000" and o.gpus == 8 for o in offers)
    for o in offers:
        specs.get(o.gpu)
    # the default price of the gap calculator is the p4d price per GPU
    assert cl.throughput_gap_cost(0.1).usd_per_gpu_hour == pytest.approx(prices["p4d.24xlarge"])


def test_ownership_and_break_even():
    own = cl.Ownership()
    costs = [cl.ownership_usd_per_gpu_hour(own, u) for u in (0.2, 0.5, 1.0)]
    assert costs[0] > costs[1] > costs[2]
    price = cl.cloud_offers()[1].usd_per_gpu_hour
    u = cl.break_even_utilization(price, own)
    assert 0 < u < 1
    assert cl.ownership_usd_per_gpu_hour(own, u) == pytest.approx(price)
    assert cl.break_even_utilization(0.01, own) == float("inf")
    with pytest.raises(ValueError, match="utilization"):
        cl.ownership_usd_per_gpu_hour(own, 0.0)
    with pytest.raises(ValueError, match="pue"):
        cl.Ownership(pue=0.9)


def test_training_time_and_energy_match_megatron_estimate():
    t = cl.training_time_s(175e9, 300e9, 1024, 140e12)
    assert t / 86400 == pytest.approx(33.9, abs=0.1)  # "about 34 days" (Narayanan et al.)
    e = cl.training_energy_j(128, t, 6500.0, pue=1.0)
    assert e == pytest.approx(128 * 6500 * t)
    with pytest.raises(ValueError, match="pue"):
        cl.training_energy_j(1, 1.0, pue=0.5)


def test_throughput_gap_cost():
    g = cl.throughput_gap_cost(0.10, gpus=1000, usd_per_gpu_hour=2.0)
    assert g.lost_gpu_hours_per_week == pytest.approx(16_800)
    assert g.lost_cluster_hours_per_week == pytest.approx(16.8)
    assert g.extra_time_fraction == pytest.approx(1 / 9)
    assert g.usd_per_week == pytest.approx(33_600)
    assert g.usd_per_year == pytest.approx(33_600 * 8766 / 168)
    for bad in (-0.1, 1.0):
        with pytest.raises(ValueError, match="gap"):
            cl.throughput_gap_cost(bad)
    with pytest.raises(TypeError, match="gap must be a number"):
        cl.throughput_gap_cost("x")


def test_mlperf_records():
    bert = [r for r in cl.mlperf("v0.7", "BERT") if r.params["scale"] == "max-scale"]
    assert len(bert) == 1 and bert[0].params["gpus"] == 2048 > cl.superpod(140).gpus
    assert bert[0].params["nodes"] * 8 == bert[0].params["gpus"] and bert[0].source == "nvidia2020mlperfblog"
    assert len(cl.mlperf("v0.7")) >= 8
    h100 = cl.mlperf(gpu="H100-SXM5-80GB")
    assert {r.params["round"] for r in h100} >= {"v2.1", "v3.0"}
    with pytest.raises(ValueError, match="round_ must be one of"):
        cl.mlperf("v9.9")


def test_import_does_not_pull_torch():
    import subprocess
    import sys
    code = "import sys, ampere.cluster; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_huge_pods_are_refused_before_anything_is_built():
    import time

    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="nodes=1000000000 needs more than three levels.*at most 800 nodes"):
        cl.superpod(10**9)
    with pytest.raises(ValueError, match="at most 800 nodes"):
        cl.fat_tree(10**12)
    assert time.perf_counter() - t0 < 1.0


def test_numpy_integers_accepted_and_bad_types_refused():
    import numpy as np

    assert cl.superpod(np.int64(140)).gpus == 1120
    assert cl.fat_tree(np.int32(20)).leaf_switches == 8
    with pytest.raises(TypeError, match="nodes must be an integer"):
        cl.superpod(140.0)
    with pytest.raises(TypeError, match="nodes must be an integer"):
        cl.fat_tree(True)
    with pytest.raises(TypeError, match="utilization must be a number"):
        cl.ownership_usd_per_gpu_hour(cl.Ownership(), "0.5")


# --- the chapter's views -------------------------------------------------------------------------------------

def _bib_keys():
    import re
    from pathlib import Path

    bib = (Path(__file__).resolve().parent.parent / "book" / "references.bib").read_text(encoding="utf-8")
    return set(re.findall(r"@\w+\{([^,]+),", bib))


def test_page_rows_carry_labels_not_bibliography_keys():
    keys = _bib_keys()
    tables = [cl.node_rows(cl.dgx_a100("A100-SXM4-40GB"), cl.dgx_a100()), cl.peak_rows(cl.dgx_a100()),
              cl.bandwidth_rows(cl.dgx_a100()), cl.scaling_rows([20, 140]), cl.validation_rows(),
              cl.pod_peak_rows(cl.superpod(140)), cl.selene_rows(), cl.pod_all_reduce_rows(140), cl.gap_rows(),
              cl.mlperf_rows(), cl.claims()]
    for rows in tables:
        assert rows
        for row in rows:
            for value in row.values():
                assert str(value) not in keys, value
                assert not any(f"{k}," in str(value) or str(value).endswith(k) for k in keys if len(k) > 6), value
    assert all(r["match"] for r in cl.validation_rows())
    with pytest.raises(TypeError, match="DGXNode"):
        cl.node_rows("DGX A100")


def test_hpl_points_compare_rmax_with_the_gpu_fp64_peak():
    pts = cl.hpl_points()
    assert len(pts) == 2
    nov = next(p for p in pts if "November" in p.what)
    assert nov.model == pytest.approx(4480 * 19.49e12 / 1e15, rel=1e-3)
    assert 0.70 < nov.ratio < 0.75


def test_claims_are_computed_from_the_data():
    rows = {r["claim"]: r for r in cl.claims()}
    mlperf = next(r for c, r in rows.items() if "2.5x" in c)
    assert mlperf["verdict"] == "not supported" and "2.6x" in mlperf["evidence"]
    bert = next(r for c, r in rows.items() if "BERT" in c)
    assert "0.81 min on 256 nodes" in bert["evidence"]


def test_dgx_node_network_is_fabrics_data():
    node = cl.dgx_a100()
    assert node.network.inter_bytes_per_s == fabrics.DGX_A100.inter_bytes_per_s
    assert node.network.intra_bytes_per_s == fabrics.DGX_A100.intra_bytes_per_s
    assert node.inter_node_bytes_per_s_per_gpu == pytest.approx(25e9)


def test_selene_rows_print_the_lists_and_a_dash_for_what_a_list_does_not_give():
    rows = cl.selene_rows()
    june, nov = cl.selene()
    assert [r["nodes"] for r in rows] == [june.nodes, nov.nodes]
    for row, entry in zip(rows, (june, nov)):
        assert row["Rpeak (PFLOP/s)"] == ("–" if entry.rpeak_flops is None else f"{entry.rpeak_flops / 1e15:.2f}")
        assert row["Rmax / Rpeak"] != ""  # never an empty cell
    # the GPU-peak comparison is the figure's table (hpl_points), not repeated here
    assert not any("GPU peak" in k for k in rows[0])


def test_ownership_figure_draws_one_line_per_price_and_rows_per_offer(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []
    monkeypatch.setattr(plt, "show", lambda: figs.append(plt.gcf()))
    rows = cl.show_ownership()
    offers = cl.cloud_offers()
    assert len(rows) == len(offers)  # the table keeps every offer
    assert all(r["source"].endswith(", price table") and not r["source"].count("2023, 2023") for r in rows)
    ax = figs[0].axes[0]
    prices = {round(o.usd_per_gpu_hour, 2) for o in offers}
    assert len(ax.get_lines()) == 1 + len(prices)  # the ownership curve and one line per distinct price
    labels = ax.get_legend_handles_labels()[1]
    assert any(" and " in lab for lab in labels) == (len(prices) < len(offers))  # shared prices share a line
    assert ax.get_yscale() == "linear"
    plt.close("all")


def test_scaling_rows_fit_the_page_and_gap_rows_keep_percent_on_one_line():
    row = cl.scaling_rows([140])[0]
    assert len(row) <= 10 and "GPUs" not in row  # 8 x nodes; the table must not overflow the page column
    assert row["switches"] == cl.superpod(140).switches
    assert all("\u00a0%" in r["gap"] for r in cl.gap_rows())


def test_mlperf_rows_name_each_figure_with_its_unit():
    rows = cl.mlperf_rows()
    assert len(rows) == sum(len(r.figures) for r in cl.mlperf())
    gains = [r for r in rows if r["value"].endswith(" x")]
    assert gains and all(r["what"].endswith("speedup (up to)") for r in gains), gains  # no clipped "_ratio"
    assert all(r["scale"].startswith("against ") for r in gains)
    per_acc = next(r for r in rows if r["scale"] == "per-accelerator")
    assert per_acc["what"] == "BERT" and per_acc["value"].endswith("accelerator-hours")
    bert = next(r for r in rows if r["round"] == "v0.7" and r["what"] == "BERT" and r["scale"] == "max-scale")
    assert bert["value"] == "0.81 minutes"
