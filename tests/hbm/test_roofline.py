"""Tests of ampere/hbm/roofline.py (the model presets, the roofline and the decoding bound). Chapter: HBM and
the memory hierarchy.

The capacity arithmetic the chapter uses is tested in tests/test_memory.py (ampere.memory).
"""

from __future__ import annotations

import pytest

from ampere import hbm, specs


def test_models_are_transformer_presets():
    from ampere import transformer

    assert set(hbm.SIZE_CLASSES) == {"7B", "13B", "30B", "70B"}
    for cls, name in hbm.SIZE_CLASSES.items():
        assert hbm.MODELS[name] is transformer.PRESETS[name] is transformer.preset(cls)
    assert hbm.MODELS["llama2-7b"].params == 6_738_415_616  # exact released count (tests/test_transformer.py)
    assert hbm.MODELS["llama2-70b"].seq == 4096 and hbm.MODELS["gpt3-175b"].positions == "learned"


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


def test_decode_bound_with_ideal_tensor_parallelism():
    # four GPUs: four times the bandwidth, peak and capacity (communication free): a looser bound
    one = hbm.decode_bound("70B", "A100-SXM4-80GB", gpus=1)
    four = hbm.decode_bound("70B", "A100-SXM4-80GB", gpus=4)
    assert four.tokens_per_s == pytest.approx(4 * one.tokens_per_s) and four.fits and not one.fits
    with pytest.raises(ValueError, match="gpus"):
        hbm.decode_bound("7B", gpus=0)
