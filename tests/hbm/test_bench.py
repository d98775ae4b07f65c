"""Tests of ampere/hbm/bench.py (``python -m ampere bench hbm`` on the CPU). Chapter: HBM and the memory
hierarchy."""

from __future__ import annotations

import math
import sys
import time

import pytest

from ampere import hbm, results


def test_bench_main_cpu(tmp_path, capsys):
    rc = hbm.bench_main(["--quick", "--array-mib", "1", "--sweep-points", "3", "--kernels", "read,copy",
                         "--device", "cpu", "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "HBM benchmark on" in out and "copy" in out and "result written to" in out
    files = list(tmp_path.glob("hbm-*.json"))
    assert len(files) == 1
    res = results.load(files[0])
    assert res["device"]["backend"] == "cpu"
    exps = [r["params"]["experiment"] for r in res["records"]]
    assert exps.count("bandwidth") == 2 and exps.count("l2_sweep") == 3 and "capacity" in exps
    assert any("no CUDA GPU" in n for n in res["notes"])
    checks = next(r for r in res["records"] if r["params"]["experiment"] == "acceptance")["derived"]["checks"]
    assert {c["check"] for c in checks} >= {"copy >= 85% of the datasheet bandwidth"}
    with pytest.raises(SystemExit):
        hbm.bench_main(["--kernels", "memset", "--no-save"])
    with pytest.raises(SystemExit):
        hbm.bench_main(["--array-mib", "0", "--no-save"])
    assert math.isfinite(res["records"][0]["derived"]["bytes_per_s"])


def test_bench_whole_path_on_cpu_quick():
    # `python -m ampere bench hbm --device cpu --quick --no-save`: every kernel, the sweep, the capacity
    # cell and the acceptance checks, with tiny sizes, well within the 60 s budget (a few seconds here).
    import subprocess

    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "ampere", "bench", "hbm", "--device", "cpu", "--quick",
                          "--no-save"], capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - t0
    assert out.returncode == 0, out.stderr
    for k in hbm.KERNELS:
        assert f"  {k} " in out.stdout
    import re

    assert re.search(r"L2 sweep: \d+ footprints, 64 KiB", out.stdout) and elapsed < 60
