"""The throughput model's inputs and their sources (ampere/megatron/inputs.py; chapter: Megatron-LM)."""

from __future__ import annotations

from ampere import megatron as M


def test_inputs_have_sources_in_the_bibliography():
    import pathlib

    bib = (pathlib.Path(__file__).resolve().parents[2] / "book" / "references.bib").read_text()
    keys = {i.source for i in M.INPUTS.values() if i.source} | {"narayanan2021megatron", "megatronsc21scripts",
                                                                "korthikanti2022reducing", "shoeybi2019megatron"}
    missing = sorted(k for k in keys if f"{{{k}," not in bib)
    assert not missing, missing

