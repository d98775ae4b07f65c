"""ampere.sparsity.views and ampere.sparsity.format_checks: the chapter's tables and worked checks, and
the one-call view without a GPU."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

from ampere import sparsity as sp  # noqa: E402


def test_chapter_tables_and_checks():
    block = np.array([[1.5, 0, -2.25, 0]], dtype=np.float16)
    assert sp.block_rows(block) == [{"row": "0", "c0": "1.50", "c1": "0", "c2": "-2.25", "c3": "0"}]
    _, meta = sp.compress_2to4(block)
    assert sp.metadata_rows(meta, 1) == [{"row": "0", "word 0 (uint16)": f"0b{0b1000:016b}",
                                          "positions per group": "(0, 2)"}]
    trips = {r["format"]: r for r in sp.round_trip_rows(rows=32, cols=64)}
    assert all(r["round trip bit-exact"] == "True" for r in trips.values())
    assert trips["fp16 (numpy)"]["storage (of dense)"] == "9/16" and trips["int8 (numpy)"]["storage (of dense)"] == "10/16"
    assert all(sp.compressed_product_checks().values())
    layout = sp.tf32_layout_rows()
    assert layout == [] or layout[0]["storage from PyTorch's arrays"] == "9/16"
    assert all(r["values identical"] == "True" for r in sp.cutlass_agreement_rows())
    peaks = {(r["GPU"], r["precision"]): r for r in sp.peak_table()}
    assert peaks[("A100-SXM4-80GB", "fp16")]["2:4 sparse"] == "623.7" and peaks[("A100-SXM4-80GB", "fp16")]["agrees"] == "yes"
    model = {(r["tokens"], r["kind"]): r for r in sp.time_model_rows(tokens=(1, 16384))}
    assert model[("16384", "2:4")]["bound"] == "compute" and model[("1", "dense")]["bound"] == "memory"
    acc = sp.accuracy_rows()
    assert {r["whose run"] for r in acc} >= {"NVIDIA", "PyTorch", "PyTorch, 4 x A100-80GB"}
    reprinted = [r for r in acc if r["whose run"] == "NVIDIA"]
    assert reprinted and all(r["source"].endswith(")") for r in reprinted)  # the reprint names the original
    assert not any(r["source"] == "pytorch2023semistructured" for r in acc)  # labels, not bibliography keys
    assert not any(r["source"].startswith("seed") for r in sp.claims_rows())


def test_sparsity_view_without_a_gpu_shows_published_speedups_with_bounds(monkeypatch):
    import matplotlib.pyplot as plt

    from ampere import device, tables

    monkeypatch.setattr(tables, "show_md", lambda text: None)
    monkeypatch.setattr(plt, "show", lambda: None)
    pts = sp.show_sparsity(device.DeviceInfo("cpu", "test CPU"))
    assert pts and {p.kind for p in pts} <= {"recorded", "published"}
    bounded = [p for p in pts if p.model is not None]
    assert bounded and all(1.0 < p.model <= 2.0 and p.real < p.model for p in bounded)  # below the roofline bound
    assert all(p.gpu.startswith("A100") for p in pts if p.kind == "published")
    # a whole BERT-base model has a bound too: Amdahl over its layers with the GEMMs at the 2:4 roofline
    bert = [p for p in pts if p.what.startswith("BERT-base")]
    assert bert and all(p.model is not None and 1.4 < p.model < 1.7 for p in bert)
    plt.close("all")


def test_speedup_table_collapses_the_bert_runs_into_one_row_per_mode():
    from ampere.sparsity import views

    rows = views.speedup_table_rows(views.speedup_points())
    bert = [r for r in rows if r["what"].startswith("BERT-base")]
    assert [r["what"] for r in bert] == ["BERT-base, eager", "BERT-base, compiled"]
    assert {"b4", "b16", "b64", "b256"} <= set(bert[0]) and bert[0]["b4"] == "0.71x"
    assert "GPU" not in rows[0]  # one GPU: it is in the figure's title
    assert _natural_width(rows) <= 100


def _natural_width(rows):
    """Characters a Markdown table of ``rows`` (dicts) needs on one line: widest cell per column + separators."""
    cols = list(rows[0])
    return sum(max(len(str(c)), *(len(str(r[c])) for r in rows)) for c in cols) + 3 * (len(cols) - 1) + 4


def test_tables_of_numbers_fit_a_printed_page():
    """The chapter's tables of numbers fit 100 columns (the claims and published-accuracy tables hold prose
    that wraps)."""
    from ampere.tables import markdown_table

    for rows in (sp.peak_table(), sp.break_even_rows(("A100-SXM4-80GB", "H100-SXM5-80GB")),
                 sp.time_model_rows(tokens=(1, 16384)), sp.speedup_rows(),
                 sp.perplexity_rows(["llama2-7b", "llama2-13b", "llama2-70b"])):
        text = markdown_table(rows, formats={"2:4 - 50%": ".2f"})
        width = max(len(line) for line in text.splitlines())
        assert width <= 100 and _natural_width(rows) <= 100, text.splitlines()[0]
