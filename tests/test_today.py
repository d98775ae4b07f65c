"""ampere.today: the comparison table, the seed checks, the workload calculator, prices, the A800."""

import math
import subprocess
import sys

import pytest

from ampere import hbm, interconnect, specs, today
from ampere.today import PriceRange, Workload

A100, A6000, A2000, H100, H200 = today.GPUS


# --- the comparison and the seed's table ----------------------------------------------------------------

def test_spec_rows_come_from_specs():
    rows = {r["GPU"]: r for r in today.spec_rows()}
    assert rows[A100]["BF16"] == pytest.approx(311.87, abs=0.01) and rows[A100]["FP8"] is None
    assert rows[A6000]["cc"] == "8.6" and rows[A2000]["cc"] == "8.6" and rows[A100]["cc"] == "8.0"
    assert rows[A2000]["FP16 sparse"] == pytest.approx(2 * rows[A2000]["BF16"])
    assert rows[A6000]["FP64 TC"] is None and rows[A100]["FP64 TC"] == pytest.approx(19.49, abs=0.01)
    assert rows[H100]["FP8"] == pytest.approx(1978.9, abs=0.1) and rows[A2000]["NVLink GB/s"] is None


def test_seed_spec_check_finds_the_seed_errors():
    rows = today.seed_spec_check()
    verdict = {(r["quantity"], r["GPU"]): r["verdict"] for r in rows}
    assert verdict[("FP16 tensor TFLOPS", A2000)].startswith("wrong: the sparse figure")
    assert verdict[("FP16 tensor TFLOPS", A6000)] == "holds (dense)"
    assert verdict[("compute capability", A6000)].startswith("wrong")
    assert verdict[("compute capability", A100)] == "holds"
    assert verdict[("FP64 TFLOPS", A6000)] == "holds" and verdict[("TDP W", A100)].startswith("imprecise")
    assert all(verdict[(q, g)] == "holds" for q in ("CUDA cores", "tensor cores", "bandwidth GB/s")
               for g in today.SEED_GPUS)


# --- prices --------------------------------------------------------------------------------------------

def test_prices_are_dated_and_validated():
    p = today.SEED_PRICES_2026[A100]
    assert (p.low, p.high, p.source, p.as_of) == (0.96, 2.29, "seed003", "2026") and p.mid == pytest.approx(1.625)
    assert H100 not in today.SEED_PRICES_2026  # no seed gives H100 prices: user input only
    table = today.price_table({H100: (2.0, 3.0)})
    assert table[specs.get(H100).name].source == "user input" and table[A100] is p
    for bad in ((-1, 2), (0, 1), (3, 2), (float("nan"), 1)):
        with pytest.raises(ValueError, match="price"):
            PriceRange(*bad, "x", "now")
    with pytest.raises(ValueError, match="catalogue"):
        today.price_table({"B200": (1, 2)})
    with pytest.raises(ValueError, match="PriceRange"):
        today.price_table({H100: 3.0})
    lo, hi = today.hours_for_budget(100, A100)
    assert (round(lo), round(hi)) == (44, 104)
    with pytest.raises(ValueError, match="budget"):
        today.hours_for_budget(-5, A100)
    with pytest.raises(ValueError, match="no price"):
        today.hours_for_budget(100, H100)
    hyper = today.HYPERSCALER_PRICES_2023[A100]
    assert hyper.source == "seed000" and hyper.low == pytest.approx(32.77 / 8)


# --- workloads: nonsense in, ValueError out -------------------------------------------------------------

@pytest.mark.parametrize("kwargs,field", [
    (dict(model="7B", task="dance"), "task"), (dict(model="7B", task="inference", weights="fp4"), "weights"),
    (dict(model="7B", task="inference", context=-1), "context"), (dict(model="7B", task="inference", batch=0), "batch"),
    (dict(model="7B", task="lora", tokens=-1e6), "tokens"), (dict(model="7B", task="lora", mfu=1.5), "mfu"),
    (dict(model="7B", task="lora", mfu=0), "mfu"), (dict(model=-7e9, task="pretrain"), "model"),
    (dict(model=7e9, task="inference"), "parameter count"), (dict(model="8B", task="inference"), "model"),
    (dict(model=True, task="pretrain"), "model"), (dict(model="7B", task="pretrain", precision="fp4"), "precision"),
    (dict(model="7B", task="pretrain", recompute="some"), "recompute"),
    (dict(model="7B", task="pretrain", max_cards=0), "max_cards"),
    (dict(model="7B", task="pretrain", seq_len=2.5), "seq_len"),
    (dict(model="7B", task="pretrain", tokens=float("inf")), "tokens"),
    (dict(model="7B", task="pretrain", tokens=float("nan")), "tokens"),
    (dict(model=float("nan"), task="pretrain"), "model"), (dict(model=0, task="pretrain"), "model"),
    (dict(model="7B", task="lora", mfu=float("nan")), "mfu"), (dict(model="7B", task="lora", lora_rank=0), "lora_rank"),
    (dict(model="7B", task="pretrain", micro_batch=-1), "micro_batch"),
    (dict(model="7B", task="inference", context=2.5), "context"), (dict(model="", task="inference"), "model"),
    (dict(model="7B", task="pretrain", min_cards=9), "min_cards"),
])
def test_workload_rejects_nonsense(kwargs, field):
    with pytest.raises(ValueError, match=field):
        Workload(**kwargs)


def test_plan_rejects_unknown_gpu_and_bad_arguments():
    w = Workload("7B", "inference")
    with pytest.raises(ValueError, match="catalogue"):
        today.plan(w, "B200")
    with pytest.raises(ValueError, match="reserve_fraction"):
        today.plan(w, A100, reserve_fraction=1.5)
    with pytest.raises(ValueError, match="Workload"):
        today.plan({"model": "7B"}, A100)
    with pytest.raises(ValueError, match="price"):
        today.plan(w, A100, price=(2, 1))
    for bad in ((float("nan"), 1.0), (0.5, float("inf")), (-1, 1), ("cheap", "dear"), (1, 2, 3), (True, 2)):
        with pytest.raises(ValueError, match="price"):
            today.plan(w, A100, price=bad)
        with pytest.raises(ValueError, match="price"):
            today.price_table({A100: bad})
    for budget in (float("nan"), float("inf"), 0, True, "100"):
        with pytest.raises(ValueError, match="budget_dollars"):
            today.hours_for_budget(budget, A100)


# --- the calculator against hand-computed cases ---------------------------------------------------------

def test_inference_fit_and_decode_bound_by_hand():
    shape = hbm.MODELS["llama2-70b"]
    w = Workload("70B", "inference", weights="int4", context=4096, batch=1)
    p = today.plan(w, A100, today.SEED_PRICES_2026[A100])
    weights = shape.params * (4 + 16 / 128) / 8  # int4 with one fp16 scale per 128 weights
    kv = 2 * 80 * 8 * 128 * 2 * 4096  # 2 x layers x kv_heads x head_dim x 2 bytes x tokens
    assert p.feasible and p.cards == 1 and p.memory_bytes == pytest.approx(weights + kv, rel=1e-12)
    assert p.bound == "memory" and p.tokens_per_s == pytest.approx(2039e9 / (weights + kv), rel=1e-12)
    per_m = p.cost_per_million_tokens()
    assert per_m[0] == pytest.approx(0.96 / (p.tokens_per_s * 3600) * 1e6)
    assert p.cost_per_run() is None and p.fits_one_card


def test_multi_card_inference_pays_communication():
    w = Workload("13B", "inference", weights="fp16", context=4096)
    one = today.plan(w, A100)
    four = today.plan(w, A2000)
    assert four.feasible and four.cards == math.ceil(four.memory_bytes * four.cards / four.capacity_bytes)
    ideal = four.cards * specs.get(A2000).hbm_bytes_per_s / (four.memory_bytes * four.cards)
    assert four.tokens_per_s < ideal and four.tokens_per_s > ideal / four.cards
    assert any("PCIe" in n for n in four.notes) and one.notes == ()
    capped = today.plan(Workload("13B", "inference", max_cards=1), A2000)
    assert not capped.feasible and "max_cards=1" in capped.reason and capped.cost_per_hour() is None


def test_training_step_time_by_hand():
    w = Workload("7B", "full-finetune", tokens=1e9, seq_len=2048, micro_batch=1, mfu=0.4)
    p = today.plan(w, A100, today.SEED_PRICES_2026[A100])
    n = hbm.MODELS["llama2-7b"].params
    compute = 6 * n * 2048 / (0.4 * specs.get(A100).peak_flops("bf16"))
    assert p.cards == 2 and p.bound == "compute" and p.step_time_s == pytest.approx(compute, rel=1e-12)
    assert p.tokens_per_s == pytest.approx(2 * 2048 / compute) and p.run_time_s == pytest.approx(1e9 / p.tokens_per_s)
    assert p.cost_per_run()[1] == pytest.approx(2 * 2.29 * p.run_time_s / 3600)
    # the memory per card is ampere.hbm's ZeRO-3 estimate over 2 cards, and 1 card would not hold it
    est = hbm.model_memory("7B", mode="training", data_parallel=2, zero_stage=3, seq_len=2048)
    assert p.memory_bytes == pytest.approx(est.total_bytes)
    assert not hbm.model_memory("7B", mode="training", seq_len=2048).fits(A100, 0.05 * 80e9)


def test_lora_uses_four_flops_per_parameter_and_peak_is_an_upper_bound():
    lora = today.plan(Workload("3B", "lora", mfu=1.0), A100)
    n = today.EXTRA_MODELS["3B"].params
    assert 3.1e9 < n < 3.3e9  # Llama 3.2 3B
    assert lora.step_time_s == pytest.approx(4 * n * 2048 / specs.get(A100).peak_flops("bf16"))
    assert today.plan(Workload("3B", "lora"), A100).step_time_s == pytest.approx(lora.step_time_s / 0.4)


def test_fp8_only_where_the_gpu_has_it():
    w8 = Workload("7B", "pretrain", precision="fp8", tokens=1e9)
    a = today.plan(w8, A100)
    assert not a.feasible and "fp8" in a.reason
    h8, h16 = today.plan(w8, H100), today.plan(Workload("7B", "pretrain", tokens=1e9), H100)
    assert h8.step_time_s == pytest.approx(h16.step_time_s / 2)


def test_interconnect_and_max_cards():
    a6000_2 = today.plan(Workload("3B", "full-finetune"), A6000)
    assert a6000_2.cards == 2 and "NVLink bridge" in a6000_2.notes[0]
    a6000_3 = today.plan(Workload("7B", "full-finetune"), A6000)
    assert a6000_3.cards == 3 and "PCIe" in a6000_3.notes[0]
    no = today.plan(Workload("7B", "full-finetune"), A2000)
    assert not no.feasible and "more than 8 cards" in no.reason
    # communication bound: tiny micro-batches over PCIe
    tiny = today.plan(Workload("7B", "full-finetune", seq_len=64), A6000)
    assert tiny.bound == "communication"
    gathered = 2 * hbm.MODELS["llama2-7b"].params
    link = specs.get(A6000).pcie_bytes_per_s * interconnect.PCIE_EFFICIENCY
    comm = (2 * interconnect.collective_time("all_gather", gathered, 3, link, interconnect.A100_INTRA_LATENCY_S)
            + interconnect.collective_time("reduce_scatter", gathered, 3, link, interconnect.A100_INTRA_LATENCY_S))
    assert tiny.step_time_s == pytest.approx(comm)


def test_best_and_decision_table():
    ps = today.plans(Workload("13B", "inference", max_cards=1))
    assert [p.gpu for p in ps] == list(today.GPUS)
    assert today.best(ps, "low").gpu == A6000 and ps[3].price is None  # H100: no seed price, not a candidate
    with pytest.raises(ValueError, match="at="):
        today.best(ps, "median")
    assert today.best(today.plans(Workload("13B", "inference"), prices=None)) is None
    rows = today.decision_table({"13B fp16, one card": Workload("13B", "inference", max_cards=1)})
    assert rows[0][A2000] == "does not fit" and rows[0]["cheapest (mid)"] == A6000


def test_decision_matrix_check_row_by_row():
    rows = {r["workload"]: r for r in today.decision_matrix_check()}
    assert len(rows) == len(today.SEED_DECISION_MATRIX) == 9
    assert rows["3D rendering"]["verdict"] == "outside the model"
    assert rows["FP64 scientific computing"]["verdict"] == "agrees"
    assert rows["Prototyping / education"]["verdict"] == "agrees"
    assert rows["Single-model inference"]["verdict"] == "agrees"
    assert rows["Fine-tuning models < 3B"]["verdict"] == "disagrees"  # cheapest per hour, not per token
    assert rows["Fine-tuning models < 3B"]["cheapest (low prices)"] == A6000
    assert {r["verdict"] for r in rows.values()} <= {"agrees", "disagrees", "depends on prices", "outside the model"}
    # with prices that make the A2000 nearly free, the seed's choice wins
    cheap = today.price_table({A2000: (0.01, 0.02)})
    rows_cheap = {r["workload"]: r for r in today.decision_matrix_check(cheap)}
    assert rows_cheap["Fine-tuning models < 3B"]["verdict"] == "agrees"


def test_break_even_price():
    w = Workload("70B", "inference", weights="int4")
    lo, hi = today.break_even_price(w, H100)
    a, h = today.plan(w, A100), today.plan(w, H100)
    assert lo == pytest.approx(0.96 * h.tokens_per_s / a.tokens_per_s) and hi / lo == pytest.approx(2.29 / 0.96)
    bf16 = Workload("7B", "pretrain", tokens=1e9)
    fp8 = Workload("7B", "pretrain", tokens=1e9, precision="fp8")
    assert today.break_even_price(fp8, H100) is None  # the A100 side cannot run FP8
    lo8, _ = today.break_even_price(fp8, H100, reference_workload=bf16)
    assert lo8 == pytest.approx(2 * today.break_even_price(bf16, H100)[0], rel=0.05)


# --- the A800 and the claims ---------------------------------------------------------------------------

def test_a800_is_an_a100_with_slower_nvlink():
    a800, a100 = today.a800_spec(), specs.get(A100)
    assert a800.name == "A800-SXM4-80GB" and a800.nvlink_bytes_per_s == 400e9
    assert a800.source("nvlink_bytes_per_s") == "heise2022a800"
    assert a800.peak_flops("bf16") == a100.peak_flops("bf16") and a800.hbm_bytes_per_s == a100.hbm_bytes_per_s
    slow, fast = today.gradient_allreduce_time(7e9, a800), today.gradient_allreduce_time(7e9, a100)
    assert 1.45 < slow / fast <= 1.5
    with pytest.raises(ValueError, match="GA100"):
        today.a800_spec("H100-SXM5-80GB")
    with pytest.raises(ValueError, match="NVLink"):
        today.gradient_allreduce_time(7e9, A2000)
    with pytest.raises(ValueError, match="params"):
        today.gradient_allreduce_time(-1, A100)


def test_claims_rows_have_verdicts_and_mark_market_claims():
    rows = today.claims_rows()
    assert all(r["claim"] and r["verdict"] and r["evidence"] and r["seed"].startswith("seed") for r in rows)
    verdicts = {r["claim"]: r["verdict"] for r in rows}
    assert any(v == "unverified market claim" for v in verdicts.values())
    assert verdicts["QLoRA of a 70B on a single A100 80GB"] == "holds"
    assert verdicts["Full BF16 fine-tuning up to ~13B on one A100 80GB"].startswith("does not hold")


def test_import_stays_torch_free():
    code = ("import sys, ampere.today as t; t.plan(t.Workload('7B', 'inference'), 'A100-SXM4-80GB'); "
            "t.claims_rows(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr


def test_min_cards_adds_data_parallelism():
    with pytest.raises(ValueError, match="min_cards"):
        Workload("7B", "pretrain", min_cards=9)
    two = today.plan(Workload("7B", "pretrain", tokens=1e9), A100)
    four = today.plan(Workload("7B", "pretrain", tokens=1e9, min_cards=4), A100)
    assert (two.cards, four.cards) == (2, 4) and four.memory_bytes < two.memory_bytes
    assert four.tokens_per_s == pytest.approx(2 * two.tokens_per_s)
    assert four.cost_per_run() == pytest.approx(two.cost_per_run())
    tp = today.plan(Workload("7B", "inference", min_cards=2), A100)
    assert tp.cards == 2 and tp.tokens_per_s > today.plan(Workload("7B", "inference"), A100).tokens_per_s


def test_fp64_per_dollar():
    per = today.fp64_per_dollar(at="low")
    assert per[A100] == pytest.approx(19.49 / 0.96, rel=1e-3) and per[A6000] == pytest.approx(0.605 / 0.33, rel=1e-3)
    assert H100 not in per
    with pytest.raises(ValueError, match="at="):
        today.fp64_per_dollar(at="best")
