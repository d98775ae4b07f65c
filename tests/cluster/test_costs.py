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


def test_break_even_says_never_instead_of_rounding_to_100_percent():
    # the exercise: 1.50 USD per GPU-hour with 50,000 USD a year of operating cost
    be = cl.break_even(1.50, cl.Ownership(opex_usd_per_year=50_000))
    assert be.utilization > 1 and not be.breaks_even
    assert be.verdict.startswith("owning never breaks even") and "100 %" not in be.verdict
    assert be.own_usd_per_gpu_hour_at_full_use > 1.50
    ok = cl.break_even(1.50)
    assert ok.breaks_even and ok.verdict == f"owning is cheaper above {100 * ok.utilization:.0f} % utilisation"
    assert ok.utilization == cl.break_even_utilization(1.50)
    cheap = cl.break_even(0.01)
    assert cheap.utilization == float("inf") and "electricity" in cheap.verdict
    with pytest.raises(TypeError, match="own"):
        cl.break_even_utilization(1.5, "owned")
    with pytest.raises(ValueError, match="cloud_usd_per_gpu_hour"):
        cl.break_even(0.0)


def test_round_sig_and_cloud_offer():
    assert cl.round_sig(2_872_618) == 2_900_000 and cl.round_sig(2_872_618, 3) == 2_870_000
    assert cl.round_sig(0.0) == 0.0 and cl.round_sig(-1234.0) == -1200.0 and cl.round_sig(0.01234) == 0.012
    with pytest.raises(TypeError, match="value"):
        cl.round_sig("12")
    with pytest.raises(ValueError, match="digits"):
        cl.round_sig(12.0, 0)
    assert cl.cloud_offer("p4d.24xlarge").instance == "p4d.24xlarge"
    with pytest.raises(ValueError, match="instance"):
        cl.cloud_offer("p5.48xlarge")
