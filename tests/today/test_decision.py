"""ampere.today.decision: the cheapest plan, the decision table and matrix, break-even prices."""

import pytest

from ampere import today
from ampere.today import Workload

A100, A6000, A2000, H100, H200 = today.GPUS


def test_best_and_decision_table():
    ps = today.plans(Workload("13B", "inference", max_cards=1))
    assert [p.gpu for p in ps] == list(today.GPUS)
    assert today.best(ps, "low").gpu == A6000 and ps[3].price is None  # H100: no seed price, not a candidate
    with pytest.raises(ValueError, match="at"):
        today.best(ps, "median")
    with pytest.raises(TypeError, match="GPUPlan"):
        today.best([1, 2])
    assert today.best(today.plans(Workload("13B", "inference"), prices=None)) is None
    rows = today.decision_table({"13B fp16, one card": Workload("13B", "inference", max_cards=1)})
    assert rows[0][A2000] == "does not fit" and rows[0]["cheapest (mid)"] == A6000


def test_decision_matrix_check_row_by_row():
    published = today.seed_decision_matrix()
    assert len(published) == 9 and all(r["source"] == "seed003" and r["seed_reason_fr"] for r in published)
    assert set(today.MATRIX_RUNS) == {r["workload"] for r in published}
    rows = {r["workload"]: r for r in today.decision_matrix_check()}
    assert len(rows) == 9
    assert rows["3D rendering"]["verdict"] == "outside the model"
    assert rows["FP64 scientific computing"]["verdict"] == "agrees"
    assert rows["Prototyping / education"]["verdict"] == "agrees"
    assert rows["Single-model inference"]["verdict"] == "agrees"
    for r in rows.values():  # the verdict is what the two cheapest columns say
        if r["verdict"] != "outside the model":
            choice = r["article's choice"]
            wins = (r["cheapest (low prices)"] == choice) + (r["cheapest (high prices)"] == choice)
            assert r["verdict"] == {2: "agrees", 1: "depends on prices", 0: "disagrees"}[wins]
    assert rows["Inference at scale"]["verdict"] == "disagrees"  # MIG gives isolation, not cheaper tokens
    # with prices that make the A2000 nearly free, the seed's choice wins; nearly free A6000s beat it
    cheap = today.price_table({A2000: (0.01, 0.02)})
    rows_cheap = {r["workload"]: r for r in today.decision_matrix_check(cheap)}
    assert rows_cheap["Fine-tuning models < 3B"]["verdict"] == "agrees"
    dear = today.price_table({A6000: (0.001, 0.002)})
    rows_dear = {r["workload"]: r for r in today.decision_matrix_check(dear)}
    assert rows_dear["Fine-tuning models < 3B"]["verdict"] == "disagrees"


def test_break_even_price():
    w = Workload("70B", "inference", weights="int4")
    lo, hi = today.break_even_price(w, H100)
    a, h = today.plan(w, A100), today.plan(w, H100)
    assert lo == pytest.approx(0.96 * h.tokens_per_s / a.tokens_per_s) and hi / lo == pytest.approx(2.29 / 0.96)
    bf16 = Workload("7B", "pretrain", tokens=1e9)
    fp8 = Workload("7B", "pretrain", tokens=1e9, precision="fp8")
    assert today.break_even_price(fp8, H100) is None  # the A100 side cannot run FP8
    lo8, _ = today.break_even_price(fp8, H100, reference_workload=bf16)
    assert lo8 > today.break_even_price(bf16, H100)[0]
    with pytest.raises(TypeError, match="reference_price"):
        today.break_even_price(w, H100, reference_price=(1, 2))


def test_fp64_per_dollar():
    per = today.fp64_per_dollar(at="low")
    assert per[A100] == pytest.approx(19.49 / 0.96, rel=1e-3) and per[A6000] == pytest.approx(0.605 / 0.33, rel=1e-3)
    assert H100 not in per
    with pytest.raises(ValueError, match="at"):
        today.fp64_per_dollar(at="best")
