"""Tests of ampere.interconnect.protocols: NCCL's cost model read as data.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

import math

import pytest

from ampere import interconnect as ic


def test_constants_are_nccls_ampere_rows():
    ring = ic.protocols("ring")
    assert set(ring) == set(ic.PROTOCOLS)
    ll = ring["LL"]
    assert ll.base_latency_s < ring["Simple"].base_latency_s < ring["LL128"].base_latency_s
    assert ll.nvlink_hop_s < ring["LL128"].nvlink_hop_s < ring["Simple"].nvlink_hop_s
    assert ll.busbw_factor == 0.5 and math.isinf(ring["Simple"].busbw_cap)
    old = ic.protocols("ring", "2.8.4")
    assert set(old) == {"LL"} and old["LL"].base_latency_s < ll.base_latency_s
    assert set(ic.protocols("tree")) == set(ic.PROTOCOLS)
    with pytest.raises(ValueError, match="version"):
        ic.protocols("ring", "2.4")
    with pytest.raises(ValueError, match="algorithm"):
        ic.protocols("nvls")
    with pytest.raises(ValueError, match="no tree rows"):
        ic.protocols("tree", "2.8.4")


def test_protocol_busbw_follows_the_line_layouts():
    B = 240e9
    assert ic.protocol_busbw("Simple", B) == B
    assert ic.protocol_busbw("LL128", B) == pytest.approx(0.92 * B)
    assert ic.protocol_busbw("LL", 100e9) == pytest.approx(50e9)  # half the link below the cap
    assert ic.protocol_busbw("LL", B) == pytest.approx(ic.nccl_constant("nvlink_link_gb_per_s") * 0 + 87.7e9)
    assert ic.protocol_busbw("LL128", B, channels=4) == pytest.approx(4 * 20e9)  # per-channel cap
    rows = {r["protocol"]: r for r in ic.payload_rows()}
    assert rows["LL"]["data fraction"] == "0.500" and rows["LL128"]["data fraction"] == "0.938"
    with pytest.raises(ValueError, match="protocol"):
        ic.protocol_busbw("LL64")
    with pytest.raises(ValueError, match="channels"):
        ic.protocol_busbw("LL", B, channels=0)
    with pytest.raises(ValueError, match="no ring row"):
        ic.protocol_busbw("Simple", version="2.8.4")


def test_protocol_time_and_the_switch_points():
    n = 8
    for p in ic.PROTOCOLS:
        proto = ic.protocols()[p]
        assert ic.protocol_time(0, n, p) == pytest.approx(proto.base_latency_s + 14 * proto.nvlink_hop_s)
    assert ic.protocol_time(1e6, 1, "LL") == 0.0
    pts = ic.switch_points(n)
    assert [(a, b) for a, b, _ in pts] == [("LL", "LL128"), ("LL128", "Simple")]
    for a, b, s in pts:  # at the switch point the two take the same time
        assert ic.protocol_time(s, n, a) == pytest.approx(ic.protocol_time(s, n, b))
        assert ic.best_protocol(0.5 * s, n)[0] == a and ic.best_protocol(2 * s, n)[0] == b
    assert 1e6 < pts[0][2] < 4e6 and 1e7 < pts[1][2] < 5e7
    assert ic.switch_points(1) == []
    assert [r["NCCL's model picks"] for r in ic.protocol_rows()][0] == "LL"
    with pytest.raises(ValueError, match="size_bytes"):
        ic.protocol_time(-1, 8, "LL")


def test_channels_needed():
    assert ic.channels_needed(230e9) == 12
    assert ic.channels_needed(240e9) == 12 and ic.channels_needed(241e9) == 13
    assert ic.channels_needed(10e9, 5e9) == 2
    with pytest.raises(ValueError, match="busbw_bytes_per_s"):
        ic.channels_needed(0)
    with pytest.raises(ValueError, match="name"):
        ic.nccl_constant("warp_size")
