"""Tests of ampere/kernels/occupancy.py: the SM limits and the occupancy calculator against hand-computed
cases. Chapter: Programming the A100's SM."""

from __future__ import annotations

import pytest

from ampere import kernels, specs

A100, H100 = "A100-SXM4-80GB", "H100-SXM5-80GB"


def test_sm_limits_for_every_catalogue_gpu():
    for name in specs.names():
        lim = kernels.sm_limits(name)
        assert lim.max_warps_per_sm * 32 == lim.max_threads_per_sm
        assert lim.max_shared_bytes_per_block <= lim.shared_bytes_per_sm
        occ = kernels.occupancy(name, 128, 32, 0)
        assert 0 < occ.fraction <= 1


def test_shared_memory_per_sm_a100_164_kib_h100_228_kib():
    assert kernels.sm_limits(A100).shared_bytes_per_sm == 164 * 1024
    assert kernels.sm_limits(H100).shared_bytes_per_sm == 228 * 1024
    assert kernels.sm_limits(A100).max_shared_bytes_per_block == 163 * 1024


def test_occupancy_full_when_nothing_binds():
    occ = kernels.occupancy(A100, 256, 32, 0)
    # 32 regs x 32 threads = 1024 per warp; 16384 per sub-partition -> 16 warps x 4 = 64 warps = 8 blocks
    assert occ.blocks_per_sm == 8 and occ.active_warps == 64 and occ.fraction == 1.0
    assert "warps" in occ.limiter


def test_occupancy_register_granularity_a100():
    # 33 registers: 1056 per warp rounds up to 1280 -> 12 warps per sub-partition -> 48 warps -> 12 blocks
    occ = kernels.occupancy(A100, 128, 33, 0)
    assert occ.blocks_per_sm == 12 and occ.fraction == pytest.approx(0.75)
    assert occ.limiter == "registers"
    assert kernels.occupancy(A100, 128, 32, 0).fraction == 1.0  # one register less: full occupancy
    # 64 registers, 256 threads: 2048 per warp -> 8 warps per partition -> 32 warps -> 4 blocks of 8 warps
    occ = kernels.occupancy(A100, 256, 64, 0)
    assert (occ.blocks_per_sm, occ.fraction, occ.limiter) == (4, 0.5, "registers")
    assert occ.registers_per_block == 2048 * 8


def test_occupancy_shared_memory_limited_a100_and_h100():
    # 48 KiB + 1 KiB reserved = 50176 B per block: 167936 // 50176 = 3 on A100, 233472 // 50176 = 4 on H100
    a = kernels.occupancy(A100, 128, 32, 48 * 1024)
    h = kernels.occupancy(H100, 128, 32, 48 * 1024)
    assert (a.blocks_per_sm, a.limiter, a.shared_allocated_bytes) == (3, "shared memory", 50176)
    assert (h.blocks_per_sm, h.limiter) == (4, "shared memory")
    assert a.fraction == pytest.approx(12 / 64) and h.fraction == pytest.approx(16 / 64)
    # the largest block: 163 KiB fits once on A100
    assert kernels.occupancy(A100, 128, 32, 163 * 1024).blocks_per_sm == 1


def test_occupancy_block_cap_and_turing_limits():
    occ = kernels.occupancy(A100, 32, 16, 0)  # 1 warp per block: the 32-block cap binds
    assert occ.blocks_per_sm == 32 and occ.limiter == "blocks" and occ.fraction == 0.5
    t4 = kernels.occupancy("T4", 1024, 32, 0)
    assert t4.max_warps == 32 and t4.blocks_per_sm == 1 and t4.fraction == 1.0


def test_occupancy_refuses_bad_input():
    with pytest.raises(ValueError, match="threads_per_block"):
        kernels.occupancy(A100, 2048, 32, 0)
    with pytest.raises(ValueError, match="registers_per_thread"):
        kernels.occupancy(A100, 128, 256, 0)
    with pytest.raises(ValueError, match="shared_bytes_per_block"):
        kernels.occupancy(A100, 128, 32, 164 * 1024)
    with pytest.raises(ValueError, match="registers per block"):
        kernels.occupancy(A100, 1024, 255, 0)
    with pytest.raises(TypeError, match="threads_per_block"):
        kernels.occupancy(A100, 128.0, 32, 0)
    with pytest.raises(ValueError):
        kernels.occupancy("A200", 128, 32, 0)
