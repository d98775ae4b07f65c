"""DGX A100 and the DGX SuperPOD as data: the node, the fabric, the peaks, the power and the money.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb).

What this module models, and where each number comes from
---------------------------------------------------------

* :func:`dgx_a100` -- one DGX A100 node as a dataclass. GPU figures are read from :mod:`ampere.specs`;
  the system figures (NVSwitches, CPUs, host memory, NVMe, NICs, 6.5 kW) carry the bib key of the
  document they were read in (``DGXNode.sources``).
* :func:`fat_tree` -- the compute fabric of a DGX SuperPOD as a **model you can resize**: scalable
  units (SU) of ``su_nodes`` nodes, rail-optimised wiring (NIC *r* of every node of an SU goes to leaf
  switch *r* of that SU), and a non-blocking fat tree of ``switch_ports``-port switches above the leaves.
  The leaf count follows from the rail rule; the spine and core counts are **derived by this model**
  (the per-tier counts of NVIDIA's DGX A100 reference architecture were not retrievable, see the
  chapter). :func:`fat_tree` builds an explicit wiring with equal cable multiplicities (a
  rearrangeably non-blocking Clos network at every tier) and picks, among such wirings, the one with
  the fewest switches. It reproduces the published counts of the DGX B200 SuperPOD reference
  architecture [nvidia2025superpodb200] exactly (:func:`b200_reference`, :func:`validate`).
* :func:`superpod` -- node + fabric + power: ``superpod(nodes=140)`` is the reference 140-node
  SuperPOD (1,120 GPUs) [nvidia2020superpod].
* :func:`selene` -- NVIDIA's Selene on the TOP500 and Green500 lists [top500selene], with helpers that
  compare Rmax and Rpeak with the GPUs' FP64 peak.
* :func:`pod_all_reduce` -- the hierarchical all-reduce of gradients across a pod, computed with the
  collective model of :mod:`ampere.collectives` on the node network of :mod:`ampere.fabrics`.
* Money: the 8-GPU cloud offers of :mod:`ampere.pricing` (:func:`cloud_offers`), :class:`Ownership` (owning a
  DGX, every assumption an input), :func:`throughput_gap_cost` (what an 8-12 % throughput gap between
  a deployment and NVIDIA's reference architecture costs [seed004]).
* :func:`mlperf` -- MLPerf Training results of the A100 era (and one H100 score) with their sources.

Published figures (HPL, MLPerf, the B200 counts table, cloud prices) are data in ``ampere/data``; this
module reads them and never types them.

Units: SI in every name (``*_bytes_per_s``, ``*_w``, ``*_usd``). GB = 1e9 B, TB = 1e12 B. Bandwidths are
**per direction** unless a name says ``bidirectional``. FLOP/s are dense unless ``sparse=True``.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence

from . import check, collectives, fabrics, pricing, results, specs

__all__ = [
    "HDR_PORT_BYTES_PER_S", "QM8790_PORTS", "SWITCH_POWER_W_ASSUMED", "TIERS", "DGX_A100_MAX_POWER_W",
    "DGX_A100_320GB_LIST_PRICE_USD",
    "DGXNode", "dgx_a100", "Fabric", "fat_tree", "switch_lower_bound", "SuperPOD", "superpod",
    "scaling_table", "ReferenceCounts", "b200_reference", "validate",
    "Top500Entry", "selene", "green500_top", "EPYC_7742_FP64_FLOP_PER_CYCLE",
    "GRADIENT_MODELS", "pod_all_reduce", "rail_all_reduce", "all_reduce_scaling",
    "two_level_max_nodes", "three_level_max_nodes",
    "cloud_offers", "Ownership", "ownership_usd_per_gpu_hour",
    "break_even_utilization", "training_time_s", "training_energy_j", "GapCost", "throughput_gap_cost", "mlperf",
    "HOURS_PER_YEAR", "HOURS_PER_WEEK", "plot_topology",
]

HOURS_PER_WEEK = 168.0
HOURS_PER_YEAR = 365.25 * 24.0

#: InfiniBand HDR: 200 Gb/s per port = 25 GB/s per direction (the value of :mod:`ampere.fabrics`).
HDR_PORT_BYTES_PER_S = fabrics.IB_HDR_BYTES_PER_S
#: Ports of the 1U Quantum HDR switch of the DGX A100 SuperPOD (QM8700/QM8790: 40 x 200 Gb/s)
#: [nvidia2019qm87xx].
QM8790_PORTS = 40
#: Power of one 40-port HDR switch with its optics, in watts. An **assumption of this chapter** (order of
#: magnitude of a 1U switch; we found no datasheet figure to cite): pass ``switch_power_w`` to change it.
#: Switches are a few per cent of a pod's power, so the conclusions do not hang on it.
SWITCH_POWER_W_ASSUMED = 400.0
#: Maximum system power of a DGX A100 (both memory sizes), in watts [nvidia2020dgxa100wp].
DGX_A100_MAX_POWER_W = 6500.0  # source: nvidia2020dgxa100wp
#: Launch list price of the DGX A100 320GB, US dollars [anandtech2020ampere].
DGX_A100_320GB_LIST_PRICE_USD = 199_000.0  # source: anandtech2020ampere
#: The three cable tiers of a fat tree, bottom up.
TIERS: tuple[str, ...] = ("node_leaf", "leaf_spine", "spine_core")


# --------------------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------------------

def _check_int(value: Any, name: str, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (NumPy integers accepted; bools, floats and strings refused): ampere.check."""
    return check.integer(name, value, minimum=minimum)


def _check_float(value: Any, name: str, lo: float = 0.0, hi: float | None = None,
                 lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite number in the interval given (open or closed ends), via ampere.check."""
    v = check.real(name, value)
    bad = v < lo or (lo_open and v == lo) or (hi is not None and (v > hi or (hi_open and v == hi)))
    if bad:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        raise ValueError(f"{name}={value!r} must lie in {left}{lo:g}, {f'{hi:g}' if hi is not None else 'inf'}{right}")
    return v


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


# --------------------------------------------------------------------------------------------------------
# The DGX A100 node
# --------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DGXNode:
    """One DGX A100 as data. Chapter section "One box". Fields carry SI units; ``sources`` cite them."""

    name: str  # "DGX A100 320GB" (8 x A100 40GB) or "DGX A100 640GB" (8 x A100 80GB)
    gpu: specs.GPUSpec  # the GPU, from ampere.specs
    gpus: int  # A100 SXM4 modules per node
    nvswitches: int  # second-generation NVSwitch chips on the GPU baseboard
    cpu_model: str
    cpu_sockets: int
    cpu_cores_per_socket: int
    cpu_base_clock_hz: float
    host_memory_bytes: float  # system DRAM of the standard configuration
    os_storage_bytes: float  # 2 x 1.92 TB M.2 NVMe for the OS
    data_storage_bytes: float  # internal U.2 NVMe for data and cache
    compute_nics: int  # single-port ConnectX-6 HDR adapters of the compute fabric, one per GPU
    compute_port_bytes_per_s: float  # per port, per direction (HDR: 25 GB/s)
    other_nic_ports: int  # ports of the dual-port ConnectX-6 cards for storage and in-band management
    max_power_w: float  # maximum system power
    rack_units: int
    list_price_usd: float | None  # launch list price where one was published
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)  # field -> bib key
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))

    # --- derived -----------------------------------------------------------------------------------------
    @property
    def cpu_cores(self) -> int:
        return self.cpu_sockets * self.cpu_cores_per_socket

    @property
    def gpu_memory_bytes(self) -> float:
        return self.gpus * self.gpu.memory_bytes

    @property
    def nics(self) -> int:
        """Network adapters: the compute NICs plus the dual-port cards (2 ports each)."""
        return self.compute_nics + self.other_nic_ports // 2

    def peak_flops(self, precision: str, sparse: bool = False) -> float:
        """Node peak in FLOP/s: ``gpus x GPUSpec.peak_flops`` (dense unless ``sparse=True``)."""
        return self.gpus * self.gpu.peak_flops(precision, sparse)

    @property
    def nvlink_bytes_per_s_per_gpu(self) -> float:
        """NVLink line rate of one GPU, per direction (A100: 12 links x 25 GB/s = 300 GB/s)."""
        return fabrics.nvlink_bytes_per_s_per_direction(self.gpu)

    @property
    def nvlink_effective_bytes_per_s_per_gpu(self) -> float:
        """What NCCL can use of it, per direction (128-byte payload efficiency; about 240 GB/s)."""
        return fabrics.nvlink_effective_bytes_per_s(self.gpu)

    @property
    def nvswitch_fabric_bytes_per_s_bidirectional(self) -> float:
        """All GPUs' NVLink bandwidth together, both directions: 8 x 600 GB/s = 4.8 TB/s."""
        return self.gpus * self.gpu.nvlink_bytes_per_s

    @property
    def nvlinks_per_gpu_per_nvswitch(self) -> float:
        """Each GPU spreads its links evenly over the NVSwitches: 12 / 6 = 2 links to each."""
        return self.gpu.nvlink_links / self.nvswitches

    @property
    def network(self) -> fabrics.NodeNetwork:
        """The node's network as :mod:`ampere.fabrics` data (NVLink domain, compute HCAs, latencies)."""
        return fabrics.node_network(self.gpu, self.gpus, self.compute_nics, self.compute_port_bytes_per_s,
                                    name=self.name)

    @property
    def inter_node_bytes_per_s(self) -> float:
        """Compute-fabric bandwidth of the node, per direction (8 x 25 GB/s = 200 GB/s)."""
        return self.network.inter_bytes_per_s

    @property
    def inter_node_bytes_per_s_per_gpu(self) -> float:
        return self.network.inter_bytes_per_s_per_gpu

    @property
    def intra_to_inter_ratio(self) -> float:
        """NVLink line rate per GPU over InfiniBand per GPU (both per direction): 300 / 25 = 12."""
        return self.nvlink_bytes_per_s_per_gpu / self.inter_node_bytes_per_s_per_gpu

    @property
    def gpu_power_fraction(self) -> float:
        """Share of the node's maximum power that the GPUs' TDP accounts for (8 x 400 W / 6.5 kW)."""
        return self.gpus * self.gpu.tdp_w / self.max_power_w

    def source(self, field_name: str) -> str:
        """Bib key for a field (``"*"`` is the default document)."""
        if field_name != "*" and field_name not in self.__dataclass_fields__:
            raise ValueError(f"field_name={field_name!r} is not a DGXNode field; "
                             f"allowed: '*' or {sorted(self.__dataclass_fields__)}")
        return self.sources.get(field_name, self.sources["*"])


_DGX_GPUS = ("A100-SXM4-40GB", "A100-SXM4-80GB")


def dgx_a100(gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> DGXNode:
    """The standard DGX A100 built on ``gpu`` (A100-SXM4-40GB -> "DGX A100 320GB", 80GB -> "640GB").

    Chapter: *DGX A100 and the SuperPOD*, section "One box". The 320GB system is described by the DGX A100
    system architecture white paper [nvidia2020dgxa100wp] (1 TB DDR4, 15 TB of U.2 NVMe, eight single-port
    ConnectX-6 for the compute fabric plus one dual-port ConnectX-6 for storage and management: the seed's
    "nine NICs"); the 640GB system by the later datasheet [nvidia2020dgxa100ds] (2 TB, 30 TB, two
    dual-port cards), which NVIDIA's own MLPerf v1.0 system description confirms
    [mlcommons2021training]. NVIDIA's MLPerf v0.7 nodes, with 40 GB GPUs, already had 2 TB
    [mlcommons2020training]: host memory was a configuration choice.
    """
    spec = specs.get(gpu)
    if spec.name not in _DGX_GPUS:
        raise ValueError(f"gpu={spec.name!r}: a DGX A100 holds A100 SXM4 modules; allowed: {', '.join(_DGX_GPUS)}")
    big = spec.name == "A100-SXM4-80GB"
    sources = {"*": "nvidia2020dgxa100wp", "gpu": spec.source("peak_flops"),
               "compute_port_bytes_per_s": "nvidia2020superpod",
               "list_price_usd": "anandtech2020ampere"}
    if big:
        sources.update({"host_memory_bytes": "nvidia2020dgxa100ds", "data_storage_bytes": "nvidia2020dgxa100ds",
                        "other_nic_ports": "nvidia2020dgxa100ds"})
    return DGXNode(
        name="DGX A100 640GB" if big else "DGX A100 320GB", gpu=spec, gpus=8, nvswitches=6,
        cpu_model="AMD EPYC 7742", cpu_sockets=2, cpu_cores_per_socket=64, cpu_base_clock_hz=2.25e9,
        host_memory_bytes=2e12 if big else 1e12, os_storage_bytes=2 * 1.92e12,
        data_storage_bytes=30e12 if big else 15e12, compute_nics=8,
        compute_port_bytes_per_s=HDR_PORT_BYTES_PER_S, other_nic_ports=4 if big else 2,
        max_power_w=DGX_A100_MAX_POWER_W, rack_units=6,
        # 320GB: $199,000 at launch [anandtech2020ampere]; 640GB: no list price found in our sources.
        list_price_usd=None if big else DGX_A100_320GB_LIST_PRICE_USD,
        sources=sources,
        notes=("Power, NVSwitch count, CPUs and compute NICs are the same for both memory sizes.",),
    )


# --------------------------------------------------------------------------------------------------------
# The fabric: rail-optimised, non-blocking fat tree
# --------------------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------------------
# The SuperPOD: nodes + fabric + power
# --------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SuperPOD:
    """A DGX SuperPOD of ``fabric.nodes`` DGX A100 (chapter section "The SuperPOD as a model")."""

    node: DGXNode
    fabric: Fabric
    switch_power_w: float  # per switch, an assumption (SWITCH_POWER_W_ASSUMED)

    @property
    def nodes(self) -> int:
        return self.fabric.nodes

    @property
    def gpus(self) -> int:
        return self.nodes * self.node.gpus

    @property
    def scalable_units(self) -> int:
        return self.fabric.scalable_units

    @property
    def leaf_switches(self) -> int:
        return self.fabric.leaf_switches

    @property
    def spine_switches(self) -> int:
        return self.fabric.spine_switches

    @property
    def core_switches(self) -> int:
        return self.fabric.core_switches

    @property
    def switches(self) -> int:
        return self.fabric.switches

    @property
    def cables(self) -> dict[str, int]:
        return self.fabric.cables

    @property
    def transceivers(self) -> int:
        return self.fabric.transceivers

    @property
    def bisection_bytes_per_s(self) -> float:
        """Per direction, across any halving of the nodes (see :attr:`Fabric.bisection_bytes_per_s`)."""
        return self.fabric.bisection_bytes_per_s

    @property
    def node_power_w(self) -> float:
        return self.nodes * self.node.max_power_w

    @property
    def fabric_power_w(self) -> float:
        return self.switches * self.switch_power_w

    @property
    def power_w(self) -> float:
        """Maximum IT power of the compute nodes plus the compute fabric (storage and management
        networks, storage servers and cooling are not included)."""
        return self.node_power_w + self.fabric_power_w

    def peak_flops(self, precision: str, sparse: bool = False) -> float:
        """Pod peak in FLOP/s: GPUs x ``GPUSpec.peak_flops`` (dense unless ``sparse=True``)."""
        return self.gpus * self.node.gpu.peak_flops(precision, sparse)

    @property
    def gpu_memory_bytes(self) -> float:
        return self.nodes * self.node.gpu_memory_bytes

    def summary(self) -> str:
        pf = 1e15
        return "\n".join([
            f"{self.nodes} x {self.node.name} = {self.gpus} GPUs in {self.scalable_units} SU",
            self.fabric.summary(),
            f"peak FP16 tensor: {self.peak_flops('fp16') / pf:.1f} PFLOP/s dense, "
            f"{self.peak_flops('fp16', sparse=True) / pf:.1f} sparse; FP64 tensor "
            f"{self.peak_flops('fp64_tc') / pf:.1f}",
            f"bisection {self.bisection_bytes_per_s / 1e12:.1f} TB/s per direction; power "
            f"{self.power_w / 1e3:.0f} kW (nodes {self.node_power_w / 1e3:.0f}, switches "
            f"{self.fabric_power_w / 1e3:.1f})",
        ])


def superpod(nodes: int = 140, gpu: str | specs.GPUSpec = "A100-SXM4-80GB", switch_ports: int = QM8790_PORTS,
             su_nodes: int = 20, switch_power_w: float = SWITCH_POWER_W_ASSUMED,
             optical_tiers: Sequence[str] = TIERS) -> SuperPOD:
    """A DGX SuperPOD of ``nodes`` DGX A100 (default: the 140-node reference design, 1,120 GPUs).

    Chapter: *DGX A100 and the SuperPOD*, section "The SuperPOD as a model you can resize". SUs of
    ``su_nodes`` = 20 nodes [nvidia2020superpod], one compute rail per GPU, a non-blocking fat tree of
    ``switch_ports``-port HDR switches built by :func:`fat_tree`. ``nodes < 1`` or a radix that cannot
    build the tree raise ``ValueError``.
    """
    node = dgx_a100(gpu)
    fabric = fat_tree(nodes, rails=node.compute_nics, su_nodes=su_nodes, switch_ports=switch_ports,
                      port_bytes_per_s=node.compute_port_bytes_per_s, optical_tiers=optical_tiers)
    power = _check_float(switch_power_w, "switch_power_w")
    return SuperPOD(node=node, fabric=fabric, switch_power_w=power)


def scaling_table(node_counts: Iterable[int], **kwargs: Any) -> list[dict[str, Any]]:
    """One row per node count: GPUs, SUs, levels, switch counts, lower bound, cables, transceivers,
    bisection (per direction) and power. Chapter section "From 20 to 560 nodes"."""
    rows = []
    for n in node_counts:
        pod = superpod(n, **kwargs)
        lb = switch_lower_bound(n, pod.fabric.rails, pod.fabric.su_nodes, pod.fabric.switch_ports)
        rows.append({"nodes": pod.nodes, "gpus": pod.gpus, "su": pod.scalable_units, "levels": pod.fabric.levels,
                     "leaf": pod.leaf_switches, "spine": pod.spine_switches, "core": pod.core_switches,
                     "switches": pod.switches, "lower_bound": sum(lb.values()),
                     "cables": pod.fabric.cables_total, "transceivers": pod.transceivers,
                     "bisection_bytes_per_s": pod.bisection_bytes_per_s, "power_w": pod.power_w})
    return rows


# --------------------------------------------------------------------------------------------------------
# Selene on the TOP500 and Green500
# --------------------------------------------------------------------------------------------------------

#: FP64 FLOP per cycle per core of an AMD Zen 2 core (two 256-bit FMA pipes: 2 x 4 x 2). An assumption
#: of this chapter used only to split Selene's Rpeak between CPUs and GPUs.
EPYC_7742_FP64_FLOP_PER_CYCLE = 16


@dataclass(frozen=True)
class Top500Entry:
    """One listing of a DGX A100 system (chapter section "Selene on the TOP500")."""

    system: str
    list_name: str  # "TOP500 June 2020"
    nodes: int
    rmax_flops: float  # HPL result
    rpeak_flops: float | None  # theoretical peak declared in the list (None: not retrieved)
    power_w: float | None  # power during the HPL run
    top500_rank: int | None
    green500_rank: int | None
    green500_flops_per_w: float | None  # as published (None: derive from rmax / power)
    source: str
    gpus_per_node: int = 8

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    def gpu_fp64_peak_flops(self, gpu: str = "A100-SXM4-80GB") -> float:
        """GPUs x FP64 tensor-core peak at the boost clock (19.5 TFLOP/s each; same for 40 and 80 GB)."""
        return self.gpus * specs.get(gpu).peak_flops("fp64_tc")

    def cpu_fp64_peak_flops(self, flop_per_cycle: int = EPYC_7742_FP64_FLOP_PER_CYCLE) -> float:
        node = dgx_a100("A100-SXM4-40GB")
        return self.nodes * node.cpu_cores * node.cpu_base_clock_hz * flop_per_cycle

    @property
    def hpl_efficiency(self) -> float | None:
        """Rmax / Rpeak, as the list defines efficiency."""
        return None if self.rpeak_flops is None else self.rmax_flops / self.rpeak_flops

    def fraction_of_gpu_peak(self, gpu: str = "A100-SXM4-80GB") -> float:
        """Rmax over the GPUs' FP64 tensor-core peak at boost clock."""
        return self.rmax_flops / self.gpu_fp64_peak_flops(gpu)

    def implied_gpu_clock_hz(self, include_cpus: bool = True, gpu: str = "A100-SXM4-80GB") -> float | None:
        """The GPU clock that would make ``GPUs x FP64-tensor rate x clock (+ CPU peak)`` equal Rpeak.

        An inference, not a published figure: the basis of the declared Rpeak is not documented.
        """
        if self.rpeak_flops is None:
            return None
        spec = specs.get(gpu)
        gpu_part = self.rpeak_flops - (self.cpu_fp64_peak_flops() if include_cpus else 0.0)
        per_clock = self.gpus * spec.sm_count * spec.fma_per_clk_per_sm["fp64_tc"] * 2
        return gpu_part / per_clock

    @property
    def flops_per_w(self) -> float | None:
        """Green500 metric: the published value, else Rmax / power."""
        if self.green500_flops_per_w is not None:
            return self.green500_flops_per_w
        return None if self.power_w is None else self.rmax_flops / self.power_w

    @property
    def reported_cores(self) -> int:
        """TOP500 "cores" of a DGX A100 system: CPU cores + GPU SMs (128 + 8 x 108 = 992 per node)."""
        node = dgx_a100("A100-SXM4-40GB")
        return self.nodes * (node.cpu_cores + self.gpus_per_node * node.gpu.sm_count)


def selene() -> tuple[Top500Entry, ...]:
    """Selene in the TOP500 lists of June and November 2020 [top500selene], from the HPL records of
    ``ampere/data/published/hpl.json``. Chapter section "Selene on the TOP500"."""
    out = []
    for r in results.records(benchmark="hpl", kind="published"):
        if not r.gpu.startswith("Selene"):
            continue
        f, p = r.figures, r.params
        out.append(Top500Entry(
            "Selene", p["list"], nodes=p["nodes"], rmax_flops=f["rmax_pflop_per_s"] * 1e15,
            rpeak_flops=f["rpeak_pflop_per_s"] * 1e15 if "rpeak_pflop_per_s" in f else None,
            power_w=f["power_kw"] * 1e3 if "power_kw" in f else None, top500_rank=p.get("top500_rank"),
            green500_rank=p.get("green500_rank"),
            green500_flops_per_w=f["efficiency_gflop_per_w"] * 1e9 if "efficiency_gflop_per_w" in f else None,
            source=r.source))
    return tuple(sorted(out, key=lambda e: e.nodes))


def green500_top() -> "results.Record":
    """Rank 1 of the Green500, November 2020: a smaller "NVIDIA DGX SuperPOD" [green5002020nov] (its node
    count is not used here, see the chapter's exercise)."""
    return next(r for r in results.records(benchmark="hpl", kind="published") if r.id == "green500-2020-11-rank1")


# --------------------------------------------------------------------------------------------------------
# All-reduce across the pod (the collective model of ampere.collectives on ampere.fabrics networks)
# --------------------------------------------------------------------------------------------------------

#: Parameter counts of models whose gradients the chapter all-reduces: (name, parameters, bib key).
GRADIENT_MODELS: tuple[tuple[str, float, str], ...] = tuple(
    (r["model"], float(r["params"]), r["source"]) for r in results.table("gradient-models")["rows"])


def pod_all_reduce(params: float, nodes: int, bytes_per_param: float = 2.0,
                   network: fabrics.NodeNetwork = fabrics.DGX_A100,
                   inter_algorithm: str = "ring") -> collectives.AllReducePhases:
    """Hierarchical all-reduce of ``params`` gradients (``bytes_per_param`` each) over ``nodes`` nodes.

    Chapter: *DGX A100 and the SuperPOD*, section "All-reduce across the pod". Delegates to
    :func:`ampere.collectives.hierarchical_all_reduce_breakdown` (reduce-scatter over NVSwitch, one
    all-reduce per rail over InfiniBand, all-gather over NVSwitch) on ``network`` (default: DGX A100
    of :mod:`ampere.fabrics`). Returns the phases (:class:`ampere.collectives.AllReducePhases`).
    """
    p = check.positive("params", params)
    b = check.positive("bytes_per_param", bytes_per_param)
    if not isinstance(network, fabrics.NodeNetwork):
        raise TypeError(f"network must be an ampere.fabrics.NodeNetwork, got {network!r}")
    return collectives.hierarchical_all_reduce_breakdown(
        p * b, nodes, network.gpus_per_node, network.intra_bytes_per_s, network.inter_bytes_per_s,
        network.intra_latency_s, network.inter_latency_s, inter_algorithm)


def rail_all_reduce(size_bytes: float, nodes: int, algorithm: str = "ring") -> float:
    """Time (s) of an all-reduce of ``size_bytes`` among one GPU per node, over that GPU's own rail.

    Chapter: *DGX A100 and the SuperPOD*, section "All-reduce across the pod": with 8-way tensor
    parallelism inside each node, GPU r of every node holds the same shard, and its data-parallel
    all-reduce runs over rail r alone (one HDR port, 25 GB/s per direction); the 8 rails work at once.
    Uses :func:`ampere.collectives.collective_time` with the inter-node latency of :mod:`ampere.fabrics`.
    """
    return collectives.collective_time("all_reduce", size_bytes, check.positive_int("nodes", nodes),
                                       HDR_PORT_BYTES_PER_S, fabrics.INTER_LATENCY_S, algorithm)


def all_reduce_scaling(node_counts: Iterable[int], models: Sequence[tuple[str, float, str]] = GRADIENT_MODELS,
                       bytes_per_param: float = 2.0, inter_algorithm: str = "ring") -> list[dict[str, Any]]:
    """Rows ``{model, nodes, size_bytes, total_s, inter_s, busbw_bytes_per_s}`` for each model and node
    count. ``busbw`` is nccl-tests' bus bandwidth of the whole all-reduce over nodes x 8 GPUs."""
    rows = []
    for name, params, _key in models:
        for n in node_counts:
            r = pod_all_reduce(params, n, bytes_per_param, inter_algorithm=inter_algorithm)
            rows.append({"model": name, "nodes": n, "size_bytes": r.size_bytes, "total_s": r.total_s,
                         "inter_s": r.inter_all_reduce_s, "busbw_bytes_per_s": r.busbw_bytes_per_s})
    return rows


# --------------------------------------------------------------------------------------------------------
# Power, energy and money
# --------------------------------------------------------------------------------------------------------

def cloud_offers() -> tuple[pricing.PriceQuote, ...]:
    """The 8-GPU A100 cloud instances the chapter prices against (section "Renting"): the seed article's
    table, "public indicative prices, 2023, on demand, US" [seed000], read from :mod:`ampere.pricing`.
    Prices change; every function here takes the price as an argument."""
    return pricing.quotes(source="seed000", gpus=8)


@dataclass(frozen=True)
class Ownership:
    """Assumptions of the cost of owning one DGX A100 (chapter section "Owning"). Every field is an input.

    Defaults: the launch price [anandtech2020ampere] (the seed says "about $200,000" [seed001]), straight-
    line amortisation over 4 years, 6.5 kW maximum [nvidia2020dgxa100wp] of which 70 % on average while
    busy, $0.10 per kWh, a PUE of 1.4 and no other operating cost. The last four are assumptions.
    """

    capex_usd: float = DGX_A100_320GB_LIST_PRICE_USD
    lifetime_years: float = 4.0
    max_power_w: float = DGX_A100_MAX_POWER_W
    busy_power_fraction: float = 0.7  # average power while busy / maximum power
    electricity_usd_per_kwh: float = 0.10
    pue: float = 1.4  # facility power / IT power
    opex_usd_per_year: float = 0.0  # support contract, hosting, staff
    gpus: int = 8

    def __post_init__(self) -> None:
        _check_float(self.capex_usd, "capex_usd")
        _check_float(self.lifetime_years, "lifetime_years", lo_open=True)
        _check_float(self.max_power_w, "max_power_w")
        _check_float(self.busy_power_fraction, "busy_power_fraction", 0.0, 1.0)
        _check_float(self.electricity_usd_per_kwh, "electricity_usd_per_kwh")
        _check_float(self.pue, "pue", 1.0)
        _check_float(self.opex_usd_per_year, "opex_usd_per_year")
        _check_int(self.gpus, "gpus")

    @property
    def fixed_usd_per_hour(self) -> float:
        """Amortisation plus fixed operating cost, per wall-clock hour of the node."""
        return self.capex_usd / (self.lifetime_years * HOURS_PER_YEAR) + self.opex_usd_per_year / HOURS_PER_YEAR

    @property
    def energy_usd_per_busy_hour(self) -> float:
        """Electricity of one busy hour of the node, facility overhead (PUE) included."""
        return self.max_power_w * self.busy_power_fraction * self.pue / 1e3 * self.electricity_usd_per_kwh


def ownership_usd_per_gpu_hour(own: Ownership = Ownership(), utilization: float = 0.8) -> float:
    """Cost of one *busy* GPU-hour on an owned DGX A100 busy a fraction ``utilization`` of the time.

    Chapter: *DGX A100 and the SuperPOD*, section "Owning". Fixed costs accrue every hour; energy only
    while busy (idle power is neglected): ``(fixed / u + energy) / gpus``.
    """
    u = _check_float(utilization, "utilization", 0.0, 1.0, lo_open=True)
    return (own.fixed_usd_per_hour / u + own.energy_usd_per_busy_hour) / own.gpus


def break_even_utilization(cloud_usd_per_gpu_hour: float, own: Ownership = Ownership()) -> float:
    """Utilisation above which owning is cheaper per busy GPU-hour than renting at the given price.

    Solves ``ownership_usd_per_gpu_hour(own, u) = price``. Returns ``inf`` when even energy alone costs
    more than the cloud; a value above 1 means renting always wins.
    """
    price = _check_float(cloud_usd_per_gpu_hour, "cloud_usd_per_gpu_hour", lo_open=True)
    margin = price * own.gpus - own.energy_usd_per_busy_hour
    return float("inf") if margin <= 0 else own.fixed_usd_per_hour / margin


def training_time_s(params: float, tokens: float, gpus: int, achieved_flops_per_gpu: float,
                    flop_per_param_token: float = 8.0) -> float:
    """End-to-end training time ``flop_per_param_token x T x P / (n X)`` [narayanan2021megatron].

    Chapter: *DGX A100 and the SuperPOD*, section "Energy of a training run". 8 = 2 (forward) + 4
    (backward) + 2 (recomputed forward) FLOPs per parameter and token; use 6 without recomputation.
    """
    p = _check_float(params, "params", lo_open=True)
    t = _check_float(tokens, "tokens", lo_open=True)
    n = _check_int(gpus, "gpus")
    x = _check_float(achieved_flops_per_gpu, "achieved_flops_per_gpu", lo_open=True)
    f = _check_float(flop_per_param_token, "flop_per_param_token", lo_open=True)
    return f * t * p / (n * x)


def training_energy_j(nodes: int, seconds: float, power_per_node_w: float = DGX_A100_MAX_POWER_W,
                      pue: float = 1.0) -> float:
    """Energy in joules of ``nodes`` nodes drawing ``power_per_node_w`` for ``seconds`` (x PUE)."""
    n = _check_int(nodes, "nodes")
    s = _check_float(seconds, "seconds")
    p = _check_float(power_per_node_w, "power_per_node_w")
    q = _check_float(pue, "pue", 1.0)
    return n * p * s * q


@dataclass(frozen=True)
class GapCost:
    """What a throughput gap costs (chapter section "The reference-architecture gap")."""

    gap: float
    gpus: int
    usd_per_gpu_hour: float
    lost_gpu_hours_per_week: float  # capacity that produced nothing: gpus x 168 h x gap
    lost_cluster_hours_per_week: float  # the same, in hours of the whole cluster: 168 h x gap
    extra_time_fraction: float  # to finish the same work: gap / (1 - gap) more time
    usd_per_week: float
    usd_per_year: float


def throughput_gap_cost(gap: float, gpus: int = 1000, usd_per_gpu_hour: float | None = None) -> GapCost:
    """The reference-architecture gap calculator: a cluster delivering ``1 - gap`` of the throughput of
    an identical, well-configured one [seed004].

    Chapter: *DGX A100 and the SuperPOD*, section "The reference-architecture gap". The lost capacity is
    ``gpus x hours x gap`` GPU-hours, valued at ``usd_per_gpu_hour`` (default: the seed's p4d price per
    GPU, 2023). To finish a fixed amount of work the run lasts ``1 / (1 - gap)`` times longer.
    """
    g = _check_float(gap, "gap", 0.0, 1.0, hi_open=True)
    n = _check_int(gpus, "gpus")
    if usd_per_gpu_hour is None:
        usd_per_gpu_hour = pricing.quote("seed000-aws-p4d").usd_per_gpu_hour
    price = _check_float(usd_per_gpu_hour, "usd_per_gpu_hour")
    lost = n * HOURS_PER_WEEK * g
    return GapCost(gap=g, gpus=n, usd_per_gpu_hour=price, lost_gpu_hours_per_week=lost,
                   lost_cluster_hours_per_week=HOURS_PER_WEEK * g, extra_time_fraction=g / (1 - g),
                   usd_per_week=lost * price, usd_per_year=lost * price * HOURS_PER_YEAR / HOURS_PER_WEEK)


# --------------------------------------------------------------------------------------------------------
# MLPerf Training in the A100 era
# --------------------------------------------------------------------------------------------------------

def mlperf(round_: str | None = None, benchmark: str | None = None, gpu: str | None = None
           ) -> list["results.Record"]:
    """Published MLPerf Training figures of ``ampere/data/published/mlperf.json``, filtered by round
    ("v0.7", ...), MLPerf benchmark ("BERT", ...) and GPU. Chapter section "MLPerf in the A100 era".

    The A100 rounds come from NVIDIA's technical blogs (max-scale and per-accelerator records, "up to"
    gains between rounds); the H100 row is an official single-node score.
    """
    rows = results.records(benchmark="mlperf-training", kind="published", gpu=gpu)
    if round_ is not None:
        rounds = sorted({r.params.get("round") for r in rows})
        check.one_of("round_", round_, rounds)
        rows = [r for r in rows if r.params.get("round") == round_]
    if benchmark is not None:
        rows = [r for r in rows if r.params.get("benchmark") == benchmark]
    return rows


# --------------------------------------------------------------------------------------------------------
# Validation against published figures (python -m ampere validate cluster)
# --------------------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------------------
# Presentation helpers for the chapter
# --------------------------------------------------------------------------------------------------------

def plot_topology(ax: Any, fabric: Fabric) -> None:
    """Draw ``fabric`` (nodes at the bottom, then leaves, spines, cores); node cables coloured by rail,
    switch-to-switch bundles drawn once with their cable count. Chapter section "The SuperPOD fabric".
    Meant for one or two SUs; larger fabrics are refused (``ValueError``)."""
    if fabric.nodes > 40:
        raise ValueError(f"fabric.nodes={fabric.nodes} is too many to draw; allowed: at most 40")
    import matplotlib.pyplot as plt

    rail_colors = plt.get_cmap("tab10")
    levels = {"node": fabric.nodes, "leaf": fabric.leaf_switches, "spine": fabric.spine_switches,
              "core": fabric.core_switches}
    y = {"node": 0.0, "leaf": 1.0, "spine": 2.0, "core": 3.0}

    def x(tier: str, i: int) -> float:
        n = levels[tier]
        return (i + 0.5) / n

    def parse(name: str) -> tuple[str, int, int]:
        tier = "".join(ch for ch in name.split(".")[0] if ch.isalpha())
        body = name[len(tier):]
        idx, _, rail = body.partition(".")
        return tier, int(idx), int(rail) if rail else -1

    for low, high, n in fabric.wiring():
        lt, li, rail = parse(low)
        ht, hi, _ = parse(high)
        if lt == "node":
            ax.plot([x(lt, li), x(ht, hi)], [y[lt] + 0.04, y[ht] - 0.04], color=rail_colors(rail % 10),
                    lw=0.5, alpha=0.8)
        else:
            ax.plot([x(lt, li), x(ht, hi)], [y[lt] + 0.04, y[ht] - 0.04], color="#555555", lw=0.4 + 0.25 * n,
                    alpha=0.5)
    for tier, n in levels.items():
        if n == 0:
            continue
        xs = [x(tier, i) for i in range(n)]
        marker, size = ("s", 18) if tier == "node" else ("D", 30)
        ax.scatter(xs, [y[tier]] * n, marker=marker, s=size, color="#222222" if tier == "node" else "#76b900",
                   zorder=3)
        label = {"node": "nodes", "leaf": "leaves", "spine": "spines", "core": "cores"}[tier] if n > 1 else tier
        ax.annotate(f"{n} {label}", xy=(1.01, y[tier]), xycoords=("axes fraction", "data"),
                    va="center", fontsize=9)
    ax.set_ylim(-0.3, 3.3 if fabric.core_switches else 2.3)
    ax.set_xlim(0, 1)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)


# --------------------------------------------------------------------------------------------------------
# Views of the chapter: tables and figures, one call each (the notebook holds prose and model calls)
# --------------------------------------------------------------------------------------------------------

def _label(key: str) -> str:
    from . import views

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


def show_topology() -> None:
    """One SU (20 nodes, 8 rails, 40-port switches) and a scaled-down three-level tree (section "The
    SuperPOD fabric")."""
    import matplotlib.pyplot as plt

    from . import plots

    fig, axes = plots.figure("wide", 1, 2, gridspec_kw={"width_ratios": [1.6, 1]})
    plot_topology(axes[0], fat_tree(20))
    axes[0].set_title("one SU: 20 DGX A100, 8 rails (colours)", fontsize=10)
    plot_topology(axes[1], fat_tree(8, rails=2, su_nodes=2, switch_ports=4))
    axes[1].set_title("three levels, scaled down: 4-port switches", fontsize=10)
    fig.tight_layout()
    plt.show()


def show_switch_counts(node_counts: Iterable[int] = range(20, 561, 20)) -> None:
    """Stacked leaf/spine/core switch counts and the counting lower bound (section "From 20 to 560")."""
    import matplotlib.pyplot as plt

    from . import plots

    counts = scaling_table(node_counts)
    fig, ax = plots.figure("full")
    xs = [r["nodes"] for r in counts]
    leaf, spine, core = ([r[k] for r in counts] for k in ("leaf", "spine", "core"))
    ax.bar(xs, leaf, width=14, color="#9ccc3d", label="leaf")
    ax.bar(xs, spine, width=14, bottom=leaf, color="#5a8f00", label="spine")
    ax.bar(xs, core, width=14, bottom=[a + b for a, b in zip(leaf, spine)], color="#2f4a00", label="core")
    ax.plot(xs, [r["lower_bound"] for r in counts], color="#222222", ls="none", marker="_", markersize=10,
            markeredgewidth=2, label="counting lower bound")
    ax.axvline(two_level_max_nodes() + 10, color="#888888", ls=":", lw=1)
    ax.annotate("3 levels", xy=(two_level_max_nodes() + 14, max(leaf) * 2), fontsize=8, color="#555555")
    ax.set_xlabel("DGX A100 nodes (SUs of 20)")
    ax.set_ylabel("40-port HDR switches")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    plt.show()


def scaling_rows(node_counts: Iterable[int] = (20, 40, 100, 120, 140, 280, 560)) -> list[dict[str, Any]]:
    """:func:`scaling_table` formatted for the page."""
    return [{"nodes": r["nodes"], "levels": r["levels"], "leaf": r["leaf"], "spine": r["spine"],
             "core": r["core"], "switches": r["switches"], "bound": r["lower_bound"], "cables": r["cables"],
             "bisection (TB/s)": f"{r['bisection_bytes_per_s'] / 1e12:.1f}", "power (kW)": f"{r['power_w'] / 1e3:.0f}"}
            for r in scaling_table(node_counts)]


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


def hpl_points() -> list[Any]:
    """HPL Rmax beside the model's FP64 tensor-core peak of the same GPUs (section "Selene on the TOP500")."""
    from . import views

    points = []
    for r in results.records(benchmark="hpl", kind="published"):
        nodes = r.params.get("nodes")
        if not nodes:
            continue
        model = nodes * dgx_a100("A100-SXM4-80GB").peak_flops("fp64_tc") / 1e15
        points.append(views.point(r, "rmax_pflop_per_s", f"HPL Rmax, {r.params['list']}, {nodes} nodes", model,
                                  "PFLOP/s"))
    return points


def show_hpl() -> None:
    """Selene's HPL results beside the FP64 tensor-core peak of its GPUs: figure and table."""
    from . import views

    views.show(hpl_points(), title="Selene: HPL Rmax against the GPUs' FP64 tensor-core peak",
               model_label="GPU FP64 peak", real_label="Rmax")


def show_pod_all_reduce(node_counts: Sequence[int] = (1, 2, 4, 8, 20, 40, 80, 140, 280, 560)) -> None:
    """All-reduce time of three models' FP16 gradients vs nodes, ring and tree (section "All-reduce across
    the pod")."""
    import matplotlib.pyplot as plt

    from . import plots

    fig, ax = plots.figure("full")
    for (name, params, key), color in zip(GRADIENT_MODELS, ["#1f77b4", "#76b900", "#6a3d9a"]):
        for algo, ls in (("ring", "-"), ("tree", "--")):
            rows = all_reduce_scaling(node_counts, models=[(name, params, key)], inter_algorithm=algo)
            ax.plot(node_counts, [1e3 * r["total_s"] for r in rows], color=color, ls=ls,
                    label=f"{name} ({2 * params / 1e9:.2f} GB), {algo}")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))  # 0.5, 1, 2, 5, 10 ... ms
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("DGX A100 nodes (8 GPUs each)")
    ax.set_ylabel("all-reduce time (ms)")
    plots.legend_outside(ax, fontsize=8)
    fig.tight_layout()
    plt.show()


def pod_all_reduce_rows(nodes: int = 140) -> list[dict[str, str]]:
    """:func:`all_reduce_scaling` at one node count, for the page."""
    return [{"model": r["model"], "gradient (FP16)": f"{r['size_bytes'] / 1e9:.2f} GB",
             "time, ring (ms)": f"{1e3 * r['total_s']:.1f}", "inter-node share": f"{100 * r['inter_s'] / r['total_s']:.0f} %",
             "busbw (GB/s)": f"{r['busbw_bytes_per_s'] / 1e9:.0f}"} for r in all_reduce_scaling([nodes])]


def show_ownership(own: Ownership = Ownership()) -> list[dict[str, str]]:
    """Cost of a busy GPU-hour on an owned DGX vs utilisation, with the 2023 cloud offers; returns the
    break-even rows (section "Renting or owning")."""
    import matplotlib.pyplot as plt

    from . import plots

    us = [u / 100 for u in range(5, 101)]
    fig, ax = plots.figure("full")
    ax.plot([100 * u for u in us], [ownership_usd_per_gpu_hour(own, u) for u in us], color="#76b900", lw=2,
            label="own a DGX A100 (assumptions in the text)")
    rows = []
    by_price: dict[float, list[pricing.PriceQuote]] = {}  # offers at the same price share one line
    for offer in cloud_offers():
        by_price.setdefault(round(offer.usd_per_gpu_hour, 2), []).append(offer)
        rows.append({"offer": f"{offer.provider} {offer.instance}", "USD per GPU-hour": f"{offer.usd_per_gpu_hour:.2f}",
                     "owning is cheaper above": f"{100 * break_even_utilization(offer.usd_per_gpu_hour, own):.0f} % utilisation",
                     "source": f"{_label(offer.source)}, price table"})
    styles = [("#e47911", "--"), ("#4285f4", ":"), ("#0078d4", "-."), ("#ff9900", (0, (5, 2, 1, 2)))]
    for (price, offers), (color, ls) in zip(sorted(by_price.items(), reverse=True), styles):
        names = " and ".join(f"{o.provider} {o.instance}" for o in offers)
        ax.axhline(price, color=color, lw=1.2, ls=ls, label=f"{names} ({offers[0].date}): {price:.2f}")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 12)  # a linear price axis; at low utilisation the ownership curve leaves the top
    ax.set_xlabel("utilisation of the owned DGX (%)")
    ax.set_ylabel("USD per busy GPU-hour")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    plt.show()
    return rows


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
