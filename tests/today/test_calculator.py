"""ampere.today.calculator: plan() against hand-computed cases."""

import math

import pytest

from ampere import memory, specs, today, transformer
from ampere.today import Workload

A100, A6000, A2000, H100, H200 = today.GPUS
LLAMA7 = transformer.preset("llama2-7b")


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


def test_inference_fit_and_decode_bound_by_hand():
    shape = transformer.preset("llama2-70b")
    w = Workload("70B", "inference", weights="int4", context=4096, batch=1)
    p = today.plan(w, A100, today.seed_prices()[A100])
    weights = shape.params * (4 + 16 / 128) / 8  # int4 with one fp16 scale per 128 weights
    kv = 2 * 80 * 8 * 128 * 2 * 4096  # 2 x layers x kv_heads x head_dim x 2 bytes x tokens
    assert p.feasible and p.cards == 1 and p.memory_bytes == pytest.approx(weights + kv, rel=1e-12)
    assert p.capacity_bytes == memory.usable_bytes(A100)  # the one capacity rule, not datasheet GB minus a reserve
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


def test_the_memory_shown_is_the_memory_of_the_layout_timed():
    # the case: 7B full fine-tuning on 8 A100s showed 15.2 GB per card for "tensor 2, data 4, ZeRO-1",
    # whose model state alone is 24.5 GB; now time and memory are one Megatron estimate of one layout
    p = today.plan(Workload("7B", "full-finetune", tokens=1e9, min_cards=8, max_cards=8), A100)
    est = p.estimate
    lay = est.layout
    assert p.memory_bytes == est.memory["total"] == p.memory_breakdown["total"]
    assert p.step_time_s == pytest.approx(est.time_per_iteration_s)
    assert f"tensor {lay.tensor}, pipeline {lay.pipeline}" in p.layout and f"data {lay.data}" in p.layout
    zero = dict(est.options)["zero_stage"]
    assert f"ZeRO-{zero}" in p.layout
    state = memory.state_bytes_per_param(zero, lay.data, "megatron").total * LLAMA7.params / (lay.tensor * lay.pipeline)
    assert p.memory_bytes > state  # the state of the layout timed is inside the memory shown
    assert p.memory_bytes <= p.capacity_bytes
    # every plan of every training task keeps the identity, LoRA and QLoRA through the adapter step
    for w in (Workload("7B", "full-finetune"), Workload("13B", "pretrain", min_cards=4), Workload("7B", "lora"),
              Workload("70B", "qlora"), Workload("3B", "full-finetune")):
        for g in (A100, A6000, A2000):
            q = today.plan(w, g)
            if not q.feasible:
                continue
            if w.task in ("lora", "qlora"):
                step = today.adapter_step(q.estimate, w.task, w.lora_rank)
                assert q.memory_bytes == step.memory_bytes and q.step_time_s == pytest.approx(step.time_s)
            else:
                assert q.memory_bytes == q.estimate.memory["total"]
                assert q.step_time_s == pytest.approx(q.estimate.time_per_iteration_s)
            assert q.memory_bytes <= q.capacity_bytes


def test_fewest_cards_that_fit_and_parameter_counts():
    p = today.plan(Workload("7B", "full-finetune", tokens=1e9), A100)
    one = memory.state_bytes_per_param(0, 1, "megatron").total * LLAMA7.params
    assert one > memory.usable_bytes(A100) and p.cards == 2
    q = today.plan(Workload("70B", "qlora", max_cards=1), A100)
    assert q.feasible and q.cards == 1 and q.memory_breakdown["frozen weights"] < 40e9
    bare = today.plan(Workload(7e9, "pretrain", mfu=0.4), A100)  # no shape: ZeRO-3 state arithmetic, no layout
    assert bare.feasible and bare.estimate is None and bare.layout == "" and any("no layout" in n for n in bare.notes)


def test_min_cards_adds_data_parallelism():
    two = today.plan(Workload("7B", "pretrain", tokens=1e9, mfu=0.4), A100)
    four = today.plan(Workload("7B", "pretrain", tokens=1e9, mfu=0.4, min_cards=4), A100)
    assert (two.cards, four.cards) == (2, 4) and four.memory_bytes < two.memory_bytes
    assert four.tokens_per_s == pytest.approx(2 * two.tokens_per_s)
    assert four.cost_per_run() == pytest.approx(two.cost_per_run())
    tp = today.plan(Workload("7B", "inference", min_cards=2), A100)
    assert tp.cards == 2 and tp.tokens_per_s > today.plan(Workload("7B", "inference"), A100).tokens_per_s
