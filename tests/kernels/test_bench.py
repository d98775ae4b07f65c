"""Tests of ampere/kernels/bench.py: ``python -m ampere bench kernels`` on the CPU, and the compiled kernel's
resources. Chapter: Programming the A100's SM."""

from __future__ import annotations

import math
import os

import pytest

from ampere import kernels
from ampere.kernels import bench

A100 = "A100-SXM4-80GB"

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # Triton reads this when it is first imported
    os.environ["TRITON_INTERPRET"] = "1"
pytest.importorskip("triton")


cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU code path runs in a process without a GPU")


@cpu_only
def test_bench_runs_the_whole_path_on_the_cpu(capsys):
    assert kernels.bench_main(["--device", "cpu", "--quick", "--no-save"]) == 0
    out = capsys.readouterr().out
    assert "Triton FlashAttention" in out and "matmul-triton" in out


@cpu_only
def test_bench_result_is_marked_cpu(tmp_path):
    from ampere import results

    assert kernels.bench_main(["--device", "cpu", "--quick", "--out", str(tmp_path) + "/"]) == 0
    files = list(tmp_path.glob("kernels-*.json"))
    assert len(files) == 1
    res = results.load(files[0])
    assert res["device"]["backend"] == "cpu" and res["benchmark"] == "kernels"
    kinds = {r["kind"] for r in res["records"]}
    assert {"matmul-torch", "matmul-triton", "attention-triton-flash", "attention-naive", "attention-sdpa"} <= kinds
    assert all(r["max_rel_error"] < 1e-4 for r in res["records"] if r["kind"] == "matmul-triton")
    assert not results.records(benchmark="kernels", kind="measured")  # CPU results never count as GPU records
    assert math.isfinite(res["records"][0]["tflops"])


def test_without_triton_the_bench_says_so_and_the_models_still_work(monkeypatch, capsys):
    monkeypatch.setattr(bench, "triton_available", lambda: False)  # where bench_main looks it up
    assert kernels.bench_main(["--device", "cpu", "--quick", "--no-save"]) == 2
    captured = capsys.readouterr()  # one line on stderr through benchcli.fail, nothing on stdout
    assert captured.err.startswith("error: triton is not installed") and "triton" not in captured.out
    assert kernels.occupancy(A100, 128, 32, 0).fraction == 1.0  # the models need neither triton nor torch


def test_compiled_resources_count_the_cp_async_copies_in_the_ptx():
    from types import SimpleNamespace

    ptx = ("cp.async.cg.shared.global [%r1], [%rd2], 16;\n cp.async.ca.shared.global [%r3], [%rd4], 4;\n"
           "cp.async.commit_group;\n cp.async.wait_group 1;\n ld.global.v4.b32 {%r5}, [%rd6];\n")
    kernel = SimpleNamespace(n_regs=128, metadata=SimpleNamespace(shared=98304), asm={"ptx": ptx})
    assert kernels._compiled_resources(kernel) == {"registers_per_thread": 128, "shared_bytes": 98304,
                                                   "cp_async_in_ptx": 2}  # commit/wait are not copies
    kernel = SimpleNamespace(n_regs=64, metadata=SimpleNamespace(shared=0), asm={"ptx": "ld.global.b32 %r1;"})
    assert kernels._compiled_resources(kernel)["cp_async_in_ptx"] == 0
    assert kernels._compiled_resources(SimpleNamespace()) == {}  # the interpreter: nothing compiled
