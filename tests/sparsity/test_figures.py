"""ampere.sparsity.figures: the chapter's figures draw (plot_asp and plot_sweep are drawn by the
tests of the experiment and the sweep, tests/sparsity/test_asp.py and test_measure.py)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

from ampere import sparsity as sp  # noqa: E402

RNG = np.random.default_rng(1234)


def _random(shape, dtype):
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-128, 128, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def test_draw_block_runs():
    import matplotlib.pyplot as plt

    w = sp.prune_2to4(_random((4, 8), np.float32))
    fig, axes = plt.subplots(1, 3)
    sp.draw_block(axes, w, *sp.compress_2to4(w))
    plt.close(fig)


def test_plot_speedup_model_runs():
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2)
    sp.plot_speedup_model(axes)
    plt.close(fig)
