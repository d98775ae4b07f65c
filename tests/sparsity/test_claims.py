"""ampere.sparsity.claims: the published results from the data folder and the claims-checked table."""

import pytest

from ampere import specs, tables
from ampere import sparsity as sp


def test_published_results_come_from_the_data_folder():
    acc = sp.published_accuracy()
    assert all(isinstance(r, sp.AccuracyResult) and r.source and r.where for r in acc)
    bert_large = next(r for r in acc if r.network == "BERT-Large")
    assert "reprinted" in bert_large.reported_by  # NVIDIA's table, not a PyTorch run
    own = [r for r in acc if r.network.startswith("BERT-base")]
    assert {r.metric for r in own} == {"F1", "Exact match"} and all("own run" in r.reported_by for r in own)
    assert all(r.pruned_no_retraining < r.sparse for r in own)  # retraining recovers the loss
    speed = sp.published_speedups()
    assert len(speed) >= 10 and all(r.benchmark == "sparsity" and r.kind == "published" for r in speed)
    one_linear = next(r for r in speed if r.params.get("backend") == "cutlass")
    assert round(sp.published_speedup(one_linear), 2) == 1.38
    assert all(0.5 < sp.published_speedup(r) < 2.0 for r in speed)  # below the 2x math peak, every one
    assert sp.published_speedups("A100-SXM4-80GB") == [r for r in speed if r.gpu == "A100-SXM4-80GB"]


def test_claims_rows():
    rows = sp.claims_rows()
    assert {"claim", "source", "verdict", "evidence"} <= set(rows[0])
    assert any(r["verdict"] == "wrong" and "exactly 2" in r["claim"] for r in rows)
    assert next(r for r in rows if r["claim"].startswith("TF32 156"))["verdict"] == "correct (peaks)"
    assert "624" in tables.markdown_table(rows)
    a100 = specs.get("A100-SXM4-80GB")
    assert a100.peak_flops("fp16", sparse=True) == 2 * a100.peak_flops("fp16")
    with pytest.raises(ValueError):
        tables.markdown_table([])
