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
    assert cl.fat_tree(100).levels == 2 and cl.fat_tree(100).end_ports == 800
    assert cl.fat_tree(101).levels == 3
    assert cl.fat_tree(140).end_ports == 1120 > 40**2 // 2


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
    ({"nodes": True}, TypeError, "nodes"),
    ({"nodes": 20, "switch_ports": 38}, ValueError, "switch_ports"),
    ({"nodes": 20, "switch_ports": 1}, ValueError, "switch_ports"),
    ({"nodes": 20, "optical_tiers": ("core",)}, ValueError, "optical_tiers"),
    ({"nodes": 10_000}, ValueError, "three levels"),
])
def test_fabric_bad_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        cl.fat_tree(**kwargs)


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
    with pytest.raises(ValueError, match="nodes=1000000000 needs more than three levels.*at most 800 nodes"):
        cl.superpod(10**9)
    with pytest.raises(ValueError, match="at most 800 nodes"):
        cl.fat_tree(10**12)
    assert time.perf_counter() - t0 < 1.0
