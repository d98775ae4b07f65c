#!/usr/bin/env python
"""Fast structural checks of the chapters (no execution): run by `make test` before nbval.

Each chapter must: be listed in _toc.yml; start with a markdown cell holding a `# Title`; have the
canonical Colab bootstrap as its first code cell; store outputs for every code cell (nbval compares
nothing in an unexecuted cell); store no error unless the cell is tagged to raise; contain no paths of
the machine that produced it outside ignored cells; give every figure a caption, a name and alt text,
one figure per cell; be normalised (run tools/execute_notebooks.py).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebook_conventions import BOOTSTRAP, BOOTSTRAP_TAGS, normalize  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LOCAL_PATH = re.compile(r"/(?:work|tmp|root|home|Users)/[^\s\"'\\]+")


def check(path: Path, toc: str) -> list[str]:
    problems: list[str] = []
    rel = path.relative_to(ROOT).with_suffix("").as_posix()
    if not re.search(rf"file:\s*{re.escape(rel)}\s*$", toc, re.M):
        problems.append("not listed in _toc.yml")
    raw = path.read_text(encoding="utf-8")
    nb = nbformat.reads(raw, as_version=4)
    if json.loads(raw) != json.loads(nbformat.writes(normalize(nbformat.reads(raw, as_version=4)))):
        problems.append("not normalised (run tools/execute_notebooks.py on it)")
    if not nb.cells or nb.cells[0].cell_type != "markdown" or not nb.cells[0].source.lstrip().startswith("# "):
        problems.append("first cell must be markdown starting with '# Title'")
    code = [c for c in nb.cells if c.cell_type == "code"]
    if not code or code[0].source.strip() != BOOTSTRAP:
        problems.append("first code cell is not the canonical Colab bootstrap (tools/notebook_conventions.py)")
    elif sorted(code[0].metadata.get("tags", [])) != sorted(BOOTSTRAP_TAGS):
        problems.append(f"bootstrap cell tags must be {BOOTSTRAP_TAGS}")
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        tags = set(cell.metadata.get("tags", []))
        if cell.execution_count is None and "nbval-skip" not in tags:
            problems.append(f"cell {i}: no stored output (execute the notebook)")
        images = sum(1 for out in cell.get("outputs", []) if any(k.startswith("image/") for k in out.get("data", {})))
        fig = cell.metadata.get("mystnb", {}).get("figure", {})
        if images and not (fig.get("caption") and fig.get("name")):
            problems.append(f"cell {i}: a figure without a caption and name (cell metadata mystnb.figure)")
        if images and len(cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")) < 12:
            problems.append(f"cell {i}: a figure without descriptive alt text (cell metadata mystnb.image.alt)")
        if images > 1:
            problems.append(f"cell {i}: {images} figures in one cell (one caption each: split the cell)")
        for out in cell.get("outputs", []):
            if out.output_type == "error" and not tags & {"raises-exception", "nbval-raises-exception"}:
                problems.append(f"cell {i}: stores an error {out.get('ename')}")
            if out.output_type == "stream" and out.get("name") == "stderr" and "nbval-ignore-output" not in tags:
                problems.append(f"cell {i}: writes to stderr (a warning?) in a checked cell")
            if "nbval-ignore-output" not in tags and LOCAL_PATH.search(json.dumps(out)):
                problems.append(f"cell {i}: prints a path of this machine")
    return problems


def main() -> int:
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    notebooks = sorted((ROOT / "book").glob("*.ipynb"))
    bad = 0
    for path in notebooks:
        for problem in check(path, toc):
            bad += 1
            print(f"{path.relative_to(ROOT)}: {problem}")
    print(f"check_notebooks: {len(notebooks)} notebooks, {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
