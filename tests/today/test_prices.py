"""ampere.today.prices: dated, sourced, validated price ranges."""

import pytest

from ampere import today
from ampere.today import PriceRange

A100, A6000, A2000, H100, H200 = today.GPUS


def test_prices_are_dated_sourced_and_validated():
    seed = today.seed_prices()
    p = seed[A100]
    assert (p.low, p.high, p.source, p.as_of) == (0.96, 2.29, "seed003", "2026") and p.mid == pytest.approx(1.625)
    assert set(seed) == set(today.SEED_GPUS)  # no seed prices the H100/H200: user input only
    hyper = today.hyperscaler_prices_2023()[A100]
    assert hyper.source == "seed000" and hyper.as_of == "2023" and hyper.low < hyper.high
    table = today.price_table({H100: (2.0, 3.0)})
    assert table[H100].source == "user input" and table[A100] == p
    for bad in ((-1, 2), (0, 1), (3, 2), (float("nan"), 1)):
        with pytest.raises(ValueError, match="price"):
            PriceRange(*bad, "x", "now")
    with pytest.raises(ValueError, match="overrides"):
        today.price_table({"B200": (1, 2)})
    with pytest.raises(ValueError, match="PriceRange"):
        today.price_table({H100: 3.0})
    lo, hi = today.hours_for_budget(100, A100)
    assert (round(lo), round(hi)) == (44, 104)
    with pytest.raises(ValueError, match="budget"):
        today.hours_for_budget(-5, A100)
    with pytest.raises(ValueError, match="price"):
        today.hours_for_budget(100, H100)
    with pytest.raises(ValueError, match="where"):
        p.at("median")
