"""Tests of ampere.cluster.validation: validation and the claims checked.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

from ampere import cluster as cl
from ampere import results


def test_every_reference_architecture_table_is_reproduced():
    text, ok = cl.validate()
    assert ok, text
    assert text.count(": ok") == len(cl.reference_counts()) + 2 and "MISMATCH" not in text
    assert "misprint" in text and "UFM" in text
    rows = cl.validation_rows()
    assert len(rows) == len(cl.reference_counts()) and all(r["agrees"].startswith("yes") for r in rows)
    assert {r["system"] for r in rows} == {"DGX H100", "DGX B200", "DGX B300"}
    notes = [r["agrees"] for r in rows]
    assert notes.count("yes (UFM)") == 4 and notes.count("yes (GPU misprint)") == 1
    rows = cl.b200_reference()
    assert all(isinstance(r, cl.ReferenceCounts) for r in rows) and rows[0].scalable_units == 2
    assert results.table("superpod-b200-counts")["source"] == "nvidia2025superpodb200"


def test_claims_are_computed_from_the_data():
    rows = {r["claim"]: r for r in cl.claims()}
    mlperf = next(r for c, r in rows.items() if "2.5x" in c)
    assert mlperf["verdict"] == "not supported" and "2.6x" in mlperf["evidence"]
    bert = next(r for c, r in rows.items() if "BERT" in c)
    assert "0.81 min on 256 nodes" in bert["evidence"]


def test_break_even_claim_gives_a_verdict_not_a_clipped_number():
    rows = {r["claim"]: r for r in cl.claims()}
    own = next(r for c, r in rows.items() if "infinitely" in c)
    assert "owning is cheaper above" in own["evidence"] and "%" in own["evidence"]
    gap = next(r for c, r in rows.items() if "10 % gap" in c)
    assert "about 3.6 million USD" in gap["evidence"]  # two significant figures, not 3,590,773
    fabric = next(r for c, r in rows.items() if "fat tree" in c)
    assert "56 leaf, 56 spine, 40 core" in fabric["evidence"]


def test_seed_claims_about_training_on_selene():
    rows = {r["claim"]: r for r in cl.claims()}
    gpt3 = next(r for c, r in rows.items() if c.startswith("GPT-3"))
    assert gpt3["verdict"] == "wrong" and "V100" in gpt3["evidence"] and "34 days" in gpt3["evidence"]
    trillion = next(r for c, r in rows.items() if "trillion" in c)
    assert trillion["verdict"] == "80 GB, not 40 GB" and "384 nodes" in trillion["evidence"]
