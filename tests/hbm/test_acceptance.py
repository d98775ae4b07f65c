"""Tests of ampere/hbm/records.py and ampere/hbm/acceptance.py (result records flattened, the acceptance
checks of a GPU run). Chapter: HBM and the memory hierarchy."""

from __future__ import annotations

from ampere import hbm


def _fake_records(copy_pct, knee_at, l2=40 * 2**20):
    bw = [{"params": {"experiment": "bandwidth", "kernel": k, "engine": "SM"},
           "derived": {"bytes_per_s": copy_pct * 20.39e9, "pct_of_datasheet": copy_pct, "copied_bytes_per_s": None}}
          for k in ("copy", "scale")]
    f = hbm.sweep_footprints(l2, 16)
    sweep = [{"params": {"experiment": "l2_sweep", "footprint_bytes": x, "device_l2_bytes": l2},
              "derived": {"bytes_per_s": 5e12 if x < knee_at else 1.8e12}} for x in f]
    return bw + sweep


def test_check_acceptance():
    ok = {c.check: c for c in hbm.check_acceptance(_fake_records(90.0, 40 * 2**20), "A100-SXM4-80GB")}
    copy = ok["copy >= 85% of the datasheet bandwidth"]
    assert copy["passed"] and copy["applies"]
    assert not ok["scale >= 85% of the datasheet bandwidth"]["applies"]  # reported, not judged
    assert ok["L2 knee within 25% of the reported L2"]["passed"]
    bad = {c.check: c for c in hbm.check_acceptance(_fake_records(80.0, 10 * 2**20), "H200-SXM-141GB")}
    assert not bad["copy >= 85% of the datasheet bandwidth"]["passed"]
    assert not bad["L2 knee within 25% of the reported L2"]["passed"]
    t4 = hbm.check_acceptance(_fake_records(70.0, 4 * 2**20, l2=4 * 2**20), "T4")
    assert not t4[0]["applies"]  # the 85% threshold is set for A100/H100/H200 only
    none = hbm.check_acceptance([], None)
    assert not any(c["applies"] for c in none)
