"""Checked fields of result records: a frozen dataclass of the package never holds NaN, a bool for a
number, a string for a list or a negative count. Core layer, pure Python; CONTRIBUTING.md, "Errors".

Two ways, one vocabulary (:mod:`ampere.check`):

* **by annotation** (:func:`check_fields`, the sparsity and MIG packages): every field checked against its
  type annotation and the class's ``FIELD_RULES``;
* **by annotation, rules as arguments** (:func:`check_annotated`, the collectives and fabrics models, the
  NVLink and SuperPOD packages): ``signed``, ``positive``, ``maxima``, ``allow_empty``, ``infinite``;
* **by rule** (:func:`check_each`, the HBM and kernels packages): each field named with a rule built by
  :func:`integer_rule`, :func:`number_rule`, :func:`text_rule`, :func:`flag_rule`, :func:`name_rule`,
  :func:`gpu_rule` and :func:`optional_rule`.

:func:`check_fields` is used in ``__post_init__``: ``check_fields(self)``, with the class's own rules in its ``FIELD_RULES``
(``allow_empty``, ``signed``, ``positive``, ``bounds``, ``choices``). The rules, by annotation: ``str`` a non-empty string
(``allow_empty`` names the fields that may be empty); ``bool`` a boolean; ``int`` an integer from 0 (from
``lo`` when ``signed`` names it) to ``MAX_COUNT``, or ``MAX_SIZE`` for sizes (fields ending in ``_bytes``
or ``_mib``); ``float`` a finite number >= 0 (any finite number when ``signed`` names the field);
``tuple[...]``/``list[...]`` a tuple/list (a list given for a tuple is converted); ``dict[...]`` a mapping;
``X | None`` also ``None``. ``positive`` names the numbers that must be > 0, ``bounds`` maps a number to its
``(lo, hi)``, ``choices`` a field to the names it may hold. Other annotations are left to the class.
:func:`accepted` lists what a record may hold by design, with the reason, for the fuzzer's ACCEPT table.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from typing import Any, Callable, Mapping

from . import check

__all__ = ["MAX_COUNT", "MAX_SIZE", "BIG", "check_fields", "accepted", "check_annotated", "check_each", "integer_rule",
           "number_rule", "optional_rule", "text_rule", "flag_rule", "name_rule", "gpu_rule"]

#: the largest count a record holds (instances, SMs, requests, rows): a bigger one is a mistake
MAX_COUNT = 10**9
#: the largest size in bytes or MiB a record holds (16 PiB)
MAX_SIZE = 2**54
#: the upper bound of any byte count, rate or time a rule-checked record holds (far above any GPU)
BIG = 1e30

Rule = Callable[[str, Any], Any]


def _rules(cls: type) -> dict[str, Any]:
    rules = dict(getattr(cls, "FIELD_RULES", {}))
    return {"allow_empty": set(rules.get("allow_empty", ())), "signed": set(rules.get("signed", ())),
            "positive": set(rules.get("positive", ())), "bounds": dict(rules.get("bounds", {})),
            "choices": dict(rules.get("choices", {}))}


def _base(f: dataclasses.Field) -> tuple[str, bool]:
    ann = str(f.type).replace(" ", "")
    optional = ann.endswith("|None")
    return (ann[:-len("|None")] if optional else ann), optional


def _item(name: str, x: Any, base: str) -> Any:
    """An element of a ``tuple[int, ...]``, ``tuple[float, float]`` or ``tuple[str, ...]`` field, checked;
    other element types are left to the class."""
    inner = base[len("tuple["):-1].split(",")[0]
    if inner.endswith("|None") and x is None:
        return x
    inner = inner[:-len("|None")] if inner.endswith("|None") else inner
    if inner == "int":
        return check.integer(name, x, minimum=0, maximum=MAX_COUNT)
    if inner == "float":
        return check.real(name, x, minimum=0.0)
    if inner == "str":
        return check.string(name, x)
    return x


def check_fields(obj: Any) -> None:
    """Check (and normalise) every field of the frozen dataclass ``obj`` by its annotation and its class's
    ``FIELD_RULES``; raise ValueError/TypeError naming ``Class.field``."""
    cls = type(obj).__name__
    rules = _rules(type(obj))
    allow_empty, signed, positive = rules["allow_empty"], rules["signed"], rules["positive"]
    bounds, choices = rules["bounds"], rules["choices"]
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        name = f"{cls}.{f.name}"
        base, optional = _base(f)
        if value is None:
            if optional:
                continue
            raise TypeError(f"{name} must not be None (expected {base})")
        if f.name in choices:
            new = check.one_of(name, value, list(choices[f.name]))
        elif base == "str":
            new = check.string(name, value, allow_empty=f.name in allow_empty)
        elif base == "bool":
            new = check.boolean(name, value)
        elif base == "int":
            lo, hi = bounds.get(f.name, (None if f.name in signed else (1 if f.name in positive else 0),
                                         MAX_SIZE if f.name.endswith(("_bytes", "_mib")) else MAX_COUNT))
            new = check.integer(name, value, minimum=lo, maximum=hi)
        elif base == "float":
            if f.name in bounds:
                new = check.bounded(name, value, *bounds[f.name])
            elif f.name in positive:
                new = check.positive(name, value)
            else:
                new = check.real(name, value, minimum=None if f.name in signed else 0.0)
        elif base.startswith("tuple"):
            if isinstance(value, list):
                value = tuple(value)
            if not isinstance(value, tuple):
                raise TypeError(f"{name} must be a tuple, got {value!r:.60} ({type(value).__name__})")
            new = tuple(_item(f"{name}[{i}]", x, base) for i, x in enumerate(value))
        elif base.startswith("list"):
            if not isinstance(value, list):
                raise TypeError(f"{name} must be a list, got {value!r:.60} ({type(value).__name__})")
            new = value
        elif base.startswith("dict"):
            new = check.mapping(name, value, allow_empty=True)
        else:
            continue
        if new is not value or type(new) is not type(value):
            object.__setattr__(obj, f.name, new)


def accepted(cls: type) -> dict[tuple[str, str, str], str]:
    """What a record of ``cls`` may hold by design, as the fuzzer's ACCEPT entries
    ``(qualified class name, field, kind) -> reason``: 0 for a number that may be zero, 10**12 for a number
    with no upper bound (sizes, rates, FLOPs), -1 for a signed number, any text for free text, "" where a
    field may be empty (tools/fuzz_core.py)."""
    rules = _rules(cls)
    qual = f"{cls.__module__}.{cls.__qualname__}"
    out: dict[tuple[str, str, str], str] = {}
    for f in dataclasses.fields(cls):
        base, optional = _base(f)
        if optional:
            out[(qual, f.name, "none")] = "None: not known or not applicable (the field is optional)"
        if f.name in rules["choices"]:
            continue
        if base == "str":
            out[(qual, f.name, "unknown")] = "free text of a result record"
            out[(qual, f.name, "unknown-case")] = "free text of a result record"
            if f.name in rules["allow_empty"]:
                out[(qual, f.name, "empty")] = "may be empty in a result record"
        elif base in ("int", "float"):
            lo, hi = rules["bounds"].get(f.name, (None, None))
            if f.name in rules["signed"]:
                out[(qual, f.name, "negative")] = "a signed quantity of a result record"
            if f.name not in rules["positive"] and (lo is None or lo <= 0) and (hi is None or hi >= 0):
                out[(qual, f.name, "zero")] = "zero is a value this result record can hold"
            if base == "float" and f.name not in rules["bounds"]:
                out[(qual, f.name, "huge")] = "a result record holds what was computed; no upper bound is imposed"
            if base == "int" and f.name.endswith(("_bytes", "_mib")) and f.name not in rules["bounds"]:
                out[(qual, f.name, "huge")] = "a size; bounded at 16 PiB"
        elif base.startswith(("tuple", "list", "dict")):
            out[(qual, f.name, "empty")] = "an empty collection is a valid result"
    return out


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of a record class, once per class (resolving them is the slow part)."""
    return typing.get_type_hints(cls)


def check_annotated(obj: Any, *, signed: tuple[str, ...] = (), positive: tuple[str, ...] = (),
                  maxima: Mapping[str, float] | None = None, allow_empty: tuple[str, ...] | bool = True,
                  infinite: tuple[str, ...] = ()) -> None:
    """Validate (and normalise, in place) every field of the frozen dataclass ``obj`` by its annotation.

    The form with the rules as arguments: the records of the collectives and fabrics models and of the
    NVLink and SuperPOD chapters call it in ``__post_init__``: ``int`` fields take integers (never bools or floats), ``float`` fields finite
    numbers (never bools or strings), ``str`` fields strings, ``bool`` fields booleans, ``X | None`` fields
    also None, tuples and mappings their container type, other classes an instance of that class. Numbers
    are >= 0 unless named in ``signed``, > 0 when named in ``positive``, at most ``maxima[name]`` when
    given; ``infinite`` names the float fields that may be +inf (a cap that does not bind). Strings may be
    empty unless ``allow_empty`` is False (or a tuple of the fields that may be).
    Errors name the field (``ValueError``/``TypeError``, :mod:`ampere.check`).
    """
    for arg, names in (("signed", signed), ("positive", positive), ("infinite", infinite),
                       ("allow_empty", () if isinstance(allow_empty, bool) else allow_empty)):
        if not isinstance(names, (tuple, list, frozenset, set)):  # a bare string is not a list of names
            raise TypeError(f"{arg} must be a tuple of field names, got {names!r:.60} ({type(names).__name__})")
    if maxima is not None and not isinstance(maxima, Mapping):
        raise TypeError(f"maxima must be a mapping of field names to bounds, got {maxima!r:.60}")
    hints = _hints(type(obj))
    maxima = dict(maxima or {})
    for f in dataclasses.fields(obj):
        name, value, kind = f.name, getattr(obj, f.name), hints[f.name]
        args = typing.get_args(kind)
        if typing.get_origin(kind) in (typing.Union, types.UnionType) and type(None) in args:
            if value is None:
                continue
            kind = next(a for a in args if a is not type(None))
        origin = typing.get_origin(kind) or kind
        if kind is bool:
            new = check.boolean(name, value)
        elif kind is int:
            new = check.integer(name, value, minimum=None if name in signed else (1 if name in positive else 0),
                                maximum=maxima.get(name))
        elif kind is float:
            new = check.real(name, value, minimum=None if name in signed else 0.0, strict_min=name in positive,
                             maximum=maxima.get(name), allow_inf=name in infinite)
            if new == -math.inf:
                raise ValueError(f"{name} must not be -inf")
        elif kind is str:
            empty = allow_empty if isinstance(allow_empty, bool) else name in allow_empty
            new = check.string(name, value, allow_empty=empty)
        elif origin in (tuple, list):
            if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
                raise TypeError(f"{name} must be a tuple or list, got {value!r:.60} ({type(value).__name__})")
            new = value
        elif origin in (dict, Mapping) or origin is typing.Mapping:
            check.mapping(name, value, allow_empty=True)
            new = value
        elif isinstance(origin, type):
            if not isinstance(value, origin):
                raise TypeError(f"{name} must be a {origin.__name__}, got {value!r:.60} ({type(value).__name__})")
            new = value
        else:  # pragma: no cover - an annotation this helper does not know: leave the value as given
            new = value
        object.__setattr__(obj, name, new)


def check_each(obj: Any, **rules: Rule) -> None:
    """Check each named field of the frozen dataclass ``obj`` with its rule (``rule("Class.field", value)``)
    and store what the rule returns, so that a refusal names ``Class.field``."""
    cls = type(obj).__name__
    for name, rule in rules.items():
        object.__setattr__(obj, name, rule(f"{cls}.{name}", getattr(obj, name)))


def _bounds(lo: Any, hi: Any, item: Callable[..., Any]) -> tuple[Any, Any]:
    lo, hi = item("lo", lo), item("hi", hi)
    if lo > hi:
        raise ValueError(f"lo={lo!r} must be at most hi={hi!r}")
    return lo, hi


def integer_rule(lo: int, hi: int) -> Rule:
    """An integer in [lo, hi]."""
    lo, hi = _bounds(lo, hi, check.integer)
    return lambda n, v: check.bounded_int(n, v, lo, hi)


def number_rule(lo: float = 0.0, hi: float = BIG, *, strict: bool = False) -> Rule:
    """A finite number in [lo, hi] (``strict``: > lo)."""
    lo, hi = _bounds(lo, hi, check.finite)
    strict = check.boolean("strict", strict)
    return lambda n, v: check.real(n, v, minimum=lo, maximum=hi, strict_min=strict)


def optional_rule(rule: Rule) -> Rule:
    """``None``, or what ``rule`` accepts."""
    rule = check.function("rule", rule)
    return lambda n, v: None if v is None else rule(n, v)


def text_rule(allow_empty: bool = False) -> Rule:
    """A string of at most 10,000 characters (non-empty unless ``allow_empty``)."""
    allow_empty = check.boolean("allow_empty", allow_empty)
    return lambda n, v: check.string(n, v, allow_empty=allow_empty, max_len=10_000)


def flag_rule(n: str, v: Any) -> bool:
    """A boolean (a rule itself, not a maker of rules)."""
    return check.boolean(n, v)


def name_rule(allowed: Any) -> Rule:
    """One name of ``allowed`` (a collection of strings, its keys for a mapping; never a bare string)."""
    if isinstance(allowed, str) or not hasattr(allowed, "__iter__"):
        raise TypeError(f"allowed must be a collection of names, got {allowed!r:.60} ({type(allowed).__name__})")
    allowed = tuple(check.sequence("allowed", tuple(allowed), check.string, max_len=10_000))
    return lambda n, v: check.one_of(n, v, allowed)


def gpu_rule(n: str, v: Any) -> str:
    """A GPU of the catalogue (a rule itself)."""
    return check.gpu(n, v)
