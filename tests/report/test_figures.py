"""ampere.report.figures (and the printable rows of ampere.report.comparison): the recorded views."""

from ampere.report import comparison, figures

from .helpers import _rec


def test_recorded_views():
    recs = [_rec("matmul/bf16/n8192", 800.0), _rec("matmul/bf16/n8192", 270.0, gpu="A100-SXM4-80GB")]
    for r, model in zip(recs, (989.4, 311.9)):
        r.update(label="BF16 matmul 8192^3", unit="TFLOP/s", model=model)
    rows = comparison.recorded_rows(recs)
    assert [r["GPU"] for r in rows] == ["A100-SXM4-80GB", "H200-SXM-141GB"] and rows[0]["% of model"] == "86.6"
    fig = figures.recorded_figure(recs)
    ax = fig.axes[0]
    assert len(ax.patches) == 2 and sorted(round(p.get_height(), 1) for p in ax.patches) == [80.9, 86.6]
    empty = figures.recorded_figure([])
    assert not empty.axes[0].axison
