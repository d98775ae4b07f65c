"""Live calculators: the package's own models, run from a form in the page (Pyodide) or a notebook.

Chapter: *Try the models* (book/try-the-models.md); a chapter places one with a Markdown cell
``<div class="ampere-calc" data-calc="NAME"></div>``. Layer: interface (it calls the chapter packages'
public API, read-only). One file per concern:

* ``registry.py`` -- :class:`Field` (an input: kind, default, allowed values), :class:`Calculator`,
  :class:`Answer` (summary, tables, notes; ``.html()``, ``.markdown()``), :func:`run`, :func:`describe` (the
  forms, as JSON for the page) and :func:`run_json` (the browser's entry point);
* ``calculators.py`` -- the five calculators, each inputs -> one public call -> an :class:`Answer`:
  ``hbm-fits`` (``ampere.memory``), ``megatron-layouts`` (``ampere.megatron``), ``mig-planner``
  (``ampere.mig``), ``superpod-sizer`` (``ampere.cluster``), ``today-plan`` (``ampere.today``).

``from ampere import live; live.run("hbm-fits", model="llama2-13b")`` gives the answer the page shows for
the same inputs, byte for byte (``tests/site`` checks it in Chromium). Nothing here imports NumPy, torch or
matplotlib, and a calculator imports its chapter only when first used.
"""

from __future__ import annotations

from . import calculators  # noqa: F401  (registers the calculators)
from .registry import Answer, Calculator, Field, Table, describe, get, names, register, run, run_json

__all__ = ["Answer", "Calculator", "Field", "Table", "describe", "get", "names", "register", "run", "run_json"]
