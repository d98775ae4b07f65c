"""ampere.mig.costs: seven small models on one A100 cut with MIG, or on a card each."""

from __future__ import annotations

from pathlib import Path

import pytest

from ampere import mig, specs

ROOT = Path(__file__).resolve().parents[2]
A40 = "A100-SXM4-40GB"
A80 = "A100-SXM4-80GB"


def test_serving_costs_with_the_shared_prices():
    from ampere import pricing

    a100 = pricing.quote("seed003-a100-80gb")
    assert a100.hours_for_budget(100) == pytest.approx((43.67, 104.17), abs=0.01)  # the article: 44-104 h
    rows = {o.label: o for o in mig.serving_costs()}
    seven = rows["7 x A100 80GB, one model each"]
    one = rows["1 x A100 80GB, 7 x 1g.10gb (MIG)"]
    assert seven.usd_per_h == pytest.approx((7 * a100.low, 7 * a100.high))
    assert one.usd_per_h == pytest.approx(a100.per_gpu) and one.mig_profile == "1g.10gb"
    assert one.per_model_sms == 14 and seven.per_model_sms == 108
    assert one.per_model_hbm_bytes_per_s == pytest.approx(specs.get(A80).hbm_bytes_per_s * 0.8 / 8)
    assert one.usd_per_million[0] == pytest.approx(a100.low / (7 * 100 * 3600) * 1e6)
    assert one.service_ms > 3 * seven.service_ms and one.feasible and seven.feasible
    # hyperscalers rent by eight: one option per GPU rented, cut into that GPU's one-slice profile
    p4d = pricing.quote("seed000-aws-p4d")
    forty = rows["1/8 of an 8 x A100 40GB instance, 7 x 1g.5gb (MIG)"]
    assert forty.gpu == A40 and forty.mig_profile == "1g.5gb" and forty.usd_per_h == pytest.approx(p4d.per_gpu)
    eighty = rows["1/8 of an 8 x A100 80GB instance, 7 x 1g.10gb (MIG)"]
    lows = [q.low for q in pricing.quotes(gpu=A80, gpus=8)]
    assert eighty.mig_profile == "1g.10gb" and eighty.usd_per_h[0] == pytest.approx(min(lows))
    assert not {o.label: o for o in mig.serving_costs(demand_per_s=400)}[one.label].feasible
    for bad in ({"models": 0}, {"models": 8}, {"demand_per_s": -1.0}, {"max_utilization": 1.5}):
        with pytest.raises(ValueError):
            mig.serving_costs(**bad)
    with pytest.raises(TypeError, match="models"):
        mig.serving_costs(models=7.0)
    with pytest.raises(TypeError, match="PriceQuote"):
        mig.serving_costs(prices=[{"gpu": A80}])
    # no price is typed in the chapter module any more
    files = sorted((ROOT / "ampere" / "mig").glob("*.py"))
    assert files
    for path in files:
        code = path.read_text(encoding="utf-8")
        assert "CLOUD_PRICES" not in code and "2.29" not in code and "32.77" not in code, path
