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


def test_plot_speedup_model_marks_the_simt_break_even():
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2)
    sp.plot_speedup_model(axes, "A100-SXM4-80GB", "fp16")
    labels = [t.get_text() for t in axes[1].texts]
    assert any("break-even 75.0 %" in t and "fp16_simt" in t for t in labels)  # 1 - 78/312, not 1 - 19.5/312
    assert any("FP32 math" in line.get_label() for line in axes[1].get_lines())
    plt.close(fig)


def test_plot_llm_speedup_draws_the_model_without_a_published_point_of_unknown_gpu():
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2)
    sp.plot_llm_speedup(axes, "llama2-7b", "A100-SXM4-80GB", kernel_speedup=1.6)
    left = [ln for ln in axes[0].get_lines() if ln.get_label().startswith("context")]
    assert len(left) == 3
    for ln in left:  # decoding: the speedup falls as the batch grows, and never exceeds the 2:4 bound
        ys = list(ln.get_ydata())
        assert ys[:7] == sorted(ys[:7], reverse=True) and max(ys) < 16 / 9 + 1e-9  # batches 1 to 64
    right = {ln.get_label(): ln for ln in axes[1].get_lines()}
    # Wanda's end-to-end 1.24x is not drawn on an A100 panel: the text read does not name its GPU
    assert not any(k.startswith("published") for k in right)
    assert any(k.startswith("GEMMs at the 2:4 roofline") for k in right)
    plt.close(fig)
