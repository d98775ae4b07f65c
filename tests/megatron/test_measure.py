"""One layer's GEMMs measured and the benchmark entry (ampere/megatron/measure.py; chapter: Megatron-LM,
section "A throughput model built from hardware", Measured)."""

from __future__ import annotations

import pytest

from ampere import megatron as M


def test_layer_gemm_shapes_and_cpu_measurement():
    pytest.importorskip("torch")
    cfg = M.GPTConfig(layers=2, hidden=64, heads=4, vocab=128, seq=32)
    shapes = M.layer_gemm_shapes(cfg, tensor=2, microbatch=2)
    flops = sum(2 * g["m"] * g["n"] * g["k"] * g["batch"] for g in shapes)
    assert flops == pytest.approx((24 * 2 * 32 * 64**2 + 4 * 2 * 32**2 * 64) / 2)  # forward FLOPs / t
    recs = M.measure_layer_gemms(cfg, 2, 2, device="cpu", dtype="fp32", warmup_s=0.0, max_time_s=0.05)
    assert [r["name"] for r in recs] == [g["name"] for g in shapes]
    assert all(r["measured_s"] > 0 and r["model_s"] is None for r in recs)
    with pytest.raises(ValueError, match="dtype must be one of"):
        M.measure_layer_gemms(cfg, dtype="int8")
    with pytest.raises(ValueError, match="tensor=3"):
        M.layer_gemm_shapes(cfg, tensor=3)


def test_bench_runs_its_whole_path_on_the_cpu(capsys):
    import time

    start = time.perf_counter()
    assert M.bench_main(["--device", "cpu", "--quick", "--no-save"]) == 0
    assert time.perf_counter() - start <= 60
    out = capsys.readouterr().out
    assert "not a GPU measurement" in out and "6 shapes" in out
    assert out.count("TFLOP/s") >= 6  # every shape measured
    assert M.bench_main(["--no-save", "--device", "cpu", "--rows", "1T", "2T"]) == 2  # bad rows are refused before measuring
    assert "unknown row(s) ['2T']" in capsys.readouterr().err


def test_bench_cpu_result_is_marked_cpu(monkeypatch):
    saved = {}
    from ampere import benchcli

    monkeypatch.setattr(benchcli, "finish_bench", lambda result, args, summary: saved.setdefault("r", result) and 0)
    assert M.bench_main(["--device", "cpu", "--quick"]) == 0
    assert saved["r"]["device"]["backend"] == "cpu"

