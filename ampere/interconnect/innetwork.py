"""In-network reduction (NVLink SHARP, InfiniBand SHARP) and PXN: what they save, in the chapter's model.

Chapter: *NVLink, NVSwitch and collectives* (book/nvlink.ipynb), section "Reducing inside the network".

* A ring all-reduce makes every GPU send ``2(n-1)/n`` times its buffer: that factor is the bus-bandwidth
  factor of nccl-tests. When the switch adds (NVLink SHARP on third-generation NVSwitch, Hopper; SHARP on
  InfiniBand switches, through NCCL's CollNet), each GPU sends its buffer once and receives the sum once,
  so the same links finish ``2(n-1)/n`` times sooner: :func:`all_reduce_busbw_bound`.
* Across nodes the same reasoning applies to the bytes that leave each node: a rail ring sends
  ``2(n-1)/n S`` per node, an in-network reduction ``S`` (:func:`network_bytes_per_node`), after which
  NVLink inside the node may become the limit (:func:`sharp_all_reduce_busbw`).
* PXN ("PCI x NVLink") sends to a remote GPU through the local GPU that sits on the destination's rail:
  one NVLink hop more, and no byte leaves its rail (:func:`pxn_traffic`).

Pure Python: no torch, no matplotlib.
"""

from __future__ import annotations

from .. import check, fabrics
from ..collectives import busbw_factor


def all_reduce_busbw_bound(n: int, link_bytes_per_s: float, in_network: bool, efficiency: float = 1.0) -> float:
    """Highest all-reduce busbw (bytes/s, nccl-tests' definition) ``n`` GPUs reach on links of
    ``link_bytes_per_s`` per direction, without or with the reduction done in the switch.

    Chapter: *NVLink, NVSwitch and collectives*, "Reducing inside the network". Without: a ring, each GPU
    sends ``2(n-1)/n S`` and ``busbw = B``. With: each GPU sends ``S`` and receives ``S``, ``algbw = B`` and
    ``busbw = 2(n-1)/n B`` (x ``efficiency`` of the switch's reduction engines): the factor that was a
    cost becomes the gain.
    """
    n = check.positive_int("n", n)
    bw = check.positive("link_bytes_per_s", link_bytes_per_s)
    eff = check.fraction("efficiency", efficiency, allow_zero=False)
    if n == 1:
        return 0.0
    return busbw_factor("all_reduce", n) * bw * eff if check.boolean("in_network", in_network) else bw


def network_bytes_per_node(size_bytes: float, gpus: int, in_network: bool) -> float:
    """Bytes each node sends into the network for an all-reduce of ``size_bytes`` per GPU over ``gpus``
    GPUs: ``2(n-1)/n S`` with rail rings, ``S`` when the switches reduce (InfiniBand SHARP).

    Chapter: *NVLink, NVSwitch and collectives*, "Reducing inside the network".
    """
    size = check.nonneg("size_bytes", size_bytes)
    n = check.positive_int("gpus", gpus)
    return size if check.boolean("in_network", in_network) else busbw_factor("all_reduce", n) * size


def sharp_all_reduce_busbw(nodes: int, network: fabrics.NodeNetwork = fabrics.DGX_A100,
                           in_network: bool = True) -> float:
    """Large-message all-reduce busbw (bytes/s) over ``nodes`` nodes of ``network``, with the inter-node
    reduction in the InfiniBand switches (``in_network=True``) or with rail rings.

    Chapter: *NVLink, NVSwitch and collectives*, "Reducing inside the network". Pipelined, as NCCL runs
    it: the slower of the intra-node part (reduce-scatter and all-gather over NVLink, ``2(g-1)/g S`` per
    GPU) and the network part (``S`` per node with SHARP, ``2(n-1)/n S`` with rings) sets the time.
    """
    if not isinstance(network, fabrics.NodeNetwork):
        raise TypeError(f"network must be an ampere.fabrics.NodeNetwork, got {network!r:.60}")
    nodes = check.bounded_int("nodes", nodes, 1, fabrics.MAX_GPUS // network.gpus_per_node,
                              why=f"at most {fabrics.MAX_GPUS:,} GPUs")
    check.boolean("in_network", in_network)
    if network.hcas_per_node == 0:
        raise ValueError(f"{network.name} has no compute-fabric adapters; allowed: a node with adapters")
    g = network.gpus_per_node
    n = nodes * g
    if nodes == 1:
        return network.intra_bytes_per_s if g > 1 else 0.0
    if not check.boolean("in_network", in_network):
        return network.ring_bytes_per_s  # rail rings: the slower of NVLink and the node's adapters
    intra = busbw_factor("all_reduce", g) / network.intra_bytes_per_s  # seconds per byte of S
    inter = network_bytes_per_node(1.0, n, True) / network.inter_bytes_per_s
    return busbw_factor("all_reduce", n) / max(intra, inter)


def pxn_traffic(gpus_per_node: int = 8, pxn: bool = True) -> dict[str, float]:
    """Where the bytes of an all-to-all between nodes go on a rail-optimised fabric, per byte sent.

    Chapter: *NVLink, NVSwitch and collectives*, "Reducing inside the network" (PXN). GPU ``i`` of one
    node sends to GPU ``j`` of another. Without PXN it uses its own adapter (rail ``i``) and the bytes land
    on rail ``j``: for ``i != j``, a fraction ``(g-1)/g`` of the traffic, they cross the spine between
    rails. With PXN, GPU ``i`` first copies them over NVLink to GPU ``j`` of its own node, whose adapter is
    on rail ``j``: nothing crosses rails, and ``(g-1)/g`` of the bytes take one NVLink hop more. Returns
    ``{"cross_rail": ..., "extra_nvlink": ...}`` as fractions of the bytes sent.
    """
    g = check.positive_int("gpus_per_node", gpus_per_node, maximum=72)
    off_rail = (g - 1) / g
    if check.boolean("pxn", pxn):
        return {"cross_rail": 0.0, "extra_nvlink": off_rail}
    return {"cross_rail": off_rail, "extra_nvlink": 0.0}
