"""Tests of ampere.cluster.published: Selene and MLPerf.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

import pytest

from ampere import cluster as cl


def test_selene_figures():
    june, nov = cl.selene()
    assert (june.gpus, nov.gpus) == (2240, 4480)
    assert nov.hpl_efficiency == pytest.approx(63.46 / 79.215)
    assert nov.gpu_fp64_peak_flops() == pytest.approx(4480 * 19.49e12, rel=1e-3)
    assert nov.rpeak_flops < nov.gpu_fp64_peak_flops()  # Rpeak is not GPUs x 19.5 TFLOP/s
    assert 0.70 < nov.fraction_of_gpu_peak() < 0.75
    clock = nov.implied_gpu_clock_hz()
    assert 1.2e9 < clock < nov.implied_gpu_clock_hz(include_cpus=False) < 1.41e9
    assert nov.flops_per_w == pytest.approx(63.46e15 / 2646e3)
    assert june.flops_per_w == 20.5e9 and june.hpl_efficiency is None and june.implied_gpu_clock_hz() is None
    assert (june.reported_cores, nov.reported_cores) == (277_760, 555_520)


def test_mlperf_records():
    bert = [r for r in cl.mlperf("v0.7", "BERT") if r.params["scale"] == "max-scale"]
    assert len(bert) == 1 and bert[0].params["gpus"] == 2048 > cl.superpod(140).gpus
    assert bert[0].params["nodes"] * 8 == bert[0].params["gpus"] and bert[0].source == "nvidia2020mlperfblog"
    assert len(cl.mlperf("v0.7")) >= 8
    h100 = cl.mlperf(gpu="H100-SXM5-80GB")
    assert {r.params["round"] for r in h100} >= {"v2.1", "v3.0"}
    with pytest.raises(ValueError, match="round_ must be one of"):
        cl.mlperf("v9.9")
