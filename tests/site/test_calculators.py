"""The live calculators' registry in CPython (ampere/live): every calculator answers with its defaults, its
inputs are validated like every public function, each entry prints what its chapter's public call returns,
and the whole path runs without NumPy (the fact that lets the site ship the Pyodide core alone)."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ampere import live

ROOT = Path(__file__).resolve().parents[2]
NAMES = live.names()


class _Balanced(HTMLParser):
    """Fails on an end tag that closes nothing open: the answer's HTML must nest."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()


def test_the_five_calculators_are_registered_in_page_order():
    assert NAMES == ("hbm-fits", "megatron-layouts", "mig-planner", "superpod-sizer", "today-plan")


@pytest.mark.parametrize("name", NAMES)
def test_defaults_answer_with_balanced_escaped_html_and_markdown(name):
    calc = live.get(name)
    answer = calc.run()
    assert isinstance(answer, live.Answer) and answer.summary
    html = answer.html()
    parser = _Balanced()
    parser.feed(html)
    parser.close()
    assert parser.stack == [] and html.startswith('<div class="ampere-answer">')
    assert "<script" not in html
    md = answer.markdown()
    assert answer.summary[0] in md
    for table in answer.tables:
        assert "| " + " | ".join(table.columns) + " |" in md
    assert answer._repr_html_() == html  # a notebook shows the same thing


@pytest.mark.parametrize("name", NAMES)
def test_every_field_is_described_and_its_default_accepted(name):
    import importlib

    calc = live.get(name)
    assert (ROOT / "book" / f"{calc.chapter}.ipynb").exists(), calc.chapter
    module, _, function = calc.call.rpartition(".")
    assert callable(getattr(importlib.import_module(module), function)), calc.call
    import nbformat

    nb = nbformat.read(ROOT / "book" / f"{calc.chapter}.ipynb", as_version=4)
    headings = {line.lstrip("#").strip() for cell in nb.cells if cell.cell_type == "markdown"
                for line in cell.source.splitlines() if line.startswith("#")}
    assert calc.section in headings, f"{calc.section!r} is no heading of book/{calc.chapter}.ipynb"
    desc = json.loads(json.dumps(calc.to_dict()))
    assert [f["name"] for f in desc["fields"]] == [f.name for f in calc.fields]
    for f in calc.fields:
        assert f.parse(f.default) == f.default
        if f.only_for is not None:
            other = next(g for g in calc.fields if g.name == f.only_for[0])
            assert other.kind == "choice" and set(f.only_for[1]) <= set(other.choices)
    assert calc.values() == {f.name: f.default for f in calc.fields}


def test_fields_refuse_what_they_do_not_allow():
    f = live.Field("gpus", "GPUs", "int", 8, minimum=1, maximum=64)
    assert f.parse(64) == 64
    for bad, err in ((True, TypeError), (8.0, TypeError), ("8", TypeError), (0, ValueError), (65, ValueError),
                     (None, TypeError)):
        with pytest.raises(err, match="gpus"):
            f.parse(bad)
    x = live.Field("tokens", "tokens", "float", 1.0, minimum=0.001)
    assert x.parse(3) == 3.0
    for bad, err in ((float("nan"), ValueError), (0.0, ValueError), ("1", TypeError), (False, TypeError)):
        with pytest.raises(err, match="tokens"):
            x.parse(bad)
    c = live.Field("stage", "ZeRO", "choice", 0, (0, 1, 2, 3))
    with pytest.raises(ValueError, match="stage must be one of 0, 1, 2, 3"):
        c.parse("3")
    b = live.Field("calibrated", "calibrated", "bool", False)
    with pytest.raises(TypeError, match="calibrated"):
        b.parse("false")
    t = live.Field("instances", "instances", "text", "1g.10gb")
    assert t.parse("  3g.40gb ") == "3g.40gb"
    with pytest.raises(ValueError, match="at most"):
        t.parse("x" * 201)
    with pytest.raises(TypeError, match="instances"):
        t.parse(3)
    with pytest.raises(ValueError, match="kind"):
        live.Field("x", "x", "date", 0)
    with pytest.raises(ValueError, match="choices"):
        live.Field("x", "x", "choice", 0)
    with pytest.raises(ValueError):  # a default the field refuses is a bug of the registry
        live.Field("x", "x", "int", -1, minimum=0)


def test_run_rejects_unknown_names_and_inputs_listing_the_allowed_ones():
    with pytest.raises(ValueError, match="hbm-fits"):
        live.run("no-such-calculator")
    with pytest.raises(ValueError, match="unknown input.*colour.*allowed: model"):
        live.run("hbm-fits", colour="red")
    with pytest.raises(ValueError, match="name"):
        live.register("bad name!")
    with pytest.raises(ValueError, match="already registered"):
        live.register("hbm-fits")(lambda: None)


def test_run_json_is_what_the_browser_calls():
    ok = json.loads(live.run_json("mig-planner", json.dumps({"instances": "7g.80gb"})))
    assert ok["html"] == live.run("mig-planner", instances="7g.80gb").html() and ok["seconds"] >= 0
    refused = json.loads(live.run_json("mig-planner", json.dumps({"instances": "4g.40gb, 4g.40gb"})))
    assert "cannot coexist" in refused["error"]
    assert "integer" in json.loads(live.run_json("superpod-sizer", '{"nodes": 1.5}'))["error"]
    assert "JSON object" in json.loads(live.run_json("superpod-sizer", "[1, 2]"))["error"]
    assert "error" in json.loads(live.run_json("superpod-sizer", "{not json"))
    with pytest.raises(TypeError):
        live.run_json("superpod-sizer", {"nodes": 2})


def test_describe_is_json_and_selects():
    assert [c["name"] for c in live.describe()] == list(NAMES)
    assert [c["name"] for c in live.describe(["today-plan"])] == ["today-plan"]
    with pytest.raises(ValueError):
        live.describe(["nope"])
    json.dumps(live.describe())


# ---------------------------------------------------------------------------------------------------------
# Each entry prints its chapter's public call (thin entries: the models live in the chapters)
# ---------------------------------------------------------------------------------------------------------


def test_hbm_fits_prints_model_memory():
    from ampere import memory

    est = memory.model_memory("llama2-13b", mode="training", finetune="qlora", weights="bf16", seq_len=2048,
                              data_parallel=1, zero_stage=0)
    answer = live.run("hbm-fits", model="llama2-13b", task="QLoRA")
    assert answer.summary[0] == f"llama2-13b, QLoRA: {est.total_bytes / 1e9:,.1f} GB."
    assert answer.tables[0].rows[-1] == {"component": "total", "GB": f"{est.total_bytes / 1e9:,.1f}"}
    assert answer.notes == est.assumptions
    assert ("it fits" in answer.summary[1]) == est.fits("A100-SXM4-80GB")
    big = live.run("hbm-fits", model="gpt3-175b", gpu="A100-SXM4-40GB")
    n = memory.model_memory("gpt3-175b", weights="bf16", context=4096).gpus_needed("A100-SXM4-40GB")
    assert f"does not fit: {n} of them" in big.summary[1]


def test_megatron_layouts_prints_search_layouts_and_eq4():
    from ampere import megatron

    cfg = megatron.table1_config("18B")
    best = megatron.search_layouts(cfg, 256, 1024, top=3)
    answer = live.run("megatron-layouts", model="18B", gpus=256, batch=1024, top=3, tokens_b=100.0)
    rows = answer.tables[0].rows
    assert [r["TFLOP/s per GPU"] for r in rows] == [f"{e.tflops_per_gpu:.1f}" for e in best]
    assert [(r["t"], r["p"], r["d"]) for r in rows] == [(e.layout.tensor, e.layout.pipeline, e.layout.data)
                                                       for e in best]
    days = megatron.training_days(megatron.params(cfg), 100e9, 256, best[0].tflops_per_gpu)
    assert f"take {days:,.1f} days" in answer.summary[1]
    none = live.run("megatron-layouts", model="1T", gpus=8, batch=8)
    assert "no layout" in none.summary[0] and not none.tables


def test_mig_planner_prints_place():
    from ampere import mig

    layout = mig.place("A100-SXM4-40GB", ["3g.20gb", "3g.20gb"])
    answer = live.run("mig-planner", gpu="A100-SXM4-40GB", instances="3g.20gb; 3g.20gb")
    assert answer.summary[0].startswith(mig.format_layout(layout) + " on the A100-SXM4-40GB")
    mem, comp = mig.layout_maps("A100-SXM4-40GB", layout)
    assert f"Memory slices {mem}, compute slices {comp}" in answer.summary[1]
    with pytest.raises(ValueError, match="empty"):
        live.run("mig-planner", instances=" , ")


def test_superpod_sizer_prints_superpod():
    from ampere import cluster

    pod = cluster.superpod(560)
    answer = live.run("superpod-sizer", nodes=560)
    assert f"{pod.switches} 40-port HDR switches" in answer.summary[0]
    assert f"{pod.fabric.cables_total:,} cables" in answer.summary[0]
    with pytest.raises(ValueError, match="nodes"):
        live.run("superpod-sizer", nodes=100_000)


def test_today_plan_prints_plans():
    from ampere import today

    w = today.Workload("7B", "lora", tokens=2e9, max_cards=8)
    answer = live.run("today-plan", model="7B", task="lora", tokens_b=2.0)
    assert [dict(r) for r in answer.tables[0].rows] == [p.row() for p in today.plans(w)]
    assert "MFU" in answer.tables[0].columns and "bound" not in answer.tables[0].columns


# ---------------------------------------------------------------------------------------------------------
# What the browser needs: no NumPy on any calculator's path, no chapter imported before it is used
# ---------------------------------------------------------------------------------------------------------

_BLOCK = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("numpy", "matplotlib", "torch", "scipy", "sklearn", "IPython"):
            raise ImportError("blocked in this test: " + name)
sys.meta_path.insert(0, _Block())
"""


def _python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", _BLOCK + code], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_every_calculator_runs_without_numpy_torch_or_matplotlib():
    out = _python("from ampere import live\n"
                  "for n in live.names():\n"
                  "    calc = live.get(n)\n"
                  "    calc.run()\n"
                  "    print(n, 'ok')\n"
                  "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'torch', 'matplotlib')))")
    assert out.splitlines() == [f"{n} ok" for n in NAMES] + ["[]"]


def test_importing_live_imports_no_chapter_and_a_calculator_only_its_own():
    out = _python("import ampere.live\n"
                  "chapters = ('hbm', 'megatron', 'mig', 'cluster', 'today')\n"
                  "print(sorted(c for c in chapters if 'ampere.' + c in sys.modules))\n"
                  "ampere.live.run('mig-planner')\n"
                  "print(sorted(c for c in chapters if 'ampere.' + c in sys.modules))")
    assert out.splitlines() == ["[]", "['mig']"]


def test_the_try_page_places_every_calculator():
    page = (ROOT / "book" / "try-the-models.md").read_text(encoding="utf-8")
    placed = [line.split('data-calc="')[1].split('"')[0] for line in page.splitlines() if "ampere-calc" in line]
    assert placed == list(NAMES)
