"""ampere.sparsity.bench: ``bench sparsity`` runs its whole code path on the CPU; the report's short run."""

from ampere import results
from ampere import sparsity as sp


def test_bench_runs_its_whole_code_path_on_the_cpu(monkeypatch, tmp_path, capsys):
    import json
    import time

    t0 = time.perf_counter()
    assert sp.bench_main(["--device", "cpu", "--quick", "--out", str(tmp_path / "s.json")]) == 0
    assert time.perf_counter() - t0 < 60
    out = capsys.readouterr().out
    assert "no CUDA GPU" in out and "written to" in out
    res = json.loads((tmp_path / "s.json").read_text())
    assert res["device"]["backend"] == "cpu" and res["notes"][0].startswith("CPU code path")
    kinds = [r["kind"] for r in res["records"]]
    assert kinds.count("sparse") == len(sp.CPU_SHAPES) and "unstructured" in kinds
    assert all(r["derived"]["numerics_ok"] for r in res["records"] if r["kind"] == "sparse")
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    res = sp.short_run()
    assert results.validate(res) and res["records"] == [] and res["benchmark"] == "sparsity"
    assert "no CUDA GPU" in res["notes"][0]
