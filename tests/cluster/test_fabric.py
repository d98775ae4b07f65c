"""Tests of ampere.cluster.fabric: the fat tree: ports, levels, counts.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from ampere import cluster as cl


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


def test_two_levels_up_to_800_ports():
    assert cl.two_level_max_nodes() == 100  # 40 leaves x 20 ports = 800 = 40**2 / 2 end ports
    assert cl.fat_tree(100).levels == 2 and cl.fat_tree(100).end_ports == 800 == cl.fat_tree_max_ports(40, 2)
    assert cl.fat_tree(101).levels == 3
    assert cl.fat_tree(140).end_ports == 1120 > 40**2 // 2


@pytest.mark.parametrize("k,rails,su", [(40, 8, 20), (64, 8, 32), (144, 8, 72), (16, 4, 8), (36, 2, 18)])
def test_three_levels_reach_the_textbook_k_cubed_over_four(k, rails, su):
    # with su_nodes = k/2 the model wires k^3/4 ports, the textbook maximum of a three-level fat tree
    n = cl.three_level_max_nodes(rails, su, k)
    assert n * rails == cl.fat_tree_max_ports(k, 3) == k**3 // 4
    f = cl.fat_tree(n, rails=rails, su_nodes=su, switch_ports=k)
    assert f.levels == 3 and f.end_ports == k**3 // 4
    assert (f.leaf_switches, f.spine_switches, f.core_switches) == (k * k // 2, k * k // 2, k * k // 4)
    with pytest.raises(ValueError, match=f"at most {n} nodes"):
        cl.fat_tree(n + 1, rails=rails, su_nodes=su, switch_ports=k)


def test_fat_tree_max_ports_is_two_times_half_radix_to_the_levels():
    assert [cl.fat_tree_max_ports(40, n) for n in (1, 2, 3)] == [40, 800, 16000]
    assert cl.fat_tree_max_ports(64, 3) == 65536
    with pytest.raises(ValueError, match="levels"):
        cl.fat_tree_max_ports(40, 4)
    with pytest.raises(TypeError, match="switch_ports"):
        cl.fat_tree_max_ports("40", 2)


def test_unwireable_su_counts_are_built_for_a_larger_fabric():
    # 41 SUs of DGX A100 (328 leaves) have no equal-multiplicity three-level wiring on 40-port switches:
    # every pod size leaves a remainder whose gcd forces more than 40 cables onto a core
    f = cl.fat_tree(41 * 20)
    assert f.populated_scalable_units == 41 < f.scalable_units
    assert f.leaf_switches == f.scalable_units * 8 and f.nodes == 820
    assert f.ports()["leaf"]["spare"] == f.leaf_switches * 40 - 820 * 8 - f.leaf_switches * 20
    assert "fabric built for" in f.summary()
    lb = cl.switch_lower_bound(820)
    assert lb["leaf"] == 41 * 8 and f.switches >= sum(lb.values())
    # a wireable count is built as it is
    g = cl.fat_tree(42 * 20)
    assert g.scalable_units == g.populated_scalable_units == 42


@pytest.mark.parametrize("k,rails,su,up", [(12, 3, 6, 6), (16, 4, 8, 4), (10, 2, 5, 5), (8, 1, 4, 2), (24, 8, 12, 12)])
def test_random_radices_are_non_blocking_by_max_flow(k, rails, su, up):
    # for every SU count up to the three-level limit: the wiring uses no port twice, and the flow between
    # the first and the second half of the SUs equals what the leaves' uplinks allow
    limit = cl.three_level_max_nodes(rails, su, k, up) // su
    for n_su in sorted({2, limit // 2, limit - 1, limit} - {0, 1}):
        f = cl.fat_tree(n_su * su, rails=rails, su_nodes=su, switch_ports=k, uplinks_per_leaf=up)
        use = _port_use(f)
        assert all(u["down"] + u["up"] <= k for u in use.values())
        half = n_su // 2
        left = [f"node{i}.{r}" for i in range(half * su) for r in range(rails)]
        right = [f"node{i}.{r}" for i in range(half * su, 2 * half * su) for r in range(rails)]
        assert _max_flow(f, left, right) == len(left) * up // su


@pytest.mark.parametrize("nodes", [1, 20, 40, 100, 140, 200, 280, 560, 800])
def test_model_never_beats_the_counting_bound(nodes):
    f = cl.fat_tree(nodes)
    lb = cl.switch_lower_bound(nodes)
    assert f.leaf_switches == lb["leaf"]
    assert f.spine_switches >= lb["spine"]
    assert f.core_switches >= lb["core"]


def test_partial_scalable_unit_builds_whole_su():
    f = cl.fat_tree(21)
    assert f.scalable_units == 2 and f.leaf_switches == 16
    assert f.cables["node_leaf"] == 21 * 8
    assert f.ports()["leaf"]["spare"] == 16 * 40 - 21 * 8 - 16 * 20


@pytest.mark.parametrize("kwargs,error,match", [
    ({"nodes": 0}, ValueError, "nodes"), ({"nodes": -3}, ValueError, "nodes"), ({"nodes": 1.5}, TypeError, "nodes"),
    ({"nodes": True}, TypeError, "nodes"), ({"nodes": "20"}, TypeError, "nodes"),
    ({"nodes": 20, "switch_ports": 38}, ValueError, "switch_ports"),
    ({"nodes": 20, "switch_ports": 1}, ValueError, "switch_ports"),
    ({"nodes": 20, "switch_ports": 0}, ValueError, "switch_ports"),
    ({"nodes": 20, "switch_ports": 10**6}, ValueError, "switch_ports"),
    ({"nodes": 20, "switch_ports": "40"}, TypeError, "switch_ports"),
    ({"nodes": 20, "su_nodes": "8"}, TypeError, "su_nodes"),
    ({"nodes": 20, "su_nodes": 0}, ValueError, "su_nodes"),
    ({"nodes": 20, "rails": 10**12}, ValueError, "rails"),
    ({"nodes": 20, "uplinks_per_leaf": 21}, ValueError, "uplinks_per_leaf"),
    ({"nodes": 20, "uplinks_per_leaf": 0}, ValueError, "uplinks_per_leaf"),
    ({"nodes": 20, "port_bytes_per_s": 0}, ValueError, "port_bytes_per_s"),
    ({"nodes": 20, "optical_tiers": ("core",)}, ValueError, "optical_tiers"),
    ({"nodes": 20, "optical_tiers": "node_leaf"}, TypeError, "optical_tiers"),
    ({"nodes": 2001}, ValueError, "three levels"),
])
def test_fabric_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        cl.fat_tree(**kwargs)


@pytest.mark.parametrize("fn", [cl.two_level_max_nodes, cl.three_level_max_nodes])
@pytest.mark.parametrize("kwargs,error,match", [
    ({"su_nodes": "8"}, TypeError, "su_nodes"), ({"switch_ports": 0}, ValueError, "switch_ports"),
    ({"rails": 10**12}, ValueError, "rails"), ({"switch_ports": 10**12}, ValueError, "switch_ports"),
    ({"rails": True}, TypeError, "rails"), ({"su_nodes": 21}, ValueError, "switch_ports"),
])
def test_limits_bad_input(fn, kwargs, error, match):
    with pytest.raises(error, match=match):
        fn(**kwargs)


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


def test_huge_pods_are_refused_before_anything_is_built():
    import time

    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="nodes=1000000000 needs more than three levels.*at most 2000 nodes"):
        cl.superpod(10**9)
    with pytest.raises(ValueError, match="at most 2000 nodes"):
        cl.fat_tree(10**12)
    with pytest.raises(ValueError, match="switch_ports"):
        cl.fat_tree(10**12, switch_ports=10**9)
    assert cl.three_level_max_nodes(64, 1, 512) == 512 * 256 // 64  # largest radix: k pods of k/2 leaves
    assert time.perf_counter() - t0 < 2.0


def test_wiring_refuses_to_list_a_huge_fabric():
    f = cl.fat_tree(2000)
    with pytest.raises(ValueError, match="max_bundles"):
        f.wiring(max_bundles=1000)


def test_oversubscribed_tree_halves_the_bisection():
    full, taper = cl.fat_tree(40), cl.fat_tree(40, uplinks_per_leaf=10)
    assert taper.oversubscription == 2.0 and full.oversubscription == 1.0
    assert taper.bisection_bytes_per_s == full.bisection_bytes_per_s / 2
    assert taper.cables["leaf_spine"] == full.cables["leaf_spine"] // 2
    first = [f"node{i}.{r}" for i in range(20) for r in range(8)]
    second = [f"node{i}.{r}" for i in range(20, 40) for r in range(8)]
    assert _max_flow(taper, first, second) == 80 == len(first) // 2
    assert _max_flow(full, first, second) == 160
    assert "20 down / 10 up" in taper.summary()
