"""ampere.report.extract: figures from recorded matmul, hbm and report results."""

import pytest

from ampere import device, results, timing
from ampere.report import extract

from .helpers import _info, _report_result


def test_figures_from_recorded_matmul_hbm_and_report_results():
    m = timing.Measurement("matmul bf16 8192^3", [2 * 8192**3 / 700e12] * 10)
    mm = results.make_result("matmul", _info(), {}, [{"precision": "bf16", "n": 8192, "flops": 2.0 * 8192**3,
                                                       "tflops": 1.0, "measurement": m.to_dict()}])
    fig = extract.figures_from_result(mm)[0]
    assert fig["key"] == "matmul/bf16/n8192" and fig["value"] == pytest.approx(700.0)  # recomputed from samples
    assert fig["model"] == pytest.approx(989.4, abs=0.1)
    cm = timing.Measurement("copy", [1e-3] * 10)
    bw = {"params": {"experiment": "bandwidth", "kernel": "copy", "engine": "memcpy"}, "measurement": cm.to_dict(),
          "derived": {"bytes_per_s": 4.2e12, "pct_of_datasheet": 87.5}}
    sweep = [{"params": {"experiment": "l2_sweep", "footprint_bytes": f, "device_l2_bytes": 60 * 2**20},
              "derived": {"bytes_per_s": 9e12 if f <= 48 * 2**20 else 3.9e12}} for f in
             [2**20, 4 * 2**20, 8 * 2**20, 16 * 2**20, 32 * 2**20, 64 * 2**20, 128 * 2**20, 256 * 2**20]]
    hb = results.make_result("hbm", _info(), {}, [bw, *sweep])
    figs = {f["key"]: f for f in extract.figures_from_result(hb)}
    assert figs["hbm/copy"]["value"] == pytest.approx(4200.0) and figs["hbm/copy"]["model"] == pytest.approx(4800.0)
    assert figs["l2/plateau"]["value"] == pytest.approx(9000.0)
    assert figs["l2/dram-plateau"]["value"] == pytest.approx(3900.0)
    assert figs["l2/knee"]["flaggable"] is False and 0.75 < figs["l2/knee"]["value"] < 1.1
    rep = _report_result({"matmul/bf16/n8192": 790.0})
    recs = extract.recorded_figures([rep, mm, results.make_result("report", device.DeviceInfo("cpu", "x"), {}, [])])
    assert {(r["key"], r["gpu"]) for r in recs} == {("matmul/bf16/n8192", "H200-SXM-141GB")}
    assert all("provenance" in r and "measurement" not in r for r in recs)
    assert extract.figures_from_result(results.make_result("mystery", _info(), {}, [{"a": 1}])) == []
