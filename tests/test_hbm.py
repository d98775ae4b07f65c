"""Unit tests of ampere.hbm (chapter: HBM and the memory hierarchy).

Hand-computed cases first (every expected number is worked out in a comment), then the published
validation targets, then the measuring code on the CPU with tiny sizes.
"""

from __future__ import annotations

import json
import math
import sys

import pytest

from ampere import hbm, results, specs

GB = 1e9


# ----------------------------------------------------------------------------------------------------
# Where the bandwidth comes from
# ----------------------------------------------------------------------------------------------------

def test_bandwidth_derivation_by_hand():
    rows = {r["gpu"]: r for r in hbm.bandwidth_table()}
    # A100 40GB: 5120 bits x 2.43 Gb/s / 8 = 1555.2 GB/s; 80GB SXM: 5120 x 3.186 / 8 = 2039.04 GB/s
    assert rows["A100-SXM4-40GB"]["derived_bytes_per_s"] == pytest.approx(1555.2e9)
    assert rows["A100-SXM4-80GB"]["derived_bytes_per_s"] == pytest.approx(2039.04e9)
    # A6000: 384 x 16 / 8 = 768 GB/s exactly
    assert rows["RTX-A6000"]["derived_bytes_per_s"] == pytest.approx(768e9)
    # every HBM stack is a 1024-bit interface; GDDR has no stacks
    assert {r["bits_per_stack"] for r in rows.values() if r["stacks"]} == {1024}
    assert rows["T4"]["bits_per_stack"] is None
    assert "inferred" in rows["H200-SXM-141GB"]["note"] and rows["A100-SXM4-80GB"]["note"] == ""


def test_hierarchy_table_a100():
    rows = {r["level"]: r for r in hbm.hierarchy_table("A100-SXM4-80GB")}
    assert rows["registers"]["capacity_bytes"] == 256 * 1024 * 108  # 27 MiB of registers
    assert rows["L2"]["capacity_bytes"] == 40 * 2**20
    assert rows["L2"]["bytes_per_s"] == pytest.approx(5120 * 1.41e9)  # 7.22 TB/s
    assert rows["DRAM (HBM2e)"]["bytes_per_s"] == 2039e9


# ----------------------------------------------------------------------------------------------------
# Capacity arithmetic
# ----------------------------------------------------------------------------------------------------

def test_weight_bytes_and_overheads():
    assert hbm.weight_bytes(175e9, "fp16") == 350e9  # GPT-3 in fp16: 2 bytes x 175e9
    assert hbm.group_scale_overhead_bits(128) == 0.125  # one fp16 scale per 128 weights
    assert hbm.group_scale_overhead_bits(64, 16, 16) == 0.5
    assert hbm.weight_bytes(70e9, "int4", 0.125) == pytest.approx(70e9 * 4.125 / 8)
    # QLoRA double quantization: 8/64 + 32/(64*256) = 0.126953125 bits, "0.127" in the paper
    assert hbm.NF4_DOUBLE_QUANT_OVERHEAD_BITS == pytest.approx(0.126953125)
    assert hbm.NF4_SINGLE_QUANT_OVERHEAD_BITS == 0.5


@pytest.mark.parametrize("call", [
    lambda: hbm.weight_bytes(-1.0, "bf16"),
    lambda: hbm.weight_bytes(0, "bf16"),
    lambda: hbm.weight_bytes(float("nan"), "bf16"),
    lambda: hbm.weight_bytes(True, "bf16"),
    lambda: hbm.weight_bytes(7e9, "int3"),
    lambda: hbm.weight_bytes(7e9, "bf16", overhead_bits=-0.1),
    lambda: hbm.group_scale_overhead_bits(0),
    lambda: hbm.model_memory(7e9, weights="float16"),
    lambda: hbm.model_memory(7e9, kv_cache="e4m3"),
    lambda: hbm.model_memory(-7e9),
    lambda: hbm.model_memory(7e9, mode="serve"),
    lambda: hbm.model_memory("llama2-7b", context=-1),
    lambda: hbm.model_memory("llama2-7b", context=1.5),
    lambda: hbm.model_memory("llama2-7b", batch=0),
    lambda: hbm.model_memory(7e9, mode="training", zero_stage=4),
    lambda: hbm.model_memory(7e9, mode="training", data_parallel=0),
    lambda: hbm.model_memory(7e9, mode="training", finetune="dora"),
    lambda: hbm.model_memory("7B", mode="training", seq_len=128, recompute="some"),
    lambda: hbm.model_memory(7e9, mode="training", recipe="adafactor"),
    lambda: hbm.model_memory("mistral-7b"),
])
def test_nonsense_is_rejected(call):
    with pytest.raises(ValueError):
        call()


def test_numpy_numbers_are_accepted():
    import numpy as np

    assert hbm.weight_bytes(np.int64(10), "int8") == 10
    assert hbm.kv_cache_bytes("7B", np.int64(2), np.int32(1)) == 2 * 524_288
    assert hbm.model_memory(np.float64(7e9)).total_bytes == 14e9


def test_error_messages_name_field_and_allowed_values():
    with pytest.raises(ValueError, match=r"weights='int3'.*allowed: fp32, fp16, bf16"):
        hbm.model_memory(7e9, weights="int3")
    with pytest.raises(ValueError, match=r"params=-5"):
        hbm.model_memory(-5)
    with pytest.raises(ValueError, match="context > 0 needs the model's shape"):
        hbm.model_memory(7e9, context=128)
    with pytest.raises(ValueError, match="needs the model's shape"):
        hbm.model_memory(7e9, mode="training", finetune="lora")


def test_training_recipes_bytes_per_param():
    assert hbm.BYTES_PER_PARAM_MIXED_ADAM == 16  # 2 + 2 + 4 + 4 + 4
    assert hbm.MIXED_ADAM.sharded_state_bytes == 12  # the ZeRO paper's K
    assert hbm.FP32_ADAM.bytes_per_param == 16  # 4 + 4 + 4 + 4


def test_zero_stages_by_hand():
    # stage 2 over 4 GPUs: weights 2 + gradients 2/4 + master 4/4 + Adam 8/4 = 5.5 bytes per parameter
    assert sum(hbm.zero_bytes_per_param(2, 4).values()) == 5.5
    assert sum(hbm.zero_bytes_per_param(0, 64).values()) == 16
    assert sum(hbm.zero_bytes_per_param(3, 16).values()) == 1.0
    with pytest.raises(ValueError, match="zero_stage=5"):
        hbm.zero_bytes_per_param(5, 2)


def test_zero_paper_figure1_reproduced():
    z = hbm.ZERO_PAPER_FIGURE1
    for stage, gb in z["per_gpu_gb"].items():
        est = hbm.model_memory(z["params"], mode="training", data_parallel=z["data_parallel"], zero_stage=stage)
        assert est.total_bytes / GB == pytest.approx(gb, abs=0.05)


def test_llama2_7b_parameter_count_by_hand():
    m = hbm.MODELS["llama2-7b"]
    emb = 2 * 32000 * 4096  # input embedding + untied output projection
    layer = 4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096  # q,k,v,o + SwiGLU + two RMSNorms
    assert m.params == emb + 32 * layer + 4096 == 6_738_415_616
    assert m.head_dim == 128


def test_gqa_kv_cache_by_hand():
    m = hbm.MODELS["llama2-70b"]
    assert m.kv_dim == 8 * 128
    assert m.kv_bytes_per_token("bf16") == 2 * 80 * 8 * 128 * 2  # 327,680 bytes per token
    assert hbm.kv_cache_bytes("70B", 4096, 2, "bf16") == 2 * 4096 * 327_680
    assert hbm.kv_cache_bytes("7B", 0) == 0
    # multi-head 7B: 2 x 32 layers x 4096 x 2 bytes = 524,288 bytes per token, 8x the 70B's per layer-width
    assert hbm.MODELS["llama2-7b"].kv_bytes_per_token() == 524_288


def test_lora_parameters_by_hand():
    m = hbm.MODELS["llama2-7b"]
    # the classic LoRA setting, rank 8 on q and v: 32 layers x 2 matrices x 8 x (4096 + 4096) = 4,194,304
    assert m.lora_params(8, ["q", "v"]) == 4_194_304
    # every linear layer: q,k,v,o 4 x 8 x 8192 + gate, up, down 3 x 8 x (4096 + 11008), times 32 layers
    assert m.lora_params(8) == 32 * (4 * 8 * 8192 + 3 * 8 * (4096 + 11008))
    with pytest.raises(ValueError, match="not linear layers"):
        m.lora_params(8, ["qkv"])


def test_shape_validation():
    with pytest.raises(ValueError, match="multiple of heads"):
        hbm.TransformerShape("bad", 2, 100, 3, 3, 400, 1000, 128)
    with pytest.raises(ValueError, match="multiple of kv_heads"):
        hbm.TransformerShape("bad", 2, 96, 6, 4, 400, 1000, 128)
    with pytest.raises(ValueError, match="layers=0"):
        hbm.TransformerShape("bad", 0, 96, 6, 6, 400, 1000, 128)


def test_inference_estimates_and_fit():
    # 30B class in INT8: one byte per parameter, no cache
    est = hbm.model_memory("30B", weights="int8")
    assert est.breakdown["weights"] == hbm.MODELS["llama-33b"].params
    assert est.fits("A100-SXM4-80GB") and est.fits("A100-SXM4-40GB")  # 32.5 GB
    assert not hbm.model_memory("70B", weights="int8").fits("A100-SXM4-40GB")  # 69.0 GB
    # 70B in fp16 (137.95 GB) needs two 80 GB GPUs just for the weights
    big = hbm.model_memory("70B", weights="fp16")
    assert not big.fits("A100-SXM4-80GB") and big.gpus_needed("A100-SXM4-80GB") == 2
    # headroom is capacity - reserve - total
    assert est.headroom_bytes("A100-SXM4-80GB", 2e9) == pytest.approx(80e9 - 2e9 - est.total_bytes)
    rows = dict(est.table())
    assert rows["total"] == pytest.approx(est.total_bytes / GB)


def test_training_estimates():
    full = hbm.model_memory(13e9, mode="training")
    assert full.total_bytes == 13e9 * 16  # 208 GB before activations
    assert not full.fits("A100-SXM4-80GB")
    sharded = hbm.model_memory(13e9, mode="training", zero_stage=3, data_parallel=8)
    assert sharded.total_bytes == pytest.approx(26e9) and sharded.fits("A100-SXM4-80GB")
    assert any("activations not included" in a for a in full.assumptions)
    q = hbm.model_memory("70B", mode="training", finetune="qlora", lora_rank=64)
    m = hbm.MODELS["llama2-70b"]
    assert q.breakdown["frozen_weights"] == pytest.approx(m.params * (4 + hbm.NF4_DOUBLE_QUANT_OVERHEAD_BITS) / 8)
    assert q.breakdown["adapter_state"] == m.lora_params(64) * 16
    lora = hbm.model_memory("7B", mode="training", finetune="lora", lora_rank=8)
    assert lora.breakdown["frozen_weights"] == m.params * 0 + hbm.MODELS["llama2-7b"].params * 2
    d = q.to_dict()
    assert d["total_bytes"] == q.total_bytes and json.dumps(d)


def test_activation_memory():
    m = hbm.TransformerShape("tiny", layers=2, hidden=64, heads=4, kv_heads=4, ffn_hidden=256, vocab=100,
                             max_context=32)
    s, b = 32, 2
    per_layer = s * b * 64 * (34 + 5 * 4 * s / 64)  # korthikanti2022reducing, no recomputation
    logits = 4 * s * b * 100
    assert hbm.activation_bytes(m, s, b, "none") == pytest.approx(2 * per_layer + logits)
    assert hbm.activation_bytes(m, s, b, "selective") == pytest.approx(2 * 34 * s * b * 64 + logits)
    assert hbm.activation_bytes(m, s, b, "full") == pytest.approx(2 * 2 * s * b * 64 + per_layer + logits)
    est = hbm.model_memory(m, mode="training", seq_len=s, micro_batch=b, recompute="selective")
    assert est.breakdown["activations"] == hbm.activation_bytes(m, s, b, "selective")


def test_seed_use_cases_by_hand():
    # seed001's 2026 use cases on one A100 80GB (80e9 bytes), with the chapter's 2 GB runtime reserve.
    reserve = 2e9
    p30, p70, p13 = (hbm.MODELS[n].params for n in ("llama-33b", "llama2-70b", "llama2-13b"))
    assert (p30, p70, p13) == (32_528_943_616, 68_976_648_192, 13_015_864_320)
    # 30B in INT8 + one 4096-token BF16 sequence: 1 byte/weight + 4096 x (2 x 60 layers x 6656 x 2 bytes)
    est = hbm.model_memory("30B", weights="int8", context=4096)
    assert est.total_bytes == p30 + 4096 * 2 * 60 * 6656 * 2  # 39.07 GB
    assert est.fits("A100-SXM4-80GB", reserve)
    # 70B in INT4 with one fp16 scale per 128 weights (4.125 bits) + one sequence (327,680 bytes per token)
    est = hbm.model_memory("70B", weights="int4", weight_overhead_bits=16 / 128, context=4096)
    assert est.total_bytes == pytest.approx(p70 * 4.125 / 8 + 4096 * 327_680)  # 36.91 GB
    assert est.fits("A100-SXM4-80GB", reserve)
    # QLoRA 70B, rank 64 on every linear layer: per layer 64 x (q 2x8192 + k, v 8192+1024 + o 2x8192
    # + gate, up, down 3 x (8192 + 28672)) = 64 x 161,792; 80 layers -> 828,375,040 adapter parameters
    q = hbm.model_memory("70B", mode="training", finetune="qlora", lora_rank=64)
    assert hbm.MODELS["llama2-70b"].lora_params(64) == 80 * 64 * 161_792 == 828_375_040
    assert q.total_bytes == pytest.approx(p70 * (4 + hbm.NF4_DOUBLE_QUANT_OVERHEAD_BITS) / 8 + 828_375_040 * 16)
    assert 48e9 < q.total_bytes < 49e9 and q.fits("A100-SXM4-80GB", reserve)  # 48.84 GB before activations
    # full BF16 fine-tuning of 13B with Adam: 16 bytes per parameter = 208.3 GB, 2.6x the card
    full = hbm.model_memory("13B", mode="training")
    assert full.total_bytes == 16 * p13 and not full.fits("A100-SXM4-80GB")
    assert hbm.max_trainable_params("A100-SXM4-80GB", reserve_bytes=reserve) == pytest.approx(78e9 / 16)


def test_gpus_to_hold_and_limits():
    assert hbm.gpus_to_hold(350e9, "A100-SXM4-80GB") == 5  # 350 / 80 = 4.375 -> 5
    assert hbm.gpus_to_hold(350e9, "A100-SXM4-40GB") == 9  # 8.75 -> 9
    assert hbm.gpus_to_hold(160e9, "A100-SXM4-80GB") == 2  # exactly two
    assert hbm.gpus_to_hold(0, "A100-SXM4-80GB") == 1
    with pytest.raises(ValueError, match="leaves no capacity"):
        hbm.gpus_to_hold(1e9, "T4", reserve_bytes=16e9)
    assert hbm.max_trainable_params("A100-SXM4-80GB") == 5e9  # 80 GB / 16 bytes
    # 70B int8 (68.98 GB) on 80 GB: 11.02 GB left / (4096 x 327,680 bytes = 1.342 GB per sequence) -> 8
    assert hbm.max_batch("70B", "A100-SXM4-80GB", context=4096, weights="int8") == 8
    assert hbm.max_batch("70B", "A100-SXM4-40GB", context=4096, weights="int8") == 0
    with pytest.raises(ValueError):
        hbm.max_batch("70B", "A100-SXM4-80GB", context=0)
    assert hbm.max_trainable_params("RTX-A2000-12GB") == 0.75e9
    # ZeRO-3: 175e9 x 16 bytes = 2.8 TB over 80 GB GPUs -> 35
    assert hbm.min_gpus_zero(175e9, "A100-SXM4-80GB", 3) == 35
    # stage 1 keeps 4 bytes per parameter whole on every GPU: 700 GB never fits
    assert hbm.min_gpus_zero(175e9, "A100-SXM4-80GB", 1) is None
    # 7.5B, stage 1, 40 GB: 30 GB fixed, 90 GB shared -> 90 / (40 - 30) = 9 GPUs
    assert hbm.min_gpus_zero(7.5e9, "A100-SXM4-40GB", 1) == 9


# ----------------------------------------------------------------------------------------------------
# Roofline and decoding
# ----------------------------------------------------------------------------------------------------

def test_roofline_ops_and_attainable():
    ops = {o.name: o for o in hbm.roofline_ops()}
    assert ops["vector add"].intensity == pytest.approx(1 / 6)  # 1 FLOP per 3 x 2 bytes
    assert ops["GEMV (decode, batch 1)"].intensity == pytest.approx(1.0, rel=1e-3)  # 2 FLOP per 2-byte weight
    assert ops["GEMM 4096^3"].intensity == pytest.approx(2 * 4096 / 6)
    a100 = specs.get("A100-SXM4-80GB")
    ridge = a100.ridge_point("bf16")
    assert hbm.attainable_flops(ridge * 10) == a100.peak_flops("bf16")
    assert hbm.attainable_flops(1.0) == pytest.approx(2039e9)
    with pytest.raises(ValueError):
        hbm.attainable_flops(-1)


def test_decode_bound_by_hand():
    d = hbm.decode_bound("7B", "A100-SXM4-80GB", weights="fp16")
    assert d.tokens_per_s == pytest.approx(2039e9 / (6_738_415_616 * 2))  # 151.3 tokens/s
    assert d.bound == "memory" and d.fits
    # int4 halves the bytes of int8: twice the tokens
    d8 = hbm.decode_bound("70B", "A100-SXM4-80GB", weights="int8")
    d4 = hbm.decode_bound("70B", "A100-SXM4-80GB", weights="int4")
    assert d4.tokens_per_s == pytest.approx(2 * d8.tokens_per_s)
    assert not hbm.decode_bound("70B", "A100-SXM4-80GB", weights="fp16").fits
    # a large batch shares each weight read: the step becomes compute-bound
    big = hbm.decode_bound("7B", "A100-SXM4-80GB", batch=1024)
    assert big.bound == "compute" and big.tokens_per_s_per_sequence < d.tokens_per_s
    # the KV cache adds bytes per step
    ctx = hbm.decode_bound("7B", "A100-SXM4-80GB", context=4096)
    assert ctx.kv_bytes == 4096 * 524_288 // 1 and ctx.tokens_per_s < d.tokens_per_s
    assert len(hbm.decode_table()) == 4 * 6 * 3


def test_compare_40_80():
    r = hbm.compare_gpus("A100-SXM4-80GB", "A100-SXM4-40GB")
    assert r["compute"] == 1.0 and r["capacity"] == 2.0 and r["l2"] == 1.0
    assert r["bandwidth"] == pytest.approx(2039 / 1555)


# ----------------------------------------------------------------------------------------------------
# L2 working set
# ----------------------------------------------------------------------------------------------------

def test_sweep_footprints():
    f = hbm.sweep_footprints(40 * 2**20, points=24)
    assert f[0] == 256 * 1024 and f == sorted(set(f))
    assert f[-1] == pytest.approx(160 * 2**20, rel=0.01)
    assert all(x % 4096 == 0 for x in f)
    with pytest.raises(ValueError):
        hbm.sweep_footprints(40 * 2**20, stop_factor=0.001)
    with pytest.raises(ValueError):
        hbm.sweep_footprints(0)


def test_l2_model():
    a100 = specs.get("A100-SXM4-80GB")
    cap = a100.l2_bytes
    y, notes = hbm.l2_sweep_model([cap / 2, cap, 2 * cap], "A100-SXM4-80GB")
    assert y[0] == y[1] == pytest.approx(5120 * 1.41e9)
    assert y[2] == pytest.approx(2039e9)  # ideal LRU: a cyclic sweep larger than the cache never hits
    yr, _ = hbm.l2_sweep_model([2 * cap], "A100-SXM4-80GB", policy="random")
    assert yr[0] == pytest.approx(1 / (0.5 / (5120 * 1.41e9) + 0.5 / 2039e9))
    _, notes = hbm.l2_sweep_model([1e6], "H200-SXM-141GB")
    assert any("ASSUMED" in n for n in notes)
    with pytest.raises(ValueError):
        hbm.l2_sweep_model([1e6], policy="fifo")


def test_find_knee_synthetic_and_published():
    l2 = 40 * 2**20
    f = hbm.sweep_footprints(l2, 30)
    y, _ = hbm.l2_sweep_model(f, "A100-SXM4-80GB", policy="lru")
    k = hbm.find_knee(f, y, l2)
    assert k["visible"] and k["within"] and 0.9 < k["ratio_to_l2"] <= 1.2
    flat = hbm.find_knee(f, [1e12] * len(f), l2)
    assert not flat["visible"] and flat["knee_bytes"] is None
    # a knee at half the L2 is visible but not within 25%
    early = hbm.find_knee(f, [5e12 if x < l2 / 2 else 1e12 for x in f], l2)
    assert early["visible"] and not early["within"]
    for gpu in hbm.PUBLISHED_L2_SWEEPS:
        fp, yp, l2p, key = hbm.published_l2_sweep(gpu)
        kp = hbm.find_knee(fp, yp, l2p)
        assert kp["within"] and key == "ernstgpubenches"
    with pytest.raises(ValueError):
        hbm.find_knee([1, 2], [1, 2], l2)
    with pytest.raises(ValueError):
        hbm.find_knee([1, 2, 3], [1, -2, 3], l2)
    with pytest.raises(ValueError, match="no published sweep"):
        hbm.published_l2_sweep("T4")


def test_validate_models_passes():
    text, ok = hbm.validate_models()
    assert ok, text
    assert "ZeRO stage 3" in text and "L2 knee H200-SXM-141GB" in text


def test_model_path_does_not_import_torch():
    import subprocess

    code = "import sys, ampere.hbm as h; h.model_memory('70B', weights='int4'); h.validate_models(); " \
           "print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------------------------------
# Measurements on the CPU (tiny sizes): the same code path the GPU runs
# ----------------------------------------------------------------------------------------------------

def test_measure_bandwidth_cpu_counts_bytes():
    recs = hbm.measure_bandwidth("cpu", array_bytes=256 * 1024, min_samples=3, min_time_s=0.005, max_time_s=0.5)
    by = {r["params"]["kernel"]: r for r in recs}
    assert set(by) == set(hbm.KERNELS)
    n = 256 * 1024
    assert by["read"]["derived"]["bytes_moved"] == n
    assert by["write"]["derived"]["bytes_moved"] == n
    assert by["copy"]["derived"]["bytes_moved"] == 2 * n  # a copy reads N and writes N
    assert by["triad"]["derived"]["bytes_moved"] == 3 * n
    assert by["copy"]["derived"]["copy_bytes_per_s"] == pytest.approx(by["copy"]["derived"]["bytes_per_s"] / 2)
    assert by["read"]["derived"]["copy_bytes_per_s"] is None
    assert all(r["derived"]["pct_of_datasheet"] is None for r in recs)  # a CPU has no datasheet here
    assert all(r["derived"]["bytes_per_s"] > 0 for r in recs)
    rows = hbm.bandwidth_rows(recs)
    assert [r["kernel"] for r in rows] == list(hbm.KERNELS)
    with pytest.raises(ValueError, match="unknown"):
        hbm.measure_bandwidth("cpu", kernels=["memset"])


def test_kernels_compute_what_they_claim():
    import torch

    x, y = torch.arange(8.0), torch.empty(8)
    hbm._kernel_fn(hbm.KERNELS["copy"], [x, y])()
    assert torch.equal(x, y)
    b, c, a = torch.ones(4), torch.full((4,), 2.0), torch.empty(4)
    hbm._kernel_fn(hbm.KERNELS["triad"], [b, c, a])()
    assert a.tolist() == [2.0] * 4  # 1 + 0.5 * 2
    out = torch.empty(())
    hbm._kernel_fn(hbm.KERNELS["read"], [torch.arange(5.0), out])()
    assert out.item() == 10.0


def test_measure_l2_sweep_cpu():
    fps = [64 * 1024, 256 * 1024]
    recs = hbm.measure_l2_sweep("cpu", footprints=fps, total_bytes=1024 * 1024, min_samples=3,
                                min_time_s=0.005, max_time_s=0.5)
    assert [r["params"]["footprint_bytes"] for r in recs] == fps
    assert [r["params"]["repeats"] for r in recs] == [16, 4]  # fixed traffic: 1 MiB / footprint
    assert all(r["params"]["traffic_bytes"] == 1024 * 1024 for r in recs)
    f, y, l2 = hbm.sweep_rows(recs)
    assert f == fps and all(v > 0 for v in y) and l2 is None
    with pytest.raises(ValueError):
        hbm.measure_l2_sweep("cpu", footprints=[])


def test_l2_sweep_rounds_to_whole_chunks_and_keeps_traffic_fixed():
    # 100 KiB -> one 64 KiB chunk (merged with 64 KiB), 200 KiB -> three chunks = 192 KiB
    recs = hbm.measure_l2_sweep("cpu", footprints=[64 * 1024, 100 * 1024, 200 * 1024], total_bytes=768 * 1024,
                                min_samples=3, min_time_s=0.0, max_time_s=0.2)
    assert [r["params"]["footprint_bytes"] for r in recs] == [64 * 1024, 192 * 1024]
    assert [r["params"]["chunks"] for r in recs] == [1, 3] and [r["params"]["repeats"] for r in recs] == [12, 4]
    assert all(r["params"]["traffic_bytes"] == 768 * 1024 and r["params"]["chunk_bytes"] == 65536 for r in recs)
    recs = hbm.measure_l2_sweep("cpu", footprints=[4096], chunk_bytes=16 * 1024, total_bytes=64 * 1024,
                                min_samples=3, min_time_s=0.0, max_time_s=0.2)
    assert recs[0]["params"]["footprint_bytes"] == 16 * 1024  # never less than one chunk
    with pytest.raises(ValueError, match="chunk_bytes"):
        hbm.measure_l2_sweep("cpu", footprints=[65536], chunk_bytes=1000)


def test_l2_sweep_view_sums_each_chunk():
    # The sweep's kernel: R x m reductions of one chunk each, over a stride-0 view (no copy).
    import torch

    buf = torch.arange(16.0)
    view = hbm._chunk_view(buf, 3, 4, 2)
    assert view.stride() == (0, 4, 1) and view.data_ptr() == buf.data_ptr()
    out = torch.empty(2, 3)
    torch.sum(view, dim=-1, out=out)
    assert out.tolist() == [[6.0, 22.0, 38.0]] * 2


def test_measure_capacity_cpu():
    cap = hbm.measure_capacity("cpu")
    assert cap["total_bytes"] is None and "no CUDA" in cap["note"]


def test_bench_main_cpu(tmp_path, capsys):
    rc = hbm.bench_main(["--quick", "--array-mib", "1", "--sweep-points", "3", "--kernels", "read,copy",
                         "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "HBM benchmark on" in out and "copy" in out and "result written to" in out
    files = list(tmp_path.glob("hbm-*.json"))
    assert len(files) == 1
    res = results.load(files[0])
    exps = [r["params"]["experiment"] for r in res["records"]]
    assert exps.count("bandwidth") == 2 and exps.count("l2_sweep") == 3 and "capacity" in exps
    assert any("no CUDA GPU" in n for n in res["notes"])
    with pytest.raises(SystemExit):
        hbm.bench_main(["--kernels", "memset", "--no-save"])
    assert math.isfinite(res["records"][0]["derived"]["bytes_per_s"])


def _fake_records(copy_pct, knee_at, l2=40 * 2**20):
    bw = [{"params": {"experiment": "bandwidth", "kernel": k, "engine": "SM"},
           "derived": {"bytes_per_s": copy_pct * 20.39e9, "pct_of_datasheet": copy_pct, "copy_bytes_per_s": None}}
          for k in ("copy", "scale")]
    f = hbm.sweep_footprints(l2, 16)
    sweep = [{"params": {"experiment": "l2_sweep", "footprint_bytes": x, "device_l2_bytes": l2},
              "derived": {"bytes_per_s": 5e12 if x < knee_at else 1.8e12}} for x in f]
    return bw + sweep


def test_check_acceptance():
    ok = {c["check"]: c for c in hbm.check_acceptance(_fake_records(90.0, 40 * 2**20), "A100-SXM4-80GB")}
    copy = ok["copy >= 85% of the datasheet bandwidth"]
    assert copy["passed"] and copy["applies"]
    assert not ok["scale >= 85% of the datasheet bandwidth"]["applies"]  # reported, not judged
    assert ok["L2 knee within 25% of the reported L2"]["passed"]
    bad = {c["check"]: c for c in hbm.check_acceptance(_fake_records(80.0, 10 * 2**20), "H200-SXM-141GB")}
    assert not bad["copy >= 85% of the datasheet bandwidth"]["passed"]
    assert not bad["L2 knee within 25% of the reported L2"]["passed"]
    t4 = hbm.check_acceptance(_fake_records(70.0, 4 * 2**20, l2=4 * 2**20), "T4")
    assert not t4[0]["applies"]  # the 85% threshold is set for A100/H100/H200 only
    none = hbm.check_acceptance([], None)
    assert not any(c["applies"] for c in none)
