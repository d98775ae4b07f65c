"""The later lessons, computed (ampere/megatron/lessons.py; chapter: Megatron-LM, sections on tensor
parallelism's limit, overlap, context and expert parallelism)."""

from __future__ import annotations

import dataclasses

import pytest

from ampere import megatron as M
from ampere.transformer import preset

GPT3 = M.GPTConfig(96, 12288, 96)


def test_tensor_parallelism_pays_inside_a_node_and_not_across_nodes():
    inside = [M.tp_efficiency(GPT3, t)["efficiency"] for t in (1, 2, 4, 8)]
    across = [M.tp_efficiency(GPT3, t, across_nodes=True)["efficiency"] for t in (1, 2, 4, 8)]
    assert inside[0] == pytest.approx(1.0) and inside == sorted(inside, reverse=True)
    assert inside[3] > 0.75 and across[3] < 0.5
    assert all(a < i for a, i in zip(across[1:], inside[1:]))
    with pytest.raises(ValueError, match="does not divide"):
        M.tp_efficiency(GPT3, 7)


def test_overlap_effect_orders_the_three_cases():
    rows = M.overlap_effect(GPT3, 64, 64, 8, 8, 1, 3, sequence_parallel=True)
    assert [r["case"] for r in rows][0] == "no overlap"
    assert rows[0]["time_s"] > rows[1]["time_s"] >= rows[2]["time_s"]


def test_context_parallel_splits_activations_and_passes_kv():
    shape = dataclasses.replace(preset("llama2-7b"), seq=32768)
    one, four = M.context_parallel(shape, 1), M.context_parallel(shape, 4)
    assert one["bytes_sent_per_gpu"] == 0 and four["activation_bytes_per_gpu"] == pytest.approx(
        one["activation_bytes_per_gpu"] / 4)
    assert four["exposed_s"] < four["ring_s"] < four["attention_s"]  # the ring hides behind attention
    with pytest.raises(ValueError, match="context"):
        M.context_parallel(shape, 16)


def test_expert_parallel_all_to_all_volume():
    r = M.expert_parallel(8192, 4096, 8, 2, 8, ffn_hidden=14336)
    assert r["bytes_sent_per_gpu"] == pytest.approx(4 * 8192 * 2 * 4096 * 2 * 7 / 8)
    assert r["expert_params_per_gpu"] == 3 * 4096 * 14336 and 0 < r["a2a_share"] < 0.2
    with pytest.raises(ValueError, match="does not divide"):
        M.expert_parallel(8192, 4096, 8, 2, 3)
