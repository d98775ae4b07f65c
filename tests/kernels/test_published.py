"""Tests of ampere/kernels/published.py: the published records the chapter reads. Chapter: Programming the
A100's SM."""

from __future__ import annotations

from ampere import kernels, specs

A100 = "A100-SXM4-80GB"


def test_published_l2_read_comes_from_the_data():
    bw, rec = kernels.published_l2_read(A100)
    assert rec.benchmark == "l2-sweep" and rec.kind == "published"
    assert 0.5 * specs.get(A100).l2_bytes_per_s < bw <= specs.get(A100).l2_bytes_per_s
    assert kernels.published_l2_read("T4") is None


def test_published_flashattention_pair():
    recs = kernels.published_attention()
    assert [r.params["algorithm"] for r in recs] == ["standard", "flash"]
    assert all(r.source == "dao2022flashattention" and "Figure 2" in r.where for r in recs)
    time_ratio, traffic_ratio = kernels.published_flash_ratios()
    assert 1 < time_ratio < traffic_ratio  # fewer bytes, faster, but not by the full traffic ratio
