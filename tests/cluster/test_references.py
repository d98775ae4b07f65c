"""Tests of ampere.cluster.references: NVIDIA's SuperPOD reference architectures and their component tables.

Chapter: DGX A100 and the SuperPOD -- from one box to Selene.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ampere import cluster as cl
from ampere import results

ROOT = Path(__file__).resolve().parents[2]


def _bib_keys() -> set[str]:
    return set(re.findall(r"@\w+\{([^,]+),", (ROOT / "book" / "references.bib").read_text(encoding="utf-8")))


def test_designs_are_sourced_and_cover_four_generations():
    designs = cl.reference_designs()
    assert [d.system for d in designs] == ["DGX A100", "DGX H100", "DGX B200", "DGX B300"]
    keys = _bib_keys()
    for d in designs:
        assert d.source in keys and d.switch_source in keys and d.where
        assert d.su_nodes * 2 == d.switch_ports  # every design gives a leaf half its ports down, half up
        assert d.rails == d.gpus_per_node == 8  # one compute port per GPU
        if d.counts_table:
            assert results.table(d.counts_table)["source"] == d.source and d.counts_where
    a100 = cl.reference_design("dgx-a100")
    assert (a100.su_nodes, a100.switch_ports, a100.reference_nodes, a100.counts_table) == (20, 40, 140, "")
    assert a100.port_bytes_per_s == cl.HDR_PORT_BYTES_PER_S
    with pytest.raises(ValueError, match="design_id"):
        cl.reference_design("dgx-2")


@pytest.mark.parametrize("row", cl.reference_counts(), ids=lambda r: f"{r.design}-{r.scalable_units}su")
def test_every_published_row_is_reproduced(row):
    c = cl.compare_counts(row)
    assert c["match"], c
    f = cl.reference_fabric(row)
    assert f.leaf_switches == row.leaf_switches and f.spine_switches == row.spine_switches
    assert f.core_switches == (row.core_switches or 0)
    assert f.cables["leaf_spine"] == row.leaf_spine_cables
    if row.spine_core_cables is not None:
        assert f.cables["spine_core"] == row.spine_core_cables


def test_the_published_quirks_are_reported_not_hidden():
    h100 = cl.reference_counts("dgx-h100")
    assert [r.nodes for r in h100] == [31, 63, 95, 127]  # 32-node SUs with one DGX slot left out
    for r in h100:
        c = cl.compare_counts(r)
        assert c["gpus_consistent"] and any("UFM" in n for n in c["notes"])
        assert r.node_leaf_cables - r.gpus == 4  # the same 4 UFM cables in every row
    b300 = cl.reference_counts("dgx-b300-xdr")
    last = cl.compare_counts(b300[-1])
    assert last["match"] and not last["gpus_consistent"] and last["gpus"] == (10368, 9216)
    assert all(cl.compare_counts(r)["gpus_consistent"] for r in b300[:-1])
    assert all(not cl.compare_counts(r)["notes"] for r in cl.reference_counts("dgx-b200"))


def test_equal_multiplicity_explains_non_power_of_two_spines():
    # DGX B300: 32 leaves of 72 uplinks on 144-port spines. Counting alone allows 16 spines (32 x 72 / 144);
    # 72 cables cannot split evenly over 16, the smallest divisor of 72 that fits is 18, and NVIDIA's
    # table has 18. DGX H100 with 3 SUs: 24 leaves x 32 uplinks fit on 12 spines, NVIDIA uses 16.
    b300 = next(r for r in cl.reference_counts("dgx-b300-xdr") if r.scalable_units == 4)
    assert b300.spine_switches == 18 == cl.reference_fabric(b300).spine_switches
    assert cl.switch_lower_bound(b300.nodes, 8, 72, 144)["spine"] == 16
    h3 = next(r for r in cl.reference_counts("dgx-h100") if r.scalable_units == 3)
    assert cl.reference_fabric(h3).spine_switches == 16 == h3.spine_switches
    assert cl.switch_lower_bound(h3.nodes, 8, 32, 64)["spine"] == 12


def test_design_limits_and_validate():
    lim = cl.design_limits(cl.reference_design("dgx-b200"))
    assert lim["two_level_nodes"] == 256 and lim["three_level_nodes"] == 8192 == lim["textbook_nodes"]
    assert lim["largest_published_nodes"] == 2048 < lim["three_level_nodes"]
    b300 = cl.design_limits(cl.reference_design("dgx-b300-xdr"))
    assert b300["largest_published_nodes"] == b300["two_level_nodes"]  # the table stops where two levels do
    with pytest.raises(TypeError, match="design"):
        cl.design_limits("dgx-b200")
    with pytest.raises(TypeError, match="row"):
        cl.reference_fabric({"nodes": 20})
    lines, ok = cl.check_all()
    assert ok and len(lines) == len(cl.reference_counts()) == 15
    assert len(cl.b200_reference()) == 6 and all(r.design == "dgx-b200" for r in cl.b200_reference())


def test_design_fabric_passes_options_through():
    d = cl.reference_design("dgx-h100")
    f = d.fabric(64, uplinks_per_leaf=16, optical_tiers=("leaf_spine",))
    assert f.oversubscription == 2.0 and f.transceivers == 2 * f.cables["leaf_spine"]
    assert f.port_bytes_per_s == 50e9
    with pytest.raises(TypeError, match="nodes"):
        d.fabric("64")
