"""ampere.architecture.figures: the dies, the harvesting curves and the roofline drawn."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from ampere import architecture as arch  # noqa: E402


def test_draw_die_returns_layout():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    assert arch.draw_die(ax, "H100-SXM5-80GB").enabled_sms == 132
    plt.close(fig)


def test_chapter_figures():
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3)
    assert [d.enabled_sms for d in arch.plot_dies(axes)] == [80, 108, 132]
    with pytest.raises(ValueError, match="axes"):
        arch.plot_dies(axes[:2])
    plt.close(fig)
    fig, ax = plt.subplots()
    arch.plot_harvest(ax)
    arch.plot_roofline(ax)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("published" in t for t in labels) and not any("2024mle" in t for t in labels)
    plt.close(fig)
    with pytest.raises(ValueError, match="needed"):
        arch.plot_harvest(ax, needed=(200,))
