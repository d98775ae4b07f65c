"""Training state: ZeRO stages and the three conventions (ampere/memory/training.py; chapters: HBM "Training
state", Megatron-LM "Checked against Megatron-LM and DeepSpeed")."""

import pytest

from ampere import memory as mem
from ampere import results


def test_zero_matches_paper_figure1():
    table = results.table("zero-figure1")
    assert table["source"] == "rajbhandari2020zero"
    for row in table["rows"]:
        per = mem.zero_bytes_per_param(row["stage"], row["data_parallel"])
        assert isinstance(per, mem.StateBytes)
        ours = per.total * row["params"] / 1e9
        assert abs(ours - row["per_gpu_gb"]) <= 0.05 + 1e-9, (row, ours)


def test_zero_stages_partition_the_right_parts():
    assert mem.zero_bytes_per_param(0, 8).to_dict() == {"weights": 2, "gradients": 2, "master_weights": 4,
                                                        "optimizer_state": 8}
    s1 = mem.zero_bytes_per_param(1, 4)
    assert (s1.weights, s1.gradients, s1.master_weights, s1.optimizer_state) == (2, 2, 1, 2)
    s3 = mem.zero_bytes_per_param(3, 16)
    assert s3.total == 1.0 and mem.BYTES_PER_PARAM_MIXED_ADAM == 16
    assert mem.zero_bytes_per_param(2, 2, "fp32_adam").total == 4 + 2 + 0 + 4
    with pytest.raises(ValueError, match="stage"):
        mem.zero_bytes_per_param(4)
    with pytest.raises(ValueError, match="recipe"):
        mem.zero_bytes_per_param(1, 2, "sgd")
    with pytest.raises(ValueError, match="data_parallel"):
        mem.zero_bytes_per_param(1, 0)


def test_memory_conventions_as_their_sources_count():
    from ampere import memory

    assert set(memory.CONVENTIONS) == {"paper", "megatron", "deepspeed"}
    for n in (1, 8, 512):
        assert memory.state_bytes_per_param(0, n, "paper").total == 16
        assert memory.state_bytes_per_param(2, n, "paper").total == pytest.approx(2 + 14 / n)
        assert memory.state_bytes_per_param(0, n, "megatron").total == 18
        assert memory.state_bytes_per_param(1, n, "megatron").total == pytest.approx(6 + 12 / n)
        assert memory.state_bytes_per_param(2, n, "deepspeed").total == pytest.approx(2 + 18 / n)
        assert memory.state_bytes_per_param(3, n, "deepspeed").total == pytest.approx(18 / n)
        assert memory.state_bytes_per_param(2, n, "deepspeed", "optimizer").total == 2
        assert memory.zero_bytes_per_param(2, n).total == memory.state_bytes_per_param(2, n, "paper").total
    ds = memory.memory_convention("deepspeed")
    assert ds.stated(2) and ds.stated(3, "optimizer+params") and not ds.stated(1)
    assert memory.memory_convention("megatron").stated(1) and not memory.memory_convention("megatron").stated(3)
    shape = memory.shape_of("llama2-70b")
    assert memory.largest_module_params(shape) == 32000 * 8192  # the word embedding
    assert memory.gathered_layer_bytes(3, 1e6, "deepspeed") == 4e6 and memory.gathered_layer_bytes(3, 1e6) == 0
    with pytest.raises(ValueError, match="is not a memory convention"):
        memory.state_bytes_per_param(1, 8, "colossal")
    with pytest.raises(ValueError, match="offload"):
        memory.state_bytes_per_param(1, 8, "deepspeed", "optimizer")
