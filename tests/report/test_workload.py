"""ampere.report.workload: the reference layer, its FLOPs, the Megatron model's prediction per GPU, the
measurement on the CPU (tiny shape), and the workload probe's figure."""

import pytest

from ampere import megatron, specs
from ampere.report import probes, workload

from .helpers import _info


def test_reference_shape_flops_and_prediction():
    shape = workload.layer_shape()
    assert (shape.layers, shape.hidden, shape.heads, shape.seq) == (1, 4096, 32, 2048)
    b, s, h = 1, 2048, 4096
    assert workload.layer_flops() == 3 * (24 * b * s * h * h + 4 * b * s * s * h)
    a100, h100, h200 = (workload.predict_layer_s(g) for g in ("A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"))
    # the model stays below the dense BF16 peak, and Hopper is faster than Ampere
    for t, g in ((a100, "A100-SXM4-80GB"), (h200, "H200-SXM-141GB")):
        assert workload.layer_flops() / t < specs.get(g).peak_flops("bf16")
    assert h200 <= h100 < a100
    with pytest.raises(ValueError, match="row"):
        workload.layer_shape("2T")
    with pytest.raises(ValueError):
        workload.predict_layer_s("A100-SXM4-80GB", microbatch=0)


def test_measure_layer_runs_forward_and_backward_on_the_cpu():
    pytest.importorskip("torch")
    tiny = megatron.GPTConfig(layers=1, hidden=64, heads=4, vocab=128, seq=32)
    res = workload.measure_layer("cpu", dtype="fp32", shape=tiny)
    assert res["seconds"] > 0 and res["measurement"]["samples_s"] and res["shape"]["hidden"] == 64
    with pytest.raises(ValueError, match="heads"):
        workload.measure_layer("cpu", dtype="fp32", shape=megatron.GPTConfig(layers=1, hidden=66, heads=4,
                                                                              vocab=128, seq=32))


def test_workload_probe_figure_puts_the_model_beside_the_measurement(monkeypatch):
    pytest.importorskip("torch")
    tiny = megatron.GPTConfig(layers=1, hidden=64, heads=4, vocab=128, seq=32)
    real = workload.measure_layer
    monkeypatch.setattr(workload, "measure_layer", lambda dev, quick=True: real("cpu", dtype="fp32", shape=tiny))
    by_name = {p.name: p for p in probes.PROBES}
    info = _info(spec_name="A100-SXM4-80GB", name="NVIDIA A100-SXM4-80GB")
    assert probes.plan(info, [by_name["workload"]])[0]["status"] == "run"
    t4 = _info(name="Tesla T4", compute_capability=(7, 5), spec_name="T4", bf16_tensor=False)
    assert "BF16" in probes.plan(t4, [by_name["workload"]])[0]["reason"]
    ctx = probes.ProbeContext(info, quick=True, progress=lambda text: None)
    (fig,) = by_name["workload"].run(ctx)
    assert fig["key"] == "workload/layer-7.5B/bf16" and fig["unit"] == "TFLOP/s" and fig["value"] > 0
    assert fig["model"] == pytest.approx(workload.layer_flops() / workload.predict_layer_s("A100-SXM4-80GB") / 1e12)
    assert fig["measurement"]["samples_s"]


def test_prediction_and_share_rows_are_printable():
    from ampere.report import config_checks

    rows = workload.prediction_rows()
    assert [r["GPU"] for r in rows] == ["A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB"]
    assert all(0 < int(r["% of dense BF16 peak"]) < 100 for r in rows)
    shares = config_checks.share_rows(["A100-SXM4-80GB"])
    assert shares[0]["compute"].endswith(" %") and set(shares[0]) == {"GPU", "network", "compute",
                                                                         "NVLink collectives", "network collectives"}
    assert shares[0]["network"] == "8 x 200 Gb/s"
    with pytest.raises(ValueError):
        workload.prediction_rows(("Voodoo-3",))
