"""Tests of ampere/kernels/fusion.py: HBM bytes of a chain of kernels, unfused and fused. Chapter:
Programming the A100's SM."""

from __future__ import annotations

import pytest

from ampere import kernels

A100 = "A100-SXM4-80GB"


def test_chain_counts():
    ops = [kernels.FusionOp("a", ("x",), ("y",)), kernels.FusionOp("b", ("y",), ("z",))]
    t = kernels.fusion_traffic(ops, {"x": 10, "y": 10, "z": 10}, ["z"])
    assert (t.unfused_bytes, t.fused_bytes, t.saved_bytes, t.kernels) == (40, 20, 20, 2)
    both = kernels.fusion_traffic(ops, {"x": 10, "y": 10, "z": 10}, ["y", "z"])  # y is still needed after
    assert both.fused_bytes == 30
    with pytest.raises(ValueError, match="size"):
        kernels.fusion_traffic(ops, {"x": 10}, ["z"])
    with pytest.raises(ValueError, match="not written"):
        kernels.fusion_traffic(ops, {"x": 1, "y": 1, "z": 1}, ["x"])
    with pytest.raises(TypeError):
        kernels.FusionOp("c", "x", ("y",))
    with pytest.raises(ValueError):
        kernels.fusion_traffic([], {}, [])


def test_bias_gelu_epilogue_saves_four_trips_of_the_intermediate():
    t, h = 8192, 4096
    e = kernels.bias_gelu_epilogue(t, h)
    y = t * 4 * h * 2
    assert e.saved_bytes == 4 * y  # Y written and read, Yb written and read
    assert e.saved_s(A100) == pytest.approx(4 * y / 2.039e12)
    assert e.saved_s(A100, bytes_per_s=1e12) == pytest.approx(4 * y / 1e12)


def test_residual_layernorm_saves_one_trip():
    e = kernels.residual_layernorm(8192, 4096)
    assert e.saved_bytes == 8192 * 4096 * 2  # h is written either way but not read back
