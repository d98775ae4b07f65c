"""Tests of ampere/kernels/l2_residency.py: the L2 persistence model. Chapter: Programming the A100's SM."""

from __future__ import annotations

import pytest

from ampere import kernels, specs

A100 = "A100-SXM4-80GB"


def test_l2_persistence_model():
    l2 = specs.get(A100).l2_bytes
    fits = kernels.l2_persistence(A100, 10e6, 10e6, 0.0, passes=5)
    assert fits.traffic_ratio == 1.0  # everything fits: nothing to gain
    thrash = kernels.l2_persistence(A100, 20e6, 100e6, 20e6, passes=5)
    assert thrash.hbm_bytes_default == pytest.approx(5 * 120e6)
    assert thrash.hbm_bytes_persisting == pytest.approx(120e6 + 4 * 100e6)
    assert thrash.traffic_ratio > 1
    half = kernels.l2_persistence(A100, 20e6, 100e6, 10e6, passes=5)
    assert 1 < half.traffic_ratio < thrash.traffic_ratio
    with pytest.raises(ValueError, match="carveout_bytes"):
        kernels.l2_persistence(A100, 1e6, 1e6, l2 + 1)
