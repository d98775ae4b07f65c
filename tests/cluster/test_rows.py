"""Tests of ampere.cluster.rows: the chapter's tables.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

import pytest

from ampere import cluster as cl


def _bib_keys():
    import re
    from pathlib import Path

    bib = (Path(__file__).resolve().parents[2] / "book" / "references.bib").read_text(encoding="utf-8")
    return set(re.findall(r"@\w+\{([^,]+),", bib))


def test_page_rows_carry_labels_not_bibliography_keys():
    keys = _bib_keys()
    tables = [cl.node_rows(cl.dgx_a100("A100-SXM4-40GB"), cl.dgx_a100()), cl.peak_rows(cl.dgx_a100()),
              cl.bandwidth_rows(cl.dgx_a100()), cl.scaling_rows([20, 140]), cl.validation_rows(),
              cl.pod_peak_rows(cl.superpod(140)), cl.selene_rows(), cl.pod_all_reduce_rows(140), cl.gap_rows(),
              cl.mlperf_rows(), cl.claims(), cl.design_rows(), cl.limit_rows(), cl.bisection_rows(),
              cl.taper_rows()]
    for rows in tables:
        assert rows
        for row in rows:
            for value in row.values():
                assert str(value) not in keys, value
                assert not any(f"{k}," in str(value) or str(value).endswith(k) for k in keys if len(k) > 6), value
    assert all(r["agrees"].startswith("yes") for r in cl.validation_rows())
    with pytest.raises(TypeError, match="DGXNode"):
        cl.node_rows("DGX A100")


def test_selene_rows_print_the_lists_and_say_which_figure_the_book_does_not_use():
    rows = cl.selene_rows()
    june, nov = cl.selene()
    assert [r["nodes"] for r in rows] == [june.nodes, nov.nodes]
    for row, entry in zip(rows, (june, nov)):
        assert row["Rpeak (PF)"] == ("not used" if entry.rpeak_flops is None else f"{entry.rpeak_flops / 1e15:.2f}")
        assert row["Rmax / Rpeak"] != "" and "–" not in row.values()  # never an empty cell, never a bare dash
    # narrow enough for the 700-pixel column: eight short columns (the review found the source cut off)
    assert len(rows[0]) == 8 and sum(len(k) for k in rows[0]) < 70
    # the GPU-peak comparison is the figure's table (hpl_points), not repeated here
    assert not any("GPU peak" in k for k in rows[0])


def test_scaling_rows_fit_the_page_and_gap_rows_keep_percent_on_one_line():
    row = cl.scaling_rows([140])[0]
    assert len(row) <= 9 and "GPUs" not in row  # 8 x nodes; the table must not overflow the page column
    assert row["switches"] == cl.superpod(140).switches and row["SU"] == "7"
    assert cl.scaling_rows([820])[0]["SU"] == "41 (45)"  # built for more SUs where 41 cannot be wired
    assert all("\u00a0%" in r["gap"] for r in cl.gap_rows())


def test_money_is_rounded_to_what_the_inputs_support():
    for r in cl.gap_rows():
        week = int(r["USD / week"].replace(",", ""))
        assert week == cl.round_sig(week)  # two significant figures
        assert r["USD / year"].endswith(" million")
    first, low = cl.gap_rows()[:2]
    assert first["USD / year"] == "2.9 million" and first["USD / week"] == "55,000"
    assert low["USD / year"] == "0.67 million"  # two significant figures below a million too


def test_design_tables():
    designs = cl.design_rows()
    assert [r["radix"] for r in designs] == ["40", "64", "64", "144"]
    limits = {r["design"]: r for r in cl.limit_rows()}
    assert limits["DGX A100"]["three levels (= k³/4 ports)"] == "2,000 (16,000)"
    assert limits["DGX A100"]["largest published table row"] == "–"
    bis = {r["design"]: r for r in cl.bisection_rows()}
    assert bis["DGX A100, 140 nodes"]["bisection (TB/s per direction)"] == "14.0"
    assert [r["per GPU of a half (GB/s)"] for r in bis.values()] == ["25", "50", "50", "100"]


def test_mlperf_rows_name_each_figure_with_its_unit():
    rows = cl.mlperf_rows()
    assert len(rows) == sum(len(r.figures) for r in cl.mlperf())
    gains = [r for r in rows if r["value"].endswith(" x")]
    assert gains and all(r["what"].endswith("speedup (up to)") for r in gains), gains  # no clipped "_ratio"
    assert all(r["scale"].startswith("against ") for r in gains)
    per_acc = next(r for r in rows if r["scale"] == "per-accelerator")
    assert per_acc["what"] == "BERT" and per_acc["value"].endswith("accelerator-hours")
    bert = next(r for r in rows if r["round"] == "v0.7" and r["what"] == "BERT" and r["scale"] == "max-scale")
    assert bert["value"] == "0.81 minutes"
