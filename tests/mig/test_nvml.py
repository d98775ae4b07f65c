"""ampere.mig.nvml: the read-only NVML report of MIG mode, instances and the driver's profile table."""

from __future__ import annotations

import sys
import types

import pytest

from ampere import mig

from .fakenvml import FakeNVMLError, _driver_rows, fake_nvml

A40 = "A100-SXM4-40GB"


def test_nvml_absent_or_failing_never_raises(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails as if nvidia-ml-py were missing
    r = mig.nvml_mig_report()
    assert not r.nvml and r.gpus == [] and "not installed" in r.notes[0] and "NVML did not answer" in r.summary()

    def boom():
        raise FakeNVMLError(12)

    bad = types.SimpleNamespace(nvmlInit=boom)
    r = mig.nvml_mig_report(nvml=bad, device_name="NVIDIA A100-SXM4-40GB MIG 2g.10gb")
    assert not r.nvml and r.this_process == "2g.10gb" and "could not start" in r.notes[0]
    r = mig.nvml_mig_report(nvml=fake_nvml([], deny_count=True))
    assert r.nvml and any("NVML query failed" in n or "device count" in n for n in r.notes)
    with pytest.raises(TypeError, match="nvml"):  # an argument that is not an NVML module is a caller's mistake
        mig.nvml_mig_report(nvml=object())


def test_nvml_no_mig_and_mig_disabled():
    r = mig.nvml_mig_report(nvml=fake_nvml([{"name": "Tesla T4", "mig": None, "instances": []},
                                            {"name": "NVIDIA H200", "mig": False, "instances": []}]))
    t4, h200 = r.gpus
    assert not t4.mig_capable and t4.current_mode is None and "not supported" in t4.notes[0]
    assert h200.mig_capable and h200.current_mode is False and h200.spec_name == "H200-SXM-141GB"
    assert any("needs root" in n for n in r.notes) and r.driver_version == "580.65.06"
    assert "mode disabled" in r.summary()
    assert [d.name for d in h200.instances] == [] and h200.driver_profiles == []


def test_nvml_mig_enabled_with_instances_and_the_driver_table():
    instances = [{"name": "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "uuid": "MIG-aaa", "gi": 1, "sms": 42,
                  "mib": 19968, "start": 4, "size": 4},
                 {"name": "NVIDIA A100-SXM4-40GB MIG 4g.20gb", "uuid": "MIG-bbb", "gi": 2, "sms": 56,
                  "mib": 19968, "start": 0, "size": 4}]
    gpus = [{"name": "NVIDIA A100-SXM4-40GB", "mig": True, "instances": instances}]
    r = mig.nvml_mig_report(nvml=fake_nvml(gpus, _driver_rows(A40)), visible_devices="MIG-bbb")
    g = r.gpus[0]
    assert g.current_mode and [m.profile for m in g.instances] == ["3g.20gb", "4g.20gb"]
    assert [m.placement for m in g.instances] == [(4, 4), (0, 4)]
    assert g.instances[0].memory_bytes == 19968 * 2**20 and r.this_process == "4g.20gb"
    assert mig.validate(A40, [(m.profile, m.placement[0]) for m in g.instances])
    rows = mig.compare_with_driver(r)
    assert len(rows) == 7 and all(row.agree for row in rows)
    assert "MIG device 1: 4g.20gb" in r.summary() and "inside a MIG instance: 4g.20gb" in r.summary()
    # a driver that disagrees (different SM count) is reported, not hidden
    wrong = _driver_rows(A40)
    wrong[0]["sms"] = 16
    rows = mig.compare_with_driver(mig.nvml_mig_report(nvml=fake_nvml(gpus, wrong)))
    assert [row.agree for row in rows].count(False) == 1
    # no permission for placements: instances still listed, placement unknown, a note says why
    r = mig.nvml_mig_report(nvml=fake_nvml(gpus, _driver_rows(A40), deny_placement=True))
    assert [m.placement for m in r.gpus[0].instances] == [None, None]
    assert any("insufficient permissions" in n for n in r.gpus[0].notes)
    assert r.to_dict()["gpus"][0]["instances"][0]["profile"] == "3g.20gb"
