"""Tests of ampere/hbm/views.py (the chapter's views). Chapter: HBM and the memory hierarchy.

On the CPU: published numbers beside the model, with sources, never "missing"; on the fake CUDA device
(tests/fakecuda.py): measured here, first.
"""

from __future__ import annotations

import pytest

from ampere import hbm, specs
from ampere.hbm import views as hbm_views

from ..fakecuda import fake_cuda  # noqa: F401

MiB = 2**20


def test_bandwidth_points_show_a100_and_h200_with_sources():
    pts = hbm.bandwidth_points(None)
    gpus = {p.gpu for p in pts}
    assert {"A100-SXM4-80GB", "A100-SXM4-40GB", "H200-SXM-141GB"} <= gpus
    for p in pts:
        assert p.model == specs.get(p.gpu).hbm_bytes_per_s / 1e9 and 0.5 < p.ratio < 1.0  # H200 read: 0.57
        assert "ernstgpubenches" not in p.source and "commit" in p.source
    from ampere import views

    table = views.table(pts, model_label="datasheet", real_label="reached", digits=0)
    assert "A100-SXM4-80GB" in table and "×" in table


def test_views_run_on_the_cpu(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    shown = []
    from ampere import tables

    monkeypatch.setattr(tables, "show_md", lambda text: shown.append(text))

    from ampere import device

    def CPU():  # the device a CPU-only machine probes (a DeviceInfo: the views refuse anything else)
        return device.DeviceInfo("cpu", "a CPU")

    with pytest.raises(TypeError, match="info must be a DeviceInfo"):
        hbm.show_bandwidth(object())
    pts = hbm.show_bandwidth(CPU())
    assert pts and all(p.kind == "published" for p in pts)
    sweeps = hbm.show_l2_sweep(CPU())
    assert {s.gpu for s in sweeps} >= {"A100-SXM4-80GB", "H200-SXM-141GB"}
    assert hbm.show_capacity(CPU()) is None
    rows = {r["GPU"]: r for r in hbm.capacity_rows()}
    a100 = rows["A100-SXM4-80GB"]
    assert a100["physical (GiB)"] == 80 and a100["nvidia-smi total (MiB)"] == "81,920"
    assert a100["CUDA total (GB)"] == "85.10" and a100["usable with the 5% reserve (GB)"] == pytest.approx(80.845, abs=0.01)
    assert 0.99 < a100["CUDA / physical"] < 0.995
    coal = hbm.show_coalescing(CPU())
    assert coal and all(p.kind == "published" and p.model is not None and p.real is not None for p in coal)
    text = "\n".join(shown)
    assert "L2 plateau" in text and "knee" in text and "80" in text
    assert "offset copy" in text and "section 10.2.1.3" in text
    for word in ("not measured", "no recorded", "missing", "ernstgpubenches"):
        assert word not in text


def test_zero_points_match_the_paper():
    pts = hbm.zero_points()
    assert len(pts) == 4 and all(abs(p.ratio - 1) < 0.02 for p in pts)
    assert all("Rajbhandari" in p.source for p in pts)


def test_views_measure_on_a_fake_gpu(fake_cuda, monkeypatch):  # noqa: F811
    import matplotlib

    matplotlib.use("Agg")
    from ampere import device, tables

    fake = fake_cuda("A100-SXM4-80GB")
    fake.script_ms([2.0])
    shown = []
    monkeypatch.setattr(tables, "show_md", lambda text: shown.append(text))
    fast = dict(warmup_s=0.0, min_time_s=0.0, min_samples=3, max_time_s=1.0)
    real_bw, real_sweep = hbm.measure_bandwidth, hbm.measure_l2_sweep
    # patched where the views look them up: ampere/hbm/views.py imports them from ampere/hbm/measure.py
    called = []
    monkeypatch.setattr(hbm_views, "measure_bandwidth", lambda **kw: called.append("bw") or real_bw(**{**kw, **fast}))
    monkeypatch.setattr(hbm_views, "measure_l2_sweep",
                        lambda **kw: called.append("sweep") or real_sweep(**{**kw, **fast}))
    info = device.probe()
    assert info.backend == "cuda" and info.spec_name == "A100-SXM4-80GB"
    pts = hbm.show_bandwidth(info)
    here = [p for p in pts if p.kind == "measured"]
    assert [p.what.split()[0] for p in here] == list(hbm.KERNELS) and all(p.source == "measured here" for p in here)
    assert pts.index(here[-1]) < min(i for i, p in enumerate(pts) if p.kind == "published")  # measured first
    sweeps = hbm.show_l2_sweep(info)
    assert sweeps[0].label == "measured here" and sweeps[0].l2_bytes == 40 * MiB
    assert called == ["bw", "sweep"]  # the views measured through the fast patches above
    real_strided = hbm.measure_strided_copy
    monkeypatch.setattr(hbm_views, "measure_strided_copy", lambda **kw: real_strided(**{**kw, **fast}))
    coal = hbm.show_coalescing(info)
    here = [p for p in coal if p.kind == "measured"]
    assert len(here) == len(hbm.STRIDED_COPY_STRIDES) - 1 + len(hbm.STRIDED_COPY_OFFSETS)  # all but the reference
    assert coal.index(here[-1]) < [i for i, p in enumerate(coal) if p.kind == "published"][0]
    cap = hbm.show_capacity(info)
    # the fake reports the catalogue's CUDA total: 85.10e9 of the 80 GiB (85.90e9 bytes) physical
    assert cap.total_bytes == specs.get("A100-SXM4-80GB").cuda_visible_bytes == 85100068864
    assert cap.total_over_datasheet == pytest.approx(85100068864 / 80 / 2**30)
    assert any("measured here" in t for t in shown)
