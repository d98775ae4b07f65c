"""Tests of ampere.cluster.costs: power, energy and money.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

import pytest

from ampere import cluster as cl
from ampere import specs


def test_cloud_offers():
    offers = cl.cloud_offers()
    prices = {o.instance: o.usd_per_gpu_hour for o in offers}
    assert prices["p4d.24xlarge"] == pytest.approx(32.77 / 8)
    assert len(offers) == 4 and all(o.source == "seed000" and o.gpus == 8 for o in offers)
    for o in offers:
        specs.get(o.gpu)
    # the default price of the gap calculator is the p4d price per GPU
    assert cl.throughput_gap_cost(0.1).usd_per_gpu_hour == pytest.approx(prices["p4d.24xlarge"])


def test_ownership_and_break_even():
    own = cl.Ownership()
    costs = [cl.ownership_usd_per_gpu_hour(own, u) for u in (0.2, 0.5, 1.0)]
    assert costs[0] > costs[1] > costs[2]
    price = cl.cloud_offers()[1].usd_per_gpu_hour
    u = cl.break_even_utilization(price, own)
    assert 0 < u < 1
    assert cl.ownership_usd_per_gpu_hour(own, u) == pytest.approx(price)
    assert cl.break_even_utilization(0.01, own) == float("inf")
    with pytest.raises(ValueError, match="utilization"):
        cl.ownership_usd_per_gpu_hour(own, 0.0)
    with pytest.raises(ValueError, match="pue"):
        cl.Ownership(pue=0.9)


def test_training_time_and_energy_match_megatron_estimate():
    t = cl.training_time_s(175e9, 300e9, 1024, 140e12)
    assert t / 86400 == pytest.approx(33.9, abs=0.1)  # "about 34 days" (Narayanan et al.)
    e = cl.training_energy_j(128, t, 6500.0, pue=1.0)
    assert e == pytest.approx(128 * 6500 * t)
    with pytest.raises(ValueError, match="pue"):
        cl.training_energy_j(1, 1.0, pue=0.5)


def test_throughput_gap_cost():
    g = cl.throughput_gap_cost(0.10, gpus=1000, usd_per_gpu_hour=2.0)
    assert g.lost_gpu_hours_per_week == pytest.approx(16_800)
    assert g.lost_cluster_hours_per_week == pytest.approx(16.8)
    assert g.extra_time_fraction == pytest.approx(1 / 9)
    assert g.usd_per_week == pytest.approx(33_600)
    assert g.usd_per_year == pytest.approx(33_600 * 8766 / 168)
    for bad in (-0.1, 1.0):
        with pytest.raises(ValueError, match="gap"):
            cl.throughput_gap_cost(bad)
    with pytest.raises(TypeError, match="gap must be a number"):
        cl.throughput_gap_cost("x")
