"""Tests of ampere.interconnect.scaling: data-parallel scaling.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

import pytest

from ampere import interconnect as ic
from ampere import specs


def test_data_parallel_step_by_hand():
    dgx = ic.systems()["DGX A100 (NVLink 3, NVSwitch)"]
    step = ic.data_parallel_step(dgx, 16, tokens_per_gpu=4096)
    compute = 6 * ic.BERT_LARGE_PARAMS * 4096 / (0.4 * specs.get("A100-SXM4-80GB").peak_flops("fp16"))
    S, n, N = 2 * ic.BERT_LARGE_PARAMS, 16, 2  # NCCL's rail ring over two nodes, by hand
    comm = (dgx.inter_overhead_s + (2 * (n - 1) - 2 * (N - 1)) * dgx.intra_latency_s + 2 * (N - 1) * dgx.inter_latency_s
            + 2 * (n - 1) / n * S / min(dgx.intra_bytes_per_s, dgx.inter_bytes_per_s))
    assert step.compute_s == pytest.approx(compute) and step.all_reduce_s == pytest.approx(comm)
    assert step.efficiency == pytest.approx(compute / (compute + comm))
    assert ic.data_parallel_step(dgx, 1, tokens_per_gpu=4096).efficiency == 1.0
    hidden = ic.data_parallel_step(dgx, 16, tokens_per_gpu=4096, overlap=1.0)
    assert hidden.exposed_s == pytest.approx(max(0.0, comm - 2 / 3 * compute)) and hidden.efficiency > step.efficiency


def test_strong_scaling_efficiency_falls_and_weak_scaling_saturates():
    name = "DGX-1 (V100, NVLink 2)"
    strong = [ic.data_parallel_step(name, n, global_tokens=ic.BERT_GLOBAL_BATCH_TOKENS).efficiency
              for n in (8, 32, 128, 256)]
    assert all(a > b for a, b in zip(strong, strong[1:]))
    weak = [ic.data_parallel_step(name, n, tokens_per_gpu=4096).efficiency for n in (64, 256, 1024)]
    assert max(weak) - min(weak) < 0.05  # the ring's bandwidth term does not grow with n
    assert ic.crossover_gpus(name, global_tokens=ic.BERT_GLOBAL_BATCH_TOKENS) == 256
    assert ic.crossover_gpus(name, tokens_per_gpu=4096) is None


def test_pcie_box_scales_worst_and_a100_moves_crossover_no_earlier_than_v100():
    kw = {"global_tokens": ic.BERT_GLOBAL_BATCH_TOKENS}
    x = {name: ic.crossover_gpus(name, **kw) for name in ic.systems()}
    assert x["8x A100 PCIe (no NVLink)"] < x["DGX-1 (V100, NVLink 2)"] <= x["DGX A100 (NVLink 3, NVSwitch)"]


def test_data_parallel_invalid_inputs():
    with pytest.raises(ValueError, match="exactly one of"):
        ic.data_parallel_step("DGX-1 (V100, NVLink 2)", 8)
    with pytest.raises(ValueError, match="system='DGX-3'"):
        ic.data_parallel_step("DGX-3", 8, tokens_per_gpu=1)
    with pytest.raises(ValueError, match="gpus=12 must be <= 8 or a multiple"):
        ic.data_parallel_step("DGX-1 (V100, NVLink 2)", 12, tokens_per_gpu=1)
    with pytest.raises(ValueError, match="achieved_fraction"):
        ic.data_parallel_step("DGX-1 (V100, NVLink 2)", 8, tokens_per_gpu=1, achieved_fraction=1.5)
    with pytest.raises(ValueError, match="overlap"):
        ic.data_parallel_step("DGX-1 (V100, NVLink 2)", 8, tokens_per_gpu=1, overlap=-0.1)


def test_systems_are_fabrics_presets():
    from ampere import fabrics

    sy = ic.systems()
    assert all(isinstance(s, fabrics.NodeNetwork) for s in sy.values())
    assert sy["DGX A100 (NVLink 3, NVSwitch)"].inter_bytes_per_s == fabrics.DGX_A100.inter_bytes_per_s
