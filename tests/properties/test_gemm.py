"""Properties of ampere.gemm: FLOP counts, wave quantisation, peaks and the published matmul figures; every
bad dimension, name or record refused with the argument named."""

import math

from hypothesis import given
from hypothesis import strategies as st

from ampere import gemm, results, specs

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings, catalogue_names, covers,
                      not_lists, rejects, rejects_any)

DIM = st.integers(1, 1 << 16)
MATMULS = results.records(benchmark="matmul", kind="published")


@covers(gemm.matmul_flops, gemm.wave_efficiency, gemm.quantized_matmul_time)
@given(DIM, DIM, DIM, st.integers(1, 64), st.sampled_from([64, 128, 256]), st.integers(1, 200), st.data())
def test_flops_waves_and_quantized_time(m, n, k, batch, tile, sms, data):
    assert answers(gemm.matmul_flops, m, n, k, batch, type_=float) == 2.0 * m * n * k * batch
    eff = answers(gemm.wave_efficiency, m, n, tile, tile, sms=sms, batch=batch, type_=float)
    assert 0 < eff <= 1
    assert gemm.wave_efficiency(m, n, tile, tile, sms=sms, batch=batch) == eff  # the cache gives the same answer
    t = answers(gemm.quantized_matmul_time, m, n, k, 312e12, tile, tile, sms, type_=float)
    assert t > 0 and math.isclose(gemm.matmul_flops(m, n, k) / t, 312e12 * gemm.wave_efficiency(m, n, tile, tile, sms),
                                  rel_tol=1e-9)
    rejects_any(data, gemm.matmul_flops, {"m": m, "n": n, "k": k},
                {d: bad_ints(1, gemm.MAX_DIM) for d in ("m", "n", "k", "batch")})
    rejects_any(data, gemm.wave_efficiency, {"m": m, "n": n}, {
        "m": bad_ints(1, gemm.MAX_DIM), "n": bad_ints(1, gemm.MAX_DIM), "tile_m": bad_ints(1, gemm.MAX_TILE),
        "tile_n": bad_ints(1, gemm.MAX_TILE), "sms": bad_ints(1, gemm.MAX_SMS),
        "tiles_per_sm": bad_ints(1, gemm.MAX_TILES_PER_SM), "batch": bad_ints(1, gemm.MAX_DIM)})
    rejects_any(data, gemm.quantized_matmul_time, {"m": m, "n": n, "k": k, "peak_flop_per_s": 312e12}, {
        "k": bad_ints(1, gemm.MAX_DIM), "peak_flop_per_s": bad_floats(0.0), "sms": bad_ints(1, gemm.MAX_SMS),
        "overhead_s": bad_floats(0.0, strict=False).filter(lambda v: v != 0)})


@covers(gemm.peak_precision_for, gemm.peak_rows, gemm.PeakRow, gemm.alignment_elements)
@given(catalogue_names(), st.sampled_from(specs.PRECISIONS), st.data())
def test_peaks_of_every_gpu(gpu, precision, data):
    got = answers(gemm.peak_precision_for, gpu, precision, type_=(str, type(None)))
    assert got is None or specs.get(gpu).supports(got)
    rows = answers(gemm.peak_rows, [gpu], [precision], type_=list)
    assert all(isinstance(r, gemm.PeakRow) and r.derived_flop_per_s > 0 for r in rows)
    assert all(answers(r.to_dict, type_=dict)["derived_tflops"] == r.derived_tflops for r in rows)
    if rows:
        row = rows[0]
        rejects_any(data, gemm.PeakRow, {f: getattr(row, f) for f in ("gpu", "precision", "sparse", "sms",
                                                                       "fma_per_clk_per_sm", "clock_hz",
                                                                       "derived_flop_per_s")}, {
            "gpu": bad_strings(), "precision": bad_names(specs.ALL_PRECISIONS), "sparse": bad_booleans(),
            "sms": bad_ints(1, gemm.MAX_SMS), "clock_hz": bad_floats(0.0, 1e11),
            "derived_flop_per_s": st.one_of(bad_floats(0.0), st.just(1e21)), "datasheet": st.sampled_from([1, b"x"]),
            "agrees": st.sampled_from(["yes", 1]), "note": st.sampled_from([1, b"x"])})
    rejects(gemm.peak_precision_for, "spec", data.draw(bad_strings()), precision)
    rejects(gemm.peak_precision_for, "precision", gpu, data.draw(bad_names(specs.PRECISIONS)))
    rejects(gemm.peak_rows, "gpus", data.draw(st.one_of(st.integers(), st.none(), st.just([]), st.just(["NoSuchGPU"]))))
    rejects(gemm.peak_rows, "precisions", [gpu], data.draw(st.one_of(not_lists(), st.just([]), st.just(["fp12"]))))
    rejects(gemm.peak_rows, "modes", [gpu], modes=data.draw(st.one_of(st.just([1]), st.just(["false"]), st.none())))
    elements = answers(gemm.alignment_elements, precision, type_=tuple)
    assert 0 < elements[0] <= elements[1]
    rejects(gemm.alignment_elements, "precision", data.draw(bad_names(gemm.ELEMENT_BYTES)))


@covers(gemm.published_matmul, gemm.matmul_tflops, gemm.matmul_shape, gemm.mamf_flops, gemm.sustained_matmul_flops)
@given(st.sampled_from(MATMULS), st.data())
def test_published_matmuls(rec, data):
    found = answers(gemm.published_matmul, rec.gpu, rec.params.get("precision"), type_=list)
    assert rec in found
    assert answers(gemm.matmul_tflops, rec, type_=float) > 0
    shape = gemm.matmul_shape(rec)
    assert shape is None or (len(shape) == 3 and min(shape) > 0)
    try:
        flops, _shape, best = gemm.mamf_flops(rec.gpu, "bf16")
        assert flops > 0 and best.benchmark == "matmul"
    except ValueError as exc:
        assert "gpu" in str(exc)
    sustained = gemm.sustained_matmul_flops(rec.gpu)
    assert sustained is None or sustained[0] > 0
    other = next(r for r in results.records(kind="published") if r.benchmark != "matmul")
    for fn in (gemm.matmul_tflops, gemm.matmul_shape):
        rejects(fn, "rec", data.draw(st.one_of(st.integers(), st.none(), st.just({"m": 1}), st.just(other))))
    rejects(gemm.published_matmul, "gpu", data.draw(bad_strings().filter(lambda v: v is not None)))
    rejects(gemm.published_matmul, "method", method=data.draw(bad_names(gemm.MATMUL_METHODS).filter(
        lambda v: v is not None)))
    rejects(gemm.mamf_flops, "gpu", data.draw(bad_strings()))
    rejects(gemm.mamf_flops, "precision", rec.gpu, data.draw(bad_names(specs.PRECISIONS)))
    rejects(gemm.sustained_matmul_flops, "gpu", data.draw(bad_strings()))
