"""The alpha-beta model of NCCL-style collectives: algbw and busbw, ring and tree, hierarchical all-reduce.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb) explains it; *DGX A100 and the
SuperPOD*, *Megatron-LM* and *The A100 today* use it. Pure Python: no torch. The networks the model
runs on are data in :mod:`ampere.fabrics`; the lab that measures real collectives is in
:mod:`ampere.interconnect`.

Conventions (stated once, used everywhere)
------------------------------------------

``size_bytes`` (S)
    The per-rank buffer size in bytes, as nccl-tests counts it [ncclteststperf]: for ``all_reduce``,
    ``broadcast`` and ``reduce`` the buffer each rank holds; for ``all_gather`` the gathered *output* on
    each rank (n x the per-rank input); for ``reduce_scatter`` the *input* on each rank (n x the per-rank
    output). With this convention ``algbw = S / t`` and the bus-bandwidth factors below make busbw
    comparable with a link speed, whatever the operation and the rank count.
``n``
    The number of ranks. ``n = 1`` is allowed: nothing moves, the time is zero.
Bandwidths
    Always **per direction**, in bytes/s (GB = 1e9 B). ``link_bytes_per_s`` (B) is what one rank can send
    while it receives as much.
``latency_s`` (alpha) and ``overhead_s``
    ``latency_s`` is the cost of one communication step (one hop between two ranks); ``overhead_s`` the
    fixed cost of the whole collective (kernel launch, start and end synchronisation), paid once. Folding
    the fixed cost into alpha overstates every step: NCCL's own cost model, and the published logs of
    :mod:`ampere.fabrics`, have a fixed part of about 8 µs and NVLink hops of well under a microsecond.
busbw (nccl-tests [ncclteststperf])
    ``busbw = algbw x factor`` with factor 2(n-1)/n for all-reduce, (n-1)/n for all-gather and
    reduce-scatter, 1 for broadcast and reduce. It is the bandwidth each rank's link must sustain, so it
    is compared with B, never with the bidirectional sum.

The alpha-beta model [thakur2005collectives,patarasuk2009bandwidth], with ``beta = 1/B``:

================  ======================================  ==============================================
operation         ring                                    tree (pipelined, NCCL-style)
================  ======================================  ==============================================
all_reduce        2(n-1) alpha + 2(n-1)/n S/B             2 ceil(log2 n) alpha + 2 S/B (double binary tree)
all_gather        (n-1) alpha + (n-1)/n S/B               not defined (NCCL runs it as a ring)
reduce_scatter    (n-1) alpha + (n-1)/n S/B               not defined (NCCL runs it as a ring)
broadcast         (n-1) alpha + S/B (pipelined chain)     ceil(log2 n) alpha + S/B (pipelined tree)
reduce            (n-1) alpha + S/B (pipelined chain)     ceil(log2 n) alpha + S/B (pipelined tree)
================  ======================================  ==============================================

Every row also pays ``overhead_s`` once. The ring's bandwidth term equals the lower bound of any
send/receive algorithm, which is why the busbw factors are what they are: a ring at full speed has
``busbw = B``. The tree column is a binary tree over the ranks, which is what NCCL builds *between nodes*;
inside one node NCCL's tree is a chain through the node's GPUs, with as many hops as the ring and more
bytes, so inside a node the ring is never slower (:func:`nccl_collective_time`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from . import check, fabrics
from . import fields as _fields
from .fabrics import A100_INTRA_BYTES_PER_S, A100_INTRA_LATENCY_S, DGX_A100_INTER_BYTES_PER_S, INTER_LATENCY_S

__all__ = [
    "OPS", "ALGORITHMS", "TREE_OPS", "check_op", "busbw_factor", "bus_bandwidth", "algorithm_bandwidth",
    "alpha_beta_terms", "collective_time", "size_for_busbw_fraction", "ring_tree_crossover_bytes",
    "AllReducePhases", "hierarchical_all_reduce_breakdown", "hierarchical_all_reduce_time", "all_reduce_time",
    "network_collective_time", "nccl_collective_time", "CollectiveTime", "nccl_collective_breakdown",
]

#: Collectives the model knows, in the order tables print them.
OPS: tuple[str, ...] = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce")
#: Algorithms of :func:`collective_time`.
ALGORITHMS: tuple[str, ...] = ("ring", "tree")
#: Collectives the tree algorithm is defined for.
TREE_OPS: tuple[str, ...] = ("all_reduce", "broadcast", "reduce")


def check_op(op: Any) -> str:
    """``op`` if it is one of :data:`OPS`, else a ``ValueError`` (``TypeError`` for a non-string)."""
    if not isinstance(op, str):
        raise TypeError(f"op must be a string, one of {', '.join(OPS)}; got {op!r} ({type(op).__name__})")
    if op not in OPS:
        raise ValueError(f"op={op!r} is not a known collective; allowed: {', '.join(OPS)}")
    return op


def _ranks(name: str, n: Any) -> int:
    """A rank count: an integer from 1 to :data:`ampere.fabrics.MAX_GPUS`."""
    return check.bounded_int(name, n, 1, fabrics.MAX_GPUS, why="ranks of one collective")


def _latency(name: str, value: Any) -> float:
    return check.nonneg(name, value, maximum=fabrics.MAX_LATENCY_S)


def _check_algorithm(algorithm: Any, name: str = "algorithm") -> str:
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise ValueError(f"{name}={algorithm!r} is not supported; allowed: {', '.join(ALGORITHMS)}")
    return algorithm


# --- bus bandwidth ----------------------------------------------------------------------------------------

def busbw_factor(op: str, n: int) -> float:
    """nccl-tests' factor busbw / algbw: 2(n-1)/n (all-reduce), (n-1)/n (all-gather, reduce-scatter), 1.

    Chapter: *NVLink, NVSwitch and collectives*, section "algbw and busbw". Broadcast and reduce have
    factor 1 for every n >= 2 (and 0 for n = 1, where nothing moves).
    """
    check_op(op)
    n = _ranks("n", n)
    if n == 1:
        return 0.0
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter"):
        return (n - 1) / n
    return 1.0


def bus_bandwidth(op: str, algbw_bytes_per_s: float, n: int) -> float:
    """Bus bandwidth (bytes/s) from the algorithm bandwidth ``algbw = S / t``, as nccl-tests defines it.

    Chapter: *NVLink, NVSwitch and collectives*, section "algbw and busbw". Example: an all-reduce of
    S bytes on 8 GPUs in t seconds has busbw = 1.75 S / t, comparable with the per-direction link speed.
    """
    algbw = check.nonneg("algbw_bytes_per_s", algbw_bytes_per_s, maximum=fabrics.MAX_BYTES_PER_S)
    return algbw * busbw_factor(op, n)


def algorithm_bandwidth(size_bytes: float, time_s: float) -> float:
    """``algbw = S / t`` in bytes/s (S per nccl-tests' convention, see the module docstring)."""
    return check.nonneg("size_bytes", size_bytes) / check.positive("time_s", time_s)  # both any finite size


# --- the alpha-beta model ---------------------------------------------------------------------------------

def alpha_beta_terms(op: str, n: int, algorithm: str = "ring") -> tuple[float, float]:
    """Coefficients ``(a, b)`` with ``t = a * alpha + b * S / B`` for one collective.

    Chapter: *NVLink, NVSwitch and collectives*, section "The alpha-beta model". ``a`` counts the
    sequential communication steps, ``b`` the bytes (in units of S) each rank must send over its link.
    Fitting alpha and beta to measurements is linear regression on these two columns.
    """
    check_op(op)
    n = _ranks("n", n)
    _check_algorithm(algorithm)
    if algorithm == "tree" and op not in TREE_OPS:
        raise ValueError(f"algorithm='tree' is not defined for op={op!r}; use algorithm='ring' "
                         f"(tree is defined for: {', '.join(TREE_OPS)})")
    if n == 1:
        return 0.0, 0.0
    log_n = math.ceil(math.log2(n))
    if op == "all_reduce":
        return (2.0 * (n - 1), 2.0 * (n - 1) / n) if algorithm == "ring" else (2.0 * log_n, 2.0)
    if op in ("all_gather", "reduce_scatter"):
        return float(n - 1), (n - 1) / n
    # broadcast and reduce: a pipelined chain (ring) or a pipelined binary tree move S once per link
    return (float(n - 1), 1.0) if algorithm == "ring" else (float(log_n), 1.0)


def collective_time(op: str, size_bytes: float, n: int, link_bytes_per_s: float, latency_s: float,
                    algorithm: str = "ring", overhead_s: float = 0.0) -> float:
    """Predicted time (s) of one collective by the alpha-beta model (table in the module docstring).

    Chapter: *NVLink, NVSwitch and collectives*, section "The alpha-beta model". ``size_bytes`` is the
    per-rank buffer (nccl-tests convention), ``link_bytes_per_s`` the per-direction bandwidth of each
    rank (``inf``: free bandwidth), ``latency_s`` the cost of one step and ``overhead_s`` the fixed cost of
    the collective, paid once: ``t = overhead + a alpha + b S / B``. With ``n = 1`` nothing moves and the
    time is zero. The network-level functions (:func:`nccl_collective_time`) pass a node's overhead.
    """
    a, b = alpha_beta_terms(op, n, algorithm)
    size = check.nonneg("size_bytes", size_bytes)
    bw = check.positive("link_bytes_per_s", link_bytes_per_s, allow_inf=True)
    if bw != math.inf:
        bw = check.positive("link_bytes_per_s", bw, maximum=fabrics.MAX_BYTES_PER_S)
    alpha = _latency("latency_s", latency_s)
    overhead = _latency("overhead_s", overhead_s)
    if a == 0 and b == 0:
        return 0.0
    return overhead + a * alpha + b * size / bw


def size_for_busbw_fraction(op: str, fraction: float, n: int, link_bytes_per_s: float, latency_s: float,
                            algorithm: str = "ring", overhead_s: float = 0.0) -> float:
    """Message size (bytes per rank) at which the model's busbw reaches ``fraction`` of the link rate B.

    Chapter: *NVLink, NVSwitch and collectives*, section "Why 230 GB/s, not 600". With
    ``t = o + a alpha + b S / B`` and ``busbw = f S / t`` (f the busbw factor), ``busbw = x B`` gives
    ``S = x (o + a alpha) B / (f - x b)``; for the ring f = b, so 90 % of B needs nine times as much time
    in the bandwidth term as in the latency terms. A ``ValueError`` when the algorithm never gets there (a
    tree all-reduce tops out at f / b = (n-1)/n of B).
    """
    x = check.fraction("fraction", fraction)
    a, b = alpha_beta_terms(op, n, algorithm)
    bw = check.positive("link_bytes_per_s", link_bytes_per_s, maximum=fabrics.MAX_BYTES_PER_S)
    alpha = _latency("latency_s", latency_s)
    overhead = _latency("overhead_s", overhead_s)
    f = busbw_factor(op, n)
    if x == 0 or (a == 0 and b == 0) or overhead + a * alpha == 0:
        return 0.0
    if f - x * b <= 0:
        raise ValueError(f"fraction={x:g}: a {algorithm} {op} on n={n} ranks never reaches it; its busbw tends to "
                         f"{f / b:.3f} of the link rate")
    return x * (overhead + a * alpha) * bw / (f - x * b)


def ring_tree_crossover_bytes(op: str, n: int, link_bytes_per_s: float, latency_s: float) -> float:
    """Message size (bytes per rank) at which the ring and the tree take the same time in the model.

    Chapter: *NVLink, NVSwitch and collectives*, section "Across nodes" and the exercise "Ring or tree?".
    Equating ``a_r alpha + b_r S / B`` and ``a_t alpha + b_t S / B`` gives
    ``S = (a_r - a_t) alpha B / (b_t - b_r)``: below it the tree (fewer steps) wins, above it the ring
    (fewer bytes). The tree here is a binary tree over the ``n`` ranks, as NCCL builds between nodes (one
    rank per node, ``latency_s`` a network hop); inside one NVSwitch node NCCL's tree is a chain with as
    many hops as the ring, and the ring always wins there. A ``ValueError`` for a collective the tree is
    not defined for, or where the two never cross.
    """
    a_r, b_r = alpha_beta_terms(op, n, "ring")
    a_t, b_t = alpha_beta_terms(op, n, "tree")
    bw = check.positive("link_bytes_per_s", link_bytes_per_s, maximum=fabrics.MAX_BYTES_PER_S)
    alpha = _latency("latency_s", latency_s)
    if b_t <= b_r or a_r <= a_t:
        raise ValueError(f"op={op!r} on n={n} ranks: ring and tree never cross (ring {a_r:g} steps, {b_r:g} S; "
                         f"tree {a_t:g} steps, {b_t:g} S)")
    return (a_r - a_t) * alpha * bw / (b_t - b_r)


# --- hierarchical all-reduce -------------------------------------------------------------------------------

@dataclass(frozen=True)
class AllReducePhases:
    """The three phases of a hierarchical all-reduce, in seconds (chapter: *NVLink*, "Across nodes")."""

    size_bytes: float
    nodes: int
    gpus_per_node: int
    reduce_scatter_s: float  # inside each node
    inter_all_reduce_s: float  # across the nodes, one ring or tree per rail
    all_gather_s: float  # inside each node
    overhead_s: float = 0.0  # fixed cost of the collective, paid once

    def __post_init__(self) -> None:
        _fields.check_annotated(self, positive=("nodes", "gpus_per_node"),
                              maxima={"nodes": fabrics.MAX_GPUS, "gpus_per_node": fabrics.MAX_GPUS_PER_NODE})

    @property
    def total_s(self) -> float:
        return self.overhead_s + self.reduce_scatter_s + self.inter_all_reduce_s + self.all_gather_s

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def busbw_bytes_per_s(self) -> float:
        """nccl-tests bus bandwidth of the whole all-reduce over ``nodes x gpus_per_node`` GPUs."""
        if self.total_s == 0:
            return 0.0
        return bus_bandwidth("all_reduce", self.size_bytes / self.total_s, self.gpus)


def hierarchical_all_reduce_breakdown(size_bytes: float, nodes: int, gpus_per_node: int = 8,
                                      intra_bytes_per_s: float = A100_INTRA_BYTES_PER_S,
                                      inter_bytes_per_s: float = DGX_A100_INTER_BYTES_PER_S,
                                      intra_latency_s: float = A100_INTRA_LATENCY_S,
                                      inter_latency_s: float = INTER_LATENCY_S,
                                      inter_algorithm: str = "ring", overhead_s: float = 0.0) -> AllReducePhases:
    """The three phases of a hierarchical all-reduce (:class:`AllReducePhases`).

    Chapter: *NVLink, NVSwitch and collectives*, section "Across nodes". The algorithm:

    1. reduce-scatter inside each node over NVLink/NVSwitch: each of the g GPUs ends with S/g reduced bytes;
    2. all-reduce of those shards across the N nodes: g independent rings (or trees), one per GPU and
       its own NIC ("rail"), each moving S/g bytes over 1/g of the node's bandwidth;
    3. all-gather inside each node over NVLink/NVSwitch.

    ``intra_bytes_per_s`` is the per-GPU, per-direction bandwidth inside a node (default: effective
    NVLink 3 of an A100, 240 GB/s); ``inter_bytes_per_s`` is the **per-node** bandwidth per direction,
    all NICs together (default: DGX A100, 8 x HDR 200 Gb/s = 200 GB/s). Phase 2 therefore costs
    2(N-1)/N x S / inter_bytes_per_s with rings. The latencies are per hop; ``overhead_s`` (default 0, the
    textbook model) is the fixed cost of the whole collective, paid once. The phases run one after the
    other, as Horovod's hierarchical all-reduce does; NCCL instead pipelines all hops of its rail-aligned
    rings at once (:func:`nccl_collective_time`). With ``nodes = 1`` it is a plain ring all-reduce, split
    evenly between the two intra-node phases.
    """
    size = check.nonneg("size_bytes", size_bytes)
    nodes = _ranks("nodes", nodes)
    g = check.bounded_int("gpus_per_node", gpus_per_node, 1, fabrics.MAX_GPUS_PER_NODE, why="GPUs in one node")
    _ranks("nodes x gpus_per_node", nodes * g)
    intra_bw = check.positive("intra_bytes_per_s", intra_bytes_per_s, maximum=fabrics.MAX_BYTES_PER_S)
    inter_bw = check.positive("inter_bytes_per_s", inter_bytes_per_s, maximum=fabrics.MAX_BYTES_PER_S)
    intra_latency_s = _latency("intra_latency_s", intra_latency_s)
    inter_latency_s = _latency("inter_latency_s", inter_latency_s)
    _check_algorithm(inter_algorithm, "inter_algorithm")
    overhead = _latency("overhead_s", overhead_s)
    if nodes == 1:
        t = collective_time("all_reduce", size, g, intra_bw, intra_latency_s)
        return AllReducePhases(size, 1, g, t / 2, 0.0, t / 2, overhead if g > 1 else 0.0)
    rs = collective_time("reduce_scatter", size, g, intra_bw, intra_latency_s)
    # each rail carries S/g bytes at inter_bw/g per direction: the per-rail ring is
    # 2(N-1)/N (S/g)/(inter_bw/g) = 2(N-1)/N S/inter_bw, plus its 2(N-1) latency steps
    inter = collective_time("all_reduce", size / g, nodes, inter_bw / g, inter_latency_s, inter_algorithm)
    ag = collective_time("all_gather", size, g, intra_bw, intra_latency_s)
    return AllReducePhases(size, nodes, g, rs, inter, ag, overhead)


def hierarchical_all_reduce_time(size_bytes: float, nodes: int, gpus_per_node: int = 8,
                                 intra_bytes_per_s: float = A100_INTRA_BYTES_PER_S,
                                 inter_bytes_per_s: float = DGX_A100_INTER_BYTES_PER_S,
                                 intra_latency_s: float = A100_INTRA_LATENCY_S,
                                 inter_latency_s: float = INTER_LATENCY_S,
                                 inter_algorithm: str = "ring", overhead_s: float = 0.0) -> float:
    """Time (s) of an all-reduce of ``size_bytes`` per GPU over ``nodes`` x ``gpus_per_node`` GPUs.

    Chapter: *NVLink, NVSwitch and collectives*, section "Across nodes". See
    :func:`hierarchical_all_reduce_breakdown` for the phases and the conventions.
    """
    return hierarchical_all_reduce_breakdown(size_bytes, nodes, gpus_per_node, intra_bytes_per_s,
                                             inter_bytes_per_s, intra_latency_s, inter_latency_s,
                                             inter_algorithm, overhead_s).total_s


@dataclass(frozen=True)
class CollectiveTime:
    """One collective as NCCL runs it, term by term (:func:`nccl_collective_breakdown`).

    Chapters: *NVLink, NVSwitch and collectives* ("Across nodes") and *DGX A100 and the SuperPOD* ("All-reduce
    across the pod"). ``total_s = latency_s + bandwidth_s`` with ``latency_s = overhead_s + intra_hops x
    intra_hop_s + inter_hops x inter_hop_s`` and ``bandwidth_s = traffic x size_bytes / bus_bytes_per_s``
    (``traffic`` is the b of the alpha-beta model: bytes each rank sends, in units of S).
    """

    op: str
    algorithm: str
    size_bytes: float
    gpus: int
    nodes: int  # nodes the collective spans (1: inside one node)
    overhead_s: float  # the fixed cost, paid once
    intra_hops: int  # sequential hops inside nodes (NVLink or PCIe)
    intra_hop_s: float
    inter_hops: int  # sequential hops between nodes (the compute fabric)
    inter_hop_s: float
    traffic: float  # b: bytes each rank sends per byte of S
    bus_bytes_per_s: float  # the rate the bandwidth term runs at, per direction

    def __post_init__(self) -> None:
        check_op(self.op)
        _check_algorithm(self.algorithm)
        _fields.check_annotated(self, positive=("gpus", "nodes", "bus_bytes_per_s"),
                              maxima={"gpus": fabrics.MAX_GPUS, "nodes": fabrics.MAX_GPUS,
                                      "overhead_s": fabrics.MAX_LATENCY_S, "intra_hop_s": fabrics.MAX_LATENCY_S,
                                      "inter_hop_s": fabrics.MAX_LATENCY_S, "intra_hops": 4 * fabrics.MAX_GPUS,
                                      "inter_hops": 4 * fabrics.MAX_GPUS, "traffic": 2.0,
                                      "bus_bytes_per_s": fabrics.MAX_BYTES_PER_S})
        if self.nodes > self.gpus:
            raise ValueError(f"nodes={self.nodes} must be <= gpus={self.gpus}")

    @property
    def latency_s(self) -> float:
        """The fixed overhead and every hop's latency: what a tiny message costs."""
        return self.overhead_s + self.intra_hops * self.intra_hop_s + self.inter_hops * self.inter_hop_s

    @property
    def bandwidth_s(self) -> float:
        """The bytes each rank sends over the slowest hop, ``traffic x S / B``."""
        return self.traffic * self.size_bytes / self.bus_bytes_per_s

    @property
    def total_s(self) -> float:
        if self.gpus == 1:
            return 0.0
        return self.latency_s + self.bandwidth_s

    @property
    def latency_fraction(self) -> float:
        """Share of the time spent in the latency terms (0 when nothing moves)."""
        return self.latency_s / self.total_s if self.total_s else 0.0

    @property
    def busbw_bytes_per_s(self) -> float:
        """nccl-tests bus bandwidth of this collective over ``gpus`` ranks (0 when nothing moves)."""
        if self.total_s == 0:
            return 0.0
        return bus_bandwidth(self.op, self.size_bytes / self.total_s, self.gpus)


def _hops(op: str, gpus: int, nodes: int) -> tuple[int, int]:
    """(hops inside nodes, hops between nodes) of a ring over ``gpus`` ranks on ``nodes`` nodes."""
    steps, _ = alpha_beta_terms(op, gpus, "ring")
    inter = 0 if nodes == 1 else (2 * (nodes - 1) if op == "all_reduce" else nodes - 1)
    return int(steps) - inter, inter


def nccl_collective_breakdown(op: str, size_bytes: float, gpus: int,
                              network: fabrics.NodeNetwork = fabrics.DGX_A100,
                              algorithm: str = "ring") -> CollectiveTime:
    """One collective as NCCL runs it on ``gpus`` GPUs of ``network`` nodes, term by term (:class:`CollectiveTime`).

    Chapters: *NVLink, NVSwitch and collectives* ("What a tiny all-reduce costs", "Across nodes"),
    *DGX A100 and the SuperPOD* ("All-reduce across the pod"), *The A100 today*. The latency is the node's
    fixed overhead plus one hop latency per step; the bandwidth term is the ring's (or the tree's, ``2 S``)
    over the slowest hop:

    * up to one node: ``overhead_intra + steps x hop_intra + b S / B_intra``; NCCL's tree inside a node
      is a chain with the ring's hop count and ``2 S`` of traffic, never faster than the ring;
    * across N nodes (whole nodes only), a **ring** is rail-aligned: every channel enters and leaves each
      node through the same adapter, and the channels spread over all adapters, so the bandwidth term runs
      at ``network.ring_bytes_per_s`` = min(B_intra, node's injection bandwidth), with ``2(N-1)`` of its
      ``2(n-1)`` hops (all-reduce) crossing the network. All hops work at once (NCCL pipelines the chunks
      through the ring), so the NVLink and network phases overlap instead of adding up;
    * across nodes a **tree** (all-reduce only) is a chain inside each node and a binary tree between
      nodes: ``overhead_inter + 2 ((g-1) hop_intra + ceil(log2 N) hop_inter) + 2 S / ring_bytes_per_s``.
    """
    check_op(op)
    if not isinstance(network, fabrics.NodeNetwork):
        raise TypeError(f"network must be an ampere.fabrics.NodeNetwork, got {network!r:.60}")
    gpus = _ranks("gpus", gpus)
    size = check.nonneg("size_bytes", size_bytes)
    _check_algorithm(algorithm)
    if algorithm == "tree" and op != "all_reduce":
        raise ValueError(f"algorithm='tree' is modelled for op='all_reduce' only, got op={op!r}; use 'ring'")
    g = network.gpus_per_node
    if gpus <= g:
        a, b = alpha_beta_terms(op, gpus, "ring")
        if algorithm == "tree" and gpus > 1:
            b = 2.0  # a chain: every GPU sends the whole buffer twice (reduce up, broadcast down)
        return CollectiveTime(op, algorithm, size, gpus, 1, network.intra_overhead_s if gpus > 1 else 0.0, int(a),
                              network.intra_latency_s, 0, network.inter_latency_s, b, network.intra_bytes_per_s)
    if gpus % g:
        raise ValueError(f"gpus={gpus} must be <= {g} or a multiple of gpus_per_node={g} for {network.name}")
    if network.hcas_per_node == 0:
        raise ValueError(f"gpus={gpus}: {network.name} has no compute-fabric adapters (hcas_per_node=0); "
                         f"allowed: at most {g} GPUs")
    nodes = gpus // g
    if algorithm == "tree":
        return CollectiveTime(op, algorithm, size, gpus, nodes, network.inter_overhead_s, 2 * (g - 1),
                              network.intra_latency_s, 2 * math.ceil(math.log2(nodes)), network.inter_latency_s,
                              2.0, network.ring_bytes_per_s)
    intra_hops, inter_hops = _hops(op, gpus, nodes)
    _, b = alpha_beta_terms(op, gpus, "ring")
    return CollectiveTime(op, algorithm, size, gpus, nodes, network.inter_overhead_s, intra_hops,
                          network.intra_latency_s, inter_hops, network.inter_latency_s, b, network.ring_bytes_per_s)


def nccl_collective_time(op: str, size_bytes: float, gpus: int,
                         network: fabrics.NodeNetwork = fabrics.DGX_A100, algorithm: str = "ring") -> float:
    """Time (s) of one collective as NCCL runs it on ``gpus`` GPUs of ``network`` nodes.

    Chapters: *NVLink, NVSwitch and collectives* ("What a tiny all-reduce costs", "Across nodes"),
    *DGX A100 and the SuperPOD*, *The A100 today*. ``nccl_collective_breakdown(...).total_s``: see
    :func:`nccl_collective_breakdown` for the terms.
    """
    return nccl_collective_breakdown(op, size_bytes, gpus, network, algorithm).total_s


def all_reduce_time(size_bytes: float, gpus: int, network: fabrics.NodeNetwork = fabrics.DGX_A100,
                    inter_algorithm: str = "ring") -> float:
    """All-reduce of ``size_bytes`` per GPU over ``gpus`` GPUs of ``network`` nodes, as NCCL runs it.

    Chapters: *NVLink* ("Why this decides data-parallel scaling"), *DGX A100 and the SuperPOD*. Same as
    ``nccl_collective_time("all_reduce", size_bytes, gpus, network, inter_algorithm)``: a ring inside one
    node; across whole nodes a rail-aligned ring (or a tree) at ``network.ring_bytes_per_s``.
    """
    return nccl_collective_time("all_reduce", size_bytes, gpus, network,
                                _check_algorithm(inter_algorithm, "inter_algorithm"))


def network_collective_time(op: str, size_bytes: float, gpus: int,
                            network: fabrics.NodeNetwork = fabrics.DGX_A100) -> float:
    """One ring collective over ``gpus`` GPUs of ``network``, as NCCL runs it (:func:`nccl_collective_time`).

    Chapter: *NVLink, NVSwitch and collectives*, "Across nodes". Across nodes the rings are rail-aligned,
    so the bandwidth term runs at ``network.ring_bytes_per_s`` (DGX A100: 200 GB/s), not at one adapter's
    share.
    """
    return nccl_collective_time(op, size_bytes, gpus, network, "ring")
