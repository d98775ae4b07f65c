"""Properties of ampere.hbm: the bandwidth, roofline, decoding, L2 and coalescing models answer finite figures
within their bounds and refuse bad input by name; the measurements (on the CPU, tiny sizes), the result types,
the views and ``bench hbm`` refuse theirs before anything is measured or drawn."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import device, hbm, memory, specs

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings, catalogue_names, covers,
                      not_lists, rejects, rejects_any)

INFO = device.DeviceInfo("cpu", "a CPU")
NOT_INFO = st.one_of(st.integers(), st.text(max_size=3), st.builds(object))
MIB = 2 ** 20
#: fast settings for the CPU measurements: tiny arrays, no warm-up, a few samples
QUICK = {"min_samples": 2, "min_time_s": 0.0, "max_time_s": 0.02, "warmup_s": 0.0}


def beyond(lo, hi, *, strict=True):
    """Bad numbers for an argument in (lo, hi] (``[lo, hi]`` when not ``strict``) whose ``hi`` may exceed 1e12
    (the harness's "huge" value, valid here): non-numbers, NaN, infinities, <= lo, > hi."""
    return st.one_of(bad_floats(lo, None, strict=strict),
                     st.floats(min_value=hi, exclude_min=True, allow_nan=False, allow_infinity=False))


def beyond_int(lo, hi):
    """Bad integers for an argument in [lo, hi] with a large ``hi``: non-integers, < lo, > hi."""
    return st.one_of(bad_ints(lo), st.integers(min_value=hi + 1, max_value=4 * hi + 4))


@covers(hbm.bandwidth_table, hbm.devicequery_check, hbm.hierarchy_table, hbm.compare_gpus)
@given(st.lists(catalogue_names(), min_size=1, max_size=4), catalogue_names(), catalogue_names(), st.data())
def test_bandwidth_is_width_times_pin_rate(gpus, a, b, data):
    rows = answers(hbm.bandwidth_table, gpus, type_=list)
    assert [r["gpu"] for r in rows] == [specs.get(g).name for g in gpus]
    for r in rows:
        assert r["derived_bytes_per_s"] == pytest.approx(r["bus_bits"] * r["data_rate_bps"] / 8)
        assert 0.99 < r["ratio"] < 1.01  # every datasheet figure re-derived within 1 %
    for r in answers(hbm.devicequery_check, type_=list):
        assert r["l2_bytes"] == r["catalogue_l2_bytes"] and r["bus_bits"] == r["catalogue_bus_bits"]
    levels = answers(hbm.hierarchy_table, a, type_=list)
    assert all(lv["capacity_bytes"] > 0 for lv in levels) and levels[-2]["capacity_bytes"] < levels[-1]["capacity_bytes"]
    ratios = answers(hbm.compare_gpus, a, b, precision="fp32", type_=dict)
    assert all(v > 0 for v in ratios.values())
    rejects(hbm.bandwidth_table, "gpus", data.draw(st.one_of(not_lists(), st.just([]), st.just(["NoSuchGPU"]))))
    rejects(hbm.hierarchy_table, "gpu", data.draw(bad_names(specs.names())))
    rejects_any(data, hbm.compare_gpus, {"a": a, "b": b, "precision": "fp32"}, {
        "a": bad_names(specs.names()), "b": bad_names(specs.names()),
        "precision": bad_names(specs.ALL_PRECISIONS)})


@covers(hbm.Op, hbm.roofline_ops, hbm.attainable_flops)
@given(st.floats(0.5, 8.0), st.floats(1e-3, 1e6), catalogue_names(), st.data())
def test_the_roofline_is_the_least_of_peak_and_intensity_times_bandwidth(element_bytes, intensity, gpu, data):
    ops = answers(hbm.roofline_ops, element_bytes, type_=list)
    assert all(isinstance(op, hbm.Op) and op.intensity > 0 for op in ops)
    s = specs.get(gpu)
    got = answers(hbm.attainable_flops, intensity, gpu, "fp32", type_=float)
    assert got == pytest.approx(min(s.peak_flops("fp32"), intensity * s.hbm_bytes_per_s))
    rejects(hbm.roofline_ops, "element_bytes", data.draw(bad_floats(0.0, 64.0)))
    rejects_any(data, hbm.attainable_flops, {"intensity": intensity, "gpu": gpu, "precision": "fp32"}, {
        "intensity": beyond(0.0, 1e15), "gpu": bad_names(specs.names()), "precision": bad_names(specs.PRECISIONS),
        "bytes_per_s": beyond(0.0, 1e18).filter(lambda v: v is not None)})
    rejects_any(data, hbm.Op, {"name": "op", "flops": 1.0, "bytes": 1.0, "description": ""}, {
        "name": bad_strings(), "flops": st.sampled_from([-1.0, math.nan, math.inf, "1", None, 1e31]),
        "bytes": beyond(0.0, 1e30), "description": bad_strings(allow_empty=True)}, field=lambda a: f"Op.{a}")


@covers(hbm.DecodeBound, hbm.decode_bound, hbm.decode_table)
@given(st.sampled_from(list(hbm.SIZE_CLASSES)), st.sampled_from(hbm.DECODE_GPUS), st.sampled_from(["fp16", "int8", "int4"]),
       st.integers(1, 4096), st.integers(0, 32768), st.integers(1, 8), st.data())
def test_decoding_is_bounded_by_bytes_over_bandwidth(model, gpu, weights, batch, context, gpus, data):
    d = answers(hbm.decode_bound, model, gpu, weights=weights, batch=batch, context=context, gpus=gpus,
                type_=hbm.DecodeBound)
    assert d.tokens_per_s == pytest.approx(batch / max(d.memory_time_s, d.compute_time_s))
    assert d.bytes_per_step == pytest.approx(d.weight_bytes + d.kv_bytes) and (context > 0) == (d.kv_bytes > 0)
    assert d.bound in ("memory", "compute") and d.tokens_per_s_per_sequence > 0
    assert d.fits == (d.bytes_per_step <= gpus * memory.usable_bytes(gpu))
    table = answers(hbm.decode_table, [model], [gpu], [weights], type_=list)
    assert len(table) == 1 and table[0].tokens_per_s == hbm.decode_bound(model, gpu, weights=weights).tokens_per_s
    rejects_any(data, hbm.decode_bound, {"model": model, "gpu": gpu}, {
        "model": st.one_of(st.sampled_from(["llama-9b", "", "7b "]), st.integers(), st.none()),
        "gpu": bad_names(specs.names()), "weights": bad_names(memory.FORMAT_BITS),
        "kv_cache": bad_names(memory.FORMAT_BITS), "compute_precision": bad_names(specs.PRECISIONS),
        "batch": bad_ints(1, hbm.roofline.MAX_BATCH), "context": bad_ints(0, hbm.roofline.MAX_CONTEXT),
        "gpus": bad_ints(1, hbm.roofline.MAX_GPUS), "weight_overhead_bits": bad_floats(0.0, 64.0, strict=False),
        "bytes_per_s": beyond(0.0, 1e18).filter(lambda v: v is not None)})
    rejects_any(data, hbm.decode_table, {"models": [model], "gpus": [gpu], "formats": [weights]}, {
        "models": st.one_of(not_lists(), st.just([]), st.just(["llama-9b"])),
        "gpus": st.one_of(not_lists(), st.just([]), st.just(["NoSuchGPU"])),
        "formats": st.one_of(not_lists(), st.just([]), st.just(["fp12"]))})
    good = {f: getattr(d, f) for f in d.__dataclass_fields__}
    rejects_any(data, hbm.DecodeBound, good, {
        "batch": bad_ints(1, hbm.roofline.MAX_BATCH), "fits": bad_booleans(), "weights": bad_names(memory.FORMAT_BITS),
        "tokens_per_s": bad_floats(0.0), "kv_bytes": bad_floats(0.0, strict=False).filter(lambda v: v != 0),
        "gpu": bad_names(specs.names())}, field=lambda a: f"DecodeBound.{a}")


@covers(hbm.sweep_footprints, hbm.l2_sweep_model)
@given(st.integers(MIB, 256 * MIB), st.integers(2, 40), st.sampled_from(["lru", "random"]), catalogue_names(),
       st.data())
def test_the_l2_model_falls_from_the_l2_to_the_dram_bandwidth(l2, points, policy, gpu, data):
    f = answers(hbm.sweep_footprints, l2, points, align=4096, type_=list)
    assert f == sorted(set(f)) and len(f) <= points and all(x % 4096 == 0 for x in f)
    bw, notes = answers(hbm.l2_sweep_model, f, gpu, policy=policy, l2_bytes=l2, type_=tuple)
    assert len(bw) == len(f) and all(b > 0 for b in bw) and notes
    assert all(x >= y - 1e-3 for x, y in zip(bw, bw[1:]))  # bandwidth never rises with the footprint
    rejects_any(data, hbm.sweep_footprints, {"l2_bytes": l2}, {
        "l2_bytes": bad_ints(1, hbm.l2_model.MAX_L2_BYTES), "points": bad_ints(1, 10_000),
        "start_bytes": beyond_int(1, 1 << 40), "align": bad_ints(1, 1 << 30),
        "stop_factor": bad_floats(0.0, 1e6)})
    rejects_any(data, hbm.l2_sweep_model, {"footprints": f, "gpu": gpu}, {
        "footprints": st.one_of(not_lists(), st.just([0]), st.just([math.nan]), st.just(["1"])),
        "gpu": bad_names(specs.names()), "policy": bad_names(["lru", "random"]),
        "l2_bytes": bad_floats(0.0, hbm.l2_model.MAX_L2_BYTES).filter(lambda v: v is not None),
        "l2_bytes_per_s": beyond(0.0, 1e18).filter(lambda v: v is not None),
        "dram_bytes_per_s": beyond(0.0, 1e18).filter(lambda v: v is not None)})


def _curve(l2, top, bottom, n=40):
    """A synthetic sweep: ``top`` up to 0.8 x l2, ``bottom`` from 1.2 x l2, a straight fall between."""
    f = [l2 * 2 ** (i / 6 - 4) for i in range(n)]
    y = [top if x <= 0.8 * l2 else bottom if x >= 1.2 * l2 else top + (bottom - top) * (x / l2 - 0.8) / 0.4
         for x in f]
    return f, y


@covers(hbm.Knee, hbm.find_knee, hbm.l2_plateau)
@given(st.integers(MIB, 64 * MIB), st.floats(2e12, 2e13), st.floats(0.2, 0.6), st.floats(0.05, 1.0), st.data())
def test_a_knee_is_found_between_the_plateaus(l2, top, fall, tolerance, data):
    f, y = _curve(l2, top, top * fall)
    k = answers(hbm.find_knee, f, y, l2, tolerance, type_=hbm.Knee)
    assert k.visible and 0.8 <= k.ratio_to_l2 <= 1.2 and k.within == (abs(k.ratio_to_l2 - 1) <= tolerance)
    assert answers(hbm.l2_plateau, f, y, l2, type_=float) == pytest.approx(top)
    flat = hbm.find_knee(f, [top] * len(f), l2)
    assert not flat.visible and flat.knee_bytes is None
    bad_curve = st.one_of(not_lists(), st.just([1.0, 2.0]), st.just([1.0, math.nan, 3.0]), st.just([1.0, -1.0, 2.0]))
    rejects_any(data, hbm.find_knee, {"footprints": f, "bytes_per_s": y, "l2_bytes": l2}, {
        "footprints": bad_curve, "bytes_per_s": bad_curve, "l2_bytes": bad_floats(0.0, hbm.l2_model.MAX_L2_BYTES),
        "tolerance": bad_floats(0.0, 10.0)})
    rejects(hbm.l2_plateau, "bytes_per_s", f, y[:-1], l2)  # lengths differ
    rejects_any(data, hbm.Knee, {f_: getattr(k, f_) for f_ in k.__dataclass_fields__}, {
        "l2_plateau_bytes_per_s": bad_floats(0.0), "visible": bad_booleans(), "tolerance": bad_floats(0.0, 10.0),
        "knee_bytes": st.sampled_from([0.0, -1.0, math.nan, "1"])}, field=lambda a: f"Knee.{a}")


@covers(hbm.WarpRequest, hbm.warp_request, hbm.coalescing_table, hbm.coalescing_examples)
@given(st.integers(1, 64), st.sampled_from([1, 2, 4, 8, 16]), st.integers(0, 64), st.integers(1, 32), st.data())
def test_a_warp_touches_the_sectors_its_bytes_fall_in(stride, elem, offset_units, threads, data):
    r = answers(hbm.warp_request, stride, offset_units * elem, elem, threads, type_=hbm.WarpRequest)
    lo, hi = math.ceil(threads * elem / 32), threads * math.ceil(elem / 32 + 1)
    assert lo <= r.sectors <= hi and 0 < r.efficiency <= 1 and 0 < r.stream_efficiency <= 1
    assert r.bytes_moved == 32 * r.sectors and r.bytes_used == threads * elem
    table = answers(hbm.coalescing_table, [stride], [offset_units * elem], elem, type_=list)
    assert len(table) == 2 and table[0].stride == stride
    assert all(e["sectors"] == e["model_sectors"] for e in answers(hbm.coalescing_examples, type_=list))
    rejects_any(data, hbm.warp_request, {"stride": stride, "offset_bytes": 0, "elem_bytes": elem}, {
        "stride": bad_ints(1, 1 << 16), "offset_bytes": bad_ints(0, 1 << 20), "elem_bytes": st.sampled_from(
            [0, 3, 32, 4.0, True, "4"]), "threads": bad_ints(1, 32), "warps": bad_ints(1, 1 << 14)})
    rejects_any(data, hbm.coalescing_table, {"strides": [1], "offsets_bytes": [0]}, {
        "strides": st.one_of(not_lists(), st.just([]), st.just([0]), st.just([1.5])),
        "offsets_bytes": st.one_of(not_lists(), st.just([]), st.just([-4]))})
    good = {f: getattr(r, f) for f in r.__dataclass_fields__}
    rejects_any(data, hbm.WarpRequest, good, {
        "sectors": bad_ints(1, 64), "bytes_moved": st.just(r.bytes_moved + 32),
        "stream_efficiency": bad_floats(0.0, 1.0)}, field=lambda a: f"WarpRequest.{a}")


@covers(hbm.ZeroFigureRow, hbm.zero_figure1, hbm.zero_points, hbm.published_stream, hbm.L2Sweep,
        hbm.published_l2_sweeps, hbm.published_l2_sweep, hbm.published_l2_plateau, hbm.validate_models)
@given(st.data())
def test_published_figures_come_with_their_source(data):
    rows = answers(hbm.zero_figure1, type_=list)
    pts = answers(hbm.zero_points, type_=list)
    assert len(rows) == len(pts) == 4 and all(abs(p.model / p.real - 1) < 0.02 for p in pts)
    row = data.draw(st.sampled_from(rows))
    rejects_any(data, hbm.ZeroFigureRow, {f: getattr(row, f) for f in row.__dataclass_fields__}, {
        "stage": bad_ints(0, 3), "params": bad_floats(0.0), "data_parallel": bad_ints(1, 1 << 30),
        "source": bad_strings()}, field=lambda a: f"ZeroFigureRow.{a}")
    stream = answers(hbm.published_stream, type_=list)
    assert stream and all(r.source for r in stream)
    sweeps = answers(hbm.published_l2_sweeps, type_=list)
    sw = data.draw(st.sampled_from(sweeps))
    assert answers(hbm.published_l2_sweep, sw.gpu, type_=hbm.L2Sweep) == sw
    plateau, same = answers(hbm.published_l2_plateau, sw.gpu, type_=tuple)
    assert same == sw and plateau == sw.plateau() > 0 and sw.knee().visible
    rejects(hbm.published_l2_sweep, "gpu", data.draw(st.one_of(st.integers(), st.none(), st.just("V100"))))
    rejects(hbm.published_l2_plateau, "gpu", data.draw(st.one_of(st.integers(), st.none(), st.just("NoSuchGPU"))))
    rejects(sw.knee, "tolerance", data.draw(bad_floats(0.0, 10.0)))
    rejects_any(data, hbm.L2Sweep, {"gpu": sw.gpu, "footprints": sw.footprints, "bytes_per_s": sw.bytes_per_s,
                                    "l2_bytes": sw.l2_bytes, "label": sw.label}, {
        "footprints": st.one_of(not_lists(), st.just((1.0, 2.0)), st.just((1.0, 0.0, 3.0))),
        "bytes_per_s": st.just(sw.bytes_per_s[:-1]), "l2_bytes": bad_floats(0.0, hbm.l2_model.MAX_L2_BYTES),
        "gpu": bad_strings(), "record": st.sampled_from([1, "rec", {}])}, field=lambda a: f"L2Sweep.{a}")
    report, ok = answers(hbm.validate_models, type_=tuple)
    assert ok and "FAIL" not in report


@covers(hbm.Kernel, hbm.Capacity, hbm.BandwidthRow, hbm.Acceptance)
@given(st.data())
def test_result_types_refuse_bad_fields(data):
    k = hbm.KERNELS[data.draw(st.sampled_from(sorted(hbm.KERNELS)))]
    assert answers(hbm.Kernel, k.name, k.reads, k.writes, k.engine, k.description, type_=hbm.Kernel) == k
    rejects_any(data, hbm.Kernel, {"name": k.name, "reads": k.reads, "writes": k.writes, "engine": k.engine,
                                   "description": ""}, {
        "name": bad_strings(), "reads": bad_ints(0, 8), "writes": bad_ints(0, 8),
        "engine": bad_names(["SM", "memcpy"])}, field=lambda a: f"Kernel.{a}")
    rejects(hbm.Kernel, "Kernel.reads", "none", 0, 0, "SM", "")  # a kernel moves at least one array
    cap = answers(hbm.Capacity, "A100", 80 * 2 ** 30, 79 * 2 ** 30, 80.0 * 2 ** 30, "", type_=hbm.Capacity)
    assert 0 < cap.total_over_datasheet <= 1
    rejects_any(data, hbm.Capacity, {"device": "A100", "total_bytes": 2 ** 30, "free_bytes": 2 ** 29,
                                     "datasheet_bytes": 2.0 ** 30, "note": ""}, {
        "device": bad_strings(), "total_bytes": beyond_int(1, 1 << 50).filter(lambda v: v is not None),
        "free_bytes": st.just(2 ** 31), "datasheet_bytes": bad_floats(0.0).filter(lambda v: v is not None)},
        field=lambda a: f"Capacity.{a}" if a != "free_bytes" else "Capacity.free_bytes")
    row = {"kernel": "copy", "engine": "memcpy", "array_bytes": 2 ** 20, "bytes_per_s": 1e12,
           "pct_of_datasheet": 50.0, "copied_bytes_per_s": 5e11, "samples": 10, "rel_iqr": 0.01}
    assert answers(hbm.BandwidthRow, **row, type_=hbm.BandwidthRow)["kernel"] == "copy"
    rejects_any(data, hbm.BandwidthRow, row, {
        "kernel": bad_names(hbm.KERNELS), "bytes_per_s": bad_floats(0.0),
        "samples": beyond_int(1, 10 ** 9).filter(lambda v: v is not None), "engine": bad_names(["SM", "memcpy"]).filter(
            lambda v: v is not None)}, field=lambda a: f"BandwidthRow.{a}")
    assert answers(hbm.Acceptance, "copy", True, False, "", type_=hbm.Acceptance).applies
    rejects_any(data, hbm.Acceptance, {"check": "c", "applies": True, "passed": True, "detail": ""}, {
        "check": bad_strings(), "applies": bad_booleans(), "passed": bad_booleans(),
        "detail": bad_strings(allow_empty=True)}, field=lambda a: f"Acceptance.{a}")


BAD_DEVICE = st.one_of(st.sampled_from(["", "gpu", "tpu", "1", "cuda:x"]), st.integers(), st.just(True),
                       st.just(["cpu"]))


@covers(hbm.measure_bandwidth, hbm.bandwidth_rows, hbm.check_acceptance)
@settings(max_examples=3)  # each example times up to five kernels on the CPU
@given(st.lists(st.sampled_from(sorted(hbm.KERNELS)), min_size=1, max_size=5, unique=True), st.data())
def test_bandwidth_measured_on_the_cpu_is_positive_and_counted(kernels, data):
    recs = answers(hbm.measure_bandwidth, "cpu", kernels=kernels, array_bytes=1 << 14, **QUICK, type_=list)
    rows = answers(hbm.bandwidth_rows, recs, type_=list)
    assert [r.kernel for r in rows] == kernels and all(r.bytes_per_s > 0 for r in rows)
    checks = answers(hbm.check_acceptance, recs, None, type_=list)
    assert checks and not any(c.applies for c in checks)  # a CPU: no threshold applies
    rejects_any(data, hbm.measure_bandwidth, {"device": "cpu", "kernels": kernels, "array_bytes": 1 << 16, **QUICK}, {
        "device": BAD_DEVICE, "quick": bad_booleans(), "kernels": st.one_of(not_lists(), st.just([]), st.just(["fma"])),
        "array_bytes": bad_ints(1, hbm.measure.MAX_CPU_BYTES), "min_samples": bad_ints(1, hbm.measure.MAX_SAMPLES),
        "min_time_s": bad_floats(0.0, hbm.measure.MAX_TIME_S, strict=False),
        "max_time_s": bad_floats(0.0, hbm.measure.MAX_TIME_S),
        "warmup_s": bad_floats(0.0, hbm.measure.MAX_TIME_S, strict=False).filter(lambda v: v is not None)})
    rejects(hbm.bandwidth_rows, "records", data.draw(st.one_of(not_lists().filter(lambda v: v is not None),
                                                                st.just([1]))))
    rejects(hbm.bandwidth_rows, "records", [{"params": {"experiment": "bandwidth"}, "derived": {}}])
    rejects(hbm.check_acceptance, "spec_name", recs, data.draw(bad_strings().filter(lambda v: v is not None)))


@covers(hbm.measure_l2_sweep, hbm.sweep_rows)
@settings(max_examples=5)  # each example sweeps three footprints on the CPU
@given(st.lists(st.sampled_from([64, 128, 256, 512]), min_size=1, max_size=3, unique=True), st.data())
def test_the_sweep_keeps_its_traffic_and_reads_whole_chunks(kib, data):
    recs = answers(hbm.measure_l2_sweep, "cpu", footprints=[k * 1024 for k in kib], total_bytes=1 << 20, **QUICK,
                   type_=list)
    f, y, l2 = answers(hbm.sweep_rows, recs, type_=tuple)
    assert f == sorted(k * 1024 for k in kib) and all(b > 0 for b in y) and l2 is None
    assert all(r["params"]["traffic_bytes"] >= r["params"]["footprint_bytes"] for r in recs)
    rejects_any(data, hbm.measure_l2_sweep, {"device": "cpu", "footprints": [65536], "total_bytes": 1 << 20, **QUICK}, {
        "device": BAD_DEVICE, "footprints": st.one_of(not_lists(), st.just([]), st.just([0]), st.just([2 ** 40])),
        "total_bytes": bad_ints(1, 16 * hbm.measure.MAX_CPU_BYTES), "chunk_bytes": st.one_of(
            bad_ints(1, 1 << 26), st.just(100)), "max_time_s": bad_floats(0.0, hbm.measure.MAX_TIME_S)})
    rejects(hbm.sweep_rows, "records", [{"params": {"experiment": "l2_sweep"}, "derived": {}}])


@covers(hbm.measure_strided_copy, hbm.coalescing_points)
@settings(max_examples=5)
@given(st.lists(st.sampled_from([1, 2, 4, 8]), max_size=3, unique=True), st.lists(st.sampled_from([4, 16, 32]),
                                                                                   max_size=2, unique=True), st.data())
def test_strided_copies_are_compared_with_the_aligned_one(strides, offsets, data):
    recs = answers(hbm.measure_strided_copy, "cpu", strides=strides, offsets_bytes=offsets, elements=1024, **QUICK,
                   type_=list)
    assert {(r["params"]["stride"], r["params"]["offset_bytes"]) for r in recs} >= {(1, 0)}
    assert all(r["derived"]["ratio_to_aligned"] > 0 for r in recs)
    pts = answers(hbm.coalescing_points, INFO, recs, type_=list)
    assert all(p.real > 0 for p in pts)
    rejects_any(data, hbm.measure_strided_copy, {"device": "cpu", "elements": 1024, **QUICK}, {
        "device": BAD_DEVICE, "strides": st.one_of(not_lists(), st.just([0]), st.just([2048])),
        "offsets_bytes": st.one_of(not_lists(), st.just([3]), st.just([-4])), "elements": bad_ints(1, 1 << 22)})
    rejects_any(data, hbm.coalescing_points, {"info": INFO, "measured": recs}, {
        "info": NOT_INFO, "measured": st.one_of(st.text(min_size=1, max_size=4), st.just([1]),
                                                st.just([{"params": {"experiment": "strided_copy"}}]))})


@covers(hbm.measure_capacity, hbm.capacity_rows, hbm.bandwidth_points)
@given(st.lists(catalogue_names(), min_size=1, max_size=4), st.data())
def test_capacity_and_points_without_a_gpu(gpus, data):
    cap = answers(hbm.measure_capacity, "cpu", type_=hbm.Capacity)
    assert cap.total_bytes is None and cap.total_over_datasheet is None
    rows = answers(hbm.capacity_rows, gpus, type_=list)
    assert all(0 < r["CUDA / physical"] < 1 for r in rows)
    pts = answers(hbm.bandwidth_points, INFO, None, type_=list)
    assert pts and all(p.kind == "published" and p.real > 0 for p in pts)
    rejects(hbm.measure_capacity, "device", data.draw(BAD_DEVICE))
    rejects(hbm.capacity_rows, "gpus", data.draw(st.one_of(not_lists(), st.just([]), st.just(["NoSuchGPU"]))))
    rejects_any(data, hbm.bandwidth_points, {"info": INFO, "measured": None}, {
        "info": NOT_INFO, "measured": st.one_of(st.text(min_size=1, max_size=4), st.just([1]), st.just(
            [{"params": {"experiment": "bandwidth"}, "derived": {}}]))})


@covers(hbm.show_bandwidth, hbm.show_l2_sweep, hbm.show_capacity, hbm.show_coalescing)
@settings(max_examples=2)  # each example draws the chapter's figures
@given(st.data())
def test_views_show_published_figures_without_a_gpu(data):
    import matplotlib.pyplot as plt

    try:
        assert answers(hbm.show_bandwidth, INFO, measure=False, type_=list)
        sweeps = answers(hbm.show_l2_sweep, None, measure=False, type_=list)
        assert {s.gpu for s in sweeps} >= {"A100-SXM4-80GB", "H200-SXM-141GB"}
        assert answers(hbm.show_capacity, INFO, type_=type(None)) is None
        assert isinstance(answers(hbm.show_coalescing, INFO, measure=False, type_=list), list)
        for view in (hbm.show_bandwidth, hbm.show_l2_sweep, hbm.show_capacity, hbm.show_coalescing):
            rejects(view, "info", data.draw(NOT_INFO))
        for view in (hbm.show_bandwidth, hbm.show_l2_sweep, hbm.show_coalescing):
            rejects(view, "measure", INFO, measure=data.draw(bad_booleans().filter(lambda v: v is not None)))
    finally:
        plt.close("all")


@covers(hbm.bench_main)
@given(st.data())
def test_bench_refuses_bad_arguments_before_measuring(data):
    rejects(hbm.bench_main, "argv", data.draw(st.one_of(st.text(min_size=1, max_size=5), st.integers(),
                                                         st.just([1]), st.just({"--quick": True}))))
    bad = data.draw(st.sampled_from([["--kernels", "fma"], ["--array-mib", "0"], ["--sweep-points", "2"],
                                     ["--device", "tpu"], ["--no-such-option"]]))
    with pytest.raises(SystemExit) as exit_:
        hbm.bench_main(bad)
    assert exit_.value.code == 2


def test_bench_runs_the_cpu_path_in_a_few_seconds(capsys):
    code = answers(hbm.bench_main, ["--device", "cpu", "--quick", "--no-save", "--no-sweep", "--no-coalescing",
                                    "--array-mib", "1"], type_=int, within_s=60)
    assert code == 0 and "HBM benchmark" in capsys.readouterr().out
