"""ampere.report: probe selection, the comparison and its flags, atomic output, the CPU model-only run, and
the GPU path exercised on the CPU with synthetic measurements and a fake recorded H200."""

import io
import json
import os
import time

import pytest

from ampere import device, report, results, timing

H200 = dict(backend="cuda", name="NVIDIA H200", compute_capability=(9, 0), spec_name="H200-SXM-141GB",
            gpu_count=1, tf32=True, bf16_tensor=True, fp8_tensor=True, int8_tensor=True, sparse_2to4=True,
            mig_capable=True, memory_bytes=150_000_000_000, l2_bytes=60 * 2**20, torch_version="2.13.0",
            driver_version="580.1", power_limit_w=700.0)


def _info(**over):
    return device.DeviceInfo(**{**H200, **over})


def _fig(key, value, model=None, **kw):
    return {"probe": key.split("/")[0], "key": key, "label": key, "value": value, "unit": "TFLOP/s",
            "model": model, **kw}


def _rec(key, value, gpu="H200-SXM-141GB"):
    return {"key": key, "value": value, "gpu": gpu, "provenance": f"recorded on {gpu}"}


def _report_result(values, info=None, created="2026-11-30T10:00:00Z", notes=()):
    info = info or _info()
    recs = [{"probe": "matmul", "key": k, "label": k, "value": v, "unit": "TFLOP/s", "model": 989.4}
            for k, v in values.items()]
    return results.make_result("report", info, {"quick": False}, recs, notes, created_utc=created)


# --- selection and plan --------------------------------------------------------------------------------

def test_select_probes_only_skip_and_unknown():
    assert [p.name for p in report.select_probes()] == report.probe_names()
    assert [p.name for p in report.select_probes(only=["matmul", "allreduce"])] == ["matmul", "allreduce"]
    assert "matmul" not in [p.name for p in report.select_probes(skip=["matmul"])]
    with pytest.raises(ValueError, match="unknown probe"):
        report.select_probes(only=["warp-drive"])
    with pytest.raises(ValueError, match="--skip"):
        report.select_probes(skip=["nope"])


def test_plan_on_cpu_h200_and_t4():
    cpu = device.DeviceInfo(backend="cpu", name="some CPU")
    assert {r["status"] for r in report.plan(cpu, report.PROBES)} <= {"not supported", "not available"}
    rows = {r["probe"]: r for r in report.plan(_info(), report.PROBES)}
    assert rows["matmul"]["status"] == "run" and rows["sparse-2to4"]["status"] == "run"
    assert rows["hbm-copy"]["status"] == "run" and rows["l2-sweep"]["status"] == "run"
    assert rows["allreduce"]["status"] == "not supported" and "2+ GPUs" in rows["allreduce"]["reason"]
    assert report.plan(_info(gpu_count=8), report.PROBES)[-1]["status"] == "run"
    t4 = _info(name="Tesla T4", compute_capability=(7, 5), spec_name="T4", tf32=False, bf16_tensor=False,
               sparse_2to4=False)
    assert {r["probe"]: r for r in report.plan(t4, report.PROBES)}["sparse-2to4"]["status"] == "not supported"
    chosen, notes = report._matmul_precisions(t4)
    assert chosen == ["fp32", "fp16"] and len(notes) == 3
    assert report._matmul_precisions(_info())[0] == ["fp64", "fp32", "tf32", "fp16", "bf16"]


def test_missing_module_or_function_is_not_available_in_this_version():
    ghost = report.Probe("ghost", "a probe of a chapter not written yet", ("ampere.no_such_chapter:measure",),
                         report._needs_cuda, lambda ctx: [], lambda quick: 1.0)
    half = report.Probe("half", "a function not written yet", ("ampere.specs:no_such_function",),
                        report._needs_cuda, lambda ctx: [], lambda quick: 1.0)
    rows = report.plan(_info(), [ghost, half])
    assert [r["status"] for r in rows] == ["not available", "not available"]
    assert "ampere.no_such_chapter is missing" in rows[0]["reason"]
    assert "ampere.specs.no_such_function is missing" in rows[1]["reason"]


# --- the comparison --------------------------------------------------------------------------------------

def test_compare_flags_more_than_ten_percent_below_the_reference():
    recorded = [_rec("matmul/bf16/n8192", 800.0), _rec("matmul/bf16/n8192", 780.0), _rec("matmul/bf16/n8192", 820.0),
                _rec("matmul/bf16/n8192", 270.0, gpu="A100-SXM4-80GB"), _rec("matmul/fp16/n8192", 790.0)]
    figs = [_fig("matmul/bf16/n8192", 700.0, 989.4), _fig("matmul/fp16/n8192", 720.0, 989.4),
            _fig("matmul/tf32/n8192", 300.0, 494.7)]
    rows = {r["key"]: r for r in report.compare(figs, "H200-SXM-141GB", recorded)}
    bf16 = rows["matmul/bf16/n8192"]
    assert bf16["reference"] == 800.0 and bf16["reference_n"] == 3  # median of the same GPU's records
    assert bf16["flag"] and bf16["status"] == "below reference" and bf16["pct_of_reference"] == pytest.approx(87.5)
    assert bf16["pct_of_model"] == pytest.approx(100 * 700 / 989.4)
    assert bf16["others"] == [{"gpu": "A100-SXM4-80GB", "value": 270.0, "n": 1, "ratio": pytest.approx(700 / 270)}]
    assert not rows["matmul/fp16/n8192"]["flag"] and rows["matmul/fp16/n8192"]["status"] == "ok"  # 8.9 % below
    assert rows["matmul/tf32/n8192"]["status"] == "no reference" and rows["matmul/tf32/n8192"]["reference"] is None


def test_compare_direction_flaggable_and_threshold():
    rec = [_rec("lat", 1.0), _rec("knee", 1.0)]
    figs = [_fig("lat", 1.2, higher_is_better=False), _fig("knee", 0.5, flaggable=False)]
    rows = report.compare(figs, "H200-SXM-141GB", rec)
    assert rows[0]["flag"] and not rows[1]["flag"] and rows[1]["status"] == "ok"
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match="threshold"):
            report.compare([], "x", [], threshold=bad)


def test_figures_from_recorded_matmul_hbm_and_report_results():
    m = timing.Measurement("matmul bf16 8192^3", [2 * 8192**3 / 700e12] * 10)
    mm = results.make_result("matmul", _info(), {}, [{"precision": "bf16", "n": 8192, "flops": 2.0 * 8192**3,
                                                       "tflops": 1.0, "measurement": m.to_dict()}])
    fig = report.figures_from_result(mm)[0]
    assert fig["key"] == "matmul/bf16/n8192" and fig["value"] == pytest.approx(700.0)  # recomputed from samples
    assert fig["model"] == pytest.approx(989.4, abs=0.1)
    cm = timing.Measurement("copy", [1e-3] * 10)
    bw = {"params": {"experiment": "bandwidth", "kernel": "copy", "engine": "memcpy"}, "measurement": cm.to_dict(),
          "derived": {"bytes_per_s": 4.2e12, "pct_of_datasheet": 87.5}}
    sweep = [{"params": {"experiment": "l2_sweep", "footprint_bytes": f, "device_l2_bytes": 60 * 2**20},
              "derived": {"bytes_per_s": 9e12 if f <= 48 * 2**20 else 3.9e12}} for f in
             [2**20, 4 * 2**20, 8 * 2**20, 16 * 2**20, 32 * 2**20, 64 * 2**20, 128 * 2**20, 256 * 2**20]]
    hb = results.make_result("hbm", _info(), {}, [bw, *sweep])
    figs = {f["key"]: f for f in report.figures_from_result(hb)}
    assert figs["hbm/copy"]["value"] == pytest.approx(4200.0) and figs["hbm/copy"]["model"] == pytest.approx(4800.0)
    assert figs["l2/plateau"]["value"] == pytest.approx(9000.0)
    assert figs["l2/dram-plateau"]["value"] == pytest.approx(3900.0)
    assert figs["l2/knee"]["flaggable"] is False and 0.75 < figs["l2/knee"]["value"] < 1.1
    rep = _report_result({"matmul/bf16/n8192": 790.0})
    recs = report.recorded_figures([rep, mm, results.make_result("report", device.DeviceInfo("cpu", "x"), {}, [])])
    assert {(r["key"], r["gpu"]) for r in recs} == {("matmul/bf16/n8192", "H200-SXM-141GB")}
    assert all("provenance" in r and "measurement" not in r for r in recs)
    assert report.figures_from_result(results.make_result("mystery", _info(), {}, [{"a": 1}])) == []


def test_mig_slice_is_its_own_gpu_and_config_differences():
    assert report._gpu_id({"spec_name": "A100-SXM4-80GB", "mig_instance": "1g.10gb"}) == "A100-SXM4-80GB MIG 1g.10gb"
    ref = _report_result({}, info=_info(driver_version="570.0", power_limit_w=700.0))
    rows = report.config_differences(_info(power_limit_w=500.0).to_dict(), [ref])
    fields = {r["field"]: r for r in rows}
    assert fields["power limit (W)"]["this machine"] == 500.0 and fields["power limit (W)"]["reference"] == 700.0
    assert "driver" in fields and "torch" not in fields
    other = _report_result({}, info=_info(spec_name="H100-SXM5-80GB", name="NVIDIA H100 80GB HBM3"))
    assert report.config_differences(_info().to_dict(), [other]) == []


# --- output ----------------------------------------------------------------------------------------------

def test_write_text_atomic_never_leaves_half_a_file(tmp_path, monkeypatch):
    path = tmp_path / "report.html"
    report.write_text_atomic(path, "old")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(report.os, "replace", boom)
    with pytest.raises(OSError):
        report.write_text_atomic(path, "new")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["report.html"]


def test_unwritable_folder_is_a_clear_error_with_exit_code_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert report.main(["--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert "cannot be written" in err and "a-file" in err
    with pytest.raises(ValueError, match="cannot be written"):
        report.check_output_folder(blocker)
    assert report.main(["--only", "nope", "--out", str(tmp_path / "x")]) == 2
    assert report.main(["--bogus-option"]) == 2 and report.main(["--help"]) == 0


def test_cpu_model_only_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    assert report.main(["--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr()
    assert "nothing to measure" in out.out and "[" in out.err  # the progress bar goes to stderr
    res = results.load(tmp_path / "out" / "report.json")
    assert res["benchmark"] == "report" and res["records"] == [] and res["device"]["backend"] == "cpu"
    assert all(v["status"] in ("not supported", "not available") for v in res["parameters"]["probes"].values())
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Nothing to measure on this machine" in page and "data:image/png;base64," in page
    assert "Model of A100-SXM4-80GB" in page and "311.9 TFLOP/s dense" in page
    assert sorted(os.listdir(tmp_path / "out")) == ["report.html", "report.json"]
    assert report.main(["--list"]) == 0 and "matmul" in capsys.readouterr().out


def _cpu_matmul_probe(spec_name="H200-SXM-141GB"):
    from ampere import architecture, specs

    def run(ctx):
        ctx.progress("tiny CPU matmul standing in for the GPU")
        recs = architecture.matmul_sweep([32], ["fp32", "bf16"], device="cpu", warmup_s=0.0, min_time_s=0.005,
                                         max_time_s=0.2)
        return report._matmul_figures(recs, specs.get(spec_name))

    return report.Probe("matmul", "CPU stand-in", ("ampere.architecture:matmul_sweep",), lambda info: None, run,
                        lambda quick: 1.0)


def test_gpu_path_end_to_end_with_a_fake_h200_reference(tmp_path, monkeypatch):
    def broken(ctx):
        raise RuntimeError("CUDA error: an illegal memory access")

    probes = (_cpu_matmul_probe(),
              report.Probe("hbm-copy", "fails", ("ampere.hbm:measure_bandwidth",), lambda info: None, broken,
                           lambda quick: 1.0),
              report.Probe("l2-sweep", "too long", ("ampere.hbm:measure_l2_sweep",), lambda info: None, broken,
                           lambda quick: 1e6))
    monkeypatch.setattr(report, "PROBES", probes)
    # a recorded H200 reference 1000x faster than a tiny CPU matmul: every figure is flagged
    reference = _report_result({"matmul/fp32/n32": 1e3, "matmul/bf16/n32": 1e3},
                               info=_info(driver_version="570.0"))
    stream = io.StringIO()
    outcome = report.run(tmp_path, info=_info(), references=[reference], stream=stream, time_budget_s=100)
    status = {r["probe"]: r["status"] for r in outcome.plan}
    assert status == {"matmul": "measured", "hbm-copy": "failed", "l2-sweep": "skipped"}
    res = results.load(outcome.json_path)
    assert [r["key"] for r in res["records"]] == ["matmul/fp32/n32", "matmul/bf16/n32"]
    assert all(r["flag"] and r["measurement"]["samples_s"] for r in res["records"])
    assert res["records"][1]["model"] == pytest.approx(989.4, abs=0.1)
    assert any("illegal memory access" in n for n in res["notes"])
    page = outcome.html_path.read_text()
    assert "FLAG: below reference" in page and "Configuration differences" in page and "570.0" in page
    assert "2 of 2 figures" in page
    assert "tiny CPU matmul" in stream.getvalue() and "skipped (time budget)" in stream.getvalue()
    # the report itself becomes a reference: a second run compared with the first is not flagged
    again = report.run(tmp_path / "again", info=_info(), references=[res], stream=io.StringIO(), only=["matmul"])
    assert all(c["reference_n"] == 1 for c in again.comparisons)


def test_run_validates_its_arguments(tmp_path):
    with pytest.raises(ValueError, match="time_budget_s"):
        report.run(tmp_path, time_budget_s=0, references=[])
    with pytest.raises(ValueError, match="does not exist"):
        report.load_references(tmp_path / "missing")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json"):
        report.load_references(tmp_path, bundled=False)


def test_progress_bar_plain_text():
    s = io.StringIO()
    p = report.Progress(4, stream=s, width=8)
    p.update("matmul", advance=2)
    p.close()
    lines = s.getvalue().splitlines()
    assert lines[0].startswith("[####----] 2/4") and lines[-1].startswith("[########] 4/4")


def test_rendered_html_escapes_device_strings(tmp_path):
    info = _info(name="<script>alert(1)</script>")
    res = results.make_result("report", info, {"elapsed_s": 1.0}, [], ["note <b>"])
    page = report.render_html(res, [], [], [], images=False)
    assert "<script>" not in page and "&lt;script&gt;" in page and "note &lt;b&gt;" in page
    assert json.loads(json.dumps(res))  # the result stays JSON


def test_mig_slice_scales_the_model():
    figs = [_fig("matmul/bf16/n8192", 30.0, 311.9), {**_fig("hbm/copy", 200.0, 2039.0), "probe": "hbm-copy",
                                                     "unit": "GB/s"},
            {**_fig("sparse-2to4/x", 1.3, 2.0), "probe": "sparse-2to4", "unit": "x"}]
    a100 = _info(name="NVIDIA A100-SXM4-80GB MIG 1g.10gb", spec_name="A100-SXM4-80GB", mig_instance="1g.10gb")
    scaled, note = report.mig_scale(figs, a100)
    assert scaled[0]["model"] == pytest.approx(311.9 * 14 / 108) and scaled[1]["model"] == pytest.approx(2039.0 / 8)
    assert scaled[2]["model"] == 2.0 and "14 of 108 SMs" in note and figs[0]["model"] == 311.9
    assert report.mig_scale(figs, _info()) == (figs, None)
    _, note = report.mig_scale(figs, _info(spec_name="A100-SXM4-80GB", mig_instance="9g.99gb"))
    assert "full GPU" in note


def test_record_option_and_recorded_views(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    assert report.main(["--out", str(tmp_path / "o"), "--record", str(tmp_path / "data")]) == 0
    saved = list((tmp_path / "data").iterdir())
    assert len(saved) == 1 and saved[0].name.startswith("report-")
    assert "recorded result written" in capsys.readouterr().out
    recs = [_rec("matmul/bf16/n8192", 800.0), _rec("matmul/bf16/n8192", 270.0, gpu="A100-SXM4-80GB")]
    for r, model in zip(recs, (989.4, 311.9)):
        r.update(label="BF16 matmul 8192^3", unit="TFLOP/s", model=model)
    rows = report.recorded_rows(recs)
    assert [r["GPU"] for r in rows] == ["A100-SXM4-80GB", "H200-SXM-141GB"] and rows[0]["% of model"] == "86.6"
    fig = report.recorded_figure(recs)
    ax = fig.axes[0]
    assert len(ax.patches) == 2 and sorted(round(p.get_height(), 1) for p in ax.patches) == [80.9, 86.6]
    empty = report.recorded_figure([])
    assert not empty.axes[0].axison


def test_variation_rows_and_gap_cost():
    rows = {r["factor"].split(" (")[0]: r for r in report.variation_rows()}
    ff = rows["form factor: PCIe 300 W vs SXM4 400 W"]
    assert ff["ratio"] == pytest.approx(252.9 / 271.2) and not ff["flagged at 10 %"]
    assert "confounded" in ff["factor"]
    assert rows["input data"]["ratio"] == pytest.approx(257.0 / 295.0) and rows["input data"]["flagged at 10 %"]
    assert rows["MIG mode"]["ratio"] == pytest.approx(98 / 108)
    assert rows["clock under load"]["ratio"] == pytest.approx(1830 / 1980)
    assert all(r["source"] for r in rows.values())
    assert not any("2024" in r["source"] and "mle" in r["source"] for r in rows.values())  # labels, not bib keys
    cost = report.gap_cost(1000, 0.10, 0.96)
    assert cost["gpu_hours_lost"] == pytest.approx(876_000) and cost["dollars"] == pytest.approx(840_960)
    assert report.gap_cost(1000, 0.10, 1.0, hours=168)["cluster_hours_lost"] == pytest.approx(16.8)
    for bad in (dict(gpus=-1), dict(gap=1.2), dict(price_per_gpu_hour=0), dict(hours=float("inf"))):
        with pytest.raises(ValueError):
            report.gap_cost(**{**dict(gpus=8, gap=0.1, price_per_gpu_hour=1.0), **bad})
    for bad in (dict(gpus=8.5), dict(gpus=True), dict(gap="0.1"), dict(price_per_gpu_hour=None)):
        with pytest.raises(TypeError):
            report.gap_cost(**{**dict(gpus=8, gap=0.1, price_per_gpu_hour=1.0), **bad})
    import numpy as np
    assert report.gap_cost(np.int64(8), 0.1, 1.0)["gpu_hours_lost"] == pytest.approx(8 * 8766 * 0.1, rel=1e-3)


def test_import_stays_torch_free():
    import subprocess
    import sys

    code = "import sys, ampere.report as r; r.select_probes(); r.variation_rows(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr


def test_works_as_a_cli_command(monkeypatch, tmp_path, capsys):
    from ampere import cli

    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    monkeypatch.setitem(cli.COMMANDS, "report", "ampere.report:main")  # the registration the lead adds
    assert cli.main(["report", "--quick", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "report.json").exists() and "nothing to measure" in capsys.readouterr().out


def test_real_probe_functions_call_their_chapters_with_valid_arguments(monkeypatch):
    """Each probe's run function against the real chapter functions (signatures and record formats), on the
    CPU: the wrappers only shrink the sizes and pin the device; every other argument is passed through."""
    pytest.importorskip("torch")
    from ampere import architecture, hbm, interconnect

    seen = {}
    orig_mm, orig_bw, orig_l2, orig_coll = (architecture.matmul_sweep, hbm.measure_bandwidth,
                                            hbm.measure_l2_sweep, interconnect.run_collective)

    def mm(sizes, precisions, **kw):
        seen["matmul"] = kw
        return orig_mm([32], [p for p in precisions if p in ("fp32", "bf16")], **kw)

    def bw(dev, **kw):
        seen["hbm"] = kw
        return orig_bw("cpu", array_bytes=2**20, **{**kw, "max_time_s": 0.2})

    def l2(dev, **kw):
        seen["l2"] = kw
        return orig_l2("cpu", footprints=[2**14, 2**16, 2**18, 2**21], total_bytes=2**22, **{**kw, "max_time_s": 0.1})

    def coll(op, sizes, n, backend=None, **kw):
        seen["allreduce"] = (backend, kw)
        return orig_coll(op, [4096], n, backend="gloo", **{**kw, "samples": 3})

    monkeypatch.setattr(architecture, "matmul_sweep", mm)
    monkeypatch.setattr(hbm, "measure_bandwidth", bw)
    monkeypatch.setattr(hbm, "measure_l2_sweep", l2)
    monkeypatch.setattr(interconnect, "run_collective", coll)
    info = _info(gpu_count=2)
    ctx = report.ProbeContext(info, quick=True, progress=lambda text: None, deadline=float("inf"))
    probes = {p.name: p for p in report.PROBES}
    mm_figs = probes["matmul"].run(ctx)
    assert [f["key"] for f in mm_figs] == ["matmul/fp32/n32", "matmul/bf16/n32"]
    assert mm_figs[0]["model_label"] == "dense FP32 CUDA-core peak" and mm_figs[1]["model"] == pytest.approx(989.4, abs=0.1)
    copy = probes["hbm-copy"].run(ctx)
    assert [f["key"] for f in copy] == ["hbm/copy"] and copy[0]["value"] > 0 and copy[0]["measurement"]["samples_s"]
    sweep = probes["l2-sweep"].run(ctx)
    assert {"l2/plateau", "l2/dram-plateau"} <= {f["key"] for f in sweep}
    ar = probes["allreduce"].run(ctx)
    assert ar[0]["key"] == "allreduce/n2/4096" and ar[0]["unit"] == "GB/s" and ar[0]["measurement"]["samples_s"]
    assert seen["allreduce"][0] == "nccl" and seen["allreduce"][1]["timeout_s"] == 120.0
    # with little of the report's budget left, a hung NCCL rank cannot hold the run past it
    late = report.ProbeContext(info, quick=True, progress=lambda text: None, deadline=time.monotonic() + 60)
    probes["allreduce"].run(late)
    assert seen["allreduce"][1]["timeout_s"] <= 30.0


def test_fp64_label_and_configuration_fields():
    spec = report.specs.get("A100-SXM4-80GB")
    assert report._peak_label(report._model_precision(spec, "fp64")) == "dense FP64 tensor-core peak"
    assert report._peak_label("tf32") == "dense TF32 tensor peak"
    assert report._model_precision(None, "fp64") is None
    fields = dict(report.CONFIG_FIELDS)
    assert "ecc_enabled" in fields and "pcie_link" in fields
    ref = _report_result({"matmul/bf16/n8192": 700.0}, info=_info(ecc_enabled=False))
    rows = report.config_differences(_info(ecc_enabled=True).to_dict(), [ref])
    assert {"field": "ECC enabled", "this machine": True, "reference": False}.items() <= rows[0].items()


def test_published_figures_are_references_of_the_same_quantity():
    figs = report.published_figures(["A100-SXM4-80GB", "A100-SXM4-40GB"])
    keys = {f["key"] for f in figs}
    assert "hbm/read" in keys and "matmul/fp16/n8192" in keys
    assert all(f["provenance"].startswith("published: ") for f in figs)
    # the zeros-input run is not a reference (a benchmark with other data is another benchmark)
    mm = [f for f in figs if f["key"] == "matmul/fp16/n8192"]
    assert [f["value"] for f in mm] == [257.0]
    # a reader's figure is judged against the published one when nothing is recorded
    mine = [{"probe": "matmul", "key": "matmul/fp16/n8192", "label": "FP16", "value": 200.0, "unit": "TFLOP/s",
             "model": 312.0}]
    comp = report.compare(mine, "A100-SXM4-40GB", figs)[0]
    assert comp["reference"] == 257.0 and comp["flag"] and comp["reference_from"][0].startswith("published: He 2024")


def test_reference_table_groups_sources_and_gives_the_spread():
    refs = report.reference_table()
    assert refs and all(r.gpu in report.REFERENCE_GPUS for r in refs)
    mamf = [r for r in refs if r.gpu == "A100-SXM4-80GB" and r.quantity.startswith("matmul: bf16")
            and "mamf" in r.quantity]
    assert mamf and len(mamf[0].values) >= 2 and 0 < mamf[0].spread < 0.05
    rows = report.reference_rows(mamf)
    assert "–" in rows[0]["spread"] and "mle" not in rows[0]["from"]
