"""ampere.architecture.claims: the claims-checked table."""

from ampere import architecture as arch


def test_chapter_claims_table():
    claims = arch.claims_rows()
    assert {r["verdict"] for r in claims} >= {"holds", "wrong"}
    assert not any(r["source"].startswith("seed") for r in claims)  # labels, never bibliography keys
