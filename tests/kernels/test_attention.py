"""Tests of ampere/kernels/attention.py: the attention traffic, FLOPs and roofline models. Chapter:
Programming the A100's SM."""

from __future__ import annotations

import math

import pytest

from ampere import kernels, specs

A100 = "A100-SXM4-80GB"


def test_standard_counts_algorithms_0_and_3():
    n, d = 1024, 64
    assert kernels.attention_hbm_bytes(n, d) == (4 * n * d + 4 * n * n) * 2
    both = kernels.attention_hbm_bytes(n, d, passes="forward+backward")
    assert both == (4 * n * d + 4 * n * n + 8 * n * d + 7 * n * n) * 2
    # standard grows as N^2 for N >> d
    assert kernels.attention_hbm_bytes(8 * n, d) / kernels.attention_hbm_bytes(4 * n, d) == pytest.approx(4, rel=0.05)


def test_flash1_counts_algorithms_1_and_4():
    n, d, m = 1024, 64, 100 * 1024
    bc = math.ceil(m / 2 / (4 * d))
    tc = math.ceil(n / bc)
    fwd = kernels.attention_hbm_bytes(n, d, m, "flash1")
    assert fwd == (2 * n * d + tc * (3 * n * d + 4 * n)) * 2
    both = kernels.attention_hbm_bytes(n, d, m, "flash1", passes="forward+backward")
    assert both - fwd == (4 * n * d + tc * (5 * n * d + 2 * n)) * 2
    f = lambda n_, d_, m_: kernels.attention_hbm_bytes(n_, d_, m_, "flash1")  # noqa: E731
    assert f(16384, d, m) / f(8192, d, m) == pytest.approx(4.0, rel=0.05)  # N^2
    assert f(16384, d, m) / f(16384, d, 2 * m) == pytest.approx(2.0, rel=0.05)  # 1/M
    assert f(16384, 128, 4 * m) / f(16384, 64, 4 * m) == pytest.approx(4.0, rel=0.1)  # d^2
    assert f(n, d, m) < kernels.attention_hbm_bytes(n, d, m, "standard")
    with pytest.raises(ValueError, match="sram_bytes"):
        kernels.attention_hbm_bytes(n, d, 100, "flash1")
    with pytest.raises(ValueError, match="sram_bytes"):
        kernels.attention_hbm_bytes(n, d, None, "flash1")


def test_flash2_is_the_triton_kernels_loop_order():
    n, d = 4096, 64
    every = kernels.attention_hbm_bytes(n, d, None, "flash2", block_m=128)
    assert every == (2 * n * d + (n // 128) * 2 * n * d) * 2  # Q and O once, K and V once per query block
    assert kernels.attention_hbm_bytes(n, d, None, "flash2", l2_reuse=True) == 4 * n * d * 2
    causal = kernels.attention_hbm_bytes(n, d, None, "flash2", block_m=128, causal=True)
    assert causal == (2 * n * d + 2 * d * sum((i + 1) * 128 for i in range(n // 128))) * 2
    assert 0.5 * every < causal < 0.55 * every  # about half the key blocks
    # a ragged N: the last query block still reads every key
    assert kernels.attention_hbm_bytes(100, 16, None, "flash2", block_m=64) == (2 * 100 * 16 + 2 * 100 * 2 * 16) * 2
    # FA-2's order re-reads K and V per query block: more loads than FA-1 unless the L2 serves them
    m = specs.get(A100).max_shared_bytes_per_sm
    assert every > kernels.attention_hbm_bytes(n, d, m, "flash1")
    with pytest.raises(ValueError, match="backward"):
        kernels.attention_hbm_bytes(n, d, None, "flash2", passes="forward+backward")


def test_attention_flops_and_bad_input():
    n, d = 1024, 64
    assert kernels.attention_flops(n, d) == 4.0 * n * n * d
    assert kernels.attention_flops(n, d, causal=True) == 2.0 * n * n * d
    assert kernels.attention_flops(n, d, passes="forward+backward") == 12.0 * n * n * d
    assert kernels.attention_flops(n, d, passes="forward+backward", algorithm="flash1") == 14.0 * n * n * d
    for bad in ({"algorithm": "fast"}, {"passes": "backward"}):
        with pytest.raises(ValueError):
            kernels.attention_hbm_bytes(n, d, 1e5, **bad)
    with pytest.raises(TypeError):
        kernels.attention_hbm_bytes(n, d, causal=1)
    with pytest.raises(TypeError):
        kernels.attention_hbm_bytes(n, 64.0)
    with pytest.raises(ValueError):
        kernels.attention_flops(n, d, passes="forward+backward", algorithm="flash2")


def test_attention_roofline_model():
    spec = specs.get(A100)
    std = kernels.attention_model_ms(A100, 4, 16, 4096, 64, "standard")
    fl = kernels.attention_model_ms(A100, 4, 16, 4096, 64, "flash2")
    assert std == pytest.approx(1e3 * 64 * kernels.attention_hbm_bytes(4096, 64) / spec.hbm_bytes_per_s)
    assert fl == pytest.approx(1e3 * 64 * kernels.attention_flops(4096, 64) / spec.peak_flops("bf16"))  # compute-bound
    no_l2 = kernels.attention_model_ms(A100, 4, 16, 4096, 64, "flash2", l2_reuse=False)
    assert fl <= no_l2 < std
    both = kernels.attention_model_ms(A100, 64, 16, 1024, 64, "flash1", passes="forward+backward")
    assert both > kernels.attention_model_ms(A100, 64, 16, 1024, 64, "flash1")
