"""Tests of ampere.numerics.training: the digits MLP and its emulated-matmul autograd function (chapter:
TF32 and the precision formats)."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402
from ampere.numerics import training  # noqa: E402


def test_training_runs_are_seeded_and_precisions_agree():
    runs = {p: N.train_digits_mlp(p, epochs=6) for p in ("fp32", "tf32", "bf16")}
    for r in runs.values():
        assert len(r.epoch_losses) == 6 and all(math.isfinite(v) for v in r.epoch_losses)
        assert r.epoch_losses[-1] < 0.5 * r.epoch_losses[0]
        assert r.test_accuracy > 0.85
    assert abs(runs["tf32"].test_accuracy - runs["fp32"].test_accuracy) <= 0.03
    assert runs["tf32"].epoch_losses != runs["fp32"].epoch_losses  # the rounding is really applied
    again = N.train_digits_mlp("fp32", epochs=6)
    assert again.epoch_losses == runs["fp32"].epoch_losses
    with pytest.raises(ValueError, match="precision must be one of .*got 'int8'"):
        N.train_digits_mlp("int8")
    with pytest.raises(ValueError, match="backend='native' needs a CUDA device"):
        N.train_digits_mlp("tf32", backend="native", device="cpu")


def test_emulated_matmul_function_gradients():
    fn = training._emulated_matmul_function()
    x = torch.randn(5, 7, dtype=torch.float32, requires_grad=True)
    w = torch.randn(7, 3, dtype=torch.float32, requires_grad=True)
    fn.apply(x, w, "fp32", "nearest").sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((5, 3), np.float32) @ w.detach().numpy().T, rtol=1e-6)
    x.grad = None
    fn.apply(x, w, "bf16", "nearest").sum().backward()
    expected = N.round_to(np.ones((5, 3)), "bf16") @ N.round_to(w.detach().numpy(), "bf16").T
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)
