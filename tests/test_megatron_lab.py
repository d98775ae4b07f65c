"""The tensor/pipeline lab: causal attention checked against PyTorch's, tolerances derived from rounding."""

from __future__ import annotations

import dataclasses

import pytest

from ampere import megatron_lab as L

torch = pytest.importorskip("torch")


def _qkv(seed: int = 0, b: int = 2, a: int = 3, s: int = 17, d: int = 8):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(b, a, s, d, generator=g, dtype=torch.float64) for _ in range(3))


def test_causal_attention_matches_scaled_dot_product_attention():
    F = torch.nn.functional
    q, k, v = _qkv()
    ours = L.causal_attention(q, k, v)
    assert torch.allclose(ours, F.scaled_dot_product_attention(q, k, v, is_causal=True), rtol=1e-12, atol=1e-12)
    # the comparison can fail: attention without the mask is far from ours
    full = F.scaled_dot_product_attention(q, k, v, is_causal=False)
    assert not torch.allclose(ours, full, rtol=1e-3, atol=1e-3)


def test_causal_attention_ignores_the_future():
    q, k, v = _qkv(1)
    v2 = v.clone()
    v2[..., -1, :] += 100.0  # change only the last position's value
    a, b = L.causal_attention(q, k, v), L.causal_attention(q, k, v2)
    assert torch.equal(a[..., :-1, :], b[..., :-1, :])
    assert not torch.equal(a[..., -1, :], b[..., -1, :])


def test_tolerances_follow_epsilon_and_reduction_length():
    cfg = L.LabConfig()
    tol = L.tolerances(cfg)
    k = max(4 * cfg.hidden, cfg.seq)
    u = 2.0**-24
    gamma = k * u / (1 - k * u)
    assert tol["K"] == k and tol["unit_roundoff"] == u
    assert tol["logits"] == pytest.approx(2 * (6 * cfg.layers + 1) * gamma)
    assert tol["grads"] == pytest.approx(3 * tol["logits"])
    assert tol["losses"] == pytest.approx(cfg.steps * tol["grads"])
    # wider layers and a coarser format loosen the bound proportionally
    wide = L.tolerances(dataclasses.replace(cfg, hidden=64))
    assert wide["logits"] > tol["logits"]
    assert L.tolerances(cfg, eps=2.0**-10)["logits"] > 1000 * tol["logits"]


def test_matches_single_process_fails_beyond_the_bound():
    cfg = L.LabConfig(steps=3)
    tol = L.tolerances(cfg)
    base = L.LabResult(cfg, "gloo", 3.0, 3.0, 0.0, 0.0, 0.0, [3.0, 2.9, 2.8], [3.0, 2.9, 2.8], 0, 0.0, 0.0, 0.0,
                       0.0, 0.0, logit_scale=2.0, grad_scale=0.5)
    assert base.matches_single_process
    assert not dataclasses.replace(base, max_abs_logit_diff=3 * tol["logits"] * 2.0).matches_single_process
    assert not dataclasses.replace(base, max_abs_grad_diff=3 * tol["grads"] * 0.5).matches_single_process
    assert not dataclasses.replace(base, losses=[3.0, 2.9, 2.81]).matches_single_process
