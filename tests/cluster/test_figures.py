"""Tests of ampere.cluster.figures: the chapter's figures.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

import pytest

from ampere import cluster as cl


def test_hpl_points_compare_rmax_with_the_gpu_fp64_peak():
    pts = cl.hpl_points()
    assert len(pts) == 2
    nov = next(p for p in pts if "November" in p.what)
    assert nov.model == pytest.approx(4480 * 19.49e12 / 1e15, rel=1e-3)
    assert 0.70 < nov.ratio < 0.75


def test_ownership_figure_draws_one_line_per_price_and_rows_per_offer(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []
    monkeypatch.setattr(plt, "show", lambda: figs.append(plt.gcf()))
    rows = cl.show_ownership()
    offers = cl.cloud_offers()
    assert len(rows) == len(offers)  # the table keeps every offer
    assert all(r["source"].endswith(", price table") and not r["source"].count("2023, 2023") for r in rows)
    ax = figs[0].axes[0]
    prices = {round(o.usd_per_gpu_hour, 2) for o in offers}
    assert len(ax.get_lines()) == 1 + len(prices)  # the ownership curve and one line per distinct price
    labels = ax.get_legend_handles_labels()[1]
    assert any(" and " in lab for lab in labels) == (len(prices) < len(offers))  # shared prices share a line
    assert ax.get_yscale() == "linear"
    plt.close("all")


def test_design_figure_has_a_model_line_per_design_and_published_markers(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []
    monkeypatch.setattr(plt, "show", lambda: figs.append(plt.gcf()))
    cl.show_designs()
    ax = figs[0].axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert sum(lab.endswith("model") for lab in labels) == len(cl.reference_designs())
    assert sum(lab.endswith("published table") for lab in labels) == 3  # A100: no table retrieved
    assert ax.get_xscale() == "log"
    cl.show_switch_counts(range(20, 201, 20))
    ax2 = figs[1].axes[0]
    assert len(ax2.patches) == 3 * 10  # leaf, spine and core bars for 10 sizes
    plt.close("all")
