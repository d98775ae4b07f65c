"""Tests of ampere.cluster.node: the DGX A100 node.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

import pytest

from ampere import cluster as cl
from ampere import fabrics, specs


@pytest.mark.parametrize("gpu", ["A100-SXM4-40GB", "A100-SXM4-80GB"])
def test_node_peaks_are_eight_gpus(gpu):
    node = cl.dgx_a100(gpu)
    spec = specs.get(gpu)
    for prec in ("fp64", "fp64_tc", "tf32", "fp16", "bf16", "int8"):
        assert node.peak_flops(prec) == pytest.approx(8 * spec.peak_flops(prec))
    # "5 petaFLOPS" is sparse FP16; dense is half of it
    assert node.peak_flops("fp16", sparse=True) / 1e15 == pytest.approx(4.99, abs=0.01)
    assert node.peak_flops("fp16") / 1e15 == pytest.approx(2.495, abs=0.001)
    with pytest.raises(ValueError, match="sparse"):
        node.peak_flops("fp64_tc", sparse=True)


def test_node_configurations_differ_by_memory_and_storage_only():
    small, big = cl.dgx_a100("A100-SXM4-40GB"), cl.dgx_a100("A100-SXM4-80GB")
    assert (small.name, big.name) == ("DGX A100 320GB", "DGX A100 640GB")
    # NVIDIA's "320GB" and "640GB" are 8 x 40 GiB and 8 x 80 GiB of physical HBM (binary units)
    assert small.gpu_memory_bytes == 320 * 2**30 and big.gpu_memory_bytes == 640 * 2**30
    row = next(r for r in cl.node_rows(small, big) if r[""].startswith("GPU memory"))
    assert row["DGX A100 320GB"] == "320 GiB = 8 x 40 GiB" and row["DGX A100 640GB"] == "640 GiB = 8 x 80 GiB"
    assert (small.host_memory_bytes, big.host_memory_bytes) == (1e12, 2e12)
    assert (small.data_storage_bytes, big.data_storage_bytes) == (15e12, 30e12)
    assert small.nics == 9 and big.nics == 10  # the seed's "nine NICs" is the 320GB system
    for attr in ("gpus", "nvswitches", "cpu_cores", "compute_nics", "max_power_w"):
        assert getattr(small, attr) == getattr(big, attr)
    assert small.cpu_cores == 128


def test_node_bandwidths():
    node = cl.dgx_a100()
    assert node.nvlink_bytes_per_s_per_gpu == 300e9
    assert node.nvswitch_fabric_bytes_per_s_bidirectional == 4.8e12
    assert node.nvlinks_per_gpu_per_nvswitch == 2
    assert node.inter_node_bytes_per_s == 200e9
    assert node.inter_node_bytes_per_s_per_gpu == 25e9
    assert node.intra_to_inter_ratio == pytest.approx(12.0)
    assert node.nvlink_effective_bytes_per_s_per_gpu == pytest.approx(240e9)
    assert node.gpu_power_fraction == pytest.approx(3200 / 6500)


@pytest.mark.parametrize("bad", ["H100-SXM5-80GB", "A100-PCIE-40GB", "nonsense"])
def test_node_refuses_other_gpus(bad):
    with pytest.raises(ValueError, match="gpu="):
        cl.dgx_a100(bad)


def test_node_sources_are_keys():
    node = cl.dgx_a100("A100-SXM4-80GB")
    assert node.source("host_memory_bytes") == "nvidia2020dgxa100ds"
    assert node.source("nvswitches") == "nvidia2020dgxa100wp"
    assert cl.dgx_a100("A100-SXM4-40GB").source("list_price_usd") == "anandtech2020ampere"
    with pytest.raises(ValueError, match="field_name"):
        node.source("colour")


def test_dgx_node_network_is_fabrics_data():
    node = cl.dgx_a100()
    assert node.network.inter_bytes_per_s == fabrics.DGX_A100.inter_bytes_per_s
    assert node.network.intra_bytes_per_s == fabrics.DGX_A100.intra_bytes_per_s
    assert node.inter_node_bytes_per_s_per_gpu == pytest.approx(25e9)
