"""Tests of ampere/hbm/bandwidth.py (the bandwidth derived from the interface, the hierarchy, two GPUs
compared). Chapter: HBM and the memory hierarchy.

Hand-computed cases: every expected number is worked out in a comment.
"""

from __future__ import annotations

import pytest

from ampere import hbm


def test_bandwidth_derivation_by_hand():
    rows = {r["gpu"]: r for r in hbm.bandwidth_table()}
    # A100 40GB: 5120 bits x 2.43 Gb/s / 8 = 1555.2 GB/s; 80GB SXM: 5120 x 3.186 / 8 = 2039.04 GB/s
    assert rows["A100-SXM4-40GB"]["derived_bytes_per_s"] == pytest.approx(1555.2e9)
    assert rows["A100-SXM4-80GB"]["derived_bytes_per_s"] == pytest.approx(2039.04e9)
    # A6000: 384 x 16 / 8 = 768 GB/s exactly
    assert rows["RTX-A6000"]["derived_bytes_per_s"] == pytest.approx(768e9)
    # every HBM stack is a 1024-bit interface; GDDR has no stacks
    assert {r["bits_per_stack"] for r in rows.values() if r["stacks"]} == {1024}
    assert rows["T4"]["bits_per_stack"] is None
    # the notes say where an input comes from a deviceQuery capture or makes the agreement circular
    assert "back-computed" in rows["H200-SXM-141GB"]["note"] and "deviceQuery" in rows["H200-SXM-141GB"]["note"]
    assert "1593 MHz" in rows["A100-SXM4-80GB"]["note"] and rows["A100-SXM4-40GB"]["note"] == ""


def test_hierarchy_table_a100():
    rows = {r["level"]: r for r in hbm.hierarchy_table("A100-SXM4-80GB")}
    assert rows["registers"]["capacity_bytes"] == 256 * 1024 * 108  # 27 MiB of registers
    assert rows["L2"]["capacity_bytes"] == 40 * 2**20
    assert rows["L2"]["bytes_per_s"] == pytest.approx(5120 * 1.41e9)  # 7.22 TB/s
    assert rows["DRAM (HBM2e)"]["bytes_per_s"] == 2039e9


def test_compare_40_80():
    r = hbm.compare_gpus("A100-SXM4-80GB", "A100-SXM4-40GB")
    assert r["compute"] == 1.0 and r["capacity"] == 2.0 and r["l2"] == 1.0
    assert r["bandwidth"] == pytest.approx(2039 / 1555)


def test_devicequery_captures_check_the_catalogue():
    rows = {r["gpu"]: r for r in hbm.devicequery_check()}
    assert set(rows) == {"A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB", "RTX-A6000", "L4"}
    for g in ("A100-SXM4-80GB", "H100-SXM5-80GB", "RTX-A6000", "L4"):  # clock x width reproduce the datasheet
        assert rows[g]["ratio"] == pytest.approx(1.0, abs=0.002) and rows[g]["bus_bits"] == rows[g]["catalogue_bus_bits"]
    # L4: 192 bits x 2 x 6251 MHz / 8 = 300.0 GB/s; A6000: 384 x 2 x 8001 / 8 = 768.1 GB/s
    assert rows["L4"]["derived_bytes_per_s"] == pytest.approx(300.05e9, rel=1e-4)
    assert rows["RTX-A6000"]["derived_bytes_per_s"] == pytest.approx(768.1e9, rel=1e-4)
    h200 = rows["H200-SXM-141GB"]
    assert h200["bus_bits"] == 6144 and 1.02 < h200["ratio"] < 1.03  # 3201 MHz: 4.92 TB/s against 4.8
    # the catalogue takes its L2 sizes from these captures where NVIDIA prints none (H200: 60 MiB, not 50)
    assert all(r["l2_bytes"] == r["catalogue_l2_bytes"] for r in rows.values())
    assert h200["l2_bytes"] == 60 * 2**20
