"""Every chapter as the site shows it: figures with captions and alt text, little visible code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parents[1] / "book"
HIDDEN = {"remove-input", "remove-cell", "hide-input", "hide-cell"}

#: Visible code lines of each chapter before the reader-first rework (issue "Reader-first chapters"): a
#: chapter may show about a third of that (the kernels chapter, new, a third of its own code).
BEFORE = {"architecture": 212, "tf32": 284, "hbm": 390, "sparsity": 209, "mig": 229, "nvlink": 259,
          "dgx-superpod": 320, "megatron": 305, "a100-today": 141, "reference-check": 113}
CHAPTERS = sorted(p.stem for p in BOOK.glob("*.ipynb"))


def _code_lines(cell: dict) -> int:
    return sum(1 for line in "".join(cell["source"]).splitlines() if line.strip())


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_figures_have_a_numbered_caption_and_alt_text(chapter):
    nb = json.loads((BOOK / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    names = []
    for cell in nb["cells"]:
        images = [o for o in cell.get("outputs", []) if any(k.startswith("image/") for k in o.get("data", {}))]
        if cell["cell_type"] != "code" or not images:
            continue
        meta = cell["metadata"].get("mystnb", {})
        assert len(images) == 1, f"{chapter}: one figure per cell ({''.join(cell['source'])[:60]!r})"
        assert meta.get("figure", {}).get("name", "").startswith("fig-"), ''.join(cell["source"])[:80]
        assert len(meta["figure"].get("caption", "")) > 40 and len(meta.get("image", {}).get("alt", "")) > 30
        names.append(meta["figure"]["name"])
    assert len(names) == len(set(names)), f"{chapter}: a figure name is used twice"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_visible_code_is_about_a_third_of_what_it_was(chapter):
    nb = json.loads((BOOK / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    visible = sum(_code_lines(c) for c in code if not HIDDEN & set(c["metadata"].get("tags", [])))
    budget = BEFORE.get(chapter, sum(_code_lines(c) for c in code)) / 3 * 1.05
    assert visible <= budget, f"{chapter}: {visible} visible code lines, budget {budget:.0f}"
    assert visible > 0, f"{chapter}: a chapter that shows no code teaches no code"
