"""Properties of ampere.architecture: the die and its harvest, per-SM resources and peaks, the L2 as measured,
the roofline, the execution model, the quantisation lessons, the matmul sweep and views, and the figures.

Valid input gives a finite answer of the documented type within its bounds; invalid input is refused with
ValueError/TypeError naming the argument, fast."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import architecture as arch
from ampere import device, specs

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings, catalogue_names, covers,
                      finite_floats, not_lists, rejects, rejects_any)

GPUS = specs.names()
A100 = "A100-SXM4-80GB"
CPU = device.DeviceInfo("cpu", "a CPU")


def _supported(gpu):
    return specs.get(gpu).precisions()


def _close_all():
    import matplotlib.pyplot as plt

    plt.close("all")


def _ax():
    import matplotlib.pyplot as plt

    return plt.subplots()[1]


BAD_AX = st.one_of(st.none(), st.integers(), st.text(max_size=3))


def NOT_NONE(strategy):  # bad values for an argument whose default, None, is valid
    return strategy.filter(lambda v: v is not None)


# --------------------------------------------------------------------------------------------------------
# The die, the SM, the peaks
# --------------------------------------------------------------------------------------------------------

@covers(arch.die_layout, arch.DieLayout, arch.full_die_l2_bytes)
@given(catalogue_names(), st.data())
def test_die_layouts_enable_exactly_the_product_sms(gpu, data):
    spec = specs.get(gpu)
    layout = answers(arch.die_layout, gpu, type_=arch.DieLayout)
    assert layout.enabled_sms == spec.sm_count and layout.spec_name == spec.name
    assert answers(arch.DieLayout, gpu, layout.tpcs, type_=arch.DieLayout) == layout
    rejects(arch.die_layout, "gpu", data.draw(bad_names(GPUS)))
    rejects_any(data, arch.DieLayout, {"spec_name": spec.name, "tpcs": layout.tpcs}, {
        "spec_name": bad_names(GPUS), "tpcs": st.one_of(not_lists(), st.just([[1]]), st.just([["x"]]),
                                                        st.just([[True] * 17]), st.just([])),
    }, field=lambda a: f"DieLayout.{a}")
    product, die = answers(arch.full_die_l2_bytes, A100, type_=tuple)
    assert product == specs.get(A100).l2_bytes and die == product * 6 // 5
    if spec.chip != "GA100":
        rejects(arch.full_die_l2_bytes, "gpu", gpu)
    rejects_any(data, arch.full_die_l2_bytes, {"gpu": A100}, {
        "gpu": bad_names(GPUS), "slices_per_controller": bad_ints(1, 64), "slice_bytes": bad_ints(1, 2**30)})


@covers(arch.harvest_yield, arch.harvest_shortfall)
@given(st.integers(0, 300), st.data(), st.floats(0, 1))
def test_harvest_yield_and_shortfall_are_complementary_probabilities(units, data, q):
    needed = data.draw(st.integers(0, units))
    y = answers(arch.harvest_yield, units, needed, q, type_=float)
    s = answers(arch.harvest_shortfall, units, needed, q, type_=float)
    assert 0.0 <= y <= 1.0 and 0.0 <= s <= 1.0 and math.isclose(y + s, 1.0, abs_tol=1e-9)
    for fn in (arch.harvest_yield, arch.harvest_shortfall):
        rejects_any(data, fn, {"units": units, "needed": needed, "unit_defect_probability": q}, {
            "units": st.one_of(bad_ints(0, 10_000)), "needed": st.one_of(bad_ints(0), st.just(units + 1)),
            "unit_defect_probability": bad_floats(0.0, 1.0, strict=False)})


@covers(arch.sm_resources, arch.sm_table, arch.peak_rows, arch.peak_table, arch.catalogue_peaks)
@given(st.lists(st.sampled_from(GPUS), min_size=1, max_size=3, unique=True), st.data())
def test_peak_tables_derive_every_precision_a_gpu_has(gpus, data):
    res = answers(arch.sm_resources, gpus[0], type_=dict)
    assert res["SMs"] == specs.get(gpus[0]).sm_count
    table = answers(arch.sm_table, gpus, type_=list)
    assert table and all(len(r) == len(gpus) + 1 for r in table)
    rows = answers(arch.peak_rows, gpus, ["bf16", "fp32"], type_=list)
    assert all(r["derived_tflops"] > 0 for r in rows)
    assert {r["precision"] for r in answers(arch.peak_table, gpus[0], type_=list)} >= {"fp32"}
    peaks = answers(arch.catalogue_peaks, gpus, type_=list)
    assert [p["GPU"] for p in peaks] == [specs.get(g).name for g in gpus]
    bad_gpus = st.one_of(not_lists(), st.just([]), st.just(["NoSuchGPU"]))
    bad_precisions = st.one_of(not_lists(), st.just([]), st.just(["fp12"]))
    rejects(arch.sm_resources, "gpu", data.draw(bad_names(GPUS)))
    rejects(arch.sm_table, "gpus", data.draw(bad_gpus))
    rejects(arch.peak_table, "gpu", data.draw(bad_names(GPUS)))
    rejects_any(data, arch.peak_rows, {"gpus": gpus}, {"gpus": bad_gpus, "precisions": bad_precisions})
    rejects_any(data, arch.catalogue_peaks, {"gpus": gpus}, {"gpus": bad_gpus, "precisions": bad_precisions})


@covers(arch.validate_datasheets, arch.datasheet_notes, arch.capability_rows, arch.capability_markdown,
        arch.claims_rows, arch.launch_overheads, arch.arithmetic_latency_cycles)
def test_the_tables_without_arguments():
    text, ok = answers(arch.validate_datasheets, type_=tuple)
    assert ok is True and "datasheet figures checked" in text
    assert all(set(r) == {"first GPU", "figure", "why"} for r in answers(arch.datasheet_notes, type_=list))
    assert len(answers(arch.capability_rows, type_=list)) >= 5
    assert answers(arch.capability_markdown, type_=str).startswith("|")
    claims = answers(arch.claims_rows, type_=list)
    assert claims and all(set(r) == {"claim", "source", "verdict", "evidence"} for r in claims)
    launch = answers(arch.launch_overheads, type_=list)
    assert all(float(r["time per kernel (us)"]) > 0 for r in launch)
    assert answers(arch.arithmetic_latency_cycles, type_=int) == 4


# --------------------------------------------------------------------------------------------------------
# The L2 and the roofline
# --------------------------------------------------------------------------------------------------------

L2_GPUS = ["A100-SXM4-80GB", "H200-SXM-141GB", "H100-PCIe"]


@covers(arch.l2_sweep, arch.l2_summary, arch.l2_read_bandwidth)
@given(st.sampled_from(L2_GPUS), st.integers(1, 2**40), st.data())
def test_the_measured_l2_is_read_from_the_published_sweeps(gpu, size, data):
    rows = answers(arch.l2_sweep, gpu, type_=list)
    assert rows and all(r["read_gb_per_s"] > 0 for r in rows)
    summary = answers(arch.l2_summary, gpu.lower(), type_=dict)
    assert summary["resident_mib"] < summary["first_drop_mib"] <= summary["capacity_mib"] * 1.2
    at = answers(arch.l2_read_bandwidth, size, gpu, type_=dict)
    assert at["read_gb_per_s"] > 0 and at["share_of_plateau"] > 0
    rejects(arch.l2_sweep, "gpu", data.draw(bad_names(L2_GPUS)))
    rejects(arch.l2_summary, "gpu", data.draw(bad_names(L2_GPUS)))
    rejects_any(data, arch.l2_read_bandwidth, {"size_bytes": size, "gpu": gpu}, {
        "size_bytes": st.one_of(bad_ints(1), st.integers(min_value=2**50 + 1)), "gpu": bad_names(L2_GPUS)})


@covers(arch.matmul_intensity, arch.ridge_point, arch.attainable_flops, arch.ridge_points, arch.roofline_curve)
@given(catalogue_names(), st.integers(1, 10**6), st.integers(1, 10**6), st.integers(1, 10**6), st.data())
def test_the_roofline_never_exceeds_the_peak(gpu, m, n, k, data):
    p = data.draw(st.sampled_from(_supported(gpu)))
    spec = specs.get(gpu)
    intensity = answers(arch.matmul_intensity, m, n, k, "bf16", type_=float)
    assert intensity > 0
    ridge = answers(arch.ridge_point, gpu, p, type_=float)
    assert math.isclose(ridge, spec.peak_flops(p) / spec.hbm_bytes_per_s)
    x = data.draw(finite_floats(1e-3, 1e6))
    y = answers(arch.attainable_flops, gpu, p, x, type_=float)
    assert 0 < y <= spec.peak_flops(p) * (1 + 1e-12)
    ys = arch.attainable_flops(gpu, p, [x, 2 * x])
    assert ys[0] <= ys[1] <= spec.peak_flops(p) * (1 + 1e-12)
    assert all(r["ridge_dram"] > 0 for r in answers(arch.ridge_points, gpu, [p], type_=list))
    xs, ys = answers(arch.roofline_curve, gpu, p, points=8, type_=tuple)
    assert len(xs) == len(ys) == 8
    rejects_any(data, arch.matmul_intensity, {"m": m, "n": n, "k": k}, {
        "m": bad_ints(1), "n": bad_ints(1), "k": bad_ints(1), "precision": bad_names(["bf16", "fp32", "fp16"])})
    rejects_any(data, arch.ridge_point, {"gpu": gpu, "precision": p}, {
        "gpu": bad_names(GPUS), "precision": bad_names(_supported(gpu)), "bytes_per_s": NOT_NONE(bad_floats(0.0))})
    rejects_any(data, arch.attainable_flops, {"gpu": gpu, "precision": p, "intensity": x}, {
        "intensity": st.one_of(bad_floats(0.0), st.just([1.0, -1.0]), st.just(["1"])),
        "precision": bad_names(_supported(gpu)), "bytes_per_s": NOT_NONE(bad_floats(0.0))})
    rejects(arch.ridge_points, "precisions", gpu,
            data.draw(NOT_NONE(st.one_of(not_lists(), st.just([]), st.just(["x"])))))
    rejects_any(data, arch.roofline_curve, {"gpu": gpu, "precision": p}, {
        "lo": bad_floats(0.0), "hi": bad_floats(0.0), "points": bad_ints(2, 100_000)})


# --------------------------------------------------------------------------------------------------------
# The execution model
# --------------------------------------------------------------------------------------------------------

@covers(arch.issue_model, arch.branch_cycles, arch.divergence_expected)
@given(st.integers(1, 31), finite_floats(0, 1e4), finite_floats(0, 1e4), st.floats(0, 1), st.data())
def test_a_divergent_warp_pays_every_path(lanes_a, cost_a, cost_b, p, data):
    gpu = data.draw(st.sampled_from([g for g in GPUS if specs.get(g).compute_capability[0] >= 7]))
    model = answers(arch.issue_model, gpu, type_=dict)
    assert model["schedulers per SM"] == 4
    b = answers(arch.branch_cycles, [lanes_a, 32 - lanes_a], [cost_a, cost_b], type_=dict)
    assert math.isclose(b["cycles"], cost_a + cost_b) and 0.0 <= b["simt_efficiency"] <= 1.0
    d = answers(arch.divergence_expected, p, cost_a, cost_b, type_=dict)
    coherent = answers(arch.divergence_expected, p, cost_a, cost_b, coherent=True, type_=dict)
    assert d["cycles"] >= coherent["cycles"] * (1 - 1e-12)
    rejects(arch.issue_model, "gpu", data.draw(bad_names(GPUS)))
    rejects_any(data, arch.branch_cycles, {"lanes_per_path": [lanes_a, 32 - lanes_a], "cycles_per_path": [1, 2]}, {
        "lanes_per_path": st.one_of(not_lists(), st.just([32, 1]), st.just([1.5, 30.5]), st.just([33, -1])),
        "cycles_per_path": st.one_of(not_lists(), st.just([1.0]), st.just([-1.0, 1.0]), st.just(["1", 2]))})
    rejects_any(data, arch.divergence_expected, {"p_taken": p, "cycles_taken": cost_a, "cycles_other": cost_b}, {
        "p_taken": bad_floats(0.0, 1.0, strict=False), "cycles_taken": bad_floats(0.0, strict=False),
        "cycles_other": bad_floats(0.0, strict=False), "coherent": bad_booleans()})


@covers(arch.warps_to_hide, arch.issue_utilization, arch.resident_warps)
@given(finite_floats(1, 1e4), st.integers(1, 64), st.integers(0, 64), st.data())
def test_littles_law_and_occupancy(latency, ilp, warps, data):
    need = answers(arch.warps_to_hide, latency, A100, ilp, type_=int)
    assert need == math.ceil(latency / ilp) * 4
    util = answers(arch.issue_utilization, warps, latency, A100, ilp, type_=float)
    assert 0.0 <= util <= 1.0 and (util == 1.0) == (warps >= need or util == 1.0)
    threads = data.draw(st.sampled_from([32, 64, 128, 256, 512, 1024]))
    regs = data.draw(st.integers(1, 64))
    occ = answers(arch.resident_warps, A100, threads, regs, type_=dict)
    assert 0 < occ["warps"] <= 64 and 0 < occ["occupancy"] <= 1.0
    rejects_any(data, arch.warps_to_hide, {"latency_cycles": latency}, {
        "latency_cycles": bad_floats(0.0, 1e6), "ilp": bad_ints(1, 64), "gpu": bad_names(GPUS)})
    rejects_any(data, arch.issue_utilization, {"warps_per_sm": warps, "latency_cycles": latency}, {
        "warps_per_sm": bad_ints(0, 64), "latency_cycles": bad_floats(0.0, 1e6), "ilp": bad_ints(1, 64)})
    rejects_any(data, arch.resident_warps, {"gpu": A100, "threads_per_block": threads, "registers_per_thread": regs}, {
        "gpu": bad_names(GPUS), "threads_per_block": bad_ints(1, 1024), "registers_per_thread": bad_ints(1, 255),
        "shared_bytes_per_block": bad_ints(0, specs.get(A100).max_shared_bytes_per_sm)})


# --------------------------------------------------------------------------------------------------------
# Waves, three roofs, launches
# --------------------------------------------------------------------------------------------------------

@covers(arch.staircase, arch.staircase_sizes, arch.three_roofs, arch.overhead_step_time, arch.launch_overhead_s)
@given(st.lists(st.integers(1, 20_000), min_size=1, max_size=8), st.integers(1, 8192), st.integers(1, 8192),
       st.integers(1, 100_000), st.lists(finite_floats(0, 1e-3), min_size=1, max_size=50), st.data())
def test_waves_roofs_and_launches(ns, m, k, n, kernels, data):
    rows = answers(arch.staircase, A100, ns, m, k, type_=list)
    assert all(0 < r["pct_of_peak"] <= 100 + 1e-9 and r["waves"] >= 1 for r in rows)
    sizes = answers(arch.staircase_sizes, 128, 1024, 128, type_=list)
    assert sizes == list(range(128, 1025, 128))
    roofs = answers(arch.three_roofs, A100, n, type_=dict)
    assert roofs["attainable"] == min(roofs["compute"], roofs["memory"], roofs["overhead"])
    graph = answers(arch.launch_overhead_s, True, type_=float)
    stream = answers(arch.launch_overhead_s, type_=float)
    assert 0 < graph < stream < 1e-5
    step = answers(arch.overhead_step_time, kernels, type_=dict)
    assert step["step_s"] >= step["kernel_s"] and 0.0 <= step["overhead_share"] <= 1.0
    rejects_any(data, arch.staircase, {"gpu": A100, "ns": ns, "m": m, "k": k}, {
        "ns": st.one_of(not_lists(), st.just([]), st.just([0]), st.just([1.5])), "m": bad_ints(1, 2**31 - 1),
        "k": bad_ints(1, 2**31 - 1), "precision": bad_names(_supported(A100)), "tile_m": bad_ints(1, 4096),
        "tile_n": bad_ints(1, 4096), "overhead_s": bad_floats(0.0, 3600.0, strict=False), "gpu": bad_names(GPUS)})
    rejects_any(data, arch.staircase_sizes, {}, {"lo": bad_ints(1, 65536), "hi": bad_ints(1, 65536),
                                                 "step": bad_ints(1, 65536)})
    rejects_any(data, arch.three_roofs, {"gpu": A100, "n": n}, {
        "n": bad_ints(1, 1_000_000), "precision": bad_names(_supported(A100)), "launch_s": NOT_NONE(bad_floats(0.0, 1.0))})
    rejects(arch.launch_overhead_s, "graph", data.draw(bad_booleans()))
    rejects_any(data, arch.overhead_step_time, {"kernel_seconds": kernels}, {
        "kernel_seconds": st.one_of(not_lists(), st.just([]), st.just([-1.0]), st.just([float("nan")])),
        "launch_s": NOT_NONE(bad_floats(0.0, 1.0))})


# --------------------------------------------------------------------------------------------------------
# Real matmuls: the sweep on a CPU, recorded results, the views
# --------------------------------------------------------------------------------------------------------

FAST = {"warmup_s": 0.0, "min_time_s": 0.001, "max_time_s": 0.01}


@covers(arch.matmul_sweep, arch.matmul_records, arch.bf16_peak_check, arch.staircase_sweep, arch.bench_main)
@settings(max_examples=4)  # each example times matmuls
@given(st.lists(st.sampled_from([8, 16, 24]), min_size=1, max_size=2, unique=True),
       st.lists(st.sampled_from(["fp32", "bf16", "fp16"]), min_size=1, max_size=2, unique=True), st.data())
def test_the_sweep_runs_on_a_cpu_and_refuses_bad_settings(sizes, precisions, data):
    import tempfile

    from ampere import results

    recs = answers(arch.matmul_sweep, sizes, precisions, device="cpu", info=CPU, **FAST, type_=list)
    assert len(recs) == len(sizes) * len(precisions) and all(r["tflops"] > 0 for r in recs)
    assert answers(arch.bf16_peak_check, recs, n=sizes[0], type_=(dict, type(None))) is None  # no peak on a CPU
    result = results.make_result("matmul", CPU, {}, recs, [])
    rows = answers(arch.matmul_records, result, type_=list)
    assert [r["n"] for r in rows] == [r["n"] for r in recs]
    stair = answers(arch.staircase_sweep, sizes, 16, 16, "fp32", device="cpu", info=CPU, **FAST, type_=list)
    assert [r["n"] for r in stair] == sizes
    rejects_any(data, arch.matmul_sweep, {"sizes": sizes, "device": "cpu", "info": CPU, **FAST}, {
        "sizes": st.one_of(not_lists(), st.just([0]), st.just([2**17]), st.just([8.0])),
        "precisions": st.one_of(not_lists(), st.just([]), st.just(["tf16"])),
        "device": st.one_of(st.just("gpu"), st.just(""), st.integers()),
        "warmup_s": bad_floats(0.0, 600.0, strict=False), "progress": st.one_of(st.integers(), st.text(max_size=3))})
    rejects_any(data, arch.staircase_sweep, {"ns": sizes, "m": 16, "k": 16, "device": "cpu", "info": CPU, **FAST}, {
        "ns": st.one_of(not_lists(), st.just([]), st.just([0])), "m": bad_ints(1, 65536), "k": bad_ints(1, 65536),
        "precision": bad_names(arch.MATMUL_PRECISIONS), "max_time_s": bad_floats(0.0, 600.0, strict=False)})
    rejects(arch.matmul_records, "result", data.draw(st.one_of(st.none(), st.integers(), st.just({}))))
    rejects_any(data, arch.bf16_peak_check, {"records": recs}, {
        "records": st.one_of(not_lists(), st.just([1])), "n": bad_ints(1, 65536),
        "target_pct": bad_floats(0.0, 100.0, strict=False)})
    rejects(arch.bench_main, "argv", data.draw(st.one_of(st.text(min_size=1, max_size=4), st.integers(),
                                                         st.just([1]))))
    with tempfile.TemporaryDirectory() as tmp:
        assert arch.bench_main(["--device", "cpu", "--sizes", "8", "--precisions", "fp32", "--out", tmp + "/"]) == 0


@covers(arch.matmul_points, arch.published_matmul_table, arch.show_matmul)
@settings(max_examples=5)
@given(st.integers(1, 2**15), st.data())
def test_matmul_views_show_published_points_without_a_gpu(min_n, data):
    from ampere import views

    pts = answers(arch.matmul_points, CPU, None, min_n, type_=list)
    assert pts and all(isinstance(p, views.Point) for p in pts)
    sweep = [{"precision": "fp32", "n": 4096, "tflops": 1.0}]
    assert len(answers(arch.matmul_points, CPU, sweep, 4096, type_=list)) == len(
        arch.matmul_points(CPU, None, 4096)) + 1
    table = answers(arch.published_matmul_table, type_=list)
    assert table and all(r["source"] for r in table)
    try:
        assert answers(arch.show_matmul, CPU, type_=list)
    finally:
        _close_all()
    rejects_any(data, arch.matmul_points, {"info": CPU}, {
        "info": st.one_of(st.integers(), st.text(), st.just(object())),
        "sweep": st.one_of(st.integers(), st.just([1]), st.just([{"n": 1}])), "min_n": bad_ints(1, 2**20)})
    rejects_any(data, arch.show_matmul, {"info": CPU}, {
        "measure": bad_booleans().filter(lambda v: v is not None), "sizes": st.one_of(not_lists(), st.just([0]))})


# --------------------------------------------------------------------------------------------------------
# The figures
# --------------------------------------------------------------------------------------------------------

@covers(arch.draw_die, arch.plot_dies, arch.plot_harvest, arch.plot_roofline, arch.show_staircase)
@settings(max_examples=3)  # each example draws figures
@given(st.lists(st.sampled_from(GPUS), min_size=1, max_size=2, unique=True), st.data())
def test_the_die_harvest_roofline_and_staircase_figures(gpus, data):
    import matplotlib.pyplot as plt

    try:
        ax = _ax()
        assert answers(arch.draw_die, ax, gpus[0], type_=arch.DieLayout).enabled_sms == specs.get(gpus[0]).sm_count
        _, axes = plt.subplots(1, len(gpus), squeeze=False)
        assert len(answers(arch.plot_dies, list(axes[0]), gpus, type_=list)) == len(gpus)
        assert answers(arch.plot_harvest, _ax(), type_=type(None)) is None
        assert answers(arch.plot_roofline, _ax(), A100, type_=type(None)) is None
        shown = answers(arch.show_staircase, CPU, ns=[128, 2304, 2432], type_=dict)
        assert shown["gpu"] == A100 and shown["measured"] == []
        rejects(arch.draw_die, "ax", data.draw(BAD_AX), A100)
        rejects(arch.draw_die, "gpu", ax, data.draw(bad_names(GPUS)))
        rejects(arch.plot_dies, "gpus", list(axes[0]), data.draw(st.one_of(not_lists(), st.just(["NoSuchGPU"]))))
        rejects_any(data, arch.plot_harvest, {"ax": ax}, {
            "ax": BAD_AX, "units": bad_ints(1, 10_000), "needed": st.one_of(not_lists(), st.just([-1])),
            "q_max": bad_floats(0.0, 1.0)})
        rejects_any(data, arch.plot_roofline, {"ax": ax}, {
            "ax": BAD_AX, "gpu": bad_names(GPUS), "precisions": st.one_of(not_lists(), st.just(["fp12"])),
            "l2": bad_booleans(), "sizes": st.one_of(not_lists(), st.just([0]))})
        rejects_any(data, arch.show_staircase, {"info": CPU}, {
            "ns": st.one_of(not_lists(), st.just([0])), "m": bad_ints(1, 65536), "k": bad_ints(1, 65536),
            "precision": bad_names(["fp32", "tf32", "bf16", "fp16", "fp64"]),
            "measure": bad_booleans().filter(lambda v: v is not None)})
    finally:
        _close_all()


@covers(arch.plot_divergence, arch.plot_occupancy, arch.plot_latency_hiding, arch.plot_staircase,
        arch.plot_three_roofs)
@settings(max_examples=3)
@given(finite_floats(0, 1e3), st.sampled_from([64, 128, 256, 1024]), st.data())
def test_the_execution_figures(cost, threads, data):
    try:
        ax = _ax()
        drawn = answers(arch.plot_divergence, ax, cost + 1, cost, type_=dict)
        assert len(drawn["p"]) == len(drawn["independent"]) == len(drawn["coherent"])
        assert answers(arch.plot_occupancy, _ax(), A100, threads, type_=list)
        cases = [("4 cycles", 4, 1), ("400 cycles", 400.0, 4)]
        assert set(answers(arch.plot_latency_hiding, _ax(), A100, cases, type_=dict)) == {"4 cycles", "400 cycles"}
        measured = [{"n": 2304, "tflops": 200.0}]
        assert answers(arch.plot_staircase, _ax(), A100, [2304, 2432], 1536, 4096, measured=measured, type_=list)
        assert answers(arch.plot_three_roofs, _ax(), A100, "bf16", [64, 1024], type_=list)
        rejects_any(data, arch.plot_divergence, {"ax": ax}, {
            "ax": BAD_AX, "cycles_taken": bad_floats(0.0, strict=False),
            "cycles_other": bad_floats(0.0, strict=False)})
        rejects_any(data, arch.plot_occupancy, {"ax": ax}, {
            "ax": BAD_AX, "gpu": bad_names(GPUS), "threads_per_block": bad_ints(1, 1024)})
        rejects_any(data, arch.plot_latency_hiding, {"ax": ax}, {
            "ax": BAD_AX, "cases": st.one_of(not_lists(), st.just([("x", 4)]), st.just([("x", -4, 1)]),
                                             st.just([(1, 4, 1)]), st.just([("x", 4, 0)]))})
        rejects_any(data, arch.plot_staircase, {"ax": ax, "gpu": A100, "ns": [128], "m": 128, "k": 128}, {
            "ax": BAD_AX, "ns": st.one_of(not_lists(), st.just([0])), "m": bad_ints(1, 2**31 - 1),
            "measured": st.one_of(st.integers(), st.just([{"n": 1}]), st.just([{"n": 0, "tflops": 1.0}])),
            "measured_label": bad_strings()})
        rejects_any(data, arch.plot_three_roofs, {"ax": ax}, {
            "ax": BAD_AX, "gpu": bad_names(GPUS), "precision": bad_names(_supported(A100)),
            "ns": st.one_of(st.integers(), st.just([0]), st.just([1.5]))})
    finally:
        _close_all()
