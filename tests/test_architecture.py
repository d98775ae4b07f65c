"""ampere.architecture: die layouts, peak tables, roofline arithmetic, yield, the sweep on CPU."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from ampere import architecture as arch  # noqa: E402
from ampere import specs, tables  # noqa: E402


@pytest.mark.parametrize("name", specs.names())
def test_die_layout_enables_exactly_the_product_sms(name):
    spec = specs.get(name)
    layout = arch.die_layout(spec)
    assert layout.enabled_sms == spec.sm_count
    assert layout.gpcs == spec.die_gpcs and all(len(g) == spec.die_tpcs_per_gpc for g in layout.tpcs)


def test_ga100_product_configuration():
    layout = arch.die_layout("A100-SXM4-40GB")
    assert layout.enabled_gpcs == 7
    assert sorted(sum(g) for g in layout.tpcs if any(g)) == [7, 7, 8, 8, 8, 8, 8]


def test_draw_die_returns_layout():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    assert arch.draw_die(ax, "H100-SXM5-80GB").enabled_sms == 132
    plt.close(fig)


def test_sm_resources_a100():
    r = arch.sm_resources("A100-SXM4-80GB")
    assert r["FP32 lanes/SM"] == 64 and r["tensor cores/SM"] == 4 and r["FMA/clk per tensor core"] == 256
    assert r["L1+shared KiB/SM"] == 192 and r["registers KiB/SM"] == 256 and r["L2 MiB"] == 40


def test_peak_rows_and_datasheet_validation():
    rows = arch.peak_rows(["A100-SXM4-80GB"])
    by = {(r["precision"], r["sparse"]): r for r in rows}
    assert ("fp64", True) not in by and by[("bf16", True)]["datasheet"] == "624"
    assert by[("tf32", False)]["derived_tflops"] == pytest.approx(155.9, abs=0.05)
    text, ok = arch.validate_datasheets()
    assert ok and "MISMATCH" not in text and "datasheet figures checked" in text


def test_matmul_intensity_and_roofline():
    assert arch.matmul_intensity(4096, 4096, 4096, "bf16") == pytest.approx(4096 / 3)
    assert arch.matmul_intensity(1, 4096, 4096, "fp16") < 1.0  # a matrix-vector product is memory bound
    a100 = specs.get("A100-SXM4-80GB")
    assert arch.attainable_flops(a100, "bf16", 1.0) == pytest.approx(2039e9)
    assert arch.attainable_flops(a100, "bf16", 1e4) == pytest.approx(a100.peak_flops("bf16"))
    ridge = {r["precision"]: r for r in arch.ridge_points(a100)}
    assert ridge["bf16"]["ridge_dram"] == pytest.approx(a100.peak_flops("bf16") / 2039e9)
    assert ridge["bf16"]["ridge_l2"] < ridge["bf16"]["ridge_dram"]
    x, y = arch.roofline_curve(a100, "fp32", points=10)
    assert len(x) == len(y) == 10 and max(y) == pytest.approx(a100.peak_flops("fp32"))
    with pytest.raises(ValueError):
        arch.matmul_intensity(0, 1, 1)
    with pytest.raises(ValueError):
        arch.matmul_intensity(1, 1, 1, "fp7")
    with pytest.raises(ValueError):
        arch.attainable_flops(a100, "bf16", 0.0)
    with pytest.raises(ValueError):
        arch.ridge_points(a100, ["fp8"])


def test_harvest_yield():
    assert arch.harvest_yield(128, 128, 0.0) == 1.0
    assert arch.harvest_yield(10, 0, 0.9) == pytest.approx(1.0)
    assert arch.harvest_yield(1, 1, 0.25) == pytest.approx(0.75)
    assert arch.harvest_yield(128, 108, 0.05) > 0.99 > 0.01 > arch.harvest_yield(128, 128, 0.05)
    with pytest.raises(ValueError):
        arch.harvest_yield(10, 11, 0.1)
    with pytest.raises(ValueError):
        arch.harvest_yield(10, 5, 1.5)


def test_capability_rows_follow_the_specs():
    rows = {r["machine"]: r for r in arch.capability_rows()}
    assert rows["Colab free tier (T4)"]["TF32"] == "model" and rows["Colab free tier (T4)"]["compute capability"] == "7.5"
    assert rows["A100 80GB SXM (cloud)"]["2:4 sparse"] == "measure"
    # nothing measures FP8: the column is the model on every GPU, and says where FP8 tensor cores exist
    assert rows["H100 / H200 SXM"]["FP8"] == "model (FP8 tensor cores)" and rows["A100 80GB SXM (cloud)"]["FP8"] == "model"
    assert all(not r["FP8"].startswith("measure") for r in rows.values())
    md = arch.capability_markdown()
    assert md.count("\n") == len(rows) + 1 and md.startswith("| machine |")
    with pytest.raises(ValueError):
        tables.markdown_table([])


def test_matmul_sweep_runs_on_cpu_and_records_are_recomputable():
    from ampere import device, results

    recs = arch.matmul_sweep([32, 64], ["fp32", "bf16"], device="cpu", warmup_s=0.0, min_time_s=0.0,
                             max_time_s=0.5)
    assert [(r["precision"], r["n"]) for r in recs] == [("fp32", 32), ("fp32", 64), ("bf16", 32), ("bf16", 64)]
    assert all(r["tflops"] > 0 and r["flops"] == 2 * r["n"] ** 3 and "pct_of_peak" not in r for r in recs)
    res = results.make_result("matmul", device.probe(), {}, recs)
    rows = arch.matmul_records(res)
    assert [round(r["tflops"], 9) for r in rows] == [round(r["tflops"], 9) for r in recs]
    with pytest.raises(ValueError):
        arch.matmul_sweep([64], ["fp12"], device="cpu")
    with pytest.raises(ValueError):
        arch.matmul_sweep([0], ["fp32"], device="cpu")


def test_published_matmul_view_reads_the_data_folder():
    # the transitional dict view reads ampere/data/published/matmul.json; no figure is typed in the module
    from ampere import gemm

    rows = arch.PUBLISHED_MATMUL
    assert rows and all(r["source"] for r in rows)
    data = {(r.gpu, r.params["precision"], gemm.matmul_tflops(r)) for r in gemm.published_matmul()}
    assert all((r["gpu"], r["precision"], r["tflops"]) in data for r in rows)
    mamf = [r for r in rows if r.get("kind") == "mamf"]
    assert {r["gpu"] for r in mamf} >= {"A100-SXM4-80GB", "H100-SXM5-80GB"}


def test_ridge_point_refuses_bad_bandwidths():
    a100 = specs.get("A100-SXM4-80GB")
    assert arch.ridge_point(a100, "bf16") == pytest.approx(a100.peak_flops("bf16") / a100.hbm_bytes_per_s)
    assert arch.ridge_point("A100-SXM4-80GB", "bf16", a100.l2_bytes_per_s) < arch.ridge_point(a100, "bf16")
    for bad in (float("nan"), float("inf"), 0, -1.0):
        with pytest.raises(ValueError, match="bytes_per_s"):
            arch.ridge_point(a100, "bf16", bytes_per_s=bad)
        with pytest.raises(ValueError, match="bytes_per_s"):
            arch.attainable_flops(a100, "bf16", 10.0, bytes_per_s=bad)
    for bad in ("2e12", True):
        with pytest.raises(TypeError, match="bytes_per_s"):
            arch.ridge_point(a100, "bf16", bytes_per_s=bad)
    with pytest.raises(ValueError, match="precision"):
        arch.ridge_point(a100, "fp8")
    with pytest.raises(ValueError, match="intensity"):
        arch.attainable_flops(a100, "bf16", [1.0, float("nan")])
    with pytest.raises(ValueError, match="hi"):
        arch.roofline_curve(a100, "bf16", lo=10, hi=1)


def test_numpy_integers_are_accepted_and_bools_refused():
    import numpy as np

    assert arch.matmul_intensity(np.int64(4096), np.int32(4096), 4096) == pytest.approx(4096 / 3)
    assert arch.harvest_yield(np.int64(10), np.int64(10), 0.0) == 1.0
    with pytest.raises(TypeError, match="m"):
        arch.matmul_intensity(True, 2, 2)
    with pytest.raises(TypeError, match="units"):
        arch.harvest_yield(10.0, 5, 0.1)
    with pytest.raises(ValueError, match="unit_defect_probability"):
        arch.harvest_yield(10, 5, float("nan"))


def test_harvest_shortfall_is_the_complement_without_cancellation():
    for q in (0.02, 0.1, 0.3):
        assert arch.harvest_shortfall(128, 108, q) + arch.harvest_yield(128, 108, q) == pytest.approx(1.0)
    tiny = arch.harvest_shortfall(128, 108, 0.01)
    assert 0 < tiny < 1e-15  # far below what 1 - harvest_yield could resolve
    with pytest.raises(ValueError):
        arch.harvest_shortfall(5, 6, 0.1)


def test_bf16_peak_check_reads_sweeps_and_recorded_rows():
    rows = [{"precision": "bf16", "n": 4096, "tflops": 600.0, "pct_of_peak": 60.6},
            {"precision": "bf16", "n": 8192, "tflops": 760.0, "pct_of_peak": 76.8},
            {"precision": "fp16", "n": 8192, "tflops": 700.0, "pct_of_peak": 70.7}]
    check = arch.bf16_peak_check(rows)
    assert check == {"n": 8192, "tflops": 760.0, "pct_of_peak": 76.8, "target_pct": arch.BF16_TARGET_PCT,
                     "met": True}
    assert arch.bf16_peak_check(rows, n=4096)["met"] is False
    assert arch.bf16_peak_check([{"precision": "bf16", "n": 8192, "tflops": 1.0}]) is None  # no catalogue peak
    assert arch.bf16_peak_check([]) is None


def test_matmul_sweep_skips_the_rest_of_a_precision_on_out_of_memory(monkeypatch):
    import torch

    from ampere import timing

    calls = []

    def fake_benchmark(fn, **kw):
        calls.append(kw["params"]["n"])
        if kw["params"]["n"] >= 64:
            raise torch.cuda.OutOfMemoryError("simulated")
        return timing.Measurement(label="x", samples_s=[1e-3] * 10)

    monkeypatch.setattr(timing, "benchmark", fake_benchmark)
    with pytest.warns(UserWarning, match="out of memory"):
        recs = arch.matmul_sweep([32, 64, 128], ["fp32"], device="cpu")
    assert [r["n"] for r in recs] == [32] and calls == [32, 64]


def test_bench_runs_its_whole_code_path_on_the_cpu(capsys, tmp_path):
    import json
    import time

    t0 = time.perf_counter()
    assert arch.bench_main(["--device", "cpu", "--quick", "--out", str(tmp_path / "m.json")]) == 0
    assert time.perf_counter() - t0 < 60
    out = capsys.readouterr().out
    assert "matmul sweep on CPU" in out and "written to" in out
    res = json.loads((tmp_path / "m.json").read_text())
    assert res["device"]["backend"] == "cpu" and res["benchmark"] == "matmul"
    assert {r["precision"] for r in res["records"]} == {"fp32", "bf16", "fp16"}  # no TF32 mode on a CPU
    assert any("CPU code path" in n for n in res["notes"]) and any("tf32" in n for n in res["notes"])
    assert all("pct_of_peak" not in r for r in res["records"])  # a CPU has no catalogue peak
    # a CPU result is never recorded into the package's data folder
    from pathlib import Path

    data = Path(arch.__file__).resolve().parent / "data"
    assert arch.bench_main(["--device", "cpu", "--quick", "--out", str(data) + "/"]) == 2


def test_public_functions_name_the_chapter():
    import inspect

    for name in arch.__all__:
        obj = getattr(arch, name)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == arch.__name__:
            assert "Architecture of the GA100" in " ".join((obj.__doc__ or "").split()), name


def test_chapter_tables_and_figures():
    import matplotlib.pyplot as plt

    peaks = {(r["precision"], r["dense/sparse"]): r for r in arch.peak_table("A100-SXM4-80GB")}
    assert peaks[("bf16", "dense")]["derived TFLOP/s"] == "311.9" and peaks[("bf16", "sparse")]["datasheet"] == "624"
    cat = {r["GPU"]: r for r in arch.catalogue_peaks()}
    assert cat["T4"]["bf16"] == "" and cat["H100-SXM5-80GB"]["fp8"] != "" and cat["A100-SXM4-80GB"]["SMs"] == 108
    notes = arch.datasheet_notes()
    assert notes and all(n["why"] for n in notes) and any("2496" in n["figure"] for n in notes)
    sm = {r[""]: r for r in arch.sm_table()}
    assert sm["tensor cores/SM"]["A100-SXM4-80GB"] == 4 and sm["tensor cores/SM"]["V100-SXM2-32GB"] == 8
    claims = arch.claims_rows()
    assert {r["verdict"] for r in claims} >= {"holds", "wrong"}
    assert not any(r["source"].startswith("seed") for r in claims)  # labels, never bibliography keys
    fig, axes = plt.subplots(1, 3)
    assert [d.enabled_sms for d in arch.plot_dies(axes)] == [80, 108, 132]
    with pytest.raises(ValueError, match="axes"):
        arch.plot_dies(axes[:2])
    plt.close(fig)
    fig, ax = plt.subplots()
    arch.plot_harvest(ax)
    arch.plot_roofline(ax)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("published" in t for t in labels) and not any("2024mle" in t for t in labels)
    plt.close(fig)
    with pytest.raises(ValueError, match="needed"):
        arch.plot_harvest(ax, needed=(200,))


def test_full_die_l2_from_the_slice_rule():
    product, die = arch.full_die_l2_bytes("A100-SXM4-80GB")
    assert product == specs.get("A100-SXM4-80GB").l2_bytes == 40 * 2**20 and die == 48 * 2**20
    with pytest.raises(ValueError, match="GA100"):
        arch.full_die_l2_bytes("H100-SXM5-80GB")


def test_matmul_view_without_a_gpu_shows_recorded_and_published_numbers(monkeypatch):
    import matplotlib.pyplot as plt

    from ampere import device, tables

    shown = []
    monkeypatch.setattr(tables, "show_md", shown.append)
    monkeypatch.setattr(plt, "show", lambda: None)
    info = device.DeviceInfo("cpu", "test CPU")
    pts = arch.show_matmul(info)
    assert pts and {p.kind for p in pts} <= {"recorded", "published"} and all(p.source for p in pts)
    assert any(p.gpu.startswith("A100") for p in pts) and any(p.gpu.startswith("H100") for p in pts)
    assert all(0 < p.ratio < 1 for p in pts if p.ratio is not None)  # below the dense peak, every one
    assert not any("earlier revision" in p.source for p in pts)  # superseded revisions only in the dropdown
    assert any("{dropdown}" in s for s in shown) and not any("no recorded" in s.lower() for s in shown)
    plt.close("all")
    fake = [{"precision": "bf16", "n": 8192, "tflops": 250.0, "peak_tflops": 312.0},
            {"precision": "bf16", "n": 1024, "tflops": 90.0, "peak_tflops": 312.0}]
    here = [p for p in arch.matmul_points(device.DeviceInfo("cuda", "NVIDIA A100-SXM4-80GB",
                                                            spec_name="A100-SXM4-80GB"), fake)
            if p.kind == "measured"]
    assert [(p.what, p.source) for p in here] == [("bf16 8192³", "measured here")]  # small sizes left out


def test_bf16_peak_check_refuses_bad_arguments():
    with pytest.raises(TypeError, match="n"):
        arch.bf16_peak_check([], n=8192.0)
    with pytest.raises(ValueError, match="target_pct"):
        arch.bf16_peak_check([], target_pct=150)
