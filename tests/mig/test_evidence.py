"""Tests of ampere.mig.evidence: published measurements of loaded MIG instances beside the model."""

import pytest

from ampere import mig


def test_published_isolation_has_one_measurement_per_channel():
    ms = mig.published_isolation()
    assert sorted(m.channel for m in ms) == sorted(mig.CHANNELS)
    assert all(m.source == "colfax2024vgpu" and m.instances_busy <= m.instances for m in ms)


def test_the_model_predicts_the_shared_link_and_the_isolated_memory():
    by = {m.channel: m for m in mig.published_isolation()}
    # PCIe: four copies at once split the link four ways, as the model's fair share says
    assert by["pcie"].model() == pytest.approx(by["pcie"].alone / 4)
    assert by["pcie"].loaded / by["pcie"].model() == pytest.approx(1.0, abs=0.01)
    # HBM: a memory slice keeps its bandwidth
    assert by["hbm"].ratio == pytest.approx(1.0) and by["hbm"].model() == by["hbm"].alone
    # compute: the model has no power channel at clock_scale 1; the measured loss is a few per cent
    assert 0.9 < by["compute"].ratio < 1.0
    assert by["compute"].model(by["compute"].ratio) == pytest.approx(by["compute"].loaded)


def test_evidence_rows_and_view(monkeypatch):
    rows = mig.isolation_evidence_rows()
    assert [r["measured / model"] for r in rows if r["channel"] in ("pcie", "hbm")] == ["1.00", "1.00"]
    assert all("colfax" not in r["source"] for r in rows)  # a label, never the bib key
    shown = []
    from ampere import tables

    monkeypatch.setattr(tables, "show_md", shown.append)
    mig.show_isolation_evidence()
    assert "Colfax Research 2024" in shown[-1] and "| pcie |" in shown[-1]


@pytest.mark.parametrize("bad", [{"channel": "power"}, {"instances_busy": 9}, {"alone": 0.0},
                                 {"loaded": float("nan")}, {"instances": True}, {"what": ""}])
def test_measurements_refuse_bad_fields(bad):
    good = vars(mig.published_isolation()[0]).copy()
    with pytest.raises((ValueError, TypeError)):
        mig.IsolationMeasurement(**{**good, **bad})
