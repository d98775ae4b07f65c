"""Tests of ampere.interconnect.fit: the alpha-beta fit.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

import math

import pytest

from ampere import interconnect as ic


def test_fit_recovers_alpha_and_beta_from_model_times():
    sizes = [4096 * 2**k for k in range(11)]
    times = [ic.collective_time("all_reduce", s, 4, 2e9, 30e-6) for s in sizes]
    fit = ic.fit_alpha_beta("all_reduce", 4, sizes, times)
    assert fit.latency_s == pytest.approx(30e-6, rel=1e-9)
    assert fit.link_bytes_per_s == pytest.approx(2e9, rel=1e-9)
    h = ic.holdout_check(sizes, times, "all_reduce", 4)
    assert h["max_abs_rel_error"] < 1e-9
    assert h["sizes_bytes"] == sizes[1::2]


def test_fit_keeps_parameters_non_negative_and_handles_pure_latency():
    sizes = [1e3, 1e4, 1e5, 1e6]
    flat = [1e-4] * 4  # no bandwidth term at all: B is infinite, alpha = 1e-4 / 2 steps
    fit = ic.fit_alpha_beta("all_reduce", 2, sizes, flat)
    assert fit.link_bytes_per_s == math.inf and fit.latency_s == pytest.approx(5e-5)
    assert fit.predict([1e9]) == [pytest.approx(1e-4)]
    steep = [s / 1e9 * (0.5 if s < 1e5 else 1.0) for s in sizes]  # would need a negative latency
    fit = ic.fit_alpha_beta("all_reduce", 2, sizes, steep)
    assert fit.latency_s == 0.0 and fit.link_bytes_per_s > 0


def test_fit_rejects_bad_input():
    with pytest.raises(ValueError, match="at least two distinct sizes"):
        ic.fit_alpha_beta("all_reduce", 2, [1e3, 1e3], [1e-4, 1e-4])
    with pytest.raises(ValueError, match="single rank"):
        ic.fit_alpha_beta("all_reduce", 1, [1e3, 1e4], [1e-4, 2e-4])
    with pytest.raises(ValueError, match="times_s"):
        ic.fit_alpha_beta("all_reduce", 2, [1e3, 1e4], [0.0, 2e-4])
    with pytest.raises(ValueError, match="sizes_bytes and times_s need at least 4 points"):
        ic.holdout_check([1, 2, 3], [1, 2, 3], "all_reduce", 2)
    with pytest.raises(TypeError, match="sizes_bytes"):
        ic.holdout_check(None, [1, 2, 3, 4], "all_reduce", 2)
    with pytest.raises(TypeError, match="times_s"):
        ic.fit_alpha_beta("all_reduce", 2, [1e3, 1e4], 5)
    with pytest.raises(ValueError, match="inter_algorithm"):
        ic.data_parallel_step("DGX A100 (NVLink 3, NVSwitch)", 16, tokens_per_gpu=4096.0, inter_algorithm="bus")
