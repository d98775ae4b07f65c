"""The lab's tiny GPT (ampere/megatron/lab_model.py): configuration, sharding, causal attention checked
against PyTorch's, tolerances derived from rounding (chapter: Megatron-LM, section "Run it for real, small")."""

from __future__ import annotations

import dataclasses

import pytest

from ampere.megatron import lab_model as L

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


def test_lab_config_validation_and_shards_roundtrip():
    torch = pytest.importorskip("torch")

    with pytest.raises(ValueError, match="tensor=3 does not divide heads=4"):
        L.LabConfig(tensor=3)
    with pytest.raises(ValueError, match="pipeline=3 does not divide layers=2"):
        L.LabConfig(pipeline=3)
    cfg = L.LabConfig(tensor=2)
    full = L._init_params(cfg)
    for name in ("0.qkv_w", "0.qkv_b", "0.fc1_w", "0.proj_w", "0.fc2_w", "0.proj_b", "wte"):
        shards = [L._shard(name, full[name], r, 2) for r in range(2)]
        assert torch.equal(L._unshard(name, shards), full[name])
    assert L.tp_bytes_formula(cfg) == 8 * 4 * 32 * 32 * 0.5 * 2 * 2 * 4
    assert L.pp_bytes_formula(L.LabConfig(tensor=1, pipeline=2)) == 4 * 32 * 32 * 4


def test_lab_layer_keeps_every_tensor_on_the_activation_device():
    """The causal mask is built on the activations' device (a CPU mask fails on CUDA; 'meta' fails the same way)."""
    torch = pytest.importorskip("torch")

    cfg = L.LabConfig(tensor=1)
    p = {k: v.to("meta") for k, v in L._init_params(cfg).items()}
    x = torch.empty(2, cfg.seq, cfg.hidden, device="meta")
    ident = lambda z: z  # noqa: E731
    y = L._head(p, L._layer(p, 0, L._embed(p, torch.zeros(2, cfg.seq, dtype=torch.long, device="meta")) + x, cfg.heads,
                            ident, ident))
    assert y.device.type == "meta" and tuple(y.shape) == (2, cfg.seq, len(L._vocab()))



def test_lab_config_refuses_bad_numbers_at_construction():
    """A bad learning rate is refused when the config is built, not seconds later inside a rank."""
    for bad in (float("nan"), float("inf"), -1.0, 0.0, 100.0):
        with pytest.raises(ValueError, match="lr"):
            L.LabConfig(lr=bad)
    with pytest.raises(TypeError, match="lr must be a number"):
        L.LabConfig(lr="3e-3")
    with pytest.raises(TypeError, match="steps"):
        L.LabConfig(steps=True)
    with pytest.raises(ValueError, match="steps must be an integer <= "):
        L.LabConfig(steps=10**12)
    with pytest.raises(ValueError, match="seed"):
        L.LabConfig(seed=-1)
