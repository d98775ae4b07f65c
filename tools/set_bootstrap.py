#!/usr/bin/env python
"""Write tools/notebook_conventions.py:BOOTSTRAP into the first code cell of every chapter, and nothing else.

Run after changing BOOTSTRAP (a new release: README, "Cutting a release"). Only that cell's source changes;
its outputs (it is tagged nbval-ignore-output and prints nothing where the package is installed), the other
cells and the metadata are left byte for byte, so chapter edits in flight merge cleanly.
Usage: tools/set_bootstrap.py [NOTEBOOK ...]   (default: book/*.ipynb); --check: exit 1 if one is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebook_conventions import BOOTSTRAP  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def set_bootstrap(path: Path, write: bool = True) -> bool:
    """Put BOOTSTRAP into the first code cell of ``path``; True if it changed (or would change)."""
    raw = path.read_text(encoding="utf-8")
    nb = json.loads(raw)
    cell = next((c for c in nb["cells"] if c["cell_type"] == "code"), None)
    if cell is None:
        raise ValueError(f"{path}: no code cell")
    if "".join(cell["source"]) == BOOTSTRAP:
        return False
    if write:
        cell["source"] = BOOTSTRAP.splitlines(keepends=True)  # as nbformat stores a source
        text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        path.write_text(text, encoding="utf-8")
    return True


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"] or sorted((ROOT / "book").glob("*.ipynb"))
    changed = [p for p in paths if set_bootstrap(p, write=not check)]
    for p in changed:
        print(f"{'stale' if check else 'updated'}: {p}")
    print(f"set_bootstrap: {len(paths)} notebooks, {len(changed)} {'stale' if check else 'updated'}")
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
