"""Every benchmark runs its whole code path on the CPU: ``python -m ampere bench NAME --device cpu --quick
--no-save`` for every NAME of ``ampere.cli.BENCHES``, in at most 60 s each, and the result it would have
written says ``backend: cpu`` (never a GPU record). Run in-process through ``cli.main`` so the result dict
can be inspected; the subprocess test checks the real command line once."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ampere import benchcli, cli

BUDGET_S = 60.0
ROOT = Path(__file__).resolve().parents[1]


class _Overtime(Exception):
    pass


def _alarm(signum, frame):
    raise _Overtime(f"the benchmark ran past {BUDGET_S + 30:.0f} s")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(cli.BENCHES))
def test_bench_runs_on_the_cpu(name, monkeypatch, capsys):
    captured = []
    real_finish = benchcli.finish_bench

    def finish(result, args, summary):
        captured.append(result)
        return real_finish(result, args, summary)

    monkeypatch.setattr(benchcli, "finish_bench", finish)
    monkeypatch.delenv("AMPERE_DEVICE", raising=False)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(BUDGET_S + 30))
    t0 = time.perf_counter()
    try:
        code = cli.main(["bench", name, "--device", "cpu", "--quick", "--no-save"])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    elapsed = time.perf_counter() - t0
    out = capsys.readouterr().out
    assert code == 0, out
    assert len(captured) == 1, f"bench {name} did not finish through benchcli.finish_bench"
    result = captured[0]
    assert result["benchmark"] and result["device"]["backend"] == "cpu"
    # --device cpu must force the CPU even on a GPU machine: the probe went through benchcli.probe(args)
    assert result["device"]["forced_cpu"] is True, f"bench {name} ignores --device cpu (use benchcli.probe(args))"
    assert out.strip(), f"bench {name} printed nothing"
    assert "result written" not in out  # --no-save
    assert elapsed <= BUDGET_S, f"bench {name} took {elapsed:.1f} s on the CPU (budget {BUDGET_S:.0f} s)"


def test_bench_list_names_every_benchmark(capsys):
    assert cli.main(["bench", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in cli.BENCHES)


@pytest.mark.slow
def test_the_command_line_itself():
    """The real ``python -m ampere bench`` process, for the cheapest benchmark: exit code 0, CPU label."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("AMPERE_DEVICE", None)
    name = "matmul" if "matmul" in cli.BENCHES else sorted(cli.BENCHES)[0]
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ampere", "bench", name, "--device", "cpu", "--quick", "--no-save"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUDGET_S + 30)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert time.perf_counter() - t0 <= BUDGET_S
