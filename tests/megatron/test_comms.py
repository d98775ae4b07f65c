"""The collectives of a step and what overlap costs (ampere/megatron/comms.py; chapter: Megatron-LM, sections
"Overlap: what hiding communication buys" and "ZeRO and FSDP as ideas")."""

from __future__ import annotations

import pytest

from ampere import megatron as M
from ampere.megatron import comms


def test_overlap_is_never_free_and_never_worse_than_serial():
    k = M.INPUTS["overlap_slowdown"].value
    assert 1.5 < k < 2.0  # a GEMM beside an NVLink all-gather on an A100 (nccl#1428)
    assert M.overlapped(1.0, 10.0, 1.0) == 0.0  # perfect overlap
    assert M.overlapped(1.0, 10.0) == pytest.approx(1 - 1 / k)  # compute slowed while the collective runs
    assert M.overlapped(10.0, 1.0) == pytest.approx(9.0)  # the collective outlasts the kernel
    for c, g in ((0.3, 1.0), (2.0, 1.0), (1.0, 1.0)):
        assert 0 <= M.overlapped(c, g) <= c
    with pytest.raises(ValueError, match="comm_s"):
        M.overlapped(float("nan"), 1.0)
    with pytest.raises(ValueError, match="slowdown"):
        M.overlapped(1.0, 1.0, 0.5)


def test_interference_scales_with_the_collective_rate():
    hw = M._hardware("A100-SXM4-80GB")
    assert comms.slowdown_at(hw, hw.nvl_bw) == pytest.approx(M.INPUTS["overlap_slowdown"].value)
    assert 1 < comms.slowdown_at(hw, hw.ib_bw) < 1.1


def test_data_parallel_rings_are_rail_aligned():
    hw = M._hardware("A100-SXM4-80GB")
    size = 1e9
    inside = comms.dp_collective(hw, "all_gather", size, 1, 8)
    across = comms.dp_collective(hw, "all_gather", size, 1, 64)
    one_rail = comms.dp_collective(hw, "all_gather", size, 8, 64)  # t = 8 fills the node: one adapter per group
    assert inside < across < one_rail
    net = hw.net  # the NVLink chapter's latency model: a fixed overhead per collective, one latency per hop
    # 64 ranks on 8 nodes: a rail-aligned ring crosses the network 7 times, its other 56 hops are NVLink
    assert across == pytest.approx(net.inter_overhead_s + 56 * net.intra_latency_s + 7 * net.inter_latency_s
                                   + 63 / 64 * size / min(hw.nvl_bw, 8 * hw.ib_bw))
    # t = 8: the group has one member per node, its ring runs on one rail and every hop crosses the network
    assert one_rail == pytest.approx(net.inter_overhead_s + 63 * net.inter_latency_s + 63 / 64 * size / hw.ib_bw)
    assert inside == pytest.approx(net.intra_overhead_s + 7 * net.intra_latency_s + 7 / 8 * size / hw.nvl_bw)


def test_every_collective_pays_the_nvlink_chapters_fixed_overhead():
    """A collective costs the node's fixed overhead once (about 8 us inside a DGX A100, 14 us across nodes), then
    one hop latency per step: the model of ampere.collectives.nccl_collective_time (chapter NVLink)."""
    from ampere import collectives, fabrics

    hw = M._hardware("A100-SXM4-80GB")
    assert 5e-6 < hw.net.intra_overhead_s == fabrics.DGX_A100.intra_overhead_s < 12e-6
    assert hw.net.intra_bytes_per_s == hw.nvl_bw and hw.net.hca_bytes_per_s == pytest.approx(
        fabrics.DGX_A100.hca_bytes_per_s * M.INPUTS["ib_fraction"].value)
    tiny = comms.tp_collective(hw, "all_reduce", 8.0, 8)
    assert tiny == pytest.approx(hw.net.intra_overhead_s + 14 * hw.net.intra_latency_s, rel=1e-3)
    assert comms.tp_collective(hw, "all_gather", 1e6, 8) == collectives.nccl_collective_time("all_gather", 1e6, 8, hw.net)
    assert comms.tp_collective(hw, "all_reduce", 1e6, 1) == 0.0
    send = comms.p2p_time(hw, 1e6, 8, 1, 2, False)  # two stages, two nodes
    assert send == pytest.approx(1e6 / hw.ib_bw + hw.net.inter_overhead_s + hw.net.inter_latency_s)
    for name, value in (("nvlink_overhead_s", hw.net.intra_overhead_s), ("ib_overhead_s", hw.net.inter_overhead_s),
                        ("ib_step_latency_s", hw.net.inter_latency_s)):
        assert M.INPUTS[name].value == value and M.INPUTS[name].source == "abci2021benchmark"


def test_step_collectives_of_zero_and_fsdp():
    rows = M.step_collectives(7e9, 64, microbatches=4)
    schemes = {r["scheme"] for r in rows}
    assert schemes == {"DDP (ZeRO-0)", "ZeRO-1", "ZeRO-2", "ZeRO-3 / FSDP"}
    sent = {s: sum(r["bytes sent per GPU"] for r in rows if r["scheme"] == s) for s in schemes}
    assert sent["ZeRO-1"] == pytest.approx(sent["DDP (ZeRO-0)"])  # reduce-scatter + all-gather = all-reduce
    assert sent["ZeRO-3 / FSDP"] == pytest.approx(3 * 4 / 2 * sent["DDP (ZeRO-0)"])  # 3 per microbatch, 4 of them
    with pytest.raises(ValueError, match="grad_bytes"):
        M.step_collectives(7e9, 64, grad_bytes=3)
