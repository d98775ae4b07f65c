"""Tests of ampere.cluster.validation: validation and the claims checked.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

from ampere import cluster as cl
from ampere import results


def test_b200_reference_architecture_table_is_reproduced():
    text, ok = cl.validate()
    assert ok, text
    assert text.count("ok") == len(cl.b200_reference()) + 2
    rows = cl.b200_reference()
    assert all(isinstance(r, cl.ReferenceCounts) for r in rows) and rows[0].scalable_units == 2
    assert results.table("superpod-b200-counts")["source"] == "nvidia2025superpodb200"


def test_claims_are_computed_from_the_data():
    rows = {r["claim"]: r for r in cl.claims()}
    mlperf = next(r for c, r in rows.items() if "2.5x" in c)
    assert mlperf["verdict"] == "not supported" and "2.6x" in mlperf["evidence"]
    bert = next(r for c, r in rows.items() if "BERT" in c)
    assert "0.81 min on 256 nodes" in bert["evidence"]
