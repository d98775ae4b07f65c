"""Tests of ampere/kernels/views.py: the tables and views, without a GPU and with recorded GPU results.
Chapter: Programming the A100's SM."""

from __future__ import annotations

import importlib.util

import pytest

from ampere import kernels, specs

A100 = "A100-SXM4-80GB"


def test_occupancy_rows_cover_the_catalogue_and_name_what_cannot_launch():
    rows = kernels.occupancy_rows(256, 64, 16 * 1024)
    assert [r["GPU"] for r in rows] == specs.names()
    big = {r["GPU"]: r for r in kernels.occupancy_rows(128, 32, 120 * 1024)}
    assert big["A100-SXM4-80GB"]["blocks per SM"] == 1
    assert big["T4"]["blocks per SM"] == "-" and "cannot launch" in big["T4"]["limited by"]


def test_hierarchy_rows_read_specs():
    rows = kernels.hierarchy_rows((A100,))
    assert [r["level"] for r in rows] == ["registers", "shared memory / L1", "L2", "HBM"]
    assert "164 KiB shared" in rows[1]["capacity"] and "163 KiB per block" in rows[1]["capacity"]
    # derived from the banks, with the published estimate beside it and its source (no bib key)
    assert rows[1]["bandwidth"].startswith("19.5 TB/s (32 banks x 4 B x 108 SMs x 1.41 GHz)")
    assert "estimated at 19 TB/s by Dao et al." in rows[1]["bandwidth"]
    assert "measured" not in rows[2]["bandwidth"]  # no L2 figure unless the caller passes one
    t4 = kernels.hierarchy_rows(("T4",))[1]["bandwidth"]
    assert t4.startswith("8.1 TB/s") and "estimated" not in t4
    with_l2 = kernels.hierarchy_rows((A100,), l2_read={A100: (5.4e12, "Ernst et al.")})
    assert with_l2[2]["bandwidth"].endswith("; 5.4 TB/s measured (Ernst et al.)")
    with pytest.raises(TypeError):
        kernels.hierarchy_rows(A100)
    h200 = kernels.hierarchy_rows(("H200-SXM-141GB",), l2_reported={"H200-SXM-141GB": 60 * 2**20})[2]
    assert h200["capacity"] == "60 MiB per GPU"  # the catalogue's, from the H200's deviceQuery
    other = kernels.hierarchy_rows((A100,), l2_reported={A100: 48 * 2**20})[2]
    assert other["capacity"] == "48 MiB per GPU as CUDA reports it (40 MiB in the catalogue)"
    same = kernels.hierarchy_rows((A100,), l2_reported={A100: 40 * 2**20})[2]
    assert same["capacity"] == "40 MiB per GPU"


def test_attention_points_compare_like_with_like():
    times, traffic = kernels.attention_points()
    assert len(times) == len(traffic) == 2
    for p in times + traffic:  # every published row has the model of the same work beside it
        assert p.model is not None and p.real is not None and "fwd+bwd" in p.what and "N=1024" in p.what
    std, fl = traffic
    assert std.model == pytest.approx(64 * 16 * kernels.attention_hbm_bytes(1024, 64, passes="forward+backward") / 1e9)
    assert fl.model < std.model and fl.real < std.real
    assert all(p.ratio > 1 for p in times)  # the roofline is a lower bound on time


def test_views_show_the_model_without_a_gpu(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from ampere import device, tables

    shown = []
    monkeypatch.setattr(tables, "show_md", lambda text: shown.append(text))
    info = device.probe(force="cpu")
    kernels.show_matmul(info)
    kernels.show_attention(info)
    if importlib.util.find_spec("torch") is not None:
        kernels.show_profile(info)
    text = "\n".join(shown)
    for hollow in ("recorded yet", "Nothing is", "No GPU", "appears when"):  # the page never says what is missing
        assert hollow not in text
    assert "best bf16 matmul (cuBLAS)" in text and "MAMF" in text  # published, with where it comes from
    assert "roofline model" in text and "GPT-2 medium" in text  # the published paper's measurement
    # without a GPU the profiler still runs: the naive attention's CPU operators, labelled as the CPU's
    if importlib.util.find_spec("torch") is not None:
        assert "profiled on the CPU that ran this page" in text and "aten::bmm" in text
        assert "aten::_softmax" in text


def test_views_show_recorded_gpu_results(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from ampere import device, results, tables

    common = {"kind": "measured", "benchmark": "kernels", "gpu": A100, "source": "kernels-a100-sxm4-80gb.json",
              "where": "recorded on NVIDIA A100-SXM4-80GB (sm80), 2026-12-01, torch 2.13.0", "date": "2026-12-01"}
    recs = [results.Record(figures={"tflop_per_s": 280.0, "time_ms": 0.49}, id="k#0", **common,
                           params={"kind": "matmul-torch", "m": 4096, "n": 4096, "k": 4096}),
            results.Record(figures={"tflop_per_s": 230.0, "time_ms": 0.6}, id="k#1", **common,
                           params={"kind": "matmul-triton", "m": 4096, "block_m": 128, "block_n": 128, "block_k": 64,
                                   "num_stages": 3}),
            results.Record(figures={"tflop_per_s": 100.0, "time_ms": 1.4}, id="k#2", **common,
                           params={"kind": "attention-triton-flash", "batch": 4, "heads": 16, "seq": 4096,
                                   "head_dim": 64})]
    monkeypatch.setattr(results, "records", lambda **kw: [r for r in recs if kw.get("kind") in (None, r.kind)])
    shown = []
    monkeypatch.setattr(tables, "show_md", lambda text: shown.append(text))
    info = device.probe(force="cpu")
    kernels.show_matmul(info)
    kernels.show_attention(info)
    text = "\n".join(shown)
    assert "recorded yet" not in text  # recorded results replace the model-only fallback
    assert "Triton 128x128x64, 3 st., 4096^3" in text and "cuBLAS, 4096^3" in text and "| 280 |" in text
    assert "Triton flash, fwd, N=4096" in text and "1.400" in text and "recorded on NVIDIA A100" in text
