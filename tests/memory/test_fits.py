"""What one GPU holds and what fits (ampere/memory/fits.py; chapter: HBM, "What fits", "Training a model",
"Fine-tuning")."""

import numpy as np
import pytest

from ampere import memory as mem
from ampere import transformer as tr


def test_model_memory_inference_and_training():
    inf = mem.model_memory("llama2-70b", weights="int4", weight_overhead_bits=0.125, context=4096, batch=4)
    assert inf.breakdown["weights"] == pytest.approx(68_976_648_192 * 4.125 / 8)
    assert inf.breakdown["kv_cache"] == 327_680 * 4096 * 4
    assert not inf.fits("A100-SXM4-40GB") and inf.fits("H200-SXM-141GB")
    tr_full = mem.model_memory(7e9, mode="training")
    assert tr_full.total_bytes == 112e9 and list(tr_full.breakdown) == ["weights", "gradients", "master_weights",
                                                                        "optimizer_state"]
    z3 = mem.model_memory(7e9, mode="training", zero_stage=3, data_parallel=8)
    assert z3.total_bytes == 14e9
    act = mem.model_memory("7B", mode="training", finetune="lora", seq_len=2048, micro_batch=2, recompute="full")
    assert act.breakdown["activations"] == mem.activation_bytes("llama2-7b", 2048, 2, "full")
    assert act.breakdown["frozen_weights"] == 2 * 6_738_415_616


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(mode="serve"), ValueError, "mode"),
    (dict(weights="fp12"), ValueError, "weights"),
    (dict(zero_stage=5), ValueError, "zero_stage"),
    (dict(context=-1), ValueError, "context"),
    (dict(finetune="prefix"), ValueError, "finetune"),
    (dict(batch=True), TypeError, "batch"),
])
def test_model_memory_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        mem.model_memory("llama2-7b", **kwargs)


def test_shape_needed():
    with pytest.raises(ValueError, match="shape"):
        mem.model_memory(7e9, context=128)
    with pytest.raises(ValueError, match="shape"):
        mem.model_memory(7e9, mode="training", finetune="qlora")


def test_finetune_memory_is_the_shared_recipe():
    q = mem.finetune_memory("llama2-70b", "qlora")
    shape = tr.preset("llama2-70b")
    lora = shape.lora_params(mem.DEFAULT_LORA_RANK)
    assert q.breakdown["frozen_weights"] == pytest.approx(shape.params * (4 + mem.NF4_DOUBLE_QUANT_OVERHEAD_BITS) / 8)
    assert q.breakdown["adapter_state"] == 16 * lora
    assert q.breakdown["activations"] == mem.activation_bytes(shape, mem.DEFAULT_FINETUNE_SEQ, 1, "full")
    assert q == mem.model_memory(shape, mode="training", finetune="qlora", lora_rank=mem.DEFAULT_LORA_RANK,
                                 seq_len=mem.DEFAULT_FINETUNE_SEQ, recompute="full")
    rank64 = mem.finetune_memory("70B", "qlora", lora_rank=64)
    assert rank64.total_bytes - q.total_bytes == pytest.approx(16 * (shape.lora_params(64) - lora))
    assert "activations" not in mem.finetune_memory("70B", seq_len=0).breakdown
    with pytest.raises(ValueError, match="method"):
        mem.finetune_memory("70B", "adapters")


def test_estimate_table_and_dict():
    est = mem.model_memory(1e9, mode="training")
    rows = est.table()
    assert rows[-1] == ("total", 16.0)
    d = est.to_dict()
    assert d["total_bytes"] == 16e9 and d["mode"] == "training"
    with pytest.raises(ValueError, match="unit"):
        est.table(0)


def test_seed_use_cases_by_hand():
    # seed001's 2026 use cases on one A100 80GB (85.10e9 bytes exposed by CUDA), with a 2 GB reserve.
    reserve = 2e9
    p30, p70, p13 = (tr.preset(n).params for n in ("llama-33b", "llama2-70b", "llama2-13b"))
    assert (p30, p70, p13) == (32_528_943_616, 68_976_648_192, 13_015_864_320)
    # 30B in INT8 + one 4096-token BF16 sequence: 1 byte/weight + 4096 x (2 x 60 layers x 6656 x 2 bytes)
    est = mem.model_memory("30B", weights="int8", context=4096)
    assert est.total_bytes == p30 + 4096 * 2 * 60 * 6656 * 2  # 39.07 GB
    assert est.fits("A100-SXM4-80GB", reserve)
    # 70B in INT4 with one fp16 scale per 128 weights (4.125 bits) + one sequence (327,680 bytes per token)
    est = mem.model_memory("70B", weights="int4", weight_overhead_bits=16 / 128, context=4096)
    assert est.total_bytes == pytest.approx(p70 * 4.125 / 8 + 4096 * 327_680)  # 36.91 GB
    # QLoRA 70B, rank 64 on every linear layer: per layer 64 x (q 2x8192 + k, v 8192+1024 + o 2x8192
    # + gate, up, down 3 x (8192 + 28672)) = 64 x 161,792; 80 layers -> 828,375,040 adapter parameters
    q = mem.model_memory("70B", mode="training", finetune="qlora", lora_rank=64)
    assert tr.preset("llama2-70b").lora_params(64) == 80 * 64 * 161_792 == 828_375_040
    assert q.total_bytes == pytest.approx(p70 * (4 + mem.NF4_DOUBLE_QUANT_OVERHEAD_BITS) / 8 + 828_375_040 * 16)
    # the shared recipe (rank 16, 2048 tokens, full recomputation): 35.58 + 3.31 + 4.86 = 43.8 GB
    shared = mem.finetune_memory("70B")
    assert round(shared.total_bytes / 1e9, 1) == 43.8 and shared.fits("A100-SXM4-80GB", mem.runtime_reserve(
        "A100-SXM4-80GB"))
    # full BF16 fine-tuning of 13B with Adam: 16 bytes per parameter = 208.3 GB, 2.6x the card
    full = mem.model_memory("13B", mode="training")
    assert full.total_bytes == 16 * p13 and not full.fits("A100-SXM4-80GB")
    # 0.95 x 85.10e9 = 80.85e9 bytes / 16 = 5.05e9 parameters (the old decimal-capacity rule said 4.75e9)
    assert round(mem.max_trainable_params("A100-SXM4-80GB") / 1e9, 2) == 5.05


def test_lora_parameters_by_hand():
    m = tr.preset("llama2-7b")
    # the classic LoRA setting, rank 8 on q and v: 32 layers x 2 matrices x 8 x (4096 + 4096) = 4,194,304
    assert m.lora_params(8, ["q", "v"]) == 4_194_304
    lora = mem.model_memory("7B", mode="training", finetune="lora", lora_rank=8)
    assert lora.breakdown["frozen_weights"] == 2 * m.params
    assert lora.breakdown["adapter_state"] == 16 * m.lora_params(8)


def test_numpy_numbers_and_messages():
    assert mem.weight_bytes(np.int64(10), "int8") == 10
    assert mem.kv_cache_bytes("7B", np.int64(2), np.int32(1)) == 2 * 524_288  # 2 x 32 x 4096 x 2 bytes per token
    assert mem.model_memory(np.float64(7e9)).total_bytes == 14e9
    with pytest.raises(ValueError, match=r"weights must be one of 'fp32', 'fp16', 'bf16'.*got 'int3'"):
        mem.model_memory(7e9, weights="int3")
    with pytest.raises(ValueError, match=r"params must be > 0, got -5"):
        mem.model_memory(-5)


def test_fewest_cards_for_zero3_as_the_paper_and_deepspeed_count():
    from ampere import memory

    for name, paper, deepspeed in (("llama2-70b", 14, 16), ("gpt3-175b", 35, 41)):
        shape = memory.shape_of(name)
        assert memory.min_gpus_zero(shape.params, "A100-SXM4-80GB", 3) == paper
        assert memory.min_gpus_zero(shape.params, "A100-SXM4-80GB", 3, convention="deepspeed",
                                    largest_layer_params=memory.largest_module_params(shape)) == deepspeed
    est = memory.model_memory("llama2-7b", mode="training", zero_stage=3, data_parallel=8, convention="deepspeed")
    assert est.breakdown["gathered_layer"] == 4 * 32000 * 4096
