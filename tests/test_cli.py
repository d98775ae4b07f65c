"""ampere.cli: info, bench dispatch, validate, errors; `python -m ampere` as a process."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ampere import cli, results


def test_info_text_and_json(capsys, monkeypatch):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    assert cli.main(["info"]) == 0
    assert "backend        cpu" in capsys.readouterr().out
    assert cli.main(["info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["backend"] == "cpu"


def test_bench_list_unknown_and_cpu_matmul(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    assert cli.main(["bench", "--list"]) == 0
    assert "matmul" in capsys.readouterr().out
    assert cli.main(["bench", "no-such"]) == 2
    assert "unknown benchmark" in capsys.readouterr().err
    assert cli.main(["bench", "matmul", "--device", "cpu", "--quick", "--out", str(tmp_path)]) == 0
    assert "matmul sweep on CPU" in capsys.readouterr().out
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and results.load(files[0])["device"]["backend"] == "cpu"


def test_bench_refuses_a_bad_out_before_measuring_and_never_records_cpu_results(capsys, tmp_path):
    other = tmp_path / "notes.json"
    other.write_text('{"benchmark": "hbm"}')
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "matmul", "--device", "cpu", "--quick", "--out", str(other)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "refusing to overwrite" in err and "Traceback" not in err and "matmul sweep" not in err
    assert other.read_text() == '{"benchmark": "hbm"}'
    with pytest.raises(SystemExit):
        cli.main(["bench", "matmul", "--device", "cpu", "--quick", "--out", str(tmp_path / "x.txt")])
    data = Path(cli.__file__).resolve().parent / "data"
    before = sorted(p.name for p in data.iterdir())
    assert cli.main(["bench", "matmul", "--device", "cpu", "--quick", "--out", str(data) + "/"]) == 2
    assert "not recorded in ampere/data" in capsys.readouterr().err
    assert sorted(p.name for p in data.iterdir()) == before


def test_every_registered_entry_point_resolves():
    for target in [*cli.BENCHES.values(), *cli.VALIDATIONS.values(), *cli.COMMANDS.values()]:
        assert callable(cli._resolve(target)), target


def test_validate_specs_passes(capsys):
    assert cli.main(["validate", "specs"]) == 0
    assert "== specs: PASS" in capsys.readouterr().out
    assert cli.main(["validate", "nonsense"]) == 2


def test_usage_and_unknown_command(capsys):
    assert cli.main([]) == 2 and cli.main(["--help"]) == 0
    assert cli.main(["frobnicate"]) == 2
    assert "unknown command" in capsys.readouterr().err


def test_module_entry_point_runs_as_a_process():
    out = subprocess.run([sys.executable, "-m", "ampere", "info"], capture_output=True, text=True,
                         env={"AMPERE_DEVICE": "cpu", "PATH": "/usr/bin:/bin"}, timeout=120)
    assert out.returncode == 0 and "torch" in out.stdout


# ---------------------------------------------------------------------------------------------------------
# No traceback, errors on stderr, Ctrl-C, --out before measuring, progress
# ---------------------------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def _run(*args, timeout=180):
    import os

    env = {**os.environ, "AMPERE_DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
    env.pop("AMPERE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "ampere", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=timeout)


@pytest.mark.slow
def test_a_bad_bench_argument_is_one_line_on_stderr_without_a_traceback():
    out = _run("bench", "matmul", "--device", "cpu", "--sizes", "0", "--no-save")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and "Traceback" not in out.stdout
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "sizes" in errors[0], out.stderr
    assert out.stdout == ""


def test_a_value_error_from_a_command_is_an_error_line(capsys, monkeypatch):
    def entry(argv):
        raise ValueError("sizes must be an integer >= 1, got 0")

    monkeypatch.setitem(cli.BENCHES, "dummy", "x:y")
    monkeypatch.setattr(cli, "_resolve", lambda target: entry)
    assert cli.main(["bench", "dummy"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == "error: sizes must be an integer >= 1, got 0" and captured.out == ""
    monkeypatch.setenv("AMPERE_DEBUG", "1")
    with pytest.raises(ValueError):
        cli.main(["bench", "dummy"])


def test_ctrl_c_inside_a_command_is_exit_130_and_one_line(capsys, monkeypatch):
    def entry(argv):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.BENCHES, "dummy", "x:y")
    monkeypatch.setattr(cli, "_resolve", lambda target: entry)
    assert cli.main(["bench", "dummy"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


@pytest.mark.slow
def test_ctrl_c_on_a_running_collective_bench_exits_130_and_leaves_nothing(tmp_path):
    """SIGINT to the whole process group (what a terminal's Ctrl-C does) during `bench collectives`."""
    import os
    import signal
    import time

    from .test_launch import _session

    env = {**os.environ, "AMPERE_DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "ampere", "bench", "collectives", "--device", "cpu",
                             "--no-save"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and len(_session(proc.pid)) < 4:  # parent, tracker, 2 ranks
            time.sleep(0.2)
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err and "Traceback" not in out
    assert err.strip().splitlines()[-1] == "interrupted" and len(err.strip().splitlines()) <= 3, err
    end = time.monotonic() + 15
    while time.monotonic() < end and _session(proc.pid):
        time.sleep(0.2)
    assert _session(proc.pid) == []


def test_bench_kernels_without_triton_says_so_on_stderr(capsys, monkeypatch):
    from ampere.kernels import bench

    monkeypatch.setattr(bench, "triton_available", lambda: False)
    code = cli.main(["bench", "kernels", "--device", "cpu", "--no-save"])
    captured = capsys.readouterr()
    assert code == 2
    assert "triton is not installed" in captured.err and "triton" not in captured.out


@pytest.mark.parametrize("out", ["/proc/ampere-no-such/", "FILE/sub/"])
def test_bench_out_is_tried_before_measuring(capsys, monkeypatch, tmp_path, out):
    from ampere.hbm import bench

    measured = []
    monkeypatch.setattr(bench, "measure_capacity", lambda *a, **k: measured.append(1))
    blocker = tmp_path / "FILE"
    blocker.write_text("x")
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "hbm", "--device", "cpu", "--quick", "--out", out.replace("FILE", str(blocker))])
    assert exc.value.code == 2 and measured == []
    err = capsys.readouterr().err
    assert "cannot be written" in err and "Traceback" not in err


def test_progress_is_shown_on_stderr_for_a_slow_command(capsys, monkeypatch):
    import time

    from ampere import benchcli, device

    real = device.probe

    def slow_probe(*args, **kwargs):
        time.sleep(0.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(device, "probe", slow_probe)
    real_init = benchcli.Progress.__init__

    def quick_init(self, label, *, after_s=2.0, every_s=10.0, stream=None):
        real_init(self, label, after_s=0.1, every_s=10.0, stream=stream)

    monkeypatch.setattr(benchcli.Progress, "__init__", quick_init)
    assert cli.main(["info"]) == 0
    captured = capsys.readouterr()
    assert "info: probing the machine" in captured.err and "still running" in captured.err
    assert "done in" in captured.err and "still running" not in captured.out


def test_progress_says_nothing_for_a_short_step():
    import io
    import time

    from ampere import benchcli

    stream = io.StringIO()
    with benchcli.Progress("quick", after_s=1.0, stream=stream):
        time.sleep(0.01)
    assert stream.getvalue() == ""
    with benchcli.Progress("slow", after_s=0.05, every_s=0.1, stream=stream):
        time.sleep(0.3)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("slow: still running") and lines[-1].startswith("slow: done in")


def test_help_and_usage_go_where_they_belong(capsys):
    assert cli.main([]) == 2
    captured = capsys.readouterr()
    assert "usage: python -m ampere" in captured.err and captured.out == ""
    assert cli.main(["--help"]) == 0
    captured = capsys.readouterr()
    assert "usage: python -m ampere" in captured.out and "Ctrl-C" in captured.out and "%%" not in captured.out
    assert cli.main(["bench"]) == 2
    assert "usage: python -m ampere bench" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["bench", "matmul", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "--out" in text and "--device" in text and "%%" not in text


def test_argv_must_be_a_list_of_strings():
    with pytest.raises(TypeError, match="argv"):
        cli.main("info")
    with pytest.raises(TypeError, match=r"argv\[0\]"):
        cli.main([1])


def test_error_lines_printed_by_a_bench_go_to_stderr(capsys, monkeypatch):
    def entry(argv):
        print("measuring ...")
        print("error: no GPU", flush=True)
        print("partial", end="")
        return 2

    monkeypatch.setitem(cli.BENCHES, "dummy", "x:y")
    monkeypatch.setattr(cli, "_resolve", lambda target: entry)
    assert cli.main(["bench", "dummy"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "measuring ...\npartial" and captured.err == "error: no GPU\n"
