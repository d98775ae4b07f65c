"""Markdown tables for the chapters: ``display(Markdown(markdown_table(rows)))``.

Chapter: every chapter. One helper so that every table in the book prints numbers, booleans and missing
values the same way (the book renders notebook Markdown output as MyST, tables included).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from . import check

__all__ = ["markdown_table", "show_md", "show_html"]


def _cell(value: Any, fmt: str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if fmt is not None and not isinstance(value, str):
        return format(value, fmt)
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None,
                   formats: Mapping[str, str] | None = None) -> str:
    """A Markdown table of ``rows`` (mappings); ``columns`` defaults to the keys of the first row.

    ``formats`` maps a column to a format spec (``{"tflops": ".1f"}``) applied to non-string values.
    None prints as an empty cell, booleans as yes/no, pipes are escaped. Empty ``rows`` raise ValueError.
    """
    rows = check.sequence("rows", rows, check.mapping, max_len=100_000)
    columns = check.optional(check.sequence, "columns", columns, check.string, max_len=1000) or list(rows[0])
    missing = [c for c in columns if not any(c in r for r in rows)]
    if missing:
        raise ValueError(f"columns {missing} are in no row; the rows have {sorted({k for r in rows for k in r})}")
    formats = check.optional(check.mapping, "formats", formats) or {}
    for key, spec in formats.items():
        check.string(f"formats[{key!r}]", spec, allow_empty=True)
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_cell(r.get(c), formats.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def show_md(text: str) -> None:
    """Display Markdown in a notebook (MyST on the site: tables, roles and math render); print elsewhere."""
    text = check.string("text", text, allow_empty=True)
    try:
        from IPython.display import Markdown, display
    except ImportError:
        print(text)
        return
    display(Markdown(text))


def show_html(text: str) -> None:
    """Display raw HTML in a notebook (collapsed notes); print elsewhere."""
    text = check.string("text", text, allow_empty=True)
    try:
        from IPython.display import HTML, display
    except ImportError:
        print(text)
        return
    display(HTML(text))
