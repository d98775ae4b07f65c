"""Tests of ampere.interconnect.validation: the claims checked.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

from ampere import interconnect as ic


def test_claims_cover_the_seeds_with_computed_evidence():
    import re
    from pathlib import Path

    rows = ic.claims()
    assert all(set(r) == {"claim", "seed", "verdict", "evidence"} and r["evidence"] for r in rows)
    bib = (Path(__file__).resolve().parents[2] / "book" / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"@\w+\{([^,]+),", bib))
    assert {r["seed"] for r in rows} <= keys
    by_claim = {r["claim"]: r for r in rows}
    pcie = next(r for c, r in by_claim.items() if "PCIe A100 has no NVLink" in c)
    assert pcie["verdict"].startswith("wrong") and "600 GB/s" in pcie["evidence"]
    assert "300 GB/s each way" in by_claim["NVLink 3 gives 600 GB/s of bidirectional bandwidth per GPU"]["evidence"]
