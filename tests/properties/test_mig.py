"""Properties of ampere.mig (and its aliases ampere.mig_geometry, ampere.mig_sim): valid input gives a finite,
typed answer within its bounds; invalid input is refused with ValueError/TypeError naming the field, fast."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import device, mig, specs
from ampere.mig import geometry

from ..mig.fakenvml import _driver_rows, fake_nvml
from .harness import answers, bad_floats, bad_ints, bad_names, covers, not_lists, rejects, rejects_any

A40, A80 = "A100-SXM4-40GB", "A100-SXM4-80GB"
CPU = device.DeviceInfo("cpu", "a CPU")
MIG_GPUS = mig.mig_gpus()
FAST = mig.SimConfig(duration_s=0.3, warmup_s=0.05)  # a short simulated window: the properties, not the tails


def _bad_field_value(f: dataclasses.Field, data: st.DataObject):
    """A value of the wrong type for the record field ``f`` (by its annotation), or None for a field it
    cannot judge."""
    ann = str(f.type).replace(" ", "")
    optional = ann.endswith("|None")
    base = ann[:-len("|None")] if optional else ann
    wrong = {"str": st.one_of(st.integers(), st.just(["x"])), "bool": st.one_of(st.just("yes"), st.integers(0, 1)),
             "int": st.one_of(st.just(1.5), st.just(True), st.just("3"), st.just(-5)),
             "float": st.one_of(st.just(float("nan")), st.just("1.0"), st.just(True), st.just(float("inf"))),
             }.get(base)
    if base.startswith(("tuple", "list")):
        wrong = st.one_of(st.integers(), st.just("ab"))
    if wrong is None:
        return None
    return data.draw(wrong if optional else st.one_of(wrong, st.none()))


def record_rejects(data: st.DataObject, obj) -> None:
    """Rebuild the record ``obj`` with one field of the wrong type: refused, naming ``Class.field``."""
    cls = type(obj)
    fields = [f for f in dataclasses.fields(cls) if f.init]
    f = data.draw(st.sampled_from(fields), label="field")
    bad = _bad_field_value(f, data)
    if bad is None:
        return
    if f.name in getattr(cls, "FIELD_RULES", {}).get("signed", ()) and bad == -5:
        bad = 1.5
    kwargs = {g.name: getattr(obj, g.name) for g in fields}
    rejects(cls, f"{cls.__name__}.{f.name}", **{**kwargs, f.name: bad})


def gpus() -> st.SearchStrategy[str]:
    return st.sampled_from(MIG_GPUS)


@covers(mig.mig_gpus, mig.table, mig.profiles, mig.profile, mig.smallest_profile, mig.Profile, mig.MigTable,
        mig.placement, mig.Placement, mig.instance_peaks, mig.InstancePeaks, mig.profile_from_device_name,
        mig.compute_instance_profiles, mig.ComputeProfile, mig.media_owners)
@given(gpus(), st.data())
def test_profile_tables(gpu, data):
    assert gpu in answers(mig.mig_gpus, type_=list)
    t = answers(mig.table, gpu, type_=mig.MigTable)
    ps = answers(mig.profiles, gpu, type_=tuple)
    assert ps == t.profiles and len(ps) >= 3
    p = data.draw(st.sampled_from(ps))
    assert answers(mig.profile, gpu, p.name, type_=mig.Profile) == p
    assert 1 <= p.compute_slices <= 7 and 1 <= p.memory_slices <= 8 and p.max_count >= 1
    small = answers(mig.smallest_profile, gpu, type_=mig.Profile)
    assert small.compute_slices == 1 and small.memory_slices == 1
    start = data.draw(st.sampled_from(p.starts))
    pl = answers(mig.placement, gpu, p.name, start, type_=mig.Placement)
    assert len(pl.memory) == p.memory_slices and len(pl.compute) == p.compute_slices
    whole = answers(mig.instance_peaks, gpu, type_=mig.InstancePeaks)
    if p.sm_count is None:  # documented: no sourced SM count (H200), no compute peak
        rejects(mig.instance_peaks, "name", gpu, p.name)
        peaks = whole
    else:
        peaks = answers(mig.instance_peaks, gpu, p.name, type_=mig.InstancePeaks)
        assert 0 < peaks.flops <= whole.flops and 0 < peaks.hbm_bytes_per_s <= whole.hbm_bytes_per_s
    assert answers(mig.profile_from_device_name, f"NVIDIA {gpu} MIG {p.name}", type_=str) == p.name
    assert mig.profile_from_device_name("NVIDIA A100-SXM4-40GB") is None
    cis = answers(mig.compute_instance_profiles, gpu, p.name, type_=tuple)
    assert cis and all(ci.compute_slices <= p.compute_slices for ci in cis)
    assert all(isinstance(v, tuple) for v in answers(mig.media_owners, gpu, type_=dict).values())
    for fn in (mig.table, mig.profiles, mig.smallest_profile, mig.media_owners):
        rejects(fn, "gpu", data.draw(st.one_of(st.just("H100-PCIE-80GB-x"), st.integers(), st.none(),
                                               st.just("RTX-A6000"))))
    rejects(mig.profile, "name", gpu, data.draw(bad_names(t.names)))
    rejects_any(data, mig.placement, {"gpu": gpu, "name": p.name, "start": start},
                {"name": bad_names(t.names), "start": st.one_of(bad_ints(0, 7), st.just(9))})
    rejects_any(data, mig.instance_peaks, {"gpu": gpu, "name": p.name},
                {"name": bad_names(t.names).filter(lambda v: v is not None),
                 "precision": bad_names(specs.get(gpu if gpu in specs.names() else A40).precisions())})
    rejects(mig.profile_from_device_name, "device_name", data.draw(st.one_of(st.integers(), st.just(["x"]))))
    rejects(mig.compute_instance_profiles, "gpu_instance", gpu, data.draw(bad_names(t.names)))
    record_rejects(data, p)
    record_rejects(data, peaks)
    record_rejects(data, cis[0])


@covers(mig.validate, mig.enumerate_layouts, mig.place, mig.addable, mig.usage, mig.LayoutUsage,
        mig.format_layout, mig.layout_maps, mig.layout_rows, mig.LayoutRow, mig.doc_conflicts, mig.DocConflict,
        geometry.layouts_arg)
@settings(max_examples=15)
@given(st.sampled_from([A40, A80, "H100-SXM5-80GB"]), st.data())
def test_layouts(gpu, data):
    no_me = [p.name for p in mig.profiles(gpu) if not p.media_extensions]
    layouts = answers(mig.enumerate_layouts, gpu, no_me, type_=list)
    assert layouts
    lay = data.draw(st.sampled_from(layouts))
    assert answers(mig.validate, gpu, lay, type_=tuple) == tuple(lay)
    names = [name for name, _ in lay]
    placed = answers(mig.place, gpu, names, type_=tuple)
    assert sorted(n for n, _ in placed) == sorted(names)
    assert answers(mig.addable, gpu, lay, no_me, type_=list) == []  # a maximal layout has no room left
    u = answers(mig.usage, gpu, lay, type_=mig.LayoutUsage)
    assert 0 < u.sms_used <= u.total_sms
    text = answers(mig.format_layout, lay, type_=str)
    assert all(n in text for n in names)
    mem, comp = answers(mig.layout_maps, gpu, lay, type_=tuple)
    assert isinstance(mem, str) and isinstance(comp, str)
    assert answers(geometry.layouts_arg, tuple(layouts), type_=list) == layouts
    rejects(geometry.layouts_arg, "layouts", data.draw(st.one_of(st.integers(), st.just("ab"), st.none())))
    rows = answers(mig.layout_rows, gpu, layouts[:3], no_me, type_=list)
    assert [r.n for r in rows] == [1, 2, 3][:len(rows)]
    conflicts = answers(mig.doc_conflicts, gpu, type_=list)
    assert all(isinstance(c, mig.DocConflict) for c in conflicts)
    bad_layouts = st.one_of(not_lists(), st.just([("7g.999gb", 0)]), st.just([(names[0], 99)]),
                            st.just([("1g.5gb", 0)] * 9), st.just([names[0]]))
    for fn in (mig.validate, mig.usage, mig.layout_maps):
        rejects(fn, "layout", gpu, data.draw(bad_layouts))
    rejects(mig.addable, "layout", gpu, data.draw(bad_layouts))
    rejects(mig.format_layout, "layout", data.draw(st.one_of(st.integers(), st.just("ab"), st.just([(1, 2)]))))
    rejects(mig.place, "names", gpu, data.draw(st.one_of(not_lists(), st.just(["nope"]), st.just(["7g.40gb"] * 2))))
    rejects(mig.enumerate_layouts, "profiles", gpu, data.draw(st.one_of(st.integers(), st.just(["nope"]))))
    rejects(mig.layout_rows, "layouts", gpu, data.draw(st.one_of(st.integers(), st.just([[("nope", 0)]]))))
    rejects(mig.doc_conflicts, "gpu", data.draw(st.one_of(st.integers(), st.just("NoSuchGPU"))))
    record_rejects(data, rows[0])
    record_rejects(data, u)
    if conflicts:
        record_rejects(data, conflicts[0])


@covers(mig.Workload, mig.SimConfig, mig.default_tenants, mig.service_time, mig.simulate, mig.SimResult,
        mig.TenantStats, mig.VictimSummary, mig.isolation_study, mig.IsolationRow)
@settings(max_examples=4)  # each example simulates a few hundred requests
@given(st.sampled_from(mig.MODES), st.sampled_from(mig.SCENARIOS), st.integers(0, 9), st.data())
def test_the_isolation_model(mode, scenario, seed, data):
    tenants = answers(mig.default_tenants, scenario, FAST, type_=tuple)
    assert len(tenants) == 7 and all(isinstance(w, mig.Workload) for w in tenants)
    w = tenants[0]
    t = answers(mig.service_time, w, 14, 200e9, 20e9, FAST, type_=float)
    assert t > answers(mig.service_time, w, 108, 1555e9, 25e9, FAST, type_=float) > 0
    r = answers(mig.simulate, tenants, mode, FAST, seed, type_=mig.SimResult, within_s=20)
    assert r.mode == mode and len(r.tenants) == 7
    assert all(s.p50_ms <= s.p99_ms for s in r.tenants if s.completed)
    v = answers(r.victim_summary, [s.name for s in r.tenants[:6]], type_=mig.VictimSummary)
    assert 0 < v.victim_p50_ms <= v.victim_p99_ms
    rows = answers(mig.isolation_study, FAST, [mode], ["quiet"], seed, type_=list, within_s=20)
    assert len(rows) == 1 and isinstance(rows[0], mig.IsolationRow)
    rejects_any(data, mig.SimConfig, {}, {
        "gpu": st.one_of(st.integers(), st.just("NoSuchGPU")), "precision": bad_names(["fp16", "bf16", "tf32"]),
        "compute_efficiency": bad_floats(0.0, 1.0), "clock_scale": bad_floats(0.0, 1.0),
        "timeslice_s": bad_floats(1e-5, 1.0, strict=False), "duration_s": bad_floats(1e-3, 600.0, strict=False),
        "switch_s": st.one_of(st.just(-1.0), st.just(float("nan")), st.just("0"))},
        field=lambda a: f"SimConfig.{a}")
    rejects_any(data, mig.Workload, {"name": "w", "flops": 1e9, "hbm_bytes": 1e8, "pcie_bytes": 1e6,
                                     "parallel_sms": 54, "rate_per_s": 10.0}, {
        "name": st.one_of(st.integers(), st.just("")), "flops": bad_floats(0.0, None, strict=False),
        "parallel_sms": bad_ints(1, 10**6), "rate_per_s": st.one_of(st.just(0.0), st.just(-1.0), st.just("x")),
        "noisy": st.one_of(st.just("yes"), st.integers(0, 1))}, field=lambda a: f"Workload.{a}")
    rejects(mig.default_tenants, "scenario", data.draw(bad_names(mig.SCENARIOS)))
    rejects(mig.default_tenants, "n", "quiet", FAST, n=data.draw(bad_ints(2, 64)))
    rejects(mig.simulate, "mode", tenants, data.draw(bad_names(mig.MODES)), FAST)
    rejects(mig.simulate, "tenants", data.draw(st.one_of(not_lists(), st.just([]), st.just([1, 2]))), mode, FAST)
    rejects(mig.simulate, "seed", tenants, mode, FAST, data.draw(bad_ints(0, 2**32 - 1)))
    rejects(mig.service_time, "sms", w, data.draw(bad_floats(0.0, 1e4)), 200e9, 20e9)
    rejects(mig.isolation_study, "modes", FAST, data.draw(st.one_of(st.integers(), st.just(["nope"]))))
    record_rejects(data, r.tenants[0])
    record_rejects(data, v)
    record_rejects(data, rows[0])


@covers(mig.IsolationMeasurement, mig.published_isolation, mig.isolation_evidence_rows, mig.show_isolation_evidence,
        mig.show_isolation, mig.plot_isolation)
@settings(max_examples=5)
@given(st.floats(0.5, 1.0), st.data())
def test_isolation_evidence(clock, data):
    import matplotlib.pyplot as plt

    measured = answers(mig.published_isolation, type_=list)
    assert {m.channel for m in measured} == {"pcie", "hbm", "compute"}
    assert all(0 < m.loaded <= m.alone for m in measured)
    rows = answers(mig.isolation_evidence_rows, clock, type_=list)
    assert len(rows) == len(measured) and all(isinstance(v, str) for r in rows for v in r.values())
    assert answers(mig.show_isolation_evidence, clock, type_=type(None)) is None
    study = mig.isolation_study(FAST, ["dedicated", "mig"], ["quiet", "hbm-bully"])
    assert answers(mig.show_isolation, study, type_=type(None)) is None
    fig, ax = plt.subplots()
    try:
        answers(mig.plot_isolation, study, ax)
        rejects(mig.plot_isolation, "rows", data.draw(st.one_of(st.integers(), st.just([]), st.just([1]))), ax)
    finally:
        plt.close("all")
    for fn in (mig.isolation_evidence_rows, mig.show_isolation_evidence):
        rejects(fn, "clock_scale", data.draw(bad_floats(0.0, 1.0)))
    rejects(mig.show_isolation, "rows", data.draw(st.one_of(st.integers(), st.just([]), st.just(["x"]))))
    record_rejects(data, measured[0])


@covers(mig.plot_layout, mig.plot_layouts, mig.plot_layout_census)
@settings(max_examples=3)
@given(st.data())
def test_the_layout_figures(data):
    import matplotlib.pyplot as plt

    layouts = mig.enumerate_layouts(A40, ["1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"])
    fig, ax = plt.subplots()
    try:
        answers(mig.plot_layout, A40, layouts[0], ax, title="one")
        answers(mig.plot_layouts, A40, layouts[:4], ax)
        answers(mig.plot_layout_census, A40, layouts, ax)
        rejects(mig.plot_layout, "layout", A40, data.draw(st.one_of(st.integers(), st.just([("nope", 0)]))), ax)
        rejects(mig.plot_layouts, "layouts", A40, data.draw(st.one_of(st.integers(), st.just([[("nope", 0)]]))), ax)
        rejects(mig.plot_layout_census, "gpu", data.draw(st.one_of(st.integers(), st.just("NoSuchGPU"))), layouts, ax)
        rejects(mig.plot_layout, "title", A40, layouts[0], ax, title=data.draw(st.one_of(st.integers(), st.just([1]))))
    finally:
        plt.close("all")


def _report(visible: str | None = None) -> mig.MigReport:
    instances = [{"name": "NVIDIA A100-SXM4-40GB MIG 3g.20gb", "uuid": "MIG-aaa", "gi": 1, "sms": 42,
                  "mib": 19968, "start": 4, "size": 4},
                 {"name": "NVIDIA A100-SXM4-40GB MIG 4g.20gb", "uuid": "MIG-bbb", "gi": 2, "sms": 56,
                  "mib": 19968, "start": 0, "size": 4}]
    gpus_ = [{"name": "NVIDIA A100-SXM4-40GB", "mig": True, "instances": instances}]
    return mig.nvml_mig_report(nvml=fake_nvml(gpus_, _driver_rows(A40)), visible_devices=visible)


@covers(mig.nvml_mig_report, mig.MigReport, mig.MigGpu, mig.MigInstance, mig.DriverProfile,
        mig.compare_with_driver, mig.DriverComparison, mig.show_nvml)
@settings(max_examples=5)
@given(st.sampled_from([None, "MIG-aaa", "MIG-bbb", "0"]), st.data())
def test_the_nvml_report(visible, data):
    r = answers(mig.nvml_mig_report, fake_nvml([], deny_count=False), type_=mig.MigReport)
    assert r.gpus == []
    r = answers(mig.nvml_mig_report, nvml=fake_nvml([{"name": "NVIDIA A100-SXM4-40GB", "mig": True,
                                                      "instances": []}], _driver_rows(A40)),
                visible_devices=visible, type_=mig.MigReport)
    r = _report(visible)
    g = r.gpus[0]
    assert isinstance(g, mig.MigGpu) and all(isinstance(m, mig.MigInstance) for m in g.instances)
    assert all(isinstance(d, mig.DriverProfile) for d in g.driver_profiles)
    rows = answers(mig.compare_with_driver, r, type_=list)
    assert rows and all(isinstance(x, mig.DriverComparison) and x.agree for x in rows)
    assert answers(mig.show_nvml, CPU, fake_nvml([], deny_count=False), type_=type(None)) is None
    assert answers(r.summary, type_=str)
    rejects(mig.nvml_mig_report, "nvml", nvml=data.draw(st.one_of(st.integers(), st.text(max_size=2),
                                                                  st.builds(object))))
    rejects(mig.nvml_mig_report, "device_name", device_name=data.draw(st.one_of(st.integers(), st.just([1]))))
    rejects(mig.compare_with_driver, "report", data.draw(st.one_of(st.integers(), st.none(), st.just({}))))
    rejects(mig.show_nvml, "info", data.draw(st.one_of(st.integers(), st.text(min_size=1, max_size=2))))
    for obj in (r, g, g.instances[0], g.driver_profiles[0], rows[0]):
        record_rejects(data, obj)


@covers(mig.measure_instance, mig.InstanceMeasurement, mig.instance_points, mig.show_instance, mig.bench_main)
@settings(max_examples=1)  # the CPU code path of the measurement: it times a matmul and a copy
@given(st.data())
def test_the_measurement_on_a_cpu(data):
    m = answers(mig.measure_instance, "cpu", True, CPU, type_=mig.InstanceMeasurement, within_s=30)
    assert m.backend == "cpu" and m.flops_per_s > 0 and m.copy_bytes_per_s > 0
    matmul, copy = answers(mig.instance_points, CPU, type_=tuple)
    assert matmul and all(p.model > 0 for p in matmul)
    assert answers(mig.show_instance, CPU, type_=type(None)) is None
    assert answers(mig.bench_main, ["--device", "cpu", "--quick", "--no-save"], within_s=60, type_=int) == 0
    rejects(mig.measure_instance, "quick", "cpu", data.draw(st.one_of(st.just("yes"), st.integers(0, 1))), CPU)
    rejects(mig.measure_instance, "info", "cpu", True, data.draw(st.one_of(st.integers(), st.text(min_size=1,
                                                                                                    max_size=2))))
    rejects(mig.instance_points, "quick", CPU, data.draw(st.one_of(st.just("no"), st.none())))
    rejects(mig.bench_main, "argv", data.draw(st.one_of(st.integers(), st.just([1]))))
    record_rejects(data, m)


@covers(mig.serving_costs, mig.ServingOption, mig.show_serving, mig.show_prices)
@settings(max_examples=10)
@given(st.floats(1.0, 5000.0), st.integers(1, 7), st.floats(0.1, 0.95), st.data())
def test_serving_costs(demand, models, util, data):
    options = answers(mig.serving_costs, demand, models, util, type_=list)
    assert options and all(isinstance(o, mig.ServingOption) for o in options)
    for o in options:
        assert 0 <= o.usd_per_h[0] <= o.usd_per_h[1] and o.capacity_per_s > 0
        assert o.feasible == (o.capacity_per_s >= demand)
    assert answers(mig.show_serving, options, type_=type(None)) is None
    assert answers(mig.show_prices, type_=type(None)) is None
    rejects_any(data, mig.serving_costs, {"demand_per_s": demand, "models": models, "max_utilization": util}, {
        "demand_per_s": bad_floats(0.0, None).filter(lambda v: v != 1e12), "models": bad_ints(1, 7),
        "max_utilization": bad_floats(0.0, 1.0), "workload": st.one_of(st.integers(), st.just("w")),
        "config": st.one_of(st.integers(), st.just({}))})
    rejects(mig.show_serving, "options", data.draw(st.one_of(st.integers(), st.just([]), st.just([1]))))
    rejects(mig.show_prices, "quotes", data.draw(st.one_of(st.integers(), st.just([1]))))
    record_rejects(data, options[0])


@covers(mig.profile_rows, mig.show_profiles, mig.show_doc_conflicts, mig.show_layouts, mig.show_validation,
        mig.compute_instance_rows, mig.show_compute_instances)
@settings(max_examples=5)
@given(gpus(), st.data())
def test_the_views(gpu, data):
    rows = answers(mig.profile_rows, gpu, type_=list)
    assert len(rows) == len(mig.profiles(gpu))
    assert answers(mig.show_profiles, gpu, type_=type(None)) is None
    assert answers(mig.show_doc_conflicts, type_=type(None)) is None
    assert answers(mig.compute_instance_rows, gpu, type_=list)
    assert answers(mig.show_compute_instances, gpu, type_=type(None)) is None
    lays = mig.enumerate_layouts(A40, ["1g.5gb", "7g.40gb"])
    assert answers(mig.show_layouts, A40, lays, title="t", type_=type(None)) is None
    assert answers(mig.show_validation, A40, [lays[0], [("1g.20gb", 0)]], type_=type(None)) is None
    for fn in (mig.profile_rows, mig.show_profiles, mig.compute_instance_rows, mig.show_compute_instances):
        rejects(fn, "gpu", data.draw(st.one_of(st.integers(), st.none(), st.just("NoSuchGPU"))))
    rejects(mig.show_layouts, "layouts", A40, data.draw(st.one_of(st.integers(), st.just([[("nope", 0)]]))))
    rejects(mig.show_validation, "layouts", A40, data.draw(st.one_of(st.integers(), st.just("ab"))))
    assert Fraction(1, 8) <= mig.profile(A40, "1g.5gb").memory_fraction
