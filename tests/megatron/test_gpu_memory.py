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
    cfg = M.table1_config("1T")
    base = M.memory_per_gpu(cfg, 3072, 3072, 8, 64)
    assert base["bytes_per_param"] == 16
    assert base["fits"] and base["total"] < 80e9
    forty = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, gpu="A100-SXM4-40GB")
    assert not forty["fits"] and forty["capacity"] == 40e9
    dist = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, distributed_optimizer=True)
    assert dist["optimizer"] == pytest.approx(base["optimizer"] / 6)
    norc = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, recompute=False)
    assert norc["activations"] > 5 * base["activations"]
    sp = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, recompute=False, sequence_parallel=True)
    assert sp["activations"] < norc["activations"]
    gpipe = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, schedule="gpipe")
    assert gpipe["activations"] > 5 * base["activations"]  # all 512 microbatches instead of 64
    with pytest.raises(ValueError, match="schedule"):
        M.memory_per_gpu(cfg, 3072, 3072, 8, 64, schedule="pipedream")

