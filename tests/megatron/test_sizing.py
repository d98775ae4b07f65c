"""Sizing a GPT and the published tables (ampere/megatron/sizing.py, published.py; chapter: Megatron-LM)."""

from __future__ import annotations

import pytest

from ampere import megatron as M


@pytest.mark.parametrize("row", M.TABLE1, ids=[r["name"] for r in M.TABLE1])
def test_parameter_count_reproduces_table1(row):
    cfg = M.table1_config(row)
    assert round(M.params(cfg) / 1e9, 1) == row["params_b"]


def test_parameter_formula_equals_counting_the_tensors():
    cfg = M.GPTConfig(layers=3, hidden=64, heads=4, vocab=100, seq=16)
    h, V, s = 64, 100, 16
    per_layer = (h * 3 * h + 3 * h) + (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h) + 2 * 2 * h
    assert M.params(cfg) == pytest.approx(3 * per_layer + V * h + s * h)
    # the split over tensor ranks adds up: replicated parts counted once per rank
    per = M.params_per_gpu(cfg, tensor=2, pipeline=1)
    assert per["max"] == pytest.approx(3 * ((12 * h * h + 7 * h) / 2 + 6 * h) + V * h / 2 + s * h + 2 * h)


def test_flops_per_iteration_is_equation_3():
    cfg = M.table1_config("1T")
    B, s, l, h, V = 3072, 2048, 128, 25600, 51200
    eq3 = 96 * B * s * l * h**2 * (1 + s / (6 * h) + V / (16 * l * h))
    assert M.flops_per_iteration(cfg, B) == pytest.approx(eq3, rel=1e-12)
    no_rc = M.flops_per_iteration(cfg, B, recompute=False)
    assert no_rc == pytest.approx(72 * B * s * l * h**2 * (1 + s / (6 * h)) + 6 * B * s * h * V, rel=1e-12)


@pytest.mark.parametrize("est", M.TRAINING_ESTIMATES, ids=lambda e: e["model"])
def test_training_days_34_and_84(est):
    days = M.training_days(est["params"], est["tokens"], est["gpus"], est["tflops_per_gpu"])
    assert round(days) == est["published_days"]


def test_config_and_training_days_reject_bad_input():
    with pytest.raises(ValueError, match="hidden=100 must be a multiple of heads=3"):
        M.GPTConfig(layers=2, hidden=100, heads=3)
    with pytest.raises(ValueError, match="layers must be an integer >= 1, got 0"):
        M.GPTConfig(layers=0, hidden=64, heads=4)
    with pytest.raises(ValueError, match="tokens"):
        M.training_days(1e9, -1, 8, 100)
    with pytest.raises(ValueError, match="batch"):
        M.flops_per_iteration(M.GPTConfig(2, 64, 4), 0)


def test_llama_shapes_have_exact_parameter_counts():
    # released checkpoints (the HBM chapter's presets cite metallama2023configs / jiang2023mistral)
    from ampere import transformer

    for name in ("llama2-7b", "llama2-13b", "llama2-70b", "mistral-7b"):
        shape = transformer.preset(name)
        assert M.params(shape) == shape.params
    llama7 = M.GPTConfig(32, 4096, 32, 32000, 4096, ffn_hidden=11008, glu=True, tied_embeddings=False,
                         biases=False, norm="rmsnorm", positions="rope")
    assert M.params(llama7) == 6_738_415_616
    assert M.params_per_gpu(llama7, 1, 1)["max"] == 6_738_415_616
    # the FLOP count follows the linear layers: 2 x tokens x weights per forward
    fl = M.flops_per_iteration(llama7, 1, "none")
    linear = sum(i * o for _, i, o in llama7.linear_shapes())
    assert fl == 32 * 3 * (2 * 4096 * linear + 4 * 4096**2 * 4096) + 6 * 4096 * 4096 * 32000
    est = M.estimate(llama7, 64, 256, 2, 1, 1, recompute="selective", sequence_parallel=True)
    assert est.fits_in_memory and est.tflops_per_gpu > 0

