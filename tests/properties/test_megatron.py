"""Properties of ampere.megatron (and its lab, ampere.megatron_lab): sizing, layouts, memory, schedules, the
throughput model, the search, the lessons, the validation tables and the lab's helpers. Valid inputs give
finite, typed answers within their bounds; bad inputs are refused with the argument named, before any
process starts or any tensor is allocated."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import device, megatron as M
from ampere.megatron import lab
from ampere.transformer import TransformerShape

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings, covers, finite_floats,
                      not_integers, not_lists, rejects, rejects_any)

#: a small GPT: every layout of it is cheap to estimate
CFG = M.GPTConfig(4, 256, 8, 512, 128)
NOT_SHAPES = st.one_of(st.none(), st.integers(), st.text(max_size=4), st.just({"layers": 4}))


@st.composite
def layouts(draw):
    """A valid (gpus, batch, tensor, pipeline, microbatch, interleave) of CFG."""
    t = draw(st.sampled_from([1, 2, 4, 8]))
    p = draw(st.sampled_from([1, 2, 4]))
    d = draw(st.sampled_from([1, 2, 4]))
    b = draw(st.sampled_from([1, 2, 4]))
    v = draw(st.sampled_from([1, 2])) if p in (1, 2) else 1
    v = 1 if p == 1 else v
    m = p * draw(st.integers(1, 4))
    return dict(gpus=t * p * d, batch=b * d * m, tensor=t, pipeline=p, microbatch=b, interleave=v)


@covers(M.GPTConfig, M.params, M.flops_per_iteration, M.training_days, M.table1_config)
@given(st.integers(1, 96), st.sampled_from([64, 128, 256]), st.integers(1, 96), st.integers(1, 4096),
       st.sampled_from(M.RECOMPUTE), st.data())
def test_sizing(layers, head_dim, heads, batch, rc, data):
    cfg = answers(M.GPTConfig, layers, head_dim * heads, heads, type_=TransformerShape)
    n = answers(M.params, cfg, type_=float)
    assert n > 12 * layers * cfg.hidden ** 2
    hw = answers(M.flops_per_iteration, cfg, batch, rc, type_=float)
    model = M.flops_per_iteration(cfg, batch, rc, convention="model")
    causal = M.flops_per_iteration(cfg, batch, rc, convention="model-causal")
    assert causal < model <= hw
    days = answers(M.training_days, n, 3e11, 1024, 150.0, type_=float)
    assert math.isclose(days, 8 * 3e11 * n / (1024 * 150e12) / 86400)
    name = data.draw(st.sampled_from([r["name"] for r in M.TABLE1]))
    assert answers(M.table1_config, name, type_=TransformerShape).layers > 0
    rejects(M.GPTConfig, "layers", data.draw(bad_ints(1, 10_000)), 256, 8)
    rejects(M.GPTConfig, "glue", 4, 256, 8, glue=True)  # an unknown field is named
    rejects(M.params, "cfg", data.draw(NOT_SHAPES))
    rejects_any(data, M.flops_per_iteration, {"cfg": cfg, "batch": batch}, {
        "cfg": NOT_SHAPES, "batch": bad_ints(1, 100_000_000), "recompute": bad_names(M.RECOMPUTE).filter(
            lambda v: not isinstance(v, bool)), "convention": bad_names(M.FLOP_CONVENTIONS)})
    rejects_any(data, M.training_days, {"n_params": n, "tokens": 3e11, "gpus": 8, "tflops_per_gpu": 100.0}, {
        "n_params": st.one_of(bad_floats(0.0), st.just(1e17)), "tokens": st.one_of(bad_floats(0.0), st.just(1e19)),
        "gpus": bad_ints(1, 1_000_000), "tflops_per_gpu": bad_floats(0.0, 1e6)})
    rejects(M.table1_config, "row", data.draw(st.one_of(st.just("2T"), st.integers(), st.none(), st.just({"x": 1}))))


@covers(M.layout, M.Layout, M.params_per_gpu, M.memory_per_gpu, M.activation_bytes_per_layer)
@given(layouts(), st.sampled_from(M.RECOMPUTE), st.booleans(), st.booleans(), st.integers(0, 3), st.data())
def test_layouts_and_memory(lay, rc, sp, flash, zero, data):
    got = answers(M.layout, CFG, **lay, type_=M.Layout)
    assert got.gpus == got.tensor * got.pipeline * got.data and got.batch == got.microbatch * got.data * got.microbatches
    assert answers(got.stage_layers, CFG, type_=int) >= answers(got.chunk_layers, CFG, type_=int) >= 1
    fields = {f: getattr(got, f) for f in ("gpus", "batch", "tensor", "pipeline", "data", "microbatch",
                                            "interleave", "microbatches")}
    assert answers(M.Layout, type_=M.Layout, **fields) == got
    rejects_any(data, M.Layout, fields, {f: bad_ints(1, 1_000_000 if f != "interleave" else 64) for f in fields})
    rejects(M.Layout, "gpus", **{**fields, "gpus": fields["gpus"] + 1})
    per = answers(M.params_per_gpu, CFG, lay["tensor"], lay["pipeline"], type_=dict)
    assert per["max"] >= per["middle"] > 0
    mem = answers(M.memory_per_gpu, CFG, **lay, recompute=rc, sequence_parallel=sp, flash_attention=flash,
                  zero_stage=zero, type_=dict)
    assert mem["total"] > 0 and isinstance(mem["fits"], bool) and mem["zero_stage"] == zero
    act = answers(M.activation_bytes_per_layer, CFG, lay["tensor"], lay["microbatch"], rc, sp, flash, type_=float)
    assert act > 0
    rejects_any(data, M.layout, {"cfg": CFG, **lay}, {
        "cfg": NOT_SHAPES, "gpus": bad_ints(1, 1_000_000), "batch": bad_ints(1, 100_000_000),
        "tensor": st.one_of(bad_ints(1, 1_000_000), st.just(3)), "pipeline": st.one_of(bad_ints(1, 1_000_000),
                                                                                        st.just(5)),
        "microbatch": bad_ints(1, 100_000_000), "interleave": bad_ints(1, 64)})
    rejects_any(data, M.memory_per_gpu, {"cfg": CFG, **lay}, {
        "recompute": st.sampled_from(["partial", 1, None]), "sequence_parallel": bad_booleans(),
        "schedule": bad_names(("1f1b", "gpipe")), "gpu": bad_strings(), "zero_stage": bad_ints(0, 3).filter(
            lambda v: v is not None), "convention": bad_names(("paper", "megatron", "deepspeed")),
        "offload": bad_names(("none", "optimizer", "optimizer+params")), "flash_attention": bad_booleans(),
        "reserve_bytes": st.sampled_from([-1.0, math.nan, "1"])})
    rejects(M.params_per_gpu, "tensor", CFG, data.draw(bad_ints(1, 1_000_000)), 1)
    rejects(M.activation_bytes_per_layer, "microbatch", CFG, 1, data.draw(bad_ints(1, 100_000_000)))
    rejects(got.stage_layers, "cfg", data.draw(NOT_SHAPES))


@covers(M.schedule_ops, M.simulate_schedule, M.ScheduleResult, M.bubble_formula, M.plot_schedule)
@settings(max_examples=10)  # each example draws a figure
@given(st.sampled_from(M.SCHEDULES), st.integers(1, 6), st.integers(1, 4), st.integers(1, 3),
       finite_floats(0.1, 10), finite_floats(0, 1), st.data())
def test_schedules(kind, p, k, v, t_fwd, t_comm, data):
    import matplotlib.pyplot as plt

    v = v if kind == "interleaved" else 1
    m = p * k
    ops = answers(M.schedule_ops, kind, p, m, v, type_=list)
    assert len(ops) == p and all(len(o) == 2 * m * v for o in ops)
    res = answers(M.simulate_schedule, kind, p, m, v, t_fwd, 2 * t_fwd, t_comm, type_=M.ScheduleResult)
    assert res.makespan >= res.ideal > 0 and res.bubble_fraction >= 0
    assert answers(M.bubble_formula, p, m, v, type_=float) == (p - 1) / (v * m)
    fig, ax = answers(M.plot_schedule, res, type_=tuple)
    plt.close(fig)
    fields = {f: getattr(res, f) for f in ("kind", "pipeline", "microbatches", "interleave", "ops", "makespan",
                                            "ideal", "max_in_flight")}
    rejects_any(data, M.ScheduleResult, fields, {
        "kind": bad_names(M.SCHEDULES), "pipeline": bad_ints(1, 4096), "ops": st.sampled_from(["x", None, [1]]),
        "makespan": bad_floats(0.0).filter(lambda x: x != 1e12), "max_in_flight": st.sampled_from(["x", [-1.0]])})
    rejects_any(data, M.simulate_schedule, {"kind": kind, "pipeline": p, "microbatches": m, "interleave": v}, {
        "kind": bad_names(M.SCHEDULES), "pipeline": bad_ints(1, 4096), "microbatches": bad_ints(1, 1_000_000),
        "interleave": bad_ints(1, 64), "t_fwd": bad_floats(0.0).filter(lambda x: x != 1e12),
        "t_comm": bad_floats(0.0, strict=False).filter(lambda x: x not in (0, 1e12)),
        "stage_times": st.sampled_from(["ab", [(1.0,)], [(1.0, -1.0)] * p, [(1.0, 2.0)] * (p + 1)])})
    rejects(M.bubble_formula, "microbatches", p, data.draw(bad_ints(1, 1_000_000)))
    rejects(M.plot_schedule, "result", data.draw(st.one_of(st.none(), st.integers(), st.just({"ops": []}))))
    rejects(M.plot_schedule, "label_microbatches", res, label_microbatches=data.draw(bad_booleans()))


@covers(M.estimate, M.Estimate, M.search_layouts, M.software, M.Software)
@given(layouts(), st.sampled_from(M.RECOMPUTE), st.sampled_from(sorted(M.STACKS)), st.sampled_from(M.PRECISIONS),
       st.integers(0, 3), st.data())
def test_estimate_and_search(lay, rc, stack, precision, zero, data):
    sw = answers(M.software, stack, type_=M.Software)
    if lay["interleave"] > 1 and not sw.interleave:
        lay = {**lay, "interleave": 1}
    est = answers(M.estimate, CFG, **lay, recompute=rc, software=sw, precision=precision, zero_stage=zero,
                  type_=M.Estimate)
    assert math.isclose(sum(est.breakdown.values()), est.time_per_iteration_s, rel_tol=1e-9)
    assert 0 <= est.communication_share() <= 1 and est.mfu <= est.hfu + 1e-12
    assert isinstance(answers(est.throughput_text, type_=str), str) and answers(est.shares, type_=dict)
    fields = {f: getattr(est, f) for f in est.__dataclass_fields__}
    assert answers(M.Estimate, type_=M.Estimate, **fields) == est
    rejects_any(data, M.Estimate, fields, {
        "config": NOT_SHAPES, "layout": st.sampled_from([None, 1, "t8"]), "gpu": bad_strings(),
        "recompute": bad_names(M.RECOMPUTE), "time_per_iteration_s": bad_floats(0.0).filter(lambda x: x != 1e12),
        "breakdown": st.sampled_from([{}, None, {"layer GEMMs": 1.0}]), "fits_in_memory": bad_booleans(),
        "flop_convention": bad_names(M.FLOP_CONVENTIONS)})
    rejects_any(data, M.estimate, {"cfg": CFG, **lay}, {
        "cfg": NOT_SHAPES, "recompute": st.sampled_from(["partial", 1, None]), "gpu": bad_strings(),
        "calibrated": bad_booleans(), "software": st.sampled_from(["nemo", "", 3]),
        "sequence_parallel": bad_booleans(), "flash_attention": st.sampled_from(["yes", 1]),
        "precision": bad_names(M.PRECISIONS), "zero_stage": st.sampled_from([-1, 4, True, "1"]),
        "ddp": st.sampled_from(["apex", 1]), "network": st.sampled_from(["DGX A100", 8]),
        "reduce_bytes": st.sampled_from([3, "4", True]), "memory_convention": bad_names(("paper", "megatron",
                                                                                          "deepspeed")),
        "offload": st.sampled_from(["cpu", ["none"], 1]), "gemm_ceiling": st.sampled_from(["peak", None])})
    best = answers(M.search_layouts, CFG, 8, 16, top=3, microbatches=[1, 2], type_=list)
    assert len(best) <= 3 and all(isinstance(e, M.Estimate) for e in best)
    assert [e.tflops_per_gpu for e in best] == sorted((e.tflops_per_gpu for e in best), reverse=True)
    rejects_any(data, M.search_layouts, {"cfg": CFG, "gpus": 8, "batch": 16}, {
        "cfg": NOT_SHAPES, "gpus": bad_ints(1, 1_000_000), "batch": bad_ints(1, 100_000_000),
        "microbatches": st.one_of(not_lists(), st.just([]), st.just([0])), "max_interleave": bad_ints(1, 64),
        "top": bad_ints(1, 1000).filter(lambda v: v is not None), "include_infeasible": bad_booleans(),
        "calibrated": bad_booleans(), "memory_limit_bytes": st.sampled_from([0, -1.0, math.nan, "1"]),
        "recompute": st.sampled_from(["partial", None])})
    rejects(M.software, "stack", data.draw(st.sampled_from(["nemo", "", 3, 1.5])))
    fields = {f: getattr(sw, f) for f in ("name", "label", "interleave", "scatter_gather", "tp_overlap",
                                           "dp_overlap", "zero3_prefetch", "flash_attention", "fused_kernels")}
    assert answers(M.Software, type_=M.Software, **fields) == sw
    rejects_any(data, M.Software, fields, {
        "name": bad_strings(), "interleave": bad_booleans(), "zero3_prefetch": bad_names(M.ZERO3_PREFETCH),
        "sources": st.sampled_from([None, 1, {"colour": "x"}])})
    rejects(sw.differences, "other", data.draw(st.sampled_from([None, "fsdp", 1])))
    rejects(sw.with_, "prefetch", prefetch=True)


@covers(M.gemm_time, M.attention_core_roofline, M.overlapped, M.step_collectives, M.Input)
@given(st.integers(1, 1 << 14), st.integers(1, 1 << 14), st.integers(1, 1 << 14), st.integers(1, 16),
       finite_floats(0, 1), finite_floats(0, 1), st.data())
def test_hardware_pieces(m, n, k, batch, comm, compute, data):
    t = answers(M.gemm_time, m, n, k, batch, type_=float)
    assert t >= 2.0 * m * n * k * batch / 312e12
    core = answers(M.attention_core_roofline, "A100-SXM4-80GB", batch, 8, 64, 512, type_=dict)
    assert math.isclose(core["total"], core["fwd"] + core["bwd"])
    exposed = answers(M.overlapped, comm, compute, type_=float)
    assert 0 <= exposed <= comm + 1e-15 and M.overlapped(comm, compute, 1.0) == max(comm - compute, 0.0)
    rows = answers(M.step_collectives, 7e9, 64, batch, type_=list)
    assert {r["scheme"] for r in rows} == {"DDP (ZeRO-0)", "ZeRO-1", "ZeRO-2", "ZeRO-3 / FSDP"}
    some = M.INPUTS["hbm_fraction"]
    fields = {f: getattr(some, f) for f in ("name", "value", "unit", "source", "meaning")}
    assert answers(M.Input, type_=M.Input, **fields) == some
    rejects_any(data, M.Input, fields, {"name": bad_strings(), "value": st.sampled_from([math.nan, math.inf, "1",
                                                                                          None, True]),
                                        "unit": bad_strings(), "source": bad_strings(allow_empty=True),
                                        "meaning": bad_strings()})
    rejects_any(data, M.gemm_time, {"m": m, "n": n, "k": k}, {
        "m": bad_ints(1, 2**31 - 1), "batch": bad_ints(1, 2**31 - 1), "gpu": bad_strings(),
        "ceiling": bad_names(M.GEMM_CEILINGS)})
    rejects_any(data, M.attention_core_roofline, {"gpu": "A100-SXM4-80GB", "batch": 1, "heads": 8, "head_dim": 64,
                                                  "seq": 512}, {
        "batch": bad_ints(1, 2**31 - 1), "heads": bad_ints(1, 2**31 - 1), "seq": bad_ints(1, 2**31 - 1),
        "causal": bad_booleans(), "dropout": bad_booleans(), "gpu": bad_strings()})
    rejects_any(data, M.overlapped, {"comm_s": comm, "compute_s": compute}, {
        "comm_s": bad_floats(0.0, strict=False).filter(lambda x: x not in (0, 1e12)),
        "compute_s": bad_floats(0.0, strict=False).filter(lambda x: x not in (0, 1e12)),
        "slowdown": st.sampled_from([0.5, math.nan, "2", 1e7])})
    rejects_any(data, M.step_collectives, {"params_per_gpu": 7e9, "data_parallel": 64}, {
        "params_per_gpu": st.one_of(bad_floats(0.0), st.just(1e17)), "data_parallel": bad_ints(1, 1_000_000),
        "microbatches": bad_ints(1, 1_000_000), "grad_bytes": st.sampled_from([3, "2", True])})


@covers(M.tp_efficiency, M.overlap_effect, M.context_parallel, M.expert_parallel)
@given(st.sampled_from([1, 2, 4, 8]), st.booleans(), st.integers(1, 8), st.integers(1, 4), st.data())
def test_lessons(t, across, c, top_k, data):
    eff = answers(M.tp_efficiency, CFG, t, across_nodes=across, type_=dict)
    assert 0 < eff["efficiency"] <= 1.0 + 1e-9 and 0 <= eff["communication_share"] < 1
    rows = answers(M.overlap_effect, CFG, 16, 32, 2, 2, type_=list)
    assert [r["case"] for r in rows][0] == "no overlap" and rows[0]["time_s"] >= rows[-1]["time_s"] - 1e-12
    cp = answers(M.context_parallel, CFG, c, type_=dict)
    assert cp["exposed_s"] <= cp["ring_s"] + 1e-15
    ep = answers(M.expert_parallel, 4096, 1024, 8, top_k, 8, type_=dict)
    assert 0 <= ep["a2a_share"] < 1
    rejects_any(data, M.tp_efficiency, {"cfg": CFG, "tensor": t}, {
        "cfg": NOT_SHAPES, "tensor": st.one_of(bad_ints(1, 256), st.just(3)), "microbatch": bad_ints(1, 4096),
        "across_nodes": bad_booleans(), "sequence_parallel": bad_booleans(), "gpu": bad_strings()})
    rejects(M.overlap_effect, "stack", CFG, 16, 32, 2, 2, stack=data.draw(st.sampled_from(["nemo", None, 1])))
    rejects(M.overlap_effect, "gpus", CFG, data.draw(bad_ints(1, 1_000_000)), 32, 2, 2)
    rejects(M.context_parallel, "context", CFG, data.draw(bad_ints(1, 8)))
    rejects_any(data, M.expert_parallel, {"tokens": 4096, "hidden": 1024, "experts": 8, "top_k": top_k, "ep": 8}, {
        "tokens": bad_ints(1, 10**9), "hidden": bad_ints(1, 10**6), "experts": st.sampled_from([0, 6, True]),
        "top_k": st.sampled_from([0, 9, "1"]), "ep": bad_ints(1, 8), "ffn_hidden": st.sampled_from([0, -1, 2.5])})


@covers(M.table1_rows, M.table2_rows, M.table5_rows, M.runs_2022, M.speedup_2022, M.validation_groups,
        M.ValidationGroup, M.validate, M.claims, M.cross_check, M.peer_explanations, M.team_runs, M.team_rows,
        M.team_groups, M.TeamRun, M.TeamGroup, M.mosaicml_sweep)
@settings(max_examples=3)  # the tables are deterministic; the examples vary only the bad inputs
@given(st.data())
def test_validation_tables(data):
    for fn in (M.table1_rows, M.table5_rows, M.runs_2022, M.cross_check, M.peer_explanations, M.claims,
               M.team_rows, M.mosaicml_sweep):
        rows = answers(fn, type_=list, within_s=60.0)
        assert rows and all(isinstance(r, dict) for r in rows)
    assert len(answers(M.table2_rows, "interleaved", type_=list)) == len(M.TABLE2)
    rejects(M.table2_rows, "schedule", data.draw(bad_names(("default", "interleaved"))))
    speed = answers(M.speedup_2022, type_=dict)
    assert speed["published"] > 1 and speed["predicted"] > 1
    rejects(M.speedup_2022, "rows", data.draw(st.one_of(st.just("rows"), st.just([1]), st.just([{"recompute": "x"}]))))
    rejects(M.speedup_2022, "rows", [])
    groups = answers(M.validation_groups, type_=list, within_s=60.0)
    g = groups[0]
    fields = {f: getattr(g, f) for f in ("group", "source", "runs", "calibrated", "mean_abs_error", "max_abs_error")}
    assert answers(M.ValidationGroup, type_=M.ValidationGroup, **fields) == g
    rejects_any(data, M.ValidationGroup, fields, {
        "group": bad_strings(), "runs": bad_ints(1, 100_000), "calibrated": bad_booleans(),
        "mean_abs_error": st.sampled_from([-1.0, math.nan, "0.1", 10.0])})
    report, passed = answers(M.validate, type_=tuple, within_s=60.0)
    assert isinstance(report, str) and isinstance(passed, bool)
    runs = answers(M.team_runs, type_=list)
    run = runs[0]
    fields = {f: getattr(run, f) for f in run.__dataclass_fields__}
    assert answers(M.TeamRun, type_=M.TeamRun, **fields) == run
    rejects_any(data, M.TeamRun, fields, {
        "gpu": bad_strings(), "gpus": bad_ints(1, 1_000_000), "cfg": st.sampled_from([1, "x"]),
        "kwargs": st.sampled_from(["x", [1], None]), "software": st.sampled_from(["fsdp", None]),
        "published": bad_floats(0.0).filter(lambda x: x != 1e12), "scored": bad_booleans(),
        "record": st.sampled_from([None, {"id": "x"}])})
    teams = answers(M.team_groups, type_=list, within_s=60.0)
    assert teams[-1].team == "all scored runs"
    t = teams[-1]
    fields = {f: getattr(t, f) for f in ("team", "stack", "runs", "scored", "mean_abs_error", "max_abs_error")}
    assert answers(M.TeamGroup, type_=M.TeamGroup, **fields) == t
    rejects_any(data, M.TeamGroup, fields, {"team": bad_strings(), "runs": st.sampled_from([-1, True, "1", 1]),
                                            "scored": st.sampled_from([-1, 10**9]),
                                            "mean_abs_error": st.sampled_from([-1.0, math.nan, "x"])})
    rejects(M.team_groups, "rows", data.draw(st.one_of(st.just("rows"), st.just([1]), st.just([{"team": "x"}]))))


@covers(M.layer_gemm_shapes, M.measure_layer_gemms, M.layer_gemm_points, M.show_layer_gemms, M.bench_main)
@settings(max_examples=3)  # measures on the CPU and draws a figure
@given(st.sampled_from([1, 2, 4, 8]), st.integers(1, 4), st.data())
def test_layer_gemms(t, b, data):
    import matplotlib.pyplot as plt

    shapes = answers(M.layer_gemm_shapes, CFG, t, b, type_=list)
    assert len(shapes) == 6 and all(min(g["m"], g["n"], g["k"], g["batch"]) >= 1 for g in shapes)
    recs = answers(M.measure_layer_gemms, CFG, t, b, device="cpu", dtype="fp32", warmup_s=0.0, max_time_s=0.02,
                   info=device.probe(force="cpu"), type_=list, within_s=60.0)
    assert all(r["measured_s"] is None or r["measured_s"] > 0 for r in recs)
    points = answers(M.layer_gemm_points, None, type_=list)
    assert points
    answers(M.show_layer_gemms, None, type_=type(None))
    plt.close("all")
    rejects_any(data, M.layer_gemm_shapes, {"cfg": CFG, "tensor": t}, {
        "cfg": NOT_SHAPES, "tensor": st.one_of(bad_ints(1, 8), st.just(3)), "microbatch": bad_ints(1, 65_536)})
    rejects_any(data, M.measure_layer_gemms, {"cfg": CFG, "device": "cpu", "dtype": "fp32"}, {
        "dtype": bad_names(("bf16", "fp16", "fp32")), "warmup_s": st.sampled_from([-1.0, math.nan, 1e9]),
        "max_time_s": st.sampled_from([0, -1.0, 1e9]), "device": st.sampled_from(["", "gpu", 3]),
        "info": st.sampled_from([1, "cpu"])})
    rejects(M.measure_layer_gemms, "cfg", M.table1_config("1T"), device="cpu")  # sized before it is allocated
    rejects(M.layer_gemm_points, "info", data.draw(st.sampled_from([1, "cuda", object()])))
    rejects(M.bench_main, "argv", data.draw(st.sampled_from([1, "--quick", [1]])))


@covers(lab.LabConfig, lab.LabResult, lab.run_lab, lab.run_labs, lab.tp_bytes_formula, lab.pp_bytes_formula,
        lab.tolerances, lab.causal_attention)
@given(st.sampled_from([1, 2, 4]), st.sampled_from([1, 2]), st.integers(1, 100), st.data())
def test_the_lab_refuses_before_any_process(t, p, steps, data):
    import torch

    cfg = answers(lab.LabConfig, tensor=t, pipeline=p, steps=steps, type_=lab.LabConfig)
    assert cfg.world_size == t * p
    assert answers(lab.tp_bytes_formula, cfg, type_=float) >= 0 and answers(lab.pp_bytes_formula, cfg, 2,
                                                                            type_=int) > 0
    tol = answers(lab.tolerances, cfg, type_=dict)
    assert 0 < tol["logits"] < tol["grads"] <= tol["losses"]
    q = torch.randn(1, 2, 8, 4, generator=torch.Generator().manual_seed(0))
    out = answers(lab.causal_attention, q, q, q, type_=torch.Tensor)
    assert out.shape == q.shape
    rejects_any(data, lab.LabConfig, {}, {
        "tensor": bad_ints(1, 8), "pipeline": bad_ints(1, 8), "steps": bad_ints(1, 10_000),
        "lr": st.one_of(bad_floats(0.0, 10.0), st.just(11.0)),
        "seed": st.one_of(st.integers(max_value=-1), not_integers(), st.just(2**63)),
        "heads": st.just(3)})
    for fn in (lab.tp_bytes_formula, lab.pp_bytes_formula, lab.tolerances):
        rejects(fn, "cfg", data.draw(st.one_of(st.none(), st.integers(), st.just({"tensor": 2}))))
    rejects(lab.tp_bytes_formula, "element_bytes", cfg, data.draw(st.sampled_from([0, 3, True, "4"])))
    rejects(lab.tolerances, "eps", cfg, data.draw(st.sampled_from([0.0, -1.0, math.nan, 0.5, "1e-7"])))
    rejects(lab.causal_attention, "q", data.draw(st.sampled_from([None, [[1.0]], 1.0])), q, q)
    rejects(lab.causal_attention, "k", q, torch.zeros(1, 2, 7, 4), q)
    # refused before any process starts
    rejects(lab.run_lab, "cfg", data.draw(st.sampled_from([1, "cfg", {"tensor": 2}])))
    rejects(lab.run_lab, "lr", lr=data.draw(st.sampled_from([0.0, -1.0, math.nan, 100.0])))
    rejects(lab.run_labs, "cfgs", data.draw(st.one_of(st.just([]), st.just(cfg), st.just([cfg] * 17), st.just([1]))))
    result = answers(lab.LabResult, cfg, "gloo", 3.0, 3.0, 0.0, 0.0, 0.0, [3.0, 2.0], [3.0, 2.0], 0, 0.0, 0.0,
                     0.0, 1.0, 0.1, type_=lab.LabResult)
    assert isinstance(result.matches_single_process, bool) and isinstance(result.loss_decreased, bool)
    fields = {f: getattr(result, f) for f in result.__dataclass_fields__}
    rejects_any(data, lab.LabResult, fields, {
        "config": st.sampled_from([None, 1]), "backend": bad_names(("gloo", "nccl")),
        "max_abs_grad_diff": st.sampled_from([-1.0, math.nan, "0"]), "losses": st.sampled_from(["x", ["1"], None]),
        "tp_bytes_per_rank": st.sampled_from([-1, 2.5, True]), "notes": st.sampled_from(["x", [1]])})
