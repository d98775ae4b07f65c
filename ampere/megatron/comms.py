"""The communication of a training step, collective by collective, and what overlapping it with compute
costs: tensor-parallel collectives inside a node (or across nodes beyond 8 GPUs), pipeline sends, the
data-parallel gradient reduction and ZeRO-3's parameter gathers; :func:`overlapped` prices a collective run
beside a kernel; :func:`step_collectives` lists the collectives one data-parallel scheme issues per step.

Chapter: *Megatron-LM: 3D parallelism predicted, validated, and run* (book/megatron.ipynb), sections
"A throughput model built from hardware", "Overlap: what hiding communication buys" and "ZeRO and FSDP as
ideas". Pure: collective times from :mod:`ampere.collectives` over the node network of :mod:`ampere.fabrics`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from .. import check, collectives, fabrics
from .hardware import _Hardware
from .inputs import INPUTS


def overlapped(comm_s: float, compute_s: float, slowdown: float | None = None) -> float:
    """Exposed time of a collective of ``comm_s`` seconds run beside a kernel of ``compute_s`` seconds.

    While both run, the kernel progresses ``slowdown`` times slower (they compete for HBM bandwidth;
    default :data:`INPUTS` ``overlap_slowdown``, measured on an A100 [nccl1428]). If the collective
    outlasts the slowed kernel, it costs ``comm - compute``; otherwise the kernel loses
    ``comm (1 - 1/slowdown)``. With ``slowdown = 1`` overlap is perfect, ``max(comm - compute, 0)``; as it
    grows the collective is exposed in full. Chapter: "Overlap: what hiding communication buys".
    """
    c = check.nonneg("comm_s", comm_s)
    g = check.nonneg("compute_s", compute_s)
    k = INPUTS["overlap_slowdown"].value if slowdown is None else check.real("slowdown", slowdown, minimum=1.0,
                                                                             maximum=1e6)
    if c == 0:
        return 0.0
    return max(c - g, c * (1 - 1 / k))


def slowdown_at(hw: _Hardware, bytes_per_s: float) -> float:
    """Interference factor of a collective running at ``bytes_per_s`` per GPU beside a kernel.

    The published factor (:data:`INPUTS` ``overlap_slowdown``) was measured beside an NCCL all-gather inside an
    A100 node, at NVLink rates; the NCCL maintainer attributes it to competition for HBM bandwidth, which a
    collective consumes in proportion to its own rate. So the excess scales with the rate: a collective over
    the node's network adapters (about a tenth of NVLink's) slows the kernel about a tenth as much.
    Chapter: "Overlap: what hiding communication buys".
    """
    k = INPUTS["overlap_slowdown"].value
    rate = check.positive("bytes_per_s", bytes_per_s)
    return 1 + (k - 1) * min(1.0, rate / hw.nvl_bw)


@functools.lru_cache(maxsize=256)
def _group_network(net: fabrics.NodeNetwork, members: int) -> fabrics.NodeNetwork:
    """The node as one group of ``members`` ranks per node sees it: its members on NVLink and one rail each,
    at the node's per-GPU share of the adapters (the other groups of the node use the other rails)."""
    if members == net.gpus_per_node:
        return net
    share = net.inter_bytes_per_s_per_gpu
    return net.with_(name=f"{net.name}, {members} of its GPUs", gpus_per_node=members,
                     nvlink_domain=min(members, net.nvlink_domain), hcas_per_node=members if share else 0,
                     hca_bytes_per_s=share)


def group_collective(hw: _Hardware, op: str, nbytes: float, ranks: int, members_per_node: int) -> float:
    """One ring collective of ``nbytes`` per rank over a group of ``ranks`` GPUs with ``members_per_node`` of
    them in each node, as NCCL runs it (:func:`ampere.collectives.nccl_collective_time`, chapter *NVLink,
    NVSwitch and collectives*): the fixed overhead of the collective, one hop latency per step (NVLink
    inside a node, the network between nodes) and the bandwidth term. Inside one node the ring runs over
    NVSwitch at the model's ``nvl_bw``; across nodes NCCL's rings are rail-aligned, so the group's members
    in a node each leave it through their own adapter and the ring runs at min(NVLink, members x one
    adapter's share), while the node's other groups use the other rails at the same time. A group that
    does not fill its nodes evenly is taken as the largest even split (``gcd``). Chapter: "A throughput
    model built from hardware"."""
    if ranks == 1:
        return 0.0
    net = hw.net
    k = max(1, min(members_per_node, net.gpus_per_node, ranks))
    if ranks > k:
        k = math.gcd(k, ranks)
        if net.hcas_per_node == 0:
            raise ValueError(f"a group of {ranks} GPUs spans nodes but {net.name} has no network adapters "
                             f"(hcas_per_node=0); allowed: at most {net.gpus_per_node} GPUs")
    return collectives.nccl_collective_time(op, nbytes, ranks, _group_network(net, k))


def tp_collective(hw: _Hardware, op: str, nbytes: float, t: int) -> float:
    """A reduce-scatter, all-gather or all-reduce of ``nbytes`` over ``t`` tensor-parallel ranks (consecutive
    ranks: NVSwitch inside a node, rail-aligned rings over whole nodes beyond it), :func:`group_collective`."""
    return group_collective(hw, op, nbytes, t, min(t, hw.per_node))


def p2p_time(hw: _Hardware, nbytes: float, t: int, d: int, p: int, scatter_gather: bool) -> float:
    """One exchange of ``nbytes`` between consecutive pipeline stages (forward activations or gradients).

    Stage k holds ranks [k t d, (k+1) t d): when the pipeline spans more than one node, some stage
    boundary crosses nodes, and the device behind it paces the pipeline. With ``scatter_gather`` each tensor
    rank sends 1/t over its own adapter and an all-gather over NVLink rebuilds the tensor. A send is one
    NCCL operation of one hop: it pays the node network's fixed overhead and one hop latency (inside the
    node or between nodes), like a collective (an assumption: the overheads were derived from all-reduces).
    """
    net = hw.net
    if t * d * p <= hw.per_node:  # the whole pipeline inside one node: NVLink
        return nbytes / hw.nvl_bw + net.intra_overhead_s + net.intra_latency_s
    hop = net.inter_overhead_s + net.inter_latency_s
    if scatter_gather and 1 < t <= hw.per_node:
        return (nbytes / t) / hw.ib_bw + hop + group_collective(hw, "all_gather", nbytes, t, t)
    return nbytes / hw.ib_bw + hop


def dp_collective(hw: _Hardware, op: str, nbytes: float, t: int, d: int) -> float:
    """A collective of ``nbytes`` per rank over one data-parallel group of ``d`` ranks (ranks ordered tensor,
    then data, then pipeline): NVSwitch while the group fits in a node; across nodes NCCL's rings are
    rail-aligned (each member of the group in a node leaves it through its own adapter), so their bandwidth
    is the group's share of the node's adapters, at most NVLink's (:func:`group_collective`).
    Chapter: "A throughput model built from hardware"."""
    return group_collective(hw, op, nbytes, d, max(1, hw.per_node // t))


def dp_bytes_per_s(hw: _Hardware, t: int, d: int) -> float:
    """The per-GPU rate of a data-parallel collective (its HBM traffic sets the overlap interference)."""
    if t * d <= hw.per_node:
        return hw.nvl_bw
    return min(hw.nvl_bw, max(1, hw.per_node // t) * hw.ib_bw)


#: ZeRO stages and FSDP as the collectives they issue per training step and GPU, in units of the 16-bit
#: weights (or gradients) P of one GPU's model replica: (stage, phase, collective, bytes in units of P, when).
_SCHEDULE: tuple[tuple[str, str, str, float, str], ...] = (
    ("DDP (ZeRO-0)", "backward", "all-reduce", 1.0, "gradients, in buckets during the last microbatch's backward"),
    ("ZeRO-1", "backward", "reduce-scatter", 1.0, "gradients, each rank keeps the 1/N it updates"),
    ("ZeRO-1", "after the step", "all-gather", 1.0, "the updated 16-bit weights"),
    ("ZeRO-2", "backward", "reduce-scatter", 1.0, "gradients, bucket by bucket (the full gradient never exists)"),
    ("ZeRO-2", "after the step", "all-gather", 1.0, "the updated 16-bit weights"),
    ("ZeRO-3 / FSDP", "forward", "all-gather", 1.0, "each layer's weights just before (or while the previous layer "
                                                     "computes) its forward; freed after"),
    ("ZeRO-3 / FSDP", "backward", "all-gather", 1.0, "each layer's weights again for its backward"),
    ("ZeRO-3 / FSDP", "backward", "reduce-scatter", 1.0, "each layer's gradients, as soon as they are computed"),
)


def step_collectives(params_per_gpu: float, data_parallel: int, microbatches: int = 1,
                     grad_bytes: int = 2) -> list[dict[str, Any]]:
    """The collectives of one training step per GPU for plain data parallelism, ZeRO-1, ZeRO-2 and
    ZeRO-3/FSDP: what moves, when, and how many bytes each GPU sends (ring algorithms: (N-1)/N of the buffer
    per all-gather or reduce-scatter, twice that per all-reduce).

    ``params_per_gpu`` is the replica's parameter count, ``grad_bytes`` the bytes of a reduced gradient
    (2: 16-bit, 4: fp32). ZeRO-3 gathers the weights for every microbatch (``microbatches`` of them) and
    reduce-scatters every microbatch's gradients; the other schemes reduce once per step.
    Chapter: "ZeRO and FSDP as ideas".
    """
    n = check.positive("params_per_gpu", params_per_gpu, maximum=1e16)
    d = check.positive_int("data_parallel", data_parallel, maximum=1_000_000)
    m = check.positive_int("microbatches", microbatches, maximum=1_000_000)
    g = check.choice("grad_bytes", grad_bytes, (2, 4))
    frac = (d - 1) / d
    rows = []
    for scheme, phase, op, units, what in _SCHEDULE:
        per_step = m if scheme.startswith("ZeRO-3") else 1
        element = g if (op == "reduce-scatter" or op == "all-reduce") else 2
        buf = n * units * element
        sent = buf * frac * (2 if op == "all-reduce" else 1) * per_step
        rows.append({"scheme": scheme, "phase": phase, "collective": op, "what": what, "times per step": per_step,
                     "buffer bytes": buf, "bytes sent per GPU": sent})
    return rows
