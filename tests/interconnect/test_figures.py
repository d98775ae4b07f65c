"""Tests of ampere.interconnect.figures: every figure of the chapter draws without error, with labelled axes.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

import pytest

from ampere import interconnect as ic


@pytest.fixture
def shown(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []

    def keep():
        figs.append(plt.gcf())

    monkeypatch.setattr(plt, "show", keep)
    yield figs
    plt.close("all")


@pytest.mark.parametrize("draw,panels", [
    (lambda: ic.show_latency(), 2),
    (lambda: ic.show_protocols(8), 1),
    (lambda: ic.show_in_network(), 2),
    (lambda: ic.show_busbw_vs_size("A100-SXM4-80GB", 8), 1),
    (lambda: ic.show_hierarchical(680e6, (1, 2, 16)), 2),
    (lambda: ic.show_cascade("A100-SXM4-80GB"), 1),
    (lambda: ic.show_scaling((1, 8, 64)), 2),
])
def test_every_figure_draws_with_labelled_axes(shown, draw, panels):
    draw()
    assert len(shown) == 1
    axes = [a for a in shown[0].axes if a.has_data()]
    assert len(axes) == panels
    for ax in axes:
        assert ax.get_xlabel() or ax.get_ylabel()
        assert all(t.get_fontsize() >= 8 for t in ax.texts)


def test_protocol_figure_marks_the_two_switch_points(shown):
    ic.show_protocols(8)
    ax = shown[0].axes[0]
    marks = [t.get_text() for t in ax.texts]
    assert marks == ["LL → LL128", "LL128 → Simple"]
