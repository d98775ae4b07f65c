"""Tests of ampere/kernels/tiling.py: the tile, pipeline and Little's-law models. Chapter: Programming the
A100's SM."""

from __future__ import annotations

import pytest

from ampere import kernels, specs

A100, H100 = "A100-SXM4-80GB", "H100-SXM5-80GB"


def test_tile_intensity_and_costs():
    t = kernels.tile_cost(128, 128, 32, stages=3, num_warps=8, dtype_bytes=2)
    assert t.intensity_flop_per_byte == pytest.approx(64.0)  # 2*128*128 / (256*2)
    assert t.shared_bytes == (128 + 128) * 32 * 2 * 3
    assert t.accumulator_registers == 128 * 128 // 256
    assert kernels.tile_cost(256, 128, 32).intensity_flop_per_byte > t.intensity_flop_per_byte
    # intensity does not depend on BK; shared memory does
    assert kernels.tile_cost(128, 128, 64).intensity_flop_per_byte == t.intensity_flop_per_byte
    ridge = specs.get(A100).ridge_point("bf16")
    assert kernels.tile_cost(16, 16, 32).compute_bound(A100) is (16.0 >= ridge)
    assert t.fits(A100)
    assert not kernels.tile_cost(256, 256, 128, stages=4, num_warps=8).fits(A100)
    with pytest.raises(ValueError, match="block_m"):
        kernels.tile_cost(0, 16, 16)


def test_tile_sweep_covers_the_grid():
    sweep = kernels.tile_sweep((32, 64))
    assert len(sweep) == 4 and {(t.block_m, t.block_n) for t in sweep} == {(32, 32), (32, 64), (64, 32), (64, 64)}


def test_pipeline_model():
    one = kernels.pipeline_time(10, 2.0, 1.0, 1)
    assert one.total_s == 30.0 and one.speedup_vs_one_stage == 1.0
    two = kernels.pipeline_time(10, 2.0, 1.0, 2)
    assert two.total_s == pytest.approx(3.0 + 9 * 2.0) and two.bound == "load latency"
    three = kernels.pipeline_time(10, 2.0, 1.0, 3)  # two loads in flight hide the latency
    assert three.total_s == pytest.approx(3.0 + 9 * 1.0) and three.bound == "compute"
    assert three.speedup_vs_one_stage > two.speedup_vs_one_stage > 1
    with pytest.raises(ValueError, match="stages"):
        kernels.pipeline_time(10, 1.0, 1.0, 0)


def test_littles_law():
    assert kernels.bytes_in_flight(2e12, 500e-9) == pytest.approx(1e6)
    with pytest.raises(ValueError, match="latency_s"):
        kernels.bytes_in_flight(1e12, 0.0)


def test_min_square_tile_reaches_the_ridge():
    for gpu in (A100, H100):
        b = kernels.min_square_tile(gpu)
        ridge = specs.get(gpu).ridge_point("bf16")
        assert b / 2 >= ridge > (b - 1) / 2
    assert kernels.min_square_tile(A100, "l2") < kernels.min_square_tile(A100, "hbm")
    with pytest.raises(ValueError, match="L2 bandwidth"):
        kernels.min_square_tile(H100, "l2")  # not published for the H100
    with pytest.raises(ValueError, match="level"):
        kernels.min_square_tile(A100, "l1")
