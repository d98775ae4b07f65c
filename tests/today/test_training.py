"""ampere.today.training: training speed from the Megatron model or a stated fixed utilisation."""

import pytest

from ampere import specs, today, transformer
from ampere.today import Workload

A100, A6000, A2000, H100, H200 = today.GPUS


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
