"""The network the cards of a plan talk over, for every GPU of the chapter: the node it lives in
(``ampere.fabrics``: a DGX-class NVSwitch node, or a PCIe server with or without NVLink bridge pairs, and
the node's compute-fabric adapters), how many nodes the cards span, collectives timed by
``ampere.collectives``, and the same node as the Megatron chapter's time model can represent it.

Chapter: *The A100 today* (book/a100-today.ipynb), "A workload calculator" and "The A800". Pure Python:
no torch, no matplotlib.

The nodes (the assumptions are the NVLink chapter's, stated in ``ampere.fabrics``):

* **SXM GPUs** (A100 SXM, H100, H200) sit eight to a DGX-class node: NVLink through NVSwitch inside it
  (the GPU's effective NVLink rate), eight InfiniBand adapters out of it (HDR for the DGX A100, NDR for
  the DGX H100);
* **PCIe cards** (A100 PCIe, RTX A6000, RTX A2000) sit up to eight to a PCIe server: rings inside it run
  at the PCIe rate (:data:`ampere.fabrics.PCIE_EFFICIENCY` of a Gen4 x16 slot per direction); the server
  has :data:`PCIE_SERVER_HCAS` HDR adapters (the NVLink chapter's :data:`ampere.fabrics.A100_PCIE_SERVER`
  assumption). Cards that have an NVLink bridge (A100 PCIe, RTX A6000; not the A2000) are joined in pairs
  when the workload says ``nvlink_bridges=True``; a 2-card plan is then one NVLink pair.

Beyond one node, plans use whole nodes (8 cards each) over the node's adapters, for PCIe servers too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import check, specs

#: Cards per node: DGX-class nodes and PCIe servers alike hold eight.
CARDS_PER_NODE = 8
#: Compute-fabric adapters of a PCIe server: two HDR ports, the NVLink chapter's assumption
#: (``ampere.fabrics.A100_PCIE_SERVER``); a workload can say otherwise (``hcas_per_node``).
PCIE_SERVER_HCAS = 2
#: Most cards a plan may span (whole nodes beyond one): bounds the search over card counts.
MAX_CARDS = 100_000


@dataclass(frozen=True)
class Network:
    """The cards of a plan on their nodes: the node's network (an ``ampere.fabrics.NodeNetwork``), how many
    nodes they span, what joins them inside a node, and why the layout is impossible (``reason``) when it
    is. Chapter: *The A100 today*, "A workload calculator"."""

    node: Any  # ampere.fabrics.NodeNetwork: the whole node (8 GPUs), whatever the number of cards used
    cards: int
    nodes: int
    link: str  # what joins the cards inside a node
    reason: str = ""

    def __post_init__(self) -> None:
        from .. import fabrics

        if not isinstance(self.node, fabrics.NodeNetwork):
            raise TypeError(f"node must be an ampere.fabrics.NodeNetwork, got {self.node!r}")
        object.__setattr__(self, "cards", check.positive_int("cards", self.cards, maximum=MAX_CARDS))
        object.__setattr__(self, "nodes", check.positive_int("nodes", self.nodes, maximum=MAX_CARDS))
        for name in ("link", "reason"):
            check.string(name, getattr(self, name), allow_empty=name == "reason")

    def describe(self) -> str:
        """"2 nodes x 8 cards: NVLink/NVSwitch inside each node, InfiniBand between nodes" or "4 cards over PCIe"."""
        if self.nodes > 1:
            return (f"{self.nodes} nodes x {self.node.gpus_per_node} cards: {self.link} inside each node, "
                    f"{self.node.hcas_per_node} InfiniBand adapters per node between nodes")
        return f"{self.cards} card{'s' if self.cards > 1 else ''} over {self.link}"

    def _within(self, gpus: int | None) -> int:
        n = self.cards if gpus is None else check.positive_int("gpus", gpus, maximum=self.cards)
        return n

    def all_reduce_time(self, size_bytes: float, gpus: int | None = None) -> float:
        """All-reduce of ``size_bytes`` per card over ``gpus`` (default: all) cards of the plan, as the NVLink
        chapter's model runs it on this node (``ampere.collectives.all_reduce_time``)."""
        return self.collective_time("all_reduce", size_bytes, gpus)

    def collective_time(self, op: str, size_bytes: float, gpus: int | None = None) -> float:
        """Any ring collective over ``gpus`` (default: all) cards of the plan (``ampere.collectives``)."""
        from .. import collectives

        n = self._within(gpus)
        size = check.nonneg("size_bytes", size_bytes)
        collectives.check_op(op)
        return 0.0 if n <= 1 else collectives.network_collective_time(op, size, n, self._collective_node(n))

    def _collective_node(self, n: int) -> Any:
        """The node a collective over ``n`` cards runs on: a bridged pair alone is one NVLink domain."""
        from .. import fabrics

        if n == 2 and self.nodes == 1 and self.node.nvlink_domain == 2:
            return fabrics.node_network(self.node.gpu, gpus_per_node=2, hcas_per_node=self.node.hcas_per_node,
                                        name=f"{self.node.gpu} NVLink-bridged pair")
        return self.node

    def megatron_node(self) -> Any:
        """This node as the Megatron chapter's time model can represent it (an ``ampere.fabrics.NodeNetwork``).

        The Megatron model (``ampere.megatron.estimate``) knows two levels: GPUs of one NVLink domain, whose
        rate it derives from the GPU's NVLink (the NVSwitch all-reduce bandwidth scaled by the links), and the
        node's adapters beyond it. A node that is one NVLink domain (a DGX) is passed as it is. A PCIe server
        is not one domain: its NVLink domains (single cards, or bridged pairs) become the model's "nodes", and
        each card's own PCIe link its "adapter", at the rate the NVLink chapter gives a ring through the
        server (``ring_bytes_per_s``: the PCIe rate, or the node's injection rate if lower across servers),
        divided by the model's ``ib_fraction`` so that the model's rings run at exactly that rate. Latency:
        the node's hop latency inside one server, the network's across servers.
        """
        from .. import fabrics, megatron

        node = self.node
        if node.nvlink_domain == node.gpus_per_node:
            return node
        domain = node.nvlink_domain
        ring = node.ring_bytes_per_s if self.nodes > 1 else node.intra_bytes_per_s
        return fabrics.NodeNetwork(
            name=f"{node.name}, as NVLink domains of {domain} joined by PCIe", gpu=node.gpu, gpus_per_node=domain,
            nvlink_domain=domain, intra_bytes_per_s=node.intra_bytes_per_s, intra_latency_s=node.intra_latency_s,
            hcas_per_node=domain, hca_bytes_per_s=ring / megatron.INPUTS["ib_fraction"].value,
            inter_latency_s=node.inter_latency_s if self.nodes > 1 else node.intra_latency_s,
            source=node.source, note=f"{node.name} translated for the Megatron time model (ampere.today)",
            intra_overhead_s=node.intra_overhead_s, inter_overhead_s=node.inter_overhead_s)

    @property
    def nvlink_domain(self) -> int:
        """Cards joined by NVLink (or NVSwitch) inside a node: 8 on a DGX, 2 for bridged pairs, 1 over PCIe."""
        return self.node.nvlink_domain


def node_of(gpu: str | specs.GPUSpec, nvlink_bridges: bool = False, hcas_per_node: int | None = None) -> Any:
    """The node a GPU of the chapter lives in, as an ``ampere.fabrics.NodeNetwork`` of 8 GPUs.

    SXM GPUs with NVLink: the DGX A100 (Ampere) or DGX H100 (Hopper) network with the GPU's own effective
    NVLink rate. PCIe cards: a server of eight over PCIe (``ampere.fabrics.node_network``) with
    :data:`PCIE_SERVER_HCAS` HDR adapters; with ``nvlink_bridges`` the cards that have a bridge are joined in
    pairs. The A100 80GB PCIe server without bridges is the NVLink chapter's
    ``ampere.fabrics.A100_PCIE_SERVER`` itself. ``hcas_per_node`` overrides the adapters per node.
    Chapter: *The A100 today*, "A workload calculator".
    """
    from .. import fabrics

    spec = specs.get(gpu)
    bridges = check.boolean("nvlink_bridges", nvlink_bridges)
    hcas = check.optional(check.bounded_int, "hcas_per_node", hcas_per_node, 0, 64,
                          why="adapters of one node")
    if spec.nvlink_bytes_per_s and spec.form_factor.startswith("SXM"):
        base = fabrics.DGX_H100 if spec.architecture == "Hopper" else fabrics.DGX_A100
        known = spec.name in specs.names()  # a derived spec (the A800) keeps its base GPU's catalogue name
        node = base.with_(gpu=spec.name if known else base.gpu,
                          intra_bytes_per_s=fabrics.nvlink_effective_bytes_per_s(spec),
                          name=base.name if base.gpu == spec.name else f"{base.name} network, {spec.name}")
        return node if hcas is None else node.with_(hcas_per_node=hcas)
    pair = 2 if bridges and spec.nvlink_bytes_per_s else 1
    h = PCIE_SERVER_HCAS if hcas is None else hcas
    if spec.name == fabrics.A100_PCIE_SERVER.gpu and pair == 1 and h == fabrics.A100_PCIE_SERVER.hcas_per_node:
        return fabrics.A100_PCIE_SERVER
    label = f"8x {spec.name} PCIe server" + (", NVLink-bridged pairs" if pair == 2 else "")
    return fabrics.node_network(spec, gpus_per_node=CARDS_PER_NODE, hcas_per_node=h, nvlink_domain=pair,
                                name=label)


def _link(node: Any) -> str:
    if node.nvlink_domain == node.gpus_per_node:
        return "NVLink/NVSwitch"
    spec = specs.get(node.gpu)
    pcie = f"PCIe Gen{spec.pcie_generation}"
    return f"{pcie}, NVLink-bridged pairs" if node.nvlink_domain == 2 else pcie


def _network(spec: specs.GPUSpec, cards: int, nvlink_bridges: bool = False,
             hcas_per_node: int | None = None) -> Network:
    """Where ``cards`` GPUs of ``spec`` sit: one node first, then whole nodes over the node's adapters."""
    node = node_of(spec, nvlink_bridges, hcas_per_node)
    per = node.gpus_per_node
    link = _link(node)
    if cards == 2 and node.nvlink_domain == 2:
        link = "NVLink bridge (one pair)"
    if cards <= per:
        return Network(node, cards, 1, link)
    nodes = math.ceil(cards / per)
    if cards % per:
        return Network(node, cards, nodes, link,
                       reason=f"{cards} cards: beyond one node, cards come in whole nodes of {per}")
    if not node.hcas_per_node:
        return Network(node, cards, nodes, link, reason=f"{cards} cards: the node has no network adapters "
                                                        "(hcas_per_node=0), so one node at most")
    return Network(node, cards, nodes, link)


def _allowed_cards(spec: specs.GPUSpec, n: int) -> bool:
    """Card counts a plan may use: up to one node, then whole nodes."""
    return n <= CARDS_PER_NODE or n % CARDS_PER_NODE == 0
