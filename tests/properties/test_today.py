"""Properties of ampere.today: the planner and its networks, prices, the decision matrix and the chapter's checks.

Valid input gives a typed, finite answer within its documented bounds (a plan either fits, with the memory of
the layout it times, or says why not); invalid input is refused with ValueError/TypeError naming the field.
"""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import device, memory, megatron, specs, today

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, catalogue_names, covers,
                      finite_floats, not_lists, rejects, rejects_any)

GPUS = today.GPUS
TASKS = tuple(today.TASKS)
SIZES = ("1B", "3B", "7B", "13B")
A100 = "A100-SXM4-80GB"
LORA7 = today.Workload("7B", "lora")


def _not_none(strategy):
    return strategy.filter(lambda v: v is not None)


@covers(today.Workload, today.plan, today.GPUPlan)
@given(st.sampled_from(SIZES), st.sampled_from(TASKS), st.sampled_from(GPUS), st.integers(1, 8), st.booleans(),
       st.data())
def test_a_plan_fits_with_the_memory_it_times_or_says_why(size, task, gpu, max_cards, bridges, data):
    w = answers(today.Workload, size, task, max_cards=max_cards, nvlink_bridges=bridges, type_=today.Workload)
    p = answers(today.plan, w, data.draw(st.sampled_from([gpu, gpu.lower()])), type_=today.GPUPlan, within_s=30)
    assert p.capacity_bytes == memory.usable_bytes(gpu)
    if p.feasible:
        assert 1 <= p.cards <= max_cards and 0 < p.memory_bytes <= p.capacity_bytes and p.tokens_per_s > 0
        if w.is_training:
            assert p.memory_bytes == p.memory_breakdown["total"] and isinstance(p.estimate, megatron.Estimate)
            assert 0 < p.mfu < 1 and p.layout
    else:
        assert p.reason and p.cost_per_hour() is None
    rejects_any(data, today.Workload, {"model": size, "task": task}, {
        "task": bad_names(TASKS), "weights": bad_names(today.INFERENCE_FORMATS),
        "precision": bad_names(today.TRAIN_PRECISIONS), "recompute": bad_names(memory.RECOMPUTE),
        "context": bad_ints(0, 1_048_576), "batch": bad_ints(1, 1_000_000), "seq_len": bad_ints(1, 1_048_576),
        "micro_batch": bad_ints(1, 65_536), "max_cards": _not_none(bad_ints(1, 100_000)),
        "nvlink_bridges": bad_booleans(), "hcas_per_node": _not_none(bad_ints(0, 64)),
        "lora_rank": _not_none(bad_ints(1, 65_536)), "mfu": _not_none(bad_floats(0.0, 1.0)),
        "tokens": _not_none(bad_floats(0.0))})
    rejects(today.Workload, "model", data.draw(st.sampled_from(["NoSuchModel", "", None, ["7B"]])), task)
    rejects(today.plan, "workload", {"model": size}, gpu)
    rejects(today.plan, "gpu", w, data.draw(_not_none(bad_names(specs.names()))))
    rejects(today.plan, "reserve_fraction", w, gpu, reserve_fraction=data.draw(_not_none(bad_floats(0.0, 0.99, strict=False))))
    rejects(today.plan, "price", w, gpu, price=data.draw(st.sampled_from([(2, 1), (-1, 1), (1, 2, 3), "cheap", 3])))
    valid = dict(gpu=p.gpu, workload=w, feasible=p.feasible, cards=p.cards, memory_bytes=p.memory_bytes,
                 capacity_bytes=p.capacity_bytes, tokens_per_s=p.tokens_per_s, bound=p.bound,
                 step_time_s=p.step_time_s, run_time_s=p.run_time_s, price=p.price)
    rejects_any(data, today.GPUPlan, valid, {
        "gpu": _not_none(bad_names(specs.names())), "workload": st.sampled_from([None, 1, "7B"]),
        "feasible": bad_booleans(), "memory_bytes": st.sampled_from([-1.0, math.nan, math.inf, "1", None, True]),
        "capacity_bytes": _not_none(bad_floats(0.0, 1e15)), "price": st.sampled_from([1, "x", (1, 2)])})


@covers(today.plans, today.best, today.decision_table)
@given(st.sampled_from(SIZES), st.sampled_from(("inference", "lora", "qlora")), st.data())
def test_plans_best_and_the_decision_table(size, task, data):
    w = today.Workload(size, task, max_cards=4)
    ps = answers(today.plans, w, type_=list, within_s=30)
    assert [p.gpu for p in ps] == list(GPUS)
    at = data.draw(st.sampled_from(("low", "mid", "high")))
    b = answers(today.best, ps, at)
    assert b is None or (b.feasible and b.price is not None and b.gpu in today.SEED_GPUS)
    assert answers(today.best, [], at) is None
    rows = answers(today.decision_table, {size: w}, type_=list)
    assert rows[0]["workload"] == size and set(today.SEED_GPUS) <= set(rows[0])
    rejects(today.plans, "gpus", w, data.draw(not_lists()))
    rejects(today.plans, "prices", w, prices=data.draw(st.sampled_from(["cheap", 3, {A100: 1.0}])))
    rejects(today.best, "at", ps, data.draw(_not_none(bad_names(("low", "mid", "high")))))
    rejects(today.best, "candidates", data.draw(st.sampled_from([None, 3, "plans"])))
    rejects(today.decision_table, "workloads", data.draw(st.sampled_from([None, [w], "w", {}])))
    rejects(today.decision_table, "gpus", {size: w}, data.draw(not_lists()))


@covers(today.node_of, today.Network)
@given(st.sampled_from(GPUS + ("A100-PCIE-80GB",)), st.booleans(), st.one_of(st.none(), st.integers(0, 8)),
       st.integers(1, 8), st.data())
def test_every_card_has_a_node_and_collectives_are_timed_on_it(gpu, bridges, hcas, cards, data):
    node = answers(today.node_of, gpu, bridges, hcas)
    assert node.gpus_per_node == today.CARDS_PER_NODE and node.nvlink_domain in (1, 2, 8)
    assert hcas is None or node.hcas_per_node == hcas
    net = answers(today.Network, node, cards, 1, "link", type_=today.Network)
    t = answers(net.all_reduce_time, data.draw(finite_floats(0, 1e10)))
    assert t >= 0 and (cards > 1 or t == 0)
    assert answers(net.collective_time, "all_gather", 1e6) >= 0
    assert isinstance(answers(net.megatron_node), type(node)) and net.describe()
    rejects(today.node_of, "gpu", data.draw(_not_none(bad_names(specs.names()))))
    rejects(today.node_of, "nvlink_bridges", gpu, data.draw(bad_booleans()))
    rejects(today.node_of, "hcas_per_node", gpu, hcas_per_node=data.draw(_not_none(bad_ints(0, 64))))
    rejects(today.Network, "node", None, cards, 1, "link")
    rejects(today.Network, "cards", node, data.draw(bad_ints(1, 100_000)), 1, "link")
    rejects(net.all_reduce_time, "size_bytes", data.draw(st.sampled_from([-1.0, math.nan, math.inf, "1", None, True])))
    rejects(net.collective_time, "op", data.draw(_not_none(bad_names(("all_reduce", "all_gather",
                                                                       "reduce_scatter", "broadcast", "reduce")))), 1.0)


@covers(today.PriceRange, today.price_table, today.hours_for_budget, today.seed_prices,
        today.hyperscaler_prices_2023, today.price_rows)
@given(finite_floats(0.01, 100), finite_floats(0.01, 100), finite_floats(1, 1e6), st.data())
def test_prices_are_ranges_and_budgets_buy_hours(a, b, budget, data):
    lo, hi = sorted((a, b))
    p = answers(today.PriceRange, lo, hi, "user input", "now", type_=today.PriceRange)
    assert lo <= answers(p.at, data.draw(st.sampled_from(("low", "mid", "high")))) <= hi and p.label()
    table = answers(today.price_table, {A100: (lo, hi)}, type_=dict)
    assert table[A100].low == lo and set(today.seed_prices()) == set(today.SEED_GPUS)
    h = answers(today.hours_for_budget, budget, A100, table, type_=tuple)
    assert h[0] <= h[1] and h[1] == budget / lo
    assert answers(today.hyperscaler_prices_2023, type_=dict) and answers(today.price_rows, type_=list)
    rejects_any(data, today.PriceRange, {"low": lo, "high": hi, "source": "s", "as_of": "now"}, {
        "low": bad_floats(0.0, 1e5), "high": bad_floats(0.0, 1e5), "source": st.sampled_from(["", 1, None]),
        "as_of": st.sampled_from(["", 1, None])}, field=lambda a: a if a in ("source", "as_of") else "price")
    rejects(p.at, "where", data.draw(_not_none(bad_names(("low", "mid", "high")))))
    rejects(today.hours_for_budget, "budget_dollars", data.draw(_not_none(bad_floats(0.0, 1e10))), A100)
    rejects(today.hours_for_budget, "prices", budget, A100, data.draw(st.sampled_from(["seed", 3, [1]])))
    rejects(today.price_table, "overrides", {"B200": (1, 2)})
    rejects(today.price_table, "base", base=data.draw(st.sampled_from(["seed", 3, {A100: 1.0}])))


@covers(today.spec_rows, today.seed_spec_check, today.shape_of, today.a800_spec, today.gradient_allreduce_time)
@given(st.lists(catalogue_names(), min_size=1, max_size=4), st.sampled_from(SIZES), finite_floats(1e6, 1e12),
       st.integers(2, 8), st.data())
def test_specs_shapes_and_the_a800(gpus, size, params, n, data):
    rows = answers(today.spec_rows, gpus, type_=list)
    assert [r["GPU"] for r in rows] == [specs.get(g).name for g in gpus]
    assert all(r["verdict"] for r in answers(today.seed_spec_check, type_=list))
    assert answers(today.shape_of, size).params > 0
    a800 = answers(today.a800_spec, data.draw(st.sampled_from(["A100-SXM4-80GB", "a100-sxm4-40gb"])))
    assert a800.nvlink_bytes_per_s < specs.get(A100).nvlink_bytes_per_s
    t800, t100 = (answers(today.gradient_allreduce_time, params, g, n) for g in (a800, A100))
    assert t800 > t100 > 0
    rejects(today.spec_rows, "gpus", data.draw(not_lists()))
    rejects(today.shape_of, "model", data.draw(st.sampled_from(["NoSuchModel", 7, None])))
    rejects(today.a800_spec, "base", data.draw(_not_none(bad_names(specs.names()))))
    rejects(today.a800_spec, "base", "RTX-A6000")
    rejects_any(data, today.gradient_allreduce_time, {"params": params, "gpu": A100, "gpus": n}, {
        "params": bad_floats(0.0, 1e15), "gpus": bad_ints(1, 100_000), "bytes_per_grad": bad_floats(0.0, 16)})


@covers(today.decode_run_bound)
@given(st.sampled_from(("llama2-7b", "13B")), st.sampled_from((A100, "H100-SXM5-80GB", "RTX-A6000")),
       st.integers(1, 64), st.integers(0, 512), st.integers(1, 16), st.sampled_from((1, 2, 4)), st.data())
def test_the_decoding_bound_is_positive_and_falls_with_context(model, gpu, batch, prompt, out, tp, data):
    kw = dict(batch=batch, prompt_tokens=prompt, output_tokens=out, tensor_parallel=tp)
    b = answers(today.decode_run_bound, model, gpu, **kw, within_s=30)
    assert b > 0 and b >= answers(today.decode_run_bound, model, gpu, **{**kw, "prompt_tokens": prompt + 4096})
    rejects_any(data, today.decode_run_bound, {"model": model, "gpu": gpu, **kw}, {
        "batch": bad_ints(1, 1_000_000), "prompt_tokens": bad_ints(0, 1_048_576),
        "output_tokens": bad_ints(1, 65_536), "tensor_parallel": bad_ints(1, 1024),
        "weights": bad_names(memory.FORMAT_BITS)})


@covers(today.decision_matrix_check, today.seed_decision_matrix, today.fp64_per_dollar, today.break_even_price,
        today.break_even_rows)
@settings(max_examples=6)  # each example replans every row of the matrix
@given(finite_floats(0.01, 5), st.data())
def test_the_decision_matrix_is_defended_cell_by_cell(a6000_low, data):
    prices = today.price_table({"RTX-A6000": (a6000_low, a6000_low * 2)})
    rows = answers(today.decision_matrix_check, prices, type_=list)
    assert len(rows) == len(answers(today.seed_decision_matrix, type_=list)) == len(today.MATRIX_RUNS)
    for r in rows:
        assert r["verdict"] in ("agrees", "depends on prices", "disagrees", "outside the model") and r["evidence"]
        assert all(rule in today.RULES for rule in r["rules"].split(", ") if rule != "-")
    per = answers(today.fp64_per_dollar, prices=prices, at=data.draw(st.sampled_from(("low", "high"))), type_=dict)
    assert all(v > 0 for v in per.values()) and set(per) == set(today.SEED_GPUS)
    be = answers(today.break_even_price, LORA7, "H100-SXM5-80GB")
    assert be is not None and 0 < be[0] < be[1]
    assert answers(today.break_even_rows, [("LoRA 7B", LORA7, None, "H100-SXM5-80GB")], type_=list)
    rejects(today.decision_matrix_check, "prices", data.draw(st.sampled_from([3, "seed", {A100: 1}])))
    rejects(today.decision_matrix_check, "gpus", gpus=data.draw(not_lists()))
    rejects(today.fp64_per_dollar, "at", at=data.draw(_not_none(bad_names(("low", "mid", "high")))))
    rejects(today.break_even_price, "reference_gpu", LORA7, "H100-SXM5-80GB",
            reference_gpu=data.draw(_not_none(bad_names(specs.names()))))
    rejects(today.break_even_price, "reference_workload", LORA7, "H100-SXM5-80GB", reference_workload=3)
    rejects(today.break_even_rows, "moves", data.draw(st.sampled_from([None, 3, "moves", [("x", 1)]])))


@covers(today.adapter_step, today.AdapterStep, today.qlora_ratio)
@given(st.sampled_from(("lora", "qlora")), st.integers(1, 256), st.data())
def test_adapter_steps_are_derived_from_one_estimate(method, rank, data):
    est = today.plan(LORA7, A100).estimate
    step = answers(today.adapter_step, est, method, rank, type_=today.AdapterStep)
    assert 0 < step.time_s and step.memory_bytes == step.memory["total"] > 0
    lora = today.adapter_step(est, "lora", rank)
    assert step.time_s >= lora.time_s and (method == "lora" or step.memory_bytes < lora.memory_bytes)
    assert answers(today.qlora_ratio) > 1
    rejects(today.adapter_step, "est", None, method, rank)
    rejects(today.adapter_step, "method", est, data.draw(_not_none(bad_names(("lora", "qlora")))), rank)
    rejects(today.adapter_step, "lora_rank", est, method, data.draw(bad_ints(1, 65_536)))
    rejects(today.qlora_ratio, "pair", data.draw(st.sampled_from([("a", "b"), None, "x"])))
    valid = dict(method=method, time_s=step.time_s, breakdown=step.breakdown, memory=step.memory,
                 adapter_params=step.adapter_params)
    rejects_any(data, today.AdapterStep, valid, {
        "method": bad_names(("lora", "qlora")), "time_s": bad_floats(0.0, 1e9),
        "memory": st.sampled_from([{}, None, {"x": 1.0}, {"total": -1.0}]), "adapter_params": bad_floats(0.0, 1e15)})


@covers(today.pcie_server_check, today.ServerCheck)
@given(st.integers(2, 8), st.data())
def test_the_pcie_server_agrees_with_the_nvlink_chapter(gpus, data):
    c = answers(today.pcie_server_check, gpus, type_=today.ServerCheck, within_s=30)
    assert abs(c.planner_efficiency - c.chapter_efficiency) < 0.01 and c.sxm_efficiency >= c.planner_efficiency
    assert math.isclose(c.planner_all_reduce_s, c.chapter_all_reduce_s, rel_tol=0.01) and len(c.rows()) == 4
    rejects(today.pcie_server_check, "gpus", data.draw(bad_ints(2, 8)))
    valid = {f: getattr(c, f) for f in ("box", "gpus", "params", "compute_s", "planner_all_reduce_s",
                                        "chapter_all_reduce_s", "planner_efficiency", "chapter_efficiency",
                                        "chapter_headline_efficiency", "sxm_efficiency")}
    rejects_any(data, today.ServerCheck, valid, {
        "gpus": bad_ints(2, 8), "compute_s": bad_floats(0.0, 1e6), "planner_efficiency": bad_floats(0.0, 1.0),
        "box": st.sampled_from(["", None, 3])})


@covers(today.training_run_checks, today.TrainingRunCheck, today.training_points, today.show_training_runs,
        today.decode_points, today.show_decode, today.decode_gap_rows, today.finetune_checks, today.claims_rows)
@settings(max_examples=3)  # the same published runs each time; the draws only vary the invalid inputs
@given(st.data())
def test_the_chapter_checks_answer_and_refuse_what_is_not_a_device(data):
    runs = answers(today.training_run_checks, type_=list, within_s=60)  # the first call plans 2048-GPU runs
    assert runs and all(abs(r.error) < 0.25 for r in runs)
    r = runs[0]
    assert answers(r.gpu_hours, r.published_tokens_per_s_per_gpu) > 0 and r.row()
    rejects(r.gpu_hours, "tokens_per_s_per_gpu", data.draw(bad_floats(0.0, 1e9)))
    rejects(today.TrainingRunCheck, "gpus", r.record, r.model, data.draw(bad_ints(1, 1_000_000)), r.tokens,
            r.published_tokens_per_s_per_gpu, r.predicted_tokens_per_s_per_gpu, r.baseline_tokens_per_s_per_gpu,
            r.layout)
    assert answers(today.training_points, type_=list) and answers(today.decode_points, type_=list, within_s=60)
    assert all(int(g["published / that bound"].rstrip("%")) < 100 for g in answers(today.decode_gap_rows, type_=list))
    assert answers(today.finetune_checks, type_=list, within_s=60)
    assert answers(today.claims_rows, type_=list, within_s=60)
    info = device.probe(force="cpu")
    import matplotlib.pyplot as plt

    for show in (today.show_training_runs, today.show_decode):
        assert answers(show, info, within_s=30) is None
        plt.close("all")
        rejects(show, "info", data.draw(st.sampled_from([3, "cpu", object()])))
