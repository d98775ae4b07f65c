"""Tests of ampere/hbm/published.py (the published measurements read from ampere/data). Chapter: HBM and the
memory hierarchy."""

from __future__ import annotations

import pytest

from ampere import hbm, memory, specs

GB = 1e9
MiB = 2**20


def test_published_memory_records():
    stream, sweeps = hbm.published_stream(), hbm.published_l2_sweeps()
    recs = stream + [s.record for s in sweeps]
    assert len(recs) >= 8 and len({r.gpu for r in recs}) >= 3
    for r in recs:
        assert r.source == "ernstgpubenches" and r.where and "commit" in r.where
    a100 = hbm.published_stream("A100-SXM4-80GB")[0]
    # gpu-benches cuda-stream/a100_80.txt, last row: 1880 / 1769 / 1732 / 1759 GB/s (init, read, scale, triad)
    assert [a100.figure(f"{k}_gb_per_s") for k in ("write", "read", "scale", "triad")] == [1880, 1769, 1732, 1759]
    assert 0.85 < a100.figure("read_gb_per_s") * 1e9 / specs.get("A100-SXM4-80GB").hbm_bytes_per_s < 0.9
    for sw in sweeps:
        assert len(sw.footprints) == len(sw.bytes_per_s) >= 50
        assert list(sw.footprints) == sorted(sw.footprints)
        assert sw.label and "Ernst" in sw.label and "ernstgpubenches" not in sw.label  # no bib key on the page
    with pytest.raises(ValueError, match="no published L2 sweep"):
        hbm.published_l2_sweep("T4")
    with pytest.raises(TypeError):
        hbm.published_l2_sweep(4)


def test_h200_sweep_is_judged_against_the_l2_cuda_reports():
    # CUDA reports 60 MiB of L2 on an H200 (deviceQuery), 50 MiB on an H100 SXM5; the published sweep's knee sits
    # at 0.83 of 60 MiB, the same fraction as the A100's knee of its 40 MiB (data held in both L2 partitions)
    sw = hbm.published_l2_sweep("H200-SXM-141GB")
    dq = {r["gpu"]: r for r in hbm.devicequery_check()}
    assert sw.l2_bytes == dq["H200-SXM-141GB"]["l2_bytes"] == 60 * MiB
    assert dq["H100-SXM5-80GB"]["l2_bytes"] == 50 * MiB
    k, a100 = sw.knee(), hbm.published_l2_sweep("A100-SXM4-80GB").knee()
    assert k.within and abs(k.ratio_to_l2 - a100.ratio_to_l2) < 0.02


def test_zero_figure1_rows():
    rows = hbm.zero_figure1()
    assert [r.stage for r in rows] == [0, 1, 2, 3] and rows[0].source == "rajbhandari2020zero"
    for r in rows:
        ours = memory.zero_bytes_per_param(r.stage, r.data_parallel).total * r.params / GB
        assert ours == pytest.approx(r.per_gpu_gb, abs=0.05)


def test_published_l2_plateau_is_one_rule_for_both_chapters():
    # the H200 sweep starts at 13.5 TB/s (L1 hits of the smallest footprints) and settles near 10 TB/s:
    # the plateau is the settled value, the same number the kernels chapter's hierarchy table shows
    bw, sw = hbm.published_l2_plateau("H200-SXM-141GB")
    assert sw.bytes_per_s[0] > 13e12 and 9.5e12 < bw < 10.5e12
    assert bw == sw.plateau() == sw.knee().l2_plateau_bytes_per_s
    a100, _ = hbm.published_l2_plateau("A100-SXM4-80GB")
    assert 5.3e12 < a100 < 5.5e12 and a100 < specs.get("A100-SXM4-80GB").l2_bytes_per_s
    assert hbm.published_l2_plateau("T4") is None
    with pytest.raises(TypeError):
        hbm.published_l2_plateau(None)
