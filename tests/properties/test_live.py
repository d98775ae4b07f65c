"""Properties of ampere.live (the site's live calculators): for random valid inputs each calculator answers
exactly what its chapter's public call answers (or refuses with the model's own message), and an invalid
input is refused with ValueError/TypeError naming the field, in CPython as in the browser's JSON entry."""

import html
import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import live
from ampere.live import registry

from .harness import answers, bad_booleans, bad_floats, bad_ints, covers, rejects, rejects_any, within, words

GB = 1e9


def valid_value(f: live.Field) -> st.SearchStrategy:
    """Values a field accepts (its kind, bounds and choices)."""
    if f.kind == "int":
        return st.integers(int(f.minimum), int(f.maximum))
    if f.kind == "float":
        return st.floats(f.minimum, f.maximum, allow_nan=False, allow_infinity=False)
    if f.kind == "choice":
        return st.sampled_from(f.choices)
    if f.kind == "bool":
        return st.booleans()
    return st.text(max_size=20)


def invalid_value(f: live.Field) -> st.SearchStrategy:
    """Values a field refuses: out of bounds or of the wrong type, another name, a bool for a number ..."""
    if f.kind == "int":
        return bad_ints(int(f.minimum), int(f.maximum))
    if f.kind == "float":
        return bad_floats(f.minimum, f.maximum, strict=False)
    if f.kind == "choice":
        return st.one_of(st.text(max_size=8), st.integers(), st.none(), st.booleans(), st.just(["x"])).filter(
            lambda v: not any(type(v) is type(c) and v == c for c in f.choices))
    if f.kind == "bool":
        return bad_booleans()
    return st.one_of(st.integers(), st.none(), st.just(["x"]), st.just("x" * (registry.MAX_TEXT + 1)))


def inputs(name: str, **fixed: st.SearchStrategy) -> st.SearchStrategy[dict]:
    calc = live.get(name)
    return st.fixed_dictionaries({f.name: fixed.get(f.name, valid_value(f)) for f in calc.fields})


def same_answer_or_refusal(name, values, expected):
    """``expected(values)`` computes, through the chapter's public call, a few facts the answer must show;
    the calculator must show them, or refuse with the model's own exception and message."""
    try:
        want = expected(**values)
    except (ValueError, TypeError) as exc:
        try:
            with within(20.0):
                live.run(name, values)
        except type(exc) as got:
            assert str(got) == str(exc), (got, exc)
            refused = json.loads(live.run_json(name, json.dumps(values)))
            assert refused["error"] == str(exc)
            return None
        raise AssertionError(f"{name}{values}: the model refuses ({exc}) but the calculator answers")
    answer = answers(live.run, name, values, type_=live.Answer, within_s=20.0)
    want(answer)
    assert json.loads(live.run_json(name, json.dumps(values)))["html"] == answer.html()
    return answer


# ---------------------------------------------------------------------------------------------------------
# each calculator against its chapter's public call
# ---------------------------------------------------------------------------------------------------------

def _hbm_expected(model, task, weights, context, batch, seq_len, data_parallel, zero_stage, gpu):
    from ampere import memory

    if task == "inference":
        est = memory.model_memory(model, mode="inference", weights=weights, context=context, batch=batch)
    else:
        finetune = {"full training": "full", "LoRA": "lora", "QLoRA": "qlora"}[task]
        est = memory.model_memory(model, mode="training", finetune=finetune, weights=weights, seq_len=seq_len,
                                  data_parallel=data_parallel, zero_stage=zero_stage)

    def check(answer):
        assert answer.summary[0].startswith(f"{model}, {task}: {est.total_bytes / GB:,.1f} GB")
        assert answer.tables[0].rows[-1] == {"component": "total", "GB": f"{est.total_bytes / GB:,.1f}"}
        assert [r["GB"] for r in answer.tables[0].rows[:-1]] == [f"{v / GB:,.1f}" for v in est.breakdown.values()]
        assert ("it fits" in answer.summary[1]) == est.fits(gpu) and answer.notes == est.assumptions
    return check


def _megatron_expected(model, gpus, batch, tokens_b, calibrated, top):
    from ampere import megatron

    cfg = (megatron.GPTConfig(layers=96, hidden=12288, heads=96) if model == "GPT-3 175B"
           else megatron.table1_config(model))
    best = megatron.search_layouts(cfg, gpus, batch, top=top, calibrated=calibrated)

    def check(answer):
        if not best:
            assert "no layout" in answer.summary[0] and not answer.tables
            return
        rows = answer.tables[0].rows
        assert [r["TFLOP/s per GPU"] for r in rows] == [f"{e.tflops_per_gpu:.1f}" for e in best]
        assert [(r["t"], r["p"], r["d"], r["b"], r["v"]) for r in rows] == [
            (e.layout.tensor, e.layout.pipeline, e.layout.data, e.layout.microbatch, e.layout.interleave) for e in best]
        days = megatron.training_days(megatron.params(cfg), tokens_b * 1e9, gpus, best[0].tflops_per_gpu)
        assert f"take {days:,.1f} days" in answer.summary[1]
    return check


def _mig_expected(gpu, instances):
    from ampere import mig

    names = [n.strip() for n in instances.replace(";", ",").split(",") if n.strip()]
    if not names:
        raise ValueError("instances is empty: list profiles such as 3g.40gb, 2g.20gb")
    layout = mig.place(gpu, names)
    memory_map, compute_map = mig.layout_maps(gpu, layout)

    def check(answer):
        assert answer.summary[0].startswith(f"{mig.format_layout(layout)} on the {gpu}")
        assert f"Memory slices {memory_map}, compute slices {compute_map}" in answer.summary[1]
        assert [(r["profile"], r["start slot"]) for r in answer.tables[0].rows] == list(layout)
    return check


def _superpod_expected(nodes, gpu, switch_ports):
    from ampere import cluster

    pod = cluster.superpod(nodes, gpu=gpu, switch_ports=switch_ports)

    def check(answer):
        assert answer.summary[0].startswith(f"{pod.nodes:,} DGX A100 = {pod.gpus:,} GPUs")
        assert f"{pod.switches} {switch_ports}-port HDR switches" in answer.summary[0]
        assert f"{pod.fabric.cables_total:,} cables" in answer.summary[0]
        assert f"maximum power {pod.power_w / 1e3:,.0f} kW" in answer.summary[1]
    return check


def _today_expected(model, task, weights, context, batch, tokens_b, max_cards):
    from ampere import today

    w = today.Workload(model, task, weights=weights, context=context, batch=batch,
                       tokens=tokens_b * 1e9 if task != "inference" else None, max_cards=max_cards)
    plans = today.plans(w)

    def check(answer):
        assert [dict(r) for r in answer.tables[0].rows] == [p.row() for p in plans]
        assert f"fits on {sum(p.feasible for p in plans)} of {len(plans)} GPUs" in answer.summary[0]
    return check


@covers(live.run, live.run_json, live.get)
@given(st.data())
def test_every_calculator_answers_what_its_chapter_answers(data):
    from ampere import mig

    name = data.draw(st.sampled_from(["hbm-fits", "mig-planner", "superpod-sizer", "today-plan"]))
    if name == "mig-planner":
        gpu = data.draw(st.sampled_from(live.get(name).fields[0].choices))
        profiles = st.lists(st.sampled_from(sorted({p.name for p in mig.profiles(gpu)})), min_size=1, max_size=4)
        values = {"gpu": gpu, "instances": data.draw(profiles.map(", ".join))}
    else:
        values = data.draw(inputs(name))
    expected = {"hbm-fits": _hbm_expected, "mig-planner": _mig_expected, "superpod-sizer": _superpod_expected,
                "today-plan": _today_expected}[name]
    same_answer_or_refusal(name, values, expected)
    assert answers(live.get, name, type_=live.Calculator).name == name
    rejects(live.get, "name", data.draw(st.one_of(st.just("NoSuchCalculator"), st.integers(), st.none())))
    rejects(live.run, "name", data.draw(st.one_of(st.just("NoSuchCalculator"), st.integers())))
    rejects(live.run_json, "name", data.draw(st.one_of(st.just("NoSuchCalculator"), st.integers())), "{}")
    rejects(live.run_json, "values_json", name, data.draw(st.one_of(st.integers(), st.none(), st.just({}))))
    for text in ("{not json", "[1, 2]", '"x"'):
        assert "error" in json.loads(live.run_json(name, text))


@covers(live.names)
@settings(max_examples=4)  # each example searches every layout of a GPT on up to 3,072 GPUs
@given(st.data())
def test_the_layout_search_answers_what_search_layouts_answers(data):
    values = data.draw(inputs("megatron-layouts", gpus=st.one_of(st.integers(1, 512), st.sampled_from([1024, 3072])),
                              batch=st.integers(1, 4096)))
    with within(60.0):
        same_answer_or_refusal("megatron-layouts", values, _megatron_expected)
    assert answers(live.names, type_=tuple) == ("hbm-fits", "megatron-layouts", "mig-planner", "superpod-sizer",
                                                "today-plan")


@covers(live.describe)
@given(st.sampled_from(live.names()), st.data())
def test_an_invalid_input_is_refused_naming_its_field(name, data):
    calc = live.get(name)
    f = data.draw(st.sampled_from(calc.fields))
    bad = data.draw(invalid_value(f), label=f"invalid {f.name}")
    rejects(live.run, f.name, name, **{f.name: bad})
    try:
        text = json.dumps({f.name: bad})
    except (TypeError, ValueError):
        text = None
    if text is not None and not (isinstance(bad, float) and not math.isfinite(bad)):
        err = json.loads(live.run_json(name, text))["error"]
        assert f.name in err, err
    rejects(live.run, "colour", name, colour="red")  # unknown inputs are listed with the allowed ones
    described = answers(live.describe, [name], type_=list)
    assert [d["name"] for d in described] == [name] and json.loads(json.dumps(described)) == described
    assert [f["name"] for f in described[0]["fields"]] == [f.name for f in calc.fields]
    rejects(live.describe, "selected", data.draw(st.one_of(st.just(name), st.just(["NoSuch"]), st.integers(),
                                                           st.just([]))))


# ---------------------------------------------------------------------------------------------------------
# the registry's building blocks
# ---------------------------------------------------------------------------------------------------------

@covers(live.Field)
@given(st.integers(-1000, 1000), st.integers(0, 1000), st.data())
def test_fields_parse_their_kind_within_their_bounds(lo, span, data):
    f = answers(live.Field, "n", "n", "int", lo, minimum=lo, maximum=lo + span, type_=live.Field)
    v = data.draw(st.integers(lo, lo + span))
    assert f.parse(v) == v and json.loads(json.dumps(f.to_dict()))["maximum"] == lo + span
    rejects(f.parse, "n", data.draw(bad_ints(lo, lo + span)))
    ok = {"name": "n", "label": "n", "kind": "int", "default": lo, "minimum": lo, "maximum": lo + span}
    rejects_any(data, live.Field, ok, {
        "name": st.one_of(st.integers(), st.just(""), st.just("bad name!")), "label": st.one_of(st.integers(),
                                                                                                st.just("")),
        "kind": st.sampled_from(["date", "", None, 3]), "default": st.one_of(st.just(lo - 1), st.just("1")),
        "minimum": st.one_of(st.just(math.nan), st.just("0"), st.just(lo + span + 1)),
        "maximum": st.one_of(st.just(math.inf), st.just("9"), st.just(lo - 1)),
        "unit": st.one_of(st.integers(), st.none()), "help": st.one_of(st.integers(), st.none()),
        "choices": st.one_of(st.integers(), st.just("abc")),
        "only_for": st.one_of(st.just("task"), st.just(("task",)), st.integers())})
    choice = answers(live.Field, "c", "c", "choice", 1, (1, 2, 3), type_=live.Field)
    rejects(choice.parse, "c", data.draw(st.one_of(st.just("1"), st.just(True), st.just(4))))
    rejects(live.Field, "choices", "c", "c", "choice", 1, ())


@covers(live.Table, live.Answer)
@given(st.lists(words(), min_size=1, max_size=4, unique=True), st.lists(words(), min_size=1, max_size=3), st.data())
def test_answers_render_every_cell_escaped(columns, summary, data):
    rows = data.draw(st.lists(st.fixed_dictionaries({c: st.one_of(words(), st.integers(), st.booleans(), st.none())
                                                     for c in columns}), max_size=4))
    table = answers(live.Table, tuple(columns), tuple(rows), "<caption>", type_=live.Table)
    answer = answers(live.Answer, tuple(summary), (table,), ("a <note>",), type_=live.Answer)
    page = answer.html()
    assert "<note>" not in page and "&lt;note&gt;" in page and "<caption>&lt;caption&gt;</caption>" in page
    assert page.count("<tr>") == len(rows) + 1 and html.escape(summary[0]) in page
    assert answer.markdown().startswith(summary[0])
    rejects_any(data, live.Table, {"columns": tuple(columns), "rows": tuple(rows)}, {
        "columns": st.one_of(st.just(()), st.just("abc"), st.just((1,)), st.none()),
        "rows": st.one_of(st.just("abc"), st.just((1,)), st.integers()), "caption": st.one_of(st.integers(),
                                                                                              st.none())})
    rejects_any(data, live.Answer, {"summary": tuple(summary)}, {
        "summary": st.one_of(st.just(()), st.just("one sentence"), st.just((1,)), st.none()),
        "tables": st.one_of(st.just(("x",)), st.just("x"), st.integers()),
        "notes": st.one_of(st.just("a note"), st.just((None,)), st.integers())})


@covers(live.Calculator, live.register)
@given(st.data())
def test_calculators_are_built_from_fields_and_registered_by_name(data):
    field = live.Field("n", "n", "int", 1, minimum=1, maximum=9)
    compute = lambda n: live.Answer((f"n is {n}",))  # noqa: E731
    ok = {"name": "t-calc", "title": "t", "call": "ampere.x.y", "chapter": "hbm", "section": "s",
          "description": "d", "fields": (field,), "compute": compute}
    calc = answers(live.Calculator, **ok, type_=live.Calculator)
    n = data.draw(st.integers(1, 9))
    assert calc.run(n=n).summary == (f"n is {n}",) and calc.values({"n": n}) == {"n": n}
    rejects(calc.run, "values", data.draw(st.one_of(st.integers(), st.just("n=3"), st.just([1]))))
    rejects_any(data, live.Calculator, ok, {
        "name": st.one_of(st.integers(), st.just(""), st.just("a b")), "title": st.one_of(st.integers(), st.none()),
        "fields": st.one_of(st.just(()), st.just((field, field)), st.just(("n",)), st.just("n")),
        "compute": st.one_of(st.none(), st.integers())})
    bad = live.Calculator(**{**ok, "compute": lambda n: "not an answer"})
    rejects(bad.run, "t-calc")
    deco = answers(live.register, "t-property-calc", type_=object)
    try:
        assert deco(lambda: calc) is not None and "t-property-calc" in live.names()
        rejects(live.register("t-property-calc"), "already registered", lambda: calc)
    finally:
        registry._FACTORIES.pop("t-property-calc", None)
        registry._BUILT.pop("t-property-calc", None)
    rejects(live.register, "name", data.draw(st.one_of(st.integers(), st.just(""), st.just("bad name!"),
                                                       st.none(), st.just(["hbm-fits"]), st.just("x" * 65))))
