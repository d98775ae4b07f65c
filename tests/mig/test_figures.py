"""ampere.mig.figures: the layout and isolation figures draw."""

from __future__ import annotations

from ampere import mig

A40 = "A100-SXM4-40GB"


def test_layout_figures_draw(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = mig.plot_layout(A40, [("3g.20gb", 0), ("3g.20gb", 4)])
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(ax.patches) == 15 and len(hatched) == 1  # 8 + 7 slices, compute slice 3 stranded
    ax = mig.plot_layouts(A40, mig.enumerate_layouts(A40, ["3g.20gb", "4g.20gb", "1g.5gb"]))
    assert ax.get_title().endswith("maximal layouts")
    plt.close("all")




def test_isolation_figure_draws():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = mig.isolation_study(mig.SimConfig(duration_s=0.6, warmup_s=0.1), modes=("mig", "mps"))
    ax = mig.plot_isolation(rows)
    assert len(ax.patches) == 6 and ax.get_yscale() == "log"
    plt.close("all")
