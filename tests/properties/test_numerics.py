"""Properties of ampere.numerics: formats from their bits, bit-exact rounding, emulated matmuls and their error
bounds, dynamic range and loss scaling, the training experiment, throughput (peaks, published and recorded
timings, the CPU path of the GPU measurements), the chapter's tables, views and figures.

Valid input gives a finite answer of the documented type within its bounds; invalid input is refused with
ValueError/TypeError naming the argument, fast."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import device, specs
from ampere import numerics as num

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings, covers, finite_floats,
                      not_lists, rejects, rejects_any, words)

FORMATS = list(num.FORMATS)
FLOATS = list(num.FLOAT_FORMATS)
CPU = device.DeviceInfo("cpu", "a CPU")
BAD_AX = st.one_of(st.none(), st.integers(), st.text(max_size=3))
BAD_ARRAYS = st.one_of(st.none(), st.text(max_size=3), st.just(True), st.just(["a"]), st.just([[1], [2, 3]]))


def NOT_NONE(strategy):  # bad values for an argument whose default, None, is valid
    return strategy.filter(lambda v: v is not None)


def _ax():
    import matplotlib.pyplot as plt

    return plt.subplots()[1]


def _close_all():
    import matplotlib.pyplot as plt

    plt.close("all")


def _fp32(draw_floats):
    return np.asarray(draw_floats, dtype=np.float32)


# --------------------------------------------------------------------------------------------------------
# Formats
# --------------------------------------------------------------------------------------------------------

@covers(num.NumberFormat, num.get_format, num.format_table, num.bit_fields, num.format_rows, num.render_table)
@given(st.integers(3, 11), st.integers(1, 52), st.data())
def test_formats_are_derived_from_their_bits(e, m, data):
    f = answers(num.NumberFormat, "x", "X", "float", e, m, 1 + e + m, type_=num.NumberFormat)
    assert f.max_normal > 1.0 > f.min_normal > f.min_subnormal > 0 and f.unit_roundoff == f.epsilon / 2
    assert f.normal_range_decades < f.range_decades
    name = data.draw(st.sampled_from(FORMATS))
    assert answers(num.get_format, name, type_=num.NumberFormat).name == name
    assert sum(w for _, w in answers(num.bit_fields, name, type_=list)) == num.FORMATS[name].storage_bits
    rows = answers(num.format_table, [name], type_=list)
    assert rows[0]["format"] == num.FORMATS[name].label
    assert answers(num.format_rows, [name], type_=list)[0]["format"] == num.FORMATS[name].label
    text = answers(num.render_table, rows, ["format", "bits"], {"bits": ".3g"}, type_=str)
    assert num.FORMATS[name].label in text
    rejects_any(data, num.NumberFormat, {"name": "x", "label": "X", "kind": "float", "exponent_bits": e,
                                         "mantissa_bits": m, "storage_bits": 1 + e + m}, {
        "name": bad_strings(), "label": bad_strings(), "kind": bad_names(["float", "int"]),
        "exponent_bits": bad_ints(2, 15), "mantissa_bits": bad_ints(1, 112), "storage_bits": st.just(e + m),
        "inf_nan_code": bad_booleans(), "note": st.one_of(st.integers(), st.none())},
        field=lambda a: f"NumberFormat.{a}")
    rejects(num.get_format, "fmt", data.draw(bad_names(FORMATS)))
    rejects(num.bit_fields, "fmt", data.draw(bad_names(FORMATS)))
    rejects(num.format_table, "names", data.draw(NOT_NONE(st.one_of(not_lists(), st.just([]), st.just(["fp12"])))))
    rejects(num.format_rows, "names", data.draw(NOT_NONE(st.one_of(not_lists(), st.just(["fp12"])))))
    rejects_any(data, num.render_table, {"rows": rows}, {
        "rows": st.one_of(st.integers(), st.text(min_size=1, max_size=3), st.just([1])),
        "columns": st.one_of(st.just(["no such column"]), st.just("format")),
        "formats": st.one_of(st.just({"bits": 3}), st.just({"bits": "xyz%"}), st.just([1])),
        "headers": st.one_of(st.just({"bits": 3}), st.just([1]))})


# --------------------------------------------------------------------------------------------------------
# Rounding
# --------------------------------------------------------------------------------------------------------

@covers(num.round_to, num.round_tensor, num.rounding_rows, num.torch_agreement)
@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=30), st.data())
def test_rounding_keeps_the_magnitude_within_half_an_ulp(values, data):
    import torch

    fmt = data.draw(st.sampled_from(sorted(num.ROUNDING_MODES)))
    mode = data.draw(st.sampled_from(num.ROUNDING_MODES[fmt]))
    x = _fp32(values)
    r = answers(num.round_to, x, fmt, mode, type_=np.ndarray)
    assert r.shape == x.shape and r.dtype == np.float32
    finite = np.isfinite(r) & (np.abs(x) >= num.FORMATS[fmt].min_normal)
    u = num.FORMATS[fmt].unit_roundoff * (2 if mode == "truncate" else 1)
    assert np.all(np.abs(r[finite].astype(np.float64) - x[finite]) <= u * np.abs(x[finite].astype(np.float64)) * (1 + 1e-6))
    t = answers(num.round_tensor, torch.from_numpy(x.copy()), fmt, mode, type_=torch.Tensor)
    assert np.array_equal(t.numpy(), r, equal_nan=True)
    assert len(answers(num.rounding_rows, x, type_=list)) == len(x)
    assert answers(num.torch_agreement, 1000, 1, type_=dict) == {"bf16": True, "fp16": True}
    rejects_any(data, num.round_to, {"x": x, "fmt": fmt}, {
        "x": BAD_ARRAYS, "fmt": bad_names(num.ROUNDING_MODES), "mode": bad_names(num.ROUNDING_MODES[fmt])})
    rejects_any(data, num.round_tensor, {"t": torch.from_numpy(x.copy()), "fmt": fmt}, {
        "t": st.one_of(st.none(), st.integers(), st.just([1.0])), "fmt": bad_names([*num.ROUNDING_MODES, "fp32"]),
        "mode": bad_names(num.ROUNDING_MODES[fmt])})
    rejects(num.rounding_rows, "values", data.draw(BAD_ARRAYS))
    rejects_any(data, num.torch_agreement, {"count": 10}, {"count": bad_ints(1, 50_000_000),
                                                          "seed": st.one_of(bad_ints(0), st.integers(min_value=2**63))})


# --------------------------------------------------------------------------------------------------------
# Matmul error and its bounds
# --------------------------------------------------------------------------------------------------------

@covers(num.emulated_matmul, num.relative_error)
@given(st.integers(1, 8), st.integers(1, 32), st.integers(1, 8), st.sampled_from(num.EMULATED), st.data())
def test_emulated_matmuls_are_close_to_fp64(m, k, n, fmt, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32)))
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    ref = answers(num.emulated_matmul, a, b, "fp64", type_=np.ndarray)
    acc = data.draw(st.sampled_from(["fp32", "fp16", "bf16"]))
    c = answers(num.emulated_matmul, a, b, fmt, accumulate=acc, type_=np.ndarray)
    assert c.shape == (m, n)
    if np.linalg.norm(ref) > 0:
        err = answers(num.relative_error, c, ref, type_=float)
        u_in = num.FORMATS[fmt].unit_roundoff
        assert err <= 10 * (2 * u_in + k * num.FORMATS[acc].unit_roundoff) + 1e-6
    rejects_any(data, num.emulated_matmul, {"a": a, "b": b}, {
        "a": st.one_of(BAD_ARRAYS, st.just(np.ones((2, k + 1)))), "b": st.one_of(BAD_ARRAYS, st.just(np.ones(3))),
        "fmt": bad_names(num.EMULATED), "mode": st.just("toward zero"), "accumulate": bad_names(["fp32", "fp16"])},
        field=lambda arg: "a" if arg in ("a", "b") and False else arg)
    rejects_any(data, num.relative_error, {"c": ref, "reference": ref}, {
        "c": st.one_of(BAD_ARRAYS, st.just(np.ones((m + 1, n)))), "reference": st.one_of(BAD_ARRAYS,
                                                                                        st.just(np.zeros((m, n))))},
        field=lambda arg: "reference" if arg == "reference" else "c")


@covers(num.ErrorSweep, num.error_vs_k, num.error_rows, num.error_checks)
@settings(max_examples=8)
@given(st.lists(st.integers(1, 256), min_size=1, max_size=3, unique=True), st.integers(1, 8), st.data())
def test_error_sweeps(ks, mn, data):
    sweep = answers(num.error_vs_k, ks, m=mn, n=mn, trials=1, seed=data.draw(st.integers(0, 2**32)),
                    type_=num.ErrorSweep)
    assert sweep.ks == ks and all(len(v) == len(ks) for v in sweep.errors.values())
    assert all(0 <= e < 1 for v in sweep.errors.values() for e in v)
    assert sweep.at("tf32", ks[0]) == sweep.errors["tf32"][0]
    assert len(answers(num.error_rows, sweep, type_=list)) == len(ks)
    assert all(isinstance(v, bool) for v in answers(num.error_checks, sweep, type_=dict).values())
    again = answers(num.ErrorSweep, sweep.ks, sweep.errors, sweep.m, sweep.n, sweep.trials, sweep.data,
                    type_=num.ErrorSweep)
    assert again.errors == sweep.errors
    rejects(sweep.at, "label", data.draw(bad_names(list(sweep.errors))), ks[0])
    rejects(sweep.at, "k", "tf32", data.draw(st.one_of(st.just(max(ks) + 1), st.floats(), st.none())))
    rejects_any(data, num.error_vs_k, {"ks": ks, "m": mn, "n": mn, "trials": 1}, {
        "ks": st.one_of(not_lists(), st.just([]), st.just([0]), st.just([2**21])),
        "cases": st.one_of(not_lists(), st.just(["fp12"]), st.just([])), "m": bad_ints(1, 4096),
        "n": bad_ints(1, 4096), "trials": bad_ints(1, 100), "seed": bad_ints(0), "data": bad_names(["normal", "uniform"])})
    rejects(num.error_vs_k, "ks", [2**20], m=4096, n=4096)  # 2^32 elements: refused before allocating
    rejects(num.error_rows, "sweep", data.draw(st.one_of(st.none(), st.integers(), st.just({}))))
    rejects(num.error_checks, "sweep", data.draw(st.one_of(st.none(), st.integers(), st.just({}))))
    rejects_any(data, num.ErrorSweep, {"ks": ks, "errors": sweep.errors, "m": mn, "n": mn, "trials": 1,
                                       "data": "normal"}, {
        "ks": st.one_of(not_lists(), st.just([0]), st.just([1.5])), "errors": st.one_of(st.just({}), st.just([1]),
                                                                                          st.just({"x": [float("nan")]})),
        "m": bad_ints(1, 4096), "n": bad_ints(1, 4096), "trials": bad_ints(1, 100),
        "data": bad_names(["normal", "uniform"])}, field=lambda a: f"ErrorSweep.{a}")


@covers(num.accumulation_error_curve, num.accumulation_curves)
@settings(max_examples=6)
@given(st.integers(1, 256), st.sampled_from(["fp32", "tf32", "bf16", "fp16"]),
       st.sampled_from(["fp32", "fp16", "bf16"]), st.data())
def test_accumulation_curves(k_max, inputs, acc, data):
    cur = answers(num.accumulation_error_curve, k_max, inputs, acc, m=4, n=4, type_=dict)
    assert cur["k"][-1] == k_max and all(0 <= e < 1 for e in cur["error"])
    curves = answers(num.accumulation_curves, min(k_max, 64), type_=dict)
    assert set(curves) == set(num.ACCUMULATION_CASES)
    rejects_any(data, num.accumulation_error_curve, {"k_max": k_max, "m": 4, "n": 4}, {
        "k_max": bad_ints(1, 2**16), "inputs": bad_names(["fp32", "tf32", "bf16", "fp16"]),
        "accumulate": bad_names(["fp32", "fp16", "bf16"]), "m": bad_ints(1, 512), "n": bad_ints(1, 512),
        "checkpoints": st.one_of(st.integers(), st.just([0]), st.just([k_max + 1])), "mode": st.just("down"),
        "data": bad_names(["normal", "uniform"])})
    rejects(num.accumulation_curves, "k_max", data.draw(bad_ints(1, 16384)))


@covers(num.dot_error_bound, num.max_k_for_error, num.probabilistic_confidence)
@given(st.integers(1, 2000), st.sampled_from(FLOATS), st.sampled_from(FLOATS), finite_floats(0.5, 10), st.data())
def test_the_bounds_grow_with_k_and_max_k_inverts_them(k, inputs, acc, lam, data):
    u_acc = num.FORMATS[acc].unit_roundoff
    if k * u_acc < 0.5:
        worst = answers(num.dot_error_bound, k, inputs, acc, type_=float)
        prob = answers(num.dot_error_bound, k, inputs, acc, "probabilistic", lam, type_=float)
        assert 0 <= worst <= answers(num.dot_error_bound, k + 1, inputs, acc, type_=float)
        assert prob >= 0
    tol = data.draw(st.floats(1e-6, 1.0))
    kmax = answers(num.max_k_for_error, tol, inputs, acc, type_=int)
    if 0 < kmax < 2**40:
        assert num.dot_error_bound(kmax, inputs, acc) <= tol
    conf = answers(num.probabilistic_confidence, k, lam, acc, type_=float)
    assert 0.0 <= conf <= 1.0
    k99 = answers(num.max_k_for_error, tol, inputs, acc, "probabilistic", confidence=0.99, type_=int)
    assert k99 >= 0
    rejects_any(data, num.dot_error_bound, {"k": k, "inputs": inputs, "accumulate": acc}, {
        "k": st.one_of(bad_ints(1, 2**62), st.just(2.5)), "inputs": bad_names(FLOATS), "accumulate": bad_names(FLOATS),
        "model": bad_names(["worst", "probabilistic"]), "lam": bad_floats(0.0, 100.0)})
    rejects(num.dot_error_bound, "k", 10**7, "fp16", "fp16")  # k u >= 1: no worst-case bound
    rejects_any(data, num.max_k_for_error, {"tol": tol}, {
        "tol": bad_floats(0.0, 1.0), "inputs": bad_names(FLOATS), "accumulate": bad_names(FLOATS),
        "model": bad_names(["worst", "probabilistic"]), "lam": bad_floats(0.0, 100.0),
        "confidence": NOT_NONE(bad_floats(0.0, 1.0))})
    rejects_any(data, num.probabilistic_confidence, {"k": k}, {
        "k": bad_ints(1, 2**62), "lam": bad_floats(0.0, 100.0), "accumulate": bad_names(FLOATS)})


# --------------------------------------------------------------------------------------------------------
# Dynamic range and loss scaling
# --------------------------------------------------------------------------------------------------------

@covers(num.gradient_like_values, num.range_census, num.loss_scale_sweep, num.best_loss_scale, num.census_rows)
@given(st.integers(1, 2000), finite_floats(-40, 0), finite_floats(0.1, 30), st.sampled_from(FLOATS), st.data())
def test_the_census_fractions_add_up_and_the_best_scale_never_overflows(n, low, span, fmt, data):
    g = answers(num.gradient_like_values, n, low, min(38.0, low + span), seed=data.draw(st.integers(0, 2**32)),
                type_=np.ndarray)
    assert g.shape == (n,) and g.dtype == np.float32
    c = answers(num.range_census, g, fmt, type_=dict)
    assert math.isclose(sum(c.values()), 1.0) and all(0 <= v <= 1 for v in c.values())
    rows = answers(num.loss_scale_sweep, g, fmt, [0, 4, 8], type_=list)
    assert [r["log2_scale"] for r in rows] == [0, 4, 8]
    best = answers(num.best_loss_scale, g, fmt, type_=int)
    assert num.range_census(g.astype(np.float64) * 2.0 ** min(best, 120), fmt)["overflow"] == 0 or best > 120
    assert len(answers(num.census_rows, g, [fmt], type_=list)) == 1
    lognormal = answers(num.gradient_like_values, n, distribution="lognormal", log10_mean=low, log10_std=span,
                        type_=np.ndarray)
    assert lognormal.shape == (n,)
    rejects_any(data, num.gradient_like_values, {"n": n}, {
        "n": bad_ints(1, 10**7), "log10_low": bad_floats(-60.0, 38.0, strict=False),
        "log10_high": bad_floats(-60.0, 38.0, strict=False), "seed": bad_ints(0),
        "distribution": bad_names(["loguniform", "lognormal"]), "log10_mean": bad_floats(-60.0, 38.0, strict=False),
        "log10_std": bad_floats(0.0, 50.0)})
    rejects_any(data, num.range_census, {"x": g, "fmt": fmt}, {"x": st.one_of(BAD_ARRAYS, st.just([0.0])),
                                                                "fmt": bad_names(FLOATS)})
    rejects_any(data, num.loss_scale_sweep, {"grads": g}, {
        "grads": BAD_ARRAYS, "fmt": bad_names(FLOATS),
        "log2_scales": st.one_of(st.integers(), st.just([]), st.just([1.5]), st.just([10**6]))})
    rejects_any(data, num.best_loss_scale, {"grads": g}, {
        "grads": BAD_ARRAYS, "fmt": bad_names(FLOATS), "max_log2": bad_ints(-300, 300)})
    rejects_any(data, num.census_rows, {"values": g}, {"values": BAD_ARRAYS,
                                                       "names": st.one_of(not_lists(), st.just(["int8"]))})


# --------------------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------------------

@covers(num.TrainingRun, num.train_digits_mlp, num.training_rows)
@settings(max_examples=3)  # each example trains a small network for one epoch
@given(st.sampled_from(["fp32", "tf32", "bf16", "fp16"]), st.integers(4, 32), st.data())
def test_a_short_training_run_and_its_record(precision, hidden, data):
    # the first run imports torch.optim's compiler hooks (torch._dynamo, seconds on a loaded CPU): a wider bound
    run = answers(num.train_digits_mlp, precision, epochs=1, hidden=hidden, batch_size=512, type_=num.TrainingRun,
                  within_s=60.0)
    assert len(run.epoch_losses) == 1 and 0 <= run.test_accuracy <= 1
    assert answers(num.training_rows, [run], type_=list)[0]["precision"] == precision
    valid = {"precision": "fp32", "backend": "emulated", "device": "cpu", "epoch_losses": [1.0],
             "train_accuracy": 0.5, "test_accuracy": 0.5, "seconds": 1.0}
    assert answers(num.TrainingRun, **valid, type_=num.TrainingRun).precision == "fp32"
    rejects_any(data, num.TrainingRun, valid, {
        "precision": bad_names(["fp32", "tf32", "bf16", "fp16"]), "backend": bad_names(["emulated", "native"]),
        "device": bad_strings(), "epoch_losses": st.one_of(not_lists(), st.just([-1.0]), st.just([float("nan")])),
        "train_accuracy": bad_floats(0.0, 1.0, strict=False), "test_accuracy": bad_floats(0.0, 1.0, strict=False),
        "seconds": bad_floats(0.0, strict=False), "params": st.one_of(st.integers(), st.just([1]))},
        field=lambda a: f"TrainingRun.{a}")
    rejects_any(data, num.train_digits_mlp, {"precision": precision, "epochs": 1}, {
        "precision": bad_names(["fp32", "tf32", "bf16", "fp16"]), "epochs": bad_ints(1, 1000),
        "hidden": bad_ints(1, 4096), "batch_size": bad_ints(1, 2048), "lr": bad_floats(0.0, 10.0),
        "seed": bad_ints(0, 2**32 - 1), "device": st.one_of(st.just("gpu"), st.just(""), st.integers()),
        "backend": bad_names(["emulated", "native"]), "mode": st.just("down")})
    rejects(num.training_rows, "runs", data.draw(st.one_of(st.integers(), st.just([1]), st.text(min_size=1))))


# --------------------------------------------------------------------------------------------------------
# Throughput: peaks, published and recorded timings, the CPU path of the measurements
# --------------------------------------------------------------------------------------------------------

TF32_GPUS = [g for g in specs.names() if specs.get(g).supports("tf32")]


@covers(num.peak_ratio, num.published_tf32, num.published_tf32_speedup, num.printed_interval,
        num.published_tf32_bounds, num.recorded_results, num.tf32_peak_rows)
@given(st.sampled_from(TF32_GPUS), finite_floats(1e-6, 1e6), st.data())
def test_peak_ratios_and_the_published_interval(gpu, value, data):
    ratio = answers(num.peak_ratio, gpu, type_=float)
    assert ratio > 1
    (rec,) = answers(num.published_tf32, type_=list)
    speedup = answers(num.published_tf32_speedup, rec, type_=float)
    b = answers(num.published_tf32_bounds, rec, type_=dict)
    assert b["speedup"][0] <= speedup <= b["speedup"][1] and b["speedup_uncapped"][0] <= b["speedup"][0]
    lo, hi = answers(num.printed_interval, value, type_=tuple)
    assert lo <= value <= hi and lo < hi
    assert isinstance(answers(num.recorded_results, type_=list), list)
    assert {r["GPU"] for r in answers(num.tf32_peak_rows, type_=list)} == set(TF32_GPUS)
    names = [*specs.PRECISIONS, *specs.SIMT_PRECISIONS]
    rejects_any(data, num.peak_ratio, {"gpu": gpu}, {
        "gpu": bad_names(specs.names()), "numerator": bad_names(names), "denominator": bad_names(names),
        "sparse": bad_booleans()})
    rejects(num.published_tf32, "gpu", data.draw(NOT_NONE(bad_names(specs.names()))))
    bad_rec = st.one_of(st.none(), st.integers(), st.just({}))
    rejects(num.published_tf32_speedup, "rec", data.draw(bad_rec))
    rejects(num.published_tf32_bounds, "rec", data.draw(bad_rec))
    rejects(num.printed_interval, "value", data.draw(bad_floats(0.0)))


@covers(num.measure_throughput, num.throughput_rows, num.tf32_speedups, num.compare_tf32_with_emulation,
        num.tf32_conversion_probe, num.bench_main)
@settings(max_examples=3)  # each example times matmuls on the CPU
@given(st.lists(st.sampled_from([16, 24, 32]), min_size=1, max_size=2, unique=True), st.data())
def test_the_measurements_run_on_a_cpu(sizes, data):
    import tempfile

    fast = {"warmup_s": 0.0, "min_time_s": 0.001, "max_time_s": 0.01}
    recs, skipped = answers(num.measure_throughput, sizes, ["fp32", "fp16"], device="cpu", info=CPU, **fast,
                            type_=tuple)
    assert len(recs) == 2 * len(sizes)
    rows = answers(num.throughput_rows, recs, type_=list)
    assert all(r["tflops"] > 0 for r in rows)
    assert answers(num.tf32_speedups, recs, type_=dict) == {}
    err = answers(num.compare_tf32_with_emulation, "cpu", [16], 8, 8, type_=list)
    assert err[0]["tf32_active"] is False
    probe = answers(num.tf32_conversion_probe, "cpu", 16, type_=dict)
    assert probe["derived"]["match"]["unchanged"] == 1.0
    rejects_any(data, num.measure_throughput, {"sizes": sizes, "device": "cpu", "info": CPU, **fast}, {
        "sizes": st.one_of(not_lists(), st.just([0]), st.just([2**17])),
        "precisions": st.one_of(not_lists(), st.just([]), st.just(["fp12"])),
        "device": st.one_of(st.just("gpu"), st.just(""), st.integers()),
        "warmup_s": bad_floats(0.0, 600.0, strict=False), "progress": st.one_of(st.integers(), st.text(max_size=3))})
    rejects(num.throughput_rows, "records", data.draw(st.one_of(st.integers(), st.just([1]), st.just([{"n": 1}]))))
    rejects(num.tf32_speedups, "records", data.draw(st.one_of(st.integers(), st.just([1]))))
    rejects_any(data, num.compare_tf32_with_emulation, {"device": "cpu", "ks": [16], "m": 8, "n": 8}, {
        "device": st.one_of(st.just("gpu"), st.integers()), "ks": st.one_of(not_lists(), st.just([0])),
        "m": bad_ints(1, 4096), "n": bad_ints(1, 4096), "seed": bad_ints(0, 2**63 - 1)})
    rejects_any(data, num.tf32_conversion_probe, {"device": "cpu", "size": 16}, {
        "device": st.one_of(st.just("gpu"), st.integers()), "size": bad_ints(16, 8192), "seed": bad_ints(0)})
    rejects(num.bench_main, "argv", data.draw(st.one_of(st.text(min_size=1, max_size=4), st.integers(),
                                                        st.just([1]))))
    with tempfile.TemporaryDirectory() as tmp:
        assert num.bench_main(["--device", "cpu", "--sizes", "24", "--precisions", "fp32", "--error-ks", "16",
                               "--out", tmp + "/"]) == 0


# --------------------------------------------------------------------------------------------------------
# Views, figures and the claims
# --------------------------------------------------------------------------------------------------------

@covers(num.tf32_points, num.show_tf32, num.claims_rows)
@settings(max_examples=3)
@given(st.integers(1, 2**15), st.data())
def test_the_views_and_the_claims_without_a_gpu(min_n, data):
    from ampere import views

    pts = answers(num.tf32_points, CPU, None, min_n, type_=list)
    assert pts and all(isinstance(p, views.Point) for p in pts)
    try:
        assert answers(num.show_tf32, CPU, type_=list)
    finally:
        _close_all()
    claims = answers(num.claims_rows, type_=list)
    assert claims and all(set(r) == {"claim", "source", "verdict", "evidence"} for r in claims)
    assert "76.5 decades" in " ".join(r["evidence"] for r in claims)
    rejects_any(data, num.tf32_points, {"info": CPU}, {
        "info": st.one_of(st.integers(), st.text(), st.just(object())),
        "records": st.one_of(st.integers(), st.just([1])), "min_n": bad_ints(1, 2**20)})
    rejects_any(data, num.show_tf32, {"info": CPU}, {
        "measure": NOT_NONE(bad_booleans()), "sizes": st.one_of(not_lists(), st.just([0]))})
    rejects(num.claims_rows, "runs", data.draw(st.one_of(st.integers(), st.just([1]), st.text(min_size=1))))


@covers(num.plot_bit_layouts, num.plot_error_vs_k, num.plot_accumulation, num.plot_ranges, num.plot_loss_scaling,
        num.plot_training, num.plot_throughput)
@settings(max_examples=2)  # each example draws seven figures
@given(st.data())
def test_the_figures(data):
    run = num.TrainingRun("fp32", "emulated", "cpu", [1.0, 0.5], 0.9, 0.8, 1.0)
    sweep = num.ErrorSweep([16, 64], {"fp32": [1e-7, 2e-7], "tf32": [3e-4, 3e-4]}, 8, 8, 1, "normal")
    curves = {"FP16 inputs, FP16 accumulation": {"k": [1, 2], "error": [1e-4, 2e-4]}}
    rows = [{"log2_scale": 0, "zero": 0.5, "subnormal": 0.1, "overflow": 0.0}]
    tput = [{"precision": "fp32", "n": 256, "tflops": 1.0}]
    g = num.gradient_like_values(100, seed=1)
    try:
        for fn, args in ((num.plot_bit_layouts, ()), (num.plot_error_vs_k, (sweep,)),
                         (num.plot_accumulation, (curves,)), (num.plot_ranges, (["fp32", "fp16"], g)),
                         (num.plot_loss_scaling, (rows, 0)), (num.plot_training, ([run],)),
                         (num.plot_throughput, (tput,))):
            assert answers(fn, _ax(), *args, type_=type(None)) is None
            rejects(fn, "ax", data.draw(BAD_AX), *args)
        ax = _ax()
        rejects(num.plot_bit_layouts, "names", ax, data.draw(st.one_of(not_lists(), st.just(["fp12"]))))
        rejects(num.plot_error_vs_k, "sweep", ax, data.draw(st.one_of(st.none(), st.integers())))
        rejects(num.plot_error_vs_k, "bound_format", ax, sweep, data.draw(bad_names(FLOATS)))
        rejects(num.plot_accumulation, "curves", ax, data.draw(st.one_of(st.just({}), st.integers(),
                                                                         st.just({"x": {"k": [1]}}))))
        rejects(num.plot_ranges, "names", ax, data.draw(st.one_of(not_lists(), st.just(["int8"]))))
        rejects(num.plot_ranges, "sample", ax, ["fp32"], data.draw(st.one_of(st.just([0.0]), st.text(min_size=1))))
        rejects(num.plot_loss_scaling, "rows", ax, data.draw(st.one_of(st.integers(), st.just([{"zero": 2}]))))
        rejects(num.plot_loss_scaling, "best", ax, rows, data.draw(st.one_of(st.floats(), st.text(min_size=1))))
        rejects(num.plot_training, "runs", ax, data.draw(st.one_of(st.integers(), st.just([1]))))
        rejects(num.plot_throughput, "rows", ax, data.draw(st.one_of(st.integers(), st.just([{"precision": "x"}]))))
        rejects(num.plot_throughput, "label", ax, tput, data.draw(st.one_of(st.integers(), st.none())))
    finally:
        _close_all()
