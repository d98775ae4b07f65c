"""ampere.today.network: NVLink domains, nodes over InfiniBand, PCIe servers."""

from ampere import today
from ampere.today import Workload

A100, A6000, A2000, H100, H200 = today.GPUS


def test_network_respects_the_nvlink_domain():
    a6000_2 = today.plan(Workload("3B", "full-finetune", mfu=0.4), A6000)
    assert a6000_2.cards == 2 and "NVLink bridge" in a6000_2.notes[0]
    a6000_3 = today.plan(Workload("7B", "full-finetune", mfu=0.4), A6000)
    assert a6000_3.cards == 3 and "PCIe" in a6000_3.notes[0]
    no = today.plan(Workload("7B", "full-finetune", mfu=0.4), A2000)
    assert not no.feasible and "more than 8 cards" in no.reason
    # 16 A100s are two DGX nodes: NVLink inside a node, InfiniBand between them (never "16 cards over NVLink")
    big = today.plan(Workload("70B", "full-finetune", mfu=0.4, min_cards=16, max_cards=16), A100)
    assert big.feasible and big.cards == 16 and big.nodes == 2
    assert "2 nodes x 8 cards" in big.notes[0] and "InfiniBand" in big.notes[0]
    assert not any("16 cards over" in n for n in big.notes)
    one_node = today.plan(Workload("7B", "full-finetune", mfu=0.4, min_cards=8), A100)
    assert one_node.nodes == 1 and "8 cards over NVLink" in one_node.notes[0]
