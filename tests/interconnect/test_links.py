"""Tests of ampere.interconnect.links: links, the cascade, published records.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

import pytest

from ampere import interconnect as ic


def test_published_records_of_the_chapter():
    rec = ic.published(ic.A100_8GPU_BUSBW)
    assert rec.source == "nccltests175" and rec.figures["busbw_gb_per_s"] > 200
    assert ic.nvlink_cascade()[-1][1] == pytest.approx(rec.figures["busbw_gb_per_s"] * 1e9)
    assert ic.published(ic.MEGATRON_3072).benchmark == "training-throughput"
    with pytest.raises(ValueError, match="record_id must be one of"):
        ic.published("nope")


def test_alpha_beta_rows_are_the_model_coefficients():
    rows = {r["collective"]: r for r in ic.alpha_beta_rows(8)}
    assert list(rows) == list(ic.OPS)
    assert (rows["all_reduce"]["ring: steps a"], rows["all_reduce"]["ring: bytes b (x S)"]) == ("14", "1.750")
    assert (rows["all_reduce"]["tree: steps a"], rows["all_reduce"]["tree: bytes b (x S)"]) == ("6", "2.000")
    assert rows["all_gather"]["tree: steps a"] == "ring only" and rows["all_gather"]["busbw factor"] == "0.875"
    with pytest.raises(ValueError, match="n must be an integer from 1 to"):
        ic.alpha_beta_rows(0)


def test_link_table_pcie_rows_say_how_the_rate_is_derived():
    pcie = {r["link"]: r for r in ic.link_table() if r["link"].startswith("PCIe")}
    assert pcie["PCIe Gen4 x16"]["source"] == "16 GT/s per lane, 128b/130b"
    assert pcie["PCIe Gen4 x16"]["GB/s per direction"] == pytest.approx(31.5, abs=0.01)
    assert pcie["PCIe Gen5 x16"]["source"].startswith("32 GT/s")
