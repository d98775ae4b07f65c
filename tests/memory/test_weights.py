"""Weights by format and the KV cache (ampere/memory/weights.py; chapter: HBM, "Serving a model")."""

import pytest

from ampere import memory as mem
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
