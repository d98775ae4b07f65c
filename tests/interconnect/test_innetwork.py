"""Tests of ampere.interconnect.innetwork: in-network reduction and PXN.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

import pytest

from ampere import fabrics
from ampere import interconnect as ic


def test_in_network_reduction_turns_the_busbw_factor_into_a_gain():
    B = 360e9
    for n in (2, 4, 8, 72):
        assert ic.all_reduce_busbw_bound(n, B, False) == B
        assert ic.all_reduce_busbw_bound(n, B, True) == pytest.approx(2 * (n - 1) / n * B)
    assert ic.all_reduce_busbw_bound(8, B, True, efficiency=0.5) == pytest.approx(0.875 * B)
    assert ic.all_reduce_busbw_bound(1, B, True) == 0.0
    # the published NVLS results sit between the ring ceiling and the in-switch ceiling
    rec = ic.published("nccltests212-h100-8gpu-expected")
    assert B / 1e9 < rec.figures["busbw_gb_per_s"] < ic.all_reduce_busbw_bound(8, B, True) / 1e9
    with pytest.raises(TypeError, match="in_network"):
        ic.all_reduce_busbw_bound(8, B, 1)
    with pytest.raises(ValueError, match="efficiency"):
        ic.all_reduce_busbw_bound(8, B, True, efficiency=0.0)


def test_sharp_sends_each_byte_once_and_nvlink_becomes_the_limit():
    assert ic.network_bytes_per_node(1.0, 16, True) == 1.0
    assert ic.network_bytes_per_node(1.0, 16, False) == pytest.approx(30 / 16)
    assert ic.sharp_all_reduce_busbw(16, in_network=False) == pytest.approx(fabrics.DGX_A100.ring_bytes_per_s)
    sharp = [ic.sharp_all_reduce_busbw(N) for N in (2, 16, 128)]
    assert all(s > fabrics.DGX_A100.ring_bytes_per_s for s in sharp) and sharp == sorted(sharp)
    # bound by NVLink inside the node: 2(n-1)/n / (2(g-1)/g / B_intra)
    n = 16 * 8
    assert sharp[1] == pytest.approx(2 * (n - 1) / n * 240e9 / 1.75, rel=1e-3)
    assert ic.sharp_all_reduce_busbw(1) == fabrics.DGX_A100.intra_bytes_per_s
    with pytest.raises(ValueError, match="no compute-fabric adapters"):
        ic.sharp_all_reduce_busbw(2, fabrics.DGX_A100.with_(hcas_per_node=0, hca_bytes_per_s=0.0))
    with pytest.raises(TypeError, match="NodeNetwork"):
        ic.sharp_all_reduce_busbw(2, "DGX A100")


def test_pxn_keeps_traffic_on_its_rail():
    assert ic.pxn_traffic(8, False) == {"cross_rail": 0.875, "extra_nvlink": 0.0}
    assert ic.pxn_traffic(8, True) == {"cross_rail": 0.0, "extra_nvlink": 0.875}
    assert ic.pxn_traffic(1, False)["cross_rail"] == 0.0
    with pytest.raises(ValueError, match="gpus_per_node"):
        ic.pxn_traffic(0)
    with pytest.raises(TypeError, match="pxn"):
        ic.pxn_traffic(8, "yes")
