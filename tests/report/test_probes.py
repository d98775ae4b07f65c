"""ampere.report.probes: probe selection, the plan (supported, not available, not in this version), and the
real probe functions against their chapters."""

import time

import pytest

from ampere import device
from ampere.report import probes

from .helpers import _info


def test_select_probes_only_skip_and_unknown():
    assert [p.name for p in probes.select_probes()] == probes.probe_names()
    assert [p.name for p in probes.select_probes(only=["matmul", "allreduce"])] == ["matmul", "allreduce"]
    assert "matmul" not in [p.name for p in probes.select_probes(skip=["matmul"])]
    with pytest.raises(ValueError, match="unknown probe"):
        probes.select_probes(only=["warp-drive"])
    with pytest.raises(ValueError, match="--skip"):
        probes.select_probes(skip=["nope"])


def test_plan_on_cpu_h200_and_t4():
    cpu = device.DeviceInfo(backend="cpu", name="some CPU")
    assert {r["status"] for r in probes.plan(cpu, probes.PROBES)} <= {"not supported", "not available"}
    rows = {r["probe"]: r for r in probes.plan(_info(), probes.PROBES)}
    assert rows["matmul"]["status"] == "run" and rows["sparse-2to4"]["status"] == "run"
    assert rows["hbm-copy"]["status"] == "run" and rows["l2-sweep"]["status"] == "run"
    assert rows["allreduce"]["status"] == "not supported" and "2+ GPUs" in rows["allreduce"]["reason"]
    assert probes.plan(_info(gpu_count=8), probes.PROBES)[-1]["status"] == "run"
    t4 = _info(name="Tesla T4", compute_capability=(7, 5), spec_name="T4", tf32=False, bf16_tensor=False,
               sparse_2to4=False)
    assert {r["probe"]: r for r in probes.plan(t4, probes.PROBES)}["sparse-2to4"]["status"] == "not supported"
    chosen, notes = probes._matmul_precisions(t4)
    assert chosen == ["fp32", "fp16"] and len(notes) == 3
    assert probes._matmul_precisions(_info())[0] == ["fp64", "fp32", "tf32", "fp16", "bf16"]


def test_missing_module_or_function_is_not_available_in_this_version():
    ghost = probes.Probe("ghost", "a probe of a chapter not written yet", ("ampere.no_such_chapter:measure",),
                         probes._needs_cuda, lambda ctx: [], lambda quick: 1.0)
    half = probes.Probe("half", "a function not written yet", ("ampere.specs:no_such_function",),
                        probes._needs_cuda, lambda ctx: [], lambda quick: 1.0)
    rows = probes.plan(_info(), [ghost, half])
    assert [r["status"] for r in rows] == ["not available", "not available"]
    assert "ampere.no_such_chapter is missing" in rows[0]["reason"]
    assert "ampere.specs.no_such_function is missing" in rows[1]["reason"]


def test_real_probe_functions_call_their_chapters_with_valid_arguments(monkeypatch):
    """Each probe's run function against the real chapter functions (signatures and record formats), on the
    CPU: the wrappers only shrink the sizes and pin the device; every other argument is passed through."""
    pytest.importorskip("torch")
    from ampere import architecture, hbm, interconnect

    seen = {}
    orig_mm, orig_bw, orig_l2, orig_coll = (architecture.matmul_sweep, hbm.measure_bandwidth,
                                            hbm.measure_l2_sweep, interconnect.run_collective)

    def mm(sizes, precisions, **kw):
        seen["matmul"] = kw
        return orig_mm([32], [p for p in precisions if p in ("fp32", "bf16")], **kw)

    def bw(dev, **kw):
        seen["hbm"] = kw
        return orig_bw("cpu", array_bytes=2**20, **{**kw, "max_time_s": 0.2})

    def l2(dev, **kw):
        seen["l2"] = kw
        return orig_l2("cpu", footprints=[2**14, 2**16, 2**18, 2**21], total_bytes=2**22, **{**kw, "max_time_s": 0.1})

    def coll(op, sizes, n, backend=None, **kw):
        seen["allreduce"] = (backend, kw)
        return orig_coll(op, [4096], n, backend="gloo", **{**kw, "samples": 3})

    monkeypatch.setattr(architecture, "matmul_sweep", mm)
    monkeypatch.setattr(hbm, "measure_bandwidth", bw)
    monkeypatch.setattr(hbm, "measure_l2_sweep", l2)
    monkeypatch.setattr(interconnect, "run_collective", coll)
    info = _info(gpu_count=2)
    ctx = probes.ProbeContext(info, quick=True, progress=lambda text: None, deadline=float("inf"))
    by_name = {p.name: p for p in probes.PROBES}
    mm_figs = by_name["matmul"].run(ctx)
    assert [f["key"] for f in mm_figs] == ["matmul/fp32/n32", "matmul/bf16/n32"]
    assert mm_figs[0]["model_label"] == "dense FP32 CUDA-core peak" and mm_figs[1]["model"] == pytest.approx(989.4, abs=0.1)
    copy = by_name["hbm-copy"].run(ctx)
    assert [f["key"] for f in copy] == ["hbm/copy"] and copy[0]["value"] > 0 and copy[0]["measurement"]["samples_s"]
    sweep = by_name["l2-sweep"].run(ctx)
    assert {"l2/plateau", "l2/dram-plateau"} <= {f["key"] for f in sweep}
    ar = by_name["allreduce"].run(ctx)
    assert ar[0]["key"] == "allreduce/n2/4096" and ar[0]["unit"] == "GB/s" and ar[0]["measurement"]["samples_s"]
    assert seen["allreduce"][0] == "nccl" and seen["allreduce"][1]["timeout_s"] == 120.0
    # with little of the report's budget left, a hung NCCL rank cannot hold the run past it
    late = probes.ProbeContext(info, quick=True, progress=lambda text: None, deadline=time.monotonic() + 60)
    by_name["allreduce"].run(late)
    assert seen["allreduce"][1]["timeout_s"] <= 30.0
