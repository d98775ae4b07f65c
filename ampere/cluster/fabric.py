"""The compute fabric of a DGX SuperPOD as a model you can resize: the rail-optimised fat tree.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), sections "The
SuperPOD fabric", "How big can a fat tree get?" and "Oversubscription". :func:`fat_tree` builds scalable
units (SU) of ``su_nodes`` nodes, rail-optimised wiring (NIC *r* of every node of an SU goes to leaf switch
*r* of that SU), and a fat tree of ``switch_ports``-port switches above the leaves: two levels while every
leaf can reach every spine, three beyond. The leaf count follows from the rail rule; the spine and core
counts from an explicit wiring with equal cable multiplicities (a rearrangeably non-blocking Clos network
at every tier), the one with the fewest switches. With the parameters of NVIDIA's reference architectures
it reproduces their published component tables (:mod:`.references`). :func:`switch_lower_bound` is the
counting bound; :func:`fat_tree_max_ports` the textbook limit ``2 (k/2)^L`` of an L-level tree.
Pure Python: no torch, no matplotlib. Every search is bounded (``MAX_SWITCH_PORTS``, ``MAX_RAILS``,
``MAX_DESIGNS``), so no input makes it loop without end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from .. import check, fabrics
from .. import fields as _fields
from .checks import _check_float, _check_int, _divisors
from .node import HDR_PORT_BYTES_PER_S


#: Ports of the 1U Quantum HDR switch of the DGX A100 SuperPOD (QM8700/QM8790: 40 x 200 Gb/s)
#: [nvidia2019qm87xx].
QM8790_PORTS = 40

#: The three cable tiers of a fat tree, bottom up.
TIERS: tuple[str, ...] = ("node_leaf", "leaf_spine", "spine_core")

#: Largest switch radix the sizer accepts. Real InfiniBand switches have 40 (HDR), 64 (NDR) or 144 (XDR)
#: ports; the bound keeps every search small.
MAX_SWITCH_PORTS = 512
#: Most compute rails (NICs per node) accepted; DGX systems have 8.
MAX_RAILS = 64
#: Most designs the SU-count searches may evaluate before giving up with a ValueError.
MAX_DESIGNS = 4096


@dataclass(frozen=True)
class Fabric:
    """The compute fabric of a pod, built by :func:`fat_tree`. Chapter section "The SuperPOD fabric".

    Construction (all counts follow from these parameters):

    * ``scalable_units`` SUs of ``su_nodes`` nodes are built (the first ``populated_scalable_units`` hold
      the ``nodes``); each node has ``rails`` compute ports. Leaf switch (u, r) serves rail r of SU u:
      ``su_nodes`` ports down, ``leaf_up_ports`` up (as many as down unless the tree is oversubscribed).
    * Two levels (``levels == 2``): every leaf has ``leaf_spine_links`` cables to **every** spine.
    * Three levels: leaves are grouped, in order (SU by SU, rail by rail), into pods of ``pod_leaves``;
      each pod has ``spines_per_pod`` spines and every leaf has ``leaf_spine_links`` cables to every spine
      of its pod. A spine sends up as many cables as it receives; spine j of every pod is wired to core
      group j (``cores_per_group`` cores), with the same number of cables to each core of the group.

    Equal multiplicities make every tier a rearrangeably non-blocking Clos network, so the whole tree
    carries any permutation of port-to-port traffic at the rate the leaves' uplinks allow.
    """

    nodes: int
    rails: int
    su_nodes: int
    switch_ports: int
    port_bytes_per_s: float
    optical_tiers: tuple[str, ...]
    scalable_units: int  # SUs built (leaves, cables); may exceed the populated ones, see fat_tree
    levels: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    pod_leaves: int  # leaves per pod (3 levels); all leaves (2 levels)
    pods: int
    spines_per_pod: int  # spines per pod (3 levels); all spines (2 levels)
    leaf_spine_links: int  # cables between a leaf and each spine of its pod
    cores_per_group: int  # 0 with two levels
    leaf_up_ports: int  # uplinks per leaf (= su_nodes when non-blocking)

    def __post_init__(self) -> None:
        _fields.check_annotated(self, positive=("nodes", "rails", "su_nodes", "switch_ports", "port_bytes_per_s",
                                              "scalable_units", "levels"),
                              maxima={"switch_ports": MAX_SWITCH_PORTS, "rails": MAX_RAILS, "levels": 3,
                                      "port_bytes_per_s": fabrics.MAX_BYTES_PER_S})
        unknown = [t for t in self.optical_tiers if t not in TIERS]
        if unknown:
            raise ValueError(f"optical_tiers={self.optical_tiers!r} has unknown tiers {unknown}; "
                             f"allowed: {', '.join(TIERS)}")

    @property
    def populated_scalable_units(self) -> int:
        """SUs that hold nodes: ``ceil(nodes / su_nodes)``."""
        return -(-self.nodes // self.su_nodes)

    @property
    def oversubscription(self) -> float:
        """Leaf ports down over leaf ports up: 1.0 for a non-blocking tree, 2.0 for a 2:1 taper."""
        return self.su_nodes / self.leaf_up_ports

    @property
    def end_ports(self) -> int:
        """Populated node ports on the fabric: nodes x rails (one per GPU on a DGX)."""
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
        """Bandwidth across the worst cut of the nodes into two equal halves, per direction.

        Non-blocking: half the populated ports at full rate, ``end_ports / 2 x port_bytes_per_s``
        (140 DGX A100: 560 x 25 GB/s = 14 TB/s). Oversubscribed: the cut that separates whole SUs sends
        everything through the leaves' uplinks, so the figure shrinks by ``1 / oversubscription``.
        """
        return self.end_ports / 2 * self.port_bytes_per_s * min(1.0, 1.0 / self.oversubscription)

    def leaf_of(self, node: int, rail: int) -> int:
        """Index of the leaf serving ``rail`` of ``node`` (rail-optimised: SU-major, then rail)."""
        node = check.nonneg_int("node", node, maximum=self.nodes - 1)
        rail = check.nonneg_int("rail", rail, maximum=self.rails - 1)
        return (node // self.su_nodes) * self.rails + rail

    def wiring(self, max_bundles: int = 2_000_000) -> list[tuple[str, str, int]]:
        """Every cable bundle as ``(lower end, upper end, number of cables)``.

        Names: ``node{i}.{rail}`` (a node port), ``leaf{l}``, ``spine{s}``, ``core{c}``. Used by the tests
        (ports, non-blocking, bisection by max-flow) and by the chapter's drawing. Refuses (``ValueError``)
        a fabric with more than ``max_bundles`` bundles instead of building a list that large.
        """
        limit = check.positive_int("max_bundles", max_bundles)
        if self.levels == 2:
            bundles = self.end_ports + self.leaf_switches * self.spine_switches
        else:
            bundles = (self.end_ports + self.leaf_switches * self.spines_per_pod
                       + self.spine_switches * self.cores_per_group)
        if bundles > limit:
            raise ValueError(f"max_bundles={limit}: this fabric has {bundles} cable bundles; "
                             f"allowed: a fabric with at most max_bundles bundles")
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
        built = "" if self.scalable_units == self.populated_scalable_units else \
            f" (fabric built for {self.scalable_units} SU)"
        taper = "" if self.leaf_up_ports == self.su_nodes else \
            f", leaves {self.su_nodes} down / {self.leaf_up_ports} up"
        lines = [f"{self.nodes} nodes x {self.rails} rails = {self.end_ports} ports, "
                 f"{self.populated_scalable_units} SU of {self.su_nodes}{built}, {self.switch_ports}-port switches"
                 f"{taper}",
                 f"levels {self.levels}: leaf {self.leaf_switches}, spine {self.spine_switches}, "
                 f"core {self.core_switches} (total {self.switches})",
                 f"cables node-leaf {cab['node_leaf']}, leaf-spine {cab['leaf_spine']}, "
                 f"spine-core {cab['spine_core']}; transceivers {self.transceivers}"]
        return "\n".join(lines)


def _aligned(p: int, rails: int) -> bool:
    """A pod that holds whole rail groups or whole SUs (the tie-break prefers them)."""
    return rails % p == 0 or p % rails == 0


@lru_cache(maxsize=4096)
def _design(leaves: int, up: int, rails: int, k: int) -> tuple[tuple[str, int], ...] | None:
    """Fewest-switch wiring with equal cable multiplicities for ``leaves`` leaves with ``up`` uplinks each
    (see :class:`Fabric`); ``None`` when three levels cannot do it. Cost: O(k/2 x divisors(up))."""
    if leaves <= k:  # two levels: each leaf reaches every spine; fewest spines with equal multiplicity
        d = min(d for d in _divisors(up) if leaves * (up // d) <= k)
        return (("levels", 2), ("spine_switches", d), ("core_switches", 0), ("pod_leaves", leaves), ("pods", 1),
                ("spines_per_pod", d), ("leaf_spine_links", up // d), ("cores_per_group", 0))
    half = k // 2
    best: tuple[tuple[int, bool, int, int], tuple[tuple[str, int], ...]] | None = None
    for d in _divisors(up):
        m = up // d
        for p in range(1, half // m + 1):  # a spine gives at most half its ports to its pod's leaves
            full, rest = divmod(leaves, p)
            pods = full + (1 if rest else 0)
            if pods > k:  # every core of a group needs a cable to every pod
                continue
            g = math.gcd(p * m, rest * m)  # gcd(x, 0) = x
            need = -(-leaves * m // k)  # each core receives at most k cables
            c = next((c for c in _divisors(g) if c >= need), None)
            if c is None:
                continue
            total = leaves + d * pods + d * c
            key = (total, not _aligned(p, rails), -p, d)
            if best is None or key < best[0]:
                best = (key, (("levels", 3), ("spine_switches", d * pods), ("core_switches", d * c),
                              ("pod_leaves", p), ("pods", pods), ("spines_per_pod", d), ("leaf_spine_links", m),
                              ("cores_per_group", c)))
    return None if best is None else best[1]


def _check_shape(rails: int, su_nodes: int, switch_ports: int, uplinks_per_leaf: int | None
                 ) -> tuple[int, int, int, int]:
    rails = _check_int(rails, "rails", maximum=MAX_RAILS)
    k = _check_int(switch_ports, "switch_ports", minimum=2, maximum=MAX_SWITCH_PORTS)
    su_nodes = check.integer("su_nodes", su_nodes, minimum=1)
    if su_nodes > k - 1:
        raise ValueError(f"su_nodes={su_nodes} needs leaves with more than {su_nodes} ports, got switch_ports={k}; "
                         f"allowed: su_nodes <= switch_ports - 1 = {k - 1}")
    up = su_nodes if uplinks_per_leaf is None else _check_int(uplinks_per_leaf, "uplinks_per_leaf",
                                                               maximum=su_nodes)
    if su_nodes + up > k:
        raise ValueError(
            f"switch_ports={k!r} cannot give each leaf su_nodes={su_nodes} ports down and {up} up; "
            f"allowed: switch_ports >= {su_nodes + up} (or fewer uplinks_per_leaf, an oversubscribed tree)")
    return rails, su_nodes, k, up


def two_level_max_nodes(rails: int = 8, su_nodes: int = 20, switch_ports: int = QM8790_PORTS,
                        uplinks_per_leaf: int | None = None) -> int:
    """Largest node count (whole SUs) a two-level tree serves: every leaf must reach every spine, so at
    most ``switch_ports`` leaves, ``switch_ports // rails`` SUs (DGX A100 with 40-port switches: 100 nodes;
    0 when one SU already has more leaves than a spine has ports).

    Chapter: *DGX A100 and the SuperPOD*, section "How big can a fat tree get?".
    """
    rails, su_nodes, k, _ = _check_shape(rails, su_nodes, switch_ports, uplinks_per_leaf)
    return (k // rails) * su_nodes


def _max_leaves_three_levels(k: int) -> int:
    """At most k pods (a core reaches every pod) of at most k/2 leaves (a spine's down ports)."""
    return k * (k // 2)


def three_level_max_nodes(rails: int = 8, su_nodes: int = 20, switch_ports: int = QM8790_PORTS,
                          uplinks_per_leaf: int | None = None) -> int:
    """Largest node count (whole SUs) that :func:`fat_tree` wires with at most three levels.

    Chapter: *DGX A100 and the SuperPOD*, section "How big can a fat tree get?". The leaves are bounded by
    ``k x k/2`` (``k`` pods of ``k/2`` leaves); the search walks down from there to the largest SU count
    with an equal-multiplicity wiring, evaluating at most ``MAX_DESIGNS`` candidates. With
    ``su_nodes = k/2`` it reaches the textbook ``k^3/4`` ports: 2,000 DGX A100 (16,000 HDR ports) on
    40-port switches.
    """
    rails, su_nodes, k, up = _check_shape(rails, su_nodes, switch_ports, uplinks_per_leaf)
    two = k // rails
    n_su = _max_leaves_three_levels(k) // rails
    for _ in range(MAX_DESIGNS):
        if n_su <= two:
            break
        if _design(n_su * rails, up, rails, k) is not None:
            return n_su * su_nodes
        n_su -= 1
    return max(two, 0) * su_nodes if n_su <= two else _give_up(n_su, rails, su_nodes, k)


def _give_up(n_su: int, rails: int, su_nodes: int, k: int) -> int:
    raise ValueError(f"switch_ports={k}, rails={rails}, su_nodes={su_nodes}: no three-level design found "
                     f"among {MAX_DESIGNS} candidate sizes below {n_su + MAX_DESIGNS} SUs; "
                     "allowed: a radix and SU size whose designs the search can reach")


def fat_tree_max_ports(switch_ports: int, levels: int) -> int:
    """Textbook maximum of end ports of a non-blocking fat tree of ``levels`` levels of radix-``k``
    switches: ``k`` (one switch), ``k^2/2`` (two levels), ``k^3/4`` (three): ``2 (k/2)^levels``.

    Chapter: *DGX A100 and the SuperPOD*, section "How big can a fat tree get?". A rail-optimised pod
    spends one port per GPU, so the node limit is this divided by the rails.
    """
    k = _check_int(switch_ports, "switch_ports", minimum=2, maximum=MAX_SWITCH_PORTS)
    n = _check_int(levels, "levels", minimum=1, maximum=3)
    return k if n == 1 else 2 * (k // 2) ** n


def fat_tree(nodes: int, rails: int = 8, su_nodes: int = 20, switch_ports: int = QM8790_PORTS,
             port_bytes_per_s: float = HDR_PORT_BYTES_PER_S,
             optical_tiers: Sequence[str] = TIERS, uplinks_per_leaf: int | None = None) -> Fabric:
    """The rail-optimised fat tree for ``nodes`` nodes (see :class:`Fabric`).

    Chapter: *DGX A100 and the SuperPOD*, section "The SuperPOD fabric". The fabric is built for whole
    scalable units (``ceil(nodes / su_nodes)``); a partial last SU leaves leaf ports free. Two levels are
    used while every leaf can reach every spine (at most ``switch_ports`` leaves: 100 DGX A100 on 40-port
    HDR switches); beyond that, three. Among wirings with equal cable multiplicities the one with the
    fewest switches is returned (ties: pods of whole rail groups or SUs, then larger pods). Some SU counts
    have no such three-level wiring (41 SUs of DGX A100: no pod size splits 328 leaves evenly enough); the
    fabric is then built for the SU count, among the next ``switch_ports / 2``, that needs the fewest
    switches, as NVIDIA's reference architectures build a full SU's leaves and cables for a partial one
    (``scalable_units`` then exceeds ``populated_scalable_units``). A wireable SU count is always built as
    it is, even where a few more SUs would need fewer switches (42 SUs: 1,076; 45 SUs: 920).

    ``uplinks_per_leaf`` below ``su_nodes`` builds an oversubscribed (tapered) tree: fewer spines, cores
    and cables, less bisection bandwidth (section "Oversubscription"). ``optical_tiers`` says which tiers
    use optical cables (two transceivers per cable, whether separate modules or the two ends of an active
    optical cable) -- an assumption, all tiers by default.

    Raises ``ValueError`` for ``nodes < 1``, for more nodes than three levels can wire
    (:func:`three_level_max_nodes`), for a radix that cannot give each leaf ``su_nodes`` ports down and
    its uplinks (``switch_ports < su_nodes + uplinks_per_leaf``) and for parameters out of the bounds
    (``switch_ports <= 512``, ``rails <= 64``); ``TypeError`` for non-integers.
    """
    rails, su_nodes, k, up = _check_shape(rails, su_nodes, switch_ports, uplinks_per_leaf)
    nodes = _check_int(nodes, "nodes")
    bw = _check_float(port_bytes_per_s, "port_bytes_per_s", lo_open=True, hi=fabrics.MAX_BYTES_PER_S)
    if isinstance(optical_tiers, str):
        raise TypeError(f"optical_tiers must be a sequence of tier names, got {optical_tiers!r}; "
                        f"allowed: a subset of {', '.join(TIERS)}")
    tiers = tuple(check.sequence("optical_tiers", optical_tiers, min_len=0, max_len=len(TIERS) + 1))
    unknown = [t for t in tiers if t not in TIERS]
    if unknown:
        raise ValueError(f"optical_tiers={tiers!r} has unknown tiers {unknown}; allowed: {', '.join(TIERS)}")
    # the size check comes first: nothing is searched or built for a pod that three levels cannot wire
    limit = three_level_max_nodes(rails, su_nodes, k, up)
    if nodes > limit:
        raise ValueError(
            f"nodes={nodes!r} needs more than three levels of {k}-port switches with su_nodes={su_nodes} "
            f"and rails={rails} (a core switch cannot reach every pod); allowed: at most {limit} nodes")
    n_su = -(-nodes // su_nodes)
    built, cfg = n_su, _design(n_su * rails, up, rails, k)
    if cfg is None:  # no equal-multiplicity wiring for this SU count: the cheapest of the next k/2 that have one
        best = None
        for b in range(n_su + 1, min(n_su + k // 2, limit // su_nodes) + 1):
            c = _design(b * rails, up, rails, k)
            if c is not None:
                d = dict(c)
                total = b * rails + d["spine_switches"] + d["core_switches"]
                if best is None or total < best[0]:
                    best = (total, b, c)
        if best is None:  # pragma: no cover - the SU count of limit has a design
            raise ValueError(f"nodes={nodes!r}: no design found up to {limit} nodes; allowed: at most {limit}")
        _, built, cfg = best
    return Fabric(nodes=nodes, rails=rails, su_nodes=su_nodes, switch_ports=k, port_bytes_per_s=bw,
                  optical_tiers=tiers, scalable_units=built, leaf_switches=built * rails, leaf_up_ports=up,
                  **dict(cfg))


def switch_lower_bound(nodes: int, rails: int = 8, su_nodes: int = 20, switch_ports: int = QM8790_PORTS,
                       uplinks_per_leaf: int | None = None) -> dict[str, int]:
    """Fewest switches any tree with this leaf layer can have, by counting ports alone.

    Chapter: *DGX A100 and the SuperPOD*, section "How many switches?". Leaves are fixed by the rail rule
    (populated SUs only); every leaf uplink needs a spine port, and with three levels a spine gives only
    half its ports to the leaves; every spine uplink needs a core port. The wiring of :func:`fat_tree`
    may need more, because it insists on equal cable multiplicities (the condition that makes it
    non-blocking) and on SU counts that such a wiring exists for.
    """
    f = fat_tree(nodes, rails, su_nodes, switch_ports, uplinks_per_leaf=uplinks_per_leaf)
    leaves = f.populated_scalable_units * f.rails
    uplinks = leaves * f.leaf_up_ports
    k = f.switch_ports
    if leaves <= k:
        return {"leaf": leaves, "spine": math.ceil(uplinks / k), "core": 0}
    return {"leaf": leaves, "spine": math.ceil(uplinks / (k // 2)), "core": math.ceil(uplinks / k)}
