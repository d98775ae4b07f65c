"""The data folder: schema, sources, and that no published figure is typed again in a module."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ampere import results

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "ampere" / "data"


def _bib_keys() -> set[str]:
    text = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    return set(re.findall(r"@\w+\s*\{\s*([^,\s]+)\s*,", text))


def test_published_records_have_the_schema_and_a_bib_source():
    keys = _bib_keys()
    recs = results.records(kind="published")
    for rec in recs:
        assert rec.kind == "published"
        assert rec.source in keys, f"{rec.id}: source {rec.source!r} is not a key of book/references.bib"
        assert rec.where, f"{rec.id}: say where in the source (table, figure, page or file)"
        assert re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", rec.date), f"{rec.id}: date {rec.date!r} is not ISO"
        for name in rec.figures:
            assert name.endswith(results.UNIT_SUFFIXES), (rec.id, name)


def test_enough_published_records():
    recs = results.records(kind="published")
    gpus = {r.gpu for r in recs}
    benchmarks = {r.benchmark for r in recs}
    assert len(recs) >= 25, len(recs)
    assert len(gpus) >= 5, sorted(gpus)
    assert len(benchmarks) >= 5, sorted(benchmarks)


def test_table_sources_are_bib_keys():
    keys = _bib_keys()
    for path in sorted((DATA / "tables").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["schema"] == results.TABLE_SCHEMA, path.name
        assert data["name"] == path.stem, path.name
        table = results.table(path.stem)
        sources = {table["source"]} if table["source"] else set()
        sources |= {r["source"] for r in table["rows"] if r.get("source")}
        assert sources, f"{path.name}: no source, neither for the table nor per row"
        for s in sources:
            assert s in keys, f"{path.name}: source {s!r} is not a key of book/references.bib"


def test_record_ids_unique_and_files_parse():
    ids = [r.id for r in results.records(kind="published")]
    assert len(ids) == len(set(ids))
    for path in sorted((DATA / "published").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["schema"] == results.PUBLISHED_SCHEMA, path.name


def _significant_literals(value: float) -> set[str]:
    """Spellings of a published number distinctive enough that finding one in a module means a retyped figure."""
    out = set()
    if isinstance(value, int) and not isinstance(value, bool):
        # round sizes (multiples of 128: 2048, 4096 ...) are configurations any module may use
        if value >= 1000 and value % 100 and value % 128:
            out.add(str(value))
        return out
    text = repr(float(value))
    digits = re.sub(r"[^0-9]", "", text.split("e")[0]).strip("0")
    if len(digits) >= 4:  # 271.2, 232.54, 0.0022 ... but not 2.0, 0.5, 1e9
        out.add(text)
    return out


def test_no_published_figure_is_typed_in_a_module():
    sources = {str(p.relative_to(ROOT / "ampere")): p.read_text(encoding="utf-8")
               for p in (ROOT / "ampere").rglob("*.py")}
    # numbers written in code: literals not inside a comment
    code = {name: re.sub(r"#[^\n]*", "", text) for name, text in sources.items()}
    offenders = []
    for rec in results.records(kind="published"):
        for fig, value in rec.figures.items():
            values = value if isinstance(value, (list, tuple)) else [value]
            if len(values) > 3:
                values = values[:3]
            for v in values:
                for lit in _significant_literals(v):
                    pat = re.compile(r"(?<![\w.])" + re.escape(lit) + r"(?![\w.])")
                    for name, text in code.items():
                        if pat.search(text):
                            offenders.append(f"{rec.id}.{fig}={lit} in ampere/{name}")
    assert not offenders, "published figures typed in modules (read them from ampere/data):\n" + "\n".join(offenders)


def test_records_filters_and_refuses_bad_input():
    every = results.records()
    assert all(r.kind in results.KINDS for r in every)
    with pytest.raises(ValueError, match="kind"):
        results.records(kind="recorded")
    with pytest.raises(TypeError, match="gpu"):
        results.records(gpu=3)
    for rec in results.records(kind="published")[:5]:
        assert rec in results.records(benchmark=rec.benchmark, gpu=rec.gpu, kind="published")
        assert results.Record.from_dict(rec.to_dict()) == rec


def test_record_refuses_figures_without_units():
    with pytest.raises(ValueError, match="unit"):
        results.Record(kind="published", benchmark="matmul", gpu="A100-SXM4-80GB", figures={"tflops": 1.0},
                       source="x", id="x")
    with pytest.raises(ValueError, match="kind"):
        results.Record(kind="recorded", benchmark="matmul", gpu="A100", figures={"a_s": 1.0}, source="x")
    with pytest.raises(ValueError, match="unknown field"):
        results.Record.from_dict({"id": "a", "benchmark": "b", "gpu": "c", "figures": {"a_s": 1}, "source": "s",
                                  "sorce": "typo"})


def test_measured_records_come_from_cuda_results_only(tmp_path, monkeypatch):
    from ampere import device

    cpu = results.make_result("matmul", device.DeviceInfo("cpu", "x"), {}, [{"precision": "bf16", "tflops": 1.5}])
    gpu_info = device.DeviceInfo("cuda", "NVIDIA A100-SXM4-80GB", spec_name="A100-SXM4-80GB",
                                 compute_capability=(8, 0))
    on_gpu = results.make_result("matmul", gpu_info, {}, [{"precision": "bf16", "n": 8192, "tflops": 250.0}])
    monkeypatch.setattr(results, "recorded", lambda benchmark=None, gpu=None: [cpu, on_gpu])
    rows = results.records(kind="measured")
    assert len(rows) == 1 and rows[0].gpu == "A100-SXM4-80GB"
    assert rows[0].figures["tflops"] == 250.0 and rows[0].params == {"precision": "bf16", "n": 8192}
    assert rows[0].label().startswith("recorded on NVIDIA A100-SXM4-80GB (sm80)")


def test_sources_table_is_in_sync_with_the_bibliography():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / "tools" / "bibyear.py"), "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_every_bibliography_label_names_one_work():
    table = results.table("sources")
    labels = [r["label"] for r in table["rows"]]
    assert len(labels) == len(set(labels))
