"""Sphinx extension: the book as one PDF for a course (LaTeX builder only; the site is left as it is).

* Exercise numbers per chapter, the same in the PDF as on the site ("Exercise 3.2"). With parts in the
  table of contents, sphinx-jupyterbook-latex sets ``numfig_secnum_depth = 2`` so that LaTeX restarts its
  figure counter at each chapter; Sphinx's own numbers (which sphinx-exercise prints) would then restart
  at each *section* ("Exercise 1.12.3"). This extension numbers with depth 1, as the HTML build does,
  and hands LaTeX the depth it needs (2) only when the book's doctree is resolved, before writing.
* Solutions after each chapter's exercises: the solutions, which follow their exercise on the site (as
  dropdowns), are moved into a "Solutions" section that starts a new page after the chapter's "Exercises"
  section, so a chapter can be handed out with or without them.
* Every table within the page: a table too wide for its natural column widths gets column widths (LaTeX
  p-columns that wrap, shared out by ``column_widths``), a table taller than a page becomes a longtable
  (it breaks across pages), and tables are set in ``\\small`` (``latex_elements`` in _config.yml).
* The release on the title page: the package version (pyproject.toml), so a printed copy says which
  release it is and matches the Colab pin of its notebooks.
* On the site (HTML builders): a "PDF" link in the header of every page to the book's PDF at the site's
  root, and the PDF copied there when `make pdf` has built it (_build/pdf/); `make test` builds the PDF
  before the site.

Configured in ``_config.yml`` (``sphinx.local_extensions``); tested by tests/test_pdfbook.py and by the
PDF build (tools/build_pdf.py).
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

from docutils import nodes

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS_TITLE = "Solutions"


def package_version(root: Path = ROOT) -> str:
    """The version in pyproject.toml (the single source; ampere.__version__ is tested against it)."""
    match = re.search(r'^version = "([^"]+)"', (root / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    if not match:
        raise ValueError(f"no version = \"...\" line in {root / 'pyproject.toml'}")
    return match.group(1)


def _is_latex(app: Any) -> bool:
    return getattr(app.builder, "format", "") == "latex"


def _number_per_chapter(app: Any) -> None:
    if _is_latex(app):
        app.config.numfig_secnum_depth = 1  # after sphinx-jupyterbook-latex's 2 (this runs later)
        # the LaTeX builder read config.release into its context before this event: set it there
        app.builder.context["release"] = package_version()
        app.builder.context["releasename"] = "Release"


def _title(section: nodes.section) -> str:
    return section[0].astext().strip() if section.children and isinstance(section[0], nodes.title) else ""


def move_solutions(doctree: nodes.Node) -> int:
    """Move every solution of an "Exercises" section into a new "Solutions" section right after it.

    Returns the number of solutions moved. Sections without solutions are left alone.
    """
    from sphinx_exercise.nodes import solution_node

    moved = 0
    for section in list(doctree.findall(nodes.section)):
        if _title(section) != "Exercises" or section.parent is None:
            continue
        solutions = list(section.findall(solution_node))
        if not solutions:
            continue
        target = nodes.section(ids=[f"{section['ids'][0]}-solutions"] if section.get("ids") else [],
                               names=[])
        target += nodes.title(SOLUTIONS_TITLE, SOLUTIONS_TITLE)
        for solution in solutions:
            solution.parent.remove(solution)
            target += solution
            moved += 1
        section += nodes.raw("", "\\clearpage\n", format="latex")  # the solutions start a new page
        section.parent.insert(section.parent.index(section) + 1, target)
    return moved


#: The text width of the PDF (jupyterBook.cls: 17.5 cm) in points, the mean width of a character of the
#: tables' \\small FreeSerif (9 pt: about half an em, digits and capitals included) and the padding of a
#: column (2 x \\tabcolsep). A table taller than TALL_PT (the estimate undercounts code, which is wider)
#: is set as a longtable, which breaks across pages, rather than one block that may run off the page.
TEXT_WIDTH_PT, CHAR_PT, COLUMN_PAD_PT, TALL_PT = 496.0, 4.5, 12.0, 300.0
#: a word longer than this may be broken (hyphenated or run over) rather than widen its column
LONGEST_WORD = 16
#: code (a cell with inline literals: memory maps, identifiers) is set in FreeMono, wider than FreeSerif
MONO = 1.3
#: the narrowest column, in characters (a "#" column still holds two digits)
NARROWEST = 3
LINE_PT, ROW_PAD_PT = 11.0, 5.0


def column_widths(cells: list[list[str]], width_pt: float = TEXT_WIDTH_PT,
                  mono: list[list[bool]] | None = None) -> list[int] | None:
    """Widths (in characters of the text font) for the columns of a table whose rows are ``cells``, or
    None if it fits as it is. ``mono`` marks the cells set in the code font (MONO times wider).

    Every column gets its natural width (its longest line) when their sum fits; otherwise the widest
    columns are capped at a common width (at least their longest word, up to LONGEST_WORD; a code cell's
    whole longest word) so that the sum fits: narrow columns keep their width and the long texts wrap.
    """
    if not cells or not all(isinstance(row, list) for row in cells):
        raise ValueError("cells: a non-empty list of rows, each a list of cell texts")
    ncols = max(len(row) for row in cells)
    if ncols == 0:
        raise ValueError("cells: rows without any cell")
    if mono is not None and [len(r) for r in mono] != [len(r) for r in cells]:
        raise ValueError("mono: one flag per cell, rows as in cells")
    natural, word = [NARROWEST] * ncols, [NARROWEST] * ncols
    for r, row in enumerate(cells):
        for i, text in enumerate(row):
            code = bool(mono and mono[r][i])
            scale = MONO if code else 1.0
            lines = str(text).splitlines() or [""]
            natural[i] = max(natural[i], *(int(len(line) * scale + 0.999) for line in lines))
            longest = max((len(w) for w in str(text).split()), default=1)
            word[i] = max(word[i], int(longest * scale + 0.999) if code else min(LONGEST_WORD, longest))
    avail = max(ncols, int((width_pt - ncols * COLUMN_PAD_PT) / CHAR_PT))
    if sum(natural) <= avail:
        return None
    floor = [min(n, w) for n, w in zip(natural, word)]
    if sum(floor) >= avail:  # even the longest words do not fit: share out by the words
        return floor
    lo, hi = 0, max(natural)  # the common cap: the largest that still fits
    while lo < hi:
        cap = (lo + hi + 1) // 2
        if sum(min(n, max(f, cap)) for n, f in zip(natural, floor)) <= avail:
            lo = cap
        else:
            hi = cap - 1
    return [min(n, max(f, lo)) for n, f in zip(natural, floor)]


def colspec_weight(chars: int) -> int:
    """A column's share of the line for LaTeX (tenths of a point): its characters plus its padding."""
    return round(10 * (chars * CHAR_PT + COLUMN_PAD_PT))


def _is_code(entry: nodes.Element) -> bool:
    """A cell whose text is mostly inline code (set in the wider code font)."""
    text = len(entry.astext()) or 1
    return sum(len(n.astext()) for n in entry.findall(nodes.literal)) * 2 > text


def table_height_pt(cells: list[list[str]], widths: list[int]) -> float:
    """The height of a table whose columns are ``widths`` characters wide (rows of wrapped lines)."""
    height = 0.0
    for row in cells:
        lines = max((-(-max(1, len(text)) // max(1, w)) for text, w in zip(row, widths)), default=1)
        height += lines * LINE_PT + ROW_PAD_PT
    return height


def fit_tables(doctree: nodes.Node) -> int:
    """Give each table that needs them column widths and the longtable class. Returns how many changed."""
    changed = 0
    for table in list(doctree.findall(nodes.table)):
        tgroups = [g for g in table.children if isinstance(g, nodes.tgroup)]
        if len(tgroups) != 1:
            continue
        colspecs = [c for c in tgroups[0].children if isinstance(c, nodes.colspec)]
        entries = [list(row.findall(nodes.entry)) for row in tgroups[0].findall(nodes.row)]
        entries = [r for r in entries if r]
        rows = [[entry.astext() for entry in r] for r in entries]
        mono = [[_is_code(entry) for entry in r] for r in entries]
        if not rows or any(len(r) != len(colspecs) for r in rows) or "colwidths-given" in table["classes"]:
            continue  # spanning cells or widths chosen by the author: left as they are
        widths = column_widths(rows, mono=mono)
        natural = widths or [max(NARROWEST, *(len(r[i]) for r in rows)) for i in range(len(colspecs))]
        tall = len(rows) > 30 or table_height_pt(rows, natural) > TALL_PT or widths is not None
        if tall and "longtable" not in table["classes"]:
            table["classes"].append("longtable")  # a tall (or wide, so wrapped) table breaks across pages
        if tall:  # a longtable's columns do not wrap unless given widths
            for colspec, width in zip(colspecs, widths or natural):
                # LaTeX shares the line by these weights, then takes 2 \tabcolsep off every column: weigh
                # the padding in, so that a narrow column keeps the room its characters need
                colspec["colwidth"] = colspec_weight(width)
            table["classes"].append("colwidths-given")
            changed += 1
    return changed


def _for_latex(app: Any, doctree: nodes.document, docname: str) -> None:
    if _is_latex(app):
        move_solutions(doctree)
        fit_tables(doctree)
        # The LaTeX writer, created after this event (the LaTeX builder emits no write-started), reads
        # the depth: with parts as the top sectioning level, 2 makes LaTeX reset its figure, table and
        # equation counters at each chapter, as the numbers Sphinx gave the exercises (chapter.n) do.
        app.config.numfig_secnum_depth = 2


def _pdf_name() -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from build_pdf import pdf_name  # the name the PDF build gives it (_config.yml, latex_documents)

    return pdf_name((ROOT / "_config.yml").read_text(encoding="utf-8"))


def _pdf_link(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if getattr(app.builder, "format", "") != "html" or "pathto" not in context:
        return
    link = {"name": "The whole book as a PDF", "url": context["pathto"](_pdf_name(), 1),
            "icon": "fa-solid fa-file-pdf", "type": "fontawesome", "attributes": {"target": "_self"}}
    context["theme_icon_links"] = [*(context.get("theme_icon_links") or []), link]


def _copy_pdf(app: Any, exception: Exception | None) -> None:
    if exception is None and getattr(app.builder, "format", "") == "html":
        built = ROOT / "_build" / "pdf" / _pdf_name()
        if built.exists():
            shutil.copyfile(built, Path(app.outdir) / built.name)


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", _pdf_link)
    app.connect("build-finished", _copy_pdf)
    app.connect("builder-inited", _number_per_chapter, priority=900)
    # doctree-resolved: sphinx-exercise has numbered and titled the solutions (post-transforms) by then
    app.connect("doctree-resolved", _for_latex, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
