"""The compute fabric of a DGX SuperPOD as a model you can resize: the rail-optimised, non-blocking fat tree.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), sections "The
SuperPOD fabric" and "How many switches?". :func:`fat_tree` builds scalable units (SU) of ``su_nodes``
nodes, rail-optimised wiring (NIC *r* of every node of an SU goes to leaf switch *r* of that SU), and a
non-blocking fat tree of ``switch_ports``-port switches above the leaves. The leaf count follows from the
rail rule; the spine and core counts are **derived by this model** (the per-tier counts of NVIDIA's DGX A100
reference architecture were not retrievable, see the chapter): an explicit wiring with equal cable
multiplicities (a rearrangeably non-blocking Clos network at every tier), the one with the fewest switches.
It reproduces the published counts of the DGX B200 SuperPOD reference architecture [nvidia2025superpodb200]
exactly (:func:`b200_reference`, ``validation.validate``). :func:`switch_lower_bound` is the counting bound.
Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .. import check, results
from .checks import _check_float, _check_int, _divisors
from .node import HDR_PORT_BYTES_PER_S


#: Ports of the 1U Quantum HDR switch of the DGX A100 SuperPOD (QM8700/QM8790: 40 x 200 Gb/s)
#: [nvidia2019qm87xx].
QM8790_PORTS = 40

#: The three cable tiers of a fat tree, bottom up.
TIERS: tuple[str, ...] = ("node_leaf", "leaf_spine", "spine_core")


@dataclass(frozen=True)
class Fabric:
    """The compute fabric of a pod, built by :func:`fat_tree`. Chapter section "The SuperPOD fabric".

    Construction (all counts follow from these parameters):

    * ``scalable_units`` SUs of ``su_nodes`` nodes; each node has ``rails`` compute ports. Leaf switch
      (u, r) serves rail r of SU u: ``su_nodes`` ports down, as many up (non-blocking).
    * Two levels (``levels == 2``): every leaf has ``leaf_spine_links`` cables to **every** spine.
    * Three levels: leaves are grouped, in order (SU by SU, rail by rail), into pods of ``pod_leaves``;
      each pod has ``spines_per_pod`` spines and every leaf has ``leaf_spine_links`` cables to every spine
      of its pod. A spine sends up as many cables as it receives; spine j of every pod is wired to core
      group j (``cores_per_group`` cores), with the same number of cables to each core of the group.

    Equal multiplicities make every tier a rearrangeably non-blocking Clos network, so the whole tree
    carries any permutation of port-to-port traffic at full rate.
    """

    nodes: int
    rails: int
    su_nodes: int
    switch_ports: int
    port_bytes_per_s: float
    optical_tiers: tuple[str, ...]
    scalable_units: int
    levels: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    pod_leaves: int  # leaves per pod (3 levels); all leaves (2 levels)
    pods: int
    spines_per_pod: int  # spines per pod (3 levels); all spines (2 levels)
    leaf_spine_links: int  # cables between a leaf and each spine of its pod
    cores_per_group: int  # 0 with two levels

    @property
    def leaf_up_ports(self) -> int:
        """Uplinks per leaf: as many as its ports towards the nodes (non-blocking)."""
        return self.su_nodes

    @property
    def end_ports(self) -> int:
        """Populated node ports on the fabric: nodes x rails (one per GPU on a DGX A100)."""
        return self.nodes * self.rails

    @property
    def switches(self) -> int:
        return self.leaf_switches + self.spine_switches + self.core_switches

    def pod_sizes(self) -> list[int]:
        """Leaves in each pod (the last pod may be partial)."""
        full, rest = divmod(self.leaf_switches, self.pod_leaves)
        return [self.pod_leaves] * full + ([rest] if rest else [])

    def spine_down_ports(self) -> list[int]:
        """Ports used towards the leaves on each spine, pod by pod."""
        if self.levels == 2:
            return [self.leaf_switches * self.leaf_spine_links] * self.spine_switches
        return [p * self.leaf_spine_links for p in self.pod_sizes() for _ in range(self.spines_per_pod)]

    @property
    def cables(self) -> dict[str, int]:
        """Cables per tier: node-leaf (populated ports only), leaf-spine, spine-core."""
        leaf_spine = self.leaf_switches * self.leaf_up_ports
        return {"node_leaf": self.end_ports, "leaf_spine": leaf_spine,
                "spine_core": leaf_spine if self.levels == 3 else 0}

    @property
    def cables_total(self) -> int:
        return sum(self.cables.values())

    @property
    def transceivers(self) -> int:
        """Optical transceivers: two per cable (one per end) on the tiers in ``optical_tiers``."""
        return sum(2 * n for tier, n in self.cables.items() if tier in self.optical_tiers)

    def ports(self) -> dict[str, dict[str, int]]:
        """Switch ports per tier: ``total``, ``down``, ``up`` and ``spare`` (free) ports."""
        k = self.switch_ports
        cab = self.cables
        leaf_total = self.leaf_switches * k
        spine_total = self.spine_switches * k
        core_total = self.core_switches * k
        spine_up = cab["spine_core"]
        return {
            "leaf": {"total": leaf_total, "down": cab["node_leaf"], "up": cab["leaf_spine"],
                     "spare": leaf_total - cab["node_leaf"] - cab["leaf_spine"]},
            "spine": {"total": spine_total, "down": cab["leaf_spine"], "up": spine_up,
                      "spare": spine_total - cab["leaf_spine"] - spine_up},
            "core": {"total": core_total, "down": spine_up, "up": 0, "spare": core_total - spine_up},
        }

    @property
    def bisection_bytes_per_s(self) -> float:
        """Bandwidth across any cut into two equal halves of the nodes, per direction.

        A non-blocking tree carries half the populated ports at full rate across the cut:
        ``end_ports / 2 x port_bytes_per_s`` (140 DGX A100: 560 x 25 GB/s = 14 TB/s per direction).
        """
        return self.end_ports / 2 * self.port_bytes_per_s

    def leaf_of(self, node: int, rail: int) -> int:
        """Index of the leaf serving ``rail`` of ``node`` (rail-optimised: SU-major, then rail)."""
        node = check.nonneg_int("node", node, maximum=self.nodes - 1)
        rail = check.nonneg_int("rail", rail, maximum=self.rails - 1)
        return (node // self.su_nodes) * self.rails + rail

    def wiring(self) -> list[tuple[str, str, int]]:
        """Every cable bundle as ``(lower end, upper end, number of cables)``.

        Names: ``node{i}.{rail}`` (a node port), ``leaf{l}``, ``spine{s}``, ``core{c}``. Used by the tests
        (ports, non-blocking, bisection by max-flow) and by the chapter's drawing.
        """
        edges: list[tuple[str, str, int]] = []
        for i in range(self.nodes):
            for r in range(self.rails):
                edges.append((f"node{i}.{r}", f"leaf{self.leaf_of(i, r)}", 1))
        m = self.leaf_spine_links
        if self.levels == 2:
            for leaf in range(self.leaf_switches):
                for s in range(self.spine_switches):
                    edges.append((f"leaf{leaf}", f"spine{s}", m))
            return edges
        d, c = self.spines_per_pod, self.cores_per_group
        first = 0
        for pod, size in enumerate(self.pod_sizes()):
            for leaf in range(first, first + size):
                for j in range(d):
                    edges.append((f"leaf{leaf}", f"spine{pod * d + j}", m))
            up = size * m  # each spine of this pod sends up what it receives
            for j in range(d):
                for g in range(c):
                    edges.append((f"spine{pod * d + j}", f"core{j * c + g}", up // c))
            first += size
        return edges

    def summary(self) -> str:
        cab = self.cables
        lines = [f"{self.nodes} nodes x {self.rails} rails = {self.end_ports} ports, "
                 f"{self.scalable_units} SU of {self.su_nodes}, {self.switch_ports}-port switches",
                 f"levels {self.levels}: leaf {self.leaf_switches}, spine {self.spine_switches}, "
                 f"core {self.core_switches} (total {self.switches})",
                 f"cables node-leaf {cab['node_leaf']}, leaf-spine {cab['leaf_spine']}, "
                 f"spine-core {cab['spine_core']}; transceivers {self.transceivers}"]
        return "\n".join(lines)


def _pod_candidates(rails: int, half: int) -> list[int]:
    """Pod sizes (in leaves) that never split a scalable unit's rails awkwardly: divisors of the rail
    count (part of one SU) or whole SUs, at most ``half`` leaves (a spine's down ports)."""
    cands = {p for p in _divisors(rails) if p <= half}
    j = 1
    while rails * j <= half:
        cands.add(rails * j)
        j += 1
    return sorted(cands)


def _design(leaves: int, up: int, rails: int, switch_ports: int) -> dict[str, int] | None:
    """Fewest-switch wiring with equal cable multiplicities for ``leaves`` leaves with ``up`` uplinks each
    (see :class:`Fabric`); ``None`` when three levels cannot do it."""
    k = switch_ports
    if leaves <= k:  # two levels: each leaf reaches every spine; fewest spines with equal multiplicity
        d = min(d for d in _divisors(up) if leaves * (up // d) <= k)
        return dict(levels=2, spine_switches=d, core_switches=0, pod_leaves=leaves, pods=1,
                    spines_per_pod=d, leaf_spine_links=up // d, cores_per_group=0)
    half = k // 2
    best: tuple[tuple[int, int, int], dict[str, int]] | None = None
    for p in _pod_candidates(rails, half):
        if p > leaves:
            continue
        full, rest = divmod(leaves, p)
        sizes = [p] * full + ([rest] if rest else [])
        for d in _divisors(up):
            m = up // d
            if p * m > half:  # a spine gives half its ports to the pod's leaves, half to the cores
                continue
            ups = [s * m for s in sizes]
            c = next((c for c in range(1, k + 1)
                      if all(u % c == 0 for u in ups) and sum(u // c for u in ups) <= k), None)
            if c is None:
                continue
            total = leaves + d * len(sizes) + d * c
            key = (total, -p, d)
            if best is None or key < best[0]:
                best = (key, dict(levels=3, spine_switches=d * len(sizes), core_switches=d * c, pod_leaves=p,
                                  pods=len(sizes), spines_per_pod=d, leaf_spine_links=m, cores_per_group=c))
    return None if best is None else best[1]


def fat_tree(nodes: int, rails: int = 8, su_nodes: int = 20, switch_ports: int = QM8790_PORTS,
             port_bytes_per_s: float = HDR_PORT_BYTES_PER_S,
             optical_tiers: Sequence[str] = TIERS) -> Fabric:
    """The rail-optimised, non-blocking fat tree for ``nodes`` nodes (see :class:`Fabric`).

    Chapter: *DGX A100 and the SuperPOD*, section "The SuperPOD fabric". The fabric is built for whole
    scalable units (``ceil(nodes / su_nodes)``); a partial last SU leaves leaf ports free. Two levels
    are used while every leaf can reach every spine (at most ``switch_ports`` leaves, i.e.
    ``switch_ports**2 / 2`` end ports when ``su_nodes = switch_ports / 2``: 800 for 40-port HDR
    switches); beyond that, three. Among wirings with equal cable multiplicities the one with the fewest
    switches is returned (ties: larger pods). ``optical_tiers`` says which tiers use optical cables (two
    transceivers per cable, whether separate modules or the two ends of an active optical cable) -- an
    assumption, all tiers by default.

    Raises ``ValueError`` for ``nodes < 1``, for a radix that cannot give each leaf ``su_nodes`` ports
    down and as many up (``switch_ports < 2 * su_nodes``), and for pods too large for three levels.
    """
    nodes = _check_int(nodes, "nodes")
    rails = _check_int(rails, "rails")
    su_nodes = _check_int(su_nodes, "su_nodes")
    k = _check_int(switch_ports, "switch_ports", minimum=2)
    bw = _check_float(port_bytes_per_s, "port_bytes_per_s", lo_open=True)
    tiers = tuple(optical_tiers)
    unknown = [t for t in tiers if t not in TIERS]
    if unknown:
        raise ValueError(f"optical_tiers={tiers!r} has unknown tiers {unknown}; allowed: {', '.join(TIERS)}")
    if 2 * su_nodes > k:
        raise ValueError(
            f"switch_ports={k!r} cannot build a non-blocking tree with su_nodes={su_nodes}: a leaf needs "
            f"{su_nodes} ports down and {su_nodes} up; allowed: switch_ports >= {2 * su_nodes}")
    # the size check comes first: a design is searched over lists as long as the leaf count
    limit = three_level_max_nodes(rails, su_nodes, k)
    if nodes > limit:
        raise ValueError(
            f"nodes={nodes!r} needs more than three levels of {k}-port switches with su_nodes={su_nodes} "
            f"and rails={rails} (a core switch cannot reach every pod); allowed: at most {limit} nodes")
    n_su = math.ceil(nodes / su_nodes)
    cfg = _design(n_su * rails, su_nodes, rails, k)
    if cfg is None:  # pragma: no cover - the limit above is the largest size _design can wire
        raise ValueError(f"nodes={nodes!r}: no non-blocking three-level design found; allowed: at most {limit}")
    return Fabric(nodes=nodes, rails=rails, su_nodes=su_nodes, switch_ports=k, port_bytes_per_s=bw,
                  optical_tiers=tiers, scalable_units=n_su, leaf_switches=n_su * rails, **cfg)


def two_level_max_nodes(rails: int = 8, su_nodes: int = 20, switch_ports: int = QM8790_PORTS) -> int:
    """Largest node count a two-level tree serves: whole SUs while leaves <= switch_ports (A100: 100)."""
    return (switch_ports // rails) * su_nodes


def three_level_max_nodes(rails: int = 8, su_nodes: int = 20, switch_ports: int = QM8790_PORTS) -> int:
    """Largest node count (whole SUs) that :func:`fat_tree` can wire with three levels."""
    rails = _check_int(rails, "rails")
    su_nodes = _check_int(su_nodes, "su_nodes")
    switch_ports = _check_int(switch_ports, "switch_ports", minimum=2)
    n_su = switch_ports // rails
    while _design((n_su + 1) * rails, su_nodes, rails, switch_ports) is not None:
        n_su += 1
    return n_su * su_nodes


def switch_lower_bound(nodes: int, rails: int = 8, su_nodes: int = 20,
                       switch_ports: int = QM8790_PORTS) -> dict[str, int]:
    """Fewest switches any non-blocking tree with this leaf layer can have, by counting ports alone.

    Chapter: *DGX A100 and the SuperPOD*, section "How many switches?". Leaves are fixed by the rail rule;
    every leaf uplink needs a spine port, and with three levels a spine gives only half its ports to the
    leaves; every spine uplink needs a core port. The wiring of :func:`fat_tree` may need more, because
    it insists on equal cable multiplicities (the condition that makes it non-blocking).
    """
    f = fat_tree(nodes, rails, su_nodes, switch_ports)
    uplinks = f.leaf_switches * f.leaf_up_ports
    k = switch_ports
    if f.levels == 2:
        return {"leaf": f.leaf_switches, "spine": math.ceil(uplinks / k), "core": 0}
    return {"leaf": f.leaf_switches, "spine": math.ceil(uplinks / (k // 2)), "core": math.ceil(uplinks / k)}


@dataclass(frozen=True)
class ReferenceCounts:
    """One row of a published SuperPOD component-count table (chapter section "How many switches?")."""

    scalable_units: int
    nodes: int
    gpus: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    node_leaf_cables: int
    leaf_spine_cables: int
    spine_core_cables: int


def b200_reference() -> tuple[ReferenceCounts, ...]:
    """The DGX B200 SuperPOD reference architecture's table "Larger DGX SuperPOD component counts"
    [nvidia2025superpodb200] (``ampere/data/tables/superpod-b200-counts.json``): SUs of 32 nodes, 8 rails,
    64-port NDR switches. A validation target of :func:`fat_tree` (the A100-era table was not retrievable).
    """
    return tuple(ReferenceCounts(**row) for row in results.table("superpod-b200-counts")["rows"])
