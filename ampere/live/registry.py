"""The registry of live calculators: inputs with types, defaults and allowed values, one function per
calculator, and the answer as HTML or Markdown, the same code in CPython and in the browser.

Chapter: *Try the models* (book/try-the-models.md), and every chapter that places a calculator with
``<div class="ampere-calc" data-calc="NAME"></div>``. The site's page script (``tools/site/static``) builds
the form from :func:`describe` (written into the page at build time) and, in Pyodide, calls
:func:`run_json`; a notebook calls :func:`run` and gets an :class:`Answer` that displays itself.
Pure Python: no NumPy, torch or matplotlib, so the browser ships the Python core and the package only.
"""

from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .. import check
from ..tables import markdown_table

__all__ = ["Field", "Table", "Answer", "Calculator", "register", "names", "get", "run", "describe", "run_json"]

KINDS = ("int", "float", "choice", "bool", "text")
#: longest text a text field accepts (a list of MIG profiles is about 60 characters)
MAX_TEXT = 200


@dataclass(frozen=True)
class Field:
    """One input of a calculator: its ``kind`` (:data:`KINDS`), default, allowed values and bounds.

    ``only_for`` = ``(other_field, values)`` shows the field only while ``other_field`` has one of
    ``values`` (a training-only input is hidden for inference); its value is still validated and passed.
    """

    name: str
    label: str
    kind: str
    default: Any
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    unit: str = ""
    help: str = ""
    only_for: tuple[str, tuple[Any, ...]] | None = None

    def __post_init__(self) -> None:
        check.one_of("kind", self.kind, KINDS)
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"field {self.name!r}: a choice field needs choices")
        self.parse(self.default)  # a default the field itself refuses is a bug of the registry

    def parse(self, value: Any) -> Any:
        """``value`` checked against the field (``ampere.check``): the plain Python value, or
        ``ValueError``/``TypeError`` naming the field, the value and what is allowed."""
        if self.kind == "int":
            lo = None if self.minimum is None else int(self.minimum)
            hi = None if self.maximum is None else int(self.maximum)
            return check.integer(self.name, value, minimum=lo, maximum=hi)
        if self.kind == "float":
            return check.real(self.name, value, minimum=self.minimum, maximum=self.maximum)
        if self.kind == "choice":
            return check.choice(self.name, value, self.choices)
        if self.kind == "bool":
            return check.boolean(self.name, value)
        if not isinstance(value, str):
            raise TypeError(f"{self.name}={value!r} must be text")
        if len(value) > MAX_TEXT:
            raise ValueError(f"{self.name} is {len(value)} characters long; allowed: at most {MAX_TEXT}")
        return value.strip()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "label": self.label, "kind": self.kind, "default": self.default,
                "choices": list(self.choices), "minimum": self.minimum, "maximum": self.maximum,
                "unit": self.unit, "help": self.help,
                "only_for": None if self.only_for is None else [self.only_for[0], list(self.only_for[1])]}


@dataclass(frozen=True)
class Table:
    """A table of an answer: ``columns`` and ``rows`` (mappings of column to a printed value)."""

    columns: tuple[str, ...]
    rows: tuple[Mapping[str, Any], ...]
    caption: str = ""


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@dataclass(frozen=True)
class Answer:
    """What a calculator answers: a few sentences, tables, and the notes that qualify them (assumptions,
    what the model leaves out). Shown as HTML on the site (:meth:`html`) and in notebooks, or Markdown."""

    summary: tuple[str, ...]
    tables: tuple[Table, ...] = ()
    notes: tuple[str, ...] = ()

    def html(self) -> str:
        """The answer as an HTML fragment (every text escaped): what the page shows, byte for byte."""
        out = ['<div class="ampere-answer">']
        out += [f"<p>{html.escape(s)}</p>" for s in self.summary]
        for t in self.tables:
            out.append('<div class="ampere-table"><table>')
            if t.caption:
                out.append(f"<caption>{html.escape(t.caption)}</caption>")
            out.append("<thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in t.columns) + "</tr></thead>")
            out.append("<tbody>")
            for row in t.rows:
                out.append("<tr>" + "".join(f"<td>{html.escape(_cell(row.get(c)))}</td>" for c in t.columns)
                           + "</tr>")
            out.append("</tbody></table></div>")
        if self.notes:
            out.append('<ul class="ampere-notes">' + "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
                       + "</ul>")
        out.append("</div>")
        return "".join(out)

    def markdown(self) -> str:
        """The answer as Markdown (a notebook's ``show_md``, a report)."""
        parts = list(self.summary)
        for t in self.tables:
            parts.append((f"{t.caption}\n\n" if t.caption else "")
                         + markdown_table([{c: _cell(r.get(c)) for c in t.columns} for r in t.rows], list(t.columns)))
        if self.notes:
            parts.append("\n".join(f"* {n}" for n in self.notes))
        return "\n\n".join(parts)

    def _repr_html_(self) -> str:
        return self.html()

    def _repr_markdown_(self) -> str:
        return self.markdown()


@dataclass(frozen=True)
class Calculator:
    """One live calculator: ``fields`` in, one public call of a chapter package, an :class:`Answer` out.

    ``call`` names the public function it runs (``ampere.memory.model_memory``), ``chapter`` the page that
    explains the model (``hbm`` for book/hbm.ipynb), ``section`` its heading.
    """

    name: str
    title: str
    call: str
    chapter: str
    section: str
    description: str
    fields: tuple[Field, ...]
    compute: Callable[..., Answer] = field(repr=False, compare=False)

    def values(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Every field's value: the defaults, overridden by ``values``, each checked (unknown names raise)."""
        given = dict(values or {})
        allowed = [f.name for f in self.fields]
        unknown = sorted(set(given) - set(allowed))
        if unknown:
            raise ValueError(f"{self.name}: unknown input(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")
        return {f.name: f.parse(given.get(f.name, f.default)) for f in self.fields}

    def run(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Answer:
        """The answer for ``values`` (a mapping) and/or keyword inputs; missing inputs take their defaults."""
        merged = {**dict(values or {}), **kwargs}
        answer = self.compute(**self.values(merged))
        if not isinstance(answer, Answer):
            raise TypeError(f"calculator {self.name!r} returned {type(answer).__name__}, not an Answer")
        return answer

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "call": self.call, "chapter": self.chapter,
                "section": self.section,
                "description": self.description, "fields": [f.to_dict() for f in self.fields]}


#: name -> a function that builds the calculator (called on first use, so that ``import ampere.live``
#: imports no chapter: the browser imports only the chapter of the calculator it runs)
_FACTORIES: dict[str, Callable[[], Calculator]] = {}
_BUILT: dict[str, Calculator] = {}


def register(name: str) -> Callable[[Callable[[], Calculator]], Callable[[], Calculator]]:
    """Decorator: register the factory of calculator ``name`` (the factory's calculator must carry it)."""
    if not isinstance(name, str) or not name or not all(c.isalnum() or c == "-" for c in name):
        raise ValueError(f"name={name!r} must be a non-empty name of letters, digits and '-'")

    def deco(factory: Callable[[], Calculator]) -> Callable[[], Calculator]:
        if name in _FACTORIES:
            raise ValueError(f"calculator {name!r} is already registered")
        _FACTORIES[name] = factory
        return factory

    return deco


def names() -> tuple[str, ...]:
    """The registered calculators, in the order of the *Try the models* page."""
    return tuple(_FACTORIES)


def get(name: str) -> Calculator:
    """The calculator called ``name`` (``ValueError`` listing the names for an unknown one)."""
    check.one_of("name", name, names())
    if name not in _BUILT:
        calc = _FACTORIES[name]()
        if calc.name != name:
            raise ValueError(f"the factory registered as {name!r} built calculator {calc.name!r}")
        _BUILT[name] = calc
    return _BUILT[name]


def run(name: str, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Answer:
    """``get(name).run(values, **kwargs)``: the answer of calculator ``name``."""
    return get(name).run(values, **kwargs)


def describe(selected: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The calculators (all, or ``selected``) as JSON-ready dictionaries: what the page builds its forms from."""
    chosen = names() if selected is None else [check.one_of("name", n, names()) for n in selected]
    return [get(n).to_dict() for n in chosen]


def run_json(name: str, values_json: str) -> str:
    """The browser's entry point: inputs as a JSON object in, ``{"html": ..., "seconds": ...}`` out, or
    ``{"error": message}`` for inputs the calculator or its model refuse (``ValueError``/``TypeError``):
    the page shows the message. Any other exception is a bug and propagates."""
    if not isinstance(values_json, str):
        raise TypeError(f"values_json must be a JSON string, got {type(values_json).__name__}")
    t0 = time.perf_counter()
    try:
        values = json.loads(values_json)
        if not isinstance(values, dict):
            raise TypeError(f"values_json must hold a JSON object, got {type(values).__name__}")
        answer = run(name, values)
    except (ValueError, TypeError) as exc:
        return json.dumps({"error": str(exc)})
    return json.dumps({"html": answer.html(), "seconds": time.perf_counter() - t0})
