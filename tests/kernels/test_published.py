"""Tests of ampere/kernels/published.py: the published records the chapter reads. Chapter: Programming the
A100's SM."""

from __future__ import annotations

import pytest

from ampere import kernels

A100 = "A100-SXM4-80GB"


def test_published_sram_estimate_checks_the_derived_bandwidth():
    bw, rec = kernels.published_sram_estimate(A100)
    assert rec.source == "dao2022flashattention" and rec.kind == "published"
    assert kernels.shared_memory_bandwidth(A100) == pytest.approx(bw, rel=0.03)  # 19.5 derived vs about 19
    assert kernels.published_sram_estimate("T4") is None


def test_published_flashattention_pair():
    recs = kernels.published_attention()
    assert [r.params["algorithm"] for r in recs] == ["standard", "flash"]
    assert all(r.source == "dao2022flashattention" and "Figure 2" in r.where for r in recs)
    time_ratio, traffic_ratio = kernels.published_flash_ratios()
    assert 1 < time_ratio < traffic_ratio  # fewer bytes, faster, but not by the full traffic ratio


def test_published_grouping_record():
    (rec,) = kernels.published_grouping()
    assert rec.source == "tritonmatmultutorial" and rec.gpu == "A100"
    assert rec.figures["grouped_tflop_per_s"] / rec.figures["row_major_tflop_per_s"] > 1.1  # "more than 10%"
