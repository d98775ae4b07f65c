"""ampere.today: the comparison, the seed checks, the workload calculator, prices, published runs, the A800."""

import math
import subprocess
import sys

import pytest

from ampere import hbm, memory, results, specs, today, transformer
from ampere.today import PriceRange, Workload

A100, A6000, A2000, H100, H200 = today.GPUS
LLAMA7 = transformer.preset("llama2-7b")


# --- the comparison and the seed's table ----------------------------------------------------------------

def test_spec_rows_come_from_specs():
    rows = {r["GPU"]: r for r in today.spec_rows()}
    assert rows[A100]["BF16"] == pytest.approx(311.87, abs=0.01) and rows[A100]["FP8"] is None
    assert rows[A6000]["cc"] == "8.6" and rows[A2000]["cc"] == "8.6" and rows[A100]["cc"] == "8.0"
    assert rows[A2000]["FP16 sparse"] == pytest.approx(2 * rows[A2000]["BF16"])
    assert rows[A6000]["FP64 TC"] is None and rows[A100]["FP64 TC"] == pytest.approx(19.49, abs=0.01)
    assert rows[H100]["FP8"] == pytest.approx(1978.9, abs=0.1) and rows[A2000]["NVLink GB/s"] is None


def test_seed_spec_check_reads_the_seed_table_and_finds_its_errors():
    table = results.table("today-seed-specs")
    assert table["source"] == "seed003" and len(table["rows"]) == 31
    rows = today.seed_spec_check()
    assert len(rows) == len(table["rows"])
    verdict = {(r["quantity"], r["GPU"]): r["verdict"] for r in rows}
    assert verdict[("FP16 tensor TFLOPS", A2000)].startswith("wrong: the sparse figure")
    assert verdict[("FP16 tensor TFLOPS", A6000)] == "holds (dense)"
    assert verdict[("compute capability", A6000)].startswith("wrong")
    assert verdict[("compute capability", A100)] == "holds"
    assert verdict[("FP64 TFLOPS", A6000)] == "holds" and verdict[("TDP W", A100)].startswith("imprecise")
    assert verdict[("NVLink GB/s", A2000)] == "holds" and verdict[("MIG instances", A6000)] == "holds"
    assert all(verdict[(q, g)] == "holds" for q in ("CUDA cores", "tensor cores", "bandwidth GB/s")
               for g in today.SEED_GPUS)
    assert sum(v.startswith(("holds",)) for v in verdict.values()) == 27


# --- prices --------------------------------------------------------------------------------------------

def test_prices_are_dated_sourced_and_validated():
    seed = today.seed_prices()
    p = seed[A100]
    assert (p.low, p.high, p.source, p.as_of) == (0.96, 2.29, "seed003", "2026") and p.mid == pytest.approx(1.625)
    assert set(seed) == set(today.SEED_GPUS)  # no seed prices the H100/H200: user input only
    hyper = today.hyperscaler_prices_2023()[A100]
    assert hyper.source == "seed000" and hyper.as_of == "2023" and hyper.low < hyper.high
    table = today.price_table({H100: (2.0, 3.0)})
    assert table[H100].source == "user input" and table[A100] == p
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
    with pytest.raises(ValueError, match="price"):
        today.hours_for_budget(100, H100)
    with pytest.raises(ValueError, match="at"):
        p.at("median")


# --- workloads: nonsense in, ValueError/TypeError out ---------------------------------------------------

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
    (dict(model="7B", task="pretrain", global_batch=0), "global_batch"),
    (dict(model="7B", task="pretrain", tokens="1e9"), "tokens"),
])
def test_workload_rejects_nonsense(kwargs, field):
    with pytest.raises((ValueError, TypeError), match=field):
        Workload(**kwargs)


def test_plan_rejects_unknown_gpu_and_bad_arguments():
    w = Workload("7B", "inference")
    with pytest.raises(ValueError, match="catalogue"):
        today.plan(w, "B200")
    with pytest.raises(ValueError, match="reserve_fraction"):
        today.plan(w, A100, reserve_fraction=1.5)
    with pytest.raises(TypeError, match="Workload"):
        today.plan({"model": "7B"}, A100)
    with pytest.raises(ValueError, match="price"):
        today.plan(w, A100, price=(2, 1))
    for bad in ((float("nan"), 1.0), (0.5, float("inf")), (-1, 1), ("cheap", "dear"), (1, 2, 3), (True, 2)):
        with pytest.raises(ValueError, match="price"):
            today.plan(w, A100, price=bad)
        with pytest.raises(ValueError, match="price"):
            today.price_table({A100: bad})
    for budget in (float("nan"), float("inf"), 0, -1):
        with pytest.raises(ValueError, match="budget"):
            today.hours_for_budget(budget, A100)
    for budget in (True, "100"):
        with pytest.raises(TypeError, match="budget"):
            today.hours_for_budget(budget, A100)


# --- the calculator against hand-computed cases ---------------------------------------------------------

def test_inference_fit_and_decode_bound_by_hand():
    shape = transformer.preset("llama2-70b")
    w = Workload("70B", "inference", weights="int4", context=4096, batch=1)
    p = today.plan(w, A100, today.seed_prices()[A100])
    weights = shape.params * (4 + 16 / 128) / 8  # int4 with one fp16 scale per 128 weights
    kv = 2 * 80 * 8 * 128 * 2 * 4096  # 2 x layers x kv_heads x head_dim x 2 bytes x tokens
    assert p.feasible and p.cards == 1 and p.memory_bytes == pytest.approx(weights + kv, rel=1e-12)
    assert p.capacity_bytes == pytest.approx(80e9 - memory.runtime_reserve(A100))
    assert p.bound == "memory" and p.tokens_per_s == pytest.approx(2039e9 / (weights + kv), rel=1e-12)
    per_m = p.cost_per_million_tokens()
    assert per_m[0] == pytest.approx(0.96 / (p.tokens_per_s * 3600) * 1e6)
    assert p.cost_per_run() is None and p.fits_one_card and p.nodes == 1


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


def test_memory_comes_from_ampere_memory():
    p = today.plan(Workload("7B", "full-finetune", tokens=1e9), A100)
    est = memory.model_memory(LLAMA7, mode="training", data_parallel=p.cards, zero_stage=3, seq_len=2048)
    assert p.cards == 2 and p.memory_bytes == pytest.approx(est.total_bytes)
    one = memory.model_memory(LLAMA7, mode="training", seq_len=2048)
    assert not one.fits(A100, memory.runtime_reserve(A100))
    q = today.plan(Workload("70B", "qlora", max_cards=1), A100)
    assert q.memory_bytes == pytest.approx(memory.finetune_memory("70B", "qlora").total_bytes)


def test_fixed_utilisation_is_a_stated_override():
    w = Workload("3B", "lora", mfu=1.0)
    lora = today.plan(w, A100)
    n = transformer.preset("llama3.2-3b").params
    assert lora.step_time_s == pytest.approx(4 * n * 2048 / specs.get(A100).peak_flops("bf16"))
    assert today.plan(Workload("3B", "lora", mfu=0.5), A100).step_time_s == pytest.approx(2 * lora.step_time_s)
    assert "fixed MFU 100%" in w.describe()


def test_training_time_comes_from_the_megatron_model():
    full = today.plan(Workload("3B", "full-finetune"), A100)
    lora = today.plan(Workload("3B", "lora"), A100)
    assert any(n.startswith("layout:") for n in full.notes) and 0.15 < full.mfu < 0.7
    assert lora.tokens_per_s == pytest.approx(1.5 * full.tokens_per_s)  # same FLOP rate, 4N instead of 6N
    assert lora.mfu == pytest.approx(full.mfu)
    assert full.step_time_s == pytest.approx(full.cards * 2048 / full.tokens_per_s)
    with pytest.raises(ValueError, match="parameter count"):
        today.plan(Workload(7e9, "pretrain"), A100)
    assert today.plan(Workload(7e9, "pretrain", mfu=0.4), A100).feasible


def test_fp8_only_where_the_gpu_has_it():
    w8 = Workload("7B", "pretrain", precision="fp8", tokens=1e9)
    a = today.plan(w8, A100)
    assert not a.feasible and "fp8" in a.reason
    h8, h16 = today.plan(w8, H100), today.plan(Workload("7B", "pretrain", tokens=1e9), H100)
    assert h8.feasible and h8.tokens_per_s > h16.tokens_per_s


def test_network_respects_the_nvlink_domain():
    a6000_2 = today.plan(Workload("3B", "full-finetune", mfu=0.4), A6000)
    assert a6000_2.cards == 2 and "NVLink bridge" in a6000_2.notes[0]
    a6000_3 = today.plan(Workload("7B", "full-finetune", mfu=0.4), A6000)
    assert a6000_3.cards == 3 and "PCIe" in a6000_3.notes[0]
    no = today.plan(Workload("7B", "full-finetune", mfu=0.4), A2000)
    assert not no.feasible and "more than 8 cards" in no.reason
    # 16 A100s are two DGX nodes: NVLink inside a node, InfiniBand between them (never "16 cards over NVLink")
    big = today.plan(Workload("70B", "full-finetune", mfu=0.4, min_cards=16, max_cards=16), A100)
    assert big.feasible and big.cards == 16 and big.nodes == 2
    assert "2 nodes x 8 cards" in big.notes[0] and "InfiniBand" in big.notes[0]
    assert not any("16 cards over" in n for n in big.notes)
    one_node = today.plan(Workload("7B", "full-finetune", mfu=0.4, min_cards=8), A100)
    assert one_node.nodes == 1 and "8 cards over NVLink" in one_node.notes[0]


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


# --- published runs beside the models -------------------------------------------------------------------

def test_decode_run_bound_by_hand():
    # one sequence, no prompt, one token: one step reading the weights and one token of KV cache
    b = today.decode_run_bound("llama2-7b", A100, batch=1, prompt_tokens=0, output_tokens=1)
    step = (LLAMA7.params * 2 + memory.kv_cache_bytes(LLAMA7, 1, 1, "fp16")) / 2039e9
    assert b == pytest.approx(1 / step, rel=1e-9)
    long = today.decode_run_bound("llama2-7b", A100, batch=1, prompt_tokens=0, output_tokens=2048)
    assert long < b  # the KV cache grows
    tp = today.decode_run_bound("llama2-70b", A100, batch=1, prompt_tokens=1, output_tokens=128, tensor_parallel=4)
    one = today.decode_run_bound("llama2-70b", "H200-SXM-141GB", batch=1, prompt_tokens=1, output_tokens=128)
    assert tp < 4 * 2039e9 / (transformer.preset("llama2-70b").params * 2)  # all-reduces cost something
    assert one > 0
    with pytest.raises((ValueError, TypeError), match="batch"):
        today.decode_run_bound("llama2-7b", A100, batch=0, prompt_tokens=1, output_tokens=1)
    with pytest.raises(ValueError, match="tensor_parallel"):
        today.decode_run_bound("llama2-7b", A6000, batch=1, prompt_tokens=1, output_tokens=1, tensor_parallel=16)


def test_decode_points_cover_a100_h100_h200_below_the_bound():
    pts = today.decode_points()
    recs = results.records(benchmark="llm-decode", kind="published")
    assert len(pts) == len(recs) >= 8
    assert {A100, H100, H200} <= {p.gpu for p in pts}
    for p in pts:
        assert p.kind == "published" and p.unit == "tokens/s" and p.source and "lmdeploy2023a100" not in p.source
        assert 0.3 < p.ratio < 1.0, (p.what, p.ratio)  # real runs reach a fraction of the bandwidth bound


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


# --- the A800 and the claims ---------------------------------------------------------------------------

def test_a800_is_an_a100_with_slower_nvlink_from_the_data():
    row = results.table("today-a800")["rows"][0]
    a800, a100 = today.a800_spec(), specs.get(A100)
    assert a800.name == "A800-SXM4-80GB" and a800.nvlink_bytes_per_s == row["value"]
    assert a800.source("nvlink_bytes_per_s") == row["source"] == "heise2022a800"
    assert a800.peak_flops("bf16") == a100.peak_flops("bf16") and a800.hbm_bytes_per_s == a100.hbm_bytes_per_s
    slow, fast = today.gradient_allreduce_time(7e9, a800), today.gradient_allreduce_time(7e9, a100)
    assert 1.45 < slow / fast <= 1.5
    with pytest.raises(ValueError, match="GA100"):
        today.a800_spec("H100-SXM5-80GB")
    with pytest.raises(ValueError, match="NVLink"):
        today.gradient_allreduce_time(7e9, A2000)
    with pytest.raises(ValueError, match="params"):
        today.gradient_allreduce_time(-1, A100)


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


def test_shapes_and_models():
    assert today.shape_of("7B") is transformer.preset("llama2-7b")
    assert today.shape_of("llama-65b").params == pytest.approx(65.2e9, rel=0.01)
    with pytest.raises(TypeError, match="model"):
        today.shape_of(7)
    with pytest.raises(ValueError, match="model"):
        today.shape_of("GPT-5")


def test_import_stays_torch_free():
    code = ("import sys, ampere.today as t; t.plan(t.Workload('7B', 'inference'), 'A100-SXM4-80GB'); "
            "t.claims_rows(); t.decode_points(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr


def test_min_cards_adds_data_parallelism():
    two = today.plan(Workload("7B", "pretrain", tokens=1e9, mfu=0.4), A100)
    four = today.plan(Workload("7B", "pretrain", tokens=1e9, mfu=0.4, min_cards=4), A100)
    assert (two.cards, four.cards) == (2, 4) and four.memory_bytes < two.memory_bytes
    assert four.tokens_per_s == pytest.approx(2 * two.tokens_per_s)
    assert four.cost_per_run() == pytest.approx(two.cost_per_run())
    tp = today.plan(Workload("7B", "inference", min_cards=2), A100)
    assert tp.cards == 2 and tp.tokens_per_s > today.plan(Workload("7B", "inference"), A100).tokens_per_s


def test_fp64_per_dollar():
    per = today.fp64_per_dollar(at="low")
    assert per[A100] == pytest.approx(19.49 / 0.96, rel=1e-3) and per[A6000] == pytest.approx(0.605 / 0.33, rel=1e-3)
    assert H100 not in per
    with pytest.raises(ValueError, match="at"):
        today.fp64_per_dollar(at="best")
