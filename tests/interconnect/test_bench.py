"""Tests of ampere.interconnect.bench: python -m ampere bench collectives.

Chapter: NVLink, NVSwitch and collectives.
"""

from __future__ import annotations

import pytest

from ampere import interconnect as ic
from ampere.interconnect import bench


def test_bench_main_spawn_writes_a_valid_result(tmp_path, capsys):
    from ampere import results

    rc = ic.bench_main(["--sizes", "4K,16K,64K,256K", "--samples", "3", "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "all_reduce on 2 ranks (gloo" in out and "busbw" in out
    files = list(tmp_path.glob("collectives-*.json"))
    assert len(files) == 1
    res = results.load(files[0])
    assert res["parameters"]["backend"] == "gloo" and res["parameters"]["world_size"] == 2
    coll = [r for r in res["records"] if r["params"]["kind"] == "collective"]
    assert [r["params"]["size_bytes"] for r in coll] == [4096, 16384, 65536, 262144]
    assert all(r["derived"]["verified"] for r in coll)
    assert any("alpha-beta fit" in n for n in res["notes"])


def test_bench_main_under_torchrun_environment(tmp_path):
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1",
               MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), AMPERE_DEVICE="cpu", NCCL_DEBUG="WARN")
    code = ("import sys; from ampere import interconnect as ic; "
            f"sys.exit(ic.bench_main(['--backend', 'gloo', '--sizes', '4K,8K', '--samples', '2', '--out', {str(tmp_path)!r}]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    from ampere import results

    res = results.load(next(tmp_path.glob("collectives-*.json")))
    assert res["parameters"]["launcher"] == "torchrun" and res["parameters"]["nodes"] == 1
    assert res["parameters"]["nccl_env"] == {"NCCL_DEBUG": "WARN"}


def test_bench_refuses_zero_ranks_and_unsplittable_sizes(capsys):
    with pytest.raises(SystemExit) as exc:
        ic.bench_main(["--device", "cpu", "--world-size", "0", "--no-save"])
    assert exc.value.code == 2
    assert "--world-size 0 must be an integer >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ic.bench_main(["--device", "cpu", "--sizes", "5", "--no-save"])
    err = capsys.readouterr().err
    assert "--sizes 5: each size must be a positive multiple of 8 bytes" in err and "nearest valid: 8" in err
    with pytest.raises(SystemExit):
        ic.bench_main(["--device", "cpu", "--sizes", "4K,4100", "--no-save"])
    assert "nearest valid: 4096 or 4104" in capsys.readouterr().err


@pytest.mark.serial
def test_bench_runs_its_whole_path_on_the_cpu_quickly(monkeypatch, capsys):
    """``python -m ampere bench collectives --device cpu --quick --no-save``: gloo ranks, <= 60 s, CPU result."""
    import time

    from ampere import benchcli

    captured = []
    real = benchcli.finish_bench

    def finish(result, args, summary):
        captured.append(result)
        return real(result, args, summary)

    monkeypatch.setattr(benchcli, "finish_bench", finish)
    t0 = time.perf_counter()
    assert ic.bench_main(["--device", "cpu", "--quick", "--no-save"]) == 0
    assert time.perf_counter() - t0 <= 60.0
    (res,) = captured
    assert res["device"]["backend"] == "cpu" and res["parameters"]["backend"] == "gloo"
    coll = [r for r in res["records"] if r["params"]["kind"] == "collective"]
    assert len(coll) >= 4 and all(r["derived"]["verified"] for r in coll)
    assert "all_reduce on 2 ranks (gloo" in capsys.readouterr().out


def test_bench_helpers():
    assert bench._parse_size("64K") == 65536 and bench._parse_size("1G") == 2**30 and bench._parse_size("12") == 12
    with pytest.raises(ValueError, match="not understood"):
        bench._parse_size("1.5M")
    kept, dropped = bench._fit_in_memory([2**30, 2**32, 2**20], 8, 16e9)
    assert kept == [2**20, 2**30] and dropped == [2**32]


def test_torchrun_with_nccl_and_no_gpu_for_the_rank_fails_cleanly(monkeypatch, capsys):
    import torch

    visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("LOCAL_RANK", str(visible))  # one past the last GPU: no GPU for this rank
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(visible + 1))
    assert ic.bench_main(["--backend", "nccl", "--no-save"]) == 2
    assert "one GPU per local rank" in capsys.readouterr().err
