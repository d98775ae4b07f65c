"""Tests of ampere.fabrics (node networks as data; chapters: NVLink, DGX A100 and the SuperPOD)."""

from __future__ import annotations

import numpy as np
import pytest

from ampere import fabrics as F
from ampere import specs


def test_dgx_a100_is_the_default_and_matches_its_parts():
    d = F.DGX_A100
    assert (d.gpu, d.gpus_per_node, d.nvlink_domain, d.hcas_per_node) == ("A100-SXM4-80GB", 8, 8, 8)
    assert d.intra_bytes_per_s == pytest.approx(12 * 25e9 * 0.8)  # 12 NVLink 3 links x 25 GB/s x payload
    assert d.hca_bytes_per_s == pytest.approx(25e9) and d.inter_bytes_per_s == pytest.approx(200e9)
    assert d.inter_bytes_per_s_per_gpu == pytest.approx(25e9) and d.gpus_per_hca == 1
    assert d.intra_to_inter_ratio == pytest.approx(240 / 25)
    assert F.DGX_A100_INTER_BYTES_PER_S == d.inter_bytes_per_s
    assert d.source == "nvidia2020dgxa100wp"


def test_dgx_h100_has_nvlink4_and_ndr():
    h = F.DGX_H100
    assert h.gpu == "H100-SXM5-80GB"
    assert h.intra_bytes_per_s == pytest.approx(specs.get("H100-SXM5-80GB").nvlink_bytes_per_s / 2 * 0.8)
    assert h.inter_bytes_per_s == pytest.approx(8 * 50e9)
    assert h.intra_bytes_per_s / F.DGX_A100.intra_bytes_per_s == pytest.approx(1.5)


def test_a_four_hca_node_can_be_built():
    n = F.node_network(hcas_per_node=4)
    assert n.nvlink_domain == 8 and n.gpus_per_hca == 2
    assert n.inter_bytes_per_s == pytest.approx(100e9) and n.inter_bytes_per_s_per_gpu == pytest.approx(12.5e9)
    assert n.intra_bytes_per_s == F.DGX_A100.intra_bytes_per_s
    same = F.DGX_A100.with_(hcas_per_node=4)
    assert same.inter_bytes_per_s == n.inter_bytes_per_s
    assert F.node_network(hcas_per_node=np.int64(4)).hcas_per_node == 4


def test_pcie_nodes_and_bridged_pairs():
    pcie = F.node_network("A100-PCIE-80GB")
    assert pcie.nvlink_domain == 1
    assert pcie.intra_bytes_per_s == pytest.approx(specs.get("A100-PCIE-80GB").pcie_bytes_per_s * F.PCIE_EFFICIENCY)
    pair = F.node_network("A100-PCIE-80GB", gpus_per_node=2, hcas_per_node=1)
    assert pair.nvlink_domain == 2 and pair.intra_bytes_per_s == pytest.approx(F.nvlink_effective_bytes_per_s(
        "A100-PCIE-80GB"))
    single = F.node_network("T4", gpus_per_node=4, hcas_per_node=0, hca_bytes_per_s=0)
    assert single.inter_bytes_per_s == 0 and single.intra_to_inter_ratio == float("inf")
    assert set(F.PRESETS) == {"DGX A100", "DGX H100", "DGX-1 (V100)", "8x A100 PCIe"}


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(gpus_per_node=0), ValueError, "gpus_per_node must be an integer from 1 to 1024"),
    (dict(gpus_per_node=8.0), TypeError, "gpus_per_node must be an integer"),
    (dict(hcas_per_node=-1), ValueError, "hcas_per_node must be an integer from 0 to 64"),
    (dict(hca_bytes_per_s=0.0), ValueError, "hca_bytes_per_s must be > 0 when hcas_per_node=8"),
    (dict(nvlink_domain=9), ValueError, "nvlink_domain must be an integer <= 8"),
    (dict(intra_latency_s=float("nan")), ValueError, "intra_latency_s must be a finite number"),
    (dict(gpu="A100-SXM5"), ValueError, "not in the catalogue"),
])
def test_bad_networks_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        F.node_network(**kwargs)


def test_nvlink_domain_needs_nvlink():
    with pytest.raises(ValueError, match="T4 has no NVLink"):
        F.node_network("T4", nvlink_domain=2)
    with pytest.raises(TypeError, match="name must be a string"):
        F.DGX_A100.with_(name=3)


def test_latency_terms_are_derived_from_the_named_published_logs():
    from ampere import results

    recs = {r.id: r for r in results.records(benchmark="all-reduce", kind="published")}
    for rid in F.LATENCY_RECORDS.values():
        assert rid in recs and recs[rid].source == "abci2021benchmark"
    t4 = F.tiny_all_reduce_us(F.LATENCY_RECORDS["intra_4"])
    t8 = F.tiny_all_reduce_us(F.LATENCY_RECORDS["intra_8"])
    # the two one-node floors are reproduced exactly: overhead + 2(n-1) hops
    assert (F.A100_INTRA_OVERHEAD_S + 6 * F.A100_INTRA_LATENCY_S) * 1e6 == pytest.approx(t4)
    assert (F.A100_INTRA_OVERHEAD_S + 14 * F.A100_INTRA_LATENCY_S) * 1e6 == pytest.approx(t8)
    t2 = F.tiny_all_reduce_us(F.LATENCY_RECORDS["inter_2"])
    t16 = F.tiny_all_reduce_us(F.LATENCY_RECORDS["inter_16"])
    chain = 14 * F.A100_INTRA_LATENCY_S
    assert (F.INTER_OVERHEAD_S + chain + 2 * F.INTER_LATENCY_S) * 1e6 == pytest.approx(t2)
    assert (F.INTER_OVERHEAD_S + chain + 8 * F.INTER_LATENCY_S) * 1e6 == pytest.approx(t16)
    # physical sanity: a fixed part of microseconds, sub-microsecond NVLink hops, slower network hops
    assert 5e-6 < F.A100_INTRA_OVERHEAD_S < 12e-6 and 0.2e-6 < F.A100_INTRA_LATENCY_S < 1.5e-6
    assert F.INTER_LATENCY_S > 3 * F.A100_INTRA_LATENCY_S and F.INTER_OVERHEAD_S > F.A100_INTRA_OVERHEAD_S
    d = F.DGX_A100
    assert (d.intra_overhead_s, d.inter_overhead_s) == (F.A100_INTRA_OVERHEAD_S, F.INTER_OVERHEAD_S)


def test_tiny_all_reduce_us_takes_the_median_of_8_to_64_bytes_and_refuses_bad_ids():
    from ampere import results

    rec = next(r for r in results.records(benchmark="all-reduce", kind="published")
               if r.id == "abci2-a100-8gpu-all-reduce")
    rows = sorted(t for s, t in zip(rec.figures["sweep_size_bytes"], rec.figures["sweep_time_us"]) if 8 <= s <= 64)
    assert len(rows) == 4 and F.tiny_all_reduce_us(rec.id) == pytest.approx((rows[1] + rows[2]) / 2)
    with pytest.raises(ValueError, match="record_id"):
        F.tiny_all_reduce_us("nccltests175-a100-8gpu-all-reduce")  # a peak, not a sweep
    with pytest.raises(TypeError, match="record_id must be a string"):
        F.tiny_all_reduce_us(7)


def test_ring_bytes_per_s_is_the_slower_of_nvlink_and_the_node_injection():
    assert F.DGX_A100.ring_bytes_per_s == pytest.approx(200e9)
    assert F.node_network(hcas_per_node=4).ring_bytes_per_s == pytest.approx(100e9)
    assert F.DGX_H100.ring_bytes_per_s == pytest.approx(F.DGX_H100.intra_bytes_per_s)  # 360 < 8 x 50 GB/s
    box = F.node_network("T4", gpus_per_node=4, hcas_per_node=0, hca_bytes_per_s=0)
    assert box.ring_bytes_per_s == box.intra_bytes_per_s
    with pytest.raises(ValueError, match="intra_overhead_s must be >= 0"):
        F.node_network(intra_overhead_s=-1.0)
