"""One DGX A100 node as data: :class:`DGXNode`, :func:`dgx_a100`, the node's power and list price.

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), section "One box".
GPU figures are read from :mod:`ampere.specs`; the system figures (NVSwitches, CPUs, host memory, NVMe,
NICs, 6.5 kW) carry the bib key of the document they were read in (``DGXNode.sources``). Pure Python: no
torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from .. import fabrics, specs
from .. import fields as _fields


#: InfiniBand HDR: 200 Gb/s per port = 25 GB/s per direction (the value of :mod:`ampere.fabrics`).
HDR_PORT_BYTES_PER_S = fabrics.IB_HDR_BYTES_PER_S

#: Maximum system power of a DGX A100 (both memory sizes), in watts [nvidia2020dgxa100wp].
DGX_A100_MAX_POWER_W = 6500.0  # source: nvidia2020dgxa100wp
#: Launch list price of the DGX A100 320GB, US dollars [anandtech2020ampere].
DGX_A100_320GB_LIST_PRICE_USD = 199_000.0  # source: anandtech2020ampere


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
        _fields.check_annotated(self, positive=("gpus", "cpu_sockets", "cpu_cores_per_socket", "cpu_base_clock_hz",
                                              "compute_port_bytes_per_s", "max_power_w", "rack_units"),
                              maxima={"gpus": fabrics.MAX_GPUS_PER_NODE, "compute_nics": fabrics.MAX_HCAS_PER_NODE,
                                      "compute_port_bytes_per_s": fabrics.MAX_BYTES_PER_S})
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
