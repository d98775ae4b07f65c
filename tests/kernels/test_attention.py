"""Tests of ampere/kernels/attention.py: the attention traffic, FLOPs and roofline models. Chapter:
Programming the A100's SM."""

from __future__ import annotations

import pytest

from ampere import kernels, specs

A100 = "A100-SXM4-80GB"


def test_attention_traffic_counts_and_scaling():
    n, d, m = 1024, 64, 100 * 1024
    assert kernels.attention_hbm_bytes(n, d, m, "standard") == (4 * n * d + 4 * n * n) * 2
    # standard grows as N^2 for N >> d
    r = kernels.attention_hbm_bytes(8 * n, d, m) / kernels.attention_hbm_bytes(4 * n, d, m)
    assert r == pytest.approx(4.0, rel=0.05)
    # flash: N^2 in N, 1/M in the SRAM size, d^2 in the head dimension (large N)
    f = lambda n_, d_, m_: kernels.attention_hbm_bytes(n_, d_, m_, "flash")  # noqa: E731
    assert f(16384, d, m) / f(8192, d, m) == pytest.approx(4.0, rel=0.05)
    assert f(16384, d, m) / f(16384, d, 2 * m) == pytest.approx(2.0, rel=0.05)
    assert f(16384, 128, 4 * m) / f(16384, 64, 4 * m) == pytest.approx(4.0, rel=0.1)
    assert f(n, d, m) < kernels.attention_hbm_bytes(n, d, m, "standard")
    with pytest.raises(ValueError, match="algorithm"):
        kernels.attention_hbm_bytes(n, d, m, "fast")
    with pytest.raises(ValueError, match="sram_bytes"):
        kernels.attention_hbm_bytes(n, d, 100, "flash")
    assert kernels.attention_flops(n, d, causal=True) == 2.0 * n * n * d


def test_attention_roofline_model():
    std = kernels.attention_model_ms(A100, 4, 16, 4096, 64, "standard")
    fl = kernels.attention_model_ms(A100, 4, 16, 4096, 64, "flash")
    spec = specs.get(A100)
    assert std == pytest.approx(1e3 * 64 * kernels.attention_hbm_bytes(4096, 64, 1, "standard") / spec.hbm_bytes_per_s)
    assert fl >= 1e3 * 64 * kernels.attention_flops(4096, 64) / spec.peak_flops("bf16") and fl < std
