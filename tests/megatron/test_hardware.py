"""GEMM roofline and attention efficiency (ampere/megatron/hardware.py; chapter: Megatron-LM, section
"A throughput model built from hardware")."""

from __future__ import annotations

import pytest

from ampere import megatron as M, specs


def test_gemm_roofline_and_waves():
    peak = specs.get("A100-SXM4-80GB").peak_flops("fp16")
    m, n, k = 1024, 10240, 5120
    t = M.gemm_time(m, n, k, ceiling="mamf")
    assert 2 * m * n * k / t == pytest.approx(271.2e12, rel=0.01)  # the MAMF input comes back
    from ampere import gemm

    flops, (sm, sn, sk), _rec = gemm.sustained_matmul_flops("A100-SXM4-80GB")
    assert 2 * sm * sn * sk / M.gemm_time(sm, sn, sk) == pytest.approx(flops, rel=0.01)  # the default ceiling
    assert M.gemm_time(m, n, k) > t  # a long GEMM at the power limit runs slower than the best of a search
    # a thin inner dimension is memory-bound: time = bytes / achievable HBM bandwidth
    hbm = M.INPUTS["hbm_fraction"].value * specs.get("A100-SXM4-80GB").hbm_bytes_per_s
    t_small = M.gemm_time(2048, 2048, 64, batch=64)
    assert t_small == pytest.approx(2 * (2048 * 64 * 2 + 2048 * 2048) * 64 / hbm, rel=0.02)
    # one tile more than a wave costs a whole wave
    full = M.gemm_time(256 * 9, 128 * 12, 4096)
    over = M.gemm_time(256 * 9 + 1, 128 * 12, 4096)
    assert over > 1.3 * full
    assert 2 * m * n * k / t < 0.9 * peak


def test_attention_efficiency_is_derived_from_the_published_benchmark():
    eff = M.attention_efficiency()
    b = M.ATTENTION_BENCHMARK
    roof = M.attention_core_roofline(b["gpu"], b["batch"], b["heads"], b["head_dim"], b["seq"])["total"]
    assert eff == pytest.approx(roof / 17.41e-3)
    assert 0.5 < eff < 1.0


def test_flash_attention_option_reads_the_published_timing():
    eff = M.flash_attention_efficiency()
    assert 0.2 < eff < 1.0  # below the GEMM ceiling, from dao2022flashattention Figure 2
    cfg = M.table1_config("1.7B")
    plain = M.estimate(cfg, 32, 512, 1, 1, 16)
    flash = M.estimate(cfg, 32, 512, 1, 1, 16, flash_attention=True)
    assert flash.breakdown["attention"] < plain.breakdown["attention"]
    assert flash.breakdown["layer GEMMs"] == plain.breakdown["layer GEMMs"]
    assert "flashattention-fig2-gpt2-medium-flash" in " ".join(flash.figures_used)
    with pytest.raises(TypeError, match="flash_attention must be True or False"):
        M.estimate(cfg, 32, 512, 1, 1, 16, flash_attention="yes")

