#!/usr/bin/env python
"""Exercises numbered per chapter, as a reader sees them: on the built site and in the PDF's LaTeX.

On every chapter page of the site (a page whose title carries a chapter number), the exercises must read
"Exercise N.1", "Exercise N.2", ... in order, N the chapter's number, and every chapter must have some.
In the PDF's LaTeX the same holds with N counted from the \\chapter commands, solutions included. With
--text-refs it also lists the places where a chapter's prose refers to an exercise by its number (the
numbers are the configuration's, so the text should use {ref} labels instead): a list, not a failure.

Usage: tools/check_exercises.py [--html _build/html] [--tex FILE.tex] [--text-refs]
Run by `make test` after the site build (and by tools/build_pdf.py on the LaTeX).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE_NUMBER = re.compile(r'<h1><span class="section-number">(\d+)\. </span>')
EXERCISE = re.compile(r'<div class="exercise admonition"[^>]*>\s*<p class="admonition-title">'
                      r'<span class="caption-number">Exercise ([\d.]+) </span>')
TEX_CHAPTER = re.compile(r"\\chapter(\*?)\{")
TEX_EXERCISE = re.compile(r"\\begin\{sphinxadmonition\}\{note\}\{(Solution to )?Exercise ([\d.]+)")
TEXT_REF = re.compile(r"\b[Ee]xercises?\s+\d+(?:\.\d+)?(?:\s*(?:,|and|or|-|–)\s*\d+(?:\.\d+)?)*")


def sequence_problems(where: str, chapter: int, numbers: list[str], solutions: bool = False) -> list[str]:
    """Problems of one chapter's exercise numbers: each must be f"{chapter}.{k}", k = 1, 2, ... in order."""
    expected = [f"{chapter}.{k}" for k in range(1, len(numbers) + 1)]
    if numbers != expected:
        kind = "solutions" if solutions else "exercises"
        return [f"{where}: {kind} numbered {', '.join(numbers)}; expected {', '.join(expected)}"]
    return []


def check_html(site: Path) -> tuple[list[str], dict[str, list[str]]]:
    """(problems, {page: exercise numbers}) for every numbered chapter page under site/book/."""
    problems: list[str] = []
    found: dict[str, list[str]] = {}
    pages = sorted((site / "book").glob("*.html"))
    if not pages:
        return [f"{site}: no pages under book/ (build the site first)"], found
    for page in pages:
        text = page.read_text(encoding="utf-8")
        number = PAGE_NUMBER.search(text)
        if not number:
            continue  # intro, glossary, references: not numbered chapters
        numbers = EXERCISE.findall(text)
        found[page.stem] = numbers
        if not numbers:
            problems.append(f"{page.name}: chapter {number.group(1)} shows no numbered exercise")
        problems += sequence_problems(page.name, int(number.group(1)), numbers)
    if not found:
        problems.append(f"{site}: no numbered chapter page (is `numbered: true` set in _toc.yml?)")
    return problems, found


def check_tex(tex: str) -> tuple[list[str], dict[int, list[str]]]:
    """(problems, {chapter: exercise numbers}) from the LaTeX of the book (chapters counted as LaTeX does)."""
    problems: list[str] = []
    found: dict[int, list[str]] = {}
    solutions: dict[int, list[str]] = {}
    chapter = 0
    events = sorted([(m.start(), "chapter", m) for m in TEX_CHAPTER.finditer(tex)]
                    + [(m.start(), "exercise", m) for m in TEX_EXERCISE.finditer(tex)], key=lambda e: e[0])
    for _, kind, match in events:
        if kind == "chapter":
            if not match.group(1):
                chapter += 1
            continue
        (solutions if match.group(1) else found).setdefault(chapter, []).append(match.group(2))
    for ch, numbers in found.items():
        problems += sequence_problems(f"LaTeX chapter {ch}", ch, numbers)
    for ch, numbers in solutions.items():
        problems += sequence_problems(f"LaTeX chapter {ch}", ch, numbers, solutions=True)
    if not found:
        problems.append("LaTeX: no numbered exercise")
    return problems, found


def text_references(book: Path) -> list[str]:
    """Markdown cells of the chapters that name an exercise by its number (outside directive lines)."""
    refs = []
    for path in sorted(book.glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] != "markdown":
                continue
            for line in "".join(cell["source"]).splitlines():
                if line.lstrip().startswith(("```{exercise", "```{solution", ":label:", ":::{")):
                    continue
                for match in TEXT_REF.finditer(line):
                    refs.append(f"{path.name} cell {i}: \"{html.unescape(match.group(0))}\" in: {line.strip()[:110]}")
    return refs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--html", type=Path, help="the built site (e.g. _build/html)")
    parser.add_argument("--tex", type=Path, help="the book's LaTeX (e.g. _build/pdf/_build/latex/NAME.tex)")
    parser.add_argument("--text-refs", action="store_true", help="list prose references to exercise numbers")
    args = parser.parse_args(argv)
    problems: list[str] = []
    if args.html:
        html_problems, pages = check_html(args.html)
        problems += html_problems
        print(f"check_exercises: site, {len(pages)} chapters, "
              + ", ".join(f"{p} {n[0] if n else '-'}..{n[-1] if n else '-'}" for p, n in pages.items()))
    if args.tex:
        tex_problems, chapters = check_tex(args.tex.read_text(encoding="utf-8"))
        problems += tex_problems
        print(f"check_exercises: LaTeX, {len(chapters)} chapters with exercises, "
              f"{sum(len(n) for n in chapters.values())} exercises")
    if args.text_refs:
        refs = text_references(ROOT / "book")
        print(f"check_exercises: {len(refs)} prose reference(s) to an exercise by number")
        for ref in refs:
            print(f"  {ref}")
    for problem in problems:
        print(f"check_exercises: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
