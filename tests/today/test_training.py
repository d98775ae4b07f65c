"""ampere.today.training and adapters: the layout search, LoRA and QLoRA on the same estimate, fixed utilisation."""

import pytest

from ampere import results, specs, today, transformer
from ampere.today import Workload
from ampere.today.network import _network
from ampere.today.training import _layouts

A100, A6000, A2000, H100, H200 = today.GPUS


def test_fixed_utilisation_is_a_stated_override():
    w = Workload("3B", "lora", mfu=1.0)
    lora = today.plan(w, A100)
    n = transformer.preset("llama3.2-3b").params
    assert lora.step_time_s == pytest.approx(4 * n * 2048 / specs.get(A100).peak_flops("bf16"))
    assert today.plan(Workload("3B", "lora", mfu=0.5), A100).step_time_s == pytest.approx(2 * lora.step_time_s)
    assert "fixed MFU 100%" in w.describe() and lora.estimate is not None  # the layout still sizes the memory


def test_training_time_comes_from_the_megatron_layout_search():
    full = today.plan(Workload("3B", "full-finetune"), A100)
    lora = today.plan(Workload("3B", "lora"), A100)
    assert full.layout and 0.15 < full.mfu < 0.7
    assert full.step_time_s == pytest.approx(full.cards * 2048 / full.tokens_per_s)
    # LoRA skips the frozen weights' gradient GEMMs and their optimizer: faster than the full step, by more
    # than 4N/6N here because one card's optimizer step over 3B parameters disappears too
    assert lora.tokens_per_s > 1.2 * full.tokens_per_s
    with pytest.raises(ValueError, match="parameter count"):
        today.plan(Workload(7e9, "pretrain"), A100)
    # interleaved schedules are part of the search
    w = Workload("70B", "pretrain", seq_len=4096, global_batch=256, min_cards=64, max_cards=64)
    chosen = today.plan(w, A100)
    every = _layouts(w, specs.get(A100), 64, _network(specs.get(A100), 64))
    assert any(c.estimate.layout.interleave > 1 for c in every)
    assert chosen.step_time_s == pytest.approx(min(c.time_s for c in every if c.memory_bytes <= chosen.capacity_bytes))


def test_qlora_pays_the_published_dequantization_ratio():
    recs = {r.id: r for r in results.records(benchmark="finetune-speed")}
    q, lo = (recs[i].figure("training_runtime_minutes") for i in today.QLORA_REFERENCE)
    assert today.qlora_ratio() == pytest.approx(q / lo) and 1.2 < today.qlora_ratio() < 1.6
    lora, qlora = today.plan(Workload("7B", "lora"), A100), today.plan(Workload("7B", "qlora"), A100)
    assert lora.layout == qlora.layout
    assert qlora.step_time_s == pytest.approx(lora.step_time_s * today.qlora_ratio())
    assert qlora.memory_bytes < lora.memory_bytes
    with pytest.raises(ValueError, match="pair"):
        today.qlora_ratio(("litgpt-a10g-llama2-7b-lora", "litgpt-a10g-llama2-7b-qlora"))
    with pytest.raises(ValueError, match="zero_stage"):
        zero3 = next(c.estimate for c in _layouts(Workload("7B", "full-finetune"), specs.get(A100), 2,
                                                  _network(specs.get(A100), 2)) if c.zero == 3)
        today.adapter_step(zero3, "lora", 16)
    with pytest.raises(TypeError, match="Estimate"):
        today.adapter_step(None, "lora", 16)


def test_lora_speedup_against_the_lora_paper():
    rows = today.finetune_checks()
    first = rows[0]
    published, model = float(first["published"].split()[0]), float(first["calculator"].split()[0])
    assert published == pytest.approx(43.1 / 32.5, abs=0.01)
    assert abs(model / published - 1) < 0.10  # the model's LoRA speed-up within 10 % of the published one
    assert sum(r["calculator"] == "applied" for r in rows) == 1


def test_fp8_only_where_the_gpu_has_it():
    w8 = Workload("7B", "pretrain", precision="fp8", tokens=1e9)
    a = today.plan(w8, A100)
    assert not a.feasible and "fp8" in a.reason
    h8, h16 = today.plan(w8, H100), today.plan(Workload("7B", "pretrain", tokens=1e9), H100)
    assert h8.feasible and h8.tokens_per_s > h16.tokens_per_s
