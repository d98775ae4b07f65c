"""ampere.architecture.measure: the sweep on CPU, recorded results, the BF16 target, ``bench matmul``."""

import pytest

from ampere import architecture as arch


def test_matmul_sweep_runs_on_cpu_and_records_are_recomputable():
    from ampere import device, results

    recs = arch.matmul_sweep([32, 64], ["fp32", "bf16"], device="cpu", warmup_s=0.0, min_time_s=0.0,
                             max_time_s=0.5)
    assert [(r["precision"], r["n"]) for r in recs] == [("fp32", 32), ("fp32", 64), ("bf16", 32), ("bf16", 64)]
    assert all(r["tflops"] > 0 and r["flops"] == 2 * r["n"] ** 3 and "pct_of_peak" not in r for r in recs)
    res = results.make_result("matmul", device.probe(), {}, recs)
    rows = arch.matmul_records(res)
    assert [round(r["tflops"], 9) for r in rows] == [round(r["tflops"], 9) for r in recs]
    with pytest.raises(ValueError):
        arch.matmul_sweep([64], ["fp12"], device="cpu")
    with pytest.raises(ValueError):
        arch.matmul_sweep([0], ["fp32"], device="cpu")


def test_bf16_peak_check_reads_sweeps_and_recorded_rows():
    rows = [{"precision": "bf16", "n": 4096, "tflops": 600.0, "pct_of_peak": 60.6},
            {"precision": "bf16", "n": 8192, "tflops": 760.0, "pct_of_peak": 76.8},
            {"precision": "fp16", "n": 8192, "tflops": 700.0, "pct_of_peak": 70.7}]
    check = arch.bf16_peak_check(rows)
    assert check == {"n": 8192, "tflops": 760.0, "pct_of_peak": 76.8, "target_pct": arch.BF16_TARGET_PCT,
                     "met": True}
    assert arch.bf16_peak_check(rows, n=4096)["met"] is False
    assert arch.bf16_peak_check([{"precision": "bf16", "n": 8192, "tflops": 1.0}]) is None  # no catalogue peak
    assert arch.bf16_peak_check([]) is None


def test_bf16_peak_check_refuses_bad_arguments():
    with pytest.raises(TypeError, match="n"):
        arch.bf16_peak_check([], n=8192.0)
    with pytest.raises(ValueError, match="target_pct"):
        arch.bf16_peak_check([], target_pct=150)


def test_matmul_sweep_skips_the_rest_of_a_precision_on_out_of_memory(monkeypatch):
    import torch

    from ampere import timing

    calls = []

    def fake_benchmark(fn, **kw):
        calls.append(kw["params"]["n"])
        if kw["params"]["n"] >= 64:
            raise torch.cuda.OutOfMemoryError("simulated")
        return timing.Measurement(label="x", samples_s=[1e-3] * 10)

    monkeypatch.setattr(timing, "benchmark", fake_benchmark)
    with pytest.warns(UserWarning, match="out of memory"):
        recs = arch.matmul_sweep([32, 64, 128], ["fp32"], device="cpu")
    assert [r["n"] for r in recs] == [32] and calls == [32, 64]


def test_bench_runs_its_whole_code_path_on_the_cpu(capsys, tmp_path):
    import json
    import time

    t0 = time.perf_counter()
    assert arch.bench_main(["--device", "cpu", "--quick", "--out", str(tmp_path / "m.json")]) == 0
    assert time.perf_counter() - t0 < 60
    out = capsys.readouterr().out
    assert "matmul sweep on CPU" in out and "written to" in out
    res = json.loads((tmp_path / "m.json").read_text())
    assert res["device"]["backend"] == "cpu" and res["benchmark"] == "matmul"
    assert {r["precision"] for r in res["records"]} == {"fp32", "bf16", "fp16"}  # no TF32 mode on a CPU
    assert any("CPU code path" in n for n in res["notes"]) and any("tf32" in n for n in res["notes"])
    assert all("pct_of_peak" not in r for r in res["records"])  # a CPU has no catalogue peak
    # a CPU result is never recorded into the package's data folder
    from pathlib import Path

    data = Path(arch.__file__).resolve().parents[1] / "data"  # ampere/data, above the package folder
    assert arch.bench_main(["--device", "cpu", "--quick", "--out", str(data) + "/"]) == 2
