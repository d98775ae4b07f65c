"""A node's network as data: the NVLink domain inside it and the adapters (HCAs) that leave it.

Chapters: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), *DGX A100 and the SuperPOD*
(book/dgx-superpod.ipynb), *Megatron-LM* and *The A100 today*, which all time collectives on these
networks with :mod:`ampere.collectives`.

A :class:`NodeNetwork` says, for one kind of node:

* ``nvlink_domain`` -- how many GPUs share NVLink/NVSwitch (8 on a DGX; 2 for a pair of PCIe cards with
  an NVLink bridge; 1 when GPUs only meet over PCIe);
* ``intra_bytes_per_s`` and ``intra_latency_s`` -- what one GPU can use inside that domain, **per
  direction** (effective: what NCCL reaches, not the line rate), and the cost of one hop between two
  GPUs of the node;
* ``hcas_per_node`` and ``hca_bytes_per_s`` -- compute-fabric adapters of the node and the data rate of
  one port, per direction (HDR InfiniBand: 200 Gb/s = 25 GB/s);
* ``inter_latency_s`` -- the cost of one hop between nodes;
* ``intra_overhead_s`` and ``inter_overhead_s`` -- the fixed cost of one collective (launch, start and
  end synchronisation) inside one node and across nodes, paid once whatever the number of hops.

The latency of a collective is therefore ``overhead + hops x hop latency``, not ``steps x alpha`` with one
alpha swallowing the fixed cost. The four latency figures are not fitted to anything here: they are
derived from named published nccl-tests logs (:data:`LATENCY_RECORDS`) -- the smallest all-reduces of 4
and 8 A100s in one node give the overhead and the NVLink hop, the same on 2 and 16 nodes give the
network overhead and hop -- and the chapter checks them against logs they were not derived from.

Presets: :data:`DGX_A100` (the default everywhere), :data:`DGX_H100`, :data:`DGX_1_V100`,
:data:`A100_PCIE_SERVER`; :func:`node_network` builds any other (e.g. an A100 node with 4 HCAs, one per
two GPUs). Link rates are read from :mod:`ampere.specs`; each other figure carries its bib key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from . import check, results, specs

__all__ = [
    "NVLINK_PAYLOAD_EFFICIENCY", "PCIE_EFFICIENCY", "IB_EDR_BYTES_PER_S", "IB_HDR_BYTES_PER_S",
    "IB_NDR_BYTES_PER_S", "A100_INTRA_LATENCY_S", "INTER_LATENCY_S", "A100_INTRA_OVERHEAD_S", "INTER_OVERHEAD_S",
    "LATENCY_RECORDS", "TINY_SIZE_RANGE_BYTES", "tiny_all_reduce_us", "nvlink_bytes_per_s_per_direction",
    "nvlink_effective_bytes_per_s", "A100_INTRA_BYTES_PER_S", "NodeNetwork", "node_network", "DGX_A100",
    "DGX_H100", "DGX_1_V100", "A100_PCIE_SERVER", "PRESETS", "DGX_A100_INTER_BYTES_PER_S",
    "MAX_GPUS", "MAX_GPUS_PER_NODE", "MAX_HCAS_PER_NODE", "MAX_LATENCY_S", "MAX_BYTES_PER_S",
]

#: The most GPUs a model of this book accepts in one collective or cluster: a million, beyond every cluster
#: built so far (a bound against typing mistakes such as 10**12, not a physical limit).
MAX_GPUS = 1_000_000
#: The most GPUs in one node (or NVLink domain): NVIDIA's NVL72 racks join 72; 1,024 leaves room.
MAX_GPUS_PER_NODE = 1024
#: The most compute-fabric adapters in one node (a DGX has 8; 64 leaves room).
MAX_HCAS_PER_NODE = 64
#: The longest hop latency or fixed cost of a collective a model accepts: one second (the book's are
#: microseconds; a second is a unit mistake, not a network).
MAX_LATENCY_S = 1.0
#: The fastest link a model accepts, per direction: 100 TB/s (NVLink 5 carries 0.9 TB/s per GPU).
MAX_BYTES_PER_S = 1e14



#: Fraction of the NVLink line rate NCCL's SM-driven copies carry as payload: 128-byte payloads turn each
#: link's 25 GB/s per direction into about 20 GB/s (nccl-tests#149, NVIDIA's NCCL maintainer).
NVLINK_PAYLOAD_EFFICIENCY = 20.0 / 25.0  # source: nccltests149
#: Payload efficiency assumed for PCIe rings: the same 0.8 as NVLink (an assumption, optimistic for rings
#: that cross the CPU; see the NVLink chapter).
PCIE_EFFICIENCY = NVLINK_PAYLOAD_EFFICIENCY
#: InfiniBand EDR port: 100 Gb/s = 12.5 GB/s per direction (DGX-1: 4 of them).
IB_EDR_BYTES_PER_S = 100e9 / 8  # source: nvidia2017dgx1
#: InfiniBand HDR port: 200 Gb/s data rate = 25 GB/s per direction (DGX A100: 8 of them).
IB_HDR_BYTES_PER_S = 200e9 / 8  # source: nvidia2020dgxa100wp
#: InfiniBand NDR port: 400 Gb/s = 50 GB/s per direction (DGX H100: 8 single-port ConnectX-7).
IB_NDR_BYTES_PER_S = 400e9 / 8  # source: nvidia2024basepod


#: The published nccl-tests logs the latency terms are derived from (``ampere/data/published/collectives.json``):
#: all-reduces of 4 and 8 A100s in one node, and of 2 and 16 nodes of 8 A100s, one process per GPU, NCCL 2.8.4
#: [abci2021benchmark]. The chapter tests the terms against other logs.
LATENCY_RECORDS: dict[str, str] = {
    "intra_4": "abci2-a100-4gpu-all-reduce", "intra_8": "abci2-a100-8gpu-all-reduce",
    "inter_2": "abci2-a100-2node-all-reduce", "inter_16": "abci2-a100-16node-all-reduce"}
#: Message sizes (bytes) taken as "tiny": the time no longer depends on the size (the latency floor).
TINY_SIZE_RANGE_BYTES = (8, 64)


def tiny_all_reduce_us(record_id: str) -> float:
    """Latency floor of a published nccl-tests sweep: the median time (µs) of its sizes from 8 to 64 bytes.

    Chapter: *NVLink, NVSwitch and collectives*, section "What a tiny all-reduce costs". The median of the
    four rows rather than the first: the first size of a sweep often carries a warm-up outlier.
    """
    if not isinstance(record_id, str):
        raise TypeError(f"record_id must be a string, got {record_id!r} ({type(record_id).__name__})")
    recs = {r.id: r for r in results.records(benchmark="all-reduce", kind="published")
            if "sweep_size_bytes" in r.figures and "sweep_time_us" in r.figures}
    check.one_of("record_id", record_id, sorted(recs))
    fig = recs[record_id].figures
    lo, hi = TINY_SIZE_RANGE_BYTES
    times = sorted(t for s, t in zip(fig["sweep_size_bytes"], fig["sweep_time_us"]) if lo <= s <= hi)
    if not times:
        raise ValueError(f"record_id={record_id!r} has no size between {lo} and {hi} bytes")
    mid = len(times) // 2
    return times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2


def _param(record_id: str, name: str) -> int:
    rec = next(r for r in results.records(benchmark="all-reduce", kind="published") if r.id == record_id)
    return int(rec.params[name])


def _intra_terms() -> tuple[float, float]:
    """(overhead, hop) in seconds from t(n) = overhead + 2(n-1) hop on the two one-node logs."""
    a, b = LATENCY_RECORDS["intra_4"], LATENCY_RECORDS["intra_8"]
    hops_a, hops_b = 2 * (_param(a, "gpus") - 1), 2 * (_param(b, "gpus") - 1)
    ta, tb = tiny_all_reduce_us(a), tiny_all_reduce_us(b)
    hop = (tb - ta) / (hops_b - hops_a)
    return (ta - hops_a * hop) * 1e-6, hop * 1e-6


def _inter_terms(intra_hop_s: float) -> tuple[float, float]:
    """(overhead, hop) in seconds from NCCL's tree across N nodes of g GPUs, on the two multi-node logs:
    t(N) = overhead + 2 (g - 1) intra_hop + 2 log2(N) hop (a chain inside each node, a tree between nodes)."""
    a, b = LATENCY_RECORDS["inter_2"], LATENCY_RECORDS["inter_16"]
    na, nb = _param(a, "nodes"), _param(b, "nodes")
    g = _param(a, "gpus") // na
    ta, tb = tiny_all_reduce_us(a), tiny_all_reduce_us(b)
    hop = (tb - ta) / (2 * math.log2(nb) - 2 * math.log2(na))
    return (ta - 2 * (g - 1) * intra_hop_s * 1e6 - 2 * math.log2(na) * hop) * 1e-6, hop * 1e-6


#: Fixed cost of one collective inside a node of A100s (launch, start and end synchronisation) and the
#: cost of one NVLink hop, derived from the 4- and 8-GPU logs of :data:`LATENCY_RECORDS` (about 8.2 µs and
#: 0.64 µs). A tiny all-reduce on n GPUs costs overhead + 2(n-1) hops: about 17 µs on 8 GPUs.
A100_INTRA_OVERHEAD_S, A100_INTRA_LATENCY_S = _intra_terms()  # source: abci2021benchmark
#: Fixed cost of a collective that spans nodes and the cost of one hop between nodes (InfiniBand HDR,
#: NCCL's proxy included), derived from the 2- and 16-node logs of :data:`LATENCY_RECORDS` (about 13.7 µs
#: and 4.9 µs).
INTER_OVERHEAD_S, INTER_LATENCY_S = _inter_terms(A100_INTRA_LATENCY_S)  # source: abci2021benchmark


def nvlink_bytes_per_s_per_direction(gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> float:
    """NVLink line rate of one GPU, per direction, all links together (A100: 12 x 25 GB/s = 300 GB/s).

    Chapter: *NVLink, NVSwitch and collectives*, section "The links". Read from ``ampere.specs``
    (``nvlink_bytes_per_s`` is the bidirectional sum). GPUs without NVLink give 0.
    """
    return specs.get(gpu).nvlink_bytes_per_s / 2


def nvlink_effective_bytes_per_s(gpu: str | specs.GPUSpec = "A100-SXM4-80GB") -> float:
    """NVLink bandwidth per direction that NCCL can use: line rate x 128-byte payload efficiency.

    Chapter: *NVLink, NVSwitch and collectives*, section "Why 230 GB/s, not 600". For an A100:
    12 links x 25 GB/s x 0.8 = 240 GB/s; NVIDIA's maintainer adds that other on-GPU bottlenecks leave
    about 230 GB/s of all-reduce busbw at large sizes [nccltests149].
    """
    return nvlink_bytes_per_s_per_direction(gpu) * NVLINK_PAYLOAD_EFFICIENCY


#: Default intra-node bandwidth: effective NVLink 3 of an A100 on NVSwitch (240 GB/s per direction).
A100_INTRA_BYTES_PER_S = nvlink_effective_bytes_per_s("A100-SXM4-80GB")


@dataclass(frozen=True)
class NodeNetwork:
    """One node's network (see the module docstring). Bandwidths per direction, in bytes/s.

    Chapter: *NVLink, NVSwitch and collectives*, "Across nodes"; *DGX A100 and the SuperPOD*, "One box".
    """

    name: str
    gpu: str  # catalogue name (ampere.specs)
    gpus_per_node: int
    nvlink_domain: int  # GPUs joined by NVLink/NVSwitch (1: PCIe only)
    intra_bytes_per_s: float  # per GPU, effective, inside the NVLink domain (or over PCIe)
    intra_latency_s: float
    hcas_per_node: int  # compute-fabric ports of the node (0: a single box)
    hca_bytes_per_s: float  # data rate of one port, per direction
    inter_latency_s: float
    source: str = ""  # bib key of the node's network description
    note: str = ""
    intra_overhead_s: float = A100_INTRA_OVERHEAD_S  # fixed cost of a collective inside one node
    inter_overhead_s: float = INTER_OVERHEAD_S  # fixed cost of a collective that spans nodes

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpu", specs.get(check.string("gpu", self.gpu)).name)
        g = check.bounded_int("gpus_per_node", self.gpus_per_node, 1, MAX_GPUS_PER_NODE,
                              why="GPUs in one node or NVLink domain")
        object.__setattr__(self, "gpus_per_node", g)
        d = check.positive_int("nvlink_domain", self.nvlink_domain, maximum=g)
        object.__setattr__(self, "nvlink_domain", d)
        object.__setattr__(self, "intra_bytes_per_s", check.positive("intra_bytes_per_s", self.intra_bytes_per_s,
                                                                     maximum=MAX_BYTES_PER_S))
        h = check.bounded_int("hcas_per_node", self.hcas_per_node, 0, MAX_HCAS_PER_NODE,
                              why="compute-fabric adapters of one node")
        object.__setattr__(self, "hcas_per_node", h)
        bw = check.nonneg("hca_bytes_per_s", self.hca_bytes_per_s, maximum=MAX_BYTES_PER_S)
        if h and bw == 0:
            raise ValueError(f"hca_bytes_per_s must be > 0 when hcas_per_node={h}, got {bw:g}")
        object.__setattr__(self, "hca_bytes_per_s", bw)
        for name in ("intra_latency_s", "inter_latency_s", "intra_overhead_s", "inter_overhead_s"):
            object.__setattr__(self, name, check.nonneg(name, getattr(self, name), maximum=MAX_LATENCY_S))
        check.string("name", self.name)
        for name in ("source", "note"):
            check.string(name, getattr(self, name), allow_empty=True)

    @property
    def inter_bytes_per_s(self) -> float:
        """The node's injection bandwidth into the compute fabric, per direction (all HCAs together)."""
        return self.hcas_per_node * self.hca_bytes_per_s

    @property
    def inter_bytes_per_s_per_gpu(self) -> float:
        """Compute-fabric bandwidth per GPU, per direction (DGX A100: 25 GB/s)."""
        return self.inter_bytes_per_s / self.gpus_per_node

    @property
    def ring_bytes_per_s(self) -> float:
        """Bus bandwidth a multi-node NCCL ring can reach, per direction: the slower of one GPU's share
        inside the node and the node's whole injection bandwidth.

        NCCL builds each ring (channel) so that it enters and leaves every node through the same adapter
        index, a "rail"; with at least one channel per adapter all of them carry traffic at once, so the
        inter-node hops of the rings share ``inter_bytes_per_s`` (DGX A100: 8 x 25 = 200 GB/s), not one
        adapter's 25 GB/s. A single box (no adapters) gives its intra-node rate.
        """
        if not self.hcas_per_node:
            return self.intra_bytes_per_s
        return min(self.intra_bytes_per_s, self.inter_bytes_per_s)

    @property
    def gpus_per_hca(self) -> float:
        """GPUs sharing one adapter (1 on a DGX; 2 on a 4-HCA node of 8 GPUs)."""
        return self.gpus_per_node / self.hcas_per_node if self.hcas_per_node else float("inf")

    @property
    def intra_to_inter_ratio(self) -> float:
        """Per-GPU bandwidth inside the node over per-GPU bandwidth leaving it (inf for a single box)."""
        per_gpu = self.inter_bytes_per_s_per_gpu
        return self.intra_bytes_per_s / per_gpu if per_gpu else float("inf")

    def with_(self, **changes: Any) -> "NodeNetwork":
        """A copy with some fields changed (validated again): ``DGX_A100.with_(hcas_per_node=4)``."""
        return replace(self, **changes)


def node_network(gpu: str | specs.GPUSpec = "A100-SXM4-80GB", gpus_per_node: int = 8, hcas_per_node: int = 8,
                 hca_bytes_per_s: float = IB_HDR_BYTES_PER_S, nvlink_domain: int | None = None,
                 intra_latency_s: float = A100_INTRA_LATENCY_S, inter_latency_s: float = INTER_LATENCY_S,
                 name: str = "", intra_overhead_s: float = A100_INTRA_OVERHEAD_S,
                 inter_overhead_s: float = INTER_OVERHEAD_S) -> NodeNetwork:
    """A node built from its parts: ``gpus_per_node`` GPUs, ``hcas_per_node`` ports of ``hca_bytes_per_s``.

    Chapter: *NVLink, NVSwitch and collectives*, "Across nodes". The NVLink domain defaults to the whole
    node for SXM GPUs with NVLink, to a pair for PCIe cards with an NVLink bridge (two GPUs per node), and
    to 1 otherwise; inside it the GPU's effective NVLink rate applies, outside it PCIe at
    :data:`PCIE_EFFICIENCY`. Example: ``node_network(hcas_per_node=4)`` is an 8 x A100 node with one HDR
    adapter per two GPUs.
    """
    spec = specs.get(gpu)
    g = check.bounded_int("gpus_per_node", gpus_per_node, 1, MAX_GPUS_PER_NODE, why="GPUs in one node")
    h = check.bounded_int("hcas_per_node", hcas_per_node, 0, MAX_HCAS_PER_NODE,
                          why="compute-fabric adapters of one node")
    hca_bw = check.nonneg("hca_bytes_per_s", hca_bytes_per_s, maximum=MAX_BYTES_PER_S)
    name = check.string("name", name, allow_empty=True)
    if nvlink_domain is None:
        if spec.nvlink_bytes_per_s and spec.form_factor.startswith("SXM"):
            nvlink_domain = g
        elif spec.nvlink_bytes_per_s and g == 2:
            nvlink_domain = 2
        else:
            nvlink_domain = 1
    d = check.positive_int("nvlink_domain", nvlink_domain, maximum=g)
    if d > 1 and not spec.nvlink_bytes_per_s:
        raise ValueError(f"nvlink_domain={d} but {spec.name} has no NVLink; allowed: 1")
    intra = nvlink_effective_bytes_per_s(spec) if d == g and d > 1 else spec.pcie_bytes_per_s * PCIE_EFFICIENCY
    label = name or f"{g} x {spec.name}, {h} x {hca_bw * 8 / 1e9:.0f} Gb/s"
    return NodeNetwork(label, spec.name, g, d, intra, intra_latency_s, h, hca_bw,
                       inter_latency_s, note="built by node_network()", intra_overhead_s=intra_overhead_s,
                       inter_overhead_s=inter_overhead_s)


#: DGX A100: 8 x A100 on 6 NVSwitches, 8 single-port ConnectX-6 HDR adapters for the compute fabric.
DGX_A100 = NodeNetwork(
    "DGX A100", "A100-SXM4-80GB", 8, 8, A100_INTRA_BYTES_PER_S, A100_INTRA_LATENCY_S, 8, IB_HDR_BYTES_PER_S,
    INTER_LATENCY_S, source="nvidia2020dgxa100wp",
    note="12 NVLink 3 links x 25 GB/s x 0.8 through NVSwitch; 8 x HDR 200 Gb/s per node")
#: DGX H100: 8 x H100 on 4 NVSwitches, 8 single-port ConnectX-7 at up to 400 Gb/s [nvidia2024basepod].
DGX_H100 = NodeNetwork(
    "DGX H100", "H100-SXM5-80GB", 8, 8, nvlink_effective_bytes_per_s("H100-SXM5-80GB"), A100_INTRA_LATENCY_S,
    8, IB_NDR_BYTES_PER_S, INTER_LATENCY_S, source="nvidia2024basepod",
    note="18 NVLink 4 links x 25 GB/s x 0.8 through NVSwitch; 8 x NDR 400 Gb/s per node; the latency "
         "terms of the A100 are assumed")
#: DGX-1 (V100): hybrid cube-mesh of NVLink 2, 4 x EDR 100 Gb/s per node [nvidia2017dgx1].
DGX_1_V100 = NodeNetwork(
    "DGX-1 (V100)", "V100-SXM2-32GB", 8, 8, nvlink_effective_bytes_per_s("V100-SXM2-32GB"), A100_INTRA_LATENCY_S,
    4, IB_EDR_BYTES_PER_S, INTER_LATENCY_S, source="nvidia2017dgx1",
    note="6 NVLink 2 links x 25 GB/s x 0.8 (rings over all links of the hybrid cube-mesh); 4 x EDR 100 Gb/s")
#: 8 x A100 PCIe in one server, no NVLink between them; 2 HDR ports per node (an assumption).
A100_PCIE_SERVER = NodeNetwork(
    "8x A100 PCIe", "A100-PCIE-80GB", 8, 1, specs.get("A100-PCIE-80GB").pcie_bytes_per_s * PCIE_EFFICIENCY,
    A100_INTRA_LATENCY_S, 2, IB_HDR_BYTES_PER_S, INTER_LATENCY_S,
    note="PCIe Gen4 x16, 31.5 GB/s x 0.8 per direction (assumed); 2 x HDR 200 Gb/s per node (assumed)")

#: The presets by name.
PRESETS: dict[str, NodeNetwork] = {n.name: n for n in (DGX_A100, DGX_H100, DGX_1_V100, A100_PCIE_SERVER)}
#: Per-node inter-node bandwidth of a DGX A100, per direction: 8 x 25 GB/s = 200 GB/s.
DGX_A100_INTER_BYTES_PER_S = DGX_A100.inter_bytes_per_s
