"""Memory per GPU (ampere/megatron/gpu_memory.py; chapter: Megatron-LM, section Memory per GPU)."""

from __future__ import annotations

import pytest

from ampere import megatron as M


def test_activation_formulas_of_korthikanti():
    cfg = M.GPTConfig(layers=1, hidden=1024, heads=16, seq=2048)
    sbh = 2048 * 1024
    assert M.activation_bytes_per_layer(cfg) == pytest.approx(sbh * (34 + 5 * 16 * 2048 / 1024))
    assert M.activation_bytes_per_layer(cfg, tensor=4) == pytest.approx(sbh * (10 + 24 / 4 + 5 * 16 * 2048 / (1024 * 4)))
    assert M.activation_bytes_per_layer(cfg, tensor=4, sequence_parallel=True) == pytest.approx(
        sbh * (34 / 4 + 5 * 16 * 2048 / (1024 * 4)))
    assert M.activation_bytes_per_layer(cfg, recompute=True) == 2 * sbh


def test_memory_model_bytes_per_param_and_options():
    from ampere import memory

    cfg = M.table1_config("1T")
    base = M.memory_per_gpu(cfg, 3072, 3072, 8, 64)
    assert base["bytes_per_param"] == 18 and base["convention"] == "megatron"  # Megatron's estimator
    assert M.memory_per_gpu(cfg, 3072, 3072, 8, 64, convention="paper")["bytes_per_param"] == 16
    assert base["fits"] and base["capacity"] == pytest.approx(memory.usable_bytes("A100-SXM4-80GB"))
    forty = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, gpu="A100-SXM4-40GB")
    assert not forty["fits"] and forty["capacity"] == pytest.approx(memory.usable_bytes("A100-SXM4-40GB"))
    assert forty["physical_capacity"] == 40 * 2**30
    dist = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, distributed_optimizer=True)
    assert dist["optimizer"] == pytest.approx(base["optimizer"] / 6)
    assert dist["bytes_per_param"] == pytest.approx(6 + 12 / 6)
    norc = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, recompute=False)
    assert norc["activations"] > 5 * base["activations"]
    sp = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, recompute=False, sequence_parallel=True)
    assert sp["activations"] < norc["activations"]
    flash = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, recompute=False, flash_attention=True)
    per_layer = M.activation_bytes_per_layer(cfg, 8, 1, "none")  # s b h (10 + 24/8 + 5 a s / (8 h)) = 21 s b h
    assert M.activation_bytes_per_layer(cfg, 8, 1, "none", flash_attention=True) == pytest.approx(
        per_layer * (13 + 4 * 160 / (8 * 25600)) / 21)
    assert flash["activations"] < 0.7 * norc["activations"]
    gpipe = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, schedule="gpipe")
    assert gpipe["activations"] > 5 * base["activations"]  # all 512 microbatches instead of 64
    with pytest.raises(ValueError, match="schedule"):
        M.memory_per_gpu(cfg, 3072, 3072, 8, 64, schedule="pipedream")
    with pytest.raises(ValueError, match="convention"):
        M.memory_per_gpu(cfg, 3072, 3072, 8, 64, convention="calculon")
    assert set(base["stages"]) == {"first", "last"}


def test_deepspeed_zero3_counts_the_gathered_largest_module():
    from ampere import memory

    cfg = M.GPTConfig(32, 4096, 32)
    ds = M.memory_per_gpu(cfg, 64, 64, 1, 1, recompute="full", zero_stage=3, convention="deepspeed")
    assert ds["buffers"] == 4 * memory.largest_module_params(cfg) and ds["bytes_per_param"] == pytest.approx(18 / 64)
    off = M.memory_per_gpu(cfg, 64, 64, 1, 1, recompute="full", zero_stage=3, convention="deepspeed",
                           offload="optimizer")
    assert off["bytes_per_param"] == pytest.approx(2 / 64)
    with pytest.raises(ValueError, match="offload"):
        M.memory_per_gpu(cfg, 64, 64, 1, 1, zero_stage=1, convention="megatron", offload="optimizer")


def test_llama2_7b_flash_no_recompute_layouts_that_fit_are_reported():
    """The issue's case: FlashAttention and no recomputation on 8 A100-80GB. Every layout the search reports
    feasible fits (memory_per_gpu with flash <= usable bytes) and every one that fits is reported."""
    import dataclasses

    from ampere import memory
    from ampere.transformer import preset

    shape = dataclasses.replace(preset("llama2-7b"), seq=4096)
    every = M.search_layouts(shape, 8, 64, recompute="none", flash_attention=True, top=None,
                             include_infeasible=True)
    usable = memory.usable_bytes("A100-SXM4-80GB")
    fit = [e for e in every if e.memory["total"] <= usable]
    reported = M.search_layouts(shape, 8, 64, recompute="none", flash_attention=True, top=None)
    assert len(every) == 88 and len(fit) == len(reported) > 30
    assert {(e.layout.tensor, e.layout.pipeline, e.layout.microbatch, e.layout.interleave) for e in fit} == \
        {(e.layout.tensor, e.layout.pipeline, e.layout.microbatch, e.layout.interleave) for e in reported}
    unfused = M.search_layouts(shape, 8, 64, recompute="none", top=None)
    assert len(unfused) < len(reported) / 3  # the s x s scores are what did not fit
