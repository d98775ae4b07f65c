"""What an oversubscribed (tapered) fat tree saves and what it costs, traffic pattern by traffic pattern.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), section
"Oversubscription". A leaf with ``su_nodes`` ports down and fewer up (``uplinks_per_leaf``) saves spines,
cores, cables and optics; whether it costs time depends on how much traffic leaves the scalable unit.
:func:`pattern_slowdown` gives the factor by which the leaves' uplinks stretch a traffic pattern when every
port sends at line rate, assuming (as :func:`.fabric.fat_tree` guarantees with equal cable multiplicities)
that the spine and core tiers carry whatever the uplinks deliver. Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import check
from .. import fields as _fields
from .fabric import Fabric, fat_tree

#: Traffic patterns of :func:`pattern_slowdown`.
PATTERNS: tuple[str, ...] = ("rail_ring", "all_to_all", "su_permutation")


def _cross_su_demand(fabric: Fabric, pattern: str) -> float:
    """Port-rate units one leaf must send up, for ``pattern`` (per leaf of a full SU)."""
    n, s = fabric.nodes, fabric.su_nodes
    if fabric.populated_scalable_units <= 1:
        return 0.0
    if pattern == "rail_ring":
        # a ring over the nodes in SU order: consecutive nodes of one SU share the rail's leaf; one ring edge
        # leaves each SU and one enters it, per rail
        return 1.0
    if pattern == "all_to_all":
        # each port sends the same amount to every other port of its rail; the share outside its SU leaves
        return s * (n - s) / (n - 1)
    return float(s)  # su_permutation: every node's partner sits in another SU


def pattern_slowdown(fabric: Fabric, pattern: str) -> float:
    """How many times longer ``pattern`` takes on ``fabric`` than on a non-blocking tree, all ports busy.

    Chapter: *DGX A100 and the SuperPOD*, section "Oversubscription". ``max(1, demand / uplinks)`` per leaf:

    * ``"rail_ring"`` -- a ring all-reduce (or all-gather) along each rail, nodes in SU order: one flow
      leaves and one enters each leaf, so any tree with one uplink per leaf runs it at full speed;
    * ``"all_to_all"`` -- every port sends equally to every other port of its rail (an expert-parallel
      all-to-all after the NVLink stage): ``su_nodes x (N - su_nodes) / (N - 1)`` ports' worth leaves;
    * ``"su_permutation"`` -- every node exchanges with a node of another SU (the bisection cut): all
      ``su_nodes`` ports' worth leaves, so the slowdown is the oversubscription itself.
    """
    if not isinstance(fabric, Fabric):
        raise TypeError(f"fabric must be an ampere.cluster.Fabric (from fat_tree()), got {fabric!r}")
    p = check.one_of("pattern", pattern, PATTERNS)
    return max(1.0, _cross_su_demand(fabric, p) / fabric.leaf_up_ports)


@dataclass(frozen=True)
class Taper:
    """One tapering of a pod's leaves, beside the non-blocking tree (section "Oversubscription")."""

    ratio: float  # down / up ports per leaf
    fabric: Fabric
    switches_saved: int
    cables_saved: int
    transceivers_saved: int
    bisection_fraction: float  # of the non-blocking tree's
    slowdowns: dict[str, float]  # pattern -> slowdown

    def __post_init__(self) -> None:
        _fields.check_annotated(self, positive=("ratio", "bisection_fraction"), maxima={"bisection_fraction": 1.0},
                              signed=("switches_saved", "cables_saved", "transceivers_saved"))


def tapers(nodes: int = 140, uplinks: tuple[int, ...] = (20, 10, 5), **kwargs) -> list[Taper]:
    """The non-blocking tree and tapered ones with ``uplinks`` cables up per leaf (``su_nodes`` down).

    Chapter: *DGX A100 and the SuperPOD*, section "Oversubscription". ``kwargs`` go to
    :func:`.fabric.fat_tree` (``rails``, ``su_nodes``, ``switch_ports`` ...); the first entry of
    ``uplinks`` should be ``su_nodes`` (the reference).
    """
    if not isinstance(uplinks, (tuple, list)) or not uplinks:
        raise TypeError(f"uplinks must be a non-empty tuple of integers, got {uplinks!r}")
    ups = [check.positive_int("uplinks", u) for u in uplinks]
    base = fat_tree(nodes, **kwargs)
    out = []
    for up in ups:
        f = fat_tree(nodes, uplinks_per_leaf=up, **kwargs)
        out.append(Taper(ratio=f.oversubscription, fabric=f, switches_saved=base.switches - f.switches,
                         cables_saved=base.cables_total - f.cables_total,
                         transceivers_saved=base.transceivers - f.transceivers,
                         bisection_fraction=f.bisection_bytes_per_s / base.bisection_bytes_per_s,
                         slowdowns={p: pattern_slowdown(f, p) for p in PATTERNS}))
    return out
