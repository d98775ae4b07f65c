"""The notebook façade: ``from ampere import book as ab`` gives a chapter everything it uses.

Chapter: every chapter (in the spirit of d2l's ``from d2l import torch as d2l``). Notebooks import this
module and their own chapter module, never helpers through another chapter's re-exports:

* the core: ``ab.specs``, ``ab.results``, ``ab.plots``, ``ab.check`` and ``ab.records(...)``;
* numbers in prose and tables: ``ab.glue``, ``ab.markdown_table``, ``ab.show_table(rows)``, ``ab.show_md``;
* figures: ``ab.figure``, ``ab.gpu_color``, ``ab.PROVENANCE``, ``ab.provenance_note``;
* the device: ``INFO = ab.setup("what this chapter measures on a GPU")`` probes the machine and shows a
  collapsed note worded for a web reader (the build machine's details stay inside it);
* any chapter module by name (``ab.hbm``), loaded on first use.

Nothing here imports torch.
"""

from __future__ import annotations

import html as _html
import importlib
from typing import Any, Iterable, Mapping, Sequence

from . import check, plots, results, specs
from .glue import glue
from .plots import PROVENANCE, figure, gpu_color, provenance_note
from .results import Record, records
from .tables import markdown_table, show_html, show_md

__all__ = ["specs", "results", "plots", "check", "records", "Record", "glue", "markdown_table", "show_table",
           "show_md", "show_html", "figure", "gpu_color", "PROVENANCE", "provenance_note", "setup",
           "device_note"]


def show_table(rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None,
               formats: Mapping[str, str] | None = None) -> None:
    """Display ``rows`` as a Markdown table (:func:`ampere.tables.markdown_table`; same arguments)."""
    show_md(markdown_table(rows, columns, formats))


def device_note(info: Any, measures: str) -> str:
    """The HTML of the collapsed device note: what this page was built on, what a GPU would add."""
    import textwrap

    measures = check.string("measures", measures)
    if getattr(info, "backend", "cpu") == "cuda":
        head = f"This page ran on {info.label()}: its measuring sections measure this GPU."
    else:
        head = ("This page was built without a GPU; on yours, " + measures.rstrip(".") +
                ". On a machine without one, the figures show the model beside measurements recorded on "
                "real GPUs and published results, each labelled with its source.")
    lines = info.summary().splitlines() if hasattr(info, "summary") else []
    body = "\n".join(textwrap.fill(line, 88, subsequent_indent=" " * 15) for line in lines)
    return (f'<details class="ampere-device"><summary>About the machine behind this page</summary>'
            f"<p>{_html.escape(head)}</p><pre>{_html.escape(body)}</pre></details>")


def setup(measures: str) -> Any:
    """Probe the machine and show the collapsed device note; return the ``DeviceInfo``.

    ``measures`` says, for a web reader, what the chapter measures when a GPU is there ("this chapter
    times matmuls in every precision"). Use in a cell tagged ``remove-input`` and ``nbval-ignore-output``.
    """
    from . import device

    measures = check.string("measures", measures)
    info = device.probe()
    show_html(device_note(info, measures))
    return info


def __getattr__(name: str) -> Any:
    import ampere

    if name in ampere.__all__:
        module = importlib.import_module(f"ampere.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'ampere.book' has no attribute {name!r}")
