"""Tests of ampere.numerics.figures: every figure draws (chapter: TF32 and the precision formats)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402


def test_figures_draw(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from ampere import plots

    fig, axes = plots.figure("wide", 1, 3)
    N.plot_bit_layouts(axes[0])
    N.plot_error_vs_k(axes[1], N.error_vs_k(ks=(4, 16), m=4, n=4, trials=1))
    N.plot_ranges(axes[2], sample=N.gradient_like_values(1000))
    fig2, ax = plots.figure("full")
    g = N.gradient_like_values(1000, distribution="lognormal")
    N.plot_loss_scaling(ax, N.loss_scale_sweep(g, log2_scales=range(4)), best=N.best_loss_scale(g))
    N.plot_training(ax, [N.TrainingRun("fp32", "emulated", "cpu", [1.0, 0.5], 1.0, 1.0, 0.1)])
    N.plot_throughput(ax, [{"precision": "fp32", "n": 64, "tflops": 1.0},
                           {"precision": "tf32", "n": 64, "tflops": 7.0}])
    import matplotlib.pyplot as plt

    plt.close("all")
