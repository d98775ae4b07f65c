"""Tests of ampere.numerics.throughput: peak ratios, published TF32 timings, speedups of throughput records,
recorded results (chapter: TF32 and the precision formats)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402


def test_peak_ratios_from_specs():
    assert N.peak_ratio("A100-SXM4-80GB") == pytest.approx(8.0)
    assert N.peak_ratio("A100-SXM4-80GB", "tf32", "fp32", sparse=True) == pytest.approx(16.0)
    assert N.peak_ratio("A100-SXM4-80GB", "tf32", "fp16") == pytest.approx(0.5)
    assert N.peak_ratio("RTX-A6000") == pytest.approx(2.0)
    (notes,) = N.published_tf32()
    assert notes.source == "pytorchcudanotes" and notes.params["k"] == 10240
    assert 6 < N.published_tf32_speedup(notes) < N.peak_ratio(notes.gpu)  # "~7x", below the 8x peak ratio
    assert notes.figures["tf32_max_error_over_mean_ratio"] > 10 * notes.figures["fp32_max_error_over_mean_ratio"]


def test_tf32_speedups_from_records():
    def rec(p, n, t):
        return {"kind": "throughput", "precision": p, "n": n, "flops": 2.0 * n**3,
                "measurement": {"label": p, "samples_s": [t] * 10}}

    records = [rec("fp32", 4096, 0.1), rec("tf32", 4096, 0.0125), rec("bf16", 4096, 0.01)]
    assert N.tf32_speedups(records) == {4096: pytest.approx(8.0)}


def test_recorded_results_is_a_list():
    assert isinstance(N.recorded_results(), list)


def test_printed_interval_and_the_published_bounds():
    from ampere.numerics import throughput

    assert throughput.printed_interval(0.11) == pytest.approx((0.105, 0.115))
    assert throughput.printed_interval(0.016) == pytest.approx((0.0155, 0.0165))
    assert throughput.printed_interval(20.0) == pytest.approx((19.95, 20.05))
    with pytest.raises(ValueError, match="value"):
        throughput.printed_interval(0.0)
    (notes,) = N.published_tf32()
    b = throughput.published_tf32_bounds(notes)
    lo, hi = b["fp32_ratio_to_peak"]
    assert lo == pytest.approx(0.958, abs=1e-3) and hi == pytest.approx(1.049, abs=1e-3)  # +-4.5 % around 1.00
    assert b["speedup_uncapped"] == pytest.approx((0.105 / 0.0165, 0.115 / 0.0155))
    # no kernel beats its peak: the FP32 time is at least 2 n^3 / 19.5 TFLOP/s, so the speedup is 6.7x to 7.4x
    t32_min = 2 * 10240**3 / 19.49184e12
    assert b["fp32_time_capped_s"] == pytest.approx((t32_min, 0.115))
    assert b["speedup"] == pytest.approx((t32_min / 0.0165, 0.115 / 0.0155))
    assert round(b["speedup"][0], 1) == 6.7 and round(b["speedup"][1], 1) == 7.4
    assert b["tf32_ratio_to_peak"][0] < 0.86 < b["tf32_ratio_to_peak"][1]
