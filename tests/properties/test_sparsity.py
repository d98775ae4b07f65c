"""Properties of ampere.sparsity: valid input gives a finite, typed answer within its bounds; invalid input is
refused with ValueError/TypeError naming the field, fast."""

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import device, results, specs
from ampere import sparsity as sp

from .harness import answers, bad_floats, bad_ints, bad_names, covers, not_lists, rejects, rejects_any

A100 = "A100-SXM4-80GB"
CPU = device.DeviceInfo("cpu", "a CPU")
NOT_ARRAYS = st.one_of(st.text(max_size=3), st.none(), st.integers(), st.just({"a": 1}))


def weights(m: int = 4) -> st.SearchStrategy[np.ndarray]:
    """Small float32 matrices whose rows are a multiple of ``m`` wide."""
    return st.tuples(st.integers(1, 4), st.integers(1, 3), st.integers(0, 2**16)).map(
        lambda t: np.random.default_rng(t[2]).standard_normal((t[0], t[1] * m)).astype(np.float32))


@covers(sp.prune_nm, sp.is_nm, sp.mask_nm, sp.prune_2to4, sp.is_2to4, sp.mask_2to4, sp.prune_1to2, sp.is_1to2,
        sp.unstructured_mask, sp.random_mask_2to4)
@given(st.sampled_from([(1, 2), (2, 4), (4, 8), (1, 4)]), st.data())
def test_pruning_gives_the_pattern_it_promises(nm, data):
    n, m = nm
    w = data.draw(weights(m))
    pruned = answers(sp.prune_nm, w, n, m, type_=np.ndarray)
    assert pruned.shape == w.shape and answers(sp.is_nm, pruned, n, m, type_=bool)
    assert answers(sp.mask_nm, w, n, m, type_=np.ndarray).sum() == w.size // m * n
    if m % 4 == 0:
        assert sp.is_2to4(answers(sp.prune_2to4, w, type_=np.ndarray)) and sp.mask_2to4(w).shape == w.shape
        assert answers(sp.is_2to4, w, type_=bool) is False or np.count_nonzero(w) <= w.size // 2
    if m % 2 == 0:
        assert answers(sp.is_1to2, answers(sp.prune_1to2, w, type_=np.ndarray), type_=bool)
    keep = answers(sp.unstructured_mask, w, 0.5, type_=np.ndarray)
    assert keep.shape == w.shape and abs(int(keep.sum()) - w.size // 2) <= 1
    mask = answers(sp.random_mask_2to4, w.shape if m % 4 == 0 else (2, 8), seed=data.draw(st.integers(0, 99)),
                   type_=np.ndarray)
    assert sp.is_2to4(mask.astype(np.float32))
    for fn in (sp.prune_nm, sp.is_nm, sp.mask_nm, sp.prune_2to4, sp.is_2to4, sp.mask_2to4, sp.prune_1to2,
               sp.is_1to2, sp.unstructured_mask):
        rejects(fn, "w", data.draw(NOT_ARRAYS))
    rejects_any(data, sp.prune_nm, {"w": w, "n": n, "m": m},
                {"n": st.one_of(bad_ints(1, m - 1), st.just(m)), "m": bad_ints(2, 64)})
    rejects(sp.unstructured_mask, "sparsity", w, data.draw(bad_floats(None, 1.0, strict=False)))
    rejects_any(data, sp.random_mask_2to4, {"shape": (4, 8), "seed": 0},
                {"shape": st.one_of(not_lists(), st.just((10**6, 10**6)), st.just((0, 4))),
                 "seed": bad_ints(0, None)})


@covers(sp.compress_2to4, sp.decompress_2to4, sp.matmul_2to4, sp.metadata_nibbles, sp.storage_ratio,
        sp.cutlass_metadata_layout)
@given(st.sampled_from([np.uint8, np.uint16, np.uint32]), st.data())
def test_the_compressed_format_round_trips(meta_dtype, data):
    w = sp.prune_2to4(data.draw(weights(16)))
    values, meta = answers(sp.compress_2to4, w, meta_dtype, type_=tuple)
    assert values.shape == (w.shape[0], w.shape[1] // 2) and meta.dtype == meta_dtype
    assert np.array_equal(answers(sp.decompress_2to4, values, meta, w.shape[1], type_=np.ndarray), w)
    b = np.arange(w.shape[1] * 3, dtype=np.float32).reshape(w.shape[1], 3) % 5
    assert np.allclose(answers(sp.matmul_2to4, values, meta, b, type_=np.ndarray), w @ b, atol=1e-4)
    nibbles = answers(sp.metadata_nibbles, meta, w.shape[1] // 4, type_=np.ndarray)
    assert set(np.unique(nibbles)) <= {0x4, 0x8, 0x9, 0xC, 0xD, 0xE}  # lo < hi: the six the hardware accepts
    assert answers(sp.storage_ratio, w, values, meta, type_=Fraction) > Fraction(1, 2)
    big = sp.prune_2to4(np.random.default_rng(1).standard_normal((32, 32)).astype(np.float16))
    assert answers(sp.cutlass_metadata_layout, sp.compress_2to4(big)[1], type_=np.ndarray).size == 32 * 2
    rejects(sp.compress_2to4, "w", data.draw(NOT_ARRAYS))
    rejects(sp.compress_2to4, "meta_dtype", w, data.draw(st.sampled_from([np.int8, "u16", None, 3])))
    rejects(sp.decompress_2to4, "cols", values, meta, data.draw(bad_ints(1, None)))
    rejects(sp.decompress_2to4, "cols", values, meta, w.shape[1] + 4)
    rejects(sp.matmul_2to4, "b", values, meta, data.draw(NOT_ARRAYS))
    rejects(sp.metadata_nibbles, "groups", meta, data.draw(bad_ints(1, None)))
    rejects(sp.metadata_nibbles, "metadata", data.draw(NOT_ARRAYS), 2)
    rejects(sp.storage_ratio, "dense", data.draw(NOT_ARRAYS), values, meta)
    rejects(sp.cutlass_metadata_layout, "metadata", data.draw(NOT_ARRAYS))


@covers(sp.hardware_storage_ratio, sp.metadata_overhead, sp.nm_storage_ratio)
@given(st.sampled_from(sorted(sp.HARDWARE_FORMATS)), st.integers(2, 16), st.sampled_from(sp.NM_ENCODINGS),
       st.data())
def test_storage_ratios_are_fractions_between_a_half_and_one(precision, m, encoding, data):
    assert Fraction(1, 2) < answers(sp.hardware_storage_ratio, precision, type_=Fraction) < 1
    assert 0 < answers(sp.metadata_overhead, precision, type_=Fraction) <= Fraction(1, 4)
    n = data.draw(st.integers(1, m - 1))
    r = answers(sp.nm_storage_ratio, n, m, 16, encoding, type_=Fraction)
    assert Fraction(n, m) < r < 1
    assert sp.nm_storage_ratio(n, m, 16, "pattern") <= sp.nm_storage_ratio(n, m, 16, "positions")
    for fn in (sp.hardware_storage_ratio, sp.metadata_overhead):
        rejects(fn, "precision", data.draw(bad_names(sp.HARDWARE_FORMATS)))
    rejects_any(data, sp.nm_storage_ratio, {"n": n, "m": m, "bits": 16, "encoding": encoding}, {
        "n": st.one_of(bad_ints(1, m - 1), st.just(m)), "m": bad_ints(2, 64), "bits": bad_ints(1, 64),
        "encoding": bad_names(sp.NM_ENCODINGS)})


@covers(sp.LinearShape, sp.matmul_time_model, sp.speedup_model, sp.unstructured_break_even, sp.csr_precision)
@given(st.integers(1, 10**5), st.integers(1, 4096).map(lambda k: 4 * k), st.integers(1, 16384),
       st.sampled_from(["fp16", "bf16", "int8"]), st.data())
def test_the_roofline_bounds_a_2to4_layer(tokens, k, m, precision, data):
    shape = answers(sp.LinearShape, tokens, k, m, type_=sp.LinearShape)
    dense = answers(sp.matmul_time_model, A100, shape, precision, "dense", type_=dict)
    sparse = answers(sp.matmul_time_model, A100, shape, precision, "2:4", type_=dict)
    assert 0 < sparse["time_s"] <= dense["time_s"]
    assert 1.0 <= answers(sp.speedup_model, A100, shape, precision, "2:4", type_=float) <= 2.0 + 1e-9
    assert 0 < answers(sp.unstructured_break_even, A100, precision if precision != "int8" else "fp16",
                       csr_math="fp32", type_=float) < 1
    assert answers(sp.csr_precision, "fp16", data.draw(st.sampled_from(sp.CSR_MATH)), type_=str)
    rejects_any(data, sp.LinearShape, {"tokens": tokens, "in_features": k, "out_features": m}, {
        "tokens": bad_ints(1, 10**8), "in_features": st.one_of(bad_ints(1, 10**6), st.just(6)),
        "out_features": bad_ints(1, 10**6), "label": st.one_of(st.integers(), st.none())})
    rejects_any(data, sp.matmul_time_model, {"gpu": A100, "shape": shape}, {
        "gpu": bad_names(specs.names()), "shape": st.one_of(st.text(max_size=3), st.none(), st.just((1, 4, 4))),
        "precision": bad_names(["fp16", "bf16", "int8", "tf32", "fp32", "fp64"]),
        "kind": bad_names(["dense", "2:4", "unstructured"]), "sparsity": bad_floats(None, 1.0, strict=False),
        "efficiency": bad_floats(0.0, 1.0)})
    rejects(sp.unstructured_break_even, "gpu", data.draw(bad_names(specs.names())))
    rejects(sp.unstructured_break_even, "csr_math", A100, "fp16", csr_math=data.draw(bad_names(sp.CSR_MATH)))
    rejects(sp.csr_precision, "precision", data.draw(bad_names(sp.HARDWARE_FORMATS)))


@covers(sp.peak_rows, sp.break_even_rows, sp.speedup_curves)
@settings(max_examples=10)
@given(st.lists(st.sampled_from([A100, "H100-SXM5-80GB", "A100-PCIE-40GB"]), min_size=1, max_size=2, unique=True),
       st.data())
def test_peak_and_break_even_tables(gpus, data):
    rows = answers(sp.peak_rows, gpus, ["fp16", "bf16"], type_=list)
    assert rows and all(r["ratio"] in (None, 2.0) or abs(r["ratio"] - 2) < 1e-9 for r in rows)
    assert all(isinstance(r["GPU"], str) for r in answers(sp.break_even_rows, gpus, ["fp16"], type_=list))
    curves = answers(sp.speedup_curves, gpus[0], tokens=[1, 64, 4096], type_=dict)
    assert all(1.0 <= s <= 2.0 + 1e-9 for s in curves["2:4"])
    for fn in (sp.peak_rows, sp.break_even_rows):
        rejects(fn, "gpus", data.draw(st.one_of(not_lists(), st.just([]), st.just(["NoSuchGPU"]))))
        rejects(fn, "precisions", gpus, data.draw(st.one_of(st.none(), st.integers(), st.just(["fp99"]))))
    rejects(sp.speedup_curves, "tokens", tokens=data.draw(st.one_of(not_lists(), st.just([0]), st.just([10**12]))))


@covers(sp.amdahl, sp.gemm_speedup_needed)
@given(st.floats(0.0, 1.0), st.floats(1.0, 100.0), st.floats(1.0, 10.0), st.data())
def test_amdahl(fraction, speedup, target, data):
    s = answers(sp.amdahl, fraction, speedup, type_=float)
    assert 1.0 - 1e-12 <= s <= speedup + 1e-9
    need = sp.gemm_speedup_needed(fraction, target)  # inf when no GEMM speedup is enough (documented)
    assert isinstance(need, float) and (need == float("inf") or need >= 1.0 - 1e-9)
    rejects(sp.amdahl, "fraction", data.draw(bad_floats(None, 1.0, strict=False)), speedup)
    rejects(sp.amdahl, "speedup", fraction, data.draw(bad_floats(0.0)))
    rejects(sp.gemm_speedup_needed, "target", fraction, data.draw(bad_floats(0.0)))


@covers(sp.decoder_layer_time, sp.layer_speedup, sp.LayerTime, sp.speedup_rows, sp.bert_check_rows)
@settings(max_examples=15)
@given(st.sampled_from(["llama2-7b", "llama3.2-1b"]), st.sampled_from(sp.PHASES), st.integers(1, 64),
       st.integers(16, 4096), st.data())
def test_the_decoder_layer_model(model, phase, batch, context, data):
    t = answers(sp.decoder_layer_time, model, A100, phase, batch, context, type_=sp.LayerTime)
    assert t.total_s > 0 and 0 < t.gemm_fraction <= 1
    s = answers(sp.layer_speedup, model, A100, phase, batch, context, type_=dict)
    assert 1.0 <= s["speedup"] <= 2.0 + 1e-9
    assert answers(sp.speedup_rows, model, A100, [(phase, batch, context)], 1.5, type_=list)
    assert len(answers(sp.bert_check_rows, type_=list)) == 4
    rejects_any(data, sp.decoder_layer_time, {"model": model, "gpu": A100, "phase": phase}, {
        "model": st.one_of(st.integers(), st.just("llama-9000")), "gpu": bad_names(specs.names()),
        "phase": bad_names(sp.PHASES), "batch": bad_ints(1, 10**6), "context": st.one_of(st.just(-1), st.none())})
    rejects(sp.speedup_rows, "cases", model, A100, data.draw(st.one_of(not_lists(), st.just([("decode", 1)]))))
    rejects(sp.speedup_rows, "kernel_speedup", model, A100, kernel_speedup=data.draw(bad_floats(0.0, 100.0)))
    rejects(sp.bert_check_rows, "gpu", data.draw(bad_names(specs.names())))
    valid = {"model": model, "gpu": A100, "phase": "decode", "batch": 1, "tokens": 1, "context": 8,
             "gemm_kind": "dense", "gemm_s": 1.0, "attention_s": 1.0, "other_s": 1.0}
    rejects_any(data, sp.LayerTime, valid, {"phase": bad_names(sp.PHASES), "batch": bad_ints(1, 10**6),
                                            "gemm_s": bad_floats(None), "model": st.one_of(st.integers(), st.just(""))},
                field=lambda a: f"LayerTime.{a}")


@covers(sp.published_perplexities, sp.PerplexityResult, sp.perplexity_rows, sp.published_llm_speedups,
        sp.LLMSpeedup, sp.published_accuracy, sp.AccuracyResult, sp.published_speedups, sp.published_speedup,
        sp.claims_rows)
@given(st.data())
def test_published_tables(data):
    ppl = answers(sp.published_perplexities, type_=list)
    models = sorted({r.model for r in ppl})
    rows = answers(sp.perplexity_rows, [data.draw(st.sampled_from(models))], type_=list)
    assert rows and all(r["dense"] > 0 for r in rows)
    assert all(s.speedup > 1 for s in answers(sp.published_llm_speedups, type_=list))
    assert all(0 < r.dense for r in answers(sp.published_accuracy, type_=list))
    recs = answers(sp.published_speedups, A100, type_=list)
    assert all(0.5 < answers(sp.published_speedup, r, type_=float) < 2 for r in recs)
    assert all(set(r) >= {"claim", "verdict"} for r in answers(sp.claims_rows, type_=list))
    rejects(sp.perplexity_rows, "models", data.draw(st.one_of(st.text(min_size=1, max_size=3), st.integers(),
                                                              st.just(["no-such-model"]))))
    rejects(sp.published_speedups, "gpu", data.draw(bad_names(specs.names()).filter(lambda v: v is not None)))
    rejects(sp.published_speedup, "rec", data.draw(st.one_of(st.text(max_size=3), st.none(), st.integers())))
    rejects(sp.claims_rows, "asp", data.draw(st.one_of(st.integers(), st.text(max_size=3), st.just({"x": 1}))))
    p = ppl[0]
    rejects_any(data, sp.PerplexityResult, vars(p).copy(), {"wikitext_ppl": bad_floats(0.0),
                                                            "model": st.one_of(st.just(""), st.integers())},
                field=lambda a: f"PerplexityResult.{a}")
    s = sp.published_llm_speedups()[0]
    rejects_any(data, sp.LLMSpeedup, vars(s).copy(), {"dense_ms": bad_floats(0.0).filter(lambda v: v is not None),
                                                      "source": st.one_of(st.just(""), st.integers())},
                field=lambda a: f"LLMSpeedup.{a}")
    a = sp.published_accuracy()[0]
    rejects_any(data, sp.AccuracyResult, vars(a).copy(), {"dense": bad_floats(None), "network": st.just("")},
                field=lambda a: f"AccuracyResult.{a}")


@covers(sp.ASPConfig, sp.asp_experiment, sp.asp_runs, sp.asp_summary, sp.asp_conclusions, sp.plot_asp)
@settings(max_examples=1)  # each example trains four small MLPs on the CPU
@given(st.integers(0, 3), st.data())
def test_the_asp_experiment_on_a_tiny_budget(seed, data):
    import matplotlib.pyplot as plt

    cfg = answers(sp.ASPConfig, hidden=(8,), epochs=1, finetune_epochs=1, seed=seed, type_=sp.ASPConfig)
    run = answers(sp.asp_experiment, cfg, within_s=30, type_=dict)  # asp_runs is this once per seed
    assert {r["method"] for r in run["rows"]} >= {"dense"}
    summary = answers(sp.asp_summary, [run], type_=dict)
    assert all(isinstance(v, bool) for v in answers(sp.asp_conclusions, summary, type_=dict).values())
    fig, ax = plt.subplots()
    try:
        assert answers(sp.plot_asp, ax, summary, type_=type(None)) is None
    finally:
        plt.close(fig)
    rejects_any(data, sp.ASPConfig, {}, {"hidden": st.one_of(st.just(()), st.just((6,)), st.just("64"), st.just((10**6,))),
                                         "epochs": bad_ints(1, 1000), "batch_size": bad_ints(1, 1797),
                                         "lr": bad_floats(0.0, 1.0), "test_fraction": bad_floats(0.0, 0.99),
                                         "seed": bad_ints(0, 2**32 - 1)})
    rejects(sp.asp_experiment, "cfg", data.draw(st.one_of(st.integers(), st.text(max_size=3), st.just({}))))
    rejects(sp.asp_runs, "seeds", data.draw(st.one_of(not_lists(), st.just([-1]), st.just([]))))
    rejects(sp.asp_summary, "runs", data.draw(st.one_of(not_lists(), st.just([]), st.just([{"x": 1}]))))
    rejects(sp.asp_conclusions, "summary", data.draw(st.one_of(st.integers(), st.text(max_size=3), st.just({}))))
    rejects(sp.asp_conclusions, "tolerance", summary, data.draw(bad_floats(None, 1.0, strict=False)))


@covers(sp.draw_block, sp.plot_speedup_model, sp.plot_llm_speedup, sp.plot_sweep)
@settings(max_examples=2)
@given(st.data())
def test_the_figures_draw(data):
    import matplotlib.pyplot as plt

    w = sp.prune_2to4(np.random.default_rng(0).standard_normal((4, 8)).astype(np.float16))
    values, meta = sp.compress_2to4(w)
    fig, axes = plt.subplots(1, 3)
    try:
        assert answers(sp.draw_block, axes, w, values, meta, type_=type(None)) is None
        assert answers(sp.plot_speedup_model, axes[:2], A100, "fp16", type_=type(None)) is None
        assert answers(sp.plot_llm_speedup, axes[:2], "llama3.2-1b", A100, 1.5, type_=type(None)) is None
        rejects(sp.plot_speedup_model, "gpu", axes[:2], data.draw(bad_names(specs.names())))
        rejects(sp.plot_llm_speedup, "kernel_speedup", axes[:2], "llama3.2-1b", A100,
                data.draw(bad_floats(0.0, 100.0)))
        rejects(sp.draw_block, "w", axes, data.draw(NOT_ARRAYS), values, meta)
        result = sp.short_run(CPU)
        assert answers(sp.plot_sweep, axes[0], result, type_=type(None)) is None
        rejects(sp.plot_sweep, "result", axes[0], data.draw(st.one_of(st.integers(), st.just({}))))
    finally:
        plt.close("all")


@covers(sp.BackendCheck, sp.probe_backend, sp.short_run, sp.bench_main, sp.sweep_table, sp.verdict,
        sp.linear_sweep, sp.measure_cpu_unstructured, sp.torch_cutlass_reference)
@settings(max_examples=2)  # the CPU code path of the benchmark
@given(st.data())
def test_the_measurement_path_on_a_cpu(data):
    found = answers(sp.probe_backend, CPU, type_=sp.BackendCheck)
    assert found.works is False and found.backend is None
    result = answers(sp.short_run, CPU, type_=dict)
    assert results.validate(result) is result
    assert isinstance(answers(sp.sweep_table, result, type_=list), list)
    assert all(isinstance(line, str) for line in answers(sp.verdict, result, type_=list))
    assert answers(sp.bench_main, ["--device", "cpu", "--quick", "--no-save"], within_s=60, type_=int) == 0
    records, notes = answers(sp.linear_sweep, [sp.LinearShape(8, 16, 16)], ["float32"], ["reference"], "cpu",
                             0.0, 0.001, 0.01, False, None, type_=tuple)
    assert {r["kind"] for r in records} >= {"dense", "sparse"}
    cpu = answers(sp.measure_cpu_unstructured, 64, 16, max_time_s=0.02, type_=dict)
    assert set(cpu["median_s"]) and all(t > 0 for t in cpu["median_s"].values())
    ref = sp.torch_cutlass_reference(sp.prune_2to4(np.ones((32, 64), dtype=np.float16)))
    assert ref is None or len(ref) == 2  # None: this torch has no CPU CUTLASS encoder (documented)
    bad_info = data.draw(st.one_of(st.integers(), st.text(min_size=1, max_size=3), st.builds(object)))
    for fn in (sp.probe_backend, sp.short_run):
        rejects(fn, "info", bad_info)
    rejects(sp.probe_backend, "dtype", CPU, data.draw(bad_names(["float16", "bfloat16", "float32"])))
    rejects(sp.bench_main, "argv", data.draw(st.one_of(st.integers(), st.just([1]))))
    rejects(sp.sweep_table, "result", data.draw(st.one_of(st.integers(), st.just({}), st.text(max_size=3))))
    rejects(sp.verdict, "target", result, data.draw(bad_floats(0.0, 100.0)))
    rejects_any(data, sp.linear_sweep, {"shapes": [sp.LinearShape(8, 16, 16)], "dtypes": ["float32"],
                                        "backends": ["reference"], "device": "cpu", "unstructured_shape": None}, {
        "shapes": st.one_of(not_lists(), st.just([sp.LinearShape(10**5, 4096, 4096)]), st.just([(8, 16, 16)])),
        "dtypes": st.one_of(not_lists(), st.just(["float64"])), "backends": st.one_of(st.just(["x"]), st.integers()),
        "device": st.one_of(st.integers(), st.just("tpu")), "warmup_s": bad_floats(None, 600.0, strict=False),
        "alg_search": st.one_of(st.text(max_size=2), st.integers(), st.none()),
        "progress": st.one_of(st.integers(), st.text(min_size=1, max_size=2)),
        "unstructured_shape": st.one_of(st.integers(), st.just(sp.LinearShape(4096, 4096, 4096)))})
    rejects_any(data, sp.measure_cpu_unstructured, {"size": 64, "tokens": 16, "max_time_s": 0.02}, {
        "size": st.one_of(bad_ints(4, 4096), st.just(6)), "tokens": bad_ints(1, 8192),
        "sparsity": bad_floats(0.01, 0.99, strict=False), "seed": bad_ints(0, 2**32 - 1),
        "max_time_s": bad_floats(0.01, 60.0, strict=False)})
    rejects_any(data, sp.BackendCheck, {"works": False, "backend": None, "reason": "r"}, {
        "works": st.one_of(st.integers(), st.text(max_size=2), st.none()), "backend": st.integers(),
        "reason": st.one_of(st.integers(), st.none()), "tried": st.one_of(st.integers(), st.text(min_size=1)),
        "cusparselt_version": st.one_of(st.just(-1), st.text(min_size=1, max_size=2))},
        field=lambda a: f"BackendCheck.{a}")
    rejects(sp.torch_cutlass_reference, "w", data.draw(NOT_ARRAYS))
