"""ampere.mig.measure: the instance measurement and ``python -m ampere bench mig``."""

from __future__ import annotations

import sys
import time

import pytest

from ampere import mig, results


def test_measure_instance_and_bench_run_on_cpu(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # NVML absent: a note, never a traceback
    out = mig.measure_instance(device="cpu", quick=True)
    assert out.flops_per_s > 0 and out.copy_bytes_per_s > 0 and out.model is None and out.backend == "cpu"
    assert out.matmul.n >= 10 and "CPU" in out.notes[0] and out.flops_ratio is None
    with pytest.raises(TypeError, match="quick"):
        mig.measure_instance(device="cpu", quick="yes")
    t0 = time.perf_counter()
    assert mig.bench_main(["--no-save", "--quick", "--device", "cpu"]) == 0
    assert time.perf_counter() - t0 < 60
    text = capsys.readouterr().out
    assert "NVML did not answer" in text and "device backend: cpu" in text and "Traceback" not in text


def test_bench_writes_a_cpu_marked_result_outside_the_package(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    assert mig.bench_main(["--quick", "--device", "cpu", "--out", str(tmp_path) + "/"]) == 0
    files = list(tmp_path.glob("mig-*.json"))
    assert len(files) == 1
    res = results.load(files[0])
    assert res["device"]["backend"] == "cpu" and res["benchmark"] == "mig"
    kernels = [r["params"].get("kernel") for r in res["records"]]
    assert kernels[:2] == ["matmul", "copy"] and res["records"][2]["params"]["what"] == "nvml_mig_report"
    # a CPU result is never taken for a GPU measurement
    assert not [r for r in results.measured_records({**res, "_file": files[0].name}) if r.gpu.startswith("A100")]


def test_measure_instance_on_a_gpu_compares_with_the_model():
    """The GPU path: BF16 matmul and HBM copy of the device (or MIG instance) against instance_peaks."""
    import os

    import torch

    if os.environ.get("AMPERE_DEVICE", "").lower() == "cpu" or not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from ampere import device

    info = device.probe()
    out = mig.measure_instance(quick=True, info=info)
    assert out.matmul.mode == "cuda-events" and out.copy.l2_flushed
    assert out.flops_per_s > 0 and out.copy_bytes_per_s > 0
    if out.model is not None:  # a catalogued GPU: ratios are fractions of a datasheet peak
        assert 0.05 < out.flops_ratio < 1.2 and 0.05 < out.bandwidth_ratio < 1.2
