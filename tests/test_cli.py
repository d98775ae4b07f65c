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
