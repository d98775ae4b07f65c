"""ampere.report.runner: the CPU model-only run, the GPU path exercised on the CPU with synthetic measurements
and a fake recorded H200, MIG scaling, the --record option, the command and its errors."""

import io
import os

import pytest

from ampere import results
from ampere.report import extract, output, probes, runner

from .helpers import _fig, _info, _report_result


def test_unwritable_folder_is_a_clear_error_with_exit_code_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert runner.main(["--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert "cannot be written" in err and "a-file" in err
    with pytest.raises(ValueError, match="cannot be written"):
        output.check_output_folder(blocker)
    assert runner.main(["--only", "nope", "--out", str(tmp_path / "x")]) == 2
    assert runner.main(["--bogus-option"]) == 2 and runner.main(["--help"]) == 0


def test_cpu_model_only_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    assert runner.main(["--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr()
    assert "no CUDA GPU" in out.out and "[" in out.err  # the progress bar goes to stderr
    assert "Configuration checks (13)" in out.out and "not applicable here" in out.out
    res = results.load(tmp_path / "out" / "report.json")
    assert res["benchmark"] == "report" and res["records"] == [] and res["device"]["backend"] == "cpu"
    assert all(v["status"] in ("not supported", "not available") for v in res["parameters"]["probes"].values())
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Configuration checks" in page and "Nothing to measure on this machine" in page and "data:image/png;base64," in page
    assert "Model of A100-SXM4-80GB" in page and "311.9 TFLOP/s dense" in page
    assert sorted(os.listdir(tmp_path / "out")) == ["report.html", "report.json", "report.txt"]
    assert [c["name"] for c in res["checks"]][:2] == ["gpu-clocks", "power-limit"] and res["findings"] == []
    assert runner.main(["--list"]) == 0 and "matmul" in capsys.readouterr().out


def _cpu_matmul_probe(spec_name="H200-SXM-141GB"):
    from ampere import architecture, specs

    def run(ctx):
        ctx.progress("tiny CPU matmul standing in for the GPU")
        recs = architecture.matmul_sweep([32], ["fp32", "bf16"], device="cpu", warmup_s=0.0, min_time_s=0.005,
                                         max_time_s=0.2)
        return extract._matmul_figures(recs, specs.get(spec_name))

    return probes.Probe("matmul", "CPU stand-in", ("ampere.architecture:matmul_sweep",), lambda info: None, run,
                        lambda quick: 1.0)


def test_gpu_path_end_to_end_with_a_fake_h200_reference(tmp_path, monkeypatch):
    def broken(ctx):
        raise RuntimeError("CUDA error: an illegal memory access")

    stand_ins = (_cpu_matmul_probe(),
                 probes.Probe("hbm-copy", "fails", ("ampere.hbm:measure_bandwidth",), lambda info: None, broken,
                              lambda quick: 1.0),
                 probes.Probe("l2-sweep", "too long", ("ampere.hbm:measure_l2_sweep",), lambda info: None, broken,
                              lambda quick: 1e6))
    monkeypatch.setattr(probes, "PROBES", stand_ins)  # select_probes reads PROBES where it is defined
    # a recorded H200 reference 1000x faster than a tiny CPU matmul: every figure is flagged
    reference = _report_result({"matmul/fp32/n32": 1e3, "matmul/bf16/n32": 1e3},
                               info=_info(driver_version="570.0"))
    stream = io.StringIO()
    outcome = runner.run(tmp_path, info=_info(), references=[reference], stream=stream, time_budget_s=100)
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
    again = runner.run(tmp_path / "again", info=_info(), references=[res], stream=io.StringIO(), only=["matmul"])
    assert all(c["reference_n"] == 1 for c in again.comparisons)


def test_run_validates_its_arguments(tmp_path):
    with pytest.raises(ValueError, match="time_budget_s"):
        runner.run(tmp_path, time_budget_s=0, references=[])
    with pytest.raises(ValueError, match="does not exist"):
        extract.load_references(tmp_path / "missing")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="bad.json"):
        extract.load_references(tmp_path, bundled=False)


def test_mig_slice_scales_the_model():
    figs = [_fig("matmul/bf16/n8192", 30.0, 311.9), {**_fig("hbm/copy", 200.0, 2039.0), "probe": "hbm-copy",
                                                     "unit": "GB/s"},
            {**_fig("sparse-2to4/x", 1.3, 2.0), "probe": "sparse-2to4", "unit": "x"}]
    a100 = _info(name="NVIDIA A100-SXM4-80GB MIG 1g.10gb", spec_name="A100-SXM4-80GB", mig_instance="1g.10gb")
    scaled, note = runner.mig_scale(figs, a100)
    assert scaled[0]["model"] == pytest.approx(311.9 * 14 / 108) and scaled[1]["model"] == pytest.approx(2039.0 / 8)
    assert scaled[2]["model"] == 2.0 and "14 of 108 SMs" in note and figs[0]["model"] == 311.9
    assert runner.mig_scale(figs, _info()) == (figs, None)
    _, note = runner.mig_scale(figs, _info(spec_name="A100-SXM4-80GB", mig_instance="9g.99gb"))
    assert "full GPU" in note


def test_record_option(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    assert runner.main(["--out", str(tmp_path / "o"), "--record", str(tmp_path / "data")]) == 0
    saved = list((tmp_path / "data").iterdir())
    assert len(saved) == 1 and saved[0].name.startswith("report-")
    assert "recorded result written" in capsys.readouterr().out


def test_works_as_a_cli_command(monkeypatch, tmp_path, capsys):
    from ampere import cli

    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    monkeypatch.setitem(cli.COMMANDS, "report", "ampere.report:main")  # the registration the lead adds
    assert cli.main(["report", "--quick", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "report.json").exists() and "no CUDA GPU" in capsys.readouterr().out


def test_command_line_errors_are_one_line_and_help_is_clean(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    for argv in (["--time-budget", "inf"], ["--time-budget", "nan"], ["--time-budget", "-3"],
                 ["--time-budget", "soon"], ["--bogus-option"], ["--only"]):
        assert runner.main(["--out", str(tmp_path / "o"), *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "error:" in err and "Traceback" not in err, (argv, err)
    assert runner.main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "%%" not in text and "10 % below" in text and "report.txt" in text
    assert runner.main(["--out", str(tmp_path / "ok"), "--time-budget", "30", "--quick"]) == 0
    with pytest.raises(ValueError, match="finite"):
        runner.run(tmp_path / "x", time_budget_s=float("inf"), references=[])
