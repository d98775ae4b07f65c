"""ampere.mig.views: the chapter's Markdown tables and the measurement beside recorded and published numbers."""

from __future__ import annotations

import sys

import pytest

from ampere import mig, results, specs

from ..fakecuda import fake_cuda  # noqa: F401  (the CUDA test double, a fixture)
from .fakenvml import _driver_rows, fake_nvml

A40 = "A100-SXM4-40GB"
A80 = "A100-SXM4-80GB"


def test_published_instance_matmuls_sit_beside_their_model():
    recs = results.records(benchmark="mig", kind="published")
    assert len(recs) == 8 and {r.gpu for r in recs} == {"A100-SXM4-80GB", "A100-SXM4-80GB MIG 1g.10gb",
                                                        "A100-SXM4-80GB MIG 2g.20gb", "A100-SXM4-80GB MIG 3g.40gb"}
    for r in recs:  # the profile named by memory matches the SM count the source prints
        prof = r.params["profile"]
        expect = specs.get(A80).sm_count if prof is None else mig.profile(A80, prof).sm_count
        assert r.params["sm_count"] == expect
    matmul, copy = mig.instance_points(None)
    assert copy == [] and len(matmul) == 8
    for p in matmul:
        assert p.kind == "published" and p.source and 0.8 < p.ratio < 1.0  # a slice scales with its SMs
        assert p.source.endswith(("A100_10gb", "A100_20gb", "A100_40gb", "A100_80gb full GPU"))
        assert "Matrix Multiplication Benchmarks table" in p.source


def test_recorded_results_become_points(monkeypatch):
    from ampere import device

    info = device.DeviceInfo("cuda", "NVIDIA A100-SXM4-40GB MIG 1g.5gb", spec_name=A40, compute_capability=(8, 0),
                             mig_instance="1g.5gb")
    recs = [{"params": {"kernel": "matmul", "profile": "1g.5gb", "precision": "bf16", "n": 4096},
             "derived": {"flops_per_s": 3.6e13, "model_flops_per_s": 4.04e13, "ratio": 0.89}},
            {"params": {"kernel": "copy", "profile": "1g.5gb", "bytes": 2**28},
             "derived": {"copy_bytes_per_s": 1.7e11, "model_bytes_per_s": 1.94e11, "ratio": 0.87}}]
    res = results.make_result("mig", info, {"quick": True}, recs)
    monkeypatch.setattr(results, "recorded", lambda benchmark=None, gpu=None: [res] if benchmark in (None, "mig") else [])
    matmul, copy = mig.instance_points(None)
    rec = [p for p in matmul if p.kind == "recorded"]
    assert len(rec) == 1 and rec[0].real == pytest.approx(36.0) and rec[0].model == pytest.approx(40.4)
    assert rec[0].gpu == A40 and rec[0].source.startswith("recorded on NVIDIA A100-SXM4-40GB MIG 1g.5gb")
    assert len(copy) == 1 and copy[0].real == pytest.approx(170.0) and copy[0].unit == "GB/s"


def test_markdown_views(monkeypatch):
    shown = []
    from ampere import tables

    monkeypatch.setattr(tables, "show_md", shown.append)
    monkeypatch.setattr(tables, "show_html", shown.append)
    mig.show_profiles(A40)
    assert "| `1g.10gb` | 15 | 2/8 | 14 | 10 |" in shown[-1] and "5/1/1" in shown[-1] and "nvidiamig" not in shown[-1]
    mig.show_profiles("H200-SXM-141GB")
    assert "| `7g.141gb` | 0 | 8/8 | n/a |" in shown[-1]  # no sourced SM count: said so, not an empty cell
    mig.show_doc_conflicts()
    assert shown[-1].count("`1g.") == 6  # A100 40GB and 80GB: memory and L2; H100 and H200: L2 only
    assert "H100-80GB" in shown[-1] and "H200-141GB" in shown[-1]
    mig.show_validation(A40, [[("3g.20gb", 4), ("4g.20gb", 0)], [("3g.20gb", 2)]])
    assert "valid: `4g.20gb@0 + 3g.20gb@4`" in shown[-1] and "allowed starts: 0, 4" in shown[-1]
    mig.show_layouts(A40, mig.enumerate_layouts(A40, ["3g.20gb", "4g.20gb"]))
    assert shown[-1].startswith("````{dropdown} The 2 maximal layouts") and "`AAA.BBB`" in shown[-1]
    rows = mig.isolation_study(mig.SimConfig(duration_s=0.6, warmup_s=0.1), modes=("mig",))
    mig.show_isolation(rows)
    assert shown[-1].count("| mig |") == 3
    with pytest.raises(TypeError, match=r"rows\[0\] must be an IsolationRow"):
        mig.show_isolation([{"mode": "mig"}])
    assert mig.media_owners(A40) == {"jpeg": ("1g.5gb+me", "7g.40gb"), "ofa": ("1g.5gb+me", "7g.40gb")}


def test_nvml_view_without_a_driver_shows_the_guides_table(monkeypatch):
    shown = []
    from ampere import tables

    monkeypatch.setattr(tables, "show_md", shown.append)
    monkeypatch.setattr(tables, "show_html", shown.append)
    monkeypatch.setitem(sys.modules, "pynvml", None)
    mig.show_nvml(None)
    assert "`{0,2,4,6}:2`" in shown[0] and shown[1].startswith("<details")
    gpus = [{"name": "NVIDIA A100-SXM4-40GB", "mig": True, "instances": []}]
    shown.clear()
    mig.show_nvml(None, nvml=fake_nvml(gpus, _driver_rows(A40)))
    assert "against this machine's driver" in shown[0] and shown[0].count("| yes |") == 7


def test_price_and_serving_tables(monkeypatch):
    shown = []
    from ampere import tables

    monkeypatch.setattr(tables, "show_md", shown.append)
    mig.show_prices()
    assert "| A100 80GB (one GPU) | 0.96–2.29 | 0.96–2.29 | 2026 |" in shown[-1] and "seed003" not in shown[-1]
    mig.show_serving(mig.serving_costs())
    assert "| 1 x A100 80GB, 7 x 1g.10gb (MIG) | 14 |" in shown[-1]  # what each model gets
    assert "| 1 x A100 80GB, 7 x 1g.10gb (MIG) | 0.96–2.29 | 0.14–0.33 |" in shown[-1]  # what it costs
    mig.show_serving(mig.serving_costs(demand_per_s=300.0))
    assert "n/a (too slow)" in shown[-1]  # no cost per request for an option that cannot serve the demand
    with pytest.raises(ValueError, match="options must have at least 1 element"):
        mig.show_serving([])
    with pytest.raises(TypeError, match=r"options\[0\] must be a ServingOption"):
        mig.show_serving([1])


def test_views_and_figures_refuse_bad_input():
    with pytest.raises(TypeError, match="layouts"):
        mig.layout_rows(A40, 5)
    with pytest.raises(TypeError, match="layouts"):
        mig.plot_layouts(A40, 5)
    with pytest.raises(ValueError, match="empty"):
        mig.plot_layouts(A40, [])
    with pytest.raises(TypeError, match="layouts"):
        mig.show_validation(A40, 5)
    with pytest.raises(TypeError, match="title"):
        mig.show_layouts(A40, [[("7g.40gb", 0)]], title=5)
    with pytest.raises(TypeError, match="quick"):
        mig.instance_points(None, quick="yes")
    with pytest.raises(TypeError, match="layout must be a list"):
        mig.format_layout(5)
    with pytest.raises(ValueError, match=r"layout\[0\]"):
        mig.format_layout([("1g.5gb",)])
    with pytest.raises(TypeError, match="MigReport"):
        mig.compare_with_driver(None)
    with pytest.raises(TypeError, match="device_name"):
        mig.nvml_mig_report(device_name=7)


def test_the_view_measures_on_a_gpu(fake_cuda):  # noqa: F811
    """With a CUDA GPU (the test double), the section's view measures and labels the numbers 'measured here'."""
    from ampere import device

    fake = fake_cuda("A100-SXM4-40GB")
    fake.script_ms([2.0])
    info = device.probe()
    matmul, copy = mig.instance_points(info, quick=True)
    here = [p for p in matmul if p.kind == "measured"]
    assert len(here) == 1 and here[0].source == "measured here" and here[0].gpu == A40
    assert here[0].model == pytest.approx(specs.get(A40).peak_flops("bf16") / 1e12)  # a whole GPU: its peak
    assert here[0].real > 0 and here[0].ratio == pytest.approx(here[0].real / here[0].model)
    assert len(copy) == 1 and copy[0].real == pytest.approx(2 * 256 * 2**20 / 2e-3 / 1e9)
    assert copy[0].model == pytest.approx(specs.get(A40).hbm_bytes_per_s / 1e9)
    assert len(matmul) == 9  # measured here, then the eight published rows


def _natural_width(markdown: str) -> int:
    """Characters a Markdown table needs on one line: the widest cell of every column, plus separators."""
    import re

    rows = [[c.strip().replace("`", "") for c in line.strip().strip("|").split("|")]
            for line in markdown.splitlines() if line.startswith("|") and not re.fullmatch(r"[|\-: ]+", line)]
    return sum(max(len(r[i]) for r in rows) for i in range(len(rows[0]))) + 3 * (len(rows[0]) - 1) + 4


def test_data_tables_fit_a_printed_page(monkeypatch):
    """Every table of numbers and codes the chapter shows fits 100 columns (prose columns may wrap; these
    tables have none), including the table of all maximal layouts."""
    shown = []
    from ampere import tables

    monkeypatch.setattr(tables, "show_md", shown.append)
    monkeypatch.setattr(tables, "show_html", lambda html: None)
    monkeypatch.setitem(sys.modules, "pynvml", None)
    for gpu in mig.mig_gpus():
        mig.show_profiles(gpu)
    no_me = [p.name for p in mig.profiles(A40) if not p.media_extensions]
    mig.show_layouts(A40, mig.enumerate_layouts(A40, no_me), no_me)
    mig.show_layouts(A80, mig.enumerate_layouts(A80))
    mig.show_compute_instances(A40)
    mig.show_doc_conflicts()
    mig.show_nvml(None)
    mig.show_isolation(mig.isolation_study(mig.SimConfig(duration_s=0.6, warmup_s=0.1), modes=("mig", "mps")))
    assert len(shown) >= 10
    for text in shown:
        table = "\n".join(line for line in text.splitlines() if line.startswith("|"))
        assert _natural_width(table) <= 100, text[:200]


def test_capacity_is_binary_and_the_guides_driver_table_is_headed_as_the_guides(monkeypatch):
    shown = []
    from ampere import tables

    monkeypatch.setattr(tables, "show_md", shown.append)
    monkeypatch.setattr(tables, "show_html", lambda html: None)
    monkeypatch.setitem(sys.modules, "pynvml", None)
    # a memory slice of an "80GB" A100 is 10 GiB, the "10gb" of its profile name (physical capacity, binary)
    rows = {r["profile"]: r for r in mig.profile_rows(A80)}
    assert rows["`1g.10gb`"]["GiB"] == pytest.approx(10.0) and rows["`7g.80gb`"]["GiB"] == pytest.approx(80.0)
    assert {r["profile"]: r["GiB"] for r in mig.profile_rows(A40)}["`3g.20gb`"] == pytest.approx(20.0)
    # the driver reports less than the nominal share (the guide's -lgip example: 4.75 GiB for 1g.5gb)
    for p in mig.profiles(A40):
        assert p.lgip_memory_gib < float(p.memory_fraction) * specs.get(A40).memory_bytes / 2**30
    mig.show_nvml(None)
    assert shown[0].startswith("**NVIDIA's MIG User Guide: its `nvidia-smi mig -lgip` and `-lgipp` examples")
    assert "not this machine's" in shown[0] and "| 4.75 |" in shown[0]
    rows = mig.compute_instance_rows(A40)
    seven = next(r for r in rows if r["GPU instance"] == "`7g.40gb`")
    assert seven["SMs each"] == "14/28/42/56/98" and seven["shared GiB"] == pytest.approx(40.0)
    h100 = next(r for r in mig.compute_instance_rows("H100-SXM5-80GB") if r["GPU instance"] == "`3g.40gb`")
    assert h100["SMs each"] == "?/?/60"  # Hopper slices differ in SMs: no per-slice count
