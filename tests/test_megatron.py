"""Tests of ampere.megatron and ampere.megatron_lab (chapter: Megatron-LM, 3D parallelism)."""

from __future__ import annotations

import statistics

import pytest

from ampere import interconnect, megatron as M, specs


# --- sizing a GPT ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("row", M.TABLE1, ids=[r["name"] for r in M.TABLE1])
def test_parameter_count_reproduces_table1(row):
    cfg = M.table1_config(row)
    assert round(M.params(cfg) / 1e9, 1) == row["params_b"]


def test_parameter_formula_equals_counting_the_tensors():
    cfg = M.GPTConfig(layers=3, hidden=64, heads=4, vocab=100, seq=16)
    h, V, s = 64, 100, 16
    per_layer = (h * 3 * h + 3 * h) + (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h) + 2 * 2 * h
    assert M.params(cfg) == pytest.approx(3 * per_layer + V * h + s * h)
    # the split over tensor ranks adds up: replicated parts counted once per rank
    per = M.params_per_gpu(cfg, tensor=2, pipeline=1)
    assert per["max"] == pytest.approx(3 * ((12 * h * h + 7 * h) / 2 + 6 * h) + V * h / 2 + s * h + 2 * h)


def test_flops_per_iteration_is_equation_3():
    cfg = M.table1_config("1T")
    B, s, l, h, V = 3072, 2048, 128, 25600, 51200
    eq3 = 96 * B * s * l * h**2 * (1 + s / (6 * h) + V / (16 * l * h))
    assert M.flops_per_iteration(cfg, B) == pytest.approx(eq3, rel=1e-12)
    no_rc = M.flops_per_iteration(cfg, B, recompute=False)
    assert no_rc == pytest.approx(72 * B * s * l * h**2 * (1 + s / (6 * h)) + 6 * B * s * h * V, rel=1e-12)


@pytest.mark.parametrize("est", M.TRAINING_ESTIMATES, ids=lambda e: e["model"])
def test_training_days_34_and_84(est):
    days = M.training_days(est["params"], est["tokens"], est["gpus"], est["tflops_per_gpu"])
    assert round(days) == est["published_days"]


def test_config_and_training_days_reject_bad_input():
    with pytest.raises(ValueError, match="hidden=100 must be a multiple of heads=3"):
        M.GPTConfig(layers=2, hidden=100, heads=3)
    with pytest.raises(ValueError, match="layers must be an integer >= 1, got 0"):
        M.GPTConfig(layers=0, hidden=64, heads=4)
    with pytest.raises(ValueError, match="tokens"):
        M.training_days(1e9, -1, 8, 100)
    with pytest.raises(ValueError, match="batch"):
        M.flops_per_iteration(M.GPTConfig(2, 64, 4), 0)


# --- layouts ------------------------------------------------------------------------------------------------

CFG = M.GPTConfig(layers=24, hidden=2304, heads=24)


@pytest.mark.parametrize("kwargs,match", [
    (dict(gpus=32, batch=512, tensor=5, pipeline=1), "tensor=5 does not divide heads=24"),
    (dict(gpus=35, batch=560, tensor=1, pipeline=5, interleave=2), "layers=24 is not divisible by pipeline x interleave"),
    (dict(gpus=50, batch=500, tensor=1, pipeline=25), "pipeline=25 exceeds layers=24"),
    (dict(gpus=36, batch=512, tensor=8, pipeline=1), "gpus=36 is not divisible by tensor x pipeline"),
    (dict(gpus=32, batch=500, tensor=1, pipeline=1, microbatch=16), "batch=500 is not divisible by microbatch x data"),
    (dict(gpus=8, batch=12, tensor=1, pipeline=4, microbatch=1, interleave=2), "multiple of pipeline"),
    (dict(gpus=32, batch=512, tensor=1, pipeline=1, interleave=2), "needs pipeline > 1"),
    (dict(gpus=32, batch=512, tensor=0, pipeline=1), "tensor must be an integer >= 1, got 0"),
])
def test_layouts_that_do_not_divide_say_which_rule(kwargs, match):
    with pytest.raises(ValueError, match=match):
        M.layout(CFG, **kwargs)
    with pytest.raises(ValueError, match=match):
        M.estimate(CFG, **kwargs)


def test_layout_counts():
    lay = M.layout(M.table1_config("1T"), 3072, 3072, 8, 64, 1, 1)
    assert (lay.data, lay.microbatches) == (6, 512)


# --- memory -------------------------------------------------------------------------------------------------

def test_activation_formulas_of_korthikanti():
    cfg = M.GPTConfig(layers=1, hidden=1024, heads=16, seq=2048)
    sbh = 2048 * 1024
    assert M.activation_bytes_per_layer(cfg) == pytest.approx(sbh * (34 + 5 * 16 * 2048 / 1024))
    assert M.activation_bytes_per_layer(cfg, tensor=4) == pytest.approx(sbh * (10 + 24 / 4 + 5 * 16 * 2048 / (1024 * 4)))
    assert M.activation_bytes_per_layer(cfg, tensor=4, sequence_parallel=True) == pytest.approx(
        sbh * (34 / 4 + 5 * 16 * 2048 / (1024 * 4)))
    assert M.activation_bytes_per_layer(cfg, recompute=True) == 2 * sbh


def test_memory_model_bytes_per_param_and_options():
    cfg = M.table1_config("1T")
    base = M.memory_per_gpu(cfg, 3072, 3072, 8, 64)
    assert base["bytes_per_param"] == 16
    assert base["fits"] and base["total"] < 80e9
    forty = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, gpu="A100-SXM4-40GB")
    assert not forty["fits"] and forty["capacity"] == 40e9
    dist = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, distributed_optimizer=True)
    assert dist["optimizer"] == pytest.approx(base["optimizer"] / 6)
    norc = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, recompute=False)
    assert norc["activations"] > 5 * base["activations"]
    sp = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, recompute=False, sequence_parallel=True)
    assert sp["activations"] < norc["activations"]
    gpipe = M.memory_per_gpu(cfg, 3072, 3072, 8, 64, schedule="gpipe")
    assert gpipe["activations"] > 5 * base["activations"]  # all 512 microbatches instead of 64
    with pytest.raises(ValueError, match="schedule"):
        M.memory_per_gpu(cfg, 3072, 3072, 8, 64, schedule="pipedream")


# --- pipeline schedules ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind,p,m,v", [
    ("gpipe", 4, 8, 1), ("gpipe", 2, 3, 1), ("1f1b", 4, 8, 1), ("1f1b", 8, 5, 1), ("1f1b", 1, 4, 1),
    ("interleaved", 4, 8, 2), ("interleaved", 4, 4, 4), ("interleaved", 8, 16, 3),
])
def test_simulated_bubble_equals_the_formula(kind, p, m, v):
    res = M.simulate_schedule(kind, p, m, v)
    assert res.bubble_fraction == pytest.approx(M.bubble_formula(p, m, v), abs=1e-12)
    # every microbatch runs forward and backward once per chunk on every device
    for r in range(p):
        ops = [o for o in res.ops if o["device"] == r]
        assert len(ops) == 2 * m * v


def test_in_flight_activations_gpipe_1f1b_interleaved():
    assert M.simulate_schedule("gpipe", 4, 12).max_in_flight[0] == 12
    assert M.simulate_schedule("1f1b", 4, 12).max_in_flight == [4, 3, 2, 1]
    p, v = 8, 2
    res = M.simulate_schedule("interleaved", p, 16, v)
    assert res.max_in_flight[0] == pytest.approx(p * (1 + (p - 1) / (p * v)))


def test_unbalanced_pipeline_matches_the_closed_form_used_by_estimate():
    p, m = 8, 32
    stage_times = [(1.0, 2.0)] * (p - 1) + [(1.1, 2.2)]
    res = M.simulate_schedule("1f1b", p, m, stage_times=stage_times)
    assert res.makespan == pytest.approx(m * 3.3 + (p - 1) * 3.0)


def test_schedule_errors():
    with pytest.raises(ValueError, match="multiple of pipeline"):
        M.schedule_ops("interleaved", 4, 6, 2)
    with pytest.raises(ValueError, match="kind='zero-bubble' is not a schedule"):
        M.schedule_ops("zero-bubble", 4, 8)
    with pytest.raises(ValueError, match="needs kind='interleaved'"):
        M.schedule_ops("1f1b", 4, 8, 2)


def test_communication_delays_the_pipeline():
    a = M.simulate_schedule("1f1b", 4, 8)
    b = M.simulate_schedule("1f1b", 4, 8, t_comm=0.1)
    assert b.makespan > a.makespan


# --- the throughput model ----------------------------------------------------------------------------------------

def test_gemm_roofline_and_waves():
    peak = specs.get("A100-SXM4-80GB").peak_flops("fp16")
    m, n, k = 1024, 10240, 5120
    t = M.gemm_time(m, n, k)
    assert 2 * m * n * k / t == pytest.approx(271.2e12, rel=0.01)  # the MAMF input comes back
    # a thin inner dimension is memory-bound: time = bytes / achievable HBM bandwidth
    hbm = M.INPUTS["hbm_fraction"].value * specs.get("A100-SXM4-80GB").hbm_bytes_per_s
    t_small = M.gemm_time(2048, 2048, 64, batch=64)
    assert t_small == pytest.approx(2 * (2048 * 64 * 2 + 2048 * 2048) * 64 / hbm, rel=0.02)
    # one tile more than a wave costs a whole wave
    full = M.gemm_time(256 * 9, 128 * 12, 4096)
    over = M.gemm_time(256 * 9 + 1, 128 * 12, 4096)
    assert over > 1.3 * full
    assert 2 * m * n * k / t < 0.9 * peak


def test_attention_efficiency_is_derived_from_the_published_benchmark():
    eff = M.attention_efficiency()
    b = M.ATTENTION_BENCHMARK
    roof = M.attention_core_roofline(b["gpu"], b["batch"], b["heads"], b["head_dim"], b["seq"])["total"]
    assert eff == pytest.approx(roof / 17.41e-3)
    assert 0.5 < eff < 1.0


def test_tensor_parallel_all_reduce_uses_the_interconnect_model():
    hw = M._hardware("A100-SXM4-80GB")
    nbytes = 2 * 2048 * 25600
    assert M._tp_allreduce(hw, nbytes, 8) == interconnect.collective_time(
        "all_reduce", nbytes, 8, 230e9, interconnect.A100_INTRA_LATENCY_S)
    assert M._tp_allreduce(hw, nbytes, 16) > 1.5 * M._tp_allreduce(hw, nbytes, 8)  # crossing nodes hurts


def test_estimate_breakdown_sums_and_calibration():
    row = next(r for r in M.TABLE1 if r["name"] == M.CALIBRATION_RUN)
    cal = M._row_estimate(row)
    unc = M._row_estimate(row, calibrated=False)
    assert cal.tflops_per_gpu == pytest.approx(row["tflops_per_gpu"], rel=1e-9)
    assert unc.tflops_per_gpu > cal.tflops_per_gpu
    for est in (cal, unc):
        assert sum(est.breakdown.values()) == pytest.approx(est.time_per_iteration_s, rel=1e-12)
        assert list(est.breakdown) == list(M.CATEGORIES)
    assert unc.breakdown["unmodelled (system efficiency)"] == 0.0
    assert 0.8 < M.system_efficiency() < 0.95  # what a hardware model does not see: about 12%


def test_estimate_required_fields_and_bubble():
    cfg = M.table1_config("1T")
    est = M.estimate(cfg, 3072, 3072, 8, 64)
    for name in ("tflops_per_gpu", "time_per_iteration_s", "bubble_fraction", "memory_bytes_per_gpu", "breakdown"):
        assert hasattr(est, name)
    assert est.bubble_fraction == pytest.approx(M.bubble_formula(64, 512), rel=0.1)
    flops = M.flops_per_iteration(cfg, 3072)
    assert est.tflops_per_gpu == pytest.approx(flops / 3072 / est.time_per_iteration_s / 1e12)
    inter = M.estimate(cfg, 3072, 3072, 8, 64, interleave=2)
    assert inter.bubble_fraction < est.bubble_fraction
    assert inter.breakdown["pipeline sends"] > est.breakdown["pipeline sends"]
    no_sg = M.estimate(cfg, 3072, 3072, 8, 64, scatter_gather=False)
    assert no_sg.breakdown["pipeline sends"] > 2 * est.breakdown["pipeline sends"]
    norc = M.estimate(cfg, 3072, 3072, 8, 64, recompute=False)
    assert norc.time_per_iteration_s < est.time_per_iteration_s
    assert not norc.fits_in_memory  # why the paper recomputes
    with pytest.raises(ValueError, match="ddp must be one of"):
        M.estimate(cfg, 3072, 3072, 8, 64, ddp="fsdp")
    with pytest.raises(ValueError, match="not in the catalogue"):
        M.estimate(cfg, 3072, 3072, 8, 64, gpu="A200")


def test_other_gpus_run_with_notes():
    cfg = M.table1_config("145B")
    h100 = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2, gpu="H100-SXM5-80GB")
    a100 = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2)
    assert h100.tflops_per_gpu > 2 * a100.tflops_per_gpu
    assert any("DGX A100" in n for n in h100.notes)
    pcie = M.estimate(M.table1_config("1.7B"), 32, 512, 1, 1, 16, gpu="A100-PCIE-40GB")
    assert pcie.gpu == "A100-PCIE-40GB"


def test_table1_acceptance_targets():
    rows = M.table1_rows()
    held = [abs(r["error_calibrated"]) for r in rows if not r["calibration_run"]]
    assert len(held) == 9
    assert statistics.mean(held) <= 0.03
    assert max(held) <= 0.07
    # the model gets the trend: throughput rises from the small rows to the large ones, as published
    cal = {r["name"]: r["calibrated"] for r in rows}
    assert cal["530B"] > cal["18B"] and cal["310B"] > cal["7.5B"]


def test_table2_fall_with_more_gpus():
    rows = M.table2_rows("default")
    by_model = {}
    for r in rows:
        by_model.setdefault(r["model"], []).append(r)
    for model, rs in by_model.items():
        pred = [r["predicted"] for r in rs]
        assert pred == sorted(pred, reverse=True), model  # more GPUs, fewer microbatches, lower per-GPU rate
        assert abs(rs[-1]["predicted_fall"] - rs[-1]["published_fall"]) <= 0.03
    inter = M.table2_rows("interleaved")
    assert abs(inter[2]["predicted_fall"]) < abs(rows[2]["predicted_fall"])  # interleaving shrinks the bubble
    with pytest.raises(ValueError, match="schedule="):
        M.table2_rows("zb")


def test_validate_passes():
    text, ok = M.validate()
    assert ok, text
    assert "calibration run" in text and "Table 2" in text
    assert "nine held-out rows, uncalibrated" in text  # both errors on the same rows
    sc = M._table1_scores(M.table1_rows())
    assert sc["mean_uncalibrated_held_out"] > 0.1 > sc["mean_calibrated"]
    assert M.CALIBRATION_RUN == "1.7B" and sum(r["calibration_run"] for r in M.table1_rows()) == 1


def test_search_keeps_tensor_parallelism_inside_a_node():
    cfg = M.table1_config("1T")
    best = M.search_layouts(cfg, 3072, 3072, top=5)
    assert best and all(e.fits_in_memory for e in best)
    assert [e.tflops_per_gpu for e in best] == sorted((e.tflops_per_gpu for e in best), reverse=True)
    assert all(e.layout.tensor <= 8 for e in best)
    assert all(e.layout.pipeline > 1 for e in best)  # the model does not fit otherwise
    small = M.search_layouts(M.GPTConfig(4, 256, 4, vocab=512, seq=128), 8, 64, top=None)
    assert all(e.layout.gpus == 8 for e in small)


def test_claims_have_verdicts():
    rows = M.claims()
    assert len(rows) == 4
    assert {"claim", "verdict", "evidence"} <= set(rows[0])
    assert "80 GB" in rows[1]["verdict"]
    assert "52.4%" in rows[0]["evidence"]


def test_inputs_have_sources_in_the_bibliography():
    import pathlib

    bib = (pathlib.Path(__file__).resolve().parents[1] / "book" / "references.bib").read_text()
    keys = {i.source for i in M.INPUTS.values() if i.source} | {"narayanan2021megatron", "megatronsc21scripts",
                                                                "korthikanti2022reducing", "shoeybi2019megatron"}
    missing = sorted(k for k in keys if f"{{{k}," not in bib)
    assert not missing, missing


# --- the distributed lab ---------------------------------------------------------------------------------------

def test_lab_config_validation_and_shards_roundtrip():
    torch = pytest.importorskip("torch")
    from ampere import megatron_lab as L

    with pytest.raises(ValueError, match="tensor=3 does not divide heads=4"):
        L.LabConfig(tensor=3)
    with pytest.raises(ValueError, match="pipeline=3 does not divide layers=2"):
        L.LabConfig(pipeline=3)
    cfg = L.LabConfig(tensor=2)
    full = L._init_params(cfg)
    for name in ("0.qkv_w", "0.qkv_b", "0.fc1_w", "0.proj_w", "0.fc2_w", "0.proj_b", "wte"):
        shards = [L._shard(name, full[name], r, 2) for r in range(2)]
        assert torch.equal(L._unshard(name, shards), full[name])
    assert L.tp_bytes_formula(cfg) == 8 * 4 * 32 * 32 * 0.5 * 2 * 2 * 4
    assert L.pp_bytes_formula(L.LabConfig(tensor=1, pipeline=2)) == 4 * 32 * 32 * 4


def test_lab_matches_single_process_and_counts_bytes():
    pytest.importorskip("torch")
    from ampere import megatron_lab as L

    cfgs = [L.LabConfig(tensor=2, pipeline=1, steps=3), L.LabConfig(tensor=1, pipeline=2, steps=3)]
    tp, pp = L.run_labs(cfgs, backend="gloo", timeout_s=60)
    for r in (tp, pp):
        assert r.matches_single_process, (r.max_abs_grad_diff, r.max_abs_logit_diff)
        assert r.losses[-1] < r.losses[0]
    assert tp.tp_bytes_per_rank == tp.tp_bytes_formula
    assert pp.pp_bytes_per_boundary_per_microbatch == pp.pp_bytes_formula
    assert tp.pp_bytes_formula == 0 and pp.tp_bytes_formula == 0
    with pytest.raises(ValueError, match="same world size"):
        L.run_labs([L.LabConfig(tensor=2), L.LabConfig(tensor=4)])


# --- measuring ---------------------------------------------------------------------------------------------------

def test_layer_gemm_shapes_and_cpu_measurement():
    pytest.importorskip("torch")
    cfg = M.GPTConfig(layers=2, hidden=64, heads=4, vocab=128, seq=32)
    shapes = M.layer_gemm_shapes(cfg, tensor=2, microbatch=2)
    flops = sum(2 * g["m"] * g["n"] * g["k"] * g["batch"] for g in shapes)
    assert flops == pytest.approx((24 * 2 * 32 * 64**2 + 4 * 2 * 32**2 * 64) / 2)  # forward FLOPs / t
    recs = M.measure_layer_gemms(cfg, 2, 2, device="cpu", dtype="fp32", warmup_s=0.0, max_time_s=0.05)
    assert [r["name"] for r in recs] == [g["name"] for g in shapes]
    assert all(r["measured_s"] > 0 and r["model_s"] is None for r in recs)
    with pytest.raises(ValueError, match="dtype must be one of"):
        M.measure_layer_gemms(cfg, dtype="int8")
    with pytest.raises(ValueError, match="tensor=3"):
        M.layer_gemm_shapes(cfg, tensor=3)


def test_bench_runs_its_whole_path_on_the_cpu(capsys):
    import time

    start = time.perf_counter()
    assert M.bench_main(["--device", "cpu", "--quick", "--no-save"]) == 0
    assert time.perf_counter() - start <= 60
    out = capsys.readouterr().out
    assert "not a GPU measurement" in out and "6 shapes" in out
    assert out.count("TFLOP/s") >= 6  # every shape measured
    assert M.bench_main(["--no-save", "--device", "cpu", "--rows", "1T", "2T"]) == 2  # bad rows are refused before measuring
    assert "unknown row(s) ['2T']" in capsys.readouterr().err


def test_bench_cpu_result_is_marked_cpu(monkeypatch):
    saved = {}
    from ampere import benchcli

    monkeypatch.setattr(benchcli, "finish_bench", lambda result, args, summary: saved.setdefault("r", result) and 0)
    assert M.bench_main(["--device", "cpu", "--quick"]) == 0
    assert saved["r"]["device"]["backend"] == "cpu"


# --- issue 14 and 16: inputs that are really what they say --------------------------------------------------


def test_estimate_refuses_look_alike_inputs():
    with pytest.raises(ValueError, match="recompute must be one of"):
        M.estimate(CFG, 32, 512, 1, 1, recompute="no")
    with pytest.raises(TypeError, match="calibrated must be True or False"):
        M.estimate(CFG, 32, 512, 1, 1, calibrated="false")
    with pytest.raises(TypeError, match="cfg must be a GPTConfig"):
        M.estimate(None, 32, 512, 1, 1)
    with pytest.raises(TypeError, match="recompute must be one of"):
        M.estimate(CFG, 32, 512, 1, 1, recompute=1)
    with pytest.raises(TypeError, match="sequence_parallel must be True or False"):
        M.estimate(CFG, 32, 512, 1, 1, sequence_parallel="yes")


def test_recompute_names_and_aliases():
    full = M.estimate(CFG, 32, 512, 1, 1, recompute="full")
    assert M.estimate(CFG, 32, 512, 1, 1, recompute=True).time_per_iteration_s == full.time_per_iteration_s
    none = M.estimate(CFG, 32, 512, 1, 1, recompute=False)
    sel = M.estimate(CFG, 32, 512, 1, 1, recompute="selective")
    assert none.recompute == "none" and sel.recompute == "selective" and full.recompute == "full"
    assert none.time_per_iteration_s < sel.time_per_iteration_s < full.time_per_iteration_s
    cfg, B = M.table1_config("1T"), 3072
    # selective adds exactly one more forward of the attention core (4 B s^2 h per layer)
    extra = M.flops_per_iteration(cfg, B, "selective") - M.flops_per_iteration(cfg, B, "none")
    assert extra == cfg.layers * 4 * B * cfg.seq**2 * cfg.hidden


def test_default_estimate_has_no_fitted_constant():
    est = M.estimate(CFG, 32, 512, 1, 1)
    assert not est.calibrated and est.system_efficiency == 1.0
    assert est.breakdown["unmodelled (system efficiency)"] == 0.0
    cal = M.estimate(CFG, 32, 512, 1, 1, calibrated=True)
    assert cal.time_per_iteration_s > est.time_per_iteration_s


def test_sequence_parallelism_changes_time_and_memory():
    cfg = M.table1_config("145B")
    base = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2, recompute="selective")
    sp = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2, recompute="selective", sequence_parallel=True)
    assert sp.breakdown["other memory-bound"] < base.breakdown["other memory-bound"] / 2  # b s h kernels / t
    assert sp.memory_bytes_per_gpu < base.memory_bytes_per_gpu


def test_llama_shapes_have_exact_parameter_counts():
    # released checkpoints (the HBM chapter's presets cite metallama2023configs / jiang2023mistral)
    from ampere import transformer

    for name in ("llama2-7b", "llama2-13b", "llama2-70b", "mistral-7b"):
        shape = transformer.preset(name)
        assert M.params(shape) == shape.params
    llama7 = M.GPTConfig(32, 4096, 32, 32000, 4096, ffn_hidden=11008, glu=True, tied_embeddings=False,
                         biases=False, norm="rmsnorm", positions="rope")
    assert M.params(llama7) == 6_738_415_616
    assert M.params_per_gpu(llama7, 1, 1)["max"] == 6_738_415_616
    # the FLOP count follows the linear layers: 2 x tokens x weights per forward
    fl = M.flops_per_iteration(llama7, 1, "none")
    linear = sum(i * o for _, i, o in llama7.linear_shapes())
    assert fl == 32 * 3 * (2 * 4096 * linear + 4 * 4096**2 * 4096) + 6 * 4096 * 4096 * 32000
    est = M.estimate(llama7, 64, 256, 2, 1, 1, recompute="selective", sequence_parallel=True)
    assert est.fits_in_memory and est.tflops_per_gpu > 0


def test_node_network_is_data():
    from ampere import fabrics

    cfg = M.table1_config("145B")
    dgx = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2)
    assert dgx.time_per_iteration_s == M.estimate(cfg, 1536, 2304, 8, 8, 2, 2,
                                                  network=fabrics.DGX_A100).time_per_iteration_s
    half = M.estimate(cfg, 1536, 2304, 8, 8, 2, 2, network=fabrics.DGX_A100.with_(hcas_per_node=4))
    assert half.breakdown["pipeline sends"] > dgx.breakdown["pipeline sends"]
    assert half.breakdown["data-parallel all-reduce"] > dgx.breakdown["data-parallel all-reduce"]
    with pytest.raises(TypeError, match="network must be"):
        M.estimate(cfg, 1536, 2304, 8, 8, 2, 2, network="DGX A100")


def test_uneven_pipeline_bloom_layout_is_accepted():
    # a BLOOM-176B-sized model: 70 layers on 12 stages (the example of an uneven split); the heaviest
    # stage (6 layers) paces the pipeline, so it runs like 72 layers
    bloom = M.GPTConfig(70, 14336, 112, 250880, 2048, positions="rope")
    lay = M.layout(bloom, 384, 2048, 4, 12)
    assert lay.stage_layers(bloom) == 6
    est = M.estimate(bloom, 384, 2048, 4, 12)
    even = M.estimate(M.GPTConfig(72, 14336, 112, 250880, 2048, positions="rope"), 384, 2048, 4, 12)
    assert est.time_per_iteration_s == pytest.approx(even.time_per_iteration_s, rel=0.02)
    with pytest.raises(ValueError, match="with interleaving"):
        M.layout(bloom, 384, 2048, 4, 12, interleave=2)


def test_search_layouts_skips_layouts_that_do_not_fit():
    cfg = M.table1_config("145B")
    found = M.search_layouts(cfg, 1536, 2304, top=None, microbatches=(1, 2), max_interleave=1)
    assert found and all(e.fits_in_memory for e in found)
    every = M.search_layouts(cfg, 1536, 2304, top=None, microbatches=(1, 2), max_interleave=1,
                             include_infeasible=True)
    assert any(not e.fits_in_memory for e in every)


def test_lab_layer_keeps_every_tensor_on_the_activation_device():
    """The causal mask is built on the activations' device (a CPU mask fails on CUDA; 'meta' fails the same way)."""
    torch = pytest.importorskip("torch")
    from ampere import megatron_lab as L

    cfg = L.LabConfig(tensor=1)
    p = {k: v.to("meta") for k, v in L._init_params(cfg).items()}
    x = torch.empty(2, cfg.seq, cfg.hidden, device="meta")
    ident = lambda z: z  # noqa: E731
    y = L._head(p, L._layer(p, 0, L._embed(p, torch.zeros(2, cfg.seq, dtype=torch.long, device="meta")) + x, cfg.heads,
                            ident, ident))
    assert y.device.type == "meta" and tuple(y.shape) == (2, cfg.seq, len(L._vocab()))


def test_2022_runs_predicted_without_a_fitted_constant():
    rows = M.runs_2022()
    assert {r["recompute"] for r in rows} == {"full", "selective"}
    for r in rows:
        assert not r["estimate"].calibrated and r["fits"]
        assert r["label"].startswith("published: korthikanti2022reducing")
        # MFU and time are two views of one number: their errors agree
        assert r["predicted_mfu"] / r["published_mfu"] == pytest.approx(1 / (1 + r["error"]))
    errs = [abs(r["error"]) for r in rows]
    assert sum(errs) / len(errs) <= M.TARGET_2022_MEAN and max(errs) <= M.TARGET_2022_MAX
    sp = M.speedup_2022(rows)
    assert sp["published"] == pytest.approx(54.2 / 42.1)
    assert abs(sp["predicted"] - sp["published"]) <= M.TARGET_2022_SPEEDUP
    assert sp["predicted"] > 1.15  # selective + SP is clearly faster, as published


def test_validation_groups_report_errors_per_group():
    groups = {g.group: g for g in M.validation_groups()}
    assert len(groups) == 5
    no_fit = [g for g in groups.values() if not g.calibrated]
    assert {g.source for g in no_fit} == {"narayanan2021megatron", "korthikanti2022reducing"}
    t1 = groups["2021 Table 1 (weak scaling)"]
    assert t1.runs == 10 and 0.10 < t1.mean_abs_error < 0.20  # the honest 2021 gap, explained in the chapter
    assert groups["2022: full and selective + SP"].max_abs_error <= M.TARGET_2022_MAX
    assert all(g.mean_abs_error <= g.max_abs_error for g in groups.values())


def test_layer_gemm_points_show_published_matmuls_without_a_gpu():
    from ampere import device

    pts = M.layer_gemm_points(device.probe(force="cpu"))
    gpus = {p.gpu for p in pts}
    assert {"A100-SXM4-80GB", "H100-SXM5-80GB"} <= gpus
    for p in pts:
        assert p.kind in ("published", "recorded") and p.source and "bekman2024mle" not in p.source
        assert p.model is not None and 0.9 < p.ratio < 1.1  # the model's GEMM input, corrected for waves


def test_zero_stages_shard_memory_and_stage_3_adds_gathers():
    cfg = M.table1_config("18B")
    runs = {z: M.estimate(cfg, 256, 1024, 8, 1, 8, zero_stage=z) for z in range(4)}
    mems = [runs[z].memory_bytes_per_gpu for z in range(4)]
    assert mems[0] > mems[1] > mems[2] > mems[3]
    assert runs[1].time_per_iteration_s == M.estimate(cfg, 256, 1024, 8, 1, 8,
                                                      distributed_optimizer=True).time_per_iteration_s
    assert runs[3].breakdown["data-parallel all-reduce"] > runs[2].breakdown["data-parallel all-reduce"]
    with pytest.raises(ValueError, match="zero_stage"):
        M.estimate(cfg, 256, 1024, 8, 1, 8, zero_stage=4)
    with pytest.raises(ValueError, match="contradicts"):
        M.estimate(cfg, 256, 1024, 8, 1, 8, zero_stage=0, distributed_optimizer=True)


def test_estimate_says_which_figures_it_used():
    est = M.estimate(CFG, 32, 512, 1, 1)
    used = " ".join(est.figures_used)
    assert "mamf-a100-sxm4-80gb-bf16" in used and "bekman2024mle" in used
    assert "dao2022flashattention" in used and "DGX A100" in used
    assert "system efficiency" not in used
    assert "system efficiency" in " ".join(M.estimate(CFG, 32, 512, 1, 1, calibrated=True).figures_used)


def test_flash_attention_option_reads_the_published_timing():
    eff = M.flash_attention_efficiency()
    assert 0.2 < eff < 1.0  # below the GEMM ceiling, from dao2022flashattention Figure 2
    cfg = M.table1_config("1.7B")
    plain = M.estimate(cfg, 32, 512, 1, 1, 16)
    flash = M.estimate(cfg, 32, 512, 1, 1, 16, flash_attention=True)
    assert flash.breakdown["attention"] < plain.breakdown["attention"]
    assert flash.breakdown["layer GEMMs"] == plain.breakdown["layer GEMMs"]
    assert "flashattention-fig2-gpt2-medium-flash" in " ".join(flash.figures_used)
    with pytest.raises(TypeError, match="flash_attention must be True or False"):
        M.estimate(cfg, 32, 512, 1, 1, 16, flash_attention="yes")


def test_search_layouts_passes_options_and_respects_kv_heads():
    from ampere import transformer

    shape = transformer.preset("llama2-70b")  # 8 KV heads: tensor sizes above 8 are refused
    found = M.search_layouts(shape, 64, 512, microbatches=(1,), max_interleave=1, recompute="selective",
                             top=None, sequence_parallel=True, flash_attention=True)
    assert found and all(e.layout.tensor <= 8 for e in found)
    assert all("flashattention-fig2-gpt2-medium-flash" in " ".join(e.figures_used) for e in found)
