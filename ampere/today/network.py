"""The network the cards of a plan talk over: ``ampere.fabrics`` nodes (one NVLink domain first, then whole
nodes over InfiniBand; PCIe cards in one server), collectives timed by ``ampere.collectives``.

Chapter: *The A100 today* (book/a100-today.ipynb), "A workload calculator" and "The A800". Pure Python:
no torch, no matplotlib.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .. import specs


@dataclass(frozen=True)
class Network:
    """The cards of a plan on their nodes: the node's network (``ampere.fabrics.NodeNetwork``), how many
    nodes they span, and why the layout is impossible (``reason``) when it is. Chapter: *The A100 today*."""

    node: Any  # ampere.fabrics.NodeNetwork
    cards: int
    nodes: int
    link: str  # what joins the cards inside a node
    reason: str = ""

    def describe(self) -> str:
        """"2 nodes x 8 cards: NVLink/NVSwitch inside each node, InfiniBand between nodes" or "4 cards over PCIe"."""
        if self.nodes > 1:
            return (f"{self.nodes} nodes x {self.node.gpus_per_node} cards: {self.link} inside each node, "
                    "InfiniBand between nodes")
        return f"{self.cards} cards over {self.link}"

    def all_reduce_time(self, size_bytes: float, gpus: int | None = None) -> float:
        """All-reduce of ``size_bytes`` per card over ``gpus`` (default: all) cards (``ampere.collectives``)."""
        from .. import collectives

        n = self.cards if gpus is None else gpus
        return 0.0 if n <= 1 else collectives.all_reduce_time(size_bytes, n, self.node)

    def collective_time(self, op: str, size_bytes: float, gpus: int | None = None) -> float:
        """Any ring collective over ``gpus`` (default: all) cards (``ampere.collectives``)."""
        from .. import collectives

        n = self.cards if gpus is None else gpus
        return 0.0 if n <= 1 else collectives.network_collective_time(op, size_bytes, n, self.node)


def _node_of(spec: specs.GPUSpec) -> tuple[Any, str]:
    """The node a GPU of the chapter lives in, and the name of what joins its GPUs."""
    from .. import fabrics

    if spec.nvlink_bytes_per_s and spec.form_factor.startswith("SXM"):
        base = fabrics.DGX_H100 if spec.architecture == "Hopper" else fabrics.DGX_A100
        node = base.with_(intra_bytes_per_s=fabrics.nvlink_effective_bytes_per_s(spec),
                          name=f"8 x {spec.name} ({base.name} network)")
        return node, "NVLink/NVSwitch"
    return None, f"PCIe Gen{spec.pcie_generation}"


def _network(spec: specs.GPUSpec, cards: int) -> Network:
    """Where ``cards`` GPUs of ``spec`` sit: one NVLink domain (a DGX-class node) first, then whole nodes over
    InfiniBand; PCIe cards in one server of at most 8, paired over an NVLink bridge where they have one."""
    from .. import fabrics

    node, link = _node_of(spec)
    if node is not None:
        per = node.gpus_per_node
        if cards <= per:
            return Network(node, cards, 1, link)
        if cards % per:
            return Network(node, cards, math.ceil(cards / per), link,
                           reason=f"{cards} cards: beyond one node, cards come in whole nodes of {per}")
        return Network(node, cards, cards // per, link)
    if cards > 8:
        return Network(None, cards, 1, link, reason=f"{cards} PCIe cards: one server holds at most 8")
    bridge = bool(spec.nvlink_bytes_per_s) and cards == 2
    net = fabrics.node_network(spec, gpus_per_node=cards, hcas_per_node=0)
    return Network(net, cards, 1, "NVLink bridge (pairs only)" if bridge else link)


def _allowed_cards(spec: specs.GPUSpec, n: int) -> bool:
    """Card counts a plan may use: up to one node, then whole nodes."""
    node, _ = _node_of(spec)
    return node is None or n <= node.gpus_per_node or n % node.gpus_per_node == 0
