"""The course tooling: the PDF's table widths and solutions (tools/pdfbook.py), its checks
(tools/build_pdf.py), the exercise-numbering check (tools/check_exercises.py) and the wheel's dependency
check (tools/wheel_deps.py). The builds themselves run in `make test` (make pdf, the wheel check)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import build_pdf  # noqa: E402
import check_exercises  # noqa: E402
import pdfbook  # noqa: E402
import wheel_deps  # noqa: E402


# -- column widths ---------------------------------------------------------------------------------------

def test_a_narrow_table_keeps_its_natural_widths():
    assert pdfbook.column_widths([["GPU", "TFLOP/s"], ["A100", "312"]]) is None


def test_a_wide_table_is_shared_out_within_the_page():
    long = "a sentence of evidence that goes on for quite a while " * 4
    rows = [["quantity", "GPU", "published", "sources", "spread", "from"],
            ["HBM bandwidth", "A100-SXM4-80GB", "2039 GB/s", long, "1 %", long]]
    widths = pdfbook.column_widths(rows)
    avail = (pdfbook.TEXT_WIDTH_PT - 6 * pdfbook.COLUMN_PAD_PT) / pdfbook.CHAR_PT
    assert widths is not None and sum(widths) <= avail
    assert widths[0] == len("HBM bandwidth") and widths[2] == len("published")  # short columns kept
    assert widths[3] == widths[5] < len(long)  # the long ones capped alike, so they wrap


def test_code_cells_are_wider_and_keep_their_words_whole():
    maps = [["1", "4 x 1g.10gb", "AABBCCDD", "A.B.C.D"]] * 3 + [["12", "note " * 30, "AABCDEFF", "A.BCDEF"]]
    flags = [[False, False, True, True]] * 4
    widths = pdfbook.column_widths(maps, mono=flags)
    assert widths[0] == pdfbook.NARROWEST and widths[2] >= round(8 * pdfbook.MONO) and widths[3] >= 9
    with pytest.raises(ValueError, match="mono"):
        pdfbook.column_widths(maps, mono=[[True]])


def test_a_narrow_column_keeps_the_room_of_its_characters():
    """LaTeX takes 2 tabcolsep off each share: the weight adds it back."""
    shares = [pdfbook.colspec_weight(w) for w in (3, 60)]
    width = shares[0] / sum(shares) * pdfbook.TEXT_WIDTH_PT - pdfbook.COLUMN_PAD_PT
    assert width >= 3 * pdfbook.CHAR_PT * 0.95


def test_column_widths_keep_the_longest_word_when_nothing_fits():
    rows = [[f"{'x' * 14} y" for _ in range(12)]]
    assert pdfbook.column_widths(rows) == [14] * 12


@pytest.mark.parametrize("bad", [[], [[]], ["not a row"]])
def test_column_widths_reject_what_is_not_a_table(bad):
    with pytest.raises(ValueError, match="cells"):
        pdfbook.column_widths(bad)


def test_table_height_counts_wrapped_lines():
    one = pdfbook.table_height_pt([["a", "b"]], [10, 10])
    assert pdfbook.table_height_pt([["a" * 35, "b"]], [10, 10]) == pytest.approx(one + 3 * pdfbook.LINE_PT)


def _table(rows: list[list[str]]) -> nodes.table:
    table = nodes.table()
    group = nodes.tgroup(cols=len(rows[0]))
    table += group
    for _ in rows[0]:
        group += nodes.colspec(colwidth=1)
    body = nodes.tbody()
    group += body
    for cells in rows:
        row = nodes.row()
        for text in cells:
            row += nodes.entry("", nodes.paragraph(text=text))
        body += row
    return table


def test_fit_tables_gives_wide_tables_widths_and_tall_ones_page_breaks():
    doc = new_document("t", get_default_settings(Parser))
    small = _table([["GPU", "GB"], ["A100", "80"]])
    wide = _table([["note " * 40, "source " * 30, "x"]])
    tall = _table([["row", str(i)] for i in range(40)])
    doc += [small, wide, tall]
    assert pdfbook.fit_tables(doc) == 2
    assert small["classes"] == []
    assert {"longtable", "colwidths-given"} <= set(wide["classes"])
    assert [c["colwidth"] for c in wide.findall(nodes.colspec)] == [
        pdfbook.colspec_weight(w) for w in pdfbook.column_widths([["note " * 40, "source " * 30, "x"]])]
    assert {"longtable", "colwidths-given"} <= set(tall["classes"])


# -- solutions after the exercises -------------------------------------------------------------------------

def test_solutions_move_into_a_section_after_the_exercises():
    from sphinx_exercise.nodes import exercise_enumerable_node, solution_node

    doc = new_document("t", get_default_settings(Parser))
    chapter = nodes.section(ids=["chapter"])
    chapter += nodes.title(text="A chapter")
    exercises = nodes.section(ids=["exercises"])
    exercises += nodes.title(text="Exercises")
    for label in ("a", "b"):
        exercises += exercise_enumerable_node(label=label)
        exercises += solution_node(label=f"{label}-sol")
    references = nodes.section(ids=["references"])
    references += nodes.title(text="References")
    chapter += [exercises, references]
    doc += chapter
    assert pdfbook.move_solutions(doc) == 2
    titles = [s[0].astext() for s in chapter.children if isinstance(s, nodes.section)]
    assert titles == ["Exercises", "Solutions", "References"]
    assert not list(exercises.findall(solution_node)) and len(list(exercises.findall(exercise_enumerable_node))) == 2
    solutions = chapter.children[2]
    assert [s["label"] for s in solutions.findall(solution_node)] == ["a-sol", "b-sol"]
    assert isinstance(exercises[-1], nodes.raw) and "clearpage" in exercises[-1].astext()
    assert pdfbook.move_solutions(doc) == 0  # nothing left to move


# -- the PDF's checks --------------------------------------------------------------------------------------

LOG = r"""
Overfull \hbox (832.98839pt too wide) in alignment at lines 33417--33990
Overfull \hbox (12.6pt too wide) in paragraph at lines 3451--3451
Overfull \vbox (206.11995pt too high) has occurred while \output is active []
"""


def test_overfull_boxes_are_read_from_the_log_largest_first():
    boxes = build_pdf.overfull_boxes(LOG)
    assert [(k, round(p)) for k, p, _ in boxes] == [("h", 833), ("v", 206), ("h", 13)]


def test_problems_fail_wide_boxes_few_pages_and_undefined_references():
    assert build_pdf.problems(LOG.splitlines()[2], 250, 200, 100) == []
    found = build_pdf.problems(LOG + "LaTeX Warning: There were undefined references.\n", 150, 200, 100)
    assert len(found) == 4 and "150 pages" in found[0] and "833 pt" in found[1] and "undefined" in found[3]


def test_the_pdf_is_named_after_the_book():
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert build_pdf.pdf_name(config) == "ampere-by-experiment.pdf"
    with pytest.raises(ValueError, match="targetname"):
        build_pdf.pdf_name("latex:\n  latex_engine: xelatex\n")


# -- exercise numbering ------------------------------------------------------------------------------------

def _page(chapter: int, numbers: list[str]) -> str:
    body = "".join(f'<div class="exercise admonition" id="x{n}">\n<p class="admonition-title">'
                   f'<span class="caption-number">Exercise {n} </span> (t)</p>' for n in numbers)
    return f'<h1><span class="section-number">{chapter}. </span>Title</h1>{body}'


def test_check_html_wants_each_chapter_numbered_from_one(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "good.html").write_text(_page(3, ["3.1", "3.2"]))
    (tmp_path / "book" / "across.html").write_text(_page(4, ["4.5", "4.6"]))
    (tmp_path / "book" / "none.html").write_text(_page(5, []))
    (tmp_path / "book" / "intro.html").write_text("<h1>Intro</h1>")
    problems, found = check_exercises.check_html(tmp_path)
    assert found == {"across": ["4.5", "4.6"], "good": ["3.1", "3.2"], "none": []}
    assert len(problems) == 2 and "expected 4.1, 4.2" in problems[0] and "no numbered" in problems[1]


def test_check_tex_counts_chapters_as_latex_does():
    ex = r"\begin{sphinxadmonition}{note}{Exercise %s (t)}" + "\n"
    sol = r"\begin{sphinxadmonition}{note}{Solution to Exercise %s (t)}" + "\n"
    tex = (r"\chapter{A}" + ex % "1.1" + ex % "1.2" + sol % "1.1" + sol % "1.2"
           + r"\chapter*{Unnumbered}" + r"\chapter{B}" + ex % "2.1")
    assert check_exercises.check_tex(tex) == ([], {1: ["1.1", "1.2"], 2: ["2.1"]})
    problems, _ = check_exercises.check_tex(tex.replace("{Exercise 2.1", "{Exercise 1.3"))
    assert problems == ["LaTeX chapter 2: exercises numbered 1.3; expected 2.1"]


def test_text_references_to_exercise_numbers_are_found():
    line = "Batching is what makes decoding affordable (exercise 1), see Exercises 2 and 3."
    assert [m.group(0) for m in check_exercises.TEXT_REF.finditer(line)] == ["exercise 1", "Exercises 2 and 3"]


# -- the wheel's dependencies ------------------------------------------------------------------------------

def test_uncovered_names_modules_no_dependency_brings():
    owners = {"numpy": ["numpy"], "triton": ["triton"], "yaml": ["PyYAML"]}
    allowed = {"numpy", "pyyaml"}
    assert wheel_deps.uncovered({"numpy", "triton", "yaml", "json", "_private", "ampere", "local"},
                                allowed, owners) == {"triton": ["triton"]}


def test_the_startup_code_records_nothing_into_the_users_namespace():
    namespace: dict = {}

    class _Events:
        def register(self, *_):
            pass

    namespace["get_ipython"] = lambda: type("IP", (), {"events": _Events()})()
    exec(wheel_deps.STARTUP_CODE, namespace)
    assert set(namespace) == {"get_ipython", "__builtins__"}


def test_the_package_needs_triton_where_it_installs():
    import re

    deps = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r"\"triton>=[\d.]+; platform_system == 'Linux' and platform_machine == 'x86_64'\"", deps)
