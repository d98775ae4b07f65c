"""Numbers in prose: ``glue("name", value)`` in a code cell, ``{glue:text}`name:.1f``` in the text.

Chapter: every chapter. MyST-NB's own ``glue`` is used when it is installed (the book build); on Colab,
where myst_nb is absent, this module emits the same display bundle itself, so notebooks run anywhere.
NumPy scalars are converted to Python numbers first (their NumPy 2 repr would leak into the text).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

from . import check

__all__ = ["glue"]

_PREFIX = "application/papermill.record/"


def _plain(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        return float(value)
    return value


def glue(name: str, value: Any, display: bool = False) -> None:
    """Store ``value`` under ``name`` for the book's ``{glue:}`` roles; a no-op outside IPython."""
    name = check.string("name", name, max_len=200)
    if not name.replace("_", "").replace("-", "").isalnum() or not name.isascii():
        raise ValueError(f"name={name!r} must be letters, digits, '_' or '-'")
    display = check.boolean("display", display)
    value = _plain(value)
    try:
        from myst_nb import glue as _myst_glue
    except ImportError:
        _myst_glue = None
    if _myst_glue is not None:
        _myst_glue(name, value, display=display)
        return
    try:
        from IPython import get_ipython
        from IPython.core.formatters import format_display_data
        from IPython.display import display as ipy_display
    except ImportError:
        return
    if get_ipython() is None:
        return
    bundle, metadata = format_display_data(value)
    prefix = "" if display else _PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    ipy_display({prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)
