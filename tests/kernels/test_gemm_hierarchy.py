"""Tests of ampere/kernels/gemm_hierarchy.py: the threadblock/warp/mma tiling of a GEMM. Chapter:
Programming the A100's SM."""

from __future__ import annotations

import pytest

from ampere import kernels


def test_defaults_come_from_cutlass_and_the_ptx_isa():
    d = kernels.cutlass_default("bf16")
    assert d["threadblock"] == [128, 256, 64] and d["warp"] == [64, 64, 64] and d["instruction"] == [16, 8, 16]
    assert kernels.cutlass_default("fp64")["instruction"] == [8, 8, 4]
    assert [16, 8, 16] in kernels.mma_shapes("bf16")[0]["shapes"]
    assert {r["precision"] for r in kernels.mma_shapes()} >= {"fp16", "bf16", "tf32", "int8", "fp64"}
    with pytest.raises(ValueError):
        kernels.cutlass_default("fp8")


def test_tiling_of_a_4096_cube():
    t = kernels.gemm_tiling(4096, 4096, 4096)
    assert t.grid == (32, 16) and t.ctas == 512 and t.k_iterations == 64
    assert t.warps_per_cta == 8 and t.mma_per_warp_per_iteration == 4 * 8 * 4
    # every FLOP of the GEMM is one mma's share
    assert t.mma_total * t.flops_per_mma == 2 * 4096**3
    # ldmatrix.x4 moves 512 bytes: a warp's A and B slabs per iteration, (64 + 64) x 64 x 2 bytes
    assert t.ldmatrix_x4_per_warp_per_iteration * 512 == (64 + 64) * 64 * 2
    assert t.shared_bytes == 3 * (128 + 256) * 64 * 2 and t.ctas_per_sm == 1
    assert t.waves == pytest.approx(512 / 108)
    assert t.accumulators_per_thread == 128
    assert t.cta_intensity == pytest.approx(2 * 128 * 256 / (384 * 2))
    assert t.warp_intensity == 32.0
    assert 0.4 < t.shared_demand() < 0.6  # half the shared-memory bandwidth at the dense peak
    rows = kernels.tiling_rows(t)
    assert [r["level"] for r in rows] == ["GEMM", "threadblock", "warp", "mma.sync"]
    assert rows[1]["tile"] == "128\u00d7256\u00d764" and "4.74 waves" in rows[1]["how many"]
    assert "ldmatrix.x4" in rows[2]["operands in"]


def test_tiling_checks_its_shapes():
    with pytest.raises(ValueError, match="mma.sync"):
        kernels.gemm_tiling(256, 256, 256, instruction=(16, 16, 16))
    with pytest.raises(ValueError, match="divide"):
        kernels.gemm_tiling(256, 256, 256, warp=(48, 64, 64))
    with pytest.raises(ValueError, match="warp must have at least 3"):  # a list of the wrong length
        kernels.gemm_tiling(256, 256, 256, warp=(64, 64))
    with pytest.raises(TypeError, match="warp"):  # not a list at all
        kernels.gemm_tiling(256, 256, 256, warp=64)
    with pytest.raises(TypeError):
        kernels.tiling_rows({"m": 1})
    small = kernels.gemm_tiling(256, 256, 256, threadblock=(64, 64, 32), warp=(32, 32, 32), stages=4)
    assert small.ctas_per_sm > 1 and small.waves < 1
    assert kernels.gemm_tiling(512, 512, 512, precision="fp64").ldmatrix_x4_per_warp_per_iteration is None
