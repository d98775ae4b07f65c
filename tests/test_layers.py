"""The import graph reads bottom-up (CONTRIBUTING.md, "Layers"): core -> shared models -> chapters ->
aggregators -> interface; no chapter imports another chapter; shared models never import torch."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "ampere"

LAYERS: dict[str, int] = {}
for _name in ("specs", "check", "results", "tables", "glue", "plots", "device", "timing", "launch", "benchcli",
              "views"):
    LAYERS[_name] = 0
for _name in ("transformer", "memory", "gemm", "collectives", "fabrics", "pricing", "mig_geometry", "mig_sim"):
    LAYERS[_name] = 1
for _name in ("architecture", "numerics", "hbm", "kernels", "sparsity", "mig", "interconnect", "cluster",
              "megatron", "megatron_lab"):
    LAYERS[_name] = 2
for _name in ("today", "report"):
    LAYERS[_name] = 3
for _name in ("book", "cli", "__main__"):
    LAYERS[_name] = 4
#: a chapter split over several modules may import its own parts
SAME_CHAPTER = {("megatron_lab", "megatron")}


def _modules() -> list[str]:
    return sorted(p.stem for p in PKG.glob("*.py") if p.stem != "__init__")


def imports(module: str) -> set[str]:
    """ampere modules ``module`` imports, at the top or inside functions (``from . import x``, ``from .x
    import y``, ``import ampere.x``, ``from ampere import x``)."""
    tree = ast.parse((PKG / f"{module}.py").read_text(encoding="utf-8"))
    known = set(_modules())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 or (node.level == 0 and (node.module or "").split(".")[0] == "ampere"):
                parts = (node.module or "").split(".")
                sub = parts[0] if node.level == 1 else (parts[1] if len(parts) > 1 else "")
                if sub:
                    out.add(sub)
                else:
                    out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "ampere" and len(parts) > 1:
                    out.add(parts[1])
    return {m for m in out if m in known and m != module}


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
        tree = ast.parse((PKG / f"{mod}.py").read_text(encoding="utf-8"))
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "torch" not in names and "triton" not in names, f"{mod} imports torch"


def test_lazy_submodules_list_every_module():
    import ampere

    assert set(_modules()) - {"__main__"} <= set(ampere.__all__), \
        sorted(set(_modules()) - {"__main__"} - set(ampere.__all__))
