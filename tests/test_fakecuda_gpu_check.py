"""tools/gpu_check.py (make gpu-check): refuses without a GPU (exit 2), and tabulates the acceptance levels
from result JSONs; the GPU path of main() runs against the fake GPU with synthetic bench results."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ampere import device, results, specs, timing

from .fakecuda import fake_cuda  # noqa: F401 (fixture)

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "tools" / "gpu_check.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gpu_check", mod)  # dataclasses look their module up in sys.modules
    spec.loader.exec_module(mod)
    return mod


gpu_check = _tool()
A100 = specs.get("A100-SXM4-80GB")


def _gpu_info():
    return device.DeviceInfo(backend="cuda", name="NVIDIA A100-SXM4-80GB", compute_capability=(8, 0),
                             spec_name=A100.name, l2_bytes=A100.l2_bytes, gpu_count=1, tf32=True,
                             bf16_tensor=True, sparse_2to4=True, sparse_2to4_backends=("cutlass",))


def _meas(seconds, n=10):
    """A Measurement dict whose median is ``seconds`` (spread around it)."""
    return timing.Measurement("m", [seconds * (1 + 0.01 * (i - n // 2)) for i in range(n)]).to_dict()


def matmul_result(pct):
    peak = A100.peak_flops("bf16") / 1e12
    recs = [{"precision": "bf16", "n": 8192, "tflops": peak * pct / 100, "pct_of_peak": pct}]
    return results.make_result("matmul", _gpu_info(), {}, recs)


def tf32_result(speedup):
    flops = 2 * 4096**3
    recs = [{"kind": "throughput", "precision": p, "n": 4096, "flops": flops, "measurement": _meas(t)}
            for p, t in (("fp32", 0.1), ("tf32", 0.1 / speedup))]
    return results.make_result("tf32", _gpu_info(), {}, recs)


def hbm_result(copy_pct, knee_ratio):
    peak = A100.hbm_bytes_per_s
    l2 = A100.l2_bytes
    recs = [{"params": {"experiment": "bandwidth", "kernel": "copy", "engine": "SM", "array_bytes": 2**30},
             "derived": {"bytes_per_s": peak * copy_pct / 100, "pct_of_datasheet": copy_pct}}]
    knee = knee_ratio * l2
    for f in [l2 / 16, l2 / 8, l2 / 4, l2 / 2, 0.8 * knee, 1.25 * knee, 2 * l2, 4 * l2, 8 * l2]:
        bw = 5e12 if f < knee else 1.8e12
        recs.append({"params": {"experiment": "l2_sweep", "footprint_bytes": int(f), "device_l2_bytes": l2},
                     "derived": {"bytes_per_s": bw}})
    return results.make_result("hbm", _gpu_info(), {}, recs)


def sparsity_result(speedup):
    base = {"tokens": 4096, "in_features": 8192, "out_features": 8192, "dtype": "float16", "label": "MLP"}
    recs = [dict(base, kind="dense", backend="cublas", measurement=_meas(2e-3)),
            dict(base, kind="sparse", backend="cutlass", measurement=_meas(2e-3 / speedup),
                 derived={"speedup_vs_dense": speedup, "numerics_ok": True}),
            dict(base, tokens=16, kind="dense", backend="cublas", measurement=_meas(1e-4)),
            dict(base, tokens=16, kind="sparse", backend="cutlass", measurement=_meas(1e-4 / 2.0))]
    return results.make_result("sparsity", _gpu_info(), {}, recs)


def by_name(checks):
    return {c.name: c for c in checks}


def test_without_a_gpu_it_says_so_and_exits_2():
    env = dict(os.environ)
    env.pop("AMPERE_DEVICE", None)
    proc = subprocess.run([sys.executable, "tools/gpu_check.py"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert "no CUDA GPU on this machine" in proc.stderr and "nothing was run" in proc.stderr


def test_passing_results_are_tabulated_as_pass():
    report = gpu_check.Step("report", ["report"], 0, 95.0)
    checks = by_name(gpu_check.acceptance({"matmul": matmul_result(80.0), "tf32": tf32_result(7.0),
                                           "hbm": hbm_result(90.0, 1.0), "sparsity": sparsity_result(1.5)}, report))
    assert checks["bf16 matmul"].status == "PASS" and "80.0%" in checks["bf16 matmul"].measured
    assert checks["TF32 speedup"].status == "PASS" and checks["TF32 speedup"].measured == "7.00x"
    assert checks["HBM copy"].status == "PASS" and checks["L2 knee"].status == "PASS"
    assert checks["2:4 sparse"].status == "PASS" and checks["2:4 sparse"].measured.startswith("1.50x")
    assert checks["report"].status == "PASS" and checks["report"].measured == "95 s"
    text = gpu_check.table(list(checks.values()))
    assert text.count("\n") == 1 + len(checks) and "| 2:4 sparse |" in text
    assert gpu_check.passed(list(checks.values()), [report])


def test_failing_results_fail_and_a_slow_sparse_kernel_is_explained():
    report = gpu_check.Step("report", ["report"], 0, 200.0)
    checks = by_name(gpu_check.acceptance({"matmul": matmul_result(70.0), "tf32": tf32_result(4.0),
                                           "hbm": hbm_result(80.0, 2.0), "sparsity": sparsity_result(1.1)}, report))
    assert checks["bf16 matmul"].status == "FAIL" and checks["TF32 speedup"].status == "FAIL"
    assert checks["HBM copy"].status == "FAIL" and checks["L2 knee"].status == "FAIL"
    assert checks["report"].status == "FAIL"
    sparse = checks["2:4 sparse"]
    assert sparse.status == "EXPLAINED" and sparse.measured.startswith("1.10x") and "below" in sparse.detail
    assert not gpu_check.passed(list(checks.values()), [report])


def test_missing_results_are_not_run():
    checks = gpu_check.acceptance({}, None, {"sparsity": "2:4 backend: none (cuSPARSELt missing)\n"
                                                         "No working 2:4 backend on this GPU: nothing to measure"})
    status = {c.name: c.status for c in checks}
    assert status == {"bf16 matmul": "NOT RUN", "TF32 speedup": "NOT RUN", "HBM copy": "NOT RUN",
                      "L2 knee": "NOT RUN", "2:4 sparse": "EXPLAINED", "report": "NOT RUN"}
    assert not gpu_check.passed(checks, [])


def test_the_plan_fits_one_lease_and_installs_nothing():
    """--plan on the CPU: every step with its estimate, a total within the 420 s budget, exit 0; no step
    installs anything or reaches the network, and a step whose modules are missing is skipped, not fixed."""
    proc = subprocess.run([sys.executable, "tools/gpu_check.py", "--plan"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "AMPERE_DEVICE": "cpu"})
    assert proc.returncode == 0, proc.stderr
    import re

    total = re.search(r"^total \(steps that run\)\s+(\d+) s", proc.stdout, re.M)
    assert total and int(total.group(1)) <= 420 and "bench matmul" in proc.stdout
    steps = gpu_check.make_plan(ROOT / "out", 420.0, available=lambda mods: [])
    running = [s for s in steps if s.status == "run"]
    assert sum(s.estimate_s for s in running) <= 420.0
    assert [s.kind for s in running][:2] == ["env", "bench"] and any(s.kind == "report" for s in running)
    assert running[-1].name == "nbval reference-check"  # the first chapter that fits
    forbidden = ("pip", "install", "conda", "apt", "curl", "wget", "git", "http", "uv")
    for s in steps:
        for word in s.command:
            assert not any(f in str(word).lower().split("/")[-1].split() for f in forbidden), (s.name, word)
        assert not any(str(w).startswith(("http:", "https:")) for w in s.command)
    bare = gpu_check.make_plan(ROOT / "out", 420.0, available=lambda mods: [m for m in mods if m == "nbval"])
    assert {s.status for s in bare if s.kind == "nbval"} == {"needs nbval"}
    assert all(s.status in ("run", "over budget") for s in bare if s.kind != "nbval")
    small = gpu_check.make_plan(ROOT / "out", 60.0, available=lambda mods: [])
    assert sum(s.estimate_s for s in small if s.status == "run") <= 60.0


def test_a_run_on_a_fake_h200_writes_everything_into_one_folder(fake_cuda, tmp_path, monkeypatch):  # noqa: F811
    fake_cuda("H200")
    made = {"matmul": matmul_result(80.0), "tf32": tf32_result(7.0), "hbm": hbm_result(90.0, 1.0),
            "sparsity": sparsity_result(1.5)}
    cpu_result = results.make_result("megatron", device.probe(force="cpu"), {}, [])
    monkeypatch.setattr(gpu_check, "missing_modules", lambda names: [])
    ran = []

    def runner(name, command, timeout_s):
        ran.append((name, command, timeout_s))
        assert timeout_s <= 420.0
        if name.startswith("bench "):
            bench = name.split()[1]
            out = Path(command[command.index("--out") + 1])
            res = made.get(bench, cpu_result if bench == "megatron" else None)
            if res is not None:
                out.write_text(json.dumps(res), encoding="utf-8")
        if name == "report":
            rec = Path(command[command.index("--record") + 1])
            rec.mkdir(parents=True, exist_ok=True)
            report = results.make_result("report", device.probe(), {}, [])
            (rec / "report-h200-sxm-141gb-20261201.json").write_text(json.dumps(report), encoding="utf-8")
        return gpu_check.Step(name, command, 0, 60.0 if name == "report" else 1.0, f"{name} done")

    out = tmp_path / "check"
    data = tmp_path / "data"
    code = gpu_check.main(["--benches", "matmul", "tf32", "hbm", "sparsity", "megatron", "--out", str(out),
                           "--budget-s", "420", "--record-into", str(data)], runner=runner)
    assert code == 0
    names = [r[0] for r in ran]
    assert names[:5] == [f"bench {b}" for b in ("matmul", "tf32", "hbm", "sparsity", "megatron")]
    assert "report" in names and "nbval reference-check" in names
    assert all("--quick" in c for n, c, _ in ran if n.startswith(("bench", "report")))
    # every output under the one folder
    for _, command, _ in ran:
        for arg in command:
            if arg.startswith(str(tmp_path)):
                assert arg.startswith(str(out)), arg
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert {"acceptance.md", "gpu-check.json", "benches/matmul.json", "benches/matmul.log",
            "nbval/reference-check.log"} <= set(files)
    summary = json.loads((out / "gpu-check.json").read_text())
    # an H200 is recorded as what it is: Hopper, sm90, its own catalogue entry
    assert summary["gpu"]["spec_name"] == "H200-SXM-141GB" and summary["gpu"]["architecture"] == "Hopper"
    assert summary["gpu"]["compute_capability"] == [9, 0] and summary["passed"]
    plan = summary["plan"]
    assert sum(p["estimate_s"] for p in plan if p["status"] == "run") <= 420
    assert "over budget" in {p["status"] for p in plan if p["kind"] == "nbval"}
    recorded = sorted(p.name.split("-")[0] for p in data.iterdir())
    assert recorded == ["hbm", "matmul", "report", "sparsity", "tf32"]  # the CPU-marked megatron result stays out
    # without --record-into nothing is copied anywhere
    ran.clear()
    assert gpu_check.main(["--benches", "matmul", "--no-book", "--out", str(tmp_path / "again")],
                          runner=runner) in (0, 1)
    assert len(list(data.iterdir())) == 5


def test_the_tool_refuses_on_the_cpu_in_process(monkeypatch, capsys):
    monkeypatch.setenv("AMPERE_DEVICE", "cpu")
    assert gpu_check.main([], runner=lambda *a: pytest.fail("nothing may run without a GPU")) == 2
    assert "no CUDA GPU" in capsys.readouterr().err
