"""Sphinx extension: a cell's figure caption wraps its image, not its other outputs.

MyST-NB turns the ``mystnb.figure`` metadata of a cell (caption, name) into a figure around *every*
display output of the cell. The book's views display a figure and then its Markdown table from one call
(``views.show``), so the table would be wrapped too, captioned a second time and its label defined twice.
This extension applies the figure options to the first image output only. Configured in ``_config.yml``
(``sphinx.local_extensions``); tested by the site check (every figure holds an image).
"""

from __future__ import annotations

import sys
from typing import Any


def _patch() -> None:
    from myst_nb.sphinx_ import SphinxNbRenderer

    original = SphinxNbRenderer.get_cell_level_config
    if getattr(original, "_ampere_images_only", False):
        return

    def get_cell_level_config(self: Any, field: str, cell_metadata: dict[str, Any], line: int | None = None) -> Any:
        value = original(self, field, cell_metadata, line=line)
        if field == "render_figure_options" and value:
            output = sys._getframe(1).f_locals.get("output")
            data = output.get("data", {}) if hasattr(output, "get") else {}
            if data and not any(str(mime).startswith("image/") for mime in data):
                return None
            name = value.get("name") if isinstance(value, dict) else None
            if name and name in getattr(self.document, "nameids", {}):
                return None  # a second image of the same cell: the caption belongs to the first
        return value

    get_cell_level_config._ampere_images_only = True  # type: ignore[attr-defined]
    SphinxNbRenderer.get_cell_level_config = get_cell_level_config  # type: ignore[method-assign]


def setup(app: Any) -> dict[str, Any]:
    _patch()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
