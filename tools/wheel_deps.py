#!/usr/bin/env python
"""Do the wheel's dependencies cover what the chapters import? (part of tools/wheel_check.sh)

The wheel check runs every chapter in a kernel whose IPython startup file (``startup_code``) records the
top-level modules each chapter imported beyond those the kernel started with. This script maps those
modules to their distributions and fails when one is neither in the dependency closure of ampere-book
(its Requires-Dist, markers evaluated for this platform, followed transitively) nor in that of the
kernel itself (ipykernel: what Jupyter or Colab brings). Example of what it catches: the kernels chapter
imports triton; a wheel that did not declare triton for Linux x86-64 left that chapter empty on a CPU
torch.

Usage: wheel_deps.py MODULES_DIR   (run with the wheel environment's python)
"""

from __future__ import annotations

import json
import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

#: Written into the kernel's IPython profile (startup/): after every cell, the top-level modules imported
#: since the kernel started, into $AMPERE_MODULES_OUT/<pid>.json. Leaves no name in the user namespace.
STARTUP_CODE = '''\
def _ampere_record_modules():
    import json, os, sys
    baseline = set(sys.modules)
    out = os.environ.get("AMPERE_MODULES_OUT")

    def record(*_):
        new = sorted({m.split(".")[0] for m in set(sys.modules) - baseline})
        with open(os.path.join(out, f"{os.getpid()}.json"), "w") as f:
            json.dump(new, f)

    if out:
        get_ipython().events.register("post_run_cell", record)


_ampere_record_modules()
del _ampere_record_modules
'''


#: Distributions a chapter imports only when they are there, with the reason it runs without them; their
#: own dependencies are allowed too.
OPTIONAL = {
    "myst-nb": "ampere.glue uses myst_nb.glue where it is installed (the book build) and emits the same "
               "display bundle itself elsewhere (Colab)",
}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(root: str) -> set[str]:
    """The distributions ``root`` needs on this platform, itself included (canonical names)."""
    seen: set[str] = set()
    todo = [canonical(root)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            continue  # a declared dependency that is not installed: pip check's business
        for line in requires:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonical(req.name))
    return seen


def uncovered(modules: set[str], allowed: set[str], owners: dict[str, list[str]]) -> dict[str, list[str]]:
    """{module: its distributions} for every imported module that no allowed distribution provides."""
    stdlib = set(sys.stdlib_module_names) | set(sys.builtin_module_names)
    missing = {}
    for module in sorted(modules):
        if module in stdlib or module.startswith("_") or module == "ampere":
            continue
        dists = [canonical(d) for d in owners.get(module, [])]
        if not dists:
            continue  # not from an installed distribution (a local or generated module)
        if not set(dists) & allowed:
            missing[module] = dists
    return missing


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    files = sorted(Path(argv[0]).glob("*.json"))
    if not files:
        print(f"wheel_deps: no module records in {argv[0]} (did the chapters run with the startup file?)")
        return 1
    modules = set().union(*(set(json.loads(f.read_text())) for f in files))
    package, kernel = closure("ampere-book"), closure("ipykernel")
    optional = set().union(*(closure(name) for name in OPTIONAL))
    missing = uncovered(modules, package | kernel | optional, metadata.packages_distributions())
    third_party = sorted(m for m in modules if m not in sys.stdlib_module_names and not m.startswith("_"))
    print(f"wheel_deps: {len(files)} kernels imported {len(third_party)} non-stdlib top-level modules; "
          f"ampere-book needs {len(package)} distributions here")
    for module, dists in missing.items():
        print(f"wheel_deps: a chapter imports {module} ({', '.join(dists)}), "
              "which the wheel's dependencies do not bring: add it to pyproject.toml [project] dependencies")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
