"""ampere.today.network: every card's node (NVSwitch, PCIe, NVLink-bridged pairs, adapters), multi-node PCIe,
and the 8-card PCIe server against the NVLink chapter's model of the same box."""

import pytest

from ampere import collectives, fabrics, interconnect, megatron, specs, today
from ampere.today import Workload
from ampere.today.network import _network

A100, A6000, A2000, H100, H200 = today.GPUS
PCIE = "A100-PCIE-80GB"


def test_each_card_lives_in_its_own_node():
    assert today.node_of(PCIE) is fabrics.A100_PCIE_SERVER  # the NVLink chapter's box itself
    assert today.node_of(A100).nvlink_domain == 8 and today.node_of(A100).hcas_per_node == 8
    assert today.node_of(H200).hca_bytes_per_s == fabrics.IB_NDR_BYTES_PER_S and today.node_of(H200).gpu == H200
    bridged = today.node_of(A6000, nvlink_bridges=True)
    assert bridged.nvlink_domain == 2 and bridged.intra_bytes_per_s == today.node_of(A6000).intra_bytes_per_s
    assert today.node_of(A2000, nvlink_bridges=True).nvlink_domain == 1  # the A2000 has no bridge
    assert today.node_of(PCIE, hcas_per_node=4).hcas_per_node == 4
    with pytest.raises(TypeError, match="nvlink_bridges"):
        today.node_of(A6000, nvlink_bridges=1)
    with pytest.raises(ValueError, match="hcas_per_node"):
        today.node_of(A6000, hcas_per_node=65)


def test_network_respects_the_nvlink_domain():
    a6000_2 = today.plan(Workload("3B", "full-finetune", mfu=0.4), A6000)
    assert a6000_2.cards == 2 and "PCIe" in a6000_2.notes[0]
    bridged = today.plan(Workload("3B", "full-finetune", mfu=0.4, nvlink_bridges=True), A6000)
    assert bridged.cards == 2 and "NVLink bridge" in bridged.notes[0]
    a6000_3 = today.plan(Workload("7B", "full-finetune", mfu=0.4), A6000)
    assert a6000_3.cards == 3 and "PCIe" in a6000_3.notes[0]
    no = today.plan(Workload("7B", "full-finetune", mfu=0.4), A2000)
    assert not no.feasible and "more than 8 cards" in no.reason
    # 16 A100s are two DGX nodes: NVLink inside a node, InfiniBand between them (never "16 cards over NVLink")
    big = today.plan(Workload("70B", "full-finetune", mfu=0.4, min_cards=16, max_cards=16), A100)
    assert big.feasible and big.cards == 16 and big.nodes == 2
    assert "2 nodes x 8 cards" in big.notes[0] and "InfiniBand" in big.notes[0]
    one_node = today.plan(Workload("7B", "full-finetune", mfu=0.4, min_cards=8), A100)
    assert one_node.nodes == 1 and "8 cards over NVLink" in one_node.notes[0]


def test_multi_node_pcie_clusters_are_planned():
    pcie = today.plan(Workload("70B", "full-finetune", min_cards=16, max_cards=64), PCIE)
    sxm = today.plan(Workload("70B", "full-finetune", min_cards=16, max_cards=64), A100)
    assert pcie.feasible and pcie.nodes >= 2 and "2 InfiniBand adapters per node" in pcie.notes[0]
    assert pcie.tokens_per_s < sxm.tokens_per_s  # PCIe inside the servers, 2 adapters instead of 8
    odd = _network(specs.get(PCIE), 12)
    assert "whole nodes" in odd.reason
    alone = _network(specs.get(PCIE), 16, hcas_per_node=0)
    assert "no network adapters" in alone.reason


def test_the_megatron_model_sees_the_real_network():
    pcie = _network(specs.get(PCIE), 8)
    node = pcie.megatron_node()
    assert node.gpus_per_node == 1 and node.hcas_per_node == 1
    # the model's rings run at the NVLink chapter's PCIe rate, not at NVSwitch's
    assert node.inter_bytes_per_s_per_gpu * megatron.INPUTS["ib_fraction"].value == pytest.approx(
        fabrics.A100_PCIE_SERVER.intra_bytes_per_s)
    dgx = _network(specs.get(A100), 8)
    assert dgx.megatron_node() is dgx.node
    # a bridged pair: tensor parallelism over NVLink, data parallelism over each card's PCIe link
    pair = _network(specs.get(A6000), 8, nvlink_bridges=True).megatron_node()
    assert pair.gpus_per_node == 2 and pair.hcas_per_node == 2
    # two bridged cards alone all-reduce over NVLink, eight over PCIe
    two = _network(specs.get(A6000), 2, nvlink_bridges=True)
    assert two.all_reduce_time(1e9) < _network(specs.get(A6000), 2).all_reduce_time(1e9)


def test_an_8_card_pcie_server_agrees_with_the_nvlink_chapter():
    c = today.pcie_server_check()
    assert c.box == fabrics.A100_PCIE_SERVER.name and c.gpus == 8
    chapter = collectives.all_reduce_time(2 * c.params, 8, fabrics.A100_PCIE_SERVER)
    assert c.chapter_all_reduce_s == pytest.approx(chapter)
    assert c.planner_all_reduce_s == pytest.approx(chapter, rel=0.01)  # the same ring over the same PCIe
    assert c.planner_efficiency == pytest.approx(c.chapter_efficiency, abs=0.01)
    ref = interconnect.data_parallel_step("8x A100 PCIe (no NVLink)", 8, tokens_per_gpu=4096)
    assert c.chapter_headline_efficiency == pytest.approx(ref.efficiency)
    assert abs(c.planner_efficiency - c.chapter_headline_efficiency) < 0.05 and c.sxm_efficiency > 0.9
    # the planner no longer times the PCIe server as an NVSwitch box (94 % of the SXM throughput before)
    w = Workload("7B", "full-finetune", min_cards=8, max_cards=8)
    assert today.plan(w, PCIE).tokens_per_s < 0.85 * today.plan(w, A100).tokens_per_s
    with pytest.raises(ValueError, match="gpus"):
        today.pcie_server_check(9)
