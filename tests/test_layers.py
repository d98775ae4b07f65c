"""The import graph reads bottom-up (CONTRIBUTING.md, "Layers"): core -> shared models -> chapters ->
aggregators -> interface; no chapter imports another chapter; shared models never import torch.

A top-level name of the package is a module (``ampere/specs.py``) or a package (``ampere/megatron/``);
the rules apply to every file of a package, as one unit."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "ampere"

LAYERS: dict[str, int] = {}
for _name in ("specs", "check", "fields", "results", "tables", "glue", "plots", "device", "timing", "launch", "benchcli",
              "views"):
    LAYERS[_name] = 0
for _name in ("transformer", "memory", "gemm", "collectives", "fabrics", "pricing"):
    LAYERS[_name] = 1
for _name in ("architecture", "numerics", "hbm", "kernels", "sparsity", "mig", "interconnect", "cluster",
              "megatron"):
    LAYERS[_name] = 2
for _name in ("today", "report"):
    LAYERS[_name] = 3
for _name in ("book", "cli", "__main__", "live"):
    LAYERS[_name] = 4
#: old dotted paths kept as aliases of a file inside a chapter package (``ampere.mig_geometry`` IS
#: ``ampere.mig.geometry``): each alias file imports its package and nothing else
ALIASES = {"mig_geometry": "mig", "mig_sim": "mig", "megatron_lab": "megatron"}
for _alias, _package in ALIASES.items():
    LAYERS[_alias] = LAYERS[_package]
SAME_CHAPTER = {(alias, package) for alias, package in ALIASES.items()}


def _modules() -> list[str]:
    """Top-level names: modules and packages (a folder with an ``__init__.py``)."""
    names = {p.stem for p in PKG.glob("*.py") if p.stem != "__init__"}
    names |= {p.parent.name for p in PKG.glob("*/__init__.py") if p.parent.name != "data"}
    return sorted(names)


def files(module: str) -> list[Path]:
    """The source files of a top-level name: one file, or every file of the package."""
    single = PKG / f"{module}.py"
    return [single] if single.exists() else sorted((PKG / module).rglob("*.py"))


def _imports_of_file(path: Path, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # depth of the file below ampere/: 0 for ampere/x.py, 1 for ampere/x/y.py
    depth = len(path.relative_to(PKG).parts) - 1
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            parts = (node.module or "").split(".") if node.module else []
            if node.level == 0:
                if not parts or parts[0] != "ampere":
                    continue
                parts = parts[1:]
            elif node.level == depth + 1:
                pass  # relative to ampere/
            else:
                continue  # inside its own package
            if parts and parts[0]:
                out.add(parts[0])
            else:
                out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "ampere" and len(parts) > 1:
                    out.add(parts[1])
    return out


def imports(module: str) -> set[str]:
    """ampere names ``module`` imports, at the top or inside functions (``from . import x``, ``from .x
    import y``, ``from .. import x`` inside a package, ``import ampere.x``, ``from ampere import x``)."""
    known = set(_modules())
    out: set[str] = set()
    for path in files(module):
        out |= _imports_of_file(path, known)
    return {m for m in out if m in known and m != module}


def _third_party(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level}
    return names


def test_every_module_has_a_layer():
    missing = [m for m in _modules() if m not in LAYERS]
    assert not missing, f"give these modules a layer in tests/test_layers.py and CONTRIBUTING.md: {missing}"


def test_imports_go_down_the_layers_and_never_sideways_between_chapters():
    bad = []
    for mod in _modules():
        for dep in sorted(imports(mod)):
            if LAYERS[dep] > LAYERS[mod]:
                bad.append(f"{mod} (layer {LAYERS[mod]}) imports {dep} (layer {LAYERS[dep]})")
            elif LAYERS[mod] == LAYERS[dep] == 2 and (mod, dep) not in SAME_CHAPTER:
                bad.append(f"chapter {mod} imports chapter {dep}")
    assert not bad, "\n".join(bad)


def test_shared_models_never_import_torch():
    for mod in (m for m in _modules() if LAYERS.get(m) == 1):
        for path in files(mod):
            names = _third_party(path)
            assert "torch" not in names and "triton" not in names, f"{path.relative_to(PKG)} imports torch"


def test_lazy_submodules_list_every_module():
    import ampere

    assert set(_modules()) - {"__main__"} <= set(ampere.__all__), \
        sorted(set(_modules()) - {"__main__"} - set(ampere.__all__))


#: Every chapter and aggregator is a package whose files follow the concern (CONTRIBUTING.md, "Layers").
PACKAGES = ("architecture", "numerics", "hbm", "kernels", "sparsity", "mig", "interconnect", "cluster", "megatron",
            "today", "report")
#: The files of a package that measure or draw: they may import torch, matplotlib or triton, but only inside the
#: functions that need them. Every other file of a package is a model (or table, or view built on the core) and
#: imports none of them anywhere. A new measuring or drawing file is added here, with its package.
HEAVY = {
    "architecture": {"figures", "measure"},
    "cluster": {"figures"},
    "hbm": {"measure", "views"},
    "interconnect": {"bench", "figures", "measure"},
    "kernels": {"bench", "triton_kernels", "views"},
    "megatron": {"figures", "lab", "lab_model", "measure"},
    "mig": {"figures", "measure"},
    "numerics": {"bench", "figures", "measure", "torch_rounding", "training"},
    "report": {"figures", "workload"},
    "sparsity": {"arrays", "asp", "backends", "figures", "format_checks", "measure"},
}
HEAVY_MODULES = {"torch", "matplotlib", "triton"}
MAX_LINES = 600


def _heavy_imports(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.add((node.module or "").split(".")[0])
    return found & HEAVY_MODULES


def test_every_chapter_is_a_package_with_a_public_api():
    for name in PACKAGES:
        init = PKG / name / "__init__.py"
        assert init.exists(), f"ampere/{name}/ must be a package"
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"ampere/{name}/__init__.py needs a docstring with the package's map"
        assert any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
                   for n in tree.body), f"ampere/{name}/__init__.py must name its public API in __all__"


def test_no_file_is_over_the_line_limit():
    long = {str(p.relative_to(PKG)): n for p in PKG.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"files over {MAX_LINES} lines (split them by concern): {long}"


def test_model_files_never_import_torch_or_matplotlib_and_heavy_files_only_inside_functions():
    bad = []
    for name in PACKAGES:
        for path in sorted((PKG / name).glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            where = path.relative_to(PKG)
            if path.stem not in HEAVY.get(name, set()):
                if _heavy_imports(tree):
                    bad.append(f"{where} is a model file but imports {sorted(_heavy_imports(tree))} (move the "
                               f"measuring/drawing code to a file listed in HEAVY)")
            else:
                top = ast.Module(body=[n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))],
                                 type_ignores=[])
                if _heavy_imports(top):
                    bad.append(f"{where} imports {sorted(_heavy_imports(top))} at module level")
    assert not bad, "\n".join(bad)


def test_importing_a_chapter_loads_neither_torch_nor_matplotlib():
    import subprocess
    import sys

    code = ("import sys, importlib\n"
            f"for name in {PACKAGES!r}:\n"
            "    importlib.import_module('ampere.' + name)\n"
            "print(sorted(m for m in ('torch', 'matplotlib', 'triton') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
