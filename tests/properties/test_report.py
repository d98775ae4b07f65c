"""Properties of ampere.report (the reference check): every public function and class answers valid input
with a typed, finite answer within its bounds, and refuses invalid input naming the argument, at once."""

import dataclasses
import io
import math
import statistics
import tempfile
import types
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import device, report, results, specs
from ampere.report import config_facts

from .harness import (answers, bad_booleans, bad_floats, bad_ints, bad_names, bad_strings, catalogue_names, covers,
                      finite_floats, not_lists, rejects, rejects_any, within, words)

CPU = device.DeviceInfo("cpu", "a CPU")
H200 = device.DeviceInfo(backend="cuda", name="NVIDIA H200", compute_capability=(9, 0), spec_name="H200-SXM-141GB",
                         gpu_count=1, tf32=True, bf16_tensor=True, fp8_tensor=True, int8_tensor=True,
                         sparse_2to4=True, mig_capable=True, memory_bytes=150_000_000_000, l2_bytes=60 * 2**20,
                         torch_version="2.13.0", driver_version="580.1", power_limit_w=700.0)
KEYS = ["matmul/bf16/n8192", "matmul/fp16/n4096", "hbm/copy", report.allreduce_key(8, 4 * 2**30)]
NOT_A_LIST_OF_MAPPINGS = st.one_of(not_lists(), st.just([1]), st.just(["x"]), st.just([{"value": 1.0}]),
                                   st.just([{"key": "k", "value": float("nan")}]))


def figures(recorded=False):
    base = {"key": st.sampled_from(KEYS), "value": st.floats(0.1, 5e3), "label": words(), "unit": st.just("TFLOP/s"),
            "model": st.one_of(st.none(), st.floats(1.0, 5e3)), "probe": st.just("matmul")}
    if recorded:
        base.update(gpu=st.sampled_from(["H200-SXM-141GB", "A100-SXM4-80GB"]), provenance=words())
    return st.lists(st.fixed_dictionaries(base), max_size=6)


def _result(values=(("matmul/bf16/n8192", 700.0),), info=H200):
    recs = [{"probe": "matmul", "key": k, "label": k, "value": v, "unit": "TFLOP/s", "model": 989.4} for k, v in values]
    return results.make_result("report", info, {"quick": True}, recs, [], created_utc="2026-11-30T10:00:00Z")


# ---------------------------------------------------------------------------------------------------------
# probes and extraction
# ---------------------------------------------------------------------------------------------------------

@covers(report.Probe, report.probe_names, report.select_probes, report.plan)
@given(st.lists(st.sampled_from(report.probe_names()), min_size=1, unique=True), st.data())
def test_probes_are_selected_by_name_and_planned_for_a_device(only, data):
    names = answers(report.probe_names, type_=list)
    chosen = answers(report.select_probes, only, type_=list)
    assert [p.name for p in chosen] == [n for n in names if n in only]
    skipped = answers(report.select_probes, skip=only, type_=list)
    assert not {p.name for p in skipped} & set(only)
    info = data.draw(st.sampled_from([CPU, H200]))
    rows = answers(report.plan, info, chosen, type_=list)
    assert [r["probe"] for r in rows] == [p.name for p in chosen]
    assert {r["status"] for r in rows} <= {"run", "not supported", "not available"}
    assert info.is_gpu or all(r["status"] != "run" for r in rows)
    bad_list = st.one_of(st.text(min_size=1, max_size=6), st.integers(), st.just(["NoSuchProbe"]), st.just([3]))
    rejects(report.select_probes, "only", data.draw(st.one_of(bad_list, st.just([]))))
    rejects(report.select_probes, "skip", skip=data.draw(bad_list))
    rejects(report.plan, "info", data.draw(st.one_of(st.none(), st.integers(), st.text(max_size=3))), chosen)
    rejects(report.plan, "probes", info, data.draw(st.one_of(st.integers(), st.just("matmul"), st.just([1]))))
    ok = {"name": "p", "title": "t", "needs": ("ampere.specs:get",), "supported": lambda i: None,
          "run": lambda ctx: [], "estimate_s": lambda q: 1.0}
    assert answers(report.Probe, **ok, type_=report.Probe).availability() is None
    rejects_any(data, report.Probe, ok, {
        "name": bad_strings(), "title": bad_strings(), "needs": st.one_of(st.just("ampere.specs"), st.integers(),
                                                                           st.just(["no module!"]), st.just([1])),
        "supported": st.one_of(st.none(), st.integers()), "run": st.one_of(st.none(), st.text(max_size=2)),
        "estimate_s": st.just(12.0)})


@covers(report.figures_from_result, report.recorded_figures, report.load_references)
@given(st.lists(st.tuples(st.sampled_from(KEYS[:3]), st.floats(1.0, 2e3)), min_size=1, max_size=4), st.data())
def test_figures_come_from_results_and_references_from_folders(values, data):
    res = _result(values)
    figs = answers(report.figures_from_result, res, type_=list)
    assert [(f["key"], f["value"]) for f in figs] == list(values)
    rec = answers(report.recorded_figures, [res, _result(values, info=CPU)], type_=list)
    assert len(rec) == len(values) and {r["gpu"] for r in rec} == {"H200-SXM-141GB"}  # CPU results never count
    with tempfile.TemporaryDirectory() as tmp:
        results.save(res, Path(tmp) / "ref.json")
        refs = answers(report.load_references, tmp, bundled=False, type_=list)
        assert [r["_file"] for r in refs] == ["ref.json"]
        rejects(report.load_references, "folder", Path(tmp) / "missing")
    bad_result = st.one_of(st.integers(), st.none(), st.just({}), st.just({"benchmark": "x"}), st.text(max_size=3))
    rejects(report.figures_from_result, "result", data.draw(bad_result))
    rejects(report.recorded_figures, "results_list", data.draw(st.one_of(bad_result, st.just([1]))))
    rejects(report.load_references, "bundled", bundled=data.draw(bad_booleans()))
    rejects(report.load_references, "folder", data.draw(st.one_of(st.integers(), st.just(""), st.just(["x"]))))


@covers(report.allreduce_sizes, report.allreduce_key)
@given(st.one_of(st.none(), st.floats(0, 2.0**50)), st.integers(1, 1_000_000), st.integers(1, 2**39), st.data())
def test_allreduce_sizes_and_keys(memory, gpus, size, data):
    sizes = answers(report.allreduce_sizes, memory, type_=list)
    assert sizes == sorted(sizes) and all(s in report.ALLREDUCE_SIZES or s == 2**30 for s in sizes)
    assert sizes == [2**30] or all(4 * s <= memory for s in sizes)
    assert answers(report.allreduce_key, gpus, size, type_=str) == f"allreduce/n{gpus}/{size}"
    rejects(report.allreduce_sizes, "memory_bytes", data.draw(st.one_of(
        st.sampled_from([-1.0, math.nan, math.inf, "1", True, [1]]),
        st.floats(min_value=2.0**50, exclude_min=True, allow_infinity=False))))
    rejects_any(data, report.allreduce_key, {"gpus": gpus, "size_bytes": size},
                {"gpus": bad_ints(1, 1_000_000), "size_bytes": bad_ints(1, 2**39)})


# ---------------------------------------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------------------------------------

@covers(report.compare, report.summary_rows, report.recorded_rows, report.model_rows, report.config_differences)
@given(figures(), figures(recorded=True), st.floats(0.01, 0.99), catalogue_names(), st.data())
def test_compare_flags_only_below_the_threshold_of_the_same_gpu(figs, recorded, threshold, gpu, data):
    rows = answers(report.compare, figs, "H200-SXM-141GB", recorded, threshold, type_=list)
    assert len(rows) == len(figs)
    for fig, row in zip(figs, rows):
        same = [r["value"] for r in recorded if r["key"] == fig["key"] and r["gpu"] == "H200-SXM-141GB"]
        if same:
            assert row["reference"] == statistics.median(same)
            assert row["flag"] == (fig["value"] < (1 - threshold) * row["reference"])
        else:
            assert row["reference"] is None and not row["flag"] and row["status"] == "no reference"
    printed = answers(report.summary_rows, rows, type_=list)
    assert all(isinstance(v, str) for r in printed for v in r.values())
    assert len(answers(report.recorded_rows, recorded, type_=list)) == len(recorded)
    assert answers(report.model_rows, gpu, type_=list)[0]["figure"].startswith("FP64")
    mine = H200.to_dict()
    other = _result(info=dataclasses.replace(H200, power_limit_w=500.0))
    diffs = answers(report.config_differences, mine, [other], type_=list)
    assert "power limit (W)" in [d["field"] for d in diffs]
    rejects_any(data, report.compare, {"figures": figs, "gpu": "H200-SXM-141GB", "recorded": recorded}, {
        "figures": NOT_A_LIST_OF_MAPPINGS, "recorded": NOT_A_LIST_OF_MAPPINGS, "gpu": bad_strings(),
        "threshold": st.one_of(bad_floats(0.0, 1.0), st.just(1.0))})
    rejects(report.summary_rows, "comparisons", data.draw(NOT_A_LIST_OF_MAPPINGS))
    rejects(report.recorded_rows, "recorded", data.draw(NOT_A_LIST_OF_MAPPINGS))
    rejects(report.model_rows, "gpu", data.draw(bad_names(specs.names())))
    rejects(report.config_differences, "device", data.draw(st.one_of(st.integers(), st.none(), st.just([]))), [])
    rejects(report.config_differences, "references", mine, data.draw(st.one_of(st.just([{}]), st.integers(),
                                                                              st.text(min_size=1, max_size=3))))


# ---------------------------------------------------------------------------------------------------------
# figures (matplotlib: few examples)
# ---------------------------------------------------------------------------------------------------------

@covers(report.draw_comparison, report.draw_model, report.draw_recorded, report.comparison_figure,
        report.model_figure, report.recorded_figure, report.show_references, report.show_cases, report.draw_findings)
@settings(max_examples=4)
@given(figures(), figures(recorded=True), st.lists(catalogue_names(), min_size=1, max_size=3), st.data())
def test_figures_draw_valid_rows_and_refuse_others(figs, recorded, gpus, data):
    import matplotlib.pyplot as plt

    rows = report.compare(figs, "H200-SXM-141GB", recorded)
    fig, axes = plt.subplots(1, 2)
    try:
        assert answers(report.draw_comparison, axes[0], rows, "t", type_=type(None)) is None
        assert answers(report.draw_model, axes, gpus, type_=type(None)) is None
        assert answers(report.draw_recorded, axes[1], recorded, type_=type(None)) is None
        checks = report.judge_all(report.example_facts(["acs", "governor"]), "A100-SXM4-80GB")
        assert answers(report.draw_findings, axes[0], report.findings(checks), checks, type_=type(None)) is None
        for f in (answers(report.comparison_figure, rows, "t", type_=object), answers(report.model_figure, gpus),
                  answers(report.recorded_figure, recorded)):
            assert f.axes
        with within(20.0):
            report.show_cases()
            report.show_references(["A100-SXM4-80GB"])
        bad_ax = data.draw(st.one_of(st.none(), st.integers(), st.text(max_size=2)))
        rejects(report.draw_comparison, "ax", bad_ax, rows)
        rejects(report.draw_comparison, "comparisons", axes[0], data.draw(NOT_A_LIST_OF_MAPPINGS))
        rejects(report.draw_model, "axes", data.draw(st.one_of(st.none(), st.just([axes[0]]), st.integers())), gpus)
        rejects(report.draw_model, "gpus", axes, data.draw(st.one_of(st.just("A100-SXM4-80GB"), st.just([]),
                                                                      st.just(["NoSuchGPU"]))))
        rejects(report.draw_recorded, "recorded", axes[1], data.draw(NOT_A_LIST_OF_MAPPINGS))
        rejects(report.draw_findings, "ranked", axes[0], data.draw(NOT_A_LIST_OF_MAPPINGS), checks)
        rejects(report.draw_findings, "rows", axes[0], report.findings(checks), data.draw(NOT_A_LIST_OF_MAPPINGS))
        rejects(report.comparison_figure, "title", rows, data.draw(st.one_of(st.integers(), st.none())))
        rejects(report.model_figure, "gpus", data.draw(st.one_of(st.just("H100-SXM5-80GB"), st.integers())))
        rejects(report.recorded_figure, "recorded", data.draw(NOT_A_LIST_OF_MAPPINGS))
        rejects(report.show_references, "gpus", data.draw(st.one_of(st.just([]), st.just("A100-SXM4-80GB"),
                                                                    st.just(["T4"]), st.just(["NoSuchGPU"]))))
        rejects(report.show_cases, "rows", data.draw(st.one_of(st.just([]), st.integers(), st.just([{}]))))
    finally:
        plt.close("all")


# ---------------------------------------------------------------------------------------------------------
# the run, its output and its progress
# ---------------------------------------------------------------------------------------------------------

@covers(report.run, report.summary_text, report.render_html, report.mig_scale)
@settings(max_examples=3)
@given(st.booleans(), st.data())
def test_a_model_only_run_writes_its_set_and_refuses_bad_settings_before_measuring(quick, data):
    with tempfile.TemporaryDirectory() as tmp:
        out = answers(report.run, Path(tmp) / "r", quick=quick, info=CPU, references=[], stream=io.StringIO(),
                      images=False, within_s=30.0)
        assert sorted(p.name for p in out.json_path.parent.iterdir()) == sorted(report.REPORT_FILES)
        text = answers(report.summary_text, out.result, out.comparisons, out.checks, out.findings, type_=str)
        assert text == out.text_path.read_text(encoding="utf-8")
        page = answers(report.render_html, out.result, out.comparisons, out.plan, [], images=False, type_=str)
        assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
        figs = [{"probe": "matmul", "key": "matmul/bf16/n8192", "value": 100.0, "model": 312.0}]
        a100 = dataclasses.replace(H200, spec_name="A100-SXM4-80GB", mig_instance="3g.40gb")
        scaled, note = answers(report.mig_scale, figs, a100, type_=tuple)
        assert scaled[0]["model"] == 312.0 * 42 / 108 and "42 of 108" in note
        valid = {"out": Path(tmp) / "again", "info": CPU, "references": [], "stream": io.StringIO(), "images": False}
        rejects_any(data, report.run, valid, {
            "out": st.one_of(st.integers(), st.just(""), st.just(["x"])), "quick": bad_booleans(),
            "images": bad_booleans(), "info": st.one_of(st.integers(), st.just("cpu")),
            "references": st.one_of(st.integers(), st.just("x"), st.just([{}])),
            "stream": st.one_of(st.integers(), st.just("x")), "record": st.one_of(st.integers(), st.just("")),
            "time_budget_s": bad_floats(0.0, report.runner.MAX_TIME_BUDGET_S),
            "only": st.one_of(st.just([]), st.just("matmul"), st.just(["NoSuchProbe"])),
            "facts": st.one_of(st.integers(), st.just([1]))}, within_s=10.0)
        rejects(report.summary_text, "result", data.draw(st.one_of(st.integers(), st.just({}))), [], [], [])
        rejects(report.summary_text, "width", out.result, [], [], [], width=data.draw(bad_ints(40, 400)))
        rejects(report.render_html, "result", data.draw(st.one_of(st.none(), st.just({}))), [], [], [])
        rejects(report.render_html, "images", out.result, [], [], [], images=data.draw(bad_booleans()))
        rejects(report.mig_scale, "figures", data.draw(NOT_A_LIST_OF_MAPPINGS), a100)
        rejects(report.mig_scale, "info", figs, data.draw(st.one_of(st.none(), st.integers())))


@covers(report.main)
@settings(max_examples=3)
@given(st.sampled_from([["--list"], ["--quick", "--only", "matmul"]]), st.data())
def test_the_command_exits_0_or_2_and_never_raises(argv, data):
    with tempfile.TemporaryDirectory() as tmp:
        code = answers(report.main, [*argv, "--out", str(Path(tmp) / "r")], type_=int, within_s=30.0)
        assert code == 0
        bad = data.draw(st.sampled_from([["--only", "NoSuchProbe"], ["--time-budget", "inf"], ["--bogus"]]))
        assert answers(report.main, [*bad, "--out", str(Path(tmp) / "s")], type_=int) == 2
    rejects(report.main, "argv", data.draw(st.one_of(st.text(min_size=1, max_size=5), st.integers(),
                                                     st.just([1]))))


@covers(report.check_output_folder, report.write_text_atomic, report.write_report_set)
@given(st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=200), st.data())
def test_the_report_set_is_written_whole_or_refused(text, data):
    with tempfile.TemporaryDirectory() as tmp:
        folder = answers(report.check_output_folder, Path(tmp) / "out", type_=Path)
        paths = answers(report.write_report_set, folder, {"report.txt": text, "report.json": "{}"}, type_=dict)
        assert paths["report.txt"].read_text(encoding="utf-8") == text
        assert answers(report.write_text_atomic, Path(tmp) / "t.txt", text, type_=Path).read_text() == text
        (Path(tmp) / "foreign").mkdir()
        (Path(tmp) / "foreign" / "notes.md").write_text("mine")
        rejects(report.check_output_folder, "foreign", Path(tmp) / "foreign")
        bad_path = data.draw(st.one_of(st.integers(), st.none(), st.just(""), st.just(["x"])))
        rejects(report.check_output_folder, "out", bad_path)
        rejects(report.write_text_atomic, "path", bad_path, "t")
        rejects(report.write_text_atomic, "text", Path(tmp) / "t.txt", data.draw(bad_strings(allow_empty=True)))
        rejects(report.write_report_set, "folder", bad_path, {"report.txt": ""})
        rejects(report.write_report_set, "files", folder, data.draw(st.one_of(
            st.just({}), st.just({"evil.sh": "x"}), st.just({"report.txt": 1}), st.integers(), st.just(["x"]))))


@covers(report.Progress)
@given(st.integers(1, 1000), st.integers(4, 200), st.lists(st.integers(0, 3), max_size=8), st.data())
def test_progress_bar_lines(total, width, steps, data):
    stream = io.StringIO()
    bar = answers(report.Progress, total, stream, width, type_=report.Progress)
    for i, s in enumerate(steps):
        bar.update(f"step {i}", advance=min(s, total))
    bar.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == len(steps) + 1 and lines[-1].startswith("[" + "#" * width + "]")
    assert answers(bar.line, "x", type_=str).endswith("x")
    rejects_any(data, report.Progress, {"total": total, "stream": stream}, {
        "total": bad_ints(1, 1_000_000), "width": bad_ints(4, 200), "stream": st.one_of(st.integers(), st.just("x"))})
    rejects(bar.update, "advance", "x", advance=data.draw(bad_ints(0, total)))
    rejects(bar.update, "text", data.draw(st.one_of(st.integers(), st.none())))
    rejects(bar.line, "text", data.draw(st.one_of(st.integers(), st.none())))
    rejects(bar.close, "text", data.draw(st.one_of(st.integers(), st.just(["x"]))))


# ---------------------------------------------------------------------------------------------------------
# claims, references
# ---------------------------------------------------------------------------------------------------------

@covers(report.variation_rows, report.gap_cost, report.claims_rows, report.case_rows)
@given(st.integers(1, 10_000_000), st.floats(0, 0.999), st.floats(0.01, 10_000), st.floats(0.1, 876_000), st.data())
def test_the_cost_of_a_gap_and_the_chapter_tables(gpus, gap, price, hours, data):
    cost = answers(report.gap_cost, gpus, gap, price, hours, type_=dict)
    assert math.isclose(cost["gpu_hours_lost"], gpus * hours * gap, rel_tol=1e-12)
    assert math.isclose(cost["dollars"], cost["gpu_hours_lost"] * price, rel_tol=1e-12)
    rows = answers(report.variation_rows, type_=list)
    assert all(0 < r["ratio"] <= 1 for r in rows)
    short = answers(report.variation_rows, True, type_=list)
    assert [r["ratio"] for r in short] == [f"{r['ratio']:.3f}" for r in rows]
    cases = answers(report.case_rows, type_=list)
    assert all(0 < c["lost"] < 1 and c["GB/s wrong"] < c["GB/s right"] for c in cases)
    claims = answers(report.claims_rows, type_=list)
    assert all(set(c) == {"claim", "source", "verdict", "evidence"} for c in claims)
    rejects_any(data, report.gap_cost, {"gpus": gpus, "gap": gap, "price_per_gpu_hour": price}, {
        "gpus": bad_ints(1, 10_000_000), "gap": st.one_of(bad_floats(None, None), st.just(-0.1), st.just(1.0)),
        "price_per_gpu_hour": bad_floats(0.0, 10_000.0), "hours": bad_floats(0.0, 876_000.0)})
    rejects(report.variation_rows, "short", data.draw(bad_booleans()))


@covers(report.Reference, report.reference_table, report.reference_rows, report.figure_unit, report.training_rows,
        report.published_figures, report.key_label, report.key_model, report.reference_points,
        report.allreduce_points, report.unsized_allreduce)
@given(st.lists(st.sampled_from(report.REFERENCE_GPUS), min_size=1, max_size=3, unique=True), st.data())
def test_references_of_each_gpu(gpus, data):
    benchmarks = data.draw(st.lists(st.sampled_from(["matmul", "stream", "all-reduce"]), min_size=1, unique=True))
    refs = answers(report.reference_table, gpus, benchmarks, type_=list)
    assert all(r.gpu in gpus and r.benchmark in benchmarks and min(r.values) <= r.median <= max(r.values)
               for r in refs)
    assert len(answers(report.reference_rows, refs, type_=list)) == len(refs)
    training = answers(report.training_rows, gpus, type_=list)
    assert all(r["GPU"] in gpus for r in training)
    figs = answers(report.published_figures, gpus, type_=list)
    assert all(f["gpu"] in gpus and math.isfinite(f["value"]) for f in figs)
    for f in figs:
        label = answers(report.key_label, f["key"], type_=str)
        model, what = answers(report.key_model, f["key"], f["gpu"], type_=tuple)
        assert label and (model is None or model > 0)
    points = answers(report.reference_points, gpus, type_=list)
    assert all(p.gpu in gpus for p in points)
    rows = answers(report.unsized_allreduce, gpus, type_=list)
    assert all(r["GPU"] in gpus for r in rows)
    ar = [r for r in results.records(benchmark="all-reduce", kind="published")]
    assert all(isinstance(answers(report.allreduce_points, r, type_=list), list) for r in ar[:5])
    assert answers(report.figure_unit, "bf16_tflop_per_s", type_=tuple) == ("TFLOP/s", 1.0)
    assert report.figure_unit("no_unit_here") == ("", 1.0) and report.key_label("odd/key") == "odd/key"
    ref = answers(report.Reference, "q", "A100-SXM4-80GB", "GB/s", (1.0, 3.0), ("a", "b"), type_=report.Reference)
    assert ref.median == 2.0 and ref.spread == 1.0
    rejects_any(data, report.Reference, {"quantity": "q", "gpu": "g", "unit": "u", "values": (1.0,),
                                         "sources": ("a",)}, {
        "quantity": bad_strings(), "gpu": bad_strings(), "unit": st.one_of(st.integers(), st.none()),
        "values": st.one_of(not_lists(), st.just(()), st.just((math.nan,)), st.just(("1",))),
        "sources": st.one_of(st.just("a"), st.just(()), st.just(("a", "b")), st.just((1,))),
        "labels": st.one_of(st.just("a"), st.just(("a", "b")), st.just((None,)))})
    bad_gpus = st.one_of(st.text(min_size=1, max_size=5), st.integers(), st.just([1]))
    rejects(report.reference_table, "gpus", data.draw(bad_gpus))
    rejects(report.reference_table, "benchmarks", gpus, data.draw(st.one_of(st.just("matmul"), st.just(["NoSuch"]),
                                                                            st.just([]))))
    rejects(report.reference_rows, "refs", data.draw(st.one_of(st.just([1]), st.integers(), st.just("x"))))
    rejects(report.training_rows, "gpus", data.draw(bad_gpus))
    rejects(report.published_figures, "gpus", data.draw(bad_gpus))
    rejects(report.unsized_allreduce, "gpus", data.draw(bad_gpus))
    rejects(report.reference_points, "gpus", data.draw(st.one_of(bad_gpus, st.just(["NoSuchGPU"]), st.just([]))))
    rejects(report.reference_points, "recorded", gpus, data.draw(NOT_A_LIST_OF_MAPPINGS.filter(lambda v: v is not None)))
    rejects(report.figure_unit, "name", data.draw(bad_strings()))
    rejects(report.key_label, "key", data.draw(bad_strings()))
    rejects(report.key_model, "key", data.draw(bad_strings()), "A100-SXM4-80GB")
    rejects(report.key_model, "gpu", "hbm/copy", data.draw(bad_strings()))
    rejects(report.allreduce_points, "rec", data.draw(st.one_of(st.none(), st.just({}), st.integers())))


# ---------------------------------------------------------------------------------------------------------
# configuration checks
# ---------------------------------------------------------------------------------------------------------

FAULT_LISTS = st.lists(st.sampled_from(sorted(report.FAULTS)), max_size=4, unique=True)


@covers(report.example_facts, report.judge_all, report.findings, report.check_rows, report.check_names,
        report.catalogue_rows, report.ConfigCheck)
@given(FAULT_LISTS, st.sampled_from(["A100-SXM4-80GB", "H100-SXM5-80GB", "A100-SXM4-40GB"]), st.booleans(),
       st.data())
def test_every_fault_is_found_and_ranked(faults, gpu, wide, data):
    facts = answers(report.example_facts, faults, type_=dict)
    checks = answers(report.judge_all, facts, gpu, type_=list)
    assert [c["name"] for c in checks] == answers(report.check_names, type_=list)
    ranked = answers(report.findings, checks, type_=list)
    assert [f["rank"] for f in ranked] == list(range(1, len(ranked) + 1))
    assert len(ranked) >= len(set(faults) - {"pcie-x8"})  # one finding per fault, the ECC warning of the capture
    sized = [f for f in ranked if f["expected loss"] != "unknown"]
    assert ranked[:len(sized)] == sized  # sized findings first
    rows = answers(report.check_rows, checks, wide, type_=list)
    assert len(rows) == len(checks) and ("fix" in rows[0]) == wide
    assert len(answers(report.catalogue_rows, type_=list)) == len(report.CHECKS)
    assert [r["check"] for r in report.catalogue_rows(prescreen=True)] == report.check_names()
    c = report.CHECKS[0]
    again = answers(report.ConfigCheck, c.name, c.title, c.what, c.how, c.expected, c.cost, c.fix, c.judge,
                    type_=report.ConfigCheck)
    assert again == c or again.prescreen != c.prescreen
    rejects(report.example_facts, "faults", data.draw(st.one_of(st.just("acs"), st.just(["NoSuchFault"]),
                                                                st.integers())))
    rejects(report.judge_all, "facts", data.draw(st.one_of(st.just([1]), st.none(), st.text(max_size=3))))
    rejects(report.judge_all, "spec", facts, data.draw(st.one_of(st.just("NoSuchGPU"), st.integers())))
    rejects(report.judge_all, "shares", facts, gpu, data.draw(st.one_of(st.integers(), st.just({"network": 2.0}))))
    rejects(report.findings, "rows", data.draw(st.one_of(NOT_A_LIST_OF_MAPPINGS, st.just([{"name": "x",
                                                                                          "status": "bad"}]))))
    rejects(report.check_rows, "rows", data.draw(NOT_A_LIST_OF_MAPPINGS))
    rejects(report.check_rows, "wide", checks, data.draw(bad_booleans()))
    rejects(report.catalogue_rows, "prescreen", data.draw(bad_booleans()))
    ok = {f: getattr(c, f) for f in ("name", "title", "what", "how", "expected", "cost", "fix", "judge")}
    rejects_any(data, report.ConfigCheck, ok, {
        "name": bad_strings(), "fix": bad_strings(), "judge": st.one_of(st.none(), st.integers()),
        "prescreen": st.one_of(st.integers(), st.none())})


@covers(report.step_shares, report.throughput_loss, report.share_rows, report.Verdict)
@given(catalogue_names(), st.sampled_from(["compute", "nvlink", "network", "host", "startup"]),
       st.tuples(st.floats(0, 0.99), st.floats(0, 0.99)).map(sorted), st.data())
def test_a_resource_loss_becomes_a_step_loss_through_its_share(gpu, resource, loss, data):
    shares = answers(report.step_shares, gpu, type_=dict)
    assert math.isclose(shares["compute"] + shares["nvlink"] + shares["network"], 1.0)
    assert all(0 <= shares[k] <= 1 for k in ("compute", "nvlink", "network")) and shares["host"] is None
    v = answers(report.Verdict, "warn", "x", resource=resource, loss=tuple(loss), type_=report.Verdict)
    out = answers(report.throughput_loss, v, shares, type_=(list, type(None)))
    if resource == "host":
        assert out is None
    else:
        assert 0 <= out[0] <= out[1] <= loss[1] + 1e-12  # the step never loses more than the resource
    assert [r["GPU"] for r in answers(report.share_rows, [gpu], type_=list)] == [specs.get(gpu).name]
    rejects(report.step_shares, "spec", data.draw(bad_names(specs.names()).filter(lambda v: v is not None)))
    rejects(report.step_shares, "network", gpu, data.draw(st.one_of(st.just("DGX A100"), st.integers())))
    rejects(report.throughput_loss, "v", data.draw(st.one_of(st.none(), st.text(max_size=3))), shares)
    rejects(report.throughput_loss, "shares", v, data.draw(st.one_of(st.integers(), st.just({"compute": -1}))))
    rejects(report.share_rows, "gpus", data.draw(st.one_of(st.just("A100-SXM4-80GB"), st.just(["NoSuchGPU"]),
                                                           st.just([]), st.integers())))
    rejects_any(data, report.Verdict, {"status": "warn", "observed": "x", "resource": "network", "loss": (0.1, 0.2)},
                {"status": bad_names(("fail", "warn", "info", "ok", "n/a")), "observed": st.one_of(st.integers(),
                                                                                                 st.none()),
                 "resource": st.sampled_from(["gpu", "NoSuchName", " ", None, 1, "Network"]),
                 "loss": st.one_of(st.just((0.5, 0.1)), st.just((-0.1, 0.2)), st.just((0.1,)), st.just("0.1")),
                 "sources": st.one_of(st.just("nccl412"), st.just((1,))), "at_least": bad_booleans()})


@covers(report.read_facts)
@settings(max_examples=10)
@given(st.dictionaries(st.sampled_from(["NCCL_P2P_DISABLE", "NCCL_ALGO", "HOME"]), st.just("1")), st.data())
def test_facts_are_read_from_a_given_machine_and_never_raise_for_what_it_lacks(env, data):
    with tempfile.TemporaryDirectory() as tmp:
        facts = answers(report.read_facts, CPU, tmp, env, lambda argv: None, None, [0], type_=dict)
        assert facts["nccl_env"] == {k: v for k, v in env.items() if k.startswith("NCCL_")}
        assert facts["cpu_governors"] is None and facts["kernel_cmdline"] is None
        checks = report.judge_all(facts)
        assert all(c["status"] in ("n/a", "ok", "info", "warn", "fail") for c in checks)
        rejects_any(data, report.read_facts, {"info": CPU, "root": tmp, "env": env, "run": lambda argv: None}, {
            "info": st.one_of(st.integers(), st.just("cpu")), "root": st.one_of(st.integers(), st.just("")),
            "env": st.one_of(st.just({"A": 1}), st.integers(), st.just(["A=1"])),
            "run": st.one_of(st.integers(), st.just("lspci")), "nvml": st.one_of(st.integers(), st.just("nvml")),
            "cpus": st.one_of(st.just([-1]), st.just("0-3"), st.just([0.5]))})
    assert config_facts.parse_cpulist("0-2,5") == [0, 1, 2, 5]


# ---------------------------------------------------------------------------------------------------------
# the workload probe
# ---------------------------------------------------------------------------------------------------------

@covers(report.layer_shape, report.layer_flops, report.predict_layer_s, report.prediction_rows)
@given(st.sampled_from(["1.7B", "7.5B", "18B"]), st.integers(1, 64), catalogue_names(), st.data())
def test_the_workload_layer_model(row, microbatch, gpu, data):
    from ampere import transformer

    shape = answers(report.layer_shape, row, type_=transformer.TransformerShape)
    assert shape.layers == 1
    flops = answers(report.layer_flops, row, microbatch, type_=int)
    b, s, h = microbatch, shape.seq, shape.hidden
    assert flops == 3 * (24 * b * s * h * h + 4 * b * s * s * h)
    t = answers(report.predict_layer_s, gpu, row, microbatch, type_=float)
    assert 0 < t < 1e3
    if specs.get(gpu).supports("bf16"):
        assert [r["GPU"] for r in answers(report.prediction_rows, [gpu], row, type_=list)] == [specs.get(gpu).name]
    else:
        rejects(report.prediction_rows, "gpus", [gpu], row)
    rejects(report.layer_shape, "row", data.draw(bad_names(["1.7B", "7.5B", "18B"])))
    rejects(report.layer_flops, "microbatch", row, data.draw(bad_ints(1, report.workload.MAX_MICROBATCH)))
    rejects_any(data, report.predict_layer_s, {"gpu": gpu, "row": row}, {
        "gpu": bad_names(specs.names()), "row": st.just("NoSuchRow"),
        "microbatch": bad_ints(1, report.workload.MAX_MICROBATCH)})
    rejects(report.prediction_rows, "gpus", data.draw(st.one_of(st.just("T4"), st.just([]), st.integers())))


@covers(report.measure_layer)
@settings(max_examples=3)  # each example times a (tiny) layer for about a second
@given(st.integers(1, 4), st.data())
def test_a_tiny_layer_is_timed_on_the_cpu_and_bad_settings_refused_before_anything_runs(microbatch, data):
    from ampere import transformer

    tiny = transformer.TransformerShape(layers=1, hidden=16, heads=2, seq=8, vocab=32)
    res = answers(report.measure_layer, "cpu", microbatch=microbatch, dtype="fp32", shape=tiny, within_s=30.0)
    assert res["seconds"] > 0 and res["shape"]["hidden"] == 16 and res["shape"]["microbatch"] == microbatch
    for _ in range(5):
        rejects_any(data, report.measure_layer, {"device": "cpu", "dtype": "fp32", "shape": tiny}, {
            "device": st.sampled_from(["", "gpu", 3, "cuda:x"]), "quick": bad_booleans(),
            "dtype": st.sampled_from(["fp8", "", None]), "microbatch": bad_ints(1, report.workload.MAX_MICROBATCH),
            "shape": st.one_of(st.integers(), st.just("7.5B"), st.just(types.SimpleNamespace(seq=8, hidden=10,
                                                                                                heads=3)))})
