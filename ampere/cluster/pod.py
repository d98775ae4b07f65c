"""The DGX SuperPOD: node + fabric + power (:class:`SuperPOD`, :func:`superpod`, :func:`scaling_table`).

Chapter: *DGX A100 and the SuperPOD -- from one box to Selene* (book/dgx-superpod.ipynb), sections "The
SuperPOD as a model you can resize" and "From 20 to 2,000 nodes". ``superpod(nodes=140)`` is the reference
140-node SuperPOD (1,120 GPUs) [nvidia2020superpod]. Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from .. import check, specs
from .. import fields as _fields
from .checks import _check_float
from .fabric import QM8790_PORTS, TIERS, Fabric, fat_tree, switch_lower_bound
from .node import DGXNode, dgx_a100


#: Power of one 40-port HDR switch with its optics, in watts. An **assumption of this chapter** (order of
#: magnitude of a 1U switch; we found no datasheet figure to cite): pass ``switch_power_w`` to change it.
#: Switches are a few per cent of a pod's power, so the conclusions do not hang on it.
SWITCH_POWER_W_ASSUMED = 400.0
#: The most power per switch :func:`superpod` accepts (a bound against unit mistakes: 10 kW).
MAX_SWITCH_POWER_W = 1e4
#: The most rows :func:`scaling_table` builds (a bound on the work one call does).
MAX_TABLE_ROWS = 1000


@dataclass(frozen=True)
class SuperPOD:
    """A DGX SuperPOD of ``fabric.nodes`` DGX A100 (chapter section "The SuperPOD as a model")."""

    node: DGXNode
    fabric: Fabric
    switch_power_w: float  # per switch, an assumption (SWITCH_POWER_W_ASSUMED)

    def __post_init__(self) -> None:
        _fields.check_annotated(self)

    @property
    def nodes(self) -> int:
        return self.fabric.nodes

    @property
    def gpus(self) -> int:
        return self.nodes * self.node.gpus

    @property
    def scalable_units(self) -> int:
        """SUs that hold nodes (the fabric may be built for more, see :func:`.fabric.fat_tree`)."""
        return self.fabric.populated_scalable_units

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
    power = _check_float(switch_power_w, "switch_power_w", hi=MAX_SWITCH_POWER_W)
    return SuperPOD(node=node, fabric=fabric, switch_power_w=power)


def scaling_table(node_counts: Iterable[int], **kwargs: Any) -> list[dict[str, Any]]:
    """One row per node count: GPUs, SUs, levels, switch counts, lower bound, cables, transceivers,
    bisection (per direction) and power. Chapter section "From 20 to 2,000 nodes"."""
    counts = check.sequence("node_counts", node_counts, lambda name, v: check.positive_int(name, v),
                            max_len=MAX_TABLE_ROWS)
    rows = []
    for n in counts:
        pod = superpod(n, **kwargs)
        lb = switch_lower_bound(n, pod.fabric.rails, pod.fabric.su_nodes, pod.fabric.switch_ports)
        rows.append({"nodes": pod.nodes, "gpus": pod.gpus, "su": pod.scalable_units,
                     "su_built": pod.fabric.scalable_units, "levels": pod.fabric.levels,
                     "leaf": pod.leaf_switches, "spine": pod.spine_switches, "core": pod.core_switches,
                     "switches": pod.switches, "lower_bound": sum(lb.values()),
                     "cables": pod.fabric.cables_total, "transceivers": pod.transceivers,
                     "bisection_bytes_per_s": pod.bisection_bytes_per_s, "power_w": pod.power_w})
    return rows
