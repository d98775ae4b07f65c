"""Tests of ampere/hbm/coalescing.py (32-byte sectors per warp request). Chapter: HBM and the memory
hierarchy."""

from __future__ import annotations

import math

import pytest

from ampere import hbm


def test_the_guides_examples_are_reproduced():
    rows = hbm.coalescing_examples()
    assert len(rows) >= 4 and {r["source"] for r in rows} == {"nvidiabestpractices", "nvidiacudaguide"}
    for r in rows:
        assert r["model_sectors"] == r["sectors"], r["pattern"]
        assert r["model_efficiency"] == pytest.approx(r["efficiency"]), r["pattern"]


@pytest.mark.parametrize("stride", [1, 2, 3, 4, 5, 8, 12, 16, 33])
def test_stride_efficiency(stride):
    q = hbm.warp_request(stride)
    # 32 threads, 4-byte words: the sectors are the distinct 32-byte blocks the addresses fall in
    assert q.sectors == len({4 * stride * t // 32 for t in range(32)})
    assert q.efficiency == pytest.approx(128 / (32 * q.sectors))
    assert q.efficiency == pytest.approx(max(1 / stride, 4 / 32)) if stride in (1, 2, 4, 8, 16, 33) else True
    assert q.stream_efficiency == pytest.approx(q.efficiency, rel=0.05)  # a stride wastes every sector alike


def test_offsets_cost_a_sector_per_request_not_per_stream():
    for off in range(0, 64, 4):
        q = hbm.warp_request(1, off)
        assert q.sectors == (4 if off % 32 == 0 else 5)
        assert q.stream_efficiency > 0.99  # the extra sector is the next warp's first
    assert hbm.warp_request(1, 2, elem_bytes=2).sectors == 3  # 64 bytes from byte 2: three sectors
    assert hbm.warp_request(1, 0, elem_bytes=16).sectors == 16  # 512 bytes of 16-byte vectors
    assert hbm.SECTOR_BYTES == 32


def test_table_and_bad_input():
    t = hbm.coalescing_table((1, 2), (0, 4))
    assert [(q.stride, q.offset_bytes) for q in t] == [(1, 0), (2, 0), (1, 0), (1, 4)]
    assert t[1]["sectors"] == 8 and t[1].to_dict()["bytes_used"] == 128
    with pytest.raises(ValueError, match="multiple"):
        hbm.warp_request(1, 3)
    with pytest.raises(ValueError):
        hbm.warp_request(0)
    with pytest.raises(ValueError):
        hbm.warp_request(1, 0, elem_bytes=3)
    with pytest.raises(TypeError):
        hbm.warp_request(True)
    with pytest.raises(TypeError):
        hbm.coalescing_table("12")
    assert math.isclose(hbm.warp_request(1, 0, threads=8).efficiency, 1.0)  # 32 bytes: one sector
