"""Ampere by Experiment: the companion package of the book.

Each chapter of the book has one module here holding its models and its measurements; a small core
(``specs``, ``device``, ``timing``, ``results``, ``plots``) serves them all. Submodules load on first
use (``ampere.specs``), so ``import ampere`` stays fast and never imports torch.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

__version__ = "0.3.0"

#: every module of the package (found on disk, so a new module is never forgotten)
_SUBMODULES = frozenset(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))

__all__ = ["__version__", *sorted(_SUBMODULES)]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'ampere' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBMODULES)
