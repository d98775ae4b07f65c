"""Tests of ampere.memory: weights, KV cache, ZeRO training state, Korthikanti activations, what fits."""

import math

import numpy as np
import pytest

from ampere import memory as mem
from ampere import results, specs
from ampere import transformer as tr


def test_weight_bytes_and_scales():
    assert mem.weight_bytes(7e9, "bf16") == 14e9
    assert mem.weight_bytes(7e9, "int4", mem.group_scale_overhead_bits(128)) == pytest.approx(7e9 * 4.125 / 8)
    assert mem.NF4_DOUBLE_QUANT_OVERHEAD_BITS == pytest.approx(0.127, abs=5e-4)  # dettmers2023qlora, section 3
    assert mem.group_scale_overhead_bits(64, 16, 16) == 0.5
    with pytest.raises(ValueError, match="fmt"):
        mem.weight_bytes(1e9, "fp12")
    with pytest.raises(ValueError, match="params"):
        mem.weight_bytes(-1, "bf16")
    with pytest.raises(TypeError, match="group_size"):
        mem.group_scale_overhead_bits(64.0)


def test_kv_cache_llama2_70b_gqa():
    # 80 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes = 327,680 bytes per token
    assert mem.kv_bytes_per_token("llama2-70b", "bf16") == 327_680
    assert mem.kv_cache_bytes("70B", 4096, 2, "fp8") == 327_680 / 2 * 4096 * 2
    assert mem.kv_cache_bytes(tr.preset("llama2-7b"), 0) == 0
    with pytest.raises(ValueError, match="batch"):
        mem.kv_cache_bytes("llama2-7b", 10, 0)
    with pytest.raises(TypeError, match="model"):
        mem.kv_cache_bytes(7e9, 10)


def test_zero_matches_paper_figure1():
    table = results.table("zero-figure1")
    assert table["source"] == "rajbhandari2020zero"
    for row in table["rows"]:
        per = mem.zero_bytes_per_param(row["stage"], row["data_parallel"])
        assert isinstance(per, mem.StateBytes)
        ours = per.total * row["params"] / 1e9
        assert abs(ours - row["per_gpu_gb"]) <= 0.05 + 1e-9, (row, ours)


def test_zero_stages_partition_the_right_parts():
    assert mem.zero_bytes_per_param(0, 8).to_dict() == {"weights": 2, "gradients": 2, "master_weights": 4,
                                                        "optimizer_state": 8}
    s1 = mem.zero_bytes_per_param(1, 4)
    assert (s1.weights, s1.gradients, s1.master_weights, s1.optimizer_state) == (2, 2, 1, 2)
    s3 = mem.zero_bytes_per_param(3, 16)
    assert s3.total == 1.0 and mem.BYTES_PER_PARAM_MIXED_ADAM == 16
    assert mem.zero_bytes_per_param(2, 2, "fp32_adam").total == 4 + 2 + 0 + 4
    with pytest.raises(ValueError, match="zero_stage"):
        mem.zero_bytes_per_param(4)
    with pytest.raises(ValueError, match="recipe"):
        mem.zero_bytes_per_param(1, 2, "sgd")
    with pytest.raises(ValueError, match="data_parallel"):
        mem.zero_bytes_per_param(1, 0)


S, B, H, A = 2048, 1, 12288, 96  # GPT-3 175B layer


@pytest.mark.parametrize("t,sp,rc,expected", [
    (1, False, "none", S * B * H * (34 + 5 * A * S / H)),
    (8, False, "none", S * B * H * (10 + 24 / 8 + 5 * A * S / (H * 8))),
    (8, True, "none", S * B * H * (34 / 8 + 5 * A * S / (H * 8))),
    (8, False, "selective", S * B * H * (10 + 24 / 8)),
    (8, True, "selective", S * B * H * 34 / 8),
    (8, False, "full", 2 * S * B * H),
    (8, True, "full", 2 * S * B * H / 8),
])
def test_activations_korthikanti_table2(t, sp, rc, expected):
    got = mem.activation_bytes_per_layer(S, B, H, A, tensor=t, sequence_parallel=sp, recompute=rc)
    assert got == pytest.approx(expected, rel=1e-12)


def test_activation_table2_consistency():
    # With t = 1 the tensor-parallel rows reduce to the no-parallelism row: 10 + 24 = 34.
    one = mem.activation_bytes_per_layer(S, 2, H, A)
    assert one == mem.activation_bytes_per_layer(S, 2, H, A, tensor=1, sequence_parallel=True)
    # Selective recomputation removes exactly the 5as/h attention term.
    sel = mem.activation_bytes_per_layer(S, 2, H, A, recompute="selective")
    assert one - sel == pytest.approx(S * 2 * H * 5 * A * S / H)


def test_activation_stack():
    m = tr.preset("gpt3-175b")
    full = mem.activation_bytes(m, 2048, 1, "full")
    layer_in = 2 * 2048 * m.hidden
    one_layer = mem.activation_bytes_per_layer(2048, 1, m.hidden, m.heads)
    assert full == pytest.approx(m.layers * layer_in + one_layer + 4 * 2048 * m.vocab)
    none = mem.activation_bytes(m, micro_batch=1, recompute="none")  # seq defaults to the shape's 2048
    assert none == pytest.approx(m.layers * one_layer + mem.logits_bytes(2048, 1, m.vocab))
    assert mem.activation_bytes(m, 2048, 1, "none", layers=12, tensor=8, sequence_parallel=True) == pytest.approx(
        12 * mem.activation_bytes_per_layer(2048, 1, m.hidden, m.heads, tensor=8, sequence_parallel=True)
        + 4 * 2048 * m.vocab / 8)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(seq=0), ValueError, "seq"),
    (dict(micro_batch=1.5), TypeError, "micro_batch"),
    (dict(tensor=0), ValueError, "tensor"),
    (dict(sequence_parallel="yes"), TypeError, "sequence_parallel"),
    (dict(recompute="partial"), ValueError, "recompute"),
    (dict(heads=np.float64(8)), TypeError, "heads"),
])
def test_activation_validation(kwargs, exc, match):
    args = dict(seq=128, micro_batch=1, hidden=64, heads=8)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        mem.activation_bytes_per_layer(args.pop("seq"), args.pop("micro_batch"), args.pop("hidden"),
                                       args.pop("heads"), **args)


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


# What CUDA exposes on an A100-SXM4-80GB (deviceQuery, ampere/data/tables/gpu_memory.json): the capacity
# every test below budgets against, not the physical 80 GiB.
A100_80_CUDA = 85_100_068_864


def test_fits_and_counts():
    a100 = specs.get("A100-SXM4-80GB")
    assert a100.memory_bytes == 80 * 2**30 and mem.cuda_visible_bytes(a100) == A100_80_CUDA
    assert mem.max_trainable_params(a100, reserve_bytes=0) == A100_80_CUDA / 16  # 5.32e9
    assert mem.max_trainable_params(a100) == pytest.approx(0.95 * A100_80_CUDA / 16)  # default 5 % reserve
    assert mem.runtime_reserve(a100) == pytest.approx(0.05 * A100_80_CUDA)
    assert mem.usable_bytes(a100) == pytest.approx(0.95 * A100_80_CUDA)
    assert mem.max_trainable_params(a100, reserve_bytes=0.04 * A100_80_CUDA) == pytest.approx(
        0.96 * A100_80_CUDA / 16)
    with pytest.raises(ValueError, match="fraction"):
        mem.runtime_reserve(a100, 1.5)
    usable = mem.usable_bytes(a100)
    assert mem.gpus_to_hold(2 * usable, a100) == 2 and mem.gpus_to_hold(2 * usable + 1e3, a100) == 3
    assert mem.gpus_to_hold(160e9, a100) == 2  # 160 / 80.85 = 1.98
    assert mem.gpus_to_hold(0, a100) == 1
    with pytest.raises(ValueError, match="reserve_bytes"):
        mem.gpus_to_hold(1e9, a100, reserve_bytes=A100_80_CUDA)
    with pytest.raises(ValueError, match="leaves no capacity"):
        mem.usable_bytes(a100, reserve_bytes=A100_80_CUDA + 1)
    # 70B in mixed-precision Adam: 1120 GB; ZeRO-3 over N A100-80GB needs ceil(1120 / 80.85) = 14
    assert mem.min_gpus_zero(70e9, a100, 3) == 14
    assert mem.min_gpus_zero(70e9, a100, 1) is None  # 4 bytes/param of weights+grads stay: 280 GB > 80 GB
    assert mem.min_gpus_zero(3e9, a100, 1) == math.ceil(3e9 * 12 / (usable - 3e9 * 4))
    b = mem.max_batch("llama2-7b", a100, context=4096)
    free = usable - 2 * 6_738_415_616
    assert b == math.floor(free / (2 * 32 * 4096 * 2 * 4096))
    assert mem.max_batch("llama2-70b", "A100-SXM4-40GB", context=4096) == 0
    with pytest.raises(ValueError, match="context"):
        mem.max_batch("llama2-7b", a100, context=0)
    with pytest.raises(ValueError, match="stage"):
        mem.min_gpus_zero(1e9, a100, 7)


def test_estimate_table_and_dict():
    est = mem.model_memory(1e9, mode="training")
    rows = est.table()
    assert rows[-1] == ("total", 16.0)
    d = est.to_dict()
    assert d["total_bytes"] == 16e9 and d["mode"] == "training"
    with pytest.raises(ValueError, match="unit"):
        est.table(0)


def test_no_torch_import():
    import subprocess
    import sys

    code = "import sys, ampere.memory; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ----------------------------------------------------------------------------------------------------
# Hand-computed cases of the HBM chapter (moved here with the arithmetic)
# ----------------------------------------------------------------------------------------------------

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


def test_gpus_to_hold_and_limits_by_hand():
    # usable = 0.95 x CUDA total: A100 80GB 0.95 x 85.10e9 = 80.85e9; A100 40GB 0.95 x 42.30e9 = 40.18e9
    assert mem.gpus_to_hold(350e9, "A100-SXM4-80GB") == 5  # 350 / 80.85 = 4.33 -> 5
    assert mem.gpus_to_hold(350e9, "A100-SXM4-40GB") == 9  # 350 / 40.18 = 8.71 -> 9
    with pytest.raises(ValueError, match="leaves no capacity"):
        mem.gpus_to_hold(1e9, "T4", reserve_bytes=16e9)  # CUDA exposes 15.66e9 bytes of the T4's 16 GiB
    # 70B int8 (68.98 GB) in 80.85 GB: 11.87 GB left / (4096 x 327,680 bytes = 1.342 GB per sequence) -> 8
    assert mem.max_batch("70B", "A100-SXM4-80GB", context=4096, weights="int8") == 8
    a2000 = specs.get("RTX-A2000-12GB")  # no published CUDA total: the catalogue's conservative estimate
    assert a2000.cuda_memory_estimated and a2000.cuda_visible_bytes < a2000.memory_bytes == 12 * 2**30
    assert mem.max_trainable_params(a2000, reserve_bytes=0) == a2000.cuda_visible_bytes / 16
    # ZeRO-3: 175e9 x 16 bytes = 2.8 TB over 80.85 GB -> 34.6 -> 35; stage 1 keeps 700 GB whole: never
    assert mem.min_gpus_zero(175e9, "A100-SXM4-80GB", 3) == 35
    assert mem.min_gpus_zero(175e9, "A100-SXM4-80GB", 1) is None
    # 7.5B, stage 1, A100 40GB: 30 GB fixed, 90 GB shared -> 90 / (40.18 - 30) = 8.8 -> 9 GPUs
    assert mem.min_gpus_zero(7.5e9, "A100-SXM4-40GB", 1) == 9


# ----------------------------------------------------------------------------------------------------
# One capacity rule: CUDA-visible bytes minus the runtime reserve, in every "fits" function
# ----------------------------------------------------------------------------------------------------

RULE_GPUS = ["A100-SXM4-80GB", "A100-SXM4-40GB", "H100-SXM5-80GB", "H200-SXM-141GB", "T4", "L4", "V100-SXM2-32GB"]


def _answers_at_the_boundary(gpu, usable, reserve_bytes=None):
    """Every 'fits' function of ampere.memory asked a question whose answer flips at ``usable`` bytes."""
    kw = {} if reserve_bytes is None else {"reserve_bytes": reserve_bytes}
    just = mem.MemoryEstimate("inference", 1.0, {"weights": usable})
    over = mem.MemoryEstimate("inference", 1.0, {"weights": usable * (1 + 1e-9)})
    shape = tr.preset("llama2-7b")
    per_seq = mem.kv_cache_bytes(shape, 4096)
    weights = mem.weight_bytes(shape.params, "bf16")
    return {
        "headroom": just.headroom_bytes(gpu, **kw),
        "fits": (just.fits(gpu, **kw), over.fits(gpu, **kw)),
        "gpus_needed": (just.gpus_needed(gpu, **kw), over.gpus_needed(gpu, **kw)),
        "gpus_to_hold": (mem.gpus_to_hold(2 * usable, gpu, **kw), mem.gpus_to_hold(2 * usable * (1 + 1e-9), gpu, **kw)),
        "max_trainable_params": mem.max_trainable_params(gpu, **kw) * 16,
        "min_gpus_zero": mem.min_gpus_zero(3 * usable / 16, gpu, 3, **kw),
        "max_batch": mem.max_batch(shape, gpu, context=4096, **kw),
        "max_batch_expected": max(0, math.floor((usable - weights) / per_seq)),
    }


def _assert_one_rule(answers, usable):
    assert answers["headroom"] == pytest.approx(0, abs=1e-3 * usable)
    assert answers["fits"] == (True, False)
    assert answers["gpus_needed"] == (1, 2)
    assert answers["gpus_to_hold"] == (2, 3)
    assert answers["max_trainable_params"] == pytest.approx(usable, rel=1e-12)
    assert answers["min_gpus_zero"] == 3
    assert answers["max_batch"] == answers["max_batch_expected"]


@pytest.mark.parametrize("gpu", RULE_GPUS)
def test_every_fits_function_uses_the_one_reserve_rule(gpu, monkeypatch):
    visible = mem.cuda_visible_bytes(gpu)
    assert visible == specs.get(gpu).cuda_visible_bytes
    # the default: RESERVE_FRACTION of what CUDA exposes
    usable = mem.usable_bytes(gpu)
    assert usable == pytest.approx(visible * (1 - mem.RESERVE_FRACTION))
    _assert_one_rule(_answers_at_the_boundary(gpu, usable), usable)
    # an explicit reserve is taken from the same CUDA-visible total by every function
    reserve = 0.25 * visible
    _assert_one_rule(_answers_at_the_boundary(gpu, visible - reserve, reserve), visible - reserve)
    # the default is read when called: changing RESERVE_FRACTION moves every function together
    monkeypatch.setattr(mem, "RESERVE_FRACTION", 0.2)
    usable = mem.usable_bytes(gpu)
    assert usable == pytest.approx(0.8 * visible) and mem.runtime_reserve(gpu) == pytest.approx(0.2 * visible)
    _assert_one_rule(_answers_at_the_boundary(gpu, usable), usable)


@pytest.mark.parametrize("gpu", specs.names())
def test_usable_below_cuda_visible_below_physical(gpu):
    spec = specs.get(gpu)
    usable, visible = mem.usable_bytes(spec), mem.cuda_visible_bytes(spec)
    assert 0 < usable < visible < spec.memory_bytes
    if spec.memory_stacks is not None and spec.cuda_memory_bytes is not None:  # HBM cards, all figures known
        assert visible == spec.cuda_memory_bytes
        assert visible / spec.memory_bytes > 0.98  # the driver keeps well under 2 % of an HBM card


def test_reserve_arguments_are_checked():
    with pytest.raises(ValueError, match="reserve_bytes"):
        mem.usable_bytes("A100-SXM4-80GB", reserve_bytes=-1)
    with pytest.raises(TypeError, match="reserve_bytes"):
        mem.model_memory(7e9).fits("A100-SXM4-80GB", reserve_bytes="2e9")
    with pytest.raises(ValueError, match="fraction"):
        mem.runtime_reserve("A100-SXM4-80GB", -0.1)
    with pytest.raises(ValueError, match="gpu"):
        mem.usable_bytes("A100-SXM4-160GB")


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


# --- conventions: the paper's, Megatron-LM's and DeepSpeed's count of the training state -----------------


def test_memory_conventions_as_their_sources_count():
    from ampere import memory

    assert set(memory.CONVENTIONS) == {"paper", "megatron", "deepspeed"}
    for n in (1, 8, 512):
        assert memory.state_bytes_per_param(0, n, "paper").total == 16
        assert memory.state_bytes_per_param(2, n, "paper").total == pytest.approx(2 + 14 / n)
        assert memory.state_bytes_per_param(0, n, "megatron").total == 18
        assert memory.state_bytes_per_param(1, n, "megatron").total == pytest.approx(6 + 12 / n)
        assert memory.state_bytes_per_param(2, n, "deepspeed").total == pytest.approx(2 + 18 / n)
        assert memory.state_bytes_per_param(3, n, "deepspeed").total == pytest.approx(18 / n)
        assert memory.state_bytes_per_param(2, n, "deepspeed", "optimizer").total == 2
        assert memory.zero_bytes_per_param(2, n).total == memory.state_bytes_per_param(2, n, "paper").total
    ds = memory.memory_convention("deepspeed")
    assert ds.stated(2) and ds.stated(3, "optimizer+params") and not ds.stated(1)
    assert memory.memory_convention("megatron").stated(1) and not memory.memory_convention("megatron").stated(3)
    shape = memory.shape_of("llama2-70b")
    assert memory.largest_module_params(shape) == 32000 * 8192  # the word embedding
    assert memory.gathered_layer_bytes(3, 1e6, "deepspeed") == 4e6 and memory.gathered_layer_bytes(3, 1e6) == 0
    with pytest.raises(ValueError, match="convention must be one of"):
        memory.state_bytes_per_param(1, 8, "colossal")
    with pytest.raises(ValueError, match="offload"):
        memory.state_bytes_per_param(1, 8, "deepspeed", "optimizer")


def test_fewest_cards_for_zero3_as_the_paper_and_deepspeed_count():
    from ampere import memory

    for name, paper, deepspeed in (("llama2-70b", 14, 16), ("gpt3-175b", 35, 41)):
        shape = memory.shape_of(name)
        assert memory.min_gpus_zero(shape.params, "A100-SXM4-80GB", 3) == paper
        assert memory.min_gpus_zero(shape.params, "A100-SXM4-80GB", 3, convention="deepspeed",
                                    largest_layer_params=memory.largest_module_params(shape)) == deepspeed
    est = memory.model_memory("llama2-7b", mode="training", zero_stage=3, data_parallel=8, convention="deepspeed")
    assert est.breakdown["gathered_layer"] == 4 * 32000 * 4096


def test_activation_terms_follow_the_layer():
    from ampere import memory

    gpt = memory.layer_activation_terms(4096, 32)
    assert gpt["replicated"] + gpt["split"] == 34  # Korthikanti et al.'s constant
    swiglu = memory.layer_activation_terms(4096, 32, ffn=11008, glu=True)
    assert swiglu["split"] == pytest.approx(4 + 4 + 6 * 11008 / 4096)
    gqa = memory.layer_activation_terms(8192, 64, ffn=28672, kv_heads=8, glu=True)
    assert gqa["split"] == pytest.approx(4 + 4 * 8 / 64 + 6 * 28672 / 8192)
    s, b, h, a = 4096, 1, 4096, 32
    flash = memory.activation_bytes_per_layer(s, b, h, a, flash_attention=True)
    assert flash == pytest.approx(s * b * h * (34 + 4 * a / h))
    assert memory.activation_bytes_per_layer(s, b, h, a) == pytest.approx(s * b * h * (34 + 5 * a * s / h))
    with pytest.raises(ValueError, match="kv_heads"):
        memory.layer_activation_terms(4096, 32, kv_heads=5)
