"""Tests of ampere.interconnect.allreduce: the all-reduce model beside real numbers.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

import pytest

from ampere import interconnect as ic
from ampere.interconnect import measure

from .test_measure import _per_rank
from .test_rows import _bib_keys


def test_allreduce_model_busbw_is_the_ring_in_a_node_and_a_rail_ring_across():
    from ampere import collectives, fabrics

    S = 4 * 2**30
    t = collectives.collective_time("all_reduce", S, 8, fabrics.A100_INTRA_BYTES_PER_S, fabrics.A100_INTRA_LATENCY_S,
                                    overhead_s=fabrics.A100_INTRA_OVERHEAD_S)
    assert ic.allreduce_model_busbw("A100-SXM4-80GB", 8, size_bytes=S) == pytest.approx(1.75 * S / t)
    # two nodes with 4 HDR adapters: the rings share 100 GB/s per node, busbw just under it
    two = ic.allreduce_model_busbw("A100-SXM4-80GB", 16, 2, hcas_per_node=4, size_bytes=S)
    assert 0.99 * 100e9 < two < 100e9
    efa = ic.allreduce_model_busbw("A100-SXM4-40GB", 16, 2, hcas_per_node=4, size_bytes=S, hca_bytes_per_s=12.5e9)
    assert efa == pytest.approx(two / 2, rel=1e-3)
    assert ic.allreduce_model_busbw("H100-SXM5-80GB", 8) > ic.allreduce_model_busbw("A100-SXM4-80GB", 8)
    with pytest.raises(ValueError, match="nodes must be an integer >= 1"):
        ic.allreduce_model_busbw("A100-SXM4-80GB", 8, nodes=0)
    with pytest.raises(ValueError, match="multiple of nodes"):
        ic.allreduce_model_busbw("A100-SXM4-80GB", 12, nodes=8)


def test_allreduce_points_show_a100_h100_h200_with_sources_and_no_keys():
    pts = ic.allreduce_points()
    gpus = {p.gpu for p in pts}
    assert {"A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"} <= gpus
    keys = _bib_keys()
    for p in pts:
        assert p.real is not None and p.model is not None and p.kind in ("published", "recorded")
        assert p.source and not any(k in p.source for k in keys)
    a100 = next(p for p in pts if p.gpu == "A100-SXM4-80GB" and "one node" in p.what and p.real > 232)
    assert 0.9 < a100.ratio < 1.05  # the ring model is within a few per cent of nccl-tests on 8 A100s
    labels = [(p.gpu, p.what) for p in pts]
    assert len(set(labels)) == len(labels), labels  # every row of the figure says which result it is
    assert "4 GiB" in a100.what  # the message size the source measured, where it gives one
    # the multi-node rows: DGX A100 (8 HDR) within 5 % of the rail-ring model, the 4-HDR nodes within 15 %
    dgx = next(p for p in pts if "8 x 200 Gb/s InfiniBand" in p.what)
    four = next(p for p in pts if "4 x 200 Gb/s InfiniBand" in p.what)
    assert 0.95 < dgx.ratio < 1.0 and 0.8 < four.ratio < 0.9
    # the largest size of a published sweep appears with its size (the OCI node, -g 8)
    assert any("8 GiB, -g 8" in p.what for p in pts)


def test_show_allreduce_without_gpus_shows_published_numbers(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from ampere import views

    shown = []
    monkeypatch.setattr(views, "show", lambda points, **kw: shown.append(list(points)))

    class NoGPU:
        backend, gpu_count = "cpu", 0

    assert ic.show_allreduce(NoGPU()) is None
    assert shown and len(shown[0]) >= 6


def test_a_measured_run_comes_first_with_its_model():
    run = measure._aggregate("all_reduce", 2, "nccl", _per_rank(([2e-3, 2e-3], [2e-3, 2.2e-3]), size=2**28))
    pts = ic.allreduce_points(run, "A100-SXM4-80GB")
    first = pts[0]
    assert first.kind == "measured" and first.source == "measured here" and first.gpu == "A100-SXM4-80GB"
    assert first.real == pytest.approx(2**28 / 2.1e-3 / 1e9)  # median of the per-sample max; busbw factor 1
    assert first.model == pytest.approx(ic.allreduce_model_busbw("A100-SXM4-80GB", 2, size_bytes=2**28) / 1e9)
    assert ic.allreduce_points(run)[0].model is None  # GPU unknown: no model, the number still shown
