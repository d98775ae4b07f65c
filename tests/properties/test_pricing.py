"""Properties of ampere.pricing: price quotes as data and the budget arithmetic.

Valid input gives a finite answer of the documented type; invalid input is refused with a ValueError or
TypeError naming the argument.
"""

from hypothesis import given
from hypothesis import strategies as st

from ampere import pricing

from .harness import answers, bad_floats, bad_ints, bad_names, covers, finite_floats, rejects, rejects_any

QUOTES = pricing.quotes()


@covers(pricing.PriceQuote, pricing.quotes, pricing.quote, pricing.hours_for_budget)
@given(st.sampled_from(QUOTES), finite_floats(1.0, 1e9), finite_floats(0.01, 100.0), st.data())
def test_quotes_filter_and_budgets_divide(q, budget, price, data):
    assert answers(pricing.quote, q.id, type_=pricing.PriceQuote) == q
    found = answers(pricing.quotes, gpu=q.gpu, provider=q.provider, source=q.source, date=q.date[:4], gpus=q.gpus,
                    type_=tuple)
    assert q in found
    lo, hi = answers(pricing.hours_for_budget, budget, price, 2 * price, type_=tuple)
    assert lo <= hi and abs(hi - budget / price) <= 1e-9 * hi
    assert q.low <= q.usd_per_gpu_hour <= q.high
    rejects(pricing.quote, "quote_id", data.draw(bad_names([x.id for x in QUOTES])))
    rejects_any(data, pricing.quotes, {}, {
        "gpu": st.sampled_from(["NoSuchGPU", "A100"]), "provider": bad_names({x.provider for x in QUOTES})
        .filter(lambda v: v is not None), "source": bad_names({x.source for x in QUOTES}).filter(lambda v: v is not None),
        "date": st.one_of(st.just(""), st.integers(), st.just(["2023"])),
        "gpus": bad_ints(1, pricing.MAX_GPUS_PER_UNIT).filter(lambda v: v is not None)})
    rejects_any(data, pricing.hours_for_budget, {"budget_usd": budget, "low_usd_per_h": price}, {
        "budget_usd": bad_floats(0.0).filter(lambda v: v != 1e12), "low_usd_per_h": bad_floats(0.0)
        .filter(lambda v: v != 1e12), "high_usd_per_h": st.one_of(st.just(price / 2), bad_floats(0.0)
                                                                  .filter(lambda v: v not in (None, 1e12)))})
    good = dict(id="x", label="8 x A100", provider="AWS", instance="p4d", gpu=q.gpu, gpus=8, low_usd_per_h=10.0,
                high_usd_per_h=12.0, date="2023", kind="on demand", source="seed000")
    answers(pricing.PriceQuote, **good, type_=pricing.PriceQuote)
    rejects_any(data, pricing.PriceQuote, good, {
        "gpu": st.sampled_from(["NoSuchGPU", "A100"]), "gpus": bad_ints(1, pricing.MAX_GPUS_PER_UNIT),
        "low_usd_per_h": bad_floats(0.0).filter(lambda v: v != 1e12),
        "high_usd_per_h": st.one_of(st.just(5.0), bad_floats(0.0).filter(lambda v: v != 1e12)),
        "label": st.one_of(st.integers(), st.none()), "date": st.one_of(st.integers(), st.none())})
