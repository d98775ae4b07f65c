"""The model-beside-real view every measuring section uses."""

from __future__ import annotations

import pytest

from ampere import results, views


def _rec(kind="published", **kw):
    base = dict(kind=kind, benchmark="matmul", gpu="A100-SXM4-80GB", figures={"bf16_tflop_per_s": 271.2},
                source="bekman2024mle", where="MAMF table", id="x", date="2024")
    base.update(kw)
    return results.Record(**base)


def test_point_ratio_and_validation():
    p = views.Point("bf16", "A100-SXM4-80GB", model=312.0, real=156.0, unit="TFLOP/s", source="s")
    assert p.ratio == pytest.approx(0.5)
    assert views.Point("x", "g", model=1.0, real=None, unit="u").ratio is None
    with pytest.raises(ValueError, match="kind"):
        views.Point("x", "g", model=1.0, real=2.0, unit="u", kind="guessed", source="s")
    with pytest.raises(ValueError, match="source"):
        views.Point("x", "g", model=1.0, real=2.0, unit="u")
    with pytest.raises(ValueError, match="model value"):
        views.Point("x", "g", model=None, real=None, unit="u")
    with pytest.raises(TypeError):
        views.Point("x", "g", model="1", real=None, unit="u")


def test_published_source_text_uses_the_label_not_the_key():
    text = views.source_text(_rec())
    assert "bekman2024mle" not in text and text.startswith("Bekman 2024") and "MAMF table" in text


def test_point_from_record_and_table():
    pub = views.point(_rec(), "bf16_tflop_per_s", "bf16, best shape", 312.0, "TFLOP/s")
    assert pub.kind == "published" and pub.real == pytest.approx(271.2)
    rec = views.point(_rec(kind="measured", where="recorded on NVIDIA H200 (sm90), 2026-12-02, torch 2.13.0",
                           source="matmul-h200.json", figures={"tflops": 700.0}), "tflops", "bf16 8192", 989.0,
                      "TFLOP/s")
    assert rec.kind == "recorded"
    md = views.table([pub, rec], model_label="dense peak")
    lines = md.splitlines()
    assert lines[0] == ("| GPU | quantity | dense peak (TFLOP/s) | real (TFLOP/s) | real / dense peak | source |")
    assert "| 0.87× |" in lines[2] and "0.71×" in lines[3] and "recorded on NVIDIA H200" in lines[3]
    with pytest.raises(ValueError):
        views.table([])


def test_best_puts_recorded_first():
    pub, meas = _rec(), _rec(kind="measured", source="f.json", figures={"t_s": 1.0})
    assert views.best([pub, meas]) == [meas, pub]


def test_plot_draws_one_row_per_point():
    import matplotlib

    matplotlib.use("Agg")
    from ampere import plots

    pts = [views.Point("a", "A100-SXM4-80GB", 1.0, 0.8, "u", source="s"),
           views.Point("b", "H100-SXM5-80GB", 2.0, None, "u")]
    fig, ax = plots.figure("full")
    views.plot(ax, pts)
    assert len(ax.get_yticklabels()) == 2
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["model", "published"]


def test_plot_chooses_a_log_axis_only_over_a_decade():
    import matplotlib

    matplotlib.use("Agg")
    from ampere import plots

    narrow = [views.Point("a", "A100-SXM4-80GB", 19.5, 156.0, "u", source="s")]
    wide = [views.Point("a", "A100-SXM4-80GB", 1.0, 500.0, "u", source="s")]
    for pts, scale in ((narrow, "linear"), (wide, "log")):
        fig, ax = plots.figure("full")
        views.plot(ax, pts)
        assert ax.get_xscale() == scale
    fig, ax = plots.figure("full")
    views.plot(ax, wide, log=False)
    assert ax.get_xscale() == "linear"
