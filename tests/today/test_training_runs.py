"""ampere.today.training_runs: published Llama runs beside the training-time model."""

import pytest

from ampere import results, specs, today

A100, A6000, A2000, H100, H200 = today.GPUS


def test_training_runs_are_published_and_compared():
    recs = [r for r in results.records(benchmark="training-run", kind="published") if "tokens" in r.params]
    assert {r.params["model"] for r in recs} == {"llama2-7b", "llama2-13b", "llama2-70b", "llama-65b"}
    checks = today.training_run_checks()
    assert len(checks) == len(recs)
    by = {c.model: c for c in checks}
    # published per-GPU throughput derived from the GPU-hours: 2T tokens over 184,320 A100-hours
    assert by["llama2-7b"].published_tokens_per_s_per_gpu == pytest.approx(2e12 / (184320 * 3600))
    assert by["llama-65b"].published_tokens_per_s_per_gpu == pytest.approx(380)
    for c in checks:
        assert c.predicted_tokens_per_s_per_gpu > 0 and c.gpus >= 1 and c.layout
        assert abs(c.error) < 0.3, (c.model, c.error)
        assert c.baseline_tokens_per_s_per_gpu == pytest.approx(
            0.4 * specs.get(A100).peak_flops("bf16") / (6 * today.shape_of(c.model).params))
    pts = today.training_points()
    assert len(pts) == len(checks) and all(p.kind == "published" and p.ratio for p in pts)
