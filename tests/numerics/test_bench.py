"""Tests of ampere.numerics.bench: ``python -m ampere bench tf32`` on the CPU (chapter: TF32 and the precision
formats)."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from ampere import numerics as N  # noqa: E402


def test_bench_main_on_cpu_writes_a_valid_result(tmp_path, capsys):
    from ampere import results

    rc = N.bench_main(["--sizes", "24", "32", "--precisions", "fp32", "tf32", "int8", "--error-ks", "16",
                       "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "skipped tf32" in out and "result written to" in out
    files = list(tmp_path.glob("tf32-*.json"))
    assert len(files) == 1
    res = results.load(files[0])
    kinds = [r.get("kind") for r in res["records"]]
    assert kinds.count("throughput") == 4 and "tf32_error" in kinds and "tf32_conversion" in kinds
    json.dumps(res)
    with pytest.raises(SystemExit):
        N.bench_main(["--sizes", "20"])
    with pytest.raises(SystemExit):  # torch._int_mm on CUDA needs more than 16 rows
        N.bench_main(["--sizes", "16"])


def test_bench_runs_its_whole_code_path_with_device_cpu_quick(capsys):
    import time

    t0 = time.perf_counter()
    assert N.bench_main(["--device", "cpu", "--quick", "--no-save"]) == 0
    assert time.perf_counter() - t0 < 60
    out = capsys.readouterr().out
    assert out.startswith("  fp64") and "TF32 benchmark on CPU" in out and "conversion probe" in out
    assert "skipped tf32: TF32 is a tensor-core mode" in out and "written to" not in out
