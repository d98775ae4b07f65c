"""Tests of ampere.numerics.views: the "How much faster is TF32?" view without a GPU (chapter: TF32 and the precision
formats)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402


def test_tf32_view_without_a_gpu_shows_the_published_a100_numbers(monkeypatch):
    import matplotlib.pyplot as plt

    from ampere import device, tables

    monkeypatch.setattr(tables, "show_md", lambda text: None)
    monkeypatch.setattr(plt, "show", lambda: None)
    pts = N.show_tf32(device.DeviceInfo("cpu", "test CPU"))
    assert {p.kind for p in pts} <= {"recorded", "published"} and pts
    by = {p.what.split()[0]: p for p in pts if p.kind == "published"}
    assert 0.99 < by["FP32"].ratio < 1.01 and 0.8 < by["TF32"].ratio < 0.9  # 2 x 10240^3 / 0.11 s vs 19.5 TFLOP/s
    assert all(p.source and "pytorchcudanotes" not in p.source for p in pts)
    plt.close("all")
