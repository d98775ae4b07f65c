"""Tests of ampere.pricing (cloud price quotes as data; chapters: SuperPOD, MIG, A100 today)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ampere import pricing, results

ROOT = Path(__file__).resolve().parents[1]


def test_every_quote_is_dated_sourced_and_typed():
    qs = pricing.quotes()
    assert len(qs) == len(results.table("cloud-prices")["rows"]) >= 7
    keys = set(re.findall(r"^@\w+\{([^,]+),", (ROOT / "book" / "references.bib").read_text(), re.M))
    for q in qs:
        assert isinstance(q, pricing.PriceQuote)
        assert q.source in keys and q.where and re.fullmatch(r"\d{4}(-\d\d)?", q.date)
        assert 0 < q.low <= q.high and q.per_gpu == (q.low, q.high)
    assert len({q.id for q in qs}) == len(qs)


def test_the_seed_tables_are_as_printed():
    p4d = pricing.quote("seed000-aws-p4d")
    assert (p4d.gpus, p4d.gpu, p4d.date, p4d.instance) == (8, "A100-SXM4-40GB", "2023", "p4d.24xlarge")
    assert p4d.usd_per_gpu_hour == pytest.approx(p4d.low_usd_per_h / 8)
    a100 = pricing.quotes(gpu="A100-SXM4-80GB", source="seed003")
    assert len(a100) == 1 and a100[0].low < a100[0].high and a100[0].as_of == "2026"
    eight = pricing.quotes(source="seed000", gpus=8)
    assert len(eight) == 4 and all(q.provider for q in eight)
    assert pricing.quotes(date="2026") == pricing.quotes(source="seed003")


def test_hours_for_budget_is_budget_over_price():
    assert pricing.hours_for_budget(100, 0.5, 2.0) == (50.0, 200.0)
    assert pricing.hours_for_budget(np.int64(10), 2.0) == (5.0, 5.0)
    q = pricing.quotes(gpu="RTX-A2000-12GB")[0]
    assert q.hours_for_budget(100) == pricing.hours_for_budget(100, q.low, q.high)


@pytest.mark.parametrize("args,error,match", [
    ((0, 1.0), ValueError, "budget_usd must be > 0"),
    (("100", 1.0), TypeError, "budget_usd must be a number"),
    ((100, 2.0, 1.0), ValueError, "high_usd_per_h=1 is below low_usd_per_h=2"),
    ((100, float("nan")), ValueError, "low_usd_per_h must be a finite number"),
])
def test_hours_for_budget_refuses_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        pricing.hours_for_budget(*args)


def test_lookups_refuse_unknown_names():
    with pytest.raises(ValueError, match="quote_id must be one of"):
        pricing.quote("aws-p5")
    with pytest.raises(ValueError, match="provider must be one of"):
        pricing.quotes(provider="OVH")
    with pytest.raises(ValueError, match="not in the catalogue"):
        pricing.quotes(gpu="A100")
    with pytest.raises(TypeError, match="date must be a string"):
        pricing.quotes(date=2023)
    with pytest.raises(ValueError, match="high_usd_per_h=1 is below"):
        pricing.PriceQuote("x", "x", "x", "", "T4", 1, 2.0, 1.0, "2023", "x", "seed000")
