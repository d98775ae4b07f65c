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
#: the most fields, choices, tables, rows or lines one calculator or answer holds (bounds of sense)
MAX_ITEMS = 10_000


def _name(field: str, value: Any) -> str:
    """A calculator or field name: letters, digits, '-' and '_' (it becomes an HTML attribute and a JSON key)."""
    value = check.string(field, value, max_len=64)
    if not all(c.isalnum() or c in "-_" for c in value):
        raise ValueError(f"{field}={value!r} must be made of letters, digits, '-' and '_'")
    return value


def _texts(field: str, value: Any, *, min_len: int = 0) -> tuple[str, ...]:
    """A list or tuple of strings (never a bare string), as a tuple."""
    return tuple(check.sequence(field, value, lambda n, v: check.string(n, v, allow_empty=True, max_len=100_000),
                                min_len=min_len, max_len=MAX_ITEMS))


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
        _name("name", self.name)
        check.string("label", self.label, max_len=200)
        check.one_of("kind", self.kind, KINDS)
        choices = tuple(check.sequence("choices", self.choices, min_len=0, max_len=MAX_ITEMS))
        if self.kind == "choice" and not choices:
            raise ValueError(f"field {self.name!r}: a choice field needs choices")
        object.__setattr__(self, "choices", choices)
        object.__setattr__(self, "minimum", check.optional(check.finite, "minimum", self.minimum))
        object.__setattr__(self, "maximum", check.optional(check.finite, "maximum", self.maximum))
        for bound in ("minimum", "maximum"):
            value = getattr(self, bound)
            if self.kind == "int" and value is not None and value != int(value):
                raise ValueError(f"{bound}={value:g} must be a whole number for an int field")
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            raise ValueError(f"minimum={self.minimum:g} must not exceed maximum={self.maximum:g}")
        check.string("unit", self.unit, allow_empty=True, max_len=50)
        check.string("help", self.help, allow_empty=True, max_len=1000)
        if self.only_for is not None:
            pair = check.sequence("only_for", self.only_for, min_len=2, max_len=2)
            other = _name("only_for[0]", pair[0])
            values = tuple(check.sequence("only_for[1]", pair[1], max_len=MAX_ITEMS))
            object.__setattr__(self, "only_for", (other, values))
        try:
            self.parse(self.default)  # a default the field itself refuses is a bug of the registry
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"default={self.default!r:.40} of field {self.name!r} is refused: {exc}") from None

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
    """A table of an answer: ``columns`` (names) and ``rows`` (mappings of column to a printed value; a
    column a row lacks prints empty)."""

    columns: tuple[str, ...]
    rows: tuple[Mapping[str, Any], ...]
    caption: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", _texts("columns", self.columns, min_len=1))

        def row(name: str, value: Any) -> Mapping[str, Any]:
            if not isinstance(value, Mapping):
                raise TypeError(f"{name} must be a mapping of column to value, got {value!r:.60}")
            return value

        object.__setattr__(self, "rows", tuple(check.sequence("rows", self.rows, row, min_len=0,
                                                              max_len=MAX_ITEMS)))
        check.string("caption", self.caption, allow_empty=True, max_len=1000)


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "summary", _texts("summary", self.summary, min_len=1))

        def table(name: str, value: Any) -> Table:
            if not isinstance(value, Table):
                raise TypeError(f"{name} must be an ampere.live.Table, got {value!r:.60} ({type(value).__name__})")
            return value

        object.__setattr__(self, "tables", tuple(check.sequence("tables", self.tables, table, min_len=0,
                                                                max_len=100)))
        object.__setattr__(self, "notes", _texts("notes", self.notes))

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
            body = (markdown_table([{c: _cell(r.get(c)) for c in t.columns} for r in t.rows], list(t.columns))
                    if t.rows else "| " + " | ".join(t.columns) + " |\n|" + "---|" * len(t.columns))
            parts.append((f"{t.caption}\n\n" if t.caption else "") + body)
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

    def __post_init__(self) -> None:
        _name("name", self.name)
        for name in ("title", "call", "chapter", "section", "description"):
            check.string(name, getattr(self, name), max_len=1000)

        def one(name: str, value: Any) -> Field:
            if not isinstance(value, Field):
                raise TypeError(f"{name} must be an ampere.live.Field, got {value!r:.60} ({type(value).__name__})")
            return value

        fields = tuple(check.sequence("fields", self.fields, one, max_len=100))
        seen = [f.name for f in fields]
        if len(set(seen)) != len(seen):
            raise ValueError(f"fields: names must be unique, got {seen}")
        for f in fields:
            if f.only_for is not None and f.only_for[0] not in seen:
                raise ValueError(f"fields: {f.name!r} is shown only for {f.only_for[0]!r}, which is no field")
        object.__setattr__(self, "fields", fields)
        check.function("compute", self.compute)

    def values(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Every field's value: the defaults, overridden by ``values``, each checked (unknown names raise)."""
        given = {} if values is None else check.mapping("values", values)
        allowed = [f.name for f in self.fields]
        unknown = sorted(set(given) - set(allowed))
        if unknown:
            raise ValueError(f"{self.name}: unknown input(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")
        return {f.name: f.parse(given.get(f.name, f.default)) for f in self.fields}

    def run(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Answer:
        """The answer for ``values`` (a mapping) and/or keyword inputs; missing inputs take their defaults."""
        merged = {**({} if values is None else check.mapping("values", values)), **kwargs}
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
    if not isinstance(name, str):
        raise TypeError(f"name={name!r} must be a string of letters, digits and '-'")
    if not name or len(name) > 64 or not all(c.isalnum() or c == "-" for c in name):
        raise ValueError(f"name={name!r} must be a non-empty name of letters, digits and '-'")

    def deco(factory: Callable[[], Calculator]) -> Callable[[], Calculator]:
        check.function("factory", factory)
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
    chosen = names() if selected is None else check.names("selected", selected, names(), max_len=100)
    return [get(n).to_dict() for n in chosen]


def run_json(name: str, values_json: str) -> str:
    """The browser's entry point: inputs as a JSON object in, ``{"html": ..., "seconds": ...}`` out, or
    ``{"error": message}`` for inputs the calculator or its model refuse (``ValueError``/``TypeError``):
    the page shows the message. Any other exception is a bug and propagates."""
    check.one_of("name", name, names())
    if not isinstance(values_json, str):
        raise TypeError(f"values_json must be a JSON string, got {type(values_json).__name__}")
    if len(values_json) > 100_000:
        return json.dumps({"error": f"values_json is {len(values_json)} characters long; allowed: at most 100000"})
    t0 = time.perf_counter()
    try:
        values = json.loads(values_json)
        if not isinstance(values, dict):
            raise TypeError(f"values_json must hold a JSON object, got {type(values).__name__}")
        answer = run(name, values)
    except (ValueError, TypeError) as exc:
        return json.dumps({"error": str(exc)})
    return json.dumps({"html": answer.html(), "seconds": time.perf_counter() - t0})
