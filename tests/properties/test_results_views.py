"""Properties of ampere.results, ampere.views, ampere.tables and ampere.glue."""

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ampere import device, glue, results, specs, tables, views

from .harness import (answers, any_case, bad_floats, bad_names, bad_strings, catalogue_names, covers,
                      finite_floats, not_lists, rejects, rejects_any, words)

INFO = device.DeviceInfo("cpu", "a CPU")
PUBLISHED = results.published()
BENCHMARKS = sorted({r.benchmark for r in PUBLISHED})


def _result(benchmark="matmul", n=8, x=1.0):
    return results.make_result(benchmark, INFO, {"quick": True}, [{"params": {"n": n}, "derived": {"x_s": x}}],
                               ["a note"], created_utc="2026-01-02T03:04:05Z")


@covers(results.make_result, results.validate, results.default_filename, results.provenance)
@given(st.sampled_from(results.RECORDED_BENCHMARKS), st.integers(1, 10 ** 6), finite_floats(0, 1e6), st.data())
def test_results_are_made_valid_or_refused(benchmark, n, x, data):
    res = answers(_result, benchmark, n, x, type_=dict)
    assert answers(results.validate, res, type_=dict) is res
    name = answers(results.default_filename, res, type_=str)
    assert name.startswith(benchmark + "-") and name.endswith("-20260102.json") and "/" not in name
    assert answers(results.provenance, res, type_=str).startswith("recorded on a CPU, 2026-01-02")
    rejects_any(data, results.make_result, {"benchmark": benchmark, "device": INFO, "parameters": {},
                                            "records": [], "notes": []}, {
        "benchmark": bad_strings(), "device": st.one_of(st.integers(), st.none(), st.text(max_size=3)),
        "parameters": not_lists(), "records": st.one_of(not_lists(), st.just([1])),
        "notes": st.one_of(st.text(min_size=1, max_size=5), st.just([1]), st.integers()),
        "created_utc": st.one_of(st.integers(), st.just(""), st.just("yesterday"))})
    broken = dict(res)
    del broken[data.draw(st.sampled_from(sorted(broken)))]
    for fn in (results.validate, results.default_filename, results.provenance):
        rejects(fn, "result", data.draw(st.one_of(st.integers(), st.none(), st.just([]))))
        rejects(fn, "result", broken)


@covers(results.save, results.load, results.write_atomic)
@given(st.integers(1, 100), st.data())
def test_save_and_load_round_trip_and_refuse_bad_paths(n, data):
    import tempfile
    from pathlib import Path

    res = _result(n=n)
    with tempfile.TemporaryDirectory() as tmp:
        path = answers(results.save, res, tmp + "/", type_=Path)
        assert path.parent == Path(tmp) and answers(results.load, path, type_=dict)["records"] == res["records"]
        assert results.write_atomic(Path(tmp) / "t.txt", "text").read_text() == "text"
        bad_path = data.draw(st.one_of(st.integers(), st.none(), st.just("")))
        rejects(results.save, "path", res, bad_path)
        rejects(results.load, "path", bad_path)
        rejects(results.write_atomic, "path", bad_path, "t")
        rejects(results.write_atomic, "path", tmp, "t")  # a folder is not a file
        rejects(results.write_atomic, "text", Path(tmp) / "t.txt", data.draw(bad_strings(allow_empty=True)))
        (Path(tmp) / "bad.json").write_text("{not json")
        rejects(results.load, "bad.json", Path(tmp) / "bad.json")


@covers(results.records, results.recorded, results.published)
@given(st.sampled_from(PUBLISHED), st.data())
def test_record_filters_match_gpus_in_any_case_and_refuse_unknown_names(rec, data):
    spelled = data.draw(any_case(rec.gpu))
    rows = answers(results.records, benchmark=rec.benchmark, gpu=spelled, kind="published", type_=list)
    assert rec in rows and all(r.benchmark == rec.benchmark for r in rows)
    assert all(isinstance(r, results.Record) for r in answers(results.published, type_=list))
    assert isinstance(answers(results.recorded, type_=list), list)
    known = BENCHMARKS + list(results.RECORDED_BENCHMARKS)
    gpus = specs.names() + [r.gpu for r in PUBLISHED]
    rejects(results.records, "benchmark", benchmark=data.draw(bad_names(known).filter(lambda v: v is not None)))
    rejects(results.records, "gpu", gpu=data.draw(bad_names(gpus).filter(lambda v: v is not None)))
    rejects(results.records, "kind", kind=data.draw(bad_names(results.KINDS).filter(lambda v: v is not None)))
    rejects(results.recorded, "benchmark", benchmark=data.draw(bad_names(known).filter(lambda v: v is not None)))
    rejects(results.recorded, "gpu", gpu=data.draw(bad_names(gpus).filter(lambda v: v is not None)))


@covers(results.Record, results.FigureError)
@given(st.sampled_from(PUBLISHED), st.data())
def test_records_round_trip_and_refuse_bad_fields(rec, data):
    again = answers(results.Record.from_dict, rec.to_dict(), type_=results.Record)
    assert again == rec and json.loads(json.dumps(rec.to_dict())) == rec.to_dict()
    name = data.draw(st.sampled_from(sorted(rec.figures)))
    assert rec.figure(name) == rec.figures[name]
    err = rejects(rec.figure, "name", "no_such_figure_s")
    assert isinstance(err, KeyError) and name in str(err)
    valid = {"kind": "published", "benchmark": "matmul", "gpu": "A100-SXM4-80GB",
             "figures": {"bf16_tflop_per_s": 250.0}, "source": "bekman2024mle"}
    rejects_any(data, results.Record, valid, {
        "kind": bad_names(results.KINDS), "benchmark": st.one_of(bad_strings(), st.just("Not Lower")),
        "gpu": bad_strings(), "source": bad_strings(), "where": bad_strings(allow_empty=True),
        "params": st.one_of(st.integers(), st.none(), st.just([1])), "id": bad_strings(allow_empty=True),
        "figures": st.one_of(st.just({}), st.just({"tflops": 1.0}), st.just({"x_s": float("nan")}),
                             st.just({"x_s": "1"}), st.none())})


@covers(results.table, results.data_files)
@given(st.data())
def test_tables_and_data_files(data):
    names = [n[:-5] for n, _ in results.data_files("tables")]
    name = data.draw(st.sampled_from(names))
    t = answers(results.table, name, type_=dict)
    assert t["name"] == name and isinstance(t["rows"], list)
    rejects(results.table, "name", data.draw(bad_names(names)))
    assert all(n.endswith(".json") for n, _ in answers(results.data_files, "published", type_=list))
    rejects(results.data_files, "sub", data.draw(st.one_of(st.integers(), st.none(), st.just("../x"))))


POINT = {"what": "bf16 matmul", "gpu": "A100-SXM4-80GB", "model": 312.0, "real": 250.0, "unit": "TFLOP/s",
         "kind": "published", "source": "Bekman 2024"}


@covers(views.Point, views.ratio_text)
@given(finite_floats(), finite_floats(), st.data())
def test_points_hold_finite_numbers_and_name_bad_fields(model, real, data):
    p = answers(views.Point, **{**POINT, "model": model, "real": real}, type_=views.Point)
    assert p.ratio is None if model == 0 else p.ratio == real / model
    assert answers(views.ratio_text, p.ratio, type_=str) == ("" if p.ratio is None else f"{p.ratio:.2f}×")
    rejects(views.ratio_text, "r", data.draw(bad_floats(None, None).filter(lambda v: v is not None)))
    rejects_any(data, views.Point, POINT, {
        "model": bad_floats(None, None).filter(lambda v: v is not None),
        "real": bad_floats(None, None).filter(lambda v: v is not None),
        "kind": bad_names(views.KINDS), "gpu": bad_strings(), "unit": bad_strings(allow_empty=True),
        "what": bad_strings(allow_empty=True)}, field=lambda a: f"Point.{a}")


@covers(views.point, views.source_text, views.cite_label, views.best)
@given(st.sampled_from(PUBLISHED), st.floats(1e-6, 1e6), st.data())
def test_points_from_records(rec, scale, data):
    name = next(k for k, v in rec.figures.items() if not isinstance(v, (list, tuple))) if any(
        not isinstance(v, (list, tuple)) for v in rec.figures.values()) else None
    text = answers(views.source_text, rec, type_=str)
    assert rec.source not in text or views.cite_label(rec.source) == rec.source
    assert answers(views.cite_label, rec.source, type_=str)
    assert answers(views.best, [rec], type_=list) == [rec]
    if name is not None:
        p = answers(views.point, rec, name, "q", 1.0, "u", scale=scale, type_=views.Point)
        assert abs(p.real - float(rec.figures[name]) * scale) <= 1e-9 * abs(p.real) + 1e-300
        rejects_any(data, views.point, {"rec": rec, "figure": name, "what": "q", "model": 1.0, "unit": "u"}, {
            "rec": st.one_of(st.none(), st.integers(), st.text(max_size=3)), "figure": bad_strings(),
            "scale": bad_floats(0.0), "model": bad_floats(None, None).filter(lambda v: v is not None),
            "unit": bad_strings(allow_empty=True), "gpu": bad_strings().filter(lambda v: v is not None)})
    rejects(views.source_text, "rec", data.draw(st.one_of(st.none(), st.integers(), st.text(max_size=3))))
    rejects(views.cite_label, "key", data.draw(bad_strings()))
    rejects(views.best, "records", data.draw(st.one_of(not_lists(), st.just([1]))))


@covers(views.table, views.plot, views.show)
@settings(max_examples=10)  # each example builds a matplotlib figure
@given(st.lists(finite_floats(1e-3, 1e6), min_size=1, max_size=4), st.data())
def test_views_show_points_or_name_what_is_wrong(values, data):
    import matplotlib.pyplot as plt

    points = [views.Point(f"q{i}", "A100-SXM4-80GB", model=v, real=v * 0.8, unit="GB/s", source="s")
              for i, v in enumerate(values)]
    text = answers(views.table, points, type_=str)
    assert text.count("\n") == len(points) + 1 and "0.80×" in text
    bad_points = st.one_of(not_lists(), st.just([]), st.just([1]))
    rejects_any(data, views.table, {"points": points}, {
        "points": bad_points, "model_label": bad_strings(), "real_label": bad_strings(),
        "digits": st.one_of(st.integers(max_value=-1), st.integers(min_value=13), st.just(True), st.just(2.5))})
    fig, ax = plt.subplots()
    try:
        answers(views.plot, ax, points, type_=type(None))
        rejects_any(data, views.plot, {"ax": ax, "points": points}, {
            "ax": st.one_of(st.none(), st.integers(), st.text(max_size=3)), "points": bad_points,
            "log": st.one_of(st.integers(), st.text(max_size=3)), "model_label": bad_strings()})
    finally:
        plt.close(fig)
    rejects_any(data, views.show, {"points": points, "title": "t"}, {
        "points": bad_points, "title": bad_strings(allow_empty=True), "size": bad_names(["full", "wide", "tall",
                                                                                          "half", "square"])})
    plt.close("all")


@covers(tables.markdown_table, tables.show_md, tables.show_html)
@given(st.lists(st.fixed_dictionaries({"gpu": catalogue_names(any_case_=False), "tflops": finite_floats(0, 1e3),
                                       "ok": st.booleans(), "note": st.none() | words()}), min_size=1, max_size=5),
       st.data())
def test_markdown_tables(rows, data):
    text = answers(tables.markdown_table, rows, None, {"tflops": ".1f"}, type_=str)
    lines = text.splitlines()
    assert len(lines) == len(rows) + 2 and all(len(re.findall(r"(?<!\\)\|", line)) == 5 for line in lines)
    assert answers(tables.show_md, text, type_=type(None)) is None
    assert answers(tables.show_html, "<b>x</b>", type_=type(None)) is None
    rejects_any(data, tables.markdown_table, {"rows": rows}, {
        "rows": st.one_of(not_lists(), st.just([]), st.just([1])),
        "columns": st.one_of(st.text(min_size=1, max_size=4), st.just(["no_such_column"]), st.just([1])),
        "formats": st.one_of(st.just([1]), st.text(min_size=1, max_size=3), st.just({"tflops": 1}))})
    rejects(tables.show_md, "text", data.draw(bad_strings(allow_empty=True)))
    rejects(tables.show_html, "text", data.draw(bad_strings(allow_empty=True)))


@covers(glue.glue)
@given(st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True), st.one_of(finite_floats(), st.integers(), words()),
       st.data())
def test_glue_takes_identifiers(name, value, data):
    assert answers(glue.glue, name, value, type_=type(None)) is None
    rejects(glue.glue, "name", data.draw(st.one_of(st.just(""), st.just("a b"), st.just("x.y"), st.integers(),
                                                   st.none())), value)
    rejects(glue.glue, "display", name, value, display=data.draw(st.one_of(st.integers(), st.text(max_size=3))))
