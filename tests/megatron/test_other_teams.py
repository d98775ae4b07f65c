"""Other teams' published runs predicted with their own configuration (ampere/megatron/other_teams.py;
chapter: Megatron-LM, section "Other teams, other software")."""

from __future__ import annotations

import statistics

import pytest

from ampere import megatron as M


def test_every_record_becomes_a_run_with_a_stack():
    runs = M.team_runs()
    assert len(runs) == 24
    assert {r.software.name for r in runs} >= {"fsdp", "megatron-deepspeed", "deepspeed-zero3", "ddp-flash"}
    scored = [r for r in runs if r.scored]
    assert len(scored) == 18  # stated enough to predict; team_rows also drops the runs that do not fit
    for r in runs:
        assert r.scored == (r.why_not_scored == "")
    bloom = next(r for r in runs if r.id.startswith("bigscience"))
    assert bloom.options["network"].hcas_per_node == 4 and bloom.options["interleave"] == 1


def test_errors_per_group_with_no_fitted_constant():
    rows = M.team_rows()
    groups = {g.team: g for g in M.team_groups(rows)}
    every = groups["all scored runs"]
    assert every.scored == 16
    assert all("host memory" in r["why_not_scored"] for r in rows if r["id"].startswith(("deepspeed-azure-zero3-1t",
                                                                                        "deepspeed-azure-zero3-2t")))
    errs = [abs(r["error"]) for r in rows if r["scored"]]
    assert every.mean_abs_error == statistics.mean(errs)
    assert every.mean_abs_error <= 0.12  # acceptance: mean |error| <= 12 %
    for r in rows:
        if r["error"] is not None:
            assert not r["estimate"].calibrated
    # the stack is an input, not a constant: BLOOM on Megatron-LM 2022's stack would be predicted faster
    best = {r["id"]: r for r in M.team_rows(software="megatron-2022")}
    bloom = next(r for r in rows if r["id"].startswith("bigscience"))
    assert best[bloom["id"]]["predicted_time_s"] < bloom["predicted_time_s"]
    assert "no interleaving" in bloom["differs"] and "4 adapters per node" in bloom["differs"]


def test_every_mosaicml_a100_row_at_2048_tokens_with_the_same_rules():
    """The scored MosaicML records are part of a 31-row table; the same rules predict all of it (nothing fitted).
    Most rows are within a few percent; the outliers are all on the 40 GB cluster, and one of them (MPT-1B on 32
    GPUs) is slower than the same configuration on 16 and 64 GPUs, which no input of the model explains."""
    rows = M.mosaicml_sweep()
    assert len(rows) == 31 and sum(r["scored_record"] for r in rows) == 12
    errors = [abs(r["error"]) for r in rows]
    assert statistics.median(errors) < 0.03
    outliers = {(r["model"], r["gpus"], r["gpu"]) for r in rows if abs(r["error"]) > 0.10}
    assert outliers == {("MPT-70b", 64, "A100-SXM4-40GB"), ("MPT-13b", 8, "A100-SXM4-40GB"),
                        ("MPT-1b", 32, "A100-SXM4-40GB")}
    one_b = {r["gpus"]: r["published_tflops"] for r in rows if r["model"] == "MPT-1b" and "40GB" in r["gpu"]}
    assert one_b[32] < 0.85 * min(one_b[16], one_b[64])  # the same microbatch and recipe on either side
    scored = {r["id"]: r for r in M.team_rows()}
    same = next(r for r in rows if (r["model"], r["gpus"], r["gpu"]) == ("MPT-70b", 64, "A100-SXM4-40GB"))
    assert same["error"] == pytest.approx(scored["mosaicml-mpt-70b-64gpu-a100-40gb"]["error"], rel=1e-9)
