"""ampere.mig, the chapter module: figures, NVML report, the instance measurement and its bench, costs, views."""

from __future__ import annotations

import ctypes
import sys
import time
import types
from pathlib import Path

import pytest

from ampere import mig, results, specs

from .fakecuda import fake_cuda  # noqa: F401  (the CUDA test double, a fixture)

ROOT = Path(__file__).resolve().parents[1]
A40 = "A100-SXM4-40GB"
A80 = "A100-SXM4-80GB"


def test_the_split_keeps_the_public_names():
    from ampere import mig_geometry, mig_sim

    for name in ("instance_peaks", "mig_gpus", "table", "profiles", "validate", "enumerate_layouts", "usage"):
        assert getattr(mig, name) is getattr(mig_geometry, name)
    for name in ("simulate", "isolation_study", "SimConfig", "Workload", "default_tenants", "service_time"):
        assert getattr(mig, name) is getattr(mig_sim, name)
    assert all(hasattr(mig, n) for n in mig.__all__)
    # chapter modules import no other chapter module (shared layers only)
    code = (ROOT / "ampere" / "mig.py").read_text(encoding="utf-8")
    for other in ("architecture", "hbm", "interconnect", "cluster", "sparsity", "numerics", "megatron", "today"):
        assert f"from . import {other}" not in code and f"from .{other} import" not in code


# --------------------------------------------------------------------------------------------------- figures


def test_layout_figures_draw(monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = mig.plot_layout(A40, [("3g.20gb", 0), ("3g.20gb", 4)])
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert len(ax.patches) == 15 and len(hatched) == 1  # 8 + 7 slices, compute slice 3 stranded
    ax = mig.plot_layouts(A40, mig.enumerate_layouts(A40, ["3g.20gb", "4g.20gb", "1g.5gb"]))
    assert ax.get_title().endswith("maximal layouts")
    plt.close("all")




def test_isolation_figure_draws():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = mig.isolation_study(mig.SimConfig(duration_s=0.6, warmup_s=0.1), modes=("mig", "mps"))
    ax = mig.plot_isolation(rows)
    assert len(ax.patches) == 6 and ax.get_yscale() == "log"
    plt.close("all")




# --------------------------------------------------------------------------------------------------- NVML


class FakeNVMLError(Exception):
    def __init__(self, value):
        super().__init__(f"NVML error {value}")
        self.value = value


class Placement(ctypes.Structure):
    _fields_ = [("start", ctypes.c_uint), ("size", ctypes.c_uint)]


def fake_nvml(gpus, driver_table=None, deny_placement=False, deny_count=False):
    """A pynvml stand-in. ``gpus``: list of dicts with name, mig (None: unsupported), instances."""
    ns = types.SimpleNamespace()
    ns.NVML_GPU_INSTANCE_PROFILE_COUNT = 18
    ns.c_nvmlGpuInstancePlacement_t = Placement
    ns.nvmlInit = lambda: None
    ns.nvmlShutdown = lambda: None
    ns.nvmlSystemGetDriverVersion = lambda: b"580.65.06"

    def count():
        if deny_count:
            raise RuntimeError("driver went away")
        return len(gpus)

    ns.nvmlDeviceGetCount = count
    ns.nvmlDeviceGetHandleByIndex = lambda i: ("gpu", i)
    ns.nvmlDeviceGetName = lambda h: (gpus[h[1]]["name"] if h[0] == "gpu" else
                                      gpus[h[1]]["instances"][h[2]]["name"]).encode()

    def mig_mode(h):
        mode = gpus[h[1]]["mig"]
        if mode is None:
            raise FakeNVMLError(3)
        return [int(mode), int(mode)]

    ns.nvmlDeviceGetMigMode = mig_mode
    ns.nvmlDeviceGetMaxMigDeviceCount = lambda h: 7

    def mig_handle(h, k):
        if k >= len(gpus[h[1]]["instances"]):
            raise FakeNVMLError(6)
        return ("mig", h[1], k)

    ns.nvmlDeviceGetMigDeviceHandleByIndex = mig_handle
    inst = lambda h: gpus[h[1]]["instances"][h[2]]  # noqa: E731
    ns.nvmlDeviceGetUUID = lambda h: inst(h)["uuid"]
    ns.nvmlDeviceGetGpuInstanceId = lambda h: inst(h)["gi"]
    ns.nvmlDeviceGetComputeInstanceId = lambda h: 0
    ns.nvmlDeviceGetAttributes = lambda h: types.SimpleNamespace(multiprocessorCount=inst(h)["sms"],
                                                                 memorySizeMB=inst(h)["mib"])

    def gi_by_id(h, gi):
        if deny_placement:
            raise FakeNVMLError(4)
        return ("gi", h[1], gi)

    ns.nvmlDeviceGetGpuInstanceById = gi_by_id

    def gi_info(g):
        for m in gpus[g[1]]["instances"]:
            if m["gi"] == g[2]:
                return types.SimpleNamespace(placement=types.SimpleNamespace(start=m["start"], size=m["size"]))
        raise FakeNVMLError(6)

    ns.nvmlGpuInstanceGetInfo = gi_info
    rows = driver_table or []

    def profile_info(h, idx, version=2):
        if idx >= len(rows):
            raise FakeNVMLError(3)
        r = rows[idx]
        return types.SimpleNamespace(id=r["id"], sliceCount=r["slices"], instanceCount=r["max"],
                                     multiprocessorCount=r["sms"], memorySizeMB=r["mib"],
                                     name=("MIG " + r["name"]).encode())

    ns.nvmlDeviceGetGpuInstanceProfileInfo = profile_info

    def placements(h, pid, arr, count_ref):
        r = next(r for r in rows if r["id"] == pid)
        for i, s in enumerate(r["starts"]):
            arr[i].start, arr[i].size = s, r["size"]
        count_ref._obj.value = len(r["starts"])

    ns.nvmlDeviceGetGpuInstancePossiblePlacements = placements
    return ns


def _driver_rows(gpu):
    return [{"id": p.profile_id, "name": p.name, "slices": p.compute_slices, "max": p.max_count,
             "sms": p.sm_count, "mib": 4864 * p.memory_slices, "starts": list(p.starts), "size": p.memory_slices}
            for p in mig.profiles(gpu)]


def test_nvml_absent_or_failing_never_raises(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails as if nvidia-ml-py were missing
    r = mig.nvml_mig_report()
    assert not r.nvml and r.gpus == [] and "not installed" in r.notes[0] and "NVML did not answer" in r.summary()

    def boom():
        raise FakeNVMLError(12)

    bad = types.SimpleNamespace(nvmlInit=boom)
    r = mig.nvml_mig_report(nvml=bad, device_name="NVIDIA A100-SXM4-40GB MIG 2g.10gb")
    assert not r.nvml and r.this_process == "2g.10gb" and "could not start" in r.notes[0]
    r = mig.nvml_mig_report(nvml=fake_nvml([], deny_count=True))
    assert r.nvml and any("NVML query failed" in n or "device count" in n for n in r.notes)
    assert mig.nvml_mig_report(nvml=object()).nvml is False  # a module without nvmlInit


def test_nvml_no_mig_and_mig_disabled():
    r = mig.nvml_mig_report(nvml=fake_nvml([{"name": "Tesla T4", "mig": None, "instances": []},
                                            {"name": "NVIDIA H200", "mig": False, "instances": []}]))
    t4, h200 = r.gpus
    assert not t4.mig_capable and t4.current_mode is None and "not supported" in t4.notes[0]
    assert h200.mig_capable and h200.current_mode is False and h200.spec_name == "H200-SXM-141GB"
    assert any("needs root" in n for n in r.notes) and r.driver_version == "580.65.06"
    assert "mode disabled" in r.summary()
    assert [d.name for d in h200.instances] == [] and h200.driver_profiles == []


def test_nvml_mig_enabled_with_instances_and_the_driver_table():
    instances = [{"name": "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "uuid": "MIG-aaa", "gi": 1, "sms": 42,
                  "mib": 19968, "start": 4, "size": 4},
                 {"name": "NVIDIA A100-SXM4-40GB MIG 4g.20gb", "uuid": "MIG-bbb", "gi": 2, "sms": 56,
                  "mib": 19968, "start": 0, "size": 4}]
    gpus = [{"name": "NVIDIA A100-SXM4-40GB", "mig": True, "instances": instances}]
    r = mig.nvml_mig_report(nvml=fake_nvml(gpus, _driver_rows(A40)), visible_devices="MIG-bbb")
    g = r.gpus[0]
    assert g.current_mode and [m.profile for m in g.instances] == ["3g.20gb", "4g.20gb"]
    assert [m.placement for m in g.instances] == [(4, 4), (0, 4)]
    assert g.instances[0].memory_bytes == 19968 * 2**20 and r.this_process == "4g.20gb"
    assert mig.validate(A40, [(m.profile, m.placement[0]) for m in g.instances])
    rows = mig.compare_with_driver(r)
    assert len(rows) == 7 and all(row.agree for row in rows)
    assert "MIG device 1: 4g.20gb" in r.summary() and "inside a MIG instance: 4g.20gb" in r.summary()
    # a driver that disagrees (different SM count) is reported, not hidden
    wrong = _driver_rows(A40)
    wrong[0]["sms"] = 16
    rows = mig.compare_with_driver(mig.nvml_mig_report(nvml=fake_nvml(gpus, wrong)))
    assert [row.agree for row in rows].count(False) == 1
    # no permission for placements: instances still listed, placement unknown, a note says why
    r = mig.nvml_mig_report(nvml=fake_nvml(gpus, _driver_rows(A40), deny_placement=True))
    assert [m.placement for m in r.gpus[0].instances] == [None, None]
    assert any("insufficient permissions" in n for n in r.gpus[0].notes)
    assert r.to_dict()["gpus"][0]["instances"][0]["profile"] == "3g.20gb"




# --------------------------------------------------------------------------------------------------- measure


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


# --------------------------------------------------------------------------------------------------- views


def test_published_instance_matmuls_sit_beside_their_model():
    recs = results.records(benchmark="mig", kind="published")
    assert len(recs) == 8 and {r.gpu for r in recs} == {"A100-SXM4-80GB", "A100-SXM4-80GB MIG 1g.10gb",
                                                        "A100-SXM4-80GB MIG 2g.20gb", "A100-SXM4-80GB MIG 3g.40gb"}
    for r in recs:  # the profile named by memory matches the SM count the source prints
        prof = r.params["profile"]
        expect = specs.get(A80).sm_count if prof is None else mig.profile(A80, prof).sm_count
        assert r.params["sm_count"] == expect
    matmul, copy = mig.instance_points(None)
    assert copy == [] and len(matmul) == 8
    for p in matmul:
        assert p.kind == "published" and p.source and 0.8 < p.ratio < 1.0  # a slice scales with its SMs
        assert p.source.endswith(("A100_10gb", "A100_20gb", "A100_40gb", "A100_80gb full GPU"))
        assert "Matrix Multiplication Benchmarks table" in p.source


def test_recorded_results_become_points(monkeypatch):
    from ampere import device

    info = device.DeviceInfo("cuda", "NVIDIA A100-SXM4-40GB MIG 1g.5gb", spec_name=A40, compute_capability=(8, 0),
                             mig_instance="1g.5gb")
    recs = [{"params": {"kernel": "matmul", "profile": "1g.5gb", "precision": "bf16", "n": 4096},
             "derived": {"flops_per_s": 3.6e13, "model_flops_per_s": 4.04e13, "ratio": 0.89}},
            {"params": {"kernel": "copy", "profile": "1g.5gb", "bytes": 2**28},
             "derived": {"copy_bytes_per_s": 1.7e11, "model_bytes_per_s": 1.94e11, "ratio": 0.87}}]
    res = results.make_result("mig", info, {"quick": True}, recs)
    monkeypatch.setattr(results, "recorded", lambda benchmark=None, gpu=None: [res] if benchmark in (None, "mig") else [])
    matmul, copy = mig.instance_points(None)
    rec = [p for p in matmul if p.kind == "recorded"]
    assert len(rec) == 1 and rec[0].real == pytest.approx(36.0) and rec[0].model == pytest.approx(40.4)
    assert rec[0].gpu == A40 and rec[0].source.startswith("recorded on NVIDIA A100-SXM4-40GB MIG 1g.5gb")
    assert len(copy) == 1 and copy[0].real == pytest.approx(170.0) and copy[0].unit == "GB/s"


def test_markdown_views(monkeypatch):
    shown = []
    from ampere import tables

    monkeypatch.setattr(tables, "show_md", shown.append)
    monkeypatch.setattr(tables, "show_html", shown.append)
    mig.show_profiles(A40)
    assert "| `1g.10gb` | 15 | 1 | 2/8 | 14 |" in shown[-1] and "5/1/1" in shown[-1] and "nvidiamig" not in shown[-1]
    mig.show_profiles("H200-SXM-141GB")
    assert "| `7g.141gb` | 0 | 7 | 8/8 |  |" in shown[-1]  # no sourced SM count: an empty cell
    mig.show_doc_conflicts()
    assert shown[-1].count("`1g.") == 6  # A100 40GB and 80GB: memory and L2; H100 and H200: L2 only
    assert "H100-80GB" in shown[-1] and "H200-141GB" in shown[-1]
    mig.show_validation(A40, [[("3g.20gb", 4), ("4g.20gb", 0)], [("3g.20gb", 2)]])
    assert "valid: `4g.20gb@0 + 3g.20gb@4`" in shown[-1] and "allowed starts: 0, 4" in shown[-1]
    mig.show_layouts(A40, mig.enumerate_layouts(A40, ["3g.20gb", "4g.20gb"]))
    assert shown[-1].startswith("````{dropdown} The 2 maximal layouts") and "`AAA.BBB`" in shown[-1]
    rows = mig.isolation_study(mig.SimConfig(duration_s=0.6, warmup_s=0.1), modes=("mig",))
    mig.show_isolation(rows)
    assert shown[-1].count("| mig |") == 3
    with pytest.raises(ValueError, match="IsolationRow"):
        mig.show_isolation([{"mode": "mig"}])
    assert mig.media_owners(A40) == {"jpeg": ("1g.5gb+me", "7g.40gb"), "ofa": ("1g.5gb+me", "7g.40gb")}


def test_nvml_view_without_a_driver_shows_the_guides_table(monkeypatch):
    shown = []
    from ampere import tables

    monkeypatch.setattr(tables, "show_md", shown.append)
    monkeypatch.setattr(tables, "show_html", shown.append)
    monkeypatch.setitem(sys.modules, "pynvml", None)
    mig.show_nvml(None)
    assert "`{0,2,4,6}:2`" in shown[0] and shown[1].startswith("<details")
    gpus = [{"name": "NVIDIA A100-SXM4-40GB", "mig": True, "instances": []}]
    shown.clear()
    mig.show_nvml(None, nvml=fake_nvml(gpus, _driver_rows(A40)))
    assert "against this machine's driver" in shown[0] and shown[0].count("| yes |") == 7


# --------------------------------------------------------------------------------------------------- costs


def test_serving_costs_with_the_shared_prices():
    from ampere import pricing

    a100 = pricing.quote("seed003-a100-80gb")
    assert a100.hours_for_budget(100) == pytest.approx((43.67, 104.17), abs=0.01)  # the article: 44-104 h
    rows = {o.label: o for o in mig.serving_costs()}
    seven = rows["7 x A100 80GB, one model each"]
    one = rows["1 x A100 80GB, 7 x 1g.10gb (MIG)"]
    assert seven.usd_per_h == pytest.approx((7 * a100.low, 7 * a100.high))
    assert one.usd_per_h == pytest.approx(a100.per_gpu) and one.mig_profile == "1g.10gb"
    assert one.per_model_sms == 14 and seven.per_model_sms == 108
    assert one.per_model_hbm_bytes_per_s == pytest.approx(specs.get(A80).hbm_bytes_per_s * 0.8 / 8)
    assert one.usd_per_million[0] == pytest.approx(a100.low / (7 * 100 * 3600) * 1e6)
    assert one.service_ms > 3 * seven.service_ms and one.feasible and seven.feasible
    # hyperscalers rent by eight: one option per GPU rented, cut into that GPU's one-slice profile
    p4d = pricing.quote("seed000-aws-p4d")
    forty = rows["1/8 of an 8 x A100 40GB instance, 7 x 1g.5gb (MIG)"]
    assert forty.gpu == A40 and forty.mig_profile == "1g.5gb" and forty.usd_per_h == pytest.approx(p4d.per_gpu)
    eighty = rows["1/8 of an 8 x A100 80GB instance, 7 x 1g.10gb (MIG)"]
    lows = [q.low for q in pricing.quotes(gpu=A80, gpus=8)]
    assert eighty.mig_profile == "1g.10gb" and eighty.usd_per_h[0] == pytest.approx(min(lows))
    assert not {o.label: o for o in mig.serving_costs(demand_per_s=400)}[one.label].feasible
    for bad in ({"models": 0}, {"models": 8}, {"demand_per_s": -1.0}, {"max_utilization": 1.5}):
        with pytest.raises(ValueError):
            mig.serving_costs(**bad)
    with pytest.raises(TypeError, match="models"):
        mig.serving_costs(models=7.0)
    with pytest.raises(TypeError, match="PriceQuote"):
        mig.serving_costs(prices=[{"gpu": A80}])
    # no price is typed in the chapter module any more
    code = (ROOT / "ampere" / "mig.py").read_text(encoding="utf-8")
    assert "CLOUD_PRICES" not in code and "2.29" not in code and "32.77" not in code


def test_price_and_serving_tables(monkeypatch):
    shown = []
    from ampere import tables

    monkeypatch.setattr(tables, "show_md", shown.append)
    mig.show_prices()
    assert "| A100 80GB (one GPU) | 0.96–2.29 | 0.96–2.29 | 2026 |" in shown[-1] and "seed003" not in shown[-1]
    mig.show_serving(mig.serving_costs())
    assert "| 1 x A100 80GB, 7 x 1g.10gb (MIG) | 0.96–2.29 | 0.14–0.33 | 14 |" in shown[-1]
    with pytest.raises(ValueError, match="ServingOption"):
        mig.show_serving([])


def test_every_source_key_is_in_the_bibliography():
    import re

    bib = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"@\w+\{([^,]+),", bib))
    used = {q.source for q in __import__("ampere.pricing", fromlist=["x"]).quotes()}
    for gpu in mig.mig_gpus():
        for p in mig.profiles(gpu):
            used |= {p.source} | ({p.sm_count_source} if p.sm_count_source else set())
    used |= {r.source for r in results.records(benchmark="mig", kind="published")}
    assert used <= keys, sorted(used - keys)


def test_views_and_figures_refuse_bad_input():
    with pytest.raises(TypeError, match="layouts"):
        mig.layout_rows(A40, 5)
    with pytest.raises(TypeError, match="layouts"):
        mig.plot_layouts(A40, 5)
    with pytest.raises(ValueError, match="empty"):
        mig.plot_layouts(A40, [])
    with pytest.raises(TypeError, match="layouts"):
        mig.show_validation(A40, 5)
    with pytest.raises(TypeError, match="title"):
        mig.show_layouts(A40, [[("7g.40gb", 0)]], title=5)
    with pytest.raises(TypeError, match="quick"):
        mig.instance_points(None, quick="yes")
    with pytest.raises(TypeError, match="layout must be a list"):
        mig.format_layout(5)
    with pytest.raises(ValueError, match=r"layout\[0\]"):
        mig.format_layout([("1g.5gb",)])
    with pytest.raises(TypeError, match="MigReport"):
        mig.compare_with_driver(None)
    with pytest.raises(TypeError, match="device_name"):
        mig.nvml_mig_report(device_name=7)


def test_the_view_measures_on_a_gpu(fake_cuda):  # noqa: F811
    """With a CUDA GPU (the test double), the section's view measures and labels the numbers 'measured here'."""
    from ampere import device

    fake = fake_cuda("A100-SXM4-40GB")
    fake.script_ms([2.0])
    info = device.probe()
    matmul, copy = mig.instance_points(info, quick=True)
    here = [p for p in matmul if p.kind == "measured"]
    assert len(here) == 1 and here[0].source == "measured here" and here[0].gpu == A40
    assert here[0].model == pytest.approx(specs.get(A40).peak_flops("bf16") / 1e12)  # a whole GPU: its peak
    assert here[0].real > 0 and here[0].ratio == pytest.approx(here[0].real / here[0].model)
    assert len(copy) == 1 and copy[0].real == pytest.approx(2 * 256 * 2**20 / 2e-3 / 1e9)
    assert copy[0].model == pytest.approx(specs.get(A40).hbm_bytes_per_s / 1e9)
    assert len(matmul) == 9  # measured here, then the eight published rows
