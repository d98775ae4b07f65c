"""Software stacks as data (ampere/megatron/stacks.py; chapter: Megatron-LM, section "Other teams, other
software")."""

from __future__ import annotations

import pytest

from ampere import megatron as M


def test_every_stack_field_has_a_meaning_and_a_source():
    assert set(M.STACKS) == {"megatron-2021", "megatron-2022", "megatron-core", "megatron-deepspeed",
                             "deepspeed-zero3", "fsdp", "ddp-flash"}
    for sw in M.STACKS.values():
        assert set(sw.sources) == set(M.STACK_FIELDS), sw.name
        for field, where in sw.sources.items():
            assert ":" in where and where.split(":")[0], (sw.name, field)  # "bibkey: where"
    assert M.software() is M.STACKS[M.DEFAULT_STACK]
    assert not M.STACKS["megatron-deepspeed"].interleave and M.STACKS["megatron-2022"].tp_overlap
    assert M.STACKS["fsdp"].zero3_prefetch == "forward" and M.STACKS["deepspeed-zero3"].zero3_prefetch == "none"


def test_software_refuses_unknown_names_and_fields():
    with pytest.raises(ValueError, match="software stack 'nemo' is not known; allowed: megatron-2021"):
        M.software("nemo")
    with pytest.raises(TypeError, match="software stack must be"):
        M.software(3)
    with pytest.raises(ValueError, match="unknown Software fields"):
        M.STACKS["fsdp"].with_(prefetch=True)
    with pytest.raises(ValueError, match="zero3_prefetch must be one of"):
        M.STACKS["fsdp"].with_(zero3_prefetch="always")
    with pytest.raises(TypeError, match="tp_overlap must be True or False"):
        M.STACKS["fsdp"].with_(tp_overlap="yes")
    changed = M.STACKS["megatron-2022"].with_(tp_overlap=False)
    assert changed.differences(M.STACKS["megatron-2022"]) == {"tp_overlap": (False, True)}
    assert "tp_overlap=False" in changed.label
