"""ampere.today.claims: the seeds' claims, with the HBM chapter's numbers."""

from ampere import memory, results, today

A100, A6000, A2000, H100, H200 = today.GPUS


def test_claims_agree_with_the_hbm_chapter_numbers():
    rows = today.claims_rows()
    assert len(rows) == len(results.table("today-claims")["rows"]) == 17
    assert all(r["claim"] and r["quote_fr"] and r["verdict"] and r["evidence"] and r["seed"].startswith("seed")
               for r in rows)
    assert all(not r["source"].startswith("seed") for r in rows)  # an author-year label, never the bib key
    verdicts = {r["claim"]: r["verdict"] for r in rows}
    evidence = {r["claim"]: r["evidence"] for r in rows}
    assert any(v == "unverified market claim" for v in verdicts.values())
    assert verdicts["QLoRA of a 70B on a single A100 80GB"] == "holds"
    q70 = memory.finetune_memory("70B", "qlora").total_bytes / 1e9
    assert f"{q70:.1f} GB" in evidence["QLoRA of a 70B on a single A100 80GB"]
    most = memory.max_trainable_params(A100) / 1e9
    assert f"at most {most:.1f}B" in evidence["Full BF16 fine-tuning up to about 13B on one A100 80GB"]
    assert verdicts["Full BF16 fine-tuning up to about 13B on one A100 80GB"].startswith("does not hold")
