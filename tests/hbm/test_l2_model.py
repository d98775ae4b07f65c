"""Tests of ampere/hbm/l2_model.py (the sweep's footprints, the L2 working-set model, the knee). Chapter: HBM
and the memory hierarchy."""

from __future__ import annotations

import pytest

from ampere import hbm, specs


def test_sweep_footprints():
    f = hbm.sweep_footprints(40 * 2**20, points=24)
    assert f[0] == 256 * 1024 and f == sorted(set(f))
    assert f[-1] == pytest.approx(160 * 2**20, rel=0.01)
    assert all(x % 4096 == 0 for x in f)
    with pytest.raises(ValueError):
        hbm.sweep_footprints(40 * 2**20, stop_factor=0.001)
    with pytest.raises(ValueError):
        hbm.sweep_footprints(0)


def test_l2_model():
    a100 = specs.get("A100-SXM4-80GB")
    cap = a100.l2_bytes
    y, notes = hbm.l2_sweep_model([cap / 2, cap, 2 * cap], "A100-SXM4-80GB")
    assert y[0] == y[1] == pytest.approx(5120 * 1.41e9)
    assert y[2] == pytest.approx(2039e9)  # ideal LRU: a cyclic sweep larger than the cache never hits
    yr, _ = hbm.l2_sweep_model([2 * cap], "A100-SXM4-80GB", policy="random")
    assert yr[0] == pytest.approx(1 / (0.5 / (5120 * 1.41e9) + 0.5 / 2039e9))
    _, notes = hbm.l2_sweep_model([1e6], "H200-SXM-141GB")
    assert any("ASSUMED" in n for n in notes)
    with pytest.raises(ValueError):
        hbm.l2_sweep_model([1e6], policy="fifo")


def test_find_knee_synthetic():
    l2 = 40 * 2**20
    f = hbm.sweep_footprints(l2, 30)
    y, _ = hbm.l2_sweep_model(f, "A100-SXM4-80GB", policy="lru")
    k = hbm.find_knee(f, y, l2)
    assert isinstance(k, hbm.Knee) and k.visible and k.within and 0.9 < k.ratio_to_l2 <= 1.2
    assert k["knee_bytes"] == k.knee_bytes and k.to_dict()["visible"] is True  # read by name, as a dict would
    flat = hbm.find_knee(f, [1e12] * len(f), l2)
    assert not flat.visible and flat.knee_bytes is None
    # a knee at half the L2 is visible but not within 25%
    early = hbm.find_knee(f, [5e12 if x < l2 / 2 else 1e12 for x in f], l2)
    assert early.visible and not early.within
    with pytest.raises(ValueError):
        hbm.find_knee([1, 2], [1, 2], l2)
    with pytest.raises(ValueError):
        hbm.find_knee([1, 2, 3], [1, -2, 3], l2)
    with pytest.raises(TypeError):
        hbm.find_knee(["a", "b", "c"], [1, 2, 3], l2)
    with pytest.raises(ValueError, match="l2_bytes"):
        hbm.find_knee(f, y, 0)


def test_l2_plateau_is_the_median_inside_the_window():
    l2 = 40 * 2**20
    f = [l2 / 64, l2 / 16, l2 / 8, l2 / 4, l2 / 2, l2, 2 * l2]
    y = [9e12, 8e12, 5e12, 5.2e12, 5.4e12, 3e12, 2e12]  # L1-inflated start, plateau, fall-off
    assert hbm.l2_plateau(f, y, l2) == 5.2e12  # median of L2/8 .. L2/2, the first points left out
    assert hbm.L2_PLATEAU_WINDOW == (1 / 8, 1 / 2)
    # no point in the window: those up to L2/2, else the three smallest
    assert hbm.l2_plateau([l2 / 64, l2 / 32, 4 * l2], [7e12, 6e12, 1e12], l2) == 6.5e12
    assert hbm.l2_plateau([4 * l2, 5 * l2, 6 * l2], [1e12, 2e12, 3e12], l2) == 2e12
    # the knee uses the same plateau
    assert hbm.find_knee(f, y, l2).l2_plateau_bytes_per_s == hbm.l2_plateau(f, y, l2)
    with pytest.raises(ValueError, match="l2_bytes"):
        hbm.l2_plateau(f, y, -1)
    with pytest.raises(ValueError):
        hbm.l2_plateau(f[:2], y[:2], l2)
