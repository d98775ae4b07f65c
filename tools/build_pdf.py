#!/usr/bin/env python
"""The whole book as one PDF (`make pdf`): jupyter-book's LaTeX, xelatex through latexmk, then checks.

Writes _build/pdf/<name>.pdf (the name from _config.yml, latex.latex_documents.targetname) and copies it
into _build/html/ when the site is built, where the site links to it. Fails when the PDF is missing, has
fewer than --min-pages pages, when the LaTeX log holds an overfull box of --max-overfull points or more
(a table or a line running off the page), undefined references, or exercises not numbered per chapter
(tools/check_exercises.py). The TeX tools come from
tools/pdf/ensure_tex.sh (the Makefile runs it first).

Usage: tools/build_pdf.py [--min-pages 200] [--max-overfull 100] [--skip-sphinx]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_build" / "pdf"            # jupyter-book's --path-output: its own doctrees, apart from the site's
LATEX = OUT / "_build" / "latex"
OVERFULL = re.compile(r"^Overfull \\([hv])box \(([0-9.]+)pt too (?:wide|high)\)(.*)$", re.M)


def pdf_name(config_text: str) -> str:
    """The PDF's file name: latex.latex_documents.targetname of _config.yml with .pdf."""
    match = re.search(r"^\s+targetname:\s*([A-Za-z0-9_.-]+)\.tex\s*$", config_text, re.M)
    if not match:
        raise ValueError("_config.yml: no latex.latex_documents.targetname (e.g. ampere-by-experiment.tex)")
    return match.group(1) + ".pdf"


def overfull_boxes(log: str) -> list[tuple[str, float, str]]:
    """Every overfull box of a LaTeX log: (h or v, points, where), largest first."""
    boxes = [(kind, float(pt), where.strip()) for kind, pt, where in OVERFULL.findall(log)]
    return sorted(boxes, key=lambda box: -box[1])


def page_count(pdf: Path) -> int:
    out = subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True, text=True).stdout
    match = re.search(r"^Pages:\s+(\d+)", out, re.M)
    if not match:
        raise RuntimeError(f"pdfinfo gave no page count for {pdf}")
    return int(match.group(1))


def problems(log: str, pages: int, min_pages: int, max_overfull: float) -> list[str]:
    """What is wrong with a built PDF, from its LaTeX log and page count (empty: nothing)."""
    found = []
    if pages < min_pages:
        found.append(f"{pages} pages, fewer than {min_pages}: chapters missing?")
    for kind, pt, where in overfull_boxes(log):
        if pt >= max_overfull:
            found.append(f"overfull \\{kind}box of {pt:.0f} pt (limit {max_overfull:.0f}) {where}".strip())
    if "There were undefined references" in log or re.search(r"Reference `[^']+' on page \d+ undefined", log):
        found.append("undefined references in the LaTeX log")
    return found


def run(cmd: list[str], cwd: Path, log: Path) -> None:
    with log.open("w") as out:
        rc = subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT).returncode
    if rc:
        sys.stdout.write(log.read_text(errors="replace")[-4000:])
        raise SystemExit(f"build_pdf: {' '.join(cmd)} failed (exit {rc}); full output in {log}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-pages", type=int, default=200)
    parser.add_argument("--max-overfull", type=float, default=100.0, help="points")
    parser.add_argument("--skip-sphinx", action="store_true", help="reuse the LaTeX sources already written")
    args = parser.parse_args(argv)
    name = pdf_name((ROOT / "_config.yml").read_text(encoding="utf-8"))
    OUT.mkdir(parents=True, exist_ok=True)
    jb = Path(sys.executable).with_name("jupyter-book")
    t0 = time.perf_counter()
    if not args.skip_sphinx:
        run([str(jb), "build", "--builder", "latex", "-W", "-n", "--keep-going", "--path-output", str(OUT), "."],
            ROOT, OUT / "sphinx.log")
    t1 = time.perf_counter()
    tex = LATEX / name.replace(".pdf", ".tex")
    if not tex.exists():
        raise SystemExit(f"build_pdf: {tex} was not written")
    env_opts = {"LATEXOPTS": "-interaction=nonstopmode -halt-on-error"}
    os.environ.update(env_opts)
    (LATEX / name).unlink(missing_ok=True)
    # the Makefile Sphinx writes: latexmk with xelatex, xindy, as many passes as the references need
    run(["make", "all-pdf"], LATEX, OUT / "latex.log")
    t2 = time.perf_counter()
    built = LATEX / name
    if not built.exists():
        raise SystemExit(f"build_pdf: latexmk wrote no {built}")
    log = (LATEX / name.replace(".pdf", ".log")).read_text(encoding="utf-8", errors="replace")
    pages = page_count(built)
    target = OUT / name
    shutil.copyfile(built, target)
    site = ROOT / "_build" / "html"
    if site.is_dir():
        shutil.copyfile(built, site / name)
    boxes = overfull_boxes(log)
    widest = f"{boxes[0][1]:.0f} pt" if boxes else "none"
    print(f"build_pdf: {target.relative_to(ROOT)}, {pages} pages, {target.stat().st_size / 1e6:.1f} MB; "
          f"overfull boxes: {len(boxes)}, widest {widest}; sphinx {t1 - t0:.0f} s, xelatex {t2 - t1:.0f} s"
          + (f"; copied to _build/html/{name}" if site.is_dir() else ""))
    found = problems(log, pages, args.min_pages, args.max_overfull)
    sys.path.insert(0, str(ROOT / "tools"))
    from check_exercises import check_tex  # exercises and solutions numbered per chapter, as LaTeX counts

    exercise_problems, chapters = check_tex(tex.read_text(encoding="utf-8"))
    found += exercise_problems
    print(f"build_pdf: {sum(len(n) for n in chapters.values())} exercises in {len(chapters)} chapters, "
          "numbered per chapter" if not exercise_problems else "build_pdf: exercise numbering is off")
    for problem in found:
        print(f"build_pdf: {problem}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
