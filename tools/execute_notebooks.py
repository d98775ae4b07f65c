#!/usr/bin/env python
"""Execute chapters on the CPU reference platform and store their outputs in place.

    python tools/execute_notebooks.py book/*.ipynb

One torch thread, fixed hash seed, AMPERE_DEVICE=cpu (the stored outputs are the CPU path, which is what
nbval checks in CI), no timing metadata. Prints the wall time of each notebook: each chapter must stay
under 60 s on the 2-core CI machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebook_conventions import EXECUTION_ENV, normalize  # noqa: E402


def execute(path: Path, timeout: int) -> float:
    nb = nbformat.read(path, as_version=4)
    nb = normalize(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - t0
    nbformat.write(normalize(nb), path)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("notebooks", nargs="+", type=Path)
    p.add_argument("--timeout", type=int, default=600, help="per-cell timeout in seconds")
    args = p.parse_args(argv)
    os.environ.update(EXECUTION_ENV)
    failed = False
    for path in args.notebooks:
        try:
            seconds = execute(path, args.timeout)
            print(f"{path}: executed in {seconds:.1f} s")
        except Exception as exc:  # report every notebook, then fail
            failed = True
            print(f"{path}: FAILED: {exc.__class__.__name__}: {str(exc)[-2000:]}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
